//! A real MCP client, the official `mcp` Python SDK (`tests/compat/mcp_client.py`,
//! in a venv the test builds once from `tests/compat/requirements-mcp.txt`),
//! against the real binary: the pool's MCP endpoint of `sessionpad serve`
//! (streamable HTTP with `x-ms-apikey`) and `sessionpad mcp` (stdio), on the
//! serve found through its discovery file and on one named by `--endpoint`.
//! Each run's commands are in the pool's ledger under the name the client gave
//! in `initialize` (`acme-agent/0.3 via MCP`), and its environment is then
//! found by its identifier as a person would: `sessionpad files ls
//! --identifier <environmentId>` and `sessionpad exec`.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{client_env, serve_command, spawn_serve};

const TOKEN: &str = "mcp-test-token";
const KEY: &str = "mcp-test-key-1234";

/// A serve with a known token and MCP key, its data in `data`; its endpoint.
fn serve(data: &Path) -> (common::Served, String) {
    let mut cmd = serve_command(data, TOKEN, 1);
    cmd.args(["--mcp-key", KEY])
        .stderr(std::process::Stdio::null());
    let (child, endpoint) = spawn_serve(cmd);
    (common::Served(child), endpoint)
}

/// Runs the client script with `env`; returns its output after checking it
/// passed, and the environment id it printed.
fn run_client(env: &[(&str, &str)]) -> (Output, String) {
    let python = client_env("mcp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/mcp_client.py");
    let mut cmd = Command::new(python);
    cmd.arg(script);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("MCP OK"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let environment = stdout
        .lines()
        .find_map(|l| l.strip_prefix("ENVIRONMENT "))
        .unwrap()
        .to_string();
    (out, environment)
}

/// How the pool records the client script's commands: the name and version
/// it gave in `initialize` (`clientInfo`), said to have come through MCP.
const RECORDED_CLIENT: &str = "acme-agent/0.3 via MCP";

/// The calls of `environment` in the ledger of the serve whose data directory
/// is `data` are the client script's five commands (two cells, a failed one,
/// two shell commands), each recorded under [`RECORDED_CLIENT`].
fn assert_recorded_as_the_mcp_host(data: &Path, environment: &str) {
    let mut calls = Vec::new();
    for _ in 0..50 {
        calls = common::log_json(data, &[environment]);
        if calls.len() >= 5 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(calls.len(), 5, "{calls:#?}");
    for c in &calls {
        assert_eq!(c["client"], RECORDED_CLIENT, "{c}");
    }
}

/// `sessionpad ARGS` with the serve's data directory (so it finds the serve).
fn sessionpad(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args(args)
        .env("SESSIONPAD_DATA_DIR", data)
        .output()
        .unwrap()
}

/// The environment's session, by its identifier, through the CLI: the file the
/// client wrote, and the state it left.
fn open_by_identifier(data: &Path, environment: &str) {
    let files = sessionpad(data, &["files", "ls", "--identifier", environment]);
    let listing = String::from_utf8_lossy(&files.stdout);
    assert!(
        files.status.success() && listing.contains("from-mcp.txt"),
        "{listing}\n{}",
        String::from_utf8_lossy(&files.stderr)
    );
    let exec = sessionpad(
        data,
        &["exec", "--identifier", environment, "-c", "print(x)"],
    );
    assert_eq!(
        String::from_utf8_lossy(&exec.stdout),
        "42\n",
        "{}",
        String::from_utf8_lossy(&exec.stderr)
    );
}

#[test]
fn the_mcp_sdk_uses_the_pools_mcp_endpoint_over_http() {
    let data = tempfile::tempdir().unwrap();
    let (_server, endpoint) = serve(data.path());
    let url = format!("{endpoint}/mcp");
    let (_, environment) = run_client(&[("MODE", "http"), ("URL", &url), ("KEY", KEY)]);
    assert_recorded_as_the_mcp_host(data.path(), &environment);
    open_by_identifier(data.path(), &environment);
}

#[test]
fn the_mcp_sdk_with_a_wrong_key_or_the_bearer_token_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let (_server, endpoint) = serve(data.path());
    let python = client_env("mcp");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/mcp_client.py");
    for key in ["wrong-key", TOKEN] {
        let out = Command::new(&python)
            .arg(&script)
            .env("MODE", "http")
            .env("URL", format!("{endpoint}/mcp"))
            .env("KEY", key)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The SDK reports the 401 as an error response of `initialize` (the
        // status itself is checked on the wire in `mcp_server.rs`).
        assert!(!out.status.success() && !all.contains("MCP OK"), "{all}");
        assert!(all.contains("MCPError"), "{all}");
    }
}

/// The client script over stdio: `sessionpad ARGS` (a JSON list) started with
/// data directory `data`.
fn over_stdio(args: &str, data: &Path) -> (Output, String) {
    let data = data.to_string_lossy().into_owned();
    run_client(&[
        ("MODE", "stdio"),
        ("COMMAND", env!("CARGO_BIN_EXE_sessionpad")),
        ("ARGS", args),
        ("SESSIONPAD_DATA_DIR", &data),
    ])
}

#[test]
fn sessionpad_mcp_serves_the_tools_over_stdio_on_the_pool_it_finds() {
    let data = tempfile::tempdir().unwrap();
    let (_server, _endpoint) = serve(data.path());
    let (out, environment) = over_stdio(r#"["mcp"]"#, data.path());
    // It said on standard error which pool, and how to open a session.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("local (serve, pid") && stderr.contains("--identifier <environmentId>"),
        "{stderr}"
    );
    assert_recorded_as_the_mcp_host(data.path(), &environment);
    open_by_identifier(data.path(), &environment);
}

#[test]
fn sessionpad_mcp_serves_the_tools_over_stdio_on_an_endpoint() {
    let data = tempfile::tempdir().unwrap();
    let (_server, endpoint) = serve(data.path());
    // Another data directory: nothing to discover, the endpoint is named.
    let elsewhere = tempfile::tempdir().unwrap();
    let args = serde_json::json!(["mcp", "--endpoint", endpoint, "--token", TOKEN]).to_string();
    let (_, environment) = over_stdio(&args, elsewhere.path());
    assert_recorded_as_the_mcp_host(data.path(), &environment);
    open_by_identifier(data.path(), &environment);
}
