//! Hand-off of a long cell to the user's own editor (`$VISUAL`, else `$EDITOR`,
//! else `vi`): the cell goes into a private temporary `.py` file, the terminal is
//! handed over until the editor exits, and the file's text comes back as the
//! cell. The cell is never lost: if the editor cannot start, exits with a
//! failure (`:cq` in vim) or the file cannot be read back, the cell stays as it
//! was and the caller gets the reason to show.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::terminal::{self, Tui};
use crate::notebook::language::Language;

/// The editor command line from the environment, split on whitespace
/// (`code --wait` works; paths with spaces do not).
pub fn command_from_env() -> Vec<String> {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .map(|v| v.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .find(|words| !words.is_empty())
        .unwrap_or_else(|| vec!["vi".to_string()])
}

/// Edits `source`, written in `language`, in the user's editor with the
/// terminal handed over (the file's extension tells the editor the language).
///
/// Returns the new text, or why the cell stays unchanged.
///
/// # Errors
///
/// Taking the terminal back failed; the UI cannot go on.
pub async fn edit(
    terminal: &mut Tui,
    source: &str,
    language: Language,
) -> io::Result<Result<String, String>> {
    let command = command_from_env();
    terminal::suspend();
    let outcome = {
        // In cooked mode Ctrl+C would interrupt us along with the editor; while
        // this is held it only reaches the editor.
        #[cfg(unix)]
        let _sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt());
        edit_file(&command, source, language.extension()).await
    };
    terminal::resume(terminal)?;
    Ok(outcome)
}

/// Writes `source` to a temporary file ending in `.extension`, runs `command` with the file's path
/// appended, and reads the file back (without the final newline editors add).
/// The file is removed afterwards unless reading it failed.
///
/// # Errors
///
/// A message saying what failed and that the cell is unchanged.
pub async fn edit_file(
    command: &[String],
    source: &str,
    extension: &str,
) -> Result<String, String> {
    let Some((program, args)) = command.split_first() else {
        return Err("no editor is set ($VISUAL, $EDITOR)".to_string());
    };
    let path = write_temp(source, extension)
        .map_err(|e| format!("cannot write the cell to a file: {e}"))?;
    let status = tokio::process::Command::new(program)
        .args(args)
        .arg(&path)
        .status()
        .await;
    // The name alone: the status line has little room.
    let program = Path::new(program)
        .file_name()
        .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned());
    let result = match status {
        Err(e) => Err(format!(
            "cannot start the editor {program:?} ($VISUAL, $EDITOR): {e}; the cell is unchanged"
        )),
        Ok(s) if !s.success() => Err(format!(
            "the editor {program:?} failed ({s}); the cell is unchanged"
        )),
        Ok(_) => match std::fs::read_to_string(&path) {
            Ok(text) => Ok(without_final_newline(text)),
            Err(e) => {
                return Err(format!(
                    "cannot read the edited cell back from {}: {e}; the cell is unchanged",
                    path.display()
                ));
            }
        },
    };
    remove(&path);
    result
}

fn without_final_newline(mut text: String) -> String {
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    text
}

/// A new file only this user can read, in the temporary directory, named
/// `….extension` and holding `source` and a final newline.
fn write_temp(source: &str, extension: &str) -> io::Result<PathBuf> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir();
    for attempt in 0..16_u32 {
        let path = dir.join(format!(
            "sessionpad-cell-{}-{nanos}-{attempt}.{extension}",
            std::process::id()
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(mut file) => {
                file.write_all(source.as_bytes())?;
                file.write_all(b"\n")?;
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free temporary file name",
    ))
}

fn remove(path: &Path) {
    if let Err(e) = std::fs::remove_file(path) {
        tracing::warn!("cannot remove {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        // `sh -c SCRIPT sh PATH`: the path is $1.
        ["sh", "-c", script, "sh"]
            .iter()
            .map(|s| (*s).to_string())
            .collect()
    }

    #[tokio::test]
    async fn the_edited_file_becomes_the_cell() {
        let out = edit_file(
            &sh("printf 'for i in x:\\n    y(i)\\n' > \"$1\""),
            "old",
            "py",
        )
        .await;
        assert_eq!(out, Ok("for i in x:\n    y(i)".to_string()));
        let same = edit_file(&sh("true"), "a = 1\nb = 2", "py").await;
        assert_eq!(same, Ok("a = 1\nb = 2".to_string()));
    }

    #[tokio::test]
    async fn a_failing_editor_leaves_the_cell_alone() {
        let e = edit_file(&sh("echo junk > \"$1\"; exit 1"), "keep", "py")
            .await
            .unwrap_err();
        assert!(e.contains("unchanged"), "{e}");
        let missing = vec!["/nonexistent/editor".to_string()];
        let e = edit_file(&missing, "keep", "py").await.unwrap_err();
        assert!(e.contains("cannot start") && e.contains("unchanged"), "{e}");
        assert!(edit_file(&[], "keep", "py").await.is_err());
    }

    #[tokio::test]
    async fn the_temporary_file_is_private_and_removed() {
        let seen = edit_file(
            &sh("ls -l \"$1\" > \"$1.ls\"; cat \"$1.ls\" > \"$1\"; rm \"$1.ls\""),
            "x",
            "sh",
        )
        .await
        .unwrap();
        assert!(seen.starts_with("-rw-------"), "{seen}");
        let path = Path::new(seen.split_whitespace().last().unwrap_or_default());
        assert_eq!(path.extension(), Some("sh".as_ref()), "{seen}");
        assert!(!path.exists());
    }
}
