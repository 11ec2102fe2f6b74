//! Tab completion benchmark (issue 27 item 1): figures for BENCHMARKS.md.
//!
//! - the completion round trip through the client to a warm local-pool
//!   session (`df.gr` on a pandas DataFrame, `POST /.sessionpad/complete`, the
//!   kernel's `complete_request`), p50/p99 over 300 runs, then criterion
//!   (target: at most 50 ms at p50).
//!
//! Run with `cargo bench --bench complete`.
#![allow(clippy::unwrap_used)] // benchmark set-up unwraps: a failure there stops the run with its location

mod common;

use std::time::{Duration, Instant};

use common::{ms, percentile};
use criterion::Criterion;
use sessionpad::client::{SessionClient, Target};
use sessionpad::pool::{LocalPool, PoolOptions};
use sessionpad::protocol::ApiVersion;

const RUNS: usize = 300;
const CODE: &str = "df.gr";

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut opts = PoolOptions::embedded();
    opts.sessions_dir = dir.path().join("sessions");
    opts.ready_sessions = 1;
    let pool = rt
        .block_on(LocalPool::start(opts, &|l| eprintln!("[python env] {l}")))
        .unwrap();
    let client = SessionClient::new(Target {
        endpoint: pool.endpoint(),
        api_version: ApiVersion::V2025_10_02,
        token: pool.token().map(str::to_string),
    })
    .unwrap();
    let cursor = CODE.chars().count();
    rt.block_on(async {
        let setup = "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})";
        let done = client
            .execute("bench", setup, Duration::from_secs(60))
            .await
            .unwrap();
        assert!(done.succeeded(), "{}", done.stderr);
        // Warm: the completer's first call imports its modules.
        for _ in 0..10 {
            client.complete("bench", CODE, cursor).await.unwrap();
        }
        let mut took = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let started = Instant::now();
            let got = client.complete("bench", CODE, cursor).await.unwrap();
            took.push(started.elapsed());
            assert!(
                got.matches.iter().any(|m| m.ends_with("groupby")),
                "{got:?}"
            );
        }
        println!(
            "completion round trip ({CODE}, warm session): p50 {} p99 {}",
            ms(percentile(&mut took, 0.5)),
            ms(percentile(&mut took, 0.99))
        );
    });
    let mut c = Criterion::default().configure_from_args();
    c.bench_function("complete: df.gr, warm local-pool session", |b| {
        b.iter(|| rt.block_on(client.complete("bench", CODE, cursor)).unwrap());
    });
    c.final_summary();
    rt.block_on(pool.shutdown());
}
