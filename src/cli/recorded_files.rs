//! `sessionpad export --recorded ID --files DIR [--at N] [--force]`: the files
//! a session left in its `/mnt/data`, as the flight recorder's ledger last
//! recorded them (or as they were after execution `N`), written into `DIR`.
//! The paths are the session's, so untrusted: each component is made safe as
//! a download's name is ([`crate::localname::safe_file_name`]), so nothing is
//! written outside `DIR`; each file's bytes are checked against their
//! recorded SHA-256 and written through a temporary file renamed into place;
//! an existing file is replaced only with `--force`. Files whose bytes the
//! ledger did not keep (too big, dropped past the session's budget) are named
//! on standard error, and the exit code is then 1.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::ledger;
use crate::ledger::export;
use crate::protocol::record::FileChange;
use crate::text::sanitize::plain;

/// How `export --recorded ID --files DIR` writes.
pub(super) struct Files<'a> {
    /// An execution number (from 1): the files as they were after it.
    pub(super) at: Option<u64>,
    /// Replace files that exist in the folder.
    pub(super) force: bool,
    /// The pool key the session was recorded on (`--pool`).
    pub(super) pool: Option<&'a str>,
    /// One JSON object per written file on standard output.
    pub(super) json: bool,
}

/// Writes session `id`'s recorded files into `dir` as `how` says (see the
/// module doc).
///
/// # Errors
///
/// A bad identifier, no ledger, no such execution, no recorded files, a
/// ledger that cannot be read, `dir` that cannot be made, a `--pool` the
/// identifier was not used on.
pub(super) fn export(id: &str, dir: &Path, how: &Files<'_>) -> anyhow::Result<ExitCode> {
    let Files {
        at,
        force,
        pool,
        json,
    } = *how;
    let (conn, path, pool) = super::log::recorded_session(id, pool)?;
    let read = |e| ledger::LedgerError::sqlite(&path, e);
    let upto = match at {
        Some(n) => Some(
            nth_execution(&conn, id, pool.as_deref(), n)
                .map_err(read)?
                .ok_or_else(|| {
                    anyhow::anyhow!("session {id:?} has fewer than {n} recorded executions")
                })?,
        ),
        None => None,
    };
    let state = ledger::read::files_after(&conn, pool.as_deref(), id, upto).map_err(read)?;
    if state.is_empty() {
        let when = at.map_or(String::new(), |n| format!(" after execution {n}"));
        bail!(
            "no files recorded for session {id:?}{when}: the ledger records what each call changes in /mnt/data (sessionpad log {id} lists them)"
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut taken = HashSet::new();
    let mut failed = 0_usize;
    for (session_path, f) in &state {
        let local = local_path(dir, session_path);
        let outcome = if taken.insert(local.clone()) {
            write_one(&conn, f, &local, force)
        } else {
            Err(anyhow::anyhow!(
                "its safe local name {} is another file's too",
                local.display()
            ))
        };
        match outcome {
            Ok(size) if json => super::output::json(&serde_json::json!({
                "path": session_path, "file": local, "size": size, "sha256": f.sha256,
            })),
            Ok(size) => eprintln!(
                "wrote {} → {} ({})",
                plain(session_path),
                local.display(),
                crate::text::human_size(size)
            ),
            Err(e) => {
                failed += 1;
                eprintln!("not written: {}: {e:#}", plain(session_path));
            }
        }
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The record number of session `id`'s `n`th execution (code or shell
/// command, from 1) on pool key `pool` (any when `None`), as `export
/// --recorded` numbers its cells.
fn nth_execution(
    conn: &rusqlite::Connection,
    id: &str,
    pool: Option<&str>,
    n: u64,
) -> rusqlite::Result<Option<i64>> {
    use rusqlite::OptionalExtension;
    conn.query_row(
        "SELECT id FROM calls WHERE identifier = ?1 AND kind IN ('code', 'shell')
         AND (?3 IS NULL OR pool = ?3) ORDER BY id LIMIT 1 OFFSET ?2",
        rusqlite::params![id, i64::try_from(n - 1).unwrap_or(i64::MAX), pool],
        |r| r.get(0),
    )
    .optional()
}

/// Where the session's `session_path` goes below `dir` ([`export::local_path`]).
fn local_path(dir: &Path, session_path: &str) -> PathBuf {
    export::local_path(dir, session_path)
}

/// Writes version `f`'s bytes to `local` ([`export::write_version`]); returns
/// their size.
fn write_one(
    conn: &rusqlite::Connection,
    f: &FileChange,
    local: &Path,
    force: bool,
) -> anyhow::Result<u64> {
    match export::write_version(conn, f, local, force) {
        Ok(size) => Ok(size),
        Err(export::SaveError::Exists(p)) => bail!("{} exists; --force replaces it", p.display()),
        Err(e) => Err(e.into()),
    }
}
