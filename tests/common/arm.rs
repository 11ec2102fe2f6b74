#![allow(dead_code)] // each test binary uses a part
//! A loopback stand-in of an Azure session pool: the data plane
//! (`aca-api.md` §4.4: `metadata`, `listSessions`, `DELETE session`) and Azure
//! Resource Manager's wire for the pool's resource (`GET
//! .../providers/Microsoft.App/sessionPools/{name}`, answering the spec's own
//! example bodies from `tests/fixtures/arm/`, and its error bodies
//! `{"error":{"code","message"}}` with ARM's headers). The binary is pointed at
//! it with `SESSIONPAD_ARM_ENDPOINT` (issue 28 item 4).

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

pub const SUB: &str = "34adfa4f-cedf-4dc0-ba29-b6d1a69ab345";
pub const POOL: &str = "testsessionpool";
pub const DP_TOKEN: &str = "dp-token";
pub const ARM_TOKEN: &str = "arm-token";
pub const GET: &str = include_str!("../fixtures/arm/2025-10-02-preview_SessionPools_Get.json");
pub const IN_PROGRESS: &str =
    include_str!("../fixtures/arm/2025-10-02-preview_SessionPools_Get_InProgress.json");
pub const MCP: &str =
    include_str!("../fixtures/arm/2025-10-02-preview_SessionPools_McpServer_CreateOrUpdate.json");
pub const STABLE: &str = include_str!("../fixtures/arm/2026-01-01_SessionPools_Get.json");

/// What ARM answers.
#[derive(Clone)]
pub enum Arm {
    /// The `200` body of a spec example.
    Example(&'static str),
    /// 403 `AuthorizationFailed`.
    Forbidden,
    /// 404 `ResourceNotFound`.
    NotFound,
}

pub struct Stand {
    pub arm: Mutex<Arm>,
    /// `(api-version, Authorization)` of each ARM request.
    pub arm_seen: Mutex<Vec<(String, String)>>,
    /// `Authorization` of each data-plane request.
    pub dp_seen: Mutex<Vec<String>>,
    /// The sessions: identifier and age in seconds.
    pub sessions: Mutex<Vec<(String, i64)>>,
    /// The identifiers `DELETE session` ended.
    pub deleted: Mutex<Vec<String>>,
}

pub fn body(example: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(example).unwrap();
    v["responses"]["200"]["body"].clone()
}

/// ARM's answer: its JSON content type and the request ids it sends.
fn arm_json(status: StatusCode, body: &serde_json::Value, failure: bool) -> Response {
    let mut resp = (status, body.to_string()).into_response();
    let h = resp.headers_mut();
    h.insert(
        "content-type",
        "application/json; charset=utf-8".parse().unwrap(),
    );
    for k in [
        "x-ms-request-id",
        "x-ms-correlation-request-id",
        "x-ms-routing-request-id",
    ] {
        h.insert(k, "6a1e5a33-0d9f-4d2a-9c44-9b0f2b0b9a11".parse().unwrap());
    }
    h.insert("cache-control", "no-cache".parse().unwrap());
    h.insert("expires", "-1".parse().unwrap());
    h.insert("pragma", "no-cache".parse().unwrap());
    if failure {
        h.insert("x-ms-failure-cause", "gateway".parse().unwrap());
    }
    resp
}

fn arm_answer(stand: &Stand, q: &HashMap<String, String>, headers: &HeaderMap) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let version = q.get("api-version").cloned().unwrap_or_default();
    stand.arm_seen.lock().unwrap().push((version, auth));
    let scope = format!(
        "/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.App/sessionPools/{POOL}"
    );
    match stand.arm.lock().unwrap().clone() {
        Arm::Example(example) => arm_json(StatusCode::OK, &body(example), false),
        Arm::Forbidden => arm_json(
            StatusCode::FORBIDDEN,
            &serde_json::json!({"error": {
                "code": "AuthorizationFailed",
                "message": format!("The client 'someone@example.com' with object id \
                    '0b9f6bd2-4b43-4b5e-8d8e-4e4c1e0f9a11' does not have authorization to perform \
                    action 'Microsoft.App/sessionPools/read' over scope '{scope}' or the scope is \
                    invalid. If access was recently granted, please refresh your credentials.")
            }}),
            true,
        ),
        Arm::NotFound => arm_json(
            StatusCode::NOT_FOUND,
            &serde_json::json!({"error": {
                "code": "ResourceNotFound",
                "message": format!("The Resource 'Microsoft.App/sessionPools/{POOL}' under resource \
                    group 'rg' was not found. For more details please go to \
                    https://aka.ms/ARMResourceNotFoundFix")
            }}),
            true,
        ),
    }
}

fn data_plane(
    stand: &Stand,
    method: &Method,
    op: &str,
    q: &HashMap<String, String>,
    headers: &HeaderMap,
) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    stand.dp_seen.lock().unwrap().push(auth.to_string());
    match (method.as_str(), op) {
        ("GET", "metadata") => axum::Json(serde_json::json!({
            "runtimes": [{"name": "python", "version": "3.12.9"}],
            "preInstalledPackages": [{"name": "numpy", "version": "2.2.3"}],
            "jupyterKernel": {"name": "python3", "version": "6.29.5"}
        }))
        .into_response(),
        ("GET", "listSessions") => {
            let now = chrono::Utc::now();
            let list: Vec<_> = stand
                .sessions
                .lock()
                .unwrap()
                .iter()
                .map(|(id, age)| {
                    let created = now - chrono::Duration::seconds(*age);
                    serde_json::json!({
                        "identifier": id,
                        "createdAt": created.to_rfc3339(),
                        "lastAccessedAt": created.to_rfc3339(),
                        "expireAt": (now + chrono::Duration::seconds(300)).to_rfc3339(),
                    })
                })
                .collect();
            axum::Json(serde_json::json!({ "sessions": list })).into_response()
        }
        ("DELETE", "session") => {
            let id = q.get("identifier").cloned().unwrap_or_default();
            stand.sessions.lock().unwrap().retain(|(s, _)| *s != id);
            stand.deleted.lock().unwrap().push(id);
            StatusCode::NO_CONTENT.into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn route(
    State(stand): State<Arc<Stand>>,
    method: Method,
    uri: Uri,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let arm = format!(
        "/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.App/sessionPools/{POOL}"
    );
    let pool = format!("/subscriptions/{SUB}/resourceGroups/rg/sessionPools/{POOL}/");
    let path = uri.path();
    if path == arm && method == Method::GET {
        return arm_answer(&stand, &q, &headers);
    }
    match path.strip_prefix(&pool) {
        Some(op) => data_plane(&stand, &method, op, &q, &headers),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The stand-in, served on loopback by a thread of its own; its base URL.
pub fn stand_in(arm: Arm, sessions: &[(&str, i64)]) -> (Arc<Stand>, String) {
    let stand = Arc::new(Stand {
        arm: Mutex::new(arm),
        arm_seen: Mutex::default(),
        dp_seen: Mutex::default(),
        sessions: Mutex::new(
            sessions
                .iter()
                .map(|(s, a)| ((*s).to_string(), *a))
                .collect(),
        ),
        deleted: Mutex::default(),
    });
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .fallback(route)
        .with_state(stand.clone());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    (stand, base)
}

/// `sessionpad ARGS` at the stand-in's pool, with `env` set (stdin closed).
pub fn run(base: &str, data: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let endpoint = format!("{base}/subscriptions/{SUB}/resourceGroups/rg/sessionPools/{POOL}");
    let mut cmd = crate::common::sessionpad_command(data);
    cmd.args(["--endpoint", &endpoint])
        .args(args)
        .env("SESSIONPAD_ARM_ENDPOINT", base)
        .env_remove("SESSIONPAD_ARM_TOKEN")
        .env_remove("SESSIONPAD_ARM_API_VERSION")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}
