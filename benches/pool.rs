//! Local pool benchmarks (issue 3): figures for BENCHMARKS.md.
//!
//! - `print(1)` through HTTP vs the bare kernel round trip, p50/p99 over 500 runs;
//! - the first execution of a new identifier with ready sessions available;
//! - 20 sessions executing at once (errors, executions per second);
//! - upload and download of a 100 MB file: growth of the process's resident memory;
//! - a kernel start (spawn to ready) unsandboxed, sandboxed with rlimits, and
//!   sandboxed with cgroups (root), p50 over 10 starts each, and the cost of a
//!   kernel's cgroup and of a session's tmpfs alone (issue 10).
//!
//! Run with `cargo bench --bench pool` (or `scripts/bench.sh`).
#![allow(clippy::unwrap_used)] // benchmark set-up unwraps: a failure there stops the run with its location

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use sessionpad::client::{ApiVersion, SessionClient, Target};
use std::sync::Arc;

use common::{ms, percentile};
use sessionpad::pool::kernel::{Kernel, KernelLaunch};
use sessionpad::pool::limits::{Enforcer, Limits};
use sessionpad::pool::sandbox::{SESSION_UID_BASE, binds};
use sessionpad::pool::{LocalPool, PoolOptions, Sandbox, image};

const RUNS: usize = 500;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// Starts and shuts down 10 kernels launched by `launch`; prints the p50 of spawn
/// to ready.
async fn kernel_starts(launch: &KernelLaunch, what: &str) {
    let mut starts = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let kernel = Kernel::start(launch).await.expect("kernel");
        starts.push(t.elapsed());
        kernel.shutdown().await;
    }
    println!(
        "kernel start (spawn to ready), {what}: p50 {} max {}",
        ms(percentile(&mut starts, 0.5)),
        ms(*starts.iter().max().unwrap())
    );
}

/// The cost of giving a session folder a tmpfs of its own (root only).
fn mount_cost(dir: &Path) {
    let folder = dir.join("mount-bench");
    std::fs::create_dir_all(&folder).unwrap();
    let mut took = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        if sessionpad::pool::data_fs::mount(&folder, 1 << 30, SESSION_UID_BASE).is_err() {
            return;
        }
        sessionpad::pool::data_fs::unmount(&folder);
        took.push(t.elapsed());
    }
    println!(
        "a session's /mnt/data tmpfs (mount + unmount): p50 {}",
        ms(percentile(&mut took, 0.5))
    );
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = PoolOptions::embedded();
    opts.sessions_dir = dir.path().join("sessions");
    opts.ready_sessions = 2;
    let env = image::ensure(&opts.cache_dir, None, &|l| eprintln!("{l}"))
        .await
        .expect("python env");
    let sandbox = Sandbox::detect(true, false).ok();
    println!(
        "sandbox: {}",
        if sandbox.is_some() {
            "bubblewrap"
        } else {
            "none"
        }
    );

    let python_dirs = Arc::new(binds::python_dirs(&env.prefixes().await.expect("prefixes")));
    let launch = |name: &str, sandbox: Option<Sandbox>, enforcer: Arc<Enforcer>| {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let uid = SESSION_UID_BASE;
        if sandbox.as_ref().is_some_and(Sandbox::drops_root) {
            std::os::unix::fs::chown(&folder, Some(uid), Some(uid)).unwrap();
        }
        KernelLaunch {
            env: env.clone(),
            python_dirs: python_dirs.clone(),
            workdir: folder,
            runtime_dir: std::env::temp_dir().join(format!("spb-{}-{name}", std::process::id())),
            sandbox,
            uid,
            enforcer,
            processes: Arc::default(),
        }
    };
    let rlimits = Arc::new(Enforcer::rlimits_only(Limits::default()));
    let cgroups = Arc::new(Enforcer::new(
        Limits::default(),
        &format!("sessionpad-{}-bench", std::process::id()),
    ));
    kernel_starts(&launch("plain", None, rlimits.clone()), "unsandboxed").await;
    if sandbox.is_some() {
        kernel_starts(
            &launch("rlimits", sandbox.clone(), rlimits.clone()),
            "sandboxed, rlimits",
        )
        .await;
        if cgroups.uses_cgroups() {
            kernel_starts(
                &launch("cgroups", sandbox.clone(), cgroups.clone()),
                "sandboxed, cgroups",
            )
            .await;
            let mut cg = Vec::new();
            for _ in 0..50 {
                let t = Instant::now();
                drop(cgroups.prepare().expect("cgroup"));
                cg.push(t.elapsed());
            }
            println!(
                "a kernel's cgroup (create, set memory/pids/cpu, open cgroup.procs): p50 {}",
                ms(percentile(&mut cg, 0.5))
            );
        }
    }
    mount_cost(dir.path());

    // Bare kernel round trip (same launch as the pool's kernels).
    let enforcer = if cgroups.uses_cgroups() {
        cgroups.clone()
    } else {
        rlimits.clone()
    };
    let mut kernel = Kernel::start(&launch("bare", sandbox.clone(), enforcer))
        .await
        .expect("kernel");
    for _ in 0..20 {
        kernel.execute("print(1)", Duration::from_secs(10)).await;
    }
    let mut bare = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        kernel.execute("print(1)", Duration::from_secs(10)).await;
        bare.push(t.elapsed());
    }
    kernel.shutdown().await;

    let pool = LocalPool::start(opts, &|l| eprintln!("{l}"))
        .await
        .expect("pool");
    let client = SessionClient::new(Target {
        endpoint: pool.endpoint(),
        api_version: ApiVersion::V2025_10_02,
        token: pool.token().map(str::to_string),
    })
    .unwrap();
    for _ in 0..20 {
        client
            .execute("bench", "print(1)", Duration::from_secs(10))
            .await
            .unwrap();
    }
    let mut http = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        client
            .execute("bench", "print(1)", Duration::from_secs(10))
            .await
            .unwrap();
        http.push(t.elapsed());
    }
    let (b50, b99) = (percentile(&mut bare, 0.5), percentile(&mut bare, 0.99));
    let (h50, h99) = (percentile(&mut http, 0.5), percentile(&mut http, 0.99));
    println!("print(1) bare kernel: p50 {} p99 {}", ms(b50), ms(b99));
    println!("print(1) through HTTP: p50 {} p99 {}", ms(h50), ms(h99));
    println!("pool overhead at p50: {}", ms(h50.saturating_sub(b50)));

    // First execution of a new identifier, with ready kernels waiting.
    let mut first = Vec::new();
    for i in 0..15 {
        tokio::time::sleep(Duration::from_millis(2500)).await; // let the pool refill
        let t = Instant::now();
        client
            .execute(&format!("new-{i}"), "print(1)", Duration::from_secs(30))
            .await
            .unwrap();
        first.push(t.elapsed());
    }
    println!(
        "first execution of a new identifier (ready kernels): p50 {} max {}",
        ms(percentile(&mut first, 0.5)),
        ms(*first.iter().max().unwrap())
    );

    // 20 sessions at once.
    for i in 0..20 {
        client
            .execute(&format!("conc-{i}"), "x = 0", Duration::from_secs(60))
            .await
            .unwrap();
    }
    let t = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut errors = 0;
            for _ in 0..25 {
                match c
                    .execute(&format!("conc-{i}"), "x += 1", Duration::from_secs(60))
                    .await
                {
                    Ok(e) if e.succeeded() => {}
                    _ => errors += 1,
                }
            }
            errors
        }));
    }
    let mut errors = 0;
    for t in tasks {
        errors += t.await.unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "20 sessions x 25 executions at once: {errors} errors, {:.0} executions/s",
        500.0 / secs
    );

    // 100 MB upload and download: resident memory growth of this process (pool included).
    let big = dir.path().join("big.bin");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&big).unwrap();
        let chunk = vec![7u8; 1 << 20];
        for _ in 0..100 {
            f.write_all(&chunk).unwrap();
        }
    }
    transfer(&pool, &big, dir.path()).await;
    pool.shutdown().await;
}

async fn transfer(pool: &LocalPool, big: &Path, dir: &Path) {
    let http = reqwest::Client::new();
    let token = pool.token().unwrap_or_default().to_string();
    let base = pool.endpoint();
    let before = rss_kib();
    let file = tokio::fs::File::open(big).await.unwrap();
    let stream = tokio_util::io::ReaderStream::new(file);
    let part =
        reqwest::multipart::Part::stream(reqwest::Body::wrap_stream(stream)).file_name("big.bin");
    let form = reqwest::multipart::Form::new().part("file", part);
    let t = Instant::now();
    let resp = http
        .post(format!(
            "{base}/files?api-version=2025-10-02-preview&identifier=bench"
        ))
        .bearer_auth(&token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let up = t.elapsed();
    let status = resp.status();
    let after_up = rss_kib();
    let t = Instant::now();
    let mut resp = http
        .get(format!(
            "{base}/files/big.bin/content?api-version=2025-10-02-preview&identifier=bench"
        ))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let mut out = tokio::fs::File::create(dir.join("back.bin")).await.unwrap();
    let mut n = 0u64;
    while let Some(chunk) = resp.chunk().await.unwrap() {
        n += chunk.len() as u64;
        tokio::io::AsyncWriteExt::write_all(&mut out, &chunk)
            .await
            .unwrap();
    }
    let down = t.elapsed();
    let after_down = rss_kib();
    println!(
        "100 MB upload ({status}): {:.0} MB/s, RSS +{} KiB; download ({n} bytes): {:.0} MB/s, RSS +{} KiB (from {} KiB)",
        100.0 / up.as_secs_f64(),
        after_up.saturating_sub(before),
        100.0 / down.as_secs_f64(),
        after_down.saturating_sub(before),
        before
    );
}
