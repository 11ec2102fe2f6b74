//! Local paths as the upload prompt and a paste give them: several paths
//! separated by spaces, read as a POSIX shell reads words (`'my file.txt'`,
//! `"my file.txt"`, `my\ file.txt`; the `shlex` crate splits and quotes),
//! `~/` expanded, a `*` wildcard in the last component, Tab completion against
//! the local folder (a completed name that needs quoting is written quoted),
//! and the paths of files dropped on the terminal (a bracketed paste, maybe
//! quoted, maybe a `file://` URL).
//! Reads local folders only (small, on the UI task, like the save prompt).

use std::path::{Path, PathBuf};

/// The local files a paste names: one path per line (quotes and `file://`
/// removed, as terminals add them to dropped files) that exists as a file.
pub fn pasted_paths(text: &str) -> Vec<PathBuf> {
    text.lines()
        .map(|l| l.trim().trim_matches(['\'', '"']))
        .map(|l| l.strip_prefix("file://").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(super::local::resolve)
        .filter(|p| p.is_file())
        .collect()
}

/// The typed paths of the upload prompt: words as a POSIX shell splits them
/// (quotes and backslashes as `sh` reads them), `~/` expanded, a `*` in the
/// last component matched against that folder's files.
///
/// # Errors
///
/// A quote left open or a backslash at the end: what to say.
pub fn expand_paths(text: &str) -> Result<Vec<PathBuf>, String> {
    let words = shlex::split(text).ok_or_else(|| {
        "a quote is not closed (or a \\ ends the line): nothing uploaded".to_string()
    })?;
    let mut out = Vec::new();
    for word in &words {
        let path = super::local::resolve(word);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        match name {
            Some(pattern) if pattern.contains('*') => {
                let dir = parent_or_dot(&path);
                let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| wildcard(&pattern, &e.file_name().to_string_lossy()))
                    .map(|e| e.path())
                    .filter(|p| p.is_file())
                    .collect();
                found.sort();
                out.extend(found);
            }
            _ => out.push(path),
        }
    }
    Ok(out)
}

fn parent_or_dot(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `*` matches any run of characters; everything else itself.
pub fn wildcard(pattern: &str, name: &str) -> bool {
    if !pattern.contains('*') {
        return name == pattern;
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// Completes the last word of the upload prompt against the local folder: the
/// longest common prefix of the matching names (a folder gets a `/`). The
/// word is read as the shell reads it (quoted, or a quote still open, or with
/// backslashes), and written back quoted when it needs to be (`'my file.txt'`),
/// a leading `~/` left outside the quotes.
pub fn complete_path(text: &str) -> String {
    let Some((head, word)) = last_word(text) else {
        return text.to_string();
    };
    let completed = complete_one(&word);
    if completed == word {
        return text.to_string();
    }
    format!("{head}{}", quoted(&completed))
}

/// The text before the last shell word of `text`, and that word unquoted
/// (an open quote is taken as closed at the end); `None` when no split reads
/// it as one word.
fn last_word(text: &str) -> Option<(&str, String)> {
    let starts = std::iter::once(0).chain(
        text.char_indices()
            .filter(|&(i, c)| c == ' ' && !text[..i].ends_with('\\'))
            .map(|(i, _)| i + 1),
    );
    for start in starts {
        let (head, tail) = text.split_at(start);
        if shlex::split(head).is_none() {
            continue;
        }
        if tail.is_empty() {
            return Some((head, String::new()));
        }
        if tail.starts_with(' ') {
            continue;
        }
        for closing in ["", "'", "\""] {
            if let Some(words) = shlex::split(&format!("{tail}{closing}"))
                && let [word] = words.as_slice()
            {
                return Some((head, word.clone()));
            }
        }
    }
    None
}

/// `path` as a shell word: quoted when it needs to be, a leading `~/` kept
/// outside the quotes (it is expanded either way).
fn quoted(path: &str) -> String {
    let (home, rest) = match path.strip_prefix("~/") {
        Some(rest) => ("~/", rest),
        None => ("", path),
    };
    if rest.is_empty() {
        return path.to_string();
    }
    match shlex::try_quote(rest) {
        Ok(q) => format!("{home}{q}"),
        // A NUL cannot be quoted (nor be in a local path): left as typed.
        Err(_) => path.to_string(),
    }
}

/// Completes `word` as one path (spaces are part of it), as
/// [`complete_path`] completes its last word: a path to save to.
pub fn complete_one(word: &str) -> String {
    let (dir_part, prefix) = match word.rfind('/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => ("", word),
    };
    let dir = if dir_part.is_empty() {
        PathBuf::from(".")
    } else {
        super::local::resolve(dir_part)
    };
    let mut names: Vec<(String, bool)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let is_dir = e.path().is_dir();
            (e.file_name().to_string_lossy().into_owned(), is_dir)
        })
        .filter(|(n, _)| n.starts_with(prefix) && (!prefix.is_empty() || !n.starts_with('.')))
        .collect();
    names.sort();
    let Some((first, _)) = names.first() else {
        return word.to_string();
    };
    let mut common = first.clone();
    for (n, _) in &names[1..] {
        while !n.starts_with(&common) {
            common.pop();
        }
    }
    let mut completed = format!("{dir_part}{common}");
    if names.len() == 1 && names[0].1 {
        completed.push('/');
    }
    completed
}
