//! Recorded fixtures of the session client, for every api-version: a recorder
//! server on loopback answers with the example bodies of `aca-api.md` (§3.1–§3.4,
//! §4.2–§4.4, §5.2, §6) and keeps every request; each test pins the exact request
//! line, query, selected headers and body an operation sends, the value parsed
//! from the answer, and `NotSupported` (with nothing sent) where a version lacks
//! the operation.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use chrono::{DateTime, Utc};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use sessionpad::client::{ClientError, SessionClient, ShellRequest, Target};
use sessionpad::protocol::{
    ApiVersion, ContainerType, Execution, ExecutionStatus, FileKind, KernelInfo, NameVersion,
    PoolMetadata, RemoteFile, SessionInfo, ShellCommand, ShellExecution,
};
use tokio_util::sync::CancellationToken;

/// The pool's path below the host, as on Azure (§1.1), so joining is tested too.
const POOL: &str = "/subscriptions/sub/resourceGroups/rg/sessionPools/pool";
const ID: &str = "fixture-id";
const TOKEN: &str = "fixture-token";
const LIMIT: Duration = Duration::from_secs(60);
/// A name with a space, Unicode, `#`, `%` and `&`, and its path segment.
const ODD: &str = "résumé #1 50% & co.txt";
const ODD_ENC: &str = "r%C3%A9sum%C3%A9%20%231%2050%25%20&%20co.txt";

// ---- the recorder -------------------------------------------------------------

/// One scripted answer.
#[derive(Clone)]
struct Canned {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

fn answer(status: u16, body: &str) -> Canned {
    let ct = if body.starts_with(['{', '[']) {
        "application/json"
    } else {
        "text/plain"
    };
    Canned {
        status,
        headers: vec![("content-type", ct.into())],
        body: body.as_bytes().to_vec(),
    }
}

/// An Azure error answer (§6.1): `{"error":{"code","message"}}` + `x-ms-error-code`.
fn error(status: u16, code: &str, message: &str) -> Canned {
    let body = json!({"error": {"code": code, "message": message}}).to_string();
    answer(status, &body).header("x-ms-error-code", code)
}

impl Canned {
    fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_string()));
        self
    }
}

/// One request as the recorder saw it.
#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    query: String,
    /// `authorization`, `content-type`, `content-length`, `operation-id`.
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

impl Recorded {
    fn line(&self) -> String {
        format!("{} {}?{}", self.method, self.path, self.query)
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON request body")
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

#[derive(Clone, Default)]
struct Tape {
    script: Arc<Mutex<VecDeque<Canned>>>,
    seen: Arc<Mutex<Vec<Recorded>>>,
}

struct Recorder {
    origin: String,
    tape: Tape,
}

impl Recorder {
    async fn start(script: Vec<Canned>) -> Self {
        let tape = Tape {
            script: Arc::new(Mutex::new(script.into())),
            ..Tape::default()
        };
        let app = axum::Router::new()
            .fallback(record)
            .with_state(tape.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { origin, tape }
    }

    fn client(&self, version: ApiVersion) -> SessionClient {
        SessionClient::new(Target {
            endpoint: format!("{}{POOL}", self.origin),
            api_version: version,
            token: Some(TOKEN.into()),
        })
        .unwrap()
    }

    fn requests(&self) -> Vec<Recorded> {
        self.tape.seen.lock().unwrap().clone()
    }

    fn lines(&self) -> Vec<String> {
        self.requests().iter().map(Recorded::line).collect()
    }

    /// The only request; every one carries the bearer token.
    fn only(&self) -> Recorded {
        let all = self.requests();
        assert_eq!(all.len(), 1, "{:#?}", self.lines());
        all.into_iter().next().unwrap()
    }
}

async fn record(State(tape): State<Tape>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap()
        .to_vec();
    let headers = [
        "authorization",
        "content-type",
        "content-length",
        "operation-id",
        "x-sessionpad-outputs",
    ]
    .into_iter()
    .filter_map(|h| {
        let v = parts.headers.get(h)?.to_str().ok()?;
        Some((h.to_string(), v.to_string()))
    })
    .collect();
    tape.seen.lock().unwrap().push(Recorded {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        headers,
        body,
    });
    let next = tape.script.lock().unwrap().pop_front();
    let canned = next.unwrap_or_else(|| answer(500, "unscripted request"));
    let mut resp = Response::new(Body::from(canned.body));
    *resp.status_mut() = StatusCode::from_u16(canned.status).unwrap();
    for (k, v) in canned.headers {
        resp.headers_mut().insert(
            HeaderName::from_static(k),
            HeaderValue::from_str(&v).unwrap(),
        );
    }
    resp
}

// ---- helpers ------------------------------------------------------------------

fn q(v: ApiVersion) -> String {
    format!("api-version={v}&identifier={ID}")
}

/// A time as the domain types hold it (they are all optional).
#[allow(clippy::unnecessary_wraps)]
fn t(s: &str) -> Option<DateTime<Utc>> {
    Some(DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc))
}

fn family_b(v: ApiVersion) -> bool {
    v >= ApiVersion::V2024_10_02
}

fn sessions(v: ApiVersion) -> bool {
    v >= ApiVersion::V2025_02_02
}

#[track_caller]
fn assert_unsupported<T: std::fmt::Debug>(
    r: Result<T, ClientError>,
    v: ApiVersion,
    rec: &Recorder,
) {
    match r {
        Err(ClientError::NotSupported { api_version, .. }) => assert_eq!(api_version, v.as_str()),
        other => panic!("{v}: expected NotSupported, got {other:?}"),
    }
    assert_eq!(
        rec.lines(),
        Vec::<String>::new(),
        "{v}: nothing may be sent"
    );
}

fn no_progress(_: u64, _: u64) {}

// ---- example bodies (aca-api.md) ----------------------------------------------

/// §3.1, real transcript (2024-02-02-preview).
const A_EXECUTE: &str = r#"{"$id":"1","properties":{"$id":"2","status":"Success","stdout":"Hello from aa23222b-4a8f-44ec-a7e3-6c735abc374a!\n","stderr":"","result":"","executionTimeInMilliseconds":10}}"#;
/// §4.2, spec example.
const B_EXECUTE: &str = r#"{"id":"testExecutionId","identifier":"testSessionIdentifier","executionType":"Synchronous","status":"Succeeded","result":{"stdout":"63\n","stderr":"","executionResult":"","executionTimeInMilliseconds":4}}"#;
/// §3.2 upload answer.
const A_UPLOAD: &str = r#"{"$id":"1","value":[{"$id":"2","properties":{"$id":"3","filename":"test-file.txt","size":516,"lastModifiedTime":"2024-08-06T14:50:38.4228269Z"}}]}"#;
/// §3.3 listing (real transcript).
const A_LIST: &str = r#"{"$id":"1","value":[{"$id":"2","properties":{"$id":"3","filename":"hello.txt","size":19,"lastModifiedTime":"2024-06-08T18:57:50.2464287Z"}}]}"#;
/// §4.3 `SessionResourceFile`.
const B_FILE: &str = r#"{"name":"README2.md","sizeInBytes":133,"lastModifiedAt":"2024-11-02T12:33:05.677209683Z","contentType":"text/markdown; charset=utf-8","type":"File"}"#;
/// §4.4 `GET session`.
const SESSION: &str = r#"{"identifier":"testid1","expireAt":"2025-01-05T22:18:41.752Z","createdAt":"2025-01-21T03:38:05.232Z","lastAccessedAt":"2025-01-21T03:38:05.232Z","etag":"9334cb07-aafd-45a0-90bd-448080a91f57"}"#;
/// §4.4 `GET metadata`.
const METADATA: &str = r#"{"runtimes":[{"name":"node","version":"20.2.4"}],"preInstalledPackages":[{"name":"axios","version":"1.21.2"}],"createdAt":"2025-01-05T22:18:41.495Z","lastUpdatedAt":"2025-01-05T22:18:41.495Z","jupyterKernel":{"name":"IJavascript","version":"5.2.1","projectUrl":"https://github.com/n-riesco/ijavascript","description":"..."}}"#;
/// §5.2 `SessionView`.
const VIEW: &str = r#"{"identifier":"user-123","etag":"a1b2c3d4","expiresAt":"2026-04-30T14:30:00Z","createdAt":"2026-04-30T13:30:00Z","lastAccessedAt":"2026-04-30T14:29:00Z"}"#;

fn b_file_value() -> RemoteFile {
    RemoteFile {
        name: "README2.md".into(),
        directory: None,
        size: Some(133),
        modified: t("2024-11-02T12:33:05.677209683Z"),
        content_type: Some("text/markdown; charset=utf-8".into()),
        kind: FileKind::File,
    }
}

fn a_file(name: &str, size: u64, modified: &str) -> RemoteFile {
    RemoteFile {
        name: name.into(),
        directory: None,
        size: Some(size),
        modified: t(modified),
        content_type: None,
        kind: FileKind::File,
    }
}

fn session_value() -> SessionInfo {
    SessionInfo {
        identifier: "testid1".into(),
        created: t("2025-01-21T03:38:05.232Z"),
        last_accessed: t("2025-01-21T03:38:05.232Z"),
        expires: t("2025-01-05T22:18:41.752Z"),
        etag: Some("9334cb07-aafd-45a0-90bd-448080a91f57".into()),
    }
}

fn view_value(identifier: &str) -> SessionInfo {
    SessionInfo {
        identifier: identifier.into(),
        created: t("2026-04-30T13:30:00Z"),
        last_accessed: t("2026-04-30T14:29:00Z"),
        expires: t("2026-04-30T14:30:00Z"),
        etag: Some("a1b2c3d4".into()),
    }
}

// ---- executions ---------------------------------------------------------------

/// §4.7/§13: a Shell pool's reply, as LangChain's tests and the spec's
/// `CodeExecution_Execute_ShellCommand.json` give it: the exit code as a string.
const SHELL_EXECUTE: &str = r#"{"identifier":"test-identifier","status":"0","result":{"stdout":"Hello world!\n","stderr":"","executionTimeInMilliseconds":1}}"#;
/// The same for a command that failed: exit code 2 and its error.
const SHELL_FAILED: &str = r#"{"id":"shellExec2","identifier":"test-identifier","status":"2","result":{"stdout":"","stderr":"ls: cannot access 'nope': No such file or directory\n","executionTimeInMilliseconds":3}}"#;

#[tokio::test]
async fn shell_commands_send_the_shell_body_per_version_and_read_the_exit_code() {
    for v in ApiVersion::ALL {
        let rec =
            Recorder::start(vec![answer(200, SHELL_EXECUTE), answer(200, SHELL_FAILED)]).await;
        let c = rec.client(v);
        let hello = c
            .execute_shell(ID, &ShellRequest::line("echo Hello world!", LIMIT))
            .await;
        if !family_b(v) {
            // code/execute has no shell form.
            assert_unsupported(hello, v, &rec);
            continue;
        }
        let hello = hello.unwrap();
        let failed = c
            .execute_shell(ID, &ShellRequest::line("ls nope", LIMIT))
            .await
            .unwrap();
        let sent = rec.requests();
        assert_eq!(sent[0].line(), format!("POST {POOL}/executions?{}", q(v)));
        // No codeInputType / executionType: Shell pools refuse them (LangChain PR #445).
        assert_eq!(
            sent[0].json(),
            json!({"shellCommand":"echo Hello world!","timeoutInSeconds":60})
        );
        assert_eq!(
            sent[0].header("authorization"),
            Some("Bearer fixture-token")
        );
        assert_eq!(sent[0].header("x-sessionpad-outputs"), None);
        assert_eq!(
            hello,
            ShellExecution {
                id: None,
                exit_code: Some(0),
                state: None,
                stdout: "Hello world!\n".into(),
                stderr: String::new(),
                duration: Duration::from_millis(1),
                network: Vec::new(),
            }
        );
        assert_eq!(
            failed,
            ShellExecution {
                id: Some("shellExec2".into()),
                exit_code: Some(2),
                state: None,
                stdout: String::new(),
                stderr: "ls: cannot access 'nope': No such file or directory\n".into(),
                duration: Duration::from_millis(3),
                network: Vec::new(),
            }
        );
        assert!(hello.succeeded() && !failed.succeeded());
    }
}

/// `sessions-tutorial-nodejs.md` (2024-11): a NodeLTS pool's `code/execute`
/// answer (§13).
const NODE_A_EXECUTE: &str = r#"{"properties": {"status": "Success", "stdout": "hello-world\n", "stderr": "", "executionResult": "", "executionTimeInMilliseconds": 5}}"#;

#[tokio::test]
async fn node_pools_are_sent_javascript_as_code_and_values_are_not_read_as_python() {
    for v in ApiVersion::ALL {
        let b_value = if v.has_jupyter_format() {
            json!("{ a: true, b: null }")
        } else {
            json!({"a": true, "b": null})
        };
        let body = if family_b(v) {
            json!({"id":"nodeExec","identifier":ID,"executionType":"Synchronous","status":"Succeeded","result":{"stdout":"hello-world\n","stderr":"","executionResult":b_value,"executionTimeInMilliseconds":5}}).to_string()
        } else {
            NODE_A_EXECUTE.to_string()
        };
        let rec = Recorder::start(vec![answer(200, &body)]).await;
        let exec = rec
            .client(v)
            .with_container_type(ContainerType::NodeLts)
            .execute(
                ID,
                "console.log(\"hello-world\"); ({a: true, b: null})",
                LIMIT,
            )
            .await
            .unwrap();
        let r = rec.only();
        let mut flat = json!({"codeInputType":"inline","executionType":"synchronous","code":"console.log(\"hello-world\"); ({a: true, b: null})","timeoutInSeconds":60});
        if v.has_jupyter_format() {
            flat["returnJupyterFormatExecutionResult"] = json!(true);
        }
        if family_b(v) {
            assert_eq!(r.line(), format!("POST {POOL}/executions?{}", q(v)));
            assert_eq!(r.json(), flat);
            let value = exec.result.clone().unwrap();
            if v.has_jupyter_format() {
                assert_eq!(value.text, "{ a: true, b: null }");
            } else {
                // JSON as it came, not the Python literal {'a': True, 'b': None}.
                assert_eq!(value.json, Some(json!({"a": true, "b": null})));
                assert!(!value.text.contains("True"), "{}", value.text);
            }
        } else {
            assert_eq!(r.line(), format!("POST {POOL}/code/execute?{}", q(v)));
            assert_eq!(r.json(), json!({"properties": flat}));
            assert_eq!(exec.result, None);
        }
        assert_eq!(
            (exec.status, exec.stdout.as_str(), exec.duration),
            (
                ExecutionStatus::Succeeded,
                "hello-world\n",
                Duration::from_millis(5)
            )
        );
    }
}

#[tokio::test]
async fn argv_and_stdin_are_sent_where_the_spec_has_them() {
    let request = ShellRequest {
        command: ShellCommand::Argv(vec!["wc".into(), "-l".into()]),
        stdin: Some("a\nb\n".into()),
        timeout: LIMIT,
        output_streams_max_length: None,
    };
    for v in ApiVersion::ALL.into_iter().filter(|v| family_b(*v)) {
        let rec = Recorder::start(vec![answer(200, SHELL_EXECUTE)]).await;
        let r = rec.client(v).execute_shell(ID, &request).await;
        if v >= ApiVersion::V2025_10_02 {
            r.unwrap();
            assert_eq!(
                rec.only().json(),
                json!({"execCommandAndArgs":["wc","-l"],"stdin":"a\nb\n","timeoutInSeconds":60})
            );
        } else {
            match r {
                Err(ClientError::InvalidArgument(m)) => {
                    assert!(m.contains("2025-10-02-preview"), "{m}");
                }
                other => panic!("{v}: expected InvalidArgument, got {other:?}"),
            }
            assert_eq!(
                rec.lines(),
                Vec::<String>::new(),
                "{v}: nothing may be sent"
            );
        }
    }
}

#[tokio::test]
async fn execute_sends_each_familys_body() {
    for v in ApiVersion::ALL {
        let (status, body) = match v {
            _ if !family_b(v) => (200, A_EXECUTE),
            ApiVersion::V2025_10_02 => (200, B_EXECUTE),
            _ => (202, B_EXECUTE),
        };
        let rec = Recorder::start(vec![answer(status, body)]).await;
        let exec = rec
            .client(v)
            .execute(ID, "print('Hello, world!')", LIMIT)
            .await
            .unwrap();
        let r = rec.only();
        let mut flat = json!({"codeInputType":"inline","executionType":"synchronous","code":"print('Hello, world!')","timeoutInSeconds":60});
        // 2025-10-02-preview has the Jupyter format, and sessionpad asks for it.
        if v.has_jupyter_format() {
            flat["returnJupyterFormatExecutionResult"] = json!(true);
        }
        if family_b(v) {
            assert_eq!(r.line(), format!("POST {POOL}/executions?{}", q(v)));
            assert_eq!(r.json(), flat);
            assert_eq!(exec.id.as_deref(), Some("testExecutionId"));
            assert_eq!(
                (exec.stdout.as_str(), exec.duration),
                ("63\n", Duration::from_millis(4))
            );
        } else {
            assert_eq!(r.line(), format!("POST {POOL}/code/execute?{}", q(v)));
            assert_eq!(r.json(), json!({"properties": flat}));
            assert_eq!(exec.id, None);
            assert_eq!(
                exec.stdout,
                "Hello from aa23222b-4a8f-44ec-a7e3-6c735abc374a!\n"
            );
        }
        assert_eq!(r.header("authorization"), Some("Bearer fixture-token"));
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.header("x-sessionpad-outputs"), Some("all"));
        assert_eq!(
            (exec.status, exec.result),
            (ExecutionStatus::Succeeded, None)
        );
    }
}

/// `useEmptyKernel` (2025-10-02-preview, `aca-api.md` §13): sent as `true`
/// at the top of the flat body when the client is asked for it, absent
/// otherwise (the test above); on every earlier api-version the execution is
/// refused before anything is sent, naming the api-version that has it.
#[tokio::test]
async fn an_empty_kernel_is_asked_for_only_where_the_api_version_has_it() {
    for v in ApiVersion::ALL {
        let rec = Recorder::start(vec![answer(200, B_EXECUTE)]).await;
        let client = rec.client(v).with_empty_kernel(true);
        let got = client.execute(ID, "1+1", LIMIT).await;
        if v == ApiVersion::V2025_10_02 {
            got.unwrap();
            assert_eq!(
                rec.only().json(),
                json!({"codeInputType":"inline","executionType":"synchronous","code":"1+1",
                    "timeoutInSeconds":60,"returnJupyterFormatExecutionResult":true,
                    "useEmptyKernel":true})
            );
        } else {
            let e = got.unwrap_err().to_string();
            assert!(
                e.contains("useEmptyKernel")
                    && e.contains("2025-10-02-preview")
                    && e.contains(&v.to_string()),
                "{v}: {e}"
            );
            assert!(rec.requests().is_empty(), "{v}: nothing is sent");
        }
    }
}

/// §4.2 asynchronous mode: 202 Running with `Operation-Id`, then polls.
fn running(id: &str) -> String {
    json!({"id": id, "identifier": "test-identifier", "executionType": "Asynchronous", "status": "Running"}).to_string()
}

fn async_done(id: &str) -> String {
    json!({"id": id, "identifier": "test-identifier", "executionType": "Asynchronous", "status": "Succeeded",
        "result": {"stdout": "Hello from async code\n", "stderr": "", "executionResult": "", "executionTimeInMilliseconds": 380}})
    .to_string()
}

#[tokio::test]
async fn asynchronous_executions_submit_and_poll() {
    let id = "8963ad02-0000-4000-8000-000000000001";
    for v in ApiVersion::ALL {
        let location = format!("/executions/{id}?api-version={v}&identifier=test-identifier");
        let rec = Recorder::start(vec![
            answer(202, &running(id))
                .header("operation-id", id)
                .header("operation-location", &location),
            answer(200, &running(id)),
            answer(200, &async_done(id)),
        ])
        .await;
        let client = rec.client(v);
        let seen = Mutex::new(Vec::new());
        let progress = |e: &Execution| seen.lock().unwrap().push(e.status);
        let cancel = CancellationToken::new();
        let code = "import time\ntime.sleep(2)\nprint(\"Hello from async code\")";
        let r = client
            .execute_async(ID, code, Duration::from_secs(100), &progress, &cancel)
            .await;
        if !family_b(v) {
            assert_unsupported(r, v, &rec);
            assert_unsupported(client.get_execution(ID, id).await, v, &rec);
            continue;
        }
        let exec = r.unwrap();
        assert_eq!(exec.id.as_deref(), Some(id));
        assert_eq!(exec.stdout, "Hello from async code\n");
        assert_eq!(exec.duration, Duration::from_millis(380));
        assert_eq!(*seen.lock().unwrap(), [ExecutionStatus::Running]);
        let all = rec.requests();
        assert_eq!(
            rec.lines(),
            [
                format!("POST {POOL}/executions?{}", q(v)),
                format!("GET {POOL}/executions/{id}?{}", q(v)),
                format!("GET {POOL}/executions/{id}?{}", q(v)),
            ]
        );
        let mut sent = json!({"codeInputType":"inline","executionType":"asynchronous","code":code,"timeoutInSeconds":100});
        if v.has_jupyter_format() {
            sent["returnJupyterFormatExecutionResult"] = json!(true);
        }
        assert_eq!(all[0].json(), sent);
        let chosen = all[0].header("operation-id").expect("operation-id sent");
        assert!(uuid::Uuid::parse_str(chosen).is_ok(), "{chosen}");
        assert_eq!(all[1].body, b"");
    }
}

#[tokio::test]
async fn submit_reads_the_operation_id_header_when_the_body_has_no_id() {
    let rec = Recorder::start(vec![
        answer(202, r#"{"status":"Running"}"#).header("operation-id", "from-header"),
    ])
    .await;
    let id = rec
        .client(ApiVersion::V2024_10_02)
        .submit_execution(ID, "1", LIMIT)
        .await
        .unwrap();
    assert_eq!(id, "from-header");
}

#[tokio::test]
async fn waiting_stops_when_cancelled() {
    let id = "slow";
    let mut script = vec![answer(202, &running(id))];
    script.extend(std::iter::repeat_n(answer(200, &running(id)), 50));
    let rec = Recorder::start(script).await;
    let client = rec.client(ApiVersion::V2025_10_02);
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        stopper.cancel();
    });
    let started = Instant::now();
    let r = client
        .execute_async(ID, "while True: pass", LIMIT, &|_| {}, &cancel)
        .await;
    assert!(matches!(r, Err(ClientError::Cancelled)), "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    // 100 ms, 200 ms, … between polls: a few polls, not a busy loop.
    let polls = rec.requests().len() - 1;
    assert!((1..=4).contains(&polls), "{polls} polls");
}

// ---- files --------------------------------------------------------------------

#[tokio::test]
async fn list_files_in_every_version() {
    for v in ApiVersion::ALL {
        // SK .NET fixture style: `$id`s and lowercase `type` (§4.3).
        let b = r#"{"$id":"1","value":[{"$id":"2","name":"README2.md","sizeInBytes":133,"lastModifiedAt":"2024-11-02T12:33:05.677209683Z","contentType":"text/markdown; charset=utf-8","type":"file"}],"nextLink":null}"#;
        let rec = Recorder::start(vec![answer(200, if family_b(v) { b } else { A_LIST })]).await;
        let files = rec.client(v).list_files(ID, None, false).await.unwrap();
        assert_eq!(rec.only().line(), format!("GET {POOL}/files?{}", q(v)));
        let want = if family_b(v) {
            b_file_value()
        } else {
            a_file("hello.txt", 19, "2024-06-08T18:57:50.2464287Z")
        };
        assert_eq!(files, [want]);
    }
}

#[tokio::test]
async fn list_files_of_a_folder_and_recursively() {
    // 2025-10 recursive example (§4.3): `directory` relative to `path`, folders
    // with `application/octet-stream` and 4096 bytes.
    let recursive = r#"{"value":[
        {"name":"test-directory","sizeInBytes":4096,"lastModifiedAt":"2025-01-05T22:18:41.495Z","contentType":"application/octet-stream","type":"Directory","directory":""},
        {"name":"a.txt","sizeInBytes":3,"lastModifiedAt":"2025-01-05T22:18:41.495Z","contentType":"text/plain; charset=utf-8","type":"File","directory":"test-directory","extra":1}
    ],"nextLink":null}"#;
    for v in ApiVersion::ALL {
        let rec =
            Recorder::start(vec![answer(200, recursive), answer(200, r#"{"value":[]}"#)]).await;
        let client = rec.client(v);
        let r = client.list_files(ID, Some("/mnt/data/sub"), true).await;
        if v < ApiVersion::V2025_10_02 {
            assert_unsupported(r, v, &rec);
        } else {
            let files = r.unwrap();
            assert_eq!(
                rec.only().line(),
                format!(
                    "GET {POOL}/files?{}&path=%2Fmnt%2Fdata%2Fsub&recursive=true",
                    q(v)
                )
            );
            assert_eq!(files[0].kind, FileKind::Directory);
            assert_eq!(
                (files[0].size, files[0].directory.as_deref()),
                (Some(4096), Some(""))
            );
            assert_eq!(
                (files[1].path(), files[1].kind),
                ("test-directory/a.txt".into(), FileKind::File)
            );
        }
        let r = client.list_files(ID, Some("sub"), false).await;
        if family_b(v) {
            assert!(r.is_ok(), "{r:?}");
            assert_eq!(
                rec.lines().last().unwrap(),
                &format!("GET {POOL}/files?{}&path=sub", q(v))
            );
        } else {
            assert_unsupported(r, v, &rec);
            // The data root is the only folder family A has; naming it is fine.
            let rec = Recorder::start(vec![answer(200, A_LIST)]).await;
            rec.client(v)
                .list_files(ID, Some("/mnt/data/"), false)
                .await
                .unwrap();
            assert_eq!(rec.only().line(), format!("GET {POOL}/files?{}", q(v)));
        }
    }
}

#[tokio::test]
async fn list_files_follows_next_link() {
    let next = format!("{POOL}/files?api-version=2025-10-02-preview&identifier={ID}&page=2");
    let page1 =
        json!({"value": [serde_json::from_str::<Value>(B_FILE).unwrap()], "nextLink": next});
    let rec = Recorder::start(vec![
        answer(200, &page1.to_string()),
        answer(200, r#"{"value":[],"nextLink":null}"#),
    ])
    .await;
    let files = rec
        .client(ApiVersion::V2025_10_02)
        .list_files(ID, None, false)
        .await
        .unwrap();
    assert_eq!(files, [b_file_value()]);
    assert_eq!(rec.lines()[1], format!("GET {next}"));
}

#[tokio::test]
async fn file_info_in_every_version() {
    for v in ApiVersion::ALL {
        let a_list = json!({"$id":"1","value":[
            {"$id":"2","properties":{"$id":"3","filename":"hello.txt","size":19,"lastModifiedTime":"2024-06-08T18:57:50.2464287Z"}},
            {"$id":"4","properties":{"$id":"5","filename":ODD,"size":7,"lastModifiedTime":"2024-06-08T18:57:50.2464287Z"}}]});
        let body = if family_b(v) {
            B_FILE.to_string()
        } else {
            a_list.to_string()
        };
        let rec = Recorder::start(vec![answer(200, &body)]).await;
        let f = rec.client(v).file_info(ID, ODD).await.unwrap();
        if family_b(v) {
            assert_eq!(
                rec.only().line(),
                format!("GET {POOL}/files/{ODD_ENC}?{}", q(v))
            );
            assert_eq!(f, b_file_value());
        } else {
            // Family A has no per-file call (§3.5): the listing is searched.
            assert_eq!(rec.only().line(), format!("GET {POOL}/files?{}", q(v)));
            assert_eq!(f, a_file(ODD, 7, "2024-06-08T18:57:50.2464287Z"));
            let rec = Recorder::start(vec![answer(200, A_LIST)]).await;
            let r = rec.client(v).file_info(ID, "missing.txt").await;
            assert!(matches!(r, Err(ClientError::NotFound { .. })), "{r:?}");
        }
    }
}

/// The multipart body with its random boundary replaced by `BOUNDARY`.
fn multipart_body(r: &Recorded) -> String {
    let ct = r.header("content-type").unwrap();
    let boundary = ct.strip_prefix("multipart/form-data; boundary=").expect(ct);
    String::from_utf8(r.body.clone())
        .unwrap()
        .replace(boundary, "BOUNDARY")
}

#[tokio::test]
async fn upload_in_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local.csv");
    std::fs::write(&local, "a,b\n1,2\n").unwrap();
    for v in ApiVersion::ALL {
        let rec = Recorder::start(vec![answer(
            200,
            if family_b(v) { B_FILE } else { A_UPLOAD },
        )])
        .await;
        let client = rec.client(v);
        let calls = Mutex::new(Vec::new());
        let progress = |sent, total| calls.lock().unwrap().push((sent, total));
        let f = client
            .upload_file(ID, &local, ODD, None, &progress)
            .await
            .unwrap();
        let r = rec.only();
        let route = if family_b(v) { "files" } else { "files/upload" };
        assert_eq!(r.line(), format!("POST {POOL}/{route}?{}", q(v)));
        assert_eq!(
            multipart_body(&r),
            format!(
                "--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{ODD}\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\na,b\n1,2\n\r\n--BOUNDARY--\r\n"
            )
        );
        assert_eq!(
            r.header("content-length"),
            Some(r.body.len().to_string().as_str())
        );
        assert_eq!(calls.lock().unwrap().last(), Some(&(8, 8)));
        let want = if family_b(v) {
            b_file_value()
        } else {
            a_file("test-file.txt", 516, "2024-08-06T14:50:38.4228269Z")
        };
        assert_eq!(f, want);

        // A folder: family B `path` plus the name's own folders; family A has none.
        let rec = Recorder::start(vec![answer(200, B_FILE)]).await;
        let r = rec
            .client(v)
            .upload_file(ID, &local, "sub/x.csv", Some("/mnt/data/in"), &no_progress)
            .await;
        if family_b(v) {
            r.unwrap();
            let req = rec.only();
            assert_eq!(
                req.line(),
                format!("POST {POOL}/files?{}&path=%2Fmnt%2Fdata%2Fin%2Fsub", q(v))
            );
            assert!(multipart_body(&req).contains("filename=\"x.csv\""));
        } else {
            assert_unsupported(r, v, &rec);
        }
    }
}

#[tokio::test]
async fn uploads_over_128_mib_are_refused_before_sending() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("big.bin");
    let f = std::fs::File::create(&local).unwrap();
    f.set_len(sessionpad::client::MAX_UPLOAD + 1).unwrap(); // sparse
    for v in [ApiVersion::V2024_02_02, ApiVersion::V2025_10_02] {
        let rec = Recorder::start(vec![]).await;
        let r = rec
            .client(v)
            .upload_file(ID, &local, "big.bin", None, &no_progress)
            .await;
        assert!(matches!(r, Err(ClientError::TooLarge { .. })), "{r:?}");
        assert!(rec.requests().is_empty());
    }
    let rec = Recorder::start(vec![]).await;
    let r = rec
        .client(ApiVersion::V2025_10_02)
        .upload_file(ID, &dir.path().join("missing"), "x", None, &no_progress)
        .await;
    assert!(matches!(r, Err(ClientError::Local { .. })), "{r:?}");
}

#[tokio::test]
async fn download_in_every_version() {
    for v in ApiVersion::ALL {
        // §3.4 transcript: the raw text body.
        let rec = Recorder::start(vec![answer(200, "Hello from a file!\n")]).await;
        let mut dest = Vec::new();
        let calls = Mutex::new(Vec::new());
        let progress = |done, total| calls.lock().unwrap().push((done, total));
        let n = rec
            .client(v)
            .download_file(ID, ODD, &mut dest, &progress)
            .await
            .unwrap();
        let path = if family_b(v) {
            format!("files/{ODD_ENC}/content")
        } else {
            format!("files/content/{ODD_ENC}")
        };
        assert_eq!(rec.only().line(), format!("GET {POOL}/{path}?{}", q(v)));
        assert_eq!(
            (n, dest.as_slice()),
            (19, b"Hello from a file!\n".as_slice())
        );
        assert_eq!(calls.lock().unwrap().last(), Some(&(19, Some(19))));
    }
}

#[tokio::test]
async fn names_in_folders_and_under_mnt_data_become_segments() {
    let rec = Recorder::start(vec![answer(200, "x"), answer(200, "y"), answer(200, "z")]).await;
    let client = rec.client(ApiVersion::V2025_02_02);
    client
        .download_file(ID, "/mnt/data/sub dir/a?b.txt", &mut Vec::new(), &|_, _| {})
        .await
        .unwrap();
    client
        .download_file(ID, "c/ü", &mut Vec::new(), &|_, _| {})
        .await
        .unwrap();
    // A listed name with a `..` part (only a hostile or broken listing has one)
    // is asked for as one segment, its `/`s encoded: the request stays on the
    // file route.
    client
        .download_file(ID, "a/../b", &mut Vec::new(), &|_, _| {})
        .await
        .unwrap();
    let q = q(ApiVersion::V2025_02_02);
    assert_eq!(
        rec.lines(),
        [
            format!("GET {POOL}/files/sub%20dir/a%3Fb.txt/content?{q}"),
            format!("GET {POOL}/files/c/%C3%BC/content?{q}"),
            format!("GET {POOL}/files/a%2F..%2Fb/content?{q}"),
        ]
    );
    for bad in ["", "/", ".", "..", "/mnt/data/.."] {
        let r = client.file_info(ID, bad).await;
        assert!(
            matches!(r, Err(ClientError::InvalidArgument(_))),
            "{bad:?}: {r:?}"
        );
    }
}

#[tokio::test]
async fn delete_file_in_every_version() {
    for v in ApiVersion::ALL {
        let rec = Recorder::start(vec![answer(204, "")]).await;
        let r = rec.client(v).delete_file(ID, ODD).await;
        if family_b(v) {
            r.unwrap();
            assert_eq!(
                rec.only().line(),
                format!("DELETE {POOL}/files/{ODD_ENC}?{}", q(v))
            );
        } else {
            assert_unsupported(r, v, &rec);
        }
    }
}

// ---- sessions and the pool ----------------------------------------------------

#[tokio::test]
async fn session_info_and_delete_in_every_version() {
    for v in ApiVersion::ALL {
        let rec = Recorder::start(vec![answer(200, SESSION), answer(204, "")]).await;
        let client = rec.client(v);
        let info = client.session_info(ID).await;
        let deleted = client.delete_session(ID).await;
        if !sessions(v) {
            assert_unsupported(info, v, &rec);
            assert_unsupported(deleted, v, &rec);
            continue;
        }
        assert_eq!(info.unwrap(), session_value());
        deleted.unwrap();
        assert_eq!(
            rec.lines(),
            [
                format!("GET {POOL}/session?{}", q(v)),
                format!("DELETE {POOL}/session?{}", q(v))
            ]
        );
    }
}

#[tokio::test]
async fn list_sessions_follows_pages_in_every_version() {
    for v in ApiVersion::ALL {
        let page1 = json!({"sessions": [serde_json::from_str::<Value>(SESSION).unwrap()],
            "nextLink": format!("/listSessions?api-version={v}&skip=1")});
        let page2 = json!({"sessions": [{"identifier": "testid2"}], "nextLink": null});
        let rec = Recorder::start(vec![
            answer(200, &page1.to_string()),
            answer(200, &page2.to_string()),
        ])
        .await;
        let r = rec.client(v).list_sessions().await;
        if !sessions(v) {
            assert_unsupported(r, v, &rec);
            continue;
        }
        let second = SessionInfo {
            identifier: "testid2".into(),
            created: None,
            last_accessed: None,
            expires: None,
            etag: None,
        };
        assert_eq!(r.unwrap(), [session_value(), second]);
        assert_eq!(
            rec.lines(),
            [
                format!("GET {POOL}/listSessions?api-version={v}"),
                format!("GET {POOL}/listSessions?api-version={v}&skip=1"),
            ]
        );
    }
}

#[tokio::test]
async fn next_links_to_other_hosts_are_not_followed() {
    let page = json!({"sessions": [], "nextLink": "https://attacker.example/listSessions?skip=1"});
    let rec = Recorder::start(vec![answer(200, &page.to_string())]).await;
    let r = rec.client(ApiVersion::V2025_10_02).list_sessions().await;
    assert!(matches!(r, Err(ClientError::Malformed(_))), "{r:?}");
    assert_eq!(rec.requests().len(), 1);
}

#[tokio::test]
async fn pool_metadata_in_every_version() {
    for v in ApiVersion::ALL {
        let rec = Recorder::start(vec![answer(200, METADATA)]).await;
        let r = rec.client(v).pool_metadata().await;
        if !sessions(v) {
            assert_unsupported(r, v, &rec);
            continue;
        }
        assert_eq!(
            rec.only().line(),
            format!("GET {POOL}/metadata?api-version={v}")
        );
        let nv = |n: &str, v: &str| NameVersion {
            name: n.into(),
            version: v.into(),
        };
        assert_eq!(
            r.unwrap(),
            PoolMetadata {
                runtimes: vec![nv("node", "20.2.4")],
                packages: vec![nv("axios", "1.21.2")],
                kernel: Some(KernelInfo {
                    name: "IJavascript".into(),
                    version: "5.2.1".into(),
                    project_url: Some("https://github.com/n-riesco/ijavascript".into()),
                    description: Some("...".into()),
                }),
                created: t("2025-01-05T22:18:41.495Z"),
                updated: t("2025-01-05T22:18:41.495Z"),
                // Azure's pools send no sessionpadIsolation, nor what they run.
                isolation: None,
                container_type: None,
                service_limits: Vec::new(),
                image: None,
            }
        );
    }
}

#[tokio::test]
async fn management_calls_in_every_version() {
    for v in ApiVersion::ALL {
        let stopped = "Session testSessionIdentifier in session pool testSessionPool stopped.";
        let rec = Recorder::start(vec![]).await;
        // §5.2: absolute nextLink without api-version, pages of up to 300.
        let page1 = json!({"value": [serde_json::from_str::<Value>(VIEW).unwrap()], "count": 2,
            "nextLink": format!("{}{POOL}/.management/listSessions?skip=300", rec.origin)});
        let mut page2: Value = serde_json::from_str(VIEW).unwrap();
        page2["identifier"] = json!("user-456");
        rec.tape.script.lock().unwrap().extend([
            answer(200, VIEW),
            answer(200, stopped),
            answer(200, &page1.to_string()),
            answer(
                200,
                &json!({"value": [page2], "count": 2, "nextLink": null}).to_string(),
            ),
        ]);
        let client = rec.client(v);
        let got = client.management_get_session(ID).await;
        let stop = client.management_stop_session(ID).await;
        let list = client.management_list_sessions().await;
        if !sessions(v) {
            assert_unsupported(got, v, &rec);
            assert_unsupported(stop, v, &rec);
            assert_unsupported(list, v, &rec);
            continue;
        }
        assert_eq!(got.unwrap(), view_value("user-123"));
        assert_eq!(stop.unwrap(), stopped);
        assert_eq!(
            list.unwrap(),
            [view_value("user-123"), view_value("user-456")]
        );
        assert_eq!(
            rec.lines(),
            [
                format!("POST {POOL}/.management/getSession?{}", q(v)),
                format!("POST {POOL}/.management/stopSession?{}", q(v)),
                format!("POST {POOL}/.management/listSessions?api-version={v}"),
                format!("POST {POOL}/.management/listSessions?skip=300&api-version={v}"),
            ]
        );
        for r in rec.requests() {
            assert_eq!((r.header("content-length"), r.body.len()), (Some("0"), 0));
        }
    }
}

// ---- errors and retries (§6) ----------------------------------------------------

#[tokio::test]
async fn error_answers_become_typed_errors() {
    let v = ApiVersion::V2025_10_02;
    let rec = Recorder::start(vec![
        error(
            400,
            "SessionPropertiesMissing",
            "The properties wrapper is not supported.",
        ),
        error(401, "Unauthorized", "token expired"),
        error(403, "Forbidden", "missing role"),
        error(404, "NotFound", "no such pool"),
        error(400, "SessionWithIdentifierNotFound", "session not found"),
        answer(200, "<html>not json</html>"),
    ])
    .await;
    let c = rec.client(v);
    let e = c.execute(ID, "1", LIMIT).await.unwrap_err();
    let ClientError::Service {
        status: 400,
        code,
        message,
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!(
        (code.as_str(), message.as_str()),
        (
            "SessionPropertiesMissing",
            "The properties wrapper is not supported."
        )
    );
    let e = c.list_files(ID, None, false).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::Unauthorized { message: Some(m), .. } if m == "token expired"),
        "{e:?}"
    );
    let e = c.pool_metadata().await.unwrap_err();
    assert!(matches!(e, ClientError::Forbidden { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("Azure ContainerApps Session Executor")
    );
    let e = c.list_sessions().await.unwrap_err();
    assert!(matches!(e, ClientError::NotFound { .. }), "{e:?}");
    let e = c.session_info(ID).await.unwrap_err();
    assert!(
        matches!(&e, ClientError::Service { code, .. } if code == "SessionWithIdentifierNotFound"),
        "{e:?}"
    );
    let e = c.file_info(ID, "x").await.unwrap_err();
    assert!(matches!(e, ClientError::Malformed(_)), "{e:?}");
    // None of these is transient: one request each.
    assert_eq!(rec.requests().len(), 6);
}

#[tokio::test]
async fn the_services_413_is_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("x.bin");
    std::fs::write(&local, [0u8; 10]).unwrap();
    let rec = Recorder::start(vec![error(413, "FileTooLarge", "too big")]).await;
    let r = rec
        .client(ApiVersion::V2024_02_02)
        .upload_file(ID, &local, "x.bin", None, &no_progress)
        .await;
    assert!(matches!(r, Err(ClientError::TooLarge { .. })), "{r:?}");
}

#[tokio::test]
async fn transient_failures_of_idempotent_calls_are_retried() {
    let b_list = format!(r#"{{"value":[{B_FILE}],"nextLink":null}}"#);
    for v in ApiVersion::ALL {
        let rec = Recorder::start(vec![
            error(503, "ServiceUnavailable", "try again"),
            answer(200, if family_b(v) { &b_list } else { A_LIST }),
        ])
        .await;
        let files = rec.client(v).list_files(ID, None, false).await.unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(rec.lines(), vec![format!("GET {POOL}/files?{}", q(v)); 2]);
    }
    // 429 with Retry-After: waited out, then retried.
    let rec = Recorder::start(vec![
        error(429, "TooManyRequests", "slow down").header("retry-after", "1"),
        answer(200, "ok"),
    ])
    .await;
    let started = Instant::now();
    let n = rec
        .client(ApiVersion::V2024_08_02)
        .download_file(ID, "a", &mut Vec::new(), &|_, _| {})
        .await
        .unwrap();
    assert_eq!((n, rec.requests().len()), (2, 2));
    assert!(started.elapsed() >= Duration::from_secs(1));
    // Gives up after 3 retries with the last answer's error.
    let rec = Recorder::start(vec![error(502, "BadGateway", "down"); 5]).await;
    let e = rec
        .client(ApiVersion::V2025_02_02)
        .pool_metadata()
        .await
        .unwrap_err();
    assert!(
        matches!(e, ClientError::Service { status: 502, .. }),
        "{e:?}"
    );
    assert_eq!(rec.requests().len(), 4);
}

#[tokio::test]
async fn executions_uploads_and_deletes_are_never_retried() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("x");
    std::fs::write(&local, b"x").unwrap();
    let busy = || error(429, "TooManyRequests", "pool full").header("retry-after", "5");
    let rec = Recorder::start(vec![
        busy(),
        busy(),
        busy(),
        busy(),
        error(503, "ServiceUnavailable", "down"),
    ])
    .await;
    let c = rec.client(ApiVersion::V2025_10_02);
    let e = c.execute(ID, "1", LIMIT).await.unwrap_err();
    assert!(
        matches!(e, ClientError::TooManyRequests { retry_after: Some(d) } if d == Duration::from_secs(5)),
        "{e:?}"
    );
    assert!(
        c.upload_file(ID, &local, "x", None, &no_progress)
            .await
            .is_err()
    );
    assert!(c.submit_execution(ID, "1", LIMIT).await.is_err());
    assert!(c.delete_file(ID, "x").await.is_err());
    assert!(c.delete_session(ID).await.is_err());
    assert_eq!(rec.requests().len(), 5);
}

#[tokio::test]
async fn a_refused_connection_is_unreachable_after_retries() {
    // Bind and drop a listener to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = SessionClient::new(Target {
        endpoint: format!("http://127.0.0.1:{port}"),
        api_version: ApiVersion::V2025_10_02,
        token: None,
    })
    .unwrap();
    let started = Instant::now();
    let e = client.list_files(ID, None, false).await.unwrap_err();
    assert!(matches!(e, ClientError::Unreachable { .. }), "{e:?}");
    // 250 + 500 + 1000 ms of backoff.
    assert!(started.elapsed() >= Duration::from_millis(1750));
}
