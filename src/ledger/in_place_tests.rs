//! Big outputs written in place and read back as the same text, through a
//! real ledger file; rows written as text (all of them before) read as before.

use chrono::Utc;
use rusqlite::{Connection, params};

use super::IN_PLACE_FROM;
use crate::ledger::tests::call;
use crate::ledger::{Query, Recorder, open, read, retention};
use crate::protocol::record::{Call, RecordedOutput};
const LOOSE: retention::Limits = retention::Limits {
    days: 36500,
    max_bytes: u64::MAX,
    file_content_max: retention::Limits::DEFAULT_FILE_CONTENT_MAX,
    session_content_max: retention::Limits::DEFAULT_SESSION_CONTENT_MAX,
};

/// Lines of numbers and non-ASCII text, `n` of them.
fn lines(n: usize) -> String {
    (0..n).map(|i| format!("{i} é 😀 ligne\n")).collect()
}

/// Records `calls` in a fresh ledger through the writer thread and returns
/// the open ledger (and its folder, kept while it is used).
fn recorded(calls: Vec<Call>) -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    for c in calls {
        rec.record(c);
    }
    rec.flush();
    let conn = open(&path).unwrap();
    (dir, conn)
}

/// SQLite's type of each output column of call `seq`.
fn types(conn: &Connection, seq: i64) -> [String; 3] {
    conn.query_row(
        "SELECT typeof(stdout), typeof(stderr), typeof(result) FROM calls WHERE id = ?1",
        [seq],
        |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]),
    )
    .unwrap()
}

/// A call with these outputs.
fn with_output(stdout: &str, stderr: &str, result: Option<serde_json::Value>) -> Call {
    let mut c = call("big-1", Utc::now().timestamp_millis(), "print(...)");
    c.output = Some(RecordedOutput {
        status: "Succeeded".into(),
        exit_code: None,
        stdout: stdout.into(),
        stderr: stderr.into(),
        result,
    });
    c
}

#[test]
fn a_big_output_is_written_in_place_and_reads_back_the_same() {
    let stdout = lines(60_000);
    let stderr = format!("warn ⚠\n{}", "x".repeat(100));
    let value = serde_json::json!({"text": lines(5_000), "json": [1, "deux", {"drei": 3.5}]});
    let small_result = serde_json::json!({"text": "42", "json": 42});
    let (_dir, conn) = recorded(vec![
        with_output(&stdout, &stderr, Some(value.clone())),
        // A big stdout with an empty stderr and no value.
        with_output(&stdout, "", None),
        // Only the value is big.
        with_output("", "", Some(value.clone())),
        // Small outputs stay text.
        with_output("hi\n", "", Some(small_result.clone())),
    ]);
    let entries = read::entries(&conn, &Query::default()).unwrap();
    assert_eq!(entries.len(), 4);

    let e = &entries[0];
    assert_eq!(types(&conn, e.seq), ["blob", "blob", "blob"]);
    assert!(
        e.stdout.as_deref() == Some(stdout.as_str()),
        "stdout differs"
    );
    assert_eq!(e.stderr.as_deref(), Some(stderr.as_str()));
    assert_eq!(e.result.as_ref(), Some(&value));

    let e = &entries[1];
    assert_eq!(types(&conn, e.seq), ["blob", "text", "null"]);
    assert!(
        e.stdout.as_deref() == Some(stdout.as_str()),
        "stdout differs"
    );
    assert_eq!(e.stderr.as_deref(), Some(""), "an empty stream stays empty");
    assert_eq!(e.result, None);

    let e = &entries[2];
    assert_eq!(types(&conn, e.seq), ["text", "text", "blob"]);
    assert_eq!(
        (e.stdout.as_deref(), e.stderr.as_deref()),
        (Some(""), Some(""))
    );
    assert_eq!(e.result.as_ref(), Some(&value));

    let e = &entries[3];
    assert_eq!(types(&conn, e.seq), ["text", "text", "text"]);
    assert_eq!(e.stdout.as_deref(), Some("hi\n"));
    assert_eq!(e.result.as_ref(), Some(&small_result));
}

#[test]
fn the_threshold_is_the_outputs_total() {
    let half = "y".repeat(IN_PLACE_FROM / 2);
    let (_dir, conn) = recorded(vec![
        with_output(&half[1..], &half, None),
        with_output(&half, &half, None),
    ]);
    let entries = read::entries(&conn, &Query::default()).unwrap();
    assert_eq!(types(&conn, entries[0].seq), ["text", "text", "null"]);
    assert_eq!(types(&conn, entries[1].seq), ["blob", "blob", "null"]);
    for e in &entries {
        assert!(e.stderr.as_deref() == Some(half.as_str()));
    }
    assert!(entries[1].stdout.as_deref() == Some(half.as_str()));
}

#[test]
fn big_rows_written_as_text_before_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let conn = open(&dir.path().join("ledger.sqlite3")).unwrap();
    let stdout = lines(20_000);
    // The row as every sessionpad before this one wrote it: text bound as is.
    conn.execute(
        "INSERT INTO calls (at_ms, duration_us, pool, identifier, kind, stdout, stderr, result)
         VALUES (1, 2, 'local', 'old-1', 'code', ?1, '', ?2)",
        params![stdout, r#"{"text":"1","json":1}"#],
    )
    .unwrap();
    let entries = read::entries(&conn, &Query::default()).unwrap();
    assert_eq!(types(&conn, entries[0].seq), ["text", "text", "text"]);
    assert!(entries[0].stdout.as_deref() == Some(stdout.as_str()));
    assert_eq!(entries[0].stderr.as_deref(), Some(""));
    assert_eq!(
        entries[0].result,
        Some(serde_json::json!({"text": "1", "json": 1}))
    );
}

#[test]
fn a_blob_that_is_not_utf8_is_an_error_naming_the_column() {
    let (_dir, conn) = recorded(vec![with_output(&lines(10_000), "", None)]);
    conn.execute("UPDATE calls SET stdout = x'41ff42'", [])
        .unwrap();
    let err = read::entries(&conn, &Query::default()).unwrap_err();
    assert!(
        matches!(
            err,
            rusqlite::Error::FromSqlConversionFailure(12, rusqlite::types::Type::Blob, _)
        ),
        "{err:?}"
    );
}
