//! The recording proxy (`sessionpad serve --upstream`, issue 13) in front of a
//! second `sessionpad serve` standing in for Azure, the proxy getting the
//! upstream's token through a profile's `token-env`: a client's sequence of
//! calls of both families (sync, async with polling, files) comes back exactly
//! from `log --json` of the proxy's ledger; a 100 MB upload and download
//! through it match byte for byte; 20 agents at once get no error; an
//! asynchronous execution the agent never polls is recorded once; an
//! execution, an upload and a delete whose agent went away before the answer
//! are recorded when the upstream answers, marked `client_gone`; an
//! unreachable upstream, a refused token (401, 403) and a token that cannot be
//! had come back in the service's error shape with a clear message.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/proxy.rs"]
mod proxy_support;

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use common::{ledger_bytes, log_json};
use proxy_support::{PROXY_TOKEN, UPSTREAM_TOKEN, contains, proxied, proxy};

const AGENT: &str = "proxy-test-agent/1.0 (reqwest)";

fn http() -> reqwest::Client {
    common::http_as(AGENT)
}

async fn post(http: &reqwest::Client, url: &str, body: Value) -> reqwest::Response {
    http.post(url)
        .bearer_auth(PROXY_TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// `GET url` with the proxy's token: the answer's JSON.
async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    http.get(url)
        .bearer_auth(PROXY_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Sends `code` inline to `POST executions` (`aca-api.md` §4.2) of session
/// `id` through the proxy at `endpoint`, in api-version `version` with
/// `executionType` `execution_type` (`synchronous` or `asynchronous`).
async fn execute(
    endpoint: &str,
    version: &str,
    id: &str,
    execution_type: &str,
    code: &str,
) -> reqwest::Response {
    post(
        &http(),
        &format!("{endpoint}/executions?api-version={version}&identifier={id}"),
        json!({"codeInputType": "inline", "executionType": execution_type, "code": code}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_calls_go_through_and_log_gives_them_back_exactly() {
    let (up_data, proxy_data, (up, up_endpoint), (px, endpoint)) = proxied(&[]);
    let http = http();
    let id = common::identifier();
    let q = |path: &str, v: &str| format!("{endpoint}/{path}?api-version={v}&identifier={id}");
    let b = "2025-10-02-preview";

    // Without the proxy's token, or with the upstream's: refused by the proxy.
    let r = http.get(q("files", b)).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = http
        .get(q("files", b))
        .bearer_auth(UPSTREAM_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // 1. Family B, synchronous.
    let sent_cells = [
        "x = 6 * 7\nprint('hello', x)\nx",
        "x + 1",
        "import time\ntime.sleep(0.3)\nprint('later')",
    ];
    let r = execute(&endpoint, b, &id, "synchronous", sent_cells[0]).await;
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["result"]["stdout"], "hello 42\n", "{v}");
    // 2. Family A.
    let r = post(
        &http,
        &q("code/execute", "2024-02-02-preview"),
        json!({"properties": {"codeInputType": "inline", "executionType": "synchronous", "code": sent_cells[1]}}),
    )
    .await;
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["properties"]["result"], 43, "{v}");
    // 3. Family B, asynchronous, polled through the proxy until it is done.
    let r = execute(
        &endpoint,
        "2024-10-02-preview",
        &id,
        "asynchronous",
        sent_cells[2],
    )
    .await;
    assert_eq!(r.status(), 202);
    let location = r.headers()["operation-location"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(location.starts_with("/executions/"), "{location}");
    let running: Value = r.json().await.unwrap();
    let exec_id = running["id"].as_str().unwrap().to_string();
    let done = loop {
        let v = get_json(&http, &format!("{endpoint}{location}")).await;
        if v["status"] != "Running" {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["result"]["stdout"], "later\n", "{done}");
    // Polled again once finished: still recorded once.
    let again = http
        .get(format!("{endpoint}{location}"))
        .bearer_auth(PROXY_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200);
    // 4. Upload, 5. download, 6. delete; metadata and a listing in between
    // are forwarded, not recorded.
    let content = b"name,value\na,1\nb,2\n".to_vec();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(content.clone()).file_name("notes.csv"),
    );
    let r = http
        .post(q("files", b) + "&path=/mnt/data")
        .bearer_auth(PROXY_TOKEN)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let meta = http
        .get(format!("{endpoint}/metadata?api-version={b}"))
        .bearer_auth(PROXY_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(meta.status(), 200);
    let got = http
        .get(q("files/notes.csv/content", b))
        .bearer_auth(PROXY_TOKEN)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(got.as_ref(), content.as_slice());
    let listing = get_json(&http, &q("files", b)).await;
    assert_eq!(listing["value"][0]["name"], "notes.csv", "{listing}");
    let r = http
        .delete(q("files/notes.csv", b))
        .bearer_auth(PROXY_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    px.terminate();
    up.terminate();

    let calls = log_json(proxy_data.path(), &[&id]);
    let kinds: Vec<&str> = calls.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["code", "code", "code", "upload", "download", "delete"],
        "{calls:#?}"
    );
    let codes: Vec<&str> = calls[..3]
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, sent_cells);
    for c in &calls {
        assert_eq!(c["client"], AGENT, "{c}");
        assert_ne!(c["client_gone"], true, "the agent had every answer: {c}");
        assert_eq!(c["identifier"], id.as_str());
        assert_eq!(c["pool"], up_endpoint.as_str(), "pool key = the upstream");
    }
    assert_eq!(calls[0]["stdout"], "hello 42\n");
    assert_eq!(calls[0]["result"]["json"], 42);
    assert_eq!(calls[1]["result"]["json"], 43);
    assert_eq!(calls[2]["stdout"], "later\n");
    assert_eq!(calls[2]["status"], "Succeeded");
    assert_eq!(calls[2]["execution_id"], exec_id.as_str());
    let hash = sessionpad::protocol::record::sha256_hex(&content);
    for c in &calls[3..5] {
        assert_eq!(
            c["file"],
            json!({"name": "notes.csv", "size": content.len(), "sha256": hash}),
            "{c}"
        );
    }
    assert_eq!(
        calls[5]["file"],
        json!({"name": "notes.csv", "size": null, "sha256": null})
    );

    // The upstream saw the agent's User-Agent, and the same calls.
    // (The upstream, a local pool, also records the session's end when it
    // stopped; the proxy records no end: the service tells of none.)
    let mut seen = log_json(up_data.path(), &[&id]);
    let end = seen.pop().unwrap();
    assert_eq!(end["kind"], "end", "{end}");
    assert_eq!(end["status"], "the pool stopped", "{end}");
    let up_kinds: Vec<&str> = seen.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(up_kinds, kinds);
    assert!(seen.iter().all(|c| c["client"] == AGENT), "{seen:#?}");

    // No token of either side anywhere in the proxy's ledger.
    let bytes = ledger_bytes(proxy_data.path());
    assert!(
        contains(&bytes, b"hello 42"),
        "the grep reads the right files"
    );
    assert!(!contains(&bytes, PROXY_TOKEN.as_bytes()));
    assert!(!contains(&bytes, UPSTREAM_TOKEN.as_bytes()));
}

/// 100 MiB of bytes that differ from chunk to chunk, made as they are sent.
fn generated(
    chunk: usize,
    chunks: usize,
) -> impl futures::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    futures::stream::iter(0..chunks).map(move |i| {
        let seed = u8::try_from(i % 251).unwrap();
        Ok((0..chunk)
            .map(|j| seed.wrapping_add(u8::try_from(j % 253).unwrap()))
            .collect())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_upload_and_download_through_the_proxy_match_byte_for_byte() {
    const CHUNK: usize = 1024 * 1024;
    const CHUNKS: usize = 100;
    let (_up_data, proxy_data, (_up, _up_endpoint), (px, endpoint)) = proxied(&[]);
    let http = http();
    let id = common::identifier();
    let v = "2025-10-02-preview";
    let mut expected = Sha256::new();
    for chunk in futures::executor::block_on_stream(Box::pin(generated(CHUNK, CHUNKS))) {
        expected.update(chunk.unwrap());
    }
    let expected = hex(&expected.finalize());
    let total = (CHUNK * CHUNKS) as u64;
    let part = reqwest::multipart::Part::stream_with_length(
        reqwest::Body::wrap_stream(generated(CHUNK, CHUNKS)),
        total,
    )
    .file_name("big.bin");
    let r = http
        .post(format!("{endpoint}/files?api-version={v}&identifier={id}"))
        .bearer_auth(PROXY_TOKEN)
        .multipart(reqwest::multipart::Form::new().part("file", part))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let r = http
        .get(format!(
            "{endpoint}/files/big.bin/content?api-version={v}&identifier={id}"
        ))
        .bearer_auth(PROXY_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut got = Sha256::new();
    let mut size = 0u64;
    let mut body = r.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.unwrap();
        size += chunk.len() as u64;
        got.update(&chunk);
    }
    assert_eq!(size, total);
    assert_eq!(hex(&got.finalize()), expected);
    px.terminate();
    let calls = log_json(proxy_data.path(), &[&id]);
    assert_eq!(calls.len(), 2, "{calls:#?}");
    for c in &calls {
        assert_eq!(
            c["file"],
            json!({"name": "big.bin", "size": total, "sha256": expected}),
            "{c}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_agents_at_once_through_the_proxy_get_no_error() {
    let (_up_data, proxy_data, (_up, _up_endpoint), (px, endpoint)) = proxied(&[]);
    let agents: Vec<_> = (0..20)
        .map(|n| {
            let endpoint = endpoint.clone();
            tokio::spawn(async move {
                let http = http();
                let id = format!("agent-{n}-{}", common::identifier());
                let url = format!(
                    "{endpoint}/executions?api-version=2025-10-02-preview&identifier={id}"
                );
                let mut errors = Vec::new();
                for (code, want) in [
                    (format!("n = {n}\nprint(n)"), format!("{n}\n")),
                    ("print(n * 2)".to_string(), format!("{}\n", n * 2)),
                ] {
                    let r = post(
                        &http,
                        &url,
                        json!({"codeInputType": "inline", "executionType": "synchronous", "code": code}),
                    )
                    .await;
                    let status = r.status();
                    let v: Value = r.json().await.unwrap_or(Value::Null);
                    if status != 200 || v["result"]["stdout"] != want.as_str() {
                        errors.push(format!("{id}: {status} {v}"));
                    }
                }
                errors
            })
        })
        .collect();
    let mut errors = Vec::new();
    for a in agents {
        errors.extend(a.await.unwrap());
    }
    assert_eq!(errors, Vec::<String>::new());
    px.terminate();
    let calls = log_json(proxy_data.path(), &["--all"]);
    assert_eq!(calls.len(), 40, "every call recorded");
    assert!(calls.iter().all(|c| c["status"] == "Succeeded"));
}

/// A stand-in upstream that answers every request with `status` and an
/// Azure error body; its endpoint.
async fn refusing(status: u16, message: &'static str) -> String {
    let app = axum::Router::new().fallback(move || async move {
        (
            axum::http::StatusCode::from_u16(status).unwrap(),
            axum::Json(json!({"error": {"code": "Refused", "message": message}})),
        )
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// The error answer of the proxy to one execution: status, code, message.
async fn error_of(endpoint: &str) -> (u16, String, String) {
    let r = execute(
        endpoint,
        "2025-10-02-preview",
        "err-test",
        "synchronous",
        "1",
    )
    .await;
    let status = r.status().as_u16();
    let header = r.headers()["x-ms-error-code"].to_str().unwrap().to_string();
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], header.as_str(), "{v}");
    (
        status,
        header,
        v["error"]["message"].as_str().unwrap().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_failures_come_back_in_the_services_shape_saying_what_to_fix() {
    let data = tempfile::tempdir().unwrap();
    // Nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (_px, endpoint) = proxy(data.path(), &gone, UPSTREAM_TOKEN);
    let (status, code, message) = error_of(&endpoint).await;
    assert_eq!(
        (status, code.as_str()),
        (502, "UpstreamUnreachable"),
        "{message}"
    );
    assert!(
        message.contains("cannot reach the session pool at"),
        "{message}"
    );
    assert!(message.contains(&gone), "{message}");

    // The upstream refuses the proxy's token: 401, then 403.
    let data = tempfile::tempdir().unwrap();
    let up = refusing(401, "token expired").await;
    let (_px, endpoint) = proxy(data.path(), &up, UPSTREAM_TOKEN);
    let (status, _, message) = error_of(&endpoint).await;
    assert_eq!(status, 401);
    assert!(
        message.contains("refused the sessionpad proxy's identity (auth: static token)"),
        "{message}"
    );
    assert!(
        message.contains("https://dynamicsessions.io") && message.contains("token expired"),
        "{message}"
    );
    let data = tempfile::tempdir().unwrap();
    let up = refusing(403, "no role assignment").await;
    let (_px, endpoint) = proxy(data.path(), &up, UPSTREAM_TOKEN);
    let (status, code, message) = error_of(&endpoint).await;
    assert_eq!((status, code.as_str()), (403, "Refused"));
    assert!(
        message.contains("Azure ContainerApps Session Executor"),
        "{message}"
    );
    assert!(message.contains("no role assignment"), "{message}");
    assert!(!message.contains(UPSTREAM_TOKEN), "{message}");
}

/// A JWT (unsigned: only its claims are read) for dynamic sessions that
/// expires at `exp` (Unix seconds).
fn jwt(exp: u64) -> String {
    use base64::Engine;
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.c2lnbmF0dXJl",
        b64(json!({"alg": "none", "typ": "JWT"})),
        b64(json!({"aud": "https://dynamicsessions.io", "exp": exp}))
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_cannot_be_had_comes_back_as_a_gateway_error() {
    let data = tempfile::tempdir().unwrap();
    let up = refusing(500, "never reached").await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // Valid when the proxy starts, expired by the first call.
    let exp = now + 3;
    let (_px, endpoint) = proxy(data.path(), &up, &jwt(exp));
    while std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        <= exp
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (status, code, message) = error_of(&endpoint).await;
    assert_eq!(
        (status, code.as_str()),
        (502, "UpstreamAuthenticationFailed"),
        "{message}"
    );
    assert!(
        message.contains("could not get a token") && message.contains("expired"),
        "{message}"
    );
}

/// Lowercase hex of a digest (sha2 0.11's output has no `{:x}`).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The proxy's event stream of identifier `id`, read with the proxy's token.
async fn follow(
    endpoint: &str,
    id: &str,
) -> futures::stream::BoxStream<
    'static,
    Result<sessionpad::protocol::events::PoolEvent, sessionpad::client::ClientError>,
> {
    let follower = sessionpad::client::SessionClient::new(sessionpad::client::Target {
        endpoint: endpoint.to_string(),
        api_version: sessionpad::protocol::ApiVersion::V2025_10_02,
        token: Some(PROXY_TOKEN.into()),
    })
    .unwrap();
    follower.events(Some(id)).await.unwrap()
}

/// The next recorded call on `events` (a test that never gets one fails
/// after two minutes instead of hanging).
async fn next_call(
    events: &mut futures::stream::BoxStream<
        'static,
        Result<sessionpad::protocol::events::PoolEvent, sessionpad::client::ClientError>,
    >,
) -> Box<sessionpad::protocol::events::RecordedCall> {
    tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            if let sessionpad::protocol::events::PoolEvent::Call(call) =
                events.next().await.unwrap().unwrap()
            {
                break call;
            }
        }
    })
    .await
    .expect("a recorded call is pushed")
}

/// Asserts that `call` is the agent's execution of `code`, which printed
/// `stdout`.
fn assert_agents_code(call: &sessionpad::protocol::events::RecordedCall, code: &str, stdout: &str) {
    assert_eq!(call.entry.code.as_deref(), Some(code));
    assert_eq!(call.entry.stdout.as_deref(), Some(stdout));
    assert_eq!(call.entry.client.as_deref(), Some(AGENT));
}

/// The proxy pushes each call it records on its own event stream, as the
/// local pool does (`GET /.sessionpad/events`, behind the proxy's token), so
/// a notebook or `log --follow` can follow an agent working through it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_pushes_each_call_it_records_on_its_event_stream() {
    let (_up_data, _proxy_data, (_up, up_endpoint), (_px, endpoint)) = proxied(&[]);
    let id = common::identifier();
    let events_url = format!("{endpoint}/.sessionpad/events?identifier={id}");
    let r = http().get(&events_url).send().await.unwrap();
    assert_eq!(r.status(), 401, "the stream needs the proxy's token");
    let mut events = follow(&endpoint, &id).await;
    let code = "print('through the proxy')";
    let r = execute(&endpoint, "2025-10-02-preview", &id, "synchronous", code).await;
    assert_eq!(r.status(), 200);
    let call = next_call(&mut events).await;
    assert_agents_code(&call, code, "through the proxy\n");
    assert_eq!(call.entry.pool, up_endpoint.trim_end_matches('/'));
}

/// An asynchronous execution (`aca-api.md` §4.2) that the agent never polls
/// is still recorded, once: the proxy polls the upstream itself until the
/// execution ends; the agent's own polling afterwards records nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asynchronous_execution_never_polled_is_recorded_once() {
    let (_up_data, proxy_data, (up, _up_endpoint), (px, endpoint)) = proxied(&[]);
    let id = common::identifier();
    let mut events = follow(&endpoint, &id).await;
    let code = "import time\ntime.sleep(0.5)\nprint('nobody polled')";
    let r = execute(&endpoint, "2024-10-02-preview", &id, "asynchronous", code).await;
    assert_eq!(r.status(), 202);
    let location = r.headers()["operation-location"]
        .to_str()
        .unwrap()
        .to_string();
    let running: Value = r.json().await.unwrap();
    assert_eq!(running["status"], "Running", "{running}");
    let exec_id = running["id"].as_str().unwrap().to_string();
    // Without any poll of the agent's, the call is recorded (and pushed).
    let call = next_call(&mut events).await;
    assert_agents_code(&call, code, "nobody polled\n");
    // The agent polls now: the finished answer comes through, nothing more
    // is recorded.
    let done = get_json(&http(), &format!("{endpoint}{location}")).await;
    assert_eq!(done["status"], "Succeeded", "{done}");
    // The open event stream would hold the proxy's orderly end.
    drop(events);
    px.terminate();
    up.terminate();
    let calls = log_json(proxy_data.path(), &[&id]);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0]["kind"], "code");
    assert_eq!(calls[0]["status"], "Succeeded");
    assert_eq!(calls[0]["execution_id"], exec_id.as_str());
    assert_eq!(calls[0]["stdout"], "nobody polled\n");
}

/// An agent's HTTP client that gives up after one second, as an agent's tool
/// with a short timeout does.
fn impatient() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(AGENT)
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap()
}

/// Reads the proxy's ledger in `data` until it holds a call of `kind` for
/// identifier `id` (for at most 20 s); every call of `id` recorded by then.
async fn calls_once_recorded(data: &std::path::Path, id: &str, kind: &str) -> Vec<Value> {
    let mut calls = Vec::new();
    for _ in 0..100 {
        calls = log_json(data, &[id]);
        if calls.iter().any(|c| c["kind"] == kind) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    calls
}

/// Issue 26: an execution whose agent went away before the answer (its
/// client's timeout, after 1 s of a 3 s cell) still goes on upstream, and the
/// proxy records it with its output when the upstream answers, marked as
/// answered to nobody (`client_gone`, "the client had gone").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_execution_whose_agent_went_away_is_recorded_when_it_ends() {
    let (_up_data, proxy_data, (_up, _up_endpoint), (px, endpoint)) = proxied(&[]);
    let id = common::identifier();
    let code = "import time\nprint('before the sleep')\ntime.sleep(3)\nprint('after the sleep')";
    let gave_up = impatient()
        .post(format!(
            "{endpoint}/executions?api-version=2025-10-02-preview&identifier={id}"
        ))
        .bearer_auth(PROXY_TOKEN)
        .json(&json!({"codeInputType": "inline", "executionType": "synchronous", "code": code}))
        .send()
        .await;
    assert!(
        gave_up.as_ref().is_err_and(reqwest::Error::is_timeout),
        "the agent should have timed out: {gave_up:?}"
    );
    let calls = calls_once_recorded(proxy_data.path(), &id, "code").await;
    let text = common::sessionpad_ok(proxy_data.path(), &["log", &id]);
    px.terminate();
    let cell = calls
        .iter()
        .find(|c| c["kind"] == "code")
        .unwrap_or_else(|| panic!("the execution was not recorded: {calls:#?}"));
    assert_eq!(cell["code"], code);
    assert_eq!(
        cell["stdout"], "before the sleep\nafter the sleep\n",
        "{cell}"
    );
    assert_eq!(cell["status"], "Succeeded", "{cell}");
    assert_eq!(cell["client"], AGENT, "{cell}");
    assert_eq!(cell["client_gone"], true, "{cell}");
    assert!(text.contains("the client had gone"), "{text}");
}

/// A stand-in upstream that takes its time: it reads an upload's body whole,
/// then answers it (200, a file's JSON) after 3 s; a delete, 204 after 3 s.
/// Its endpoint.
async fn slow_files() -> String {
    use axum::routing::{delete, post};
    let app = axum::Router::new()
        .route(
            "/files",
            post(|body: axum::body::Bytes| async move {
                tokio::time::sleep(Duration::from_secs(3)).await;
                axum::Json(
                    json!({"name": "notes.csv", "type": "file", "contentLength": body.len()}),
                )
            }),
        )
        .route(
            "/files/{name}",
            delete(|| async {
                tokio::time::sleep(Duration::from_secs(3)).await;
                axum::http::StatusCode::NO_CONTENT
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// Issue 26, for the file calls that change a session: an upload the upstream
/// has whole, and a delete, whose agent gave up before the upstream answered
/// them, are still recorded when it does, marked as answered to nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_and_a_delete_whose_agent_went_away_are_recorded() {
    let data = tempfile::tempdir().unwrap();
    let up = slow_files().await;
    let (px, endpoint) = proxy(data.path(), &up, UPSTREAM_TOKEN);
    let id = common::identifier();
    let v = "2025-10-02-preview";
    let content = b"name,value\na,1\n".to_vec();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(content.clone()).file_name("notes.csv"),
    );
    let gave_up = impatient()
        .post(format!("{endpoint}/files?api-version={v}&identifier={id}"))
        .bearer_auth(PROXY_TOKEN)
        .multipart(form)
        .send()
        .await;
    assert!(
        gave_up.as_ref().is_err_and(reqwest::Error::is_timeout),
        "{gave_up:?}"
    );
    let gave_up = impatient()
        .delete(format!(
            "{endpoint}/files/notes.csv?api-version={v}&identifier={id}"
        ))
        .bearer_auth(PROXY_TOKEN)
        .send()
        .await;
    assert!(
        gave_up.as_ref().is_err_and(reqwest::Error::is_timeout),
        "{gave_up:?}"
    );
    let calls = calls_once_recorded(data.path(), &id, "delete").await;
    px.terminate();
    let kinds: Vec<&str> = calls.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["upload", "delete"], "{calls:#?}");
    let hash = sessionpad::protocol::record::sha256_hex(&content);
    assert_eq!(
        calls[0]["file"],
        json!({"name": "notes.csv", "size": content.len(), "sha256": hash})
    );
    for c in &calls {
        assert_eq!(c["client"], AGENT, "{c}");
        assert_eq!(c["client_gone"], true, "{c}");
    }
}
