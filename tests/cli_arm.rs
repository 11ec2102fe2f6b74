//! The pool card of an Azure session pool (issue 28 item 4), through the real
//! binary: `pool info` against a loopback stand-in that speaks both the data
//! plane (`aca-api.md` §4.4: `metadata`, `listSessions`, `DELETE session`) and
//! Azure Resource Manager's wire (`GET .../providers/Microsoft.App/sessionPools/{name}`,
//! answering the spec's own example bodies from `tests/fixtures/arm/`, its error
//! bodies `{"error":{"code","message"}}` with ARM's headers). The binary is
//! pointed at it with `SESSIONPAD_ARM_ENDPOINT`; its ARM token is
//! `SESSIONPAD_ARM_TOKEN`, or comes from the credential (a fake `az`).
//! Also `sessions ls|rm --older-than` against the stand-in's fixed creation times.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

const SUB: &str = "34adfa4f-cedf-4dc0-ba29-b6d1a69ab345";
const POOL: &str = "testsessionpool";
const DP_TOKEN: &str = "dp-token";
const ARM_TOKEN: &str = "arm-token";
const GET: &str = include_str!("fixtures/arm/2025-10-02-preview_SessionPools_Get.json");
const IN_PROGRESS: &str =
    include_str!("fixtures/arm/2025-10-02-preview_SessionPools_Get_InProgress.json");
const MCP: &str =
    include_str!("fixtures/arm/2025-10-02-preview_SessionPools_McpServer_CreateOrUpdate.json");
const STABLE: &str = include_str!("fixtures/arm/2026-01-01_SessionPools_Get.json");

/// What ARM answers.
#[derive(Clone)]
enum Arm {
    /// The `200` body of a spec example.
    Example(&'static str),
    /// 403 AuthorizationFailed.
    Forbidden,
    /// 404 ResourceNotFound.
    NotFound,
}

struct Stand {
    arm: Mutex<Arm>,
    /// `(api-version, Authorization)` of each ARM request.
    arm_seen: Mutex<Vec<(String, String)>>,
    /// `Authorization` of each data-plane request.
    dp_seen: Mutex<Vec<String>>,
    /// The sessions: identifier and age in seconds.
    sessions: Mutex<Vec<(String, i64)>>,
    /// The identifiers `DELETE session` ended.
    deleted: Mutex<Vec<String>>,
}

fn body(example: &str) -> serde_json::Value {
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
fn stand_in(arm: Arm, sessions: &[(&str, i64)]) -> (Arc<Stand>, String) {
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
fn run(base: &str, data: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let endpoint = format!("{base}/subscriptions/{SUB}/resourceGroups/rg/sessionPools/{POOL}");
    let mut cmd = common::sessionpad_command(data);
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

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every string and number of `v`.
fn leaves(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Number(n) => out.push(n.to_string()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| leaves(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| leaves(v, out)),
        serde_json::Value::Bool(_) | serde_json::Value::Null => {}
    }
}

#[test]
fn pool_info_shows_every_field_of_the_spec_examples() {
    let data = tempfile::tempdir().unwrap();
    for (example, version) in [
        (GET, "2025-10-02-preview"),
        (IN_PROGRESS, "2025-10-02-preview"),
        (MCP, "2025-10-02-preview"),
        (STABLE, "2026-01-01"),
    ] {
        let (stand, base) = stand_in(Arm::Example(example), &[("a", 10), ("b", 20)]);
        let env = [
            ("SESSIONPAD_ARM_TOKEN", ARM_TOKEN),
            ("SESSIONPAD_ARM_API_VERSION", version),
        ];
        let out = run(
            &base,
            data.path(),
            &env,
            &["--token", DP_TOKEN, "pool", "info"],
        );
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
        assert!(
            stdout.contains(&format!("session pool (ARM, api-version {version}):")),
            "{stdout}"
        );
        let mut values = Vec::new();
        leaves(&body(example), &mut values);
        for v in values {
            assert!(stdout.contains(&v), "{v:?} is not in pool info:\n{stdout}");
        }
        // "N of max alive": the sessions the data plane lists, of maxConcurrentSessions.
        let max =
            body(example)["properties"]["scaleConfiguration"]["maxConcurrentSessions"].clone();
        assert!(stdout.contains(&format!("2 of {max} alive")), "{stdout}");
        // The data plane's metadata is still there.
        assert!(stdout.contains("numpy 2.2.3"), "{stdout}");
        // ARM got its own token and the api-version; the data plane its own.
        let seen = stand.arm_seen.lock().unwrap().clone();
        assert_eq!(seen, [(version.to_string(), format!("Bearer {ARM_TOKEN}"))]);
        assert!(
            stand
                .dp_seen
                .lock()
                .unwrap()
                .iter()
                .all(|a| *a == format!("Bearer {DP_TOKEN}"))
        );

        let out = run(
            &base,
            data.path(),
            &env,
            &["--token", DP_TOKEN, "--json", "pool", "info"],
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
        assert_eq!(v["session_pool"]["resource"], body(example));
        assert_eq!(v["session_pool"]["api_version"], version);
        assert_eq!(v["session_pool"]["alive"], 2);
    }
}

#[test]
fn a_403_from_arm_names_the_missing_role_and_a_404_the_place() {
    let data = tempfile::tempdir().unwrap();
    let env = [("SESSIONPAD_ARM_TOKEN", ARM_TOKEN)];
    let (stand, base) = stand_in(Arm::Forbidden, &[]);
    let out = run(
        &base,
        data.path(),
        &env,
        &["--token", DP_TOKEN, "pool", "info"],
    );
    let stdout = text(&out.stdout);
    // The data plane's metadata is still printed: ARM's refusal is said, not fatal.
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("numpy 2.2.3"), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("session pool (ARM): "))
        .unwrap_or_else(|| panic!("no ARM line in\n{stdout}"));
    for words in [
        "403 AuthorizationFailed",
        "\"Reader\" role",
        "Microsoft.App/sessionPools/read",
        "\"Azure ContainerApps Session Executor\" role of the data plane does not include it",
    ] {
        assert!(line.contains(words), "{words:?} not in {line}");
    }
    *stand.arm.lock().unwrap() = Arm::NotFound;
    let out = run(
        &base,
        data.path(),
        &env,
        &["--token", DP_TOKEN, "pool", "info"],
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "ARM has no session pool {POOL} in resource group rg of subscription {SUB} (404 ResourceNotFound)"
        )),
        "{stdout}"
    );
    let out = run(
        &base,
        data.path(),
        &env,
        &["--token", DP_TOKEN, "--json", "pool", "info"],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["session_pool"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("404")),
        "{v}"
    );
}

/// A fake `az` in `dir`: prints a token for whichever resource it is asked,
/// `arm-az` for management.azure.com, `dp-az` for anything else, and records
/// its arguments in `dir/calls`.
fn fake_az(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let d = dir.display();
    let az = format!(
        r#"#!/bin/sh
echo "$*" >> '{d}/calls'
case "$*" in *management.azure.com*) t=arm-az ;; *) t=dp-az ;; esac
exp=$(( $(date +%s) + 3600 ))
printf '{{"accessToken": "%s", "expiresOn": "2030-01-01 00:00:00.000000", "expires_on": %s, "subscription": "s", "tenant": "t", "tokenType": "Bearer"}}\n' "$t" "$exp"
"#
    );
    let azd = "#!/bin/sh\necho 'ERROR: not logged in' >&2\nexit 1\n";
    for (name, body) in [("az", az.as_str()), ("azd", azd)] {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn the_arm_token_comes_from_the_pools_own_credential() {
    let data = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    fake_az(bin.path());
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (stand, base) = stand_in(Arm::Example(GET), &[]);
    let out = run(
        &base,
        data.path(),
        &[("PATH", &path)],
        &["--auth", "az", "pool", "info"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("egress: on"),
        "{}",
        text(&out.stdout)
    );
    let seen = stand.arm_seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1, "Bearer arm-az");
    assert!(
        stand
            .dp_seen
            .lock()
            .unwrap()
            .iter()
            .all(|a| a == "Bearer dp-az")
    );
    let calls = std::fs::read_to_string(bin.path().join("calls")).unwrap();
    assert!(calls.contains("https://management.azure.com"), "{calls}");
    assert!(calls.contains("https://dynamicsessions.io"), "{calls}");
}

#[test]
fn sessions_older_than_are_listed_and_ended_after_asking() {
    let data = tempfile::tempdir().unwrap();
    let env = [("SESSIONPAD_ARM_TOKEN", ARM_TOKEN)];
    let (stand, base) = stand_in(
        Arm::Example(GET),
        &[("young", 60), ("old", 2 * 3600), ("oldest", 3 * 3600)],
    );
    let flags = |args: &[&'static str]| {
        let mut all = vec!["--token", DP_TOKEN];
        all.extend_from_slice(args);
        all
    };
    let ls = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "ls", "--older-than", "1h"]),
    );
    let listed = text(&ls.stdout);
    assert!(ls.status.success(), "{}", text(&ls.stderr));
    let ids: Vec<_> = listed
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    assert_eq!(ids, ["oldest", "old"], "{listed}");
    let none = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "ls", "--older-than", "4h"]),
    );
    assert!(text(&none.stdout).is_empty());
    assert!(
        text(&none.stderr).contains("no sessions older than 4h"),
        "{}",
        text(&none.stderr)
    );
    // Nobody to ask: refused, naming --yes, and nothing ended.
    let refused = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "rm", "--older-than", "1h"]),
    );
    let err = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("--yes") && err.contains("2 sessions"), "{err}");
    assert!(stand.deleted.lock().unwrap().is_empty());
    // A duration that is not one is refused by the parser.
    let bad = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "ls", "--older-than", "an hour"]),
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("30m, 1h, 2d"),
        "{}",
        text(&bad.stderr)
    );
    // Identifiers and --older-than do not mix.
    let both = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "rm", "young", "--older-than", "1h", "--yes"]),
    );
    assert_eq!(both.status.code(), Some(2));
    assert!(stand.deleted.lock().unwrap().is_empty());
    let yes = run(
        &base,
        data.path(),
        &env,
        &flags(&["--json", "sessions", "rm", "--older-than", "1h", "--yes"]),
    );
    assert!(yes.status.success(), "{}", text(&yes.stderr));
    let v: serde_json::Value = serde_json::from_slice(&yes.stdout).unwrap();
    let ended: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["deleted"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ended, ["oldest", "old"]);
    assert_eq!(*stand.deleted.lock().unwrap(), ["oldest", "old"]);
}
