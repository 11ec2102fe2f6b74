//! Local pool benchmarks (issue 3): figures for BENCHMARKS.md.
//!
//! - `print(1)` through HTTP vs the bare kernel round trip, p50/p99 over 500 runs;
//! - the first execution of a new identifier with ready sessions available;
//! - 20 sessions executing at once (errors, executions per second);
//! - upload and download of a 100 MB file: growth of the process's resident memory.
//!
//! Run with `cargo bench --bench pool` (or `scripts/bench.sh`).

use std::path::Path;
use std::time::{Duration, Instant};

use sessionpad::client::{ApiVersion, SessionClient, Target};
use sessionpad::pool::kernel::{Kernel, KernelLaunch};
use sessionpad::pool::{LocalPool, PoolOptions, Sandbox, image};

const RUNS: usize = 500;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

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

    // Bare kernel round trip (same launch as the pool's kernels).
    let folder = dir.path().join("bare");
    std::fs::create_dir_all(&folder).unwrap();
    let mut kernel = Kernel::start(&KernelLaunch {
        env: env.clone(),
        workdir: folder,
        runtime_dir: std::env::temp_dir().join(format!("spb-{}", std::process::id())),
        sandbox: sandbox.clone(),
        processes: Default::default(),
    })
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
