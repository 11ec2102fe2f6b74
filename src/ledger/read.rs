//! Reading the ledger back for `sessionpad log`: the recorded calls of one
//! session identifier (or of all), oldest first, optionally only those since a
//! time and only the last N; and the identifiers, most recently active first.
//! Uses the `calls_by_identifier` index, so the last 100 calls of one
//! identifier are found without reading the others.

use chrono::{DateTime, TimeZone, Utc};
use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};

use super::{CallKind, RecordedFile, RecordedImage};

/// Which calls to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// Only this session identifier's calls; all when `None`.
    pub identifier: Option<String>,
    /// Only calls that arrived at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only the last this many of them (still printed oldest first).
    pub tail: Option<usize>,
}

/// One recorded call as `log --json` prints it: exactly what was recorded.
/// Fields without a value (a file call's code, an execution's file) are left
/// out (and read back as absent: the event stream carries entries too,
/// [`crate::events::RecordedCall`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The record's number in the ledger (increasing in recording order).
    pub seq: i64,
    /// When the call arrived (RFC 3339, UTC, milliseconds).
    pub at: DateTime<Utc>,
    /// How long the pool took to answer it, in milliseconds.
    pub duration_ms: f64,
    /// The pool key (`local`, or the endpoint).
    pub pool: String,
    /// The session identifier.
    pub identifier: String,
    /// The client's `User-Agent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// What kind of call.
    pub kind: CallKind,
    /// The execution id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<String>,
    /// The code or shell command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// A shell command's standard input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// The execution's status (`Succeeded`, `Failed`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// A shell command's exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Standard output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// Standard error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// The last expression's value (`{"text": …, "json": …}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    /// The images displayed, in order (bytes stay in the ledger).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<RecordedImage>,
    /// The file an upload, download or delete touched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<RecordedFile>,
}

const COLUMNS: &str = "id, at_ms, duration_us, pool, identifier, client, kind, execution_id, code,
    stdin, status, exit_code, stdout, stderr, result, file_name, file_size, file_sha256";

/// The calls `query` selects, oldest first.
///
/// # Errors
///
/// SQLite's error.
pub fn entries(conn: &Connection, query: &Query) -> rusqlite::Result<Vec<Entry>> {
    let since = query.since.map_or(i64::MIN, |t| t.timestamp_millis());
    let limit = query
        .tail
        .map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
    let mut out = match &query.identifier {
        Some(id) => {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM calls WHERE identifier = ?1 AND at_ms >= ?2
                 ORDER BY id DESC LIMIT ?3"
            ))?;
            stmt.query_map(params![id, since, limit], entry)?
                .collect::<rusqlite::Result<Vec<_>>>()?
        }
        None => {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM calls WHERE at_ms >= ?1 ORDER BY id DESC LIMIT ?2"
            ))?;
            stmt.query_map(params![since, limit], entry)?
                .collect::<rusqlite::Result<Vec<_>>>()?
        }
    };
    out.reverse();
    for e in &mut out {
        e.images = images(conn, e.seq)?;
    }
    Ok(out)
}

/// The session identifiers with recorded calls at or after `since`, most
/// recently active first, with their number of calls.
///
/// # Errors
///
/// SQLite's error.
pub fn identifiers(
    conn: &Connection,
    since: Option<DateTime<Utc>>,
) -> rusqlite::Result<Vec<(String, u64)>> {
    let since = since.map_or(i64::MIN, |t| t.timestamp_millis());
    let mut stmt = conn.prepare_cached(
        "SELECT identifier, count(*), max(id) AS last FROM calls WHERE at_ms >= ?1
         GROUP BY identifier ORDER BY last DESC",
    )?;
    stmt.query_map([since], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.unsigned_abs()))
    })?
    .collect()
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
    let result: Option<String> = r.get(14)?;
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
        stdout: r.get(12)?,
        stderr: r.get(13)?,
        result: result.and_then(|t| serde_json::from_str(&t).ok()),
        images: Vec::new(),
        file: file_name.map(|name| RecordedFile {
            name,
            size: file_size.map(i64::unsigned_abs),
            sha256: file_sha256,
        }),
    })
}
