//! The pool's event stream (issues 13 and 14) end to end: the route is behind
//! the pool's bearer token; a running cell's output reaches a subscriber before
//! the cell ends while the REST reply stays whole; each recorded call is
//! pushed with its ledger `seq` and no token; `sessionpad log --follow` prints
//! the recorded history, then each new call as it is recorded.

#![allow(clippy::unwrap_used)] // a panic is the test's failure, with its location

mod common;

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use sessionpad::ledger::{self, LedgerOptions};
use sessionpad::protocol::ApiVersion;
use sessionpad::protocol::events::{PoolEvent, StreamName};

const V: &str = "2025-10-02-preview";
/// How long any one event may take on a loaded machine (a deadline against
/// hanging, not a measure).
const PATIENCE: Duration = Duration::from_secs(120);

async fn recording_pool(data: &std::path::Path) -> common::TestPool {
    let path = data.join(ledger::FILE_NAME);
    common::TestPool::start_with(|o| {
        o.ready_sessions = 1;
        o.ledger = Some(LedgerOptions {
            path,
            limits: ledger::LedgerConfig::default().limits(),
            files: true,
        });
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_needs_the_pool_s_token() {
    let data = tempfile::tempdir().unwrap();
    let pool = recording_pool(data.path()).await;
    let raw = common::Raw::new(&pool);
    let url = format!("{}/.sessionpad/events", raw.endpoint);
    let none = raw.http.get(&url).send().await.unwrap();
    assert_eq!(none.status(), 401);
    assert!(none.headers().get("x-ms-error-code").is_some());
    let body: Value = none.json().await.unwrap();
    assert!(body["error"]["message"].is_string(), "{body}");
    let get = |path: &str, token: &str| {
        raw.http
            .get(format!("{}{path}", raw.endpoint))
            .bearer_auth(token)
            .send()
    };
    assert_eq!(
        get("/.sessionpad/events", "not-the-token")
            .await
            .unwrap()
            .status(),
        401
    );
    // A bad identifier is refused as the API's routes refuse it.
    let bad = get("/.sessionpad/events?identifier=a", &raw.token)
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let ok = get("/.sessionpad/events", &raw.token).await.unwrap();
    assert_eq!(ok.status(), 200);
    assert!(
        ok.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    // The client says why it is refused.
    let mut client = pool.client(ApiVersion::V2025_10_02);
    client = client.with_auth(
        sessionpad::client::auth::TokenSource::new(
            &sessionpad::client::auth::AuthConfig::StaticToken("wrong".into()),
        )
        .unwrap(),
    );
    let refused = client.events(None).await.err().unwrap();
    assert!(refused.to_string().contains("401"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_cell_s_output_arrives_before_it_ends_and_the_reply_stays_whole() {
    let data = tempfile::tempdir().unwrap();
    let pool = recording_pool(data.path()).await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = common::identifier();
    let mut events = Box::pin(client.events(Some(&id)).await.unwrap());
    // The cell prints, then waits until the test lets it go: the order is
    // certain without any timing.
    let code = "import os, time\nprint('first line', flush=True)\n\
                while not os.path.exists('/mnt/data/go'):\n    time.sleep(0.02)\n\
                print('second line')";
    let running = tokio::spawn({
        let (client, id) = (client.clone(), id.clone());
        async move { client.execute(&id, code, common::LIMIT).await }
    });
    let first = tokio::time::timeout(PATIENCE, events.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let PoolEvent::Output(first) = first else {
        panic!("expected the running output first, got {first:?}");
    };
    assert_eq!(first.identifier, id);
    assert_eq!(first.stream, StreamName::Stdout);
    assert_eq!(first.text, "first line\n");
    assert!(
        first.client.as_deref().unwrap().starts_with("sessionpad/"),
        "{first:?}"
    );
    assert!(!running.is_finished(), "the cell is still running");
    // Let it go.
    let go = data.path().join("go");
    std::fs::write(&go, b"").unwrap();
    client
        .upload_file(&id, &go, "go", None, &|_, _| {})
        .await
        .unwrap();
    let exec = running.await.unwrap().unwrap();
    // The REST reply is the service's: everything, as if nothing streamed.
    assert_eq!(exec.stdout, "first line\nsecond line\n");
    let mut seen_second = false;
    let call = tokio::time::timeout(PATIENCE, async {
        loop {
            match events.next().await.unwrap().unwrap() {
                PoolEvent::Output(chunk) => {
                    assert_eq!(chunk.text, "second line\n");
                    seen_second = true;
                }
                PoolEvent::Call(call) if call.entry.code.as_deref() == Some(code) => break call,
                // The upload that let the cell go.
                PoolEvent::Call(_) => {}
                PoolEvent::Lagged(l) => panic!("lagged {l:?}"),
            }
        }
    })
    .await
    .unwrap();
    assert!(seen_second, "the second line streamed too");
    assert!(call.entry.seq > 0);
    assert_eq!(
        call.entry.stdout.as_deref(),
        Some("first line\nsecond line\n")
    );
    // What was pushed is what the ledger holds.
    pool.pool.ledger().unwrap().flush();
    let conn = ledger::schema::open_existing(&data.path().join(ledger::FILE_NAME))
        .unwrap()
        .unwrap();
    let stored = ledger::read::entries(
        &conn,
        &ledger::Query {
            identifier: Some(id.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let same = stored.iter().find(|e| e.seq == call.entry.seq).unwrap();
    assert_eq!(*same, call.entry);
}

/// With `others=true` a subscriber gets no `call` event of its own calls
/// (those made with its `User-Agent`: the notebook has their answers, and a
/// call's output can be megabytes), and still every other client's, and its
/// own running output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_can_leave_out_its_own_calls() {
    let data = tempfile::tempdir().unwrap();
    let pool = recording_pool(data.path()).await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = common::identifier();
    let mut others = Box::pin(client.events_with(Some(&id), true).await.unwrap());
    let mut all = Box::pin(client.events(Some(&id)).await.unwrap());
    let mine = client
        .execute(&id, "print('mine')", common::LIMIT)
        .await
        .unwrap();
    assert_eq!(mine.stdout, "mine\n");
    let raw = common::Raw::new(&pool);
    let theirs = raw
        .req(
            reqwest::Method::POST,
            &format!("/executions?api-version={V}&identifier={id}"),
        )
        .header(reqwest::header::USER_AGENT, "another-agent/1.0")
        .json(&json!({"codeInputType": "inline", "executionType": "synchronous", "code": "print('theirs')"}))
        .send()
        .await
        .unwrap();
    assert!(theirs.status().is_success(), "{}", theirs.status());
    // Every call, in order, to whoever asks for all of them.
    let mut codes = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        while codes.len() < 2 {
            if let PoolEvent::Call(call) = all.next().await.unwrap().unwrap() {
                codes.push(call.entry.code.clone().unwrap_or_default());
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(codes, ["print('mine')", "print('theirs')"]);
    // The other client's call only, with the own call's running output first.
    let mut own_output = false;
    let first_call = tokio::time::timeout(PATIENCE, async {
        loop {
            match others.next().await.unwrap().unwrap() {
                PoolEvent::Output(chunk) if chunk.text == "mine\n" => own_output = true,
                PoolEvent::Call(call) => break call,
                _ => {}
            }
        }
    })
    .await
    .unwrap();
    assert!(own_output, "its own running output still comes");
    assert_eq!(first_call.entry.code.as_deref(), Some("print('theirs')"));
    assert_eq!(
        first_call.entry.client.as_deref(),
        Some("another-agent/1.0")
    );
}

/// `sessionpad log ARGS` over `data_dir`'s ledger, its stdout piped.
fn log_command(data_dir: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = common::sessionpad_command(data_dir);
    cmd.arg("log")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_follow_prints_the_history_then_each_call_as_it_is_recorded() {
    const TOKEN: &str = "follow-test-secret-token-77aa";
    let data = tempfile::tempdir().unwrap();
    let (server, endpoint) = common::serve(data.path(), TOKEN);
    let _server = common::Served(server);
    let http = reqwest::Client::builder()
        .user_agent("follow-test-agent/1.0")
        .build()
        .unwrap();
    let id = common::identifier();
    let run = |code: &'static str| {
        let (http, endpoint, id) = (http.clone(), endpoint.clone(), id.clone());
        async move {
            let resp = http
                .post(format!(
                    "{endpoint}/executions?api-version={V}&identifier={id}"
                ))
                .bearer_auth(TOKEN)
                .json(&json!({"code": code, "codeInputType": "Inline", "executionType": "Synchronous"}))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
        }
    };
    run("x = 1").await;
    // The serve is found through its discovery file in the data directory.
    let mut follower = log_command(data.path(), &["--follow", "--json", &id])
        .spawn()
        .unwrap();
    let stdout = follower.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let next = |what: &str| -> Value {
        let line = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|e| panic!("no line for {what}: {e}"));
        serde_json::from_str(&line).unwrap()
    };
    let first = next("the recorded cell");
    assert_eq!(first["code"], "x = 1");
    assert_eq!(first["client"], "follow-test-agent/1.0");
    // Both of these are recorded after the follower started (it may have
    // subscribed before or after the first: it prints each once, in order).
    run("print(x + 1)").await;
    run("x = 3").await;
    let second = next("the second cell");
    assert_eq!(second["code"], "print(x + 1)");
    assert_eq!(second["stdout"], "2\n");
    let third = next("the third cell");
    assert_eq!(third["code"], "x = 3");
    assert!(third["seq"].as_i64() > second["seq"].as_i64());
    // What it printed live is what `log --json` prints afterwards.
    let out = log_command(data.path(), &["--json", &id]).output().unwrap();
    let all: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(all, vec![first, second, third]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains(TOKEN));
    let _ = follower.kill();
    let _ = follower.wait();
}

#[test]
fn log_follow_without_a_running_pool_says_so() {
    let data = tempfile::tempdir().unwrap();
    let out = log_command(data.path(), &["--follow", "some-session"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no local pool is running"), "{err}");
}
