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
