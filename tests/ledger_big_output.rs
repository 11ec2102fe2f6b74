//! Big outputs in the flight recorder's ledger (issue 14): a cell printing
//! megabytes is recorded whole, `sessionpad log --json` gives back exactly
//! what the REST reply carried, and SQLite writes it without a copy of its
//! own (`src/ledger/in_place.rs`).
//!
//! A test binary of its own: the second test reads SQLite's process-wide
//! memory high-water mark, which only the first test's small SQLite work
//! may move (its pool's writer holds no copy either).

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use serde_json::json;
use sessionpad::ledger;
use sessionpad::protocol::ContainerType;
use sessionpad::protocol::record::{Call, CallKind, RecordedOutput};
const V: &str = "2025-10-02-preview";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_output_is_recorded_whole_and_log_gives_it_back() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join(ledger::FILE_NAME);
    let pool = common::TestPool::recording(data.path(), ContainerType::PythonLts).await;
    let id = common::identifier();
    let code = "import sys\nfor i in range(300000): print(i, 'é')\n\
                print('warn ⚠', file=sys.stderr)\n{'n': 300000, 'last': 'é' * 3}";
    let (status, _, reply) = common::Raw::new(&pool)
        .post_json(
            &format!("/executions?api-version={V}&identifier={id}"),
            json!({"codeInputType": "inline", "executionType": "synchronous", "code": code}),
        )
        .await;
    assert_eq!(status, 200);
    let result = &reply["result"];
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.len() > 2_000_000, "{}", stdout.len());
    assert!(
        stdout.ends_with("299999 é\n"),
        "{}",
        &stdout[stdout.len() - 40..]
    );
    assert_eq!(result["stderr"], "warn ⚠\n");
    pool.pool.ledger().unwrap().flush();

    let calls = common::log_json(data.path(), &[&id]);
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert!(
        c["stdout"].as_str() == Some(stdout),
        "the recorded stdout differs"
    );
    assert_eq!(c["stderr"], result["stderr"]);
    assert_eq!(c["result"]["json"], json!({"n": 300_000, "last": "ééé"}));
    // It went the in-place way: stored as a BLOB of its UTF-8.
    let conn = ledger::open(&path).unwrap();
    let kind: String = conn
        .query_row("SELECT typeof(stdout) FROM calls", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kind, "blob");
}

/// SQLite's memory in use and its high-water mark since the last reset, in
/// bytes; `reset` starts the mark again from what is in use.
fn sqlite_memory(reset: bool) -> (i64, i64) {
    let (mut used, mut high) = (0_i64, 0_i64);
    // SAFETY: sqlite3_status64 only writes the two integers it is given.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_status64(
            rusqlite::ffi::SQLITE_STATUS_MEMORY_USED,
            &raw mut used,
            &raw mut high,
            i32::from(reset),
        )
    };
    assert_eq!(rc, rusqlite::ffi::SQLITE_OK);
    (used, high)
}

#[test]
fn the_ledger_writer_holds_no_copy_of_a_big_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(ledger::FILE_NAME);
    let limits = ledger::LedgerConfig::default().limits();
    let recorder = ledger::Recorder::start(&path, limits).unwrap();
    // The writer has opened the ledger and pruned it.
    recorder.flush();
    // The 1,000,000-line cell's stdout (6,888,890 bytes).
    let stdout: String = (0..1_000_000).map(|i| format!("{i}\n")).collect();
    let mut call = Call::new(
        "local".into(),
        "big-output".into(),
        Some("big-output-test/1.0".into()),
        chrono::Utc::now(),
        Duration::from_millis(1200),
        CallKind::Code,
    );
    call.code = Some("for i in range(1000000): print(i)".into());
    call.output = Some(RecordedOutput {
        status: "Succeeded".into(),
        exit_code: None,
        stdout: stdout.as_str().into(),
        stderr: String::new().into(),
        result: None,
    });
    let (before, _) = sqlite_memory(true);
    recorder.record(call);
    recorder.flush();
    let (_, high) = sqlite_memory(false);
    let grew = usize::try_from(high - before).unwrap();
    // Bound as text SQLite held two copies (the bound value and the row's
    // record): 13.8 MB, and its default page cache kept 1.9 MB of the pages
    // it went through. Written in place, through the writer's small cache
    // (0.3 MB measured), with room for another test's small SQLite work:
    let most = usize::try_from(ledger::write::WRITER_CACHE_KIB).unwrap() * 1024 + (1 << 20);
    assert!(
        grew < most,
        "SQLite's memory grew by {grew} bytes while writing {} bytes (at most {most} expected)",
        stdout.len()
    );
    let conn = ledger::open(&path).unwrap();
    let entries = ledger::read::entries(&conn, &ledger::Query::default()).unwrap();
    assert!(entries[0].stdout.as_deref() == Some(stdout.as_str()));
}
