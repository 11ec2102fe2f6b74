//! What a recorded call changed in the session's text files, as unified
//! diffs (`similar`) against the previous recorded version of each file (an
//! added file against nothing): what `sessionpad log ID --diff` prints under
//! each call, and what the notebook's recorded view shows for one changed
//! file. Bytes the ledger did not keep, and files that are not text, are said
//! in one line. Every line is sanitised ([`crate::text::sanitize::plain`]): a
//! file's bytes are the session's. Reads the ledger: run it off a UI task.

use rusqlite::Connection;

use crate::ledger;
use crate::protocol::record::{ContentKept, Entry, FileChange, FileChangeKind};
use crate::text::sanitize::plain;

/// Most lines of one file's diff printed; the rest is counted.
const MAX_LINES: usize = 2000;

/// The diffs of the files call `e` changed, indented under it ("" when it
/// changed none).
///
/// # Errors
///
/// SQLite's error.
pub fn of_call(conn: &Connection, e: &Entry) -> rusqlite::Result<String> {
    let mut out = String::new();
    for f in &e.files {
        if f.change == FileChangeKind::Deleted {
            continue;
        }
        out.push_str(&of_file(conn, &e.pool, &e.identifier, e.seq, f)?);
    }
    Ok(out)
}

/// The diff of file `f`, changed by call `seq` of session `identifier` on
/// pool key `pool`, against its previous recorded version (an added file
/// against nothing), indented by four spaces under a line naming the change
/// and the path; a deleted file, or bytes the ledger did not keep, in one
/// line saying so.
///
/// # Errors
///
/// SQLite's error.
pub fn of_file(
    conn: &Connection,
    pool: &str,
    identifier: &str,
    seq: i64,
    f: &FileChange,
) -> rusqlite::Result<String> {
    if f.change == FileChangeKind::Deleted {
        return Ok(format!(
            "    {} {}\n    (no diff: the file was deleted)\n",
            f.change.as_str(),
            plain(&f.path)
        ));
    }
    let new = version_bytes(conn, f)?;
    let old = match f.change {
        FileChangeKind::Modified => {
            ledger::read::previous_version(conn, pool, identifier, &f.path, seq)?
        }
        _ => None,
    };
    let old_bytes = match &old {
        Some(v) => version_bytes(conn, v)?,
        None => Ok(Vec::new()),
    };
    Ok(file_diff(&f.path, f.change, old_bytes, new))
}

/// The bytes of recorded version `f` from the ledger `conn`, or why they are
/// not there (too big to keep, dropped, unreadable, pruned since).
///
/// # Errors
///
/// SQLite's error.
pub fn version_bytes(
    conn: &Connection,
    f: &FileChange,
) -> rusqlite::Result<Result<Vec<u8>, &'static str>> {
    let why = f.content.and_then(ContentKept::why_not);
    let (Some(sha), None) = (&f.sha256, why) else {
        return Ok(Err(why.unwrap_or("its bytes were not kept")));
    };
    Ok(ledger::read::file_content(conn, sha)?.ok_or("its bytes are no longer in the ledger"))
}

/// Text of `bytes`, when they are text (UTF-8 without NUL).
pub fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()
        .filter(|t| !t.contains('\0'))
}

/// The diff of `path` from `old` to `new` (each the bytes or why they are
/// missing), indented by four spaces.
fn file_diff(
    path: &str,
    change: FileChangeKind,
    old: Result<Vec<u8>, &'static str>,
    new: Result<Vec<u8>, &'static str>,
) -> String {
    let path = plain(path);
    let head = format!("    {} {path}\n", change.as_str());
    let new = match new {
        Ok(b) => b,
        Err(why) => return format!("{head}    (no diff: {why})\n"),
    };
    let old = match old {
        Ok(b) => b,
        Err(why) => {
            return format!("{head}    (no diff: the previous version's bytes: {why})\n");
        }
    };
    let (Some(old_text), Some(new_text)) = (text(&old), text(&new)) else {
        return format!(
            "{head}    (not text: {} → {} bytes)\n",
            old.len(),
            new.len()
        );
    };
    let diff = similar::TextDiff::from_lines(old_text, new_text);
    let unified = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a{path}"), &format!("b{path}"))
        .to_string();
    let mut out = head;
    let mut lines = unified.lines();
    for line in lines.by_ref().take(MAX_LINES) {
        out.push_str("    ");
        out.push_str(&plain(line));
        out.push('\n');
    }
    let rest = lines.count();
    if rest > 0 {
        out.push_str(&format!("    ({rest} more line(s) of diff not shown)\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modified_text_file_shows_as_a_unified_diff_without_escapes() {
        let d = file_diff(
            "/mnt/data/r.csv",
            FileChangeKind::Modified,
            Ok(b"a\nb\nc\n".to_vec()),
            Ok(b"a\nB\x1b]0;pwned\x07\nc\n".to_vec()),
        );
        assert!(d.contains("--- a/mnt/data/r.csv"), "{d}");
        assert!(d.contains("    -b\n"), "{d}");
        assert!(d.contains("    +B"), "{d}");
        assert!(!d.contains('\u{1b}') && !d.contains('\u{7}'), "{d:?}");
    }

    #[test]
    fn binary_and_missing_bytes_are_said() {
        let d = file_diff(
            "/mnt/data/x.bin",
            FileChangeKind::Added,
            Ok(Vec::new()),
            Ok(vec![0, 1, 2]),
        );
        assert!(d.contains("not text: 0 → 3 bytes"), "{d}");
        let d = file_diff(
            "/mnt/data/big",
            FileChangeKind::Added,
            Ok(Vec::new()),
            Err("too big to keep"),
        );
        assert!(d.contains("(no diff: too big to keep)"), "{d}");
    }
}
