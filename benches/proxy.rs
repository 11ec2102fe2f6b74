//! Recording proxy benchmarks (issue 13, `serve --upstream`): figures for
//! BENCHMARKS.md.
//!
//! - what the proxy adds to a call: `1+1` (an execution) and a file listing
//!   through HTTP straight to a local pool and through a recording proxy in
//!   front of that same pool, interleaved in one run, p50/p99 over 400 runs
//!   each, then criterion on both (target: at most 1 ms more at p50);
//! - the proxy's memory: a `sessionpad serve --upstream` process in front of
//!   a `sessionpad serve`, 100 MiB uploaded, then downloaded, through it; its
//!   resident memory before, and its peak (`VmHWM` of `/proc/PID/status`)
//!   during the upload and during the download, the peak reset in between
//!   (`5` written to `/proc/PID/clear_refs`) (target: under 32 MB).
//!
//! Run with `cargo bench --bench proxy`.
#![allow(clippy::unwrap_used)] // benchmark set-up unwraps: a failure there stops the run with its location

mod common;

use std::io::BufRead;
use std::time::{Duration, Instant};

use common::{ms, percentile};
use criterion::Criterion;
use futures::StreamExt;
use sessionpad::client::auth::{AuthConfig, TokenSource};
use sessionpad::client::{SessionClient, Target};
use sessionpad::ledger::{self, LedgerOptions};
use sessionpad::pool::{LocalPool, PoolOptions};
use sessionpad::protocol::ApiVersion;
use sessionpad::proxy::{Proxy, ProxyOptions};

const RUNS: usize = 400;
const PROXY_TOKEN: &str = "bench-proxy-token";

fn client(endpoint: String, token: &str) -> SessionClient {
    SessionClient::new(Target {
        endpoint,
        api_version: ApiVersion::V2025_10_02,
        token: Some(token.to_string()),
    })
    .unwrap()
}

/// A local pool, and a recording proxy in front of it (recording into a
/// ledger in `dir`; listing the session's files after each execution when
/// `files`, issue 26), in this process.
async fn pool_and_proxy(dir: &std::path::Path) -> (LocalPool, Proxy) {
    let mut opts = PoolOptions::embedded();
    opts.sessions_dir = dir.join("sessions");
    opts.ready_sessions = 1;
    let pool = LocalPool::start(opts, &|l| eprintln!("[python env] {l}"))
        .await
        .unwrap();
    let proxy = proxy_in_front(&pool, dir, true).await;
    (pool, proxy)
}

/// A recording proxy in front of `pool`, its ledger in `dir`, looking at
/// files after each execution when `files`.
async fn proxy_in_front(pool: &LocalPool, dir: &std::path::Path, files: bool) -> Proxy {
    Proxy::start(ProxyOptions {
        upstream: pool.endpoint(),
        tokens: TokenSource::new(&AuthConfig::StaticToken(pool.token().unwrap().into())).unwrap(),
        bind: [127, 0, 0, 1].into(),
        port: 0,
        token: Some(PROXY_TOKEN.into()),
        ledger: Some(LedgerOptions {
            path: dir.join(format!("proxy-ledger-{files}.sqlite3")),
            limits: ledger::LedgerConfig::default().limits(),
            files,
        }),
    })
    .await
    .unwrap()
}

fn report(what: &str, direct: &mut [Duration], proxied: &mut [Duration]) {
    let (d50, d99) = (percentile(direct, 0.5), percentile(direct, 0.99));
    let (p50, p99) = (percentile(proxied, 0.5), percentile(proxied, 0.99));
    println!("{what}, direct:        p50 {} p99 {}", ms(d50), ms(d99));
    println!("{what}, through proxy: p50 {} p99 {}", ms(p50), ms(p99));
    println!(
        "{what}: the proxy adds {:+.3} ms at p50 (target: at most 1 ms)",
        (p50.as_secs_f64() - d50.as_secs_f64()) * 1000.0
    );
}

/// Interleaved runs of `1+1` and of a listing, direct, through the proxy,
/// and through a proxy that does not look at files (`--no-record-files`,
/// what the proxy did before issue 26); then criterion on the first two.
fn overhead(dir: &std::path::Path, c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (pool, proxy) = rt.block_on(pool_and_proxy(dir));
    let blind = rt.block_on(proxy_in_front(&pool, dir, false));
    let direct = client(pool.endpoint(), pool.token().unwrap());
    let proxied = client(proxy.endpoint(), PROXY_TOKEN);
    let unlooked = client(blind.endpoint(), PROXY_TOKEN);
    let timeout = Duration::from_secs(30);
    rt.block_on(async {
        for cl in [&direct, &proxied, &unlooked] {
            for _ in 0..20 {
                cl.execute("bench", "1+1", timeout).await.unwrap();
            }
        }
        let mut exec: [Vec<Duration>; 3] = Default::default();
        let mut list: [Vec<Duration>; 3] = Default::default();
        for _ in 0..RUNS {
            for (cl, samples) in [&direct, &proxied, &unlooked]
                .into_iter()
                .zip(exec.iter_mut())
            {
                let started = Instant::now();
                let done = cl.execute("bench", "1+1", timeout).await.unwrap();
                samples.push(started.elapsed());
                assert!(done.succeeded());
            }
            for (cl, samples) in [&direct, &proxied, &unlooked]
                .into_iter()
                .zip(list.iter_mut())
            {
                let started = Instant::now();
                cl.list_files("bench", None, false).await.unwrap();
                samples.push(started.elapsed());
            }
        }
        let [exec_direct, exec_proxied, exec_unlooked] = &mut exec;
        let [list_direct, list_proxied, list_unlooked] = &mut list;
        report("1+1", exec_direct, exec_proxied);
        report("1+1 (no look at files)", exec_direct, exec_unlooked);
        report("GET files", list_direct, list_proxied);
        report("GET files (no look at files)", list_direct, list_unlooked);
    });
    for (name, cl) in [("direct", &direct), ("through the proxy", &proxied)] {
        c.bench_function(&format!("proxy: 1+1, {name}"), |b| {
            b.iter(|| rt.block_on(cl.execute("bench", "1+1", timeout)).unwrap());
        });
        c.bench_function(&format!("proxy: GET files, {name}"), |b| {
            b.iter(|| rt.block_on(cl.list_files("bench", None, false)).unwrap());
        });
    }
    rt.block_on(blind.shutdown());
    rt.block_on(proxy.shutdown());
    rt.block_on(pool.shutdown());
}

/// A `sessionpad` process (stdout piped), its endpoint once it printed it.
fn spawn(mut cmd: std::process::Command) -> (std::process::Child, String) {
    let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let endpoint = loop {
        let line = lines.next().unwrap().unwrap();
        if let Some(rest) = line.split("pool management endpoint:").nth(1) {
            break rest.trim().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, endpoint)
}

/// `VmRSS` and `VmHWM` (peak) of process `pid`, in KiB.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// 100 MiB up and down through a `serve --upstream` process; its memory.
fn memory_of_100_mb(dir: &std::path::Path) {
    const CHUNK: usize = 1024 * 1024;
    const CHUNKS: usize = 100;
    let exe = env!("CARGO_BIN_EXE_sessionpad");
    let up_token = "bench-upstream-token";
    let mut up = std::process::Command::new(exe);
    up.args([
        "serve",
        "--port",
        "0",
        "--ready-sessions",
        "1",
        "--token",
        up_token,
    ])
    .env("SESSIONPAD_DATA_DIR", dir.join("up"))
    .stderr(std::process::Stdio::null());
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        up.arg("--no-sandbox");
    }
    let (mut up, up_endpoint) = spawn(up);
    let config = dir.join("proxy.toml");
    std::fs::write(
        &config,
        "default_profile = \"up\"\n[profiles.up]\nauth = \"token-env\"\ntoken_env = \"BENCH_UP_TOKEN\"\n",
    )
    .unwrap();
    let mut px = std::process::Command::new(exe);
    px.args([
        "serve",
        "--port",
        "0",
        "--token",
        PROXY_TOKEN,
        "--upstream",
        &up_endpoint,
    ])
    .env("SESSIONPAD_CONFIG", &config)
    .env("SESSIONPAD_DATA_DIR", dir.join("proxy"))
    .env("BENCH_UP_TOKEN", up_token)
    .stderr(std::process::Stdio::null());
    let (mut px, endpoint) = spawn(px);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (before, _) = memory(px.id());
    let (up_secs, down_secs, up_peak) = rt.block_on(async {
        let http = reqwest::Client::new();
        let data = futures::stream::iter(0..CHUNKS)
            .map(|i| Ok::<_, std::io::Error>(vec![u8::try_from(i % 251).unwrap(); CHUNK]));
        let part = reqwest::multipart::Part::stream_with_length(
            reqwest::Body::wrap_stream(data),
            (CHUNK * CHUNKS) as u64,
        )
        .file_name("big.bin");
        let t = Instant::now();
        let r = http
            .post(format!(
                "{endpoint}/files?api-version=2025-10-02-preview&identifier=bench"
            ))
            .bearer_auth(PROXY_TOKEN)
            .multipart(reqwest::multipart::Form::new().part("file", part))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
        let up_secs = t.elapsed().as_secs_f64();
        let (_, up_peak) = memory(px.id());
        // The download's own peak: the high-water mark starts again here.
        std::fs::write(format!("/proc/{}/clear_refs", px.id()), "5").unwrap();
        let t = Instant::now();
        let mut body = http
            .get(format!(
                "{endpoint}/files/big.bin/content?api-version=2025-10-02-preview&identifier=bench"
            ))
            .bearer_auth(PROXY_TOKEN)
            .send()
            .await
            .unwrap()
            .bytes_stream();
        let mut size = 0;
        while let Some(chunk) = body.next().await {
            size += chunk.unwrap().len();
        }
        assert_eq!(size, CHUNK * CHUNKS);
        (up_secs, t.elapsed().as_secs_f64(), up_peak)
    });
    let (after, down_peak) = memory(px.id());
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "100 MiB through the proxy: upload {:.0} MB/s, download {:.0} MB/s",
        104.857_6 / up_secs,
        104.857_6 / down_secs
    );
    println!(
        "serve --upstream resident memory: {:.1} MiB before, peak {:.1} MiB during the upload, \
         peak {:.1} MiB during the download, {:.1} MiB after (target: under 32 MB, i.e. 30.5 MiB)",
        mib(before),
        mib(up_peak),
        mib(down_peak),
        mib(after)
    );
    let _ = px.kill();
    let _ = px.wait();
    let _ = up.kill();
    let _ = up.wait();
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    memory_of_100_mb(dir.path());
    let mut c = Criterion::default().configure_from_args();
    overhead(dir.path(), &mut c);
    c.final_summary();
}
