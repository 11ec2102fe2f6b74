//! A recorded version of a session's file written to a local folder: what
//! `sessionpad export --recorded ID --files DIR` does for every file and the
//! notebook's recorded view for the one a person saves. The session's paths
//! are untrusted: each component is made safe as a download's name is
//! ([`crate::localname::safe_file_name`]), so nothing is written outside the
//! folder; the bytes are checked against their recorded SHA-256 and written
//! through a temporary file renamed into place; an existing file is replaced
//! only when asked. Reads the ledger and writes the disk: run it off a UI task.

use std::path::{Path, PathBuf};

use crate::ledger;
use crate::protocol::record::{ContentKept, DATA_ROOT, FileChange};

/// Why a recorded version was not written.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The local file exists and replacing it was not asked for: ask, then
    /// write again with `replace`.
    #[error("{} exists", .0.display())]
    Exists(PathBuf),
    /// The ledger does not hold the bytes (too big to keep, dropped past the
    /// session's budget, unreadable, pruned), or they do not match the
    /// recorded SHA-256: what to tell the user.
    #[error("{0}")]
    NotKept(String),
    /// SQLite could not read the bytes.
    #[error("reading the ledger: {0}")]
    Ledger(#[from] rusqlite::Error),
    /// The folder or the file could not be written (the path, then the error).
    #[error("{0}")]
    Local(String),
}

/// Where the session's `session_path` (`/mnt/data/out/run.log`) goes below
/// `dir`: each component made safe, so always inside `dir`.
pub fn local_path(dir: &Path, session_path: &str) -> PathBuf {
    let rel = session_path
        .strip_prefix(DATA_ROOT)
        .unwrap_or(session_path)
        .trim_start_matches('/');
    let mut out = dir.to_path_buf();
    for part in rel.split('/').filter(|p| !p.is_empty()) {
        out.push(crate::localname::safe_file_name(part));
    }
    out
}

/// The bytes of recorded version `f` from the ledger `conn`, checked against
/// its recorded SHA-256.
///
/// # Errors
///
/// [`SaveError::NotKept`] when the ledger does not hold them (saying why) or
/// they do not match; [`SaveError::Ledger`] when SQLite fails.
pub fn checked_bytes(conn: &rusqlite::Connection, f: &FileChange) -> Result<Vec<u8>, SaveError> {
    if let Some(why) = f.content.and_then(ContentKept::why_not) {
        return Err(SaveError::NotKept(format!(
            "{why} ({})",
            crate::text::human_size(f.size)
        )));
    }
    let Some(sha) = &f.sha256 else {
        return Err(SaveError::NotKept("its bytes were not recorded".into()));
    };
    let Some(bytes) = ledger::read::file_content(conn, sha)? else {
        return Err(SaveError::NotKept(
            "its bytes are no longer in the ledger (pruned)".into(),
        ));
    };
    if crate::protocol::record::sha256_hex(&bytes) != *sha {
        return Err(SaveError::NotKept(format!(
            "the ledger's bytes do not match the recorded sha256 {sha}"
        )));
    }
    Ok(bytes)
}

/// Writes version `f`'s bytes (checked, [`checked_bytes`]) to `local`,
/// creating its parent folders; replaces an existing file only when
/// `replace`. Returns the size written, in bytes.
///
/// # Errors
///
/// [`SaveError::Exists`] when `local` exists and not `replace`; the errors of
/// [`checked_bytes`]; [`SaveError::Local`] when a folder or the file cannot
/// be written.
pub fn write_version(
    conn: &rusqlite::Connection,
    f: &FileChange,
    local: &Path,
    replace: bool,
) -> Result<u64, SaveError> {
    let bytes = checked_bytes(conn, f)?;
    write_bytes(&bytes, local, replace)?;
    Ok(bytes.len() as u64)
}

/// Writes `bytes` to `local` through a temporary file in the same folder
/// renamed into place (never half a file under the real name), creating the
/// parent folders; replaces an existing file only when `replace` (a link is
/// an existing file: never followed).
///
/// # Errors
///
/// [`SaveError::Exists`] when `local` exists and not `replace`;
/// [`SaveError::Local`] when a folder or the file cannot be written.
pub fn write_bytes(bytes: &[u8], local: &Path, replace: bool) -> Result<(), SaveError> {
    let local_error = |what: &Path, e: &dyn std::fmt::Display| {
        SaveError::Local(format!("writing {}: {e}", what.display()))
    };
    if !replace && std::fs::symlink_metadata(local).is_ok() {
        return Err(SaveError::Exists(local.to_path_buf()));
    }
    let parent = local.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| local_error(parent, &e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".sessionpad-export-")
        .tempfile_in(parent)
        .map_err(|e| local_error(parent, &e))?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(|e| local_error(tmp.path(), &e))?;
    if replace {
        tmp.persist(local)
            .map_err(|e| local_error(local, &e.error))?;
    } else {
        match tmp.persist_noclobber(local) {
            Ok(_) => {}
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(SaveError::Exists(local.to_path_buf()));
            }
            Err(e) => return Err(local_error(local, &e.error)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_paths_stay_below_the_folder() {
        let dir = Path::new("/tmp/out");
        for (session, local) in [
            ("/mnt/data/report.csv", "/tmp/out/report.csv"),
            ("/mnt/data/out/logs/run.log", "/tmp/out/out/logs/run.log"),
            (
                "/mnt/data/../../etc/passwd",
                "/tmp/out/download/download/etc/passwd",
            ),
            ("/etc/shadow", "/tmp/out/etc/shadow"),
            ("/mnt/data/a\u{1b}[31m/b", "/tmp/out/a_[31m/b"),
        ] {
            let p = local_path(dir, session);
            assert_eq!(p, Path::new(local), "{session:?}");
            assert!(p.starts_with(dir));
        }
    }

    #[test]
    fn an_existing_file_is_kept_unless_replacing_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join("sub").join("a.txt");
        write_bytes(b"one", &local, false).unwrap();
        let again = write_bytes(b"two", &local, false);
        assert!(matches!(again, Err(SaveError::Exists(p)) if p == local));
        assert_eq!(std::fs::read(&local).unwrap(), b"one");
        write_bytes(b"two", &local, true).unwrap();
        assert_eq!(std::fs::read(&local).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(local.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }
}
