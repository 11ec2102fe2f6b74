//! Reading the ledger back for `sessionpad log`: the recorded calls of one
//! session identifier (or of all), oldest first, optionally only those since a
//! time and only the last N; and the identifiers, most recently active first.
//! Uses the `calls_by_identifier` index, so the last 100 calls of one
//! identifier are found without reading the others.

use chrono::{DateTime, TimeZone, Utc};
use rusqlite::{Connection, Row, params};
use serde::Serialize;

use super::in_place;
use crate::protocol::record::{
    CallKind, ContentKept, Entry, FileChange, FileChangeKind, RecordedFile, RecordedImage,
};

/// Which calls to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// Only this session identifier's calls; all when `None`.
    pub identifier: Option<String>,
    /// Only calls on this pool key (`local/PythonLTS/127.0.0.1:8341`, an
    /// endpoint); every pool's when `None`.
    pub pool: Option<String>,
    /// Only calls that arrived at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only the last this many of them (still printed oldest first).
    pub tail: Option<usize>,
}

const COLUMNS: &str = "id, at_ms, duration_us, pool, identifier, client, kind, execution_id, code,
    stdin, status, exit_code, stdout, stderr, result, file_name, file_size, file_sha256, client_gone, files_note";

/// The calls `query` selects, oldest first, all in memory (for a bounded
/// `query`: one identifier, a `tail`; [`each`] streams any).
///
/// # Errors
///
/// SQLite's error.
pub fn entries(conn: &Connection, query: &Query) -> rusqlite::Result<Vec<Entry>> {
    let mut out = Vec::new();
    each(conn, query, i64::MIN, &mut |e| {
        out.push(e);
        Ok::<(), rusqlite::Error>(())
    })?;
    Ok(out)
}

/// The record number from which the last `query.tail` calls `query` selects
/// begin: [`i64::MIN`] without a tail (every call), [`i64::MAX`] when nothing
/// is selected.
///
/// # Errors
///
/// SQLite's error.
pub fn tail_start(conn: &Connection, query: &Query) -> rusqlite::Result<i64> {
    let Some(tail) = query.tail else {
        return Ok(i64::MIN);
    };
    let since = query.since.map_or(i64::MIN, |t| t.timestamp_millis());
    let limit = i64::try_from(tail).unwrap_or(i64::MAX);
    let start: Option<i64> = match &query.identifier {
        Some(id) => conn.query_row(
            "SELECT min(id) FROM (SELECT id FROM calls WHERE identifier = ?1 AND at_ms >= ?2
             AND (?4 IS NULL OR pool = ?4) ORDER BY id DESC LIMIT ?3)",
            params![id, since, limit, query.pool],
            |r| r.get(0),
        )?,
        None => conn.query_row(
            "SELECT min(id) FROM (SELECT id FROM calls WHERE at_ms >= ?1
             AND (?3 IS NULL OR pool = ?3) ORDER BY id DESC LIMIT ?2)",
            params![since, limit, query.pool],
            |r| r.get(0),
        )?,
    };
    Ok(start.unwrap_or(i64::MAX))
}

/// Hands each call `query` selects whose record number is at least `from`
/// to `f`, oldest first, reading one row at a time: memory stays that of one
/// call whatever the ledger holds (`sessionpad log` without an identifier
/// over a million calls). Stops at the first error of `f`.
///
/// # Errors
///
/// SQLite's error, or the first of `f`'s.
pub fn each<E: From<rusqlite::Error>>(
    conn: &Connection,
    query: &Query,
    from: i64,
    f: &mut dyn FnMut(Entry) -> Result<(), E>,
) -> Result<(), E> {
    let since = query.since.map_or(i64::MIN, |t| t.timestamp_millis());
    let from = from.max(tail_start(conn, query)?);
    let mut stmt;
    let rows = match &query.identifier {
        Some(id) => {
            stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM calls WHERE identifier = ?1 AND at_ms >= ?2 AND id >= ?3
                 AND (?4 IS NULL OR pool = ?4) ORDER BY id"
            ))?;
            stmt.query_map(params![id, since, from, query.pool], entry)?
        }
        None => {
            stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM calls WHERE at_ms >= ?1 AND id >= ?2
                 AND (?3 IS NULL OR pool = ?3) ORDER BY id"
            ))?;
            stmt.query_map(params![since, from, query.pool], entry)?
        }
    };
    for row in rows {
        let mut e = row?;
        e.images = images(conn, e.seq)?;
        e.files = files(conn, e.seq)?;
        if matches!(e.kind, CallKind::Code | CallKind::Shell) {
            e.network = Some(network(conn, e.seq)?);
        }
        f(e)?;
    }
    Ok(())
}

/// The recorded sessions (pool key and identifier) with calls at or after
/// `since`, most recently active first, with their number of calls.
///
/// # Errors
///
/// SQLite's error.
pub fn identifiers(
    conn: &Connection,
    since: Option<DateTime<Utc>>,
) -> rusqlite::Result<Vec<(String, String, u64)>> {
    let since = since.map_or(i64::MIN, |t| t.timestamp_millis());
    let mut stmt = conn.prepare_cached(
        "SELECT pool, identifier, count(*), max(id) AS last FROM calls WHERE at_ms >= ?1
         GROUP BY pool, identifier ORDER BY last DESC",
    )?;
    stmt.query_map([since], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?.unsigned_abs(),
        ))
    })?
    .collect()
}

/// A session the ledger holds calls of (schema version 2's `sessions`), for
/// the sessions pane's history and `sessionpad log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordedSession {
    /// The pool key (`local`, or the endpoint).
    pub pool: String,
    /// The session identifier.
    pub identifier: String,
    /// Calls recorded (executions and file calls).
    pub calls: u64,
    /// Cells among them: code and shell executions.
    pub cells: u64,
    /// The oldest call still recorded (UTC, milliseconds).
    pub first: DateTime<Utc>,
    /// The newest call (UTC, milliseconds).
    pub last: DateTime<Utc>,
    /// The last client that named itself (its `User-Agent`).
    pub client: Option<String>,
    /// The first client that named itself: who started the session (an
    /// agent, before a person took it over).
    pub first_client: Option<String>,
}

/// The recorded sessions, most recently active first, at most `limit`; reads
/// the `sessions` table the ledger keeps, never the calls (a few rows read
/// whatever the number of calls).
///
/// # Errors
///
/// SQLite's error.
pub fn sessions(conn: &Connection, limit: usize) -> rusqlite::Result<Vec<RecordedSession>> {
    let mut stmt = conn.prepare_cached(
        "SELECT pool, identifier, calls, cells, first_ms, last_ms, client, first_client FROM sessions
         ORDER BY last_id DESC LIMIT ?1",
    )?;
    let time = |ms: i64| Utc.timestamp_millis_opt(ms).single().unwrap_or_default();
    stmt.query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
        Ok(RecordedSession {
            pool: r.get(0)?,
            identifier: r.get(1)?,
            calls: r.get::<_, i64>(2)?.unsigned_abs(),
            cells: r.get::<_, i64>(3)?.unsigned_abs(),
            first: time(r.get(4)?),
            last: time(r.get(5)?),
            client: r.get(6)?,
            first_client: r.get(7)?,
        })
    })?
    .collect()
}

/// The recorded sessions of `identifier`, one per pool it was used on, most
/// recently active first (from the `sessions` table).
///
/// # Errors
///
/// SQLite's error.
pub fn pools_of(conn: &Connection, identifier: &str) -> rusqlite::Result<Vec<RecordedSession>> {
    Ok(sessions(conn, usize::MAX)?
        .into_iter()
        .filter(|s| s.identifier == identifier)
        .collect())
}

/// The images of call `seq`, in order.
fn images(conn: &Connection, seq: i64) -> rusqlite::Result<Vec<RecordedImage>> {
    let mut stmt = conn.prepare_cached(
        "SELECT i.format, i.sha256, length(i.data) FROM call_images c
         JOIN images i ON i.sha256 = c.sha256 WHERE c.call_id = ?1 ORDER BY c.seq",
    )?;
    stmt.query_map([seq], |r| {
        Ok(RecordedImage {
            format: r.get(0)?,
            sha256: r.get(1)?,
            size: r.get::<_, i64>(2)?.unsigned_abs(),
        })
    })?
    .collect()
}

/// The bytes of the stored image with SHA-256 `sha256` (hex), if any.
///
/// # Errors
///
/// SQLite's error.
pub fn image_bytes(conn: &Connection, sha256: &str) -> rusqlite::Result<Option<Vec<u8>>> {
    use rusqlite::OptionalExtension;
    conn.query_row("SELECT data FROM images WHERE sha256 = ?1", [sha256], |r| {
        r.get(0)
    })
    .optional()
}

/// One row of [`COLUMNS`] as an [`Entry`] (without its images).
fn entry(r: &Row<'_>) -> rusqlite::Result<Entry> {
    let kind: String = r.get(6)?;
    let kind = CallKind::parse(&kind).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            6,
            rusqlite::types::Type::Text,
            format!("unknown call kind {kind:?}").into(),
        )
    })?;
    let at_ms: i64 = r.get(1)?;
    let result = in_place::text(r, 14)?;
    let file_name: Option<String> = r.get(15)?;
    let file_size: Option<i64> = r.get(16)?;
    let file_sha256: Option<String> = r.get(17)?;
    Ok(Entry {
        seq: r.get(0)?,
        at: Utc.timestamp_millis_opt(at_ms).single().unwrap_or_default(),
        duration_ms: r.get::<_, i64>(2)? as f64 / 1000.0,
        pool: r.get(3)?,
        identifier: r.get(4)?,
        client: r.get(5)?,
        kind,
        execution_id: r.get(7)?,
        code: r.get(8)?,
        stdin: r.get(9)?,
        status: r.get(10)?,
        exit_code: r.get(11)?,
        stdout: in_place::text(r, 12)?,
        stderr: in_place::text(r, 13)?,
        result: result.and_then(|t| serde_json::from_str(&t).ok()),
        images: Vec::new(),
        file: file_name.map(|name| RecordedFile {
            name,
            size: file_size.map(i64::unsigned_abs),
            sha256: file_sha256,
        }),
        client_gone: r.get(18)?,
        files: Vec::new(),
        files_note: r.get(19)?,
        network: None,
    })
}

/// What call `seq` tried to reach through its session's egress proxy, in
/// order (issue 29).
///
/// # Errors
///
/// SQLite's error.
pub fn network(
    conn: &Connection,
    seq: i64,
) -> rusqlite::Result<Vec<crate::protocol::egress::NetworkAttempt>> {
    use crate::protocol::egress::{Decision, NetworkAttempt, Via};
    let mut stmt = conn.prepare_cached(
        "SELECT host, port, decision, bytes, at_ms, via FROM call_network WHERE call_id = ?1
         ORDER BY seq",
    )?;
    stmt.query_map([seq], |r| {
        Ok(NetworkAttempt {
            host: r.get(0)?,
            port: r.get(1)?,
            decision: named(r, 2, "egress decision", Decision::parse)?,
            via: named(r, 5, "network route", Via::parse)?,
            bytes: r.get::<_, i64>(3)?.unsigned_abs(),
            at: Utc
                .timestamp_millis_opt(r.get(4)?)
                .single()
                .unwrap_or_default(),
        })
    })?
    .collect()
}

/// Column `col` of `row`, a name read by `parse`; an unknown name is an
/// error that says `what` it should have been, never a guess.
fn named<T>(
    row: &rusqlite::Row<'_>,
    col: usize,
    what: &str,
    parse: fn(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let text: String = row.get(col)?;
    parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            col,
            rusqlite::types::Type::Text,
            format!("unknown {what} {text:?}").into(),
        )
    })
}

/// The files call `seq` changed, in the order recorded (path order).
///
/// # Errors
///
/// SQLite's error.
pub fn files(conn: &Connection, seq: i64) -> rusqlite::Result<Vec<FileChange>> {
    let mut stmt = conn.prepare_cached(
        "SELECT path, change, size, sha256, content FROM call_files WHERE call_id = ?1
         ORDER BY seq",
    )?;
    stmt.query_map([seq], |r| {
        let change: String = r.get(1)?;
        let content: Option<String> = r.get(4)?;
        Ok(FileChange {
            path: r.get(0)?,
            change: FileChangeKind::parse(&change).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    1,
                    rusqlite::types::Type::Text,
                    format!("unknown file change {change:?}").into(),
                )
            })?,
            size: r.get::<_, i64>(2)?.unsigned_abs(),
            sha256: r.get(3)?,
            content: content.as_deref().and_then(ContentKept::parse),
            data: None,
        })
    })?
    .collect()
}

/// The bytes of a changed file the ledger keeps, by their SHA-256 (hex);
/// `None` when they are not (or no longer) kept.
///
/// # Errors
///
/// SQLite's error.
pub fn file_content(conn: &Connection, sha256: &str) -> rusqlite::Result<Option<Vec<u8>>> {
    use rusqlite::OptionalExtension;
    conn.query_row(
        "SELECT data FROM file_contents WHERE sha256 = ?1",
        [sha256],
        |r| r.get(0),
    )
    .optional()
}

/// The version of `path` (as the session sees it) that session
/// (`pool`, `identifier`) had before call `before` (a record number): the
/// last change to it recorded earlier; `None` when none is recorded.
///
/// # Errors
///
/// SQLite's error.
pub fn previous_version(
    conn: &Connection,
    pool: &str,
    identifier: &str,
    path: &str,
    before: i64,
) -> rusqlite::Result<Option<FileChange>> {
    let mut stmt = conn.prepare_cached(
        "SELECT f.call_id FROM calls c JOIN call_files f ON f.call_id = c.id
         WHERE c.identifier = ?1 AND c.pool = ?2 AND f.path = ?3 AND c.id < ?4
         ORDER BY c.id DESC LIMIT 1",
    )?;
    let mut rows = stmt.query(params![identifier, pool, path, before])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let call: i64 = row.get(0)?;
    Ok(files(conn, call)?.into_iter().find(|f| f.path == path))
}

/// The state of session `identifier`'s `/mnt/data` (on pool key `pool`, or
/// any when `None`) as recorded after call `upto` (a record number; every
/// call when `None`): each path with its last recorded version, deleted
/// files left out. Files the session had before the recording began, and
/// never changed since, are not known.
///
/// # Errors
///
/// SQLite's error.
pub fn files_after(
    conn: &Connection,
    pool: Option<&str>,
    identifier: &str,
    upto: Option<i64>,
) -> rusqlite::Result<std::collections::BTreeMap<String, FileChange>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id FROM calls c WHERE c.identifier = ?1 AND (?2 IS NULL OR c.pool = ?2)
         AND c.id <= ?3 AND EXISTS (SELECT 1 FROM call_files f WHERE f.call_id = c.id)
         ORDER BY c.id",
    )?;
    let ids = stmt
        .query_map(params![identifier, pool, upto.unwrap_or(i64::MAX)], |r| {
            r.get::<_, i64>(0)
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut state = std::collections::BTreeMap::new();
    for id in ids {
        for f in files(conn, id)? {
            if f.change == FileChangeKind::Deleted {
                state.remove(&f.path);
            } else {
                state.insert(f.path.clone(), f);
            }
        }
    }
    Ok(state)
}
