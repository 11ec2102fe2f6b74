//! The notebook's and the command line's own calls in the flight recorder's
//! ledger (issue 13, `client::recording`): a real session client drives a real
//! local pool over HTTP with its own recording turned on, and the ledger holds
//! each execution and file call it made, with the outputs, the bytes' SHA-256
//! and sessionpad's own User-Agent (or the one it was given to send, as
//! `sessionpad mcp` names the MCP host); a client of an `http` endpoint (a
//! sessionpad pool, which records itself) records nothing by default. One test
//! per binary: the ledger a process records into is set once.

#![allow(clippy::unwrap_used)]

mod common;

use common::{LIMIT, TestPool, identifier};
use sessionpad::client::recording;
use sessionpad::ledger::{self, LedgerConfig, LedgerOptions, Query};
use sessionpad::protocol::ApiVersion;
use sessionpad::protocol::record::CallKind;
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_own_calls_are_recorded_with_outputs_hashes_and_its_user_agent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(ledger::FILE_NAME);
    sessionpad::cli::target::record_own_calls(Some(LedgerOptions {
        path: path.clone(),
        limits: LedgerConfig::default().limits(),
        files: true,
    }));
    let pool = TestPool::start().await;
    let id = identifier();

    // Not recorded: an http endpoint is left to record itself.
    let plain = pool.client(ApiVersion::V2025_10_02);
    plain.execute(&id, "x = 1", LIMIT).await.unwrap();

    let c = plain.recording_own_calls(true);
    let e = c.execute(&id, "print('hi'); x + 41", LIMIT).await.unwrap();
    assert_eq!(e.stdout, "hi\n");
    let local = dir.path().join("up.txt");
    std::fs::write(&local, b"abc").unwrap();
    c.upload_file(&id, &local, "up.txt", None, &|_, _| {})
        .await
        .unwrap();
    let mut back = Vec::new();
    c.download_file(&id, "up.txt", &mut back, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(back, b"abc");
    c.delete_file(&id, "up.txt").await.unwrap();
    recording::flush();

    let conn = ledger::open(&path).unwrap();
    let entries = ledger::read::entries(
        &conn,
        &Query {
            identifier: Some(id.clone()),
            ..Query::default()
        },
    )
    .unwrap();
    let kinds: Vec<CallKind> = entries.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            CallKind::Code,
            CallKind::Upload,
            CallKind::Download,
            CallKind::Delete
        ],
        "{entries:#?}"
    );
    for e in &entries {
        assert_eq!(e.client.as_deref(), Some(sessionpad::client::user_agent()));
        assert_eq!(e.pool, c.endpoint().trim_end_matches('/'));
    }
    let code = &entries[0];
    assert_eq!(code.code.as_deref(), Some("print('hi'); x + 41"));
    assert_eq!(code.stdout.as_deref(), Some("hi\n"));
    assert_eq!(code.status.as_deref(), Some("Succeeded"));
    assert_eq!(code.result.as_ref().unwrap()["text"], "42");
    let abc = sessionpad::protocol::record::sha256_hex(b"abc");
    for e in &entries[1..3] {
        let file = e.file.as_ref().unwrap();
        assert_eq!(
            (file.name.as_str(), file.size, file.sha256.as_deref()),
            ("up.txt", Some(3), Some(abc.as_str())),
            "{e:#?}"
        );
    }
    let deleted = entries[3].file.as_ref().unwrap();
    assert_eq!((deleted.name.as_str(), deleted.size), ("up.txt", None));

    // A client sending another User-Agent (`sessionpad mcp` names the MCP
    // host) records its calls under it, whichever is set first.
    let named = "acme-agent/0.3 via MCP";
    let other = identifier();
    let agent = reqwest::header::HeaderValue::from_static("acme-agent/0.3 via MCP");
    let first = pool
        .client(ApiVersion::V2025_10_02)
        .recording_own_calls(true)
        .with_user_agent(agent.clone());
    first.execute(&other, "1", LIMIT).await.unwrap();
    let then = pool
        .client(ApiVersion::V2025_10_02)
        .with_user_agent(agent)
        .recording_own_calls(true);
    then.execute(&other, "2", LIMIT).await.unwrap();
    recording::flush();
    let entries = ledger::read::entries(
        &conn,
        &Query {
            identifier: Some(other),
            ..Query::default()
        },
    )
    .unwrap();
    let clients: Vec<Option<&str>> = entries.iter().map(|e| e.client.as_deref()).collect();
    assert_eq!(clients, [Some(named), Some(named)], "{entries:#?}");
}
