//! The local pool with the service's limits (`serve --azure-limits`, issue 28),
//! through real HTTP and real sandboxed sessions: a Shell pool cuts each of
//! stdout and stderr at 4,096 bytes and still answers status `"0"`; a new
//! session beyond the maximum gets the service's 429 and its error body; an
//! upload over 128 MB gets 413 `FileTooLarge`; executions end at the
//! configured limit with the service's timeout text; `GET metadata` lists
//! every emulated limit with its source. Off by default.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::Duration;

use common::{Raw, TestPool, identifier};
use serde_json::{Value, json};
use sessionpad::protocol::ContainerType;
use sessionpad::protocol::service_limits::METADATA_FIELD;

const B10: &str = "2025-10-02-preview";
const B02: &str = "2025-02-02-preview";

async fn pool(container_type: ContainerType, azure: bool) -> TestPool {
    TestPool::start_with(|o| {
        o.container_type = container_type;
        o.ready_sessions = 1;
        if azure {
            *o = o.clone().with_azure_limits();
        }
    })
    .await
}

/// 10 KB on stdout and 6 KB on stderr.
const TEN_KB: &str =
    "head -c 10240 /dev/zero | tr '\\0' x; head -c 6000 /dev/zero | tr '\\0' y >&2";

#[tokio::test]
async fn a_shell_pool_cuts_each_stream_at_4096_bytes_and_still_answers_0() {
    let pool = pool(ContainerType::Shell, true).await;
    let raw = Raw::new(&pool);
    let (status, _, body) = raw
        .post_json(
            &format!("/executions?api-version={B02}&identifier={}", identifier()),
            json!({ "shellCommand": TEN_KB }),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["status"], "0", "{body}");
    let stdout = body["result"]["stdout"].as_str().unwrap();
    let stderr = body["result"]["stderr"].as_str().unwrap();
    assert_eq!(stdout.len(), 4096);
    assert!(stdout.bytes().all(|b| b == b'x'));
    assert_eq!(stderr.len(), 4096);
    // A multi-byte character is never split: 4,095 bytes of `é` and one `x`.
    let (_, _, body) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={}", identifier()),
            json!({ "shellCommand": "printf x; for i in $(seq 3000); do printf 'é'; done" }),
        )
        .await;
    assert_eq!(body["status"], "0", "{body}");
    assert_eq!(body["result"]["stdout"].as_str().unwrap().len(), 4095);
}

#[tokio::test]
async fn without_the_flag_a_shell_pool_keeps_the_whole_output() {
    let pool = pool(ContainerType::Shell, false).await;
    let raw = Raw::new(&pool);
    let (_, _, body) = raw
        .post_json(
            &format!("/executions?api-version={B02}&identifier={}", identifier()),
            json!({ "shellCommand": TEN_KB }),
        )
        .await;
    assert_eq!(body["result"]["stdout"].as_str().unwrap().len(), 10240);
    let (_, meta) = raw
        .call(
            reqwest::Method::GET,
            &format!("/metadata?api-version={B10}"),
        )
        .await;
    assert!(meta.get(METADATA_FIELD).is_none(), "{meta}");
}

#[tokio::test]
async fn the_metadata_lists_each_limit_with_its_source() {
    let pool = pool(ContainerType::Shell, true).await;
    let raw = Raw::new(&pool);
    let (status, meta) = raw
        .call(
            reqwest::Method::GET,
            &format!("/metadata?api-version={B10}"),
        )
        .await;
    assert_eq!(status, 200, "{meta}");
    let limits = meta[METADATA_FIELD].as_array().unwrap();
    let value = |what: &str| -> &Value {
        limits
            .iter()
            .find(|l| l["what"] == what)
            .unwrap_or_else(|| panic!("no {what} in {meta}"))
    };
    assert!(
        value("Shell stdout/stderr")["value"]
            .as_str()
            .unwrap()
            .contains("4096 bytes")
    );
    assert!(
        value("execution")["value"]
            .as_str()
            .unwrap()
            .contains("220 s")
    );
    assert!(
        value("upload")["value"]
            .as_str()
            .unwrap()
            .contains("128 MiB")
    );
    assert!(
        value("cooldown")["value"]
            .as_str()
            .unwrap()
            .contains("300 s")
    );
    assert!(value("sessions")["value"].as_str().unwrap().contains("429"));
    assert!(
        limits
            .iter()
            .all(|l| !l["source"].as_str().unwrap().is_empty())
    );
    // The client reads them.
    let read = pool
        .client(sessionpad::protocol::ApiVersion::V2025_10_02)
        .pool_metadata()
        .await
        .unwrap();
    assert_eq!(read.service_limits.len(), limits.len());
}

#[tokio::test]
async fn a_new_session_beyond_the_maximum_gets_the_services_429() {
    let pool = TestPool::start_with(|o| {
        *o = o.clone().with_azure_limits();
        o.max_sessions = 1;
        o.ready_sessions = 0;
    })
    .await;
    let raw = Raw::new(&pool);
    let url = || format!("/executions?api-version={B10}&identifier={}", identifier());
    let (first, _, _) = raw.post_json(&url(), json!({"code": "1"})).await;
    assert_eq!(first, 200);
    let (second, headers, body) = raw.post_json(&url(), json!({"code": "1"})).await;
    assert_eq!(second, 429, "{body}");
    assert_eq!(headers["x-ms-error-code"], "SessionPoolFull");
    assert_eq!(body["error"]["code"], "SessionPoolFull", "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains('1'),
        "{body}"
    );
}

#[tokio::test]
async fn an_upload_over_128_mb_gets_the_services_413() {
    let pool = pool(ContainerType::PythonLts, true).await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let size = 129u64 << 20;
    let chunks = (0..129).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![0u8; 1 << 20])));
    let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    let part = reqwest::multipart::Part::stream_with_length(body, size).file_name("big.bin");
    let resp = raw
        .req(
            reqwest::Method::POST,
            &format!("/files?api-version={B10}&identifier={id}"),
        )
        .multipart(reqwest::multipart::Form::new().part("file", part))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 413);
    assert_eq!(resp.headers()["x-ms-error-code"], "FileTooLarge");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "FileTooLarge", "{body}");
}

#[tokio::test]
async fn an_execution_past_the_limit_ends_with_the_services_timeout_answer() {
    // 220 s is too long for a test: the same mechanism with 2 s.
    let pool = TestPool::start_with(|o| {
        *o = o.clone().with_azure_limits();
        o.max_execution = Duration::from_secs(2);
        o.ready_sessions = 1;
    })
    .await;
    let raw = Raw::new(&pool);
    let (_, meta) = raw
        .call(
            reqwest::Method::GET,
            &format!("/metadata?api-version={B10}"),
        )
        .await;
    let execution = meta[METADATA_FIELD]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["what"] == "execution")
        .unwrap()
        .clone();
    assert!(
        execution["value"].as_str().unwrap().contains("ends at 2 s"),
        "{execution}"
    );
    let (status, _, body) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={}", identifier()),
            json!({"code": "import time; time.sleep(30)", "timeoutInSeconds": 100}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "Failed", "{body}");
    assert!(
        body["result"]["stderr"]
            .as_str()
            .unwrap()
            .contains("Request timed out waiting for code execution to complete"),
        "{body}"
    );
}

#[test]
fn the_default_pool_emulates_nothing_and_the_preset_takes_the_services_values() {
    let plain = sessionpad::pool::PoolOptions::embedded();
    assert!(plain.service_limits().is_empty());
    assert_eq!(plain.pool_full_status, 404);
    let azure = plain.with_azure_limits();
    assert_eq!(azure.pool_full_status, 429);
    assert_eq!(azure.max_execution, Duration::from_secs(220));
    assert_eq!(azure.cooldown, Duration::from_secs(300));
    assert_eq!(azure.service_limits().len(), 4);
}

/// `exec` on a Shell pool with the service's limits: the cut output is
/// flagged on stderr (and in `--json`), and `--output-streams-max-length`
/// (2025-10-02-preview) gets it whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_flags_the_cut_and_gets_more_with_output_streams_max_length() {
    let pool = pool(ContainerType::Shell, true).await;
    let data = tempfile::tempdir().unwrap();
    let (endpoint, token) = (pool.pool.endpoint(), pool.pool.token().unwrap().to_string());
    let run = move |extra: &'static [&'static str]| {
        let mut cmd = common::sessionpad_command(data.path());
        cmd.args(["exec", "--endpoint", &endpoint, "--token", &token])
            .args(["--container-type", "shell", "--identifier", "exec-cut"])
            .args(["--api-version", "2025-10-02-preview"])
            .args(extra)
            .args(["-c", "head -c 10240 /dev/zero | tr '\\0' x"]);
        cmd.output().unwrap()
    };
    let (cut, json, whole) = tokio::task::spawn_blocking(move || {
        (
            run(&[]),
            run(&["--json"]),
            run(&["--output-streams-max-length", "20000"]),
        )
    })
    .await
    .unwrap();
    assert!(cut.status.success());
    assert_eq!(cut.stdout.len(), 4096);
    let err = String::from_utf8_lossy(&cut.stderr);
    assert!(
        err.contains("stdout is 4,096 bytes: the service cuts Shell output"),
        "{err}"
    );
    assert!(err.contains("--output-streams-max-length"), "{err}");
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["probably_cut"].as_array().unwrap().len(), 1, "{doc}");
    assert!(whole.status.success());
    assert_eq!(whole.stdout.len(), 10240);
    assert!(!String::from_utf8_lossy(&whole.stderr).contains("probably cut"));
}
