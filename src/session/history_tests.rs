//! The history read from a real ledger file.

use super::*;
use crate::protocol::ExecutionImage;
use crate::protocol::record::{Call, CallKind, RecordedFile};
fn call(identifier: &str, client: &str, at_ms: i64, code: &str) -> Box<Call> {
    Box::new(Call {
        client: Some(client.into()),
        ..crate::ledger::tests::call(identifier, at_ms, code)
    })
}

fn png() -> Vec<u8> {
    let mut bytes = Vec::new();
    image::RgbImage::from_pixel(3, 2, image::Rgb([200, 10, 10]))
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    bytes
}

/// A ledger with an agent's and a notebook's calls in `agent-1`, a file
/// call, a call of the same identifier on another pool, and a second session.
fn ledger(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("ledger.sqlite3");
    let conn = ledger::open(&path).unwrap();
    let mut plot = call("agent-1", "langchain/1.0", 1_000, "plot()");
    plot.images = vec![ExecutionImage {
        format: "png".into(),
        data: png(),
    }];
    let mut upload = call("agent-1", "langchain/1.0", 4_000, "");
    upload.kind = CallKind::Upload;
    upload.code = None;
    upload.output = None;
    upload.file = Some(RecordedFile {
        name: "data.csv".into(),
        size: Some(10),
        sha256: None,
    });
    let mut elsewhere = call("agent-1", "langchain/1.0", 6_000, "x = 3");
    elsewhere.pool = "https://pool.example".into();
    ledger::write::insert_all(
        &conn,
        &[
            plot,
            call("agent-1", "sessionpad/0.1.0 (pid 7)", 2_000, "y = 2"),
            call("agent-1", "langchain/1.0", 3_000, "x = 1"),
            upload,
            call("other", "curl/8", 5_000, "1+1"),
            elsewhere,
        ],
    )
    .unwrap();
    path
}

fn request(identifier: &str) -> RecordedRequest {
    RecordedRequest {
        identifier: identifier.into(),
        pool: Some("local".into()),
        language: Language::Python,
        after: None,
        others_only: false,
    }
}

#[test]
fn no_ledger_means_nothing_recorded_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("ledger.sqlite3");
    assert!(list(&missing, 10).unwrap().is_empty());
    let opened = open(&missing, &request("agent-1")).unwrap();
    assert!(opened.cells.is_empty());
    assert_eq!(opened.last_seq, None);
    assert!(!missing.exists(), "reading must not create a ledger");
}

#[test]
fn the_recorded_sessions_are_listed_most_recent_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = ledger(dir.path());
    let listed = list(&path, 10).unwrap();
    let keys: Vec<(&str, &str, u64)> = listed
        .iter()
        .map(|s| (s.pool.as_str(), s.identifier.as_str(), s.cells))
        .collect();
    assert_eq!(
        keys,
        [
            ("https://pool.example", "agent-1", 1),
            ("local", "other", 1),
            ("local", "agent-1", 3)
        ]
    );
    assert_eq!(list(&path, 1).unwrap().len(), 1);
}

#[test]
fn a_session_opens_as_cells_with_their_clients_and_decoded_images() {
    let dir = tempfile::tempdir().unwrap();
    let path = ledger(dir.path());
    let opened = open(&path, &request("agent-1")).unwrap();
    let sources: Vec<&str> = opened.cells.iter().map(|c| c.source.as_str()).collect();
    assert_eq!(sources, ["plot()", "y = 2", "x = 1"]);
    let clients: Vec<Option<&str>> = opened.calls.iter().map(|c| c.0.as_deref()).collect();
    assert_eq!(
        clients,
        [
            Some("langchain/1.0"),
            Some("sessionpad/0.1.0 (pid 7)"),
            Some("langchain/1.0")
        ]
    );
    assert_eq!(opened.file_calls, 1);
    assert_eq!(opened.images.len(), 1);
    let ((cell, _), decoded) = &opened.images[0];
    assert_eq!(*cell, 0);
    let image = decoded.as_ref().unwrap();
    assert_eq!((image.width(), image.height()), (3, 2));
    // The other pool's call of the same identifier is left out; asked for
    // any pool, it comes too.
    let any = open(
        &path,
        &RecordedRequest {
            pool: None,
            ..request("agent-1")
        },
    )
    .unwrap();
    assert_eq!(any.cells.len(), 4);
}

#[test]
fn catching_up_reads_only_the_agents_calls_after_a_seq() {
    let dir = tempfile::tempdir().unwrap();
    let path = ledger(dir.path());
    let all = open(
        &path,
        &RecordedRequest {
            others_only: true,
            ..request("agent-1")
        },
    )
    .unwrap();
    let sources: Vec<&str> = all.cells.iter().map(|c| c.source.as_str()).collect();
    assert_eq!(
        sources,
        ["plot()", "x = 1"],
        "sessionpad's own cell is left out"
    );
    let first_seq = all.calls[0].1;
    let later = open(
        &path,
        &RecordedRequest {
            others_only: true,
            after: Some(first_seq),
            ..request("agent-1")
        },
    )
    .unwrap();
    let sources: Vec<&str> = later.cells.iter().map(|c| c.source.as_str()).collect();
    assert_eq!(sources, ["x = 1"]);
    assert!(
        later.last_seq.unwrap() > all.calls[1].1,
        "the upload counts"
    );
}

#[test]
fn a_file_that_is_not_a_ledger_is_a_clear_local_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    std::fs::write(&path, b"not a database at all, not even close").unwrap();
    let e = list(&path, 10).unwrap_err();
    assert_eq!(e.kind, FailureKind::Local);
    assert!(e.message.contains("ledger.sqlite3"), "{}", e.message);
}

/// A ledger where a notebook's cell `print('done')` (session `nb-1`) ran
/// once long before, once by an agent, then once more by the notebook, which
/// was gone before it ended.
fn quit_ledger(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("ledger.sqlite3");
    let conn = ledger::open(&path).unwrap();
    let own = "sessionpad/0.1.0 (pid 7)";
    let mut gone = call("nb-1", own, 21_000, "print('done')");
    gone.client_gone = true;
    ledger::write::insert_all(
        &conn,
        &[
            call("nb-1", own, 10_000, "print('done')"),
            call("nb-1", "langchain/1.0", 20_000, "print('done')"),
            gone,
            call("nb-1", own, 22_000, "other()"),
        ],
    )
    .unwrap();
    path
}

fn lookup(
    execution_id: Option<&str>,
    started_ms: Option<i64>,
    quit_ms: Option<i64>,
) -> RecordLookup {
    use chrono::TimeZone;
    let at = |ms: i64| chrono::Utc.timestamp_millis_opt(ms).single().unwrap();
    RecordLookup {
        cell: 3,
        code: "print('done')".into(),
        identifier: "nb-1".into(),
        pool: Some("local".into()),
        execution_id: execution_id.map(str::to_string),
        started_at: started_ms.map(at),
        quit_at: quit_ms.map(at),
        language: Language::Python,
    }
}

/// The record of a cell the notebook was quit while it ran is found by its
/// execution id; without one, as the last of the notebook's own calls with
/// its code between the time it began (as the notebook saw it, which may be
/// late) and the quit (an agent's same code, and the notebook's earlier run,
/// are not it); with neither id nor time, or nothing in the window, there
/// is none.
#[test]
fn a_cell_left_running_finds_its_own_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = quit_ledger(dir.path());
    let by_id = find_record(
        &path,
        &lookup(Some("exec-21000"), Some(20_500), Some(23_000)),
    )
    .unwrap()
    .expect("found by id");
    assert!(by_id.client_gone);
    assert_eq!(by_id.cell.source, "print('done')");
    assert_eq!(
        by_id.cell.outcome,
        Some(crate::notebook::CellOutcome::Succeeded)
    );

    // Seen to begin a little after the pool got it, quit after.
    let by_code = find_record(&path, &lookup(None, Some(21_700), Some(23_000)))
        .unwrap()
        .expect("found by code and time");
    assert_eq!(by_code.seq, by_id.seq);
    // Seen to begin much later than it did (a busy UI): still the last
    // before the quit, never the earlier run.
    let late = find_record(&path, &lookup(None, Some(9_000), Some(23_000)))
        .unwrap()
        .expect("the last before the quit");
    assert_eq!(late.seq, by_id.seq);
    // Quit before the notebook's second run arrived: the earlier one.
    let earlier = find_record(&path, &lookup(None, Some(9_000), Some(15_000)))
        .unwrap()
        .expect("the earlier run");
    assert!(earlier.seq < by_id.seq);
    assert!(!earlier.client_gone);

    assert!(
        find_record(&path, &lookup(None, None, None))
            .unwrap()
            .is_none()
    );
    assert!(
        find_record(&path, &lookup(None, Some(40_000), Some(41_000)))
            .unwrap()
            .is_none()
    );
    assert!(
        find_record(&path, &lookup(Some("exec-99"), Some(20_500), None))
            .unwrap()
            .is_none()
    );
    let missing = dir.path().join("none.sqlite3");
    assert!(
        find_record(&missing, &lookup(Some("exec-21000"), None, None))
            .unwrap()
            .is_none()
    );
    assert!(!missing.exists(), "looking must not create a ledger");
}
