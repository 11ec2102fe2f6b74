//! Keeping the ledger within its limits (`[ledger]` `days` and `max_size` in
//! the config file): calls older than the retention period go first, then the
//! oldest calls until the records fit the size, then images no call shows any
//! more. Each step is one SQLite transaction, so a process killed mid-way
//! leaves the database as before the step or after it, never damaged. Freed
//! pages are given back to the file system (`incremental_vacuum`, the ledger
//! is created with `auto_vacuum = INCREMENTAL`) and the WAL is truncated.

use chrono::{DateTime, Utc};
use rusqlite::Connection;

/// How much the ledger keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Days a call is kept (0: calls are kept for no time at all, every
    /// pruning removes them).
    pub days: u32,
    /// Most bytes of database pages in use (the file less its free pages);
    /// the oldest calls are removed past it.
    pub max_bytes: u64,
    /// Most bytes of one changed file of `/mnt/data` whose content is kept
    /// (issue 26); a bigger file is recorded by size and hash only
    /// ([`crate::protocol::record::ContentKept::TooBig`]). 0 keeps no bytes.
    pub file_content_max: u64,
    /// Most bytes of file contents kept per session (pool and identifier);
    /// past it the oldest versions' bytes are dropped first
    /// ([`crate::protocol::record::ContentKept::Dropped`]).
    pub session_content_max: u64,
}

impl Limits {
    /// Per-file content kept when none is configured: 16 MiB.
    pub const DEFAULT_FILE_CONTENT_MAX: u64 = 16 * 1024 * 1024;
    /// Per-session content kept when none is configured: 256 MiB.
    pub const DEFAULT_SESSION_CONTENT_MAX: u64 = 256 * 1024 * 1024;
}

/// The oldest calls removed per step while the ledger is over its size: at
/// least this many, or a twentieth of the calls.
const SIZE_STEP: i64 = 200;

/// Prunes `conn` to `limits` as of `now`; returns how many calls were removed.
///
/// # Errors
///
/// SQLite's error; the steps done before it stay done.
pub fn prune(conn: &Connection, limits: Limits, now: DateTime<Utc>) -> rusqlite::Result<u64> {
    let cutoff = now - chrono::Duration::days(i64::from(limits.days));
    let mut removed = conn.execute(
        "DELETE FROM calls WHERE at_ms < ?1",
        [cutoff.timestamp_millis()],
    )? as u64;
    if removed > 0 {
        remove_orphan_images(conn)?;
        remove_orphan_contents(conn)?;
    }
    while used_bytes(conn)? > limits.max_bytes {
        let count: i64 = conn.query_row("SELECT count(*) FROM calls", [], |r| r.get(0))?;
        if count == 0 {
            break;
        }
        let step = (count / 20).max(SIZE_STEP);
        removed += conn.execute(
            "DELETE FROM calls WHERE id IN (SELECT id FROM calls ORDER BY id LIMIT ?1)",
            [step],
        )? as u64;
        remove_orphan_images(conn)?;
        remove_orphan_contents(conn)?;
    }
    if removed > 0 {
        // Gives the free pages back to the file system, then empties the WAL.
        conn.execute_batch("PRAGMA incremental_vacuum;")?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    }
    Ok(removed)
}

/// Bytes of the database's pages that hold data (pages less free pages, times
/// the page size).
///
/// # Errors
///
/// SQLite's error.
pub fn used_bytes(conn: &Connection) -> rusqlite::Result<u64> {
    let pragma = |name: &str| conn.pragma_query_value(None, name, |r| r.get::<_, i64>(0));
    let pages = pragma("page_count")? - pragma("freelist_count")?;
    Ok((pages.max(0) * pragma("page_size")?).unsigned_abs())
}

fn remove_orphan_images(conn: &Connection) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM images WHERE sha256 NOT IN (SELECT sha256 FROM call_images)",
        [],
    )
}

/// Removes file contents no kept file version points at any more (after
/// pruning calls, or dropping versions past a session's budget).
///
/// # Errors
///
/// SQLite's error.
pub fn remove_orphan_contents(conn: &Connection) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM file_contents WHERE NOT EXISTS (SELECT 1 FROM call_files f
            WHERE f.sha256 = file_contents.sha256 AND f.content = 'kept')",
        [],
    )
}
