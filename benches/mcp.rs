//! The MCP server's cost (issue 12): `runPythonCodeInRemoteEnvironment` of
//! `print(1)` through the local pool's `/mcp` endpoint against the REST call it
//! wraps (`POST executions`, 2025-10-02-preview) in the same session, both over
//! loopback HTTP with one reqwest client and the answer's JSON parsed, the two
//! interleaved so that both see the same machine; p50/p99 over 500 runs each
//! (target: MCP adds at most 1 ms at p50).
//!
//! Run with `cargo bench --bench mcp` (or `scripts/bench.sh`).
#![allow(clippy::unwrap_used)] // benchmark set-up unwraps: a failure there stops the run with its location

mod common;

use std::time::{Duration, Instant};

use common::{ms, percentile};
use serde_json::{Value, json};
use sessionpad::pool::{LocalPool, PoolOptions};

const RUNS: usize = 500;
const WARM_UP: usize = 20;

/// POSTs `body` and returns the parsed answer and how long the round trip took.
async fn timed(req: reqwest::RequestBuilder, body: &Value) -> (Value, Duration) {
    let t = Instant::now();
    let answer: Value = req.json(body).send().await.unwrap().json().await.unwrap();
    (answer, t.elapsed())
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = PoolOptions::embedded();
    opts.sessions_dir = dir.path().join("sessions");
    let pool = LocalPool::start(opts, &|l| eprintln!("{l}"))
        .await
        .expect("pool");
    println!(
        "sandbox: {}",
        if pool.isolation().is_sandboxed() {
            "bubblewrap"
        } else {
            "none"
        }
    );
    let http = reqwest::Client::new();
    let key = pool.mcp_key().unwrap().to_string();
    let token = pool.token().unwrap().to_string();
    let mcp = || {
        http.post(pool.mcp_endpoint())
            .header("x-ms-apikey", &key)
            .header("accept", "application/json, text/event-stream")
    };
    let launch = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "launchShell", "arguments": {}}});
    let (answer, _) = timed(mcp(), &launch).await;
    let env = answer["result"]["structuredContent"]["environmentId"]
        .as_str()
        .unwrap()
        .to_string();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "runPythonCodeInRemoteEnvironment",
                   "arguments": {"environmentId": env, "pythonCode": "print(1)"}}});
    let rest_url = format!(
        "{}/executions?api-version=2025-10-02-preview&identifier={env}",
        pool.endpoint()
    );
    let rest = || http.post(&rest_url).bearer_auth(&token);
    let execute = json!({"codeInputType": "inline", "executionType": "synchronous",
        "code": "print(1)", "timeoutInSeconds": 60});

    let (mut via_mcp, mut via_rest) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for i in 0..WARM_UP + RUNS {
        // Alternate which goes first, so neither always follows the other.
        let ((m, mt), (r, rt)) = if i % 2 == 0 {
            let m = timed(mcp(), &call).await;
            (m, timed(rest(), &execute).await)
        } else {
            let r = timed(rest(), &execute).await;
            (timed(mcp(), &call).await, r)
        };
        assert_eq!(m["result"]["structuredContent"]["stdout"], "1\n", "{m}");
        assert_eq!(r["result"]["stdout"], "1\n", "{r}");
        if i >= WARM_UP {
            via_mcp.push(mt);
            via_rest.push(rt);
        }
    }
    let (m50, m99) = (
        percentile(&mut via_mcp, 0.5),
        percentile(&mut via_mcp, 0.99),
    );
    let (r50, r99) = (
        percentile(&mut via_rest, 0.5),
        percentile(&mut via_rest, 0.99),
    );
    println!(
        "print(1) through REST (POST executions): p50 {} p99 {}",
        ms(r50),
        ms(r99)
    );
    println!(
        "print(1) through MCP (runPythonCodeInRemoteEnvironment): p50 {} p99 {}",
        ms(m50),
        ms(m99)
    );
    println!("MCP over REST at p50: {}", ms(m50.saturating_sub(r50)));
    pool.shutdown().await;
}
