//! Big outputs written into the ledger without SQLite copying them (issue 14).
//!
//! Bound as text, a stream of megabytes is copied twice by SQLite while the
//! row is written: rusqlite binds a `&str` as `SQLITE_TRANSIENT` (SQLite's
//! own copy), and the statement builds the row's record (another). For
//! `for i in range(1000000): print(i)` (6.9 MB of stdout) that was 15.9 MB of
//! the pool's heap on top of the execution itself.
//!
//! So a call whose `stdout`, `stderr` and `result` come to
//! [`IN_PLACE_FROM`] bytes or more is written in two steps in the same
//! transaction: the row is inserted with `zeroblob(n)` in those columns (a
//! length, never materialized: SQLite writes the zeros straight into the
//! row's overflow pages as long as no column after them holds data, and the
//! columns after `result` are a file call's, empty for an execution), then
//! each is filled through SQLite's incremental blob I/O
//! (`sqlite3_blob_write`, rusqlite's [`rusqlite::blob::Blob`]), which writes
//! into the pages without a copy of the whole. Such a column holds a BLOB of
//! the text's UTF-8 bytes instead of TEXT; [`text`] reads either back as the
//! same text, so a ledger written before reads as it did. Smaller calls are
//! written as TEXT, as always.

use std::io::Write;

use rusqlite::types::{ToSqlOutput, Type, ValueRef};
use rusqlite::{Connection, Row};

use crate::protocol::record::RecordedOutput;

/// The smallest total of `stdout`, `stderr` and `result` (bytes of UTF-8,
/// `result` as its JSON text) written in place; below it the columns are
/// bound as text. 64 KiB: a copy of less costs nothing worth a second step.
pub const IN_PLACE_FROM: usize = 64 * 1024;

/// The output columns of a call's row, as they are to be bound and then
/// filled: text below [`IN_PLACE_FROM`], zero-filled BLOBs of the right
/// length above it.
pub(super) struct Outputs<'a> {
    stdout: Option<&'a str>,
    stderr: Option<&'a str>,
    result: Option<Json<'a>>,
    in_place: bool,
}

/// The `result` column: the value and its JSON text's length in bytes.
struct Json<'a> {
    value: &'a serde_json::Value,
    len: usize,
}

impl<'a> Outputs<'a> {
    /// The columns of `out` (all NULL without one).
    pub(super) fn of(out: Option<&'a RecordedOutput>) -> Self {
        let stdout = out.map(|o| o.stdout.as_str());
        let stderr = out.map(|o| o.stderr.as_str());
        let result = out.and_then(|o| o.result.as_ref()).map(|value| Json {
            value,
            len: json_len(value),
        });
        let total = stdout.map_or(0, str::len)
            + stderr.map_or(0, str::len)
            + result.as_ref().map_or(0, |r| r.len);
        // SQLite's zeroblob takes an i32 length; a longer stream (past
        // SQLite's own limit of 1e9 bytes anyway) is bound as text and
        // refused by SQLite with its error.
        let fits = |n: usize| i32::try_from(n).is_ok();
        let in_place = total >= IN_PLACE_FROM
            && stdout.is_none_or(|s| fits(s.len()))
            && stderr.is_none_or(|s| fits(s.len()))
            && result.as_ref().is_none_or(|r| fits(r.len));
        Self {
            stdout,
            stderr,
            result,
            in_place,
        }
    }

    /// What to bind for `stdout`.
    pub(super) fn stdout(&self) -> Option<ToSqlOutput<'a>> {
        self.stdout.map(|s| self.bind_text(s))
    }

    /// What to bind for `stderr`.
    pub(super) fn stderr(&self) -> Option<ToSqlOutput<'a>> {
        self.stderr.map(|s| self.bind_text(s))
    }

    /// What to bind for `result` (its JSON text).
    pub(super) fn result(&self) -> Option<ToSqlOutput<'a>> {
        self.result.as_ref().map(|r| {
            if self.in_place {
                zero(r.len)
            } else {
                ToSqlOutput::from(r.value.to_string())
            }
        })
    }

    /// A stream to bind: zero-filled when written in place, else (and when
    /// empty, which costs nothing and keeps a column after it in place) text.
    fn bind_text(&self, s: &'a str) -> ToSqlOutput<'a> {
        if self.in_place && !s.is_empty() {
            zero(s.len())
        } else {
            ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes()))
        }
    }

    /// Fills the zero-filled columns of row `id` of `calls` (just inserted
    /// with what [`Outputs::stdout`], [`Outputs::stderr`] and
    /// [`Outputs::result`] gave) with their text; nothing to do for a row
    /// bound as text.
    ///
    /// # Errors
    ///
    /// SQLite's error (the caller's transaction is then not to be
    /// committed).
    pub(super) fn fill(&self, conn: &Connection, id: i64) -> rusqlite::Result<()> {
        if !self.in_place {
            return Ok(());
        }
        for (column, text) in [(c"stdout", self.stdout), (c"stderr", self.stderr)] {
            if let Some(text) = text.filter(|t| !t.is_empty()) {
                conn.blob_open(rusqlite::MAIN_DB, c"calls", column, id, false)
                    .and_then(|mut blob| blob.write_all_at(text.as_bytes(), 0))?;
            }
        }
        if let Some(r) = self.result.as_ref().filter(|r| r.len > 0) {
            let blob = conn.blob_open(rusqlite::MAIN_DB, c"calls", c"result", id, false)?;
            // Written in pieces as it is serialized: the JSON text is never
            // whole in memory.
            let mut out = std::io::BufWriter::with_capacity(64 * 1024, blob);
            serde_json::to_writer(&mut out, r.value)
                .map_err(std::io::Error::from)
                .and_then(|()| out.flush())
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
        }
        Ok(())
    }
}

/// A zero-filled BLOB of `len` bytes (`len` fits an `i32`, checked by
/// [`Outputs::of`]).
fn zero(len: usize) -> ToSqlOutput<'static> {
    ToSqlOutput::ZeroBlob(i32::try_from(len).unwrap_or(i32::MAX))
}

/// The length in bytes of `value`'s JSON text, counted without writing it.
fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Column `idx` of `row`, one of the text columns a call's output is kept in:
/// NULL as `None`, TEXT as itself, a BLOB (written in place, see the module)
/// as the text of its UTF-8 bytes.
///
/// # Errors
///
/// SQLite's error, or a value that is neither NULL, text nor a BLOB of UTF-8
/// (`FromSqlConversionFailure`, naming the column; only a damaged ledger has
/// one).
pub(super) fn text(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<String>> {
    match row.get_ref(idx)? {
        ValueRef::Blob(bytes) => String::from_utf8(bytes.to_vec())
            .map(Some)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Blob, e.into())),
        _ => row.get(idx),
    }
}

#[cfg(test)]
#[path = "in_place_tests.rs"]
mod tests;
