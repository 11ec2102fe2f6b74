//! Following benchmarks (issues 13 and 14): figures for BENCHMARKS.md.
//!
//! - from the pool's answer to the agent to the cell on the follower: an
//!   agent (reqwest, its own `User-Agent`) runs `1+1` on a recording local
//!   pool while a follower is subscribed to the session's event stream
//!   (`SessionClient::events`); the time from the agent having the whole
//!   answer to the follower having the recorded call's event, p50/p95/p99
//!   over 300 runs (target: under 100 ms p50). Negative when the event came
//!   first (the writer thread raced the answer): counted as 0;
//! - a running cell's first line: a cell that prints a line and then sleeps
//!   1 s; the time from sending the request to the follower having the
//!   line's output event (an upper bound of print → event; target: on screen
//!   within 0.5 s of the print), p50 over 20 runs.
//!
//! Run with `cargo bench --bench follow`.
#![allow(clippy::unwrap_used)] // benchmark set-up unwraps: a failure there stops the run with its location

mod common;

use std::time::Instant;

use futures::StreamExt;
use sessionpad::client::{SessionClient, Target};
use sessionpad::ledger::{self, LedgerOptions};
use sessionpad::pool::{LocalPool, PoolOptions};
use sessionpad::protocol::ApiVersion;
use sessionpad::protocol::events::PoolEvent;

use common::{ms, percentile};

const RUNS: usize = 300;
const FIRST_LINE_RUNS: usize = 20;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut opts = PoolOptions::embedded();
        opts.sessions_dir = dir.path().join("sessions");
        opts.ready_sessions = 1;
        opts.ledger = Some(LedgerOptions {
            path: dir.path().join("ledger.sqlite3"),
            limits: ledger::LedgerConfig::default().limits(),
            files: true,
        });
        let pool = LocalPool::start(opts, &|l| eprintln!("[python env] {l}"))
            .await
            .unwrap();
        let follower = SessionClient::new(Target {
            endpoint: pool.endpoint(),
            api_version: ApiVersion::V2025_10_02,
            token: pool.token().map(str::to_string),
        })
        .unwrap();
        let agent = reqwest::Client::builder()
            .user_agent("bench-agent/1.0")
            .build()
            .unwrap();
        let token = pool.token().unwrap_or_default().to_string();
        let url = |id: &str| {
            format!(
                "{}/executions?api-version=2025-10-02-preview&identifier={id}",
                pool.endpoint()
            )
        };
        let run = |code: &'static str, id: String| {
            let (agent, token, url) = (agent.clone(), token.clone(), url(&id));
            async move {
                let resp = agent
                    .post(url)
                    .bearer_auth(token)
                    .json(&serde_json::json!({"code": code, "codeInputType": "Inline", "executionType": "Synchronous"}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resp.status(), 200);
                resp.bytes().await.unwrap();
                Instant::now()
            }
        };

        // Answer → the recorded call on the follower.
        let id = "bench-follow".to_string();
        let mut events = Box::pin(follower.events(Some(&id)).await.unwrap());
        for _ in 0..20 {
            run("1+1", id.clone()).await;
        }
        // Drain the warm-up's events.
        let mut seen = 0;
        while seen < 20 {
            if let PoolEvent::Call(_) = events.next().await.unwrap().unwrap() {
                seen += 1;
            }
        }
        let mut samples = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let (answered, event_at) = tokio::join!(run("1+1", id.clone()), async {
                loop {
                    if let PoolEvent::Call(_) = events.next().await.unwrap().unwrap() {
                        return Instant::now();
                    }
                }
            });
            samples.push(event_at.saturating_duration_since(answered));
        }
        println!(
            "answer to the agent → the call on the follower ({RUNS} runs): p50 {} p95 {} p99 {} (target: under 100 ms p50)",
            ms(percentile(&mut samples, 0.5)),
            ms(percentile(&mut samples, 0.95)),
            ms(percentile(&mut samples, 0.99)),
        );
        let at_zero = samples.iter().filter(|d| d.is_zero()).count();
        println!("  of which the event came before the answer: {at_zero}");

        // A running cell's first line.
        let id = "bench-first-line".to_string();
        let mut events = Box::pin(follower.events(Some(&id)).await.unwrap());
        let mut firsts = Vec::with_capacity(FIRST_LINE_RUNS);
        for _ in 0..FIRST_LINE_RUNS {
            let sent = Instant::now();
            let cell = run(
                "import time\nprint('first', flush=True)\ntime.sleep(1)\nprint('second')",
                id.clone(),
            );
            let first = async {
                loop {
                    if let PoolEvent::Output(_) = events.next().await.unwrap().unwrap() {
                        return sent.elapsed();
                    }
                }
            };
            let (_, first) = tokio::join!(cell, first);
            firsts.push(first);
            // The second line and the call.
            let mut rest = 0;
            while rest < 2 {
                match events.next().await.unwrap().unwrap() {
                    PoolEvent::Output(_) | PoolEvent::Call(_) => rest += 1,
                    PoolEvent::Lagged(_) => {}
                }
            }
        }
        println!(
            "request sent → the running cell's first line on the follower ({FIRST_LINE_RUNS} runs): p50 {} max {} (target: within 0.5 s of the print)",
            ms(percentile(&mut firsts, 0.5)),
            ms(percentile(&mut firsts, 1.0)),
        );
        pool.shutdown().await;
    });
}
