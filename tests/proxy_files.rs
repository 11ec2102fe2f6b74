//! Issue 26 through the recording proxy (`serve --upstream`): the files an
//! agent's executions change in an upstream session's `/mnt/data` are
//! recorded by the proxy (it lists the session after each execution and
//! fetches the changed files within the per-file budget), so they outlive the
//! session on the service too. The upstream is a second `sessionpad serve`
//! standing in for Azure, reached only through its HTTP API, as Azure is.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/proxy.rs"]
mod proxy_support;

use std::time::Duration;

use serde_json::{Value, json};

use common::log_json;
use proxy_support::{PROXY_TOKEN, UPSTREAM_TOKEN, proxied, proxy_with, upstream};

const AGENT: &str = "acme-research-agent/0.3";
const B: &str = "2025-10-02-preview";

/// Runs `code` synchronously in session `id` through the proxy at
/// `endpoint` with `http`, in family B (`version` 2024-10-02 or later) or
/// family A (`code/execute`, earlier versions): the answer's JSON.
async fn run(
    http: &reqwest::Client,
    endpoint: &str,
    version: &str,
    id: &str,
    code: &str,
) -> reqwest::Result<Value> {
    let family_a = version < "2024-10-02";
    let (path, body) = if family_a {
        (
            "code/execute",
            json!({"properties": {"codeInputType": "inline", "executionType": "synchronous", "code": code}}),
        )
    } else {
        (
            "executions",
            json!({"codeInputType": "inline", "executionType": "synchronous", "code": code}),
        )
    };
    http.post(format!(
        "{endpoint}/{path}?api-version={version}&identifier={id}"
    ))
    .bearer_auth(PROXY_TOKEN)
    .json(&body)
    .send()
    .await?
    .json()
    .await
}

/// The `(path, change, size, sha256)` of each file of a recorded call.
fn files(call: &Value) -> Vec<(String, String, u64, Option<String>)> {
    call["files"]
        .as_array()
        .map(|files| {
            files
                .iter()
                .map(|f| {
                    (
                        f["path"].as_str().unwrap().to_string(),
                        f["change"].as_str().unwrap().to_string(),
                        f["size"].as_u64().unwrap(),
                        f["sha256"].as_str().map(str::to_string),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn sha(text: &str) -> String {
    sessionpad::protocol::record::sha256_hex(text.as_bytes())
}

/// Waits until the upstream at `up` no longer has session `id` (its cooldown
/// ended it); whether it did within about 40 s.
async fn ended_upstream(up: &str, id: &str) -> bool {
    let http = common::http_as(AGENT);
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_secs(4)).await;
        let status = http
            .get(format!("{up}/session?api-version={B}&identifier={id}"))
            .bearer_auth(UPSTREAM_TOKEN)
            .send()
            .await
            .unwrap()
            .status();
        if status == 400 {
            return true;
        }
    }
    false
}

/// Issue 26's check, through the proxy: an agent uploads `notes.csv`; one
/// cell writes `report.csv` and `out/logs/run.log`; one writes `late.txt`,
/// appends to `notes.csv` and the log and sleeps past the agent's 1 s
/// timeout; one (family A, sent at once) removes `report.csv`. After the
/// upstream's cooldown has ended the session, the proxy's `log --json` holds
/// each execution with the files it changed (the third's delete not mixed
/// into the second, which still ran when it was sent; the uploaded file not
/// reported as added by code), under the upstream's endpoint as pool, and
/// `export --recorded ID --files DIR` writes what the session left, byte for
/// byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_an_agent_left_upstream_is_recorded_by_the_proxy_and_outlives_the_session() {
    let (_up_data, proxy_data, (up, up_endpoint), (px, endpoint)) = proxied(&["--cooldown", "3"]);
    let id = common::identifier();
    let patient = common::http_as(AGENT);
    let notes = "name,value\na,1\n";
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(notes.as_bytes().to_vec()).file_name("notes.csv"),
    );
    let r = patient
        .post(format!("{endpoint}/files?api-version={B}&identifier={id}"))
        .bearer_auth(PROXY_TOKEN)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{r:?}");
    let report = "region,total\nnorth,3\nsouth,5\n";
    let first = format!(
        "import os\nos.makedirs('/mnt/data/out/logs', exist_ok=True)\nopen('/mnt/data/report.csv', 'w').write({report:?})\nopen('/mnt/data/out/logs/run.log', 'w').write('run started\\n')\nprint('wrote')"
    );
    let answer = run(&patient, &endpoint, B, &id, &first).await.unwrap();
    assert_eq!(answer["status"], "Succeeded", "{answer}");
    let second = "import time\nopen('/mnt/data/late.txt', 'w').write('written late')\nopen('/mnt/data/notes.csv', 'a').write('b,2\\n')\nopen('/mnt/data/out/logs/run.log', 'a').write('late cell\\n')\ntime.sleep(3)";
    let impatient = reqwest::Client::builder()
        .user_agent(AGENT)
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let gave_up = run(&impatient, &endpoint, B, &id, second).await;
    assert!(
        gave_up.as_ref().is_err_and(reqwest::Error::is_timeout),
        "{gave_up:?}"
    );
    let third = "import os\nos.remove('/mnt/data/report.csv')\n'removed'";
    let answer = run(&patient, &endpoint, "2024-08-02-preview", &id, third)
        .await
        .unwrap();
    assert_eq!(answer["properties"]["status"], "Success", "{answer}");
    assert!(
        ended_upstream(&up_endpoint, &id).await,
        "the cooldown did not end the upstream session"
    );
    px.terminate();
    up.terminate();

    let calls = log_json(proxy_data.path(), &[&id]);
    let kinds: Vec<&str> = calls.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["upload", "code", "code", "code"], "{calls:#?}");
    for call in &calls {
        assert_eq!(call["pool"], up_endpoint.as_str(), "{call}");
    }
    let log_after = "run started\nlate cell\n";
    let notes_after = "name,value\na,1\nb,2\n";
    assert_eq!(
        files(&calls[1]),
        vec![
            (
                "/mnt/data/out/logs/run.log".into(),
                "added".into(),
                12,
                Some(sha("run started\n"))
            ),
            (
                "/mnt/data/report.csv".into(),
                "added".into(),
                report.len() as u64,
                Some(sha(report))
            ),
        ],
        "{}",
        calls[1]
    );
    assert_eq!(calls[2]["client_gone"], true, "{}", calls[2]);
    assert_eq!(
        files(&calls[2]),
        vec![
            (
                "/mnt/data/late.txt".into(),
                "added".into(),
                12,
                Some(sha("written late"))
            ),
            (
                "/mnt/data/notes.csv".into(),
                "modified".into(),
                notes_after.len() as u64,
                Some(sha(notes_after))
            ),
            (
                "/mnt/data/out/logs/run.log".into(),
                "modified".into(),
                log_after.len() as u64,
                Some(sha(log_after))
            ),
        ],
        "{}",
        calls[2]
    );
    assert_eq!(
        files(&calls[3]),
        vec![("/mnt/data/report.csv".into(), "deleted".into(), 0, None)],
        "{}",
        calls[3]
    );
    for call in &calls[1..] {
        assert!(call.get("files_note").is_none(), "{call}");
    }
    let text = common::sessionpad_ok(proxy_data.path(), &["log", &id]);
    assert!(text.contains("added    /mnt/data/late.txt"), "{text}");
    assert!(text.contains("deleted  /mnt/data/report.csv"), "{text}");

    // What the session left, from the proxy's ledger alone.
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("left");
    let export = common::sessionpad_command(proxy_data.path())
        .args(["export", "--recorded", &id, "--files"])
        .arg(&dest)
        .output()
        .unwrap();
    assert!(export.status.success(), "{export:?}");
    let read = |name: &str| std::fs::read_to_string(dest.join(name)).unwrap();
    assert_eq!(read("late.txt"), "written late");
    assert_eq!(read("notes.csv"), notes_after);
    assert_eq!(read("out/logs/run.log"), log_after);
    assert!(!dest.join("report.csv").exists());
}

/// The budgets hold through the proxy: a file above `[ledger]
/// file_content_max` is recorded by size, `too_big`, never fetched; past
/// `session_content_max` in one look the rest are recorded unfetched,
/// `dropped`. `serve --upstream --no-record-files` records executions
/// without listing files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_keeps_files_within_the_budget_and_can_be_told_not_to_look() {
    let up_data = tempfile::tempdir().unwrap();
    let (up, up_endpoint) = upstream(up_data.path(), &[]);
    let small_data = tempfile::tempdir().unwrap();
    let (small, small_endpoint) = proxy_with(
        small_data.path(),
        &up_endpoint,
        UPSTREAM_TOKEN,
        "[ledger]\nfile_content_max = \"64 B\"\nsession_content_max = \"100 B\"\n",
        &[],
    );
    let off_data = tempfile::tempdir().unwrap();
    let (off, off_endpoint) = proxy_with(
        off_data.path(),
        &up_endpoint,
        UPSTREAM_TOKEN,
        "",
        &["--no-record-files"],
    );
    let http = common::http_as(AGENT);
    let id = common::identifier();
    let code = "open('/mnt/data/small.txt', 'w').write('tiny')\nopen('/mnt/data/big.txt', 'w').write('x' * 1000)\nfor n in (1, 2): open(f'/mnt/data/mid{n}.txt', 'w').write('m' * 60)";
    let answer = run(&http, &small_endpoint, B, &id, code).await.unwrap();
    assert_eq!(answer["status"], "Succeeded", "{answer}");
    let other = common::identifier();
    let answer = run(&http, &off_endpoint, B, &other, code).await.unwrap();
    assert_eq!(answer["status"], "Succeeded", "{answer}");
    small.terminate();
    off.terminate();
    up.terminate();

    let calls = log_json(small_data.path(), &[&id]);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    let recorded = calls[0]["files"].as_array().unwrap();
    let of = |path: &str| {
        recorded
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} not recorded: {}", calls[0]))
    };
    assert_eq!(recorded.len(), 4, "{}", calls[0]);
    let big = of("/mnt/data/big.txt");
    assert_eq!(big["size"], 1000);
    assert_eq!(big["content"], "too_big");
    assert!(big.get("sha256").is_none(), "{big}");
    let small_file = of("/mnt/data/small.txt");
    assert_eq!(small_file["content"], "kept");
    assert_eq!(
        small_file["sha256"].as_str().map(str::to_string),
        Some(sha("tiny"))
    );
    // Two 60-byte files, 100 bytes for the look: one fetched, one not.
    let mut mids: Vec<&str> = ["/mnt/data/mid1.txt", "/mnt/data/mid2.txt"]
        .iter()
        .map(|p| of(p)["content"].as_str().unwrap())
        .collect();
    mids.sort_unstable();
    assert_eq!(mids, ["dropped", "kept"], "{}", calls[0]);

    let calls = log_json(off_data.path(), &[&other]);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0]["kind"], "code");
    assert!(files(&calls[0]).is_empty(), "{}", calls[0]);
}
