//! Published dynamic-sessions clients, unchanged, through the recording proxy
//! (`sessionpad serve --upstream`) in front of a second `sessionpad serve`
//! standing in for Azure: the compatibility scripts of `tests/compat/` that run
//! against `serve` directly (`compat_clients.rs`) run here through the proxy,
//! and `log --json` of the proxy's ledger gives back exactly the calls each
//! client made, with the client's own User-Agent.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "common/proxy.rs"]
mod proxy_support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use common::log_json;
use proxy_support::{PROXY_TOKEN, proxied};

/// Runs the client `script` of `tests/compat/` with `python` against a proxy
/// in front of an upstream serve started with `extra`; asserts it printed
/// `ok`; returns its standard output and the proxy's recorded calls.
fn through_proxy(python: &Path, script: &str, extra: &[&str], ok: &str) -> (String, Vec<Value>) {
    let (_up_data, proxy_data, (up, up_endpoint), (px, endpoint)) = proxied(extra);
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/compat")
        .join(script);
    let out = Command::new(python)
        .arg(script)
        .env("ENDPOINT", &endpoint)
        .env("TOKEN", PROXY_TOKEN)
        .output()
        .unwrap();
    px.terminate();
    drop(up);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(ok),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let calls = log_json(proxy_data.path(), &["--all"]);
    for c in &calls {
        assert_eq!(c["pool"], up_endpoint.as_str(), "{c}");
    }
    (stdout, calls)
}

fn kinds(calls: &[Value]) -> Vec<&str> {
    calls.iter().map(|c| c["kind"].as_str().unwrap()).collect()
}

fn codes(calls: &[Value]) -> Vec<&str> {
    calls.iter().filter_map(|c| c["code"].as_str()).collect()
}

#[test]
fn langchain_sessions_python_repl_tool_works_unchanged_through_the_proxy() {
    let python = common::client_env("langchain");
    let (_, calls) = through_proxy(&python, "langchain_client.py", &[], "LANGCHAIN OK");
    // The sequence langchain_client.py sends (listing and deleting the
    // session are forwarded, not recorded).
    assert_eq!(
        kinds(&calls),
        [
            "code", "code", "code", "code", "code", "upload", "download", "code", "code",
            "download"
        ],
        "{calls:#?}"
    );
    assert_eq!(
        codes(&calls),
        [
            "x = 6*7\nprint('hi')",
            "x",
            "1/0",
            "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
            "import matplotlib.pyplot as plt\nplt.plot([1])\nplt.show()",
            "open('/mnt/data/data.csv').read()",
            "open('/mnt/data/made by code.txt', 'w').write('from the session')",
        ]
    );
    assert!(
        calls.iter().all(|c| c["client"]
            .as_str()
            .unwrap()
            .starts_with("langchain-azure-dynamic-sessions/")),
        "{calls:#?}"
    );
    assert_eq!(calls[1]["result"]["json"], 42);
    assert_eq!(calls[2]["status"], "Failed");
    assert_eq!(calls[3]["images"][0]["format"], "png", "{}", calls[3]);
    assert_eq!(calls[5]["file"]["name"], "data.csv");
    assert_eq!(calls[5]["file"]["size"], 8);
    assert_eq!(calls[5]["file"]["sha256"], calls[6]["file"]["sha256"]);
    assert_eq!(calls[9]["file"]["name"], "made by code.txt");
}

#[test]
fn langchain_sessions_bash_tool_works_unchanged_through_the_proxy() {
    let python = common::client_env("langchain");
    let (_, calls) = through_proxy(
        &python,
        "langchain_bash_client.py",
        &["--container-type", "shell"],
        "LANGCHAIN BASH OK",
    );
    let shell: Vec<&Value> = calls.iter().filter(|c| c["kind"] == "shell").collect();
    let first: Vec<(&str, i64)> = shell[..3]
        .iter()
        .map(|c| {
            (
                c["code"].as_str().unwrap(),
                c["exit_code"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        first,
        [
            ("echo hello", 0),
            ("echo oops >&2; exit 3", 3),
            ("ls /no/such/folder", 2)
        ]
    );
    assert_eq!(shell[1]["stderr"], "oops\n");
    assert_eq!(
        kinds(&calls),
        [
            "shell", "shell", "shell", "upload", "shell", "shell", "download", "download", "shell"
        ],
        "{calls:#?}"
    );
}

#[test]
fn azure_dynamic_sessions_code_interpreter_works_unchanged_through_the_proxy() {
    let python = common::client_env("adsci");
    let (stdout, calls) = through_proxy(&python, "adsci_client.py", &[], "ADSCI OK");
    let sent: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("CELL "))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(sent.len(), 4, "{stdout}");
    assert_eq!(codes(&calls), sent, "exactly the cells the client sent");
    assert_eq!(
        kinds(&calls),
        ["code", "code", "code", "upload", "download", "code"],
        "{calls:#?}"
    );
    assert!(
        calls.iter().all(|c| c["client"]
            .as_str()
            .unwrap()
            .starts_with("visualiz3d-azure-dynamic-sessions-lib/")),
        "{calls:#?}"
    );
    assert_eq!(calls[0]["stdout"], "adsci 42\n");
    assert_eq!(calls[2]["status"], "Failed", "{}", calls[2]);
    assert_eq!(calls[3]["file"]["name"], "points.csv");
}

/// The early-error script of `compat_clients.rs` (`early_errors_client.py`)
/// through the proxy: the proxy's own 401 before it reads an upload, and the
/// upstream's 400 and 413 answered while the proxy still streams the upload to
/// it, reach `httpx.AsyncClient` and `aiohttp` as those errors, never as a
/// reset connection (4 times per case and the largest once, instead of 20
/// and 5: each case moves up to 200 MiB through two servers).
#[test]
fn early_errors_reach_httpx_and_aiohttp_through_the_proxy() {
    let python = common::client_env("http");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/early_errors_client.py");
    let (_up_data, _proxy_data, (_up, _up_endpoint), (_px, endpoint)) = proxied(&[]);
    let mut failures = Vec::new();
    for client in ["httpx", "aiohttp"] {
        let out = Command::new(&python)
            .arg(&script)
            .env("ENDPOINT", &endpoint)
            .env("TOKEN", PROXY_TOKEN)
            .env("REPEAT", "4")
            .env("CLIENT", client)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{client}:\n{text}");
        if !(out.status.success() && text.contains("EARLY ERRORS OK")) {
            failures.push(client);
        }
    }
    assert!(failures.is_empty(), "see the counts above: {failures:?}");
}
