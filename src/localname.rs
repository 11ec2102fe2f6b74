//! Local names for remote files. A session's file names are untrusted (an agent,
//! or a hostile pool, chose them): before anything is written on this machine the
//! name is reduced to one safe path component, so a download never leaves the
//! folder the user chose (no `..`, no absolute paths, no separators, no control
//! characters, no reserved names).

use std::path::{Path, PathBuf};

/// One safe file-name component for the remote `name` (which may be a path such
/// as `sub/report.csv`, `../evil.txt` or `/etc/x`): its last component, cleaned by
/// `sanitize-filename`; `download` when nothing usable is left.
pub fn safe_file_name(name: &str) -> String {
    let last = name
        .rsplit(['/', '\\'])
        .find(|part| !part.trim().is_empty() && !part.trim_matches('.').is_empty())
        .unwrap_or("");
    // Control characters (DEL and C1 included) and bidirectional overrides, which
    // could make a name look like another, become `_` first.
    let visible: String = last
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let cleaned = sanitize_filename::sanitize_with_options(
        &visible,
        sanitize_filename::Options {
            windows: true,
            truncate: true,
            replacement: "_",
        },
    );
    let cleaned = cleaned.trim().trim_start_matches('.').to_string();
    if cleaned.is_empty() || cleaned.chars().all(|c| c == '.' || c == '_') {
        "download".to_string()
    } else {
        cleaned
    }
}

/// `folder` joined with [`safe_file_name`] of `name`; always directly inside
/// `folder`.
pub fn local_path(folder: &Path, name: &str) -> PathBuf {
    folder.join(safe_file_name(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_stay_inside_the_folder() {
        let dir = Path::new("/tmp/target");
        for (remote, local) in [
            ("../evil.txt", "evil.txt"),
            ("/etc/x", "x"),
            ("sub/report.csv", "report.csv"),
            ("..", "download"),
            ("../..", "download"),
            ("a\u{1b}[31mb\n.txt", "a_[31mb_.txt"),
            ("evil\u{202e}txt.exe", "evil_txt.exe"),
            ("del\u{7f}.txt", "del_.txt"),
            ("..\\..\\win.ini", "win.ini"),
            (".bashrc", "bashrc"),
            ("CON", "_"),
            ("", "download"),
            ("naïve café #1 & 50%.csv", "naïve café #1 & 50%.csv"),
        ] {
            let p = local_path(dir, remote);
            assert_eq!(p.parent(), Some(dir), "{remote:?} -> {p:?}");
            if local != "_" {
                assert_eq!(
                    p.file_name().unwrap().to_str().unwrap(),
                    local,
                    "{remote:?}"
                );
            }
        }
    }
}
