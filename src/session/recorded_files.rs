//! A recorded file for a front end (issue 26): the bytes of one version of a
//! file a recorded cell changed in its session's `/mnt/data`, with its diff
//! against the previous recorded version, read from this user's ledger after
//! the session is gone; and that version saved into a local folder
//! ([`crate::ledger::export`]: names made safe, SHA-256 checked, an existing
//! file replaced only when the user said so). Both read SQLite and touch the
//! disk, so the session worker runs them on a blocking thread. Knows nothing
//! of the terminal.

use std::path::{Path, PathBuf};

use super::failure::{Failure, FailureKind};
use crate::ledger::export::{self, SaveError};
use crate::protocol::record::{FileChange, FileChangeKind};

/// Which recorded file version to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedFileRequest {
    /// The pool key the call was recorded under.
    pub pool: String,
    /// The session identifier.
    pub identifier: String,
    /// The ledger `seq` of the call that changed it.
    pub seq: i64,
    /// The change as recorded (its path, hash and whether its bytes were kept).
    pub file: FileChange,
}

/// A recorded file version read ([`read`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedFileRead {
    /// Its bytes, checked against their SHA-256, or why there are none (the
    /// words to show).
    pub bytes: Result<Vec<u8>, String>,
    /// Its unified diff against the previous recorded version (see
    /// [`crate::ledger::diff::of_file`]), for a text file; `None` when it is
    /// not text or was deleted.
    pub diff: Option<String>,
}

/// Where to save a recorded file version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveRecordedFile {
    /// The version, as recorded.
    pub file: FileChange,
    /// The local folder it goes into (created when missing: the user said
    /// yes); its name below is [`export::local_path`]'s.
    pub folder: PathBuf,
    /// Replace an existing local file (the user said yes).
    pub replace: bool,
}

/// How a save went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Saved {
    /// Written at this path, this many bytes.
    Written(PathBuf, u64),
    /// A file exists at this path: ask, then save again replacing it.
    Exists(PathBuf),
    /// Not written, and why (one line to show).
    Failed(String),
}

fn local_failure(path: &Path, e: impl std::fmt::Display) -> Failure {
    Failure::new(
        FailureKind::Local,
        format!("cannot read the ledger {}: {e}", path.display()),
    )
}

/// The version `request` names, from the ledger at `path`.
///
/// # Errors
///
/// A [`FailureKind::Local`] failure naming the file when the ledger is
/// missing or cannot be read (bytes merely not kept are said in
/// [`RecordedFileRead::bytes`]).
pub fn read(path: &Path, request: &RecordedFileRequest) -> Result<RecordedFileRead, Failure> {
    let conn = crate::ledger::schema::open_existing(path)
        .map_err(|e| local_failure(path, e))?
        .ok_or_else(|| local_failure(path, "no ledger"))?;
    let bytes = match export::checked_bytes(&conn, &request.file) {
        Ok(bytes) => Ok(bytes),
        Err(SaveError::Ledger(e)) => return Err(local_failure(path, e)),
        Err(e) => Err(e.to_string()),
    };
    let text = bytes
        .as_ref()
        .is_ok_and(|b| crate::ledger::diff::text(b).is_some());
    let diff = if text && request.file.change != FileChangeKind::Deleted {
        Some(
            crate::ledger::diff::of_file(
                &conn,
                &request.pool,
                &request.identifier,
                request.seq,
                &request.file,
            )
            .map_err(|e| local_failure(path, e))?,
        )
    } else {
        None
    };
    Ok(RecordedFileRead { bytes, diff })
}

/// Saves the version `request` names from the ledger at `path`.
pub fn save(path: &Path, request: &SaveRecordedFile) -> Saved {
    let conn = match crate::ledger::schema::open_existing(path) {
        Ok(Some(conn)) => conn,
        Ok(None) => return Saved::Failed(format!("no ledger at {}", path.display())),
        Err(e) => return Saved::Failed(local_failure(path, e).message),
    };
    let local = export::local_path(&request.folder, &request.file.path);
    match export::write_version(&conn, &request.file, &local, request.replace) {
        Ok(size) => Saved::Written(local, size),
        Err(SaveError::Exists(p)) => Saved::Exists(p),
        Err(e) => Saved::Failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::record::ContentKept;

    fn change(sha: &str, content: ContentKept) -> FileChange {
        FileChange {
            path: "/mnt/data/../out/r.txt".into(),
            change: FileChangeKind::Added,
            size: 3,
            sha256: Some(sha.into()),
            content: Some(content),
            data: None,
        }
    }

    #[test]
    fn bytes_not_kept_are_said_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("ledger.sqlite3");
        drop(crate::ledger::open(&ledger).unwrap());
        let f = change("00", ContentKept::TooBig);
        let got = read(
            &ledger,
            &RecordedFileRequest {
                pool: "local".into(),
                identifier: "s".into(),
                seq: 1,
                file: f.clone(),
            },
        )
        .unwrap();
        assert!(got.bytes.unwrap_err().contains("too big"));
        let out = dir.path().join("out");
        let saved = save(
            &ledger,
            &SaveRecordedFile {
                file: f,
                folder: out.clone(),
                replace: false,
            },
        );
        assert!(
            matches!(saved, Saved::Failed(ref why) if why.contains("too big")),
            "{saved:?}"
        );
        assert!(!out.exists());
    }
}
