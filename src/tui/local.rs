//! Work the UI state asks of the loop that is neither the network nor drawing:
//! putting text on the clipboard (an OSC 52 sequence written to the terminal,
//! which only the loop owns) and writing a file on this machine (on a blocking
//! thread). The state queues [`LocalWork`]; the loop carries it out with
//! `perform` and hands the [`LocalOutcome`] back, the way it does for
//! `$EDITOR`.

use std::io::{self, Write};
use std::path::PathBuf;

use super::runner::Screen;

/// Texts longer than this are not sent to the clipboard: terminals cap OSC 52
/// (and some drop the whole sequence when it is too long). Saving has no limit.
pub const CLIPBOARD_LIMIT: usize = 1 << 20;

/// A file to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveRequest {
    /// Where (relative paths are relative to the working directory).
    pub path: PathBuf,
    /// What.
    pub bytes: Vec<u8>,
    /// Replace an existing file (the user confirmed); else an existing file is
    /// left alone and reported.
    pub overwrite: bool,
    /// What it is, for the notice: `In [3]'s image`.
    pub what: String,
}

/// Something for the loop to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalWork {
    /// Put `text` on the clipboard.
    Copy {
        /// The text (already free of escape sequences).
        text: String,
        /// What it is, for the notice: `In [3]'s output`.
        what: String,
    },
    /// Write a file.
    Save(SaveRequest),
}

/// How a piece of [`LocalWork`] went.
#[derive(Debug)]
pub enum LocalOutcome {
    /// The clipboard sequence was written (terminals do not confirm it).
    Copied {
        /// What was copied.
        what: String,
        /// How long it was.
        bytes: usize,
        /// Writing to the terminal failed.
        result: Result<(), String>,
    },
    /// The file was written, or why not.
    Saved {
        /// The request, given back (to ask before overwriting).
        request: SaveRequest,
        /// The write; `AlreadyExists` when the file exists and `overwrite` was
        /// not set.
        result: io::Result<()>,
    },
}

/// Carries out `work`; file writes run on a blocking thread.
pub(crate) async fn perform(screen: &mut impl Screen, work: LocalWork) -> LocalOutcome {
    match work {
        LocalWork::Copy { text, what } => LocalOutcome::Copied {
            what,
            bytes: text.len(),
            result: screen.copy_to_clipboard(&text).map_err(|e| e.to_string()),
        },
        LocalWork::Save(request) => {
            let path = request.path.clone();
            let joined = tokio::task::spawn_blocking(move || {
                let result = write(&request);
                (request, result)
            })
            .await;
            match joined {
                Ok((request, result)) => LocalOutcome::Saved { request, result },
                Err(e) => LocalOutcome::Saved {
                    request: SaveRequest {
                        path,
                        bytes: Vec::new(),
                        overwrite: false,
                        what: String::new(),
                    },
                    result: Err(io::Error::other(e.to_string())),
                },
            }
        }
    }
}

/// Writes the file: never over an existing one unless `overwrite`.
fn write(request: &SaveRequest) -> io::Result<()> {
    if request.overwrite {
        return std::fs::write(&request.path, &request.bytes);
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&request.path)?;
    file.write_all(&request.bytes)?;
    file.sync_all()
}

/// The path a person typed: trimmed, `~/` for the home folder.
pub fn resolve(typed: &str) -> PathBuf {
    let typed = typed.trim();
    if let Some(rest) = typed.strip_prefix("~/")
        && let Some(dirs) = directories::BaseDirs::new()
    {
        return dirs.home_dir().join(rest);
    }
    PathBuf::from(typed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(path: PathBuf, bytes: &[u8], overwrite: bool) -> SaveRequest {
        SaveRequest {
            path,
            bytes: bytes.to_vec(),
            overwrite,
            what: "x".into(),
        }
    }

    #[test]
    fn an_existing_file_is_kept_unless_overwrite_is_confirmed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("out.txt");
        assert!(write(&request(path.clone(), b"one", false)).is_ok());
        let again = write(&request(path.clone(), b"two", false));
        assert_eq!(
            again.map_err(|e| e.kind()),
            Err(io::ErrorKind::AlreadyExists)
        );
        assert_eq!(std::fs::read(&path).ok(), Some(b"one".to_vec()));
        assert!(write(&request(path.clone(), b"two", true)).is_ok());
        assert_eq!(std::fs::read(&path).ok(), Some(b"two".to_vec()));
    }

    #[test]
    fn typed_paths_are_trimmed_and_know_home() {
        assert_eq!(resolve("  out-1.txt "), PathBuf::from("out-1.txt"));
        let home = resolve("~/plot.png");
        assert!(home.ends_with("plot.png") && home.is_absolute(), "{home:?}");
    }
}
