//! Published dynamic-sessions clients, unchanged, against the real `sessionpad serve`
//! binary: the compatibility bar of the local pool. The test builds the client's
//! own virtual environment (once, in the cache directory) from
//! `tests/compat/requirements-*.txt`.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::Path;
use std::process::Command;

mod common;
use common::{client_env, serve};

/// Runs the LangChain client `script` (in `tests/compat/`) against a fresh
/// `sessionpad serve` with `extra` arguments, and asserts it printed `ok`.
fn langchain_against_serve(script: &str, extra: &[&str], ok: &str) {
    let python = client_env("langchain");
    let data = tempfile::tempdir().unwrap();
    let token = "compat-token-1234";
    let mut cmd = common::serve_command(data.path(), token, 1);
    cmd.args(extra).stderr(std::process::Stdio::null());
    let (mut server, endpoint) = common::spawn_serve(cmd);
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/compat")
        .join(script);
    let out = Command::new(python)
        .arg(script)
        .env("ENDPOINT", &endpoint)
        .env("TOKEN", token)
        .output()
        .unwrap();
    common::end_gracefully(&mut server);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(ok),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

#[test]
fn langchain_sessions_python_repl_tool_works_unchanged() {
    langchain_against_serve("langchain_client.py", &[], "LANGCHAIN OK");
}

#[test]
fn langchain_sessions_bash_tool_works_unchanged_on_a_shell_pool() {
    langchain_against_serve(
        "langchain_bash_client.py",
        &["--container-type", "shell"],
        "LANGCHAIN BASH OK",
    );
}

/// autogen-ext's `ACADynamicSessionsCodeExecutor` (issue 28): it lists the
/// session's packages with `import pkg_resources` before its first block, so
/// every check failed on an environment whose setuptools had dropped it.
#[test]
fn autogen_aca_dynamic_sessions_code_executor_passes_every_check() {
    let python = client_env("autogen");
    let data = tempfile::tempdir().unwrap();
    let token = "compat-token-1234";
    let mut cmd = common::serve_command(data.path(), token, 1);
    cmd.stderr(std::process::Stdio::null());
    let (mut server, endpoint) = common::spawn_serve(cmd);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/autogen_client.py");
    let out = Command::new(python)
        .arg(script)
        .env("ENDPOINT", &endpoint)
        .env("TOKEN", token)
        .output()
        .unwrap();
    common::end_gracefully(&mut server);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("AUTOGEN OK"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

/// Runs one early-error client script against a fresh `sessionpad serve`; returns
/// its exit success and its output.
fn early_errors(program: &Path, script: &str, client: Option<&str>) -> (bool, String) {
    let data = tempfile::tempdir().unwrap();
    let token = "early-token-1234";
    let (mut server, endpoint) = serve(data.path(), token);
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/compat")
        .join(script);
    let mut cmd = Command::new(program);
    cmd.arg(script)
        .env("ENDPOINT", &endpoint)
        .env("TOKEN", token)
        .env("REPEAT", "20");
    if let Some(client) = client {
        cmd.env("CLIENT", client);
    }
    let out = cmd.output().unwrap();
    common::end_gracefully(&mut server);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{text}");
    (
        out.status.success() && text.contains("EARLY ERRORS OK"),
        text,
    )
}

/// 401, 400 and 413 answered before (or while) a large upload is read reach
/// `httpx.AsyncClient` (Semantic Kernel) and `aiohttp` (autogen) as those errors,
/// 20 times out of 20, never as a reset connection.
#[test]
fn early_errors_reach_httpx_and_aiohttp() {
    let python = client_env("http");
    let runs: Vec<(bool, String)> = ["httpx", "aiohttp"]
        .into_iter()
        .map(|client| early_errors(&python, "early_errors_client.py", Some(client)))
        .collect();
    assert!(runs.iter().all(|(ok, _)| *ok), "see the counts above");
}

/// The same with Node's built-in `fetch` (undici); node 20 is on the machine.
#[test]
fn early_errors_reach_node_fetch() {
    let (ok, _) = early_errors(Path::new("node"), "early_errors_fetch.mjs", None);
    assert!(ok, "see the counts above");
}
