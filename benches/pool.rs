//! Local pool benchmarks (issue 3): figures for BENCHMARKS.md.
//!
//! - `print(1)` through HTTP vs the bare kernel round trip, p50/p99 over 500 runs;
//! - the first execution of a new identifier with ready sessions available;
//! - 20 sessions executing at once (errors, executions per second);
//! - upload and download of a 100 MB file: growth of the process's resident memory;
//! - a kernel start (spawn to ready) unsandboxed, sandboxed with rlimits, and
//!   sandboxed with cgroups (root), p50 over 10 starts each, and the cost of a
//!   kernel's cgroup and of a session's tmpfs alone (issue 10);
//! - the built-in sandbox alone (issue 24): the helper's start, and `/bin/true`
//!   in the sandbox with and without a network namespace, p50 of 30 each;
//! - container types (issue 12): `1+1` on the Python pool, `true` on a Shell
//!   pool and `1+1` on a Node.js pool through HTTP, p50/p99 over 500 runs each
//!   in the same run, and a new Shell or Node.js session's first command with
//!   ready sessions.
//!
//! Run with `cargo bench --bench pool` (or `scripts/bench.sh`).
#![allow(clippy::unwrap_used)] // benchmark set-up unwraps: a failure there stops the run with its location

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use sessionpad::client::{SessionClient, ShellRequest, Target};

use sessionpad::protocol::{ApiVersion, ContainerType};
use std::sync::Arc;

use common::{ms, percentile};
use sessionpad::pool::data_fs::{self, DataFs, Holder};
use sessionpad::pool::kernel::{Kernel, KernelLaunch};
use sessionpad::pool::limits::Enforcer;
use sessionpad::pool::sandbox::python_view::PythonView;
use sessionpad::pool::sandbox::{SESSION_UID_BASE, binds};
use sessionpad::pool::{LocalPool, PoolOptions, Sandbox, image};
use sessionpad::protocol::limits::Limits;

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

/// The cost of giving a session folder a tmpfs of its own: on the host (root
/// only), and in a holder's user and mount namespace (any user; a short-lived
/// process joins it for each mount and unmount).
fn mount_cost(dir: &Path, holder: Option<&Arc<Holder>>) {
    let folder = dir.join("mount-bench");
    std::fs::create_dir_all(&folder).unwrap();
    let mut took = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        if data_fs::host::mount(&folder, 1 << 30, SESSION_UID_BASE).is_err() {
            break;
        }
        data_fs::host::unmount(&folder);
        took.push(t.elapsed());
    }
    if !took.is_empty() {
        println!(
            "a session's /mnt/data tmpfs on the host (mount + unmount): p50 {}",
            ms(percentile(&mut took, 0.5))
        );
    }
    let Some(holder) = holder else { return };
    let mut took = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        holder.mount(&folder, 1 << 30).unwrap();
        holder.unmount(&folder);
        took.push(t.elapsed());
    }
    println!(
        "a session's /mnt/data tmpfs in the pool's user namespace (mount + unmount): p50 {}",
        ms(percentile(&mut took, 0.5))
    );
}

/// The sandbox alone: `/bin/true` run in it 30 times (spawn to exit: the
/// helper's start, the namespaces, the file view, the program's start and the
/// teardown), p50.
fn sandbox_alone(sandbox: &Sandbox, dir: &Path, what: &str) {
    use sessionpad::pool::sandbox::Jail;
    let folder = dir.join("alone-data");
    let runtime = dir.join("alone-run");
    for d in [&folder, &runtime] {
        std::fs::create_dir_all(d).unwrap();
        if sandbox.drops_root() {
            std::os::unix::fs::chown(d, Some(SESSION_UID_BASE), Some(SESSION_UID_BASE)).unwrap();
        }
    }
    let mut took = Vec::new();
    for _ in 0..30 {
        let jail = Jail::true_in(&folder, &runtime, SESSION_UID_BASE);
        let t = Instant::now();
        let built = sandbox.command(&jail).unwrap();
        let status = built.command.into_std().status().unwrap();
        took.push(t.elapsed());
        assert!(status.success(), "{status}");
    }
    println!(
        "the sandbox alone (/bin/true in it, spawn to exit), {what}: p50 {}",
        ms(percentile(&mut took, 0.5))
    );
}

/// The sandbox helper's own start: the sessionpad binary executed as the helper
/// with a plan it cannot read, so it exits at once; 30 times, p50.
fn helper_start_alone() {
    use sessionpad::pool::sandbox::helper;
    use std::os::unix::process::CommandExt;
    let mut took = Vec::new();
    for _ in 0..30 {
        let t = Instant::now();
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_sessionpad"))
            .arg0(helper::ARG0)
            .env(helper::PLAN_FD_VAR, "987")
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        took.push(t.elapsed());
        assert_eq!(status.code(), Some(helper::SETUP_FAILED));
    }
    println!(
        "the sandbox helper's start alone (exec of sessionpad, exit): p50 {}",
        ms(percentile(&mut took, 0.5))
    );
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = PoolOptions::embedded();
    opts.sessions_dir = dir.path().join("sessions");
    opts.ready_sessions = 2;
    let env = image::ensure(&opts.cache_dir, None, opts.image, &|l| eprintln!("{l}"))
        .await
        .expect("python env");
    let sandbox = Sandbox::detect(true, false).ok();
    println!(
        "sandbox: {}",
        if sandbox.is_some() {
            "built in"
        } else {
            "none"
        }
    );

    let python_view = Arc::new(PythonView::new(
        &binds::python_dirs(&env.prefixes().await.expect("prefixes")),
        &env.python,
    ));
    // Run as a user, sandboxed kernels start in the holder of the sessions' tmpfs.
    let data_fs = DataFs::detect(sandbox.as_ref());
    let holder = data_fs.holder().cloned();
    println!(
        "sized /mnt/data: {}",
        data_fs.mechanism().unwrap_or("none (ordinary folders)")
    );
    let launch = |name: &str, sandbox: Option<Sandbox>, enforcer: Arc<Enforcer>| {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let uid = SESSION_UID_BASE;
        if sandbox.as_ref().is_some_and(Sandbox::drops_root) {
            std::os::unix::fs::chown(&folder, Some(uid), Some(uid)).unwrap();
        }
        let fs = if sandbox.is_some() {
            data_fs.clone()
        } else {
            DataFs::Plain
        };
        if let Some(h) = sandbox.as_ref().and(holder.as_ref()) {
            h.mount(&folder, 1 << 30).unwrap();
        }
        KernelLaunch {
            env: env.clone(),
            python_view: python_view.clone(),
            workdir: folder,
            runtime_dir: std::env::temp_dir().join(format!("spb-{}-{name}", std::process::id())),
            sandbox,
            uid,
            enforcer,
            data_fs: fs,
            processes: Arc::default(),
            container_type: ContainerType::PythonLts,
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
    mount_cost(dir.path(), data_fs.holder());
    if let Some(sandbox) = &sandbox {
        helper_start_alone();
        sandbox_alone(sandbox, dir.path(), "no network (a network namespace)");
        if let Ok(open) = Sandbox::detect(true, true) {
            sandbox_alone(&open, dir.path(), "egress (the host's network)");
        }
    }

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
    container_types(&client, dir.path()).await;

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

/// Times `RUNS` calls of `call`, after 20 that warm up.
async fn timed(mut call: impl AsyncFnMut()) -> Vec<Duration> {
    let mut took = Vec::with_capacity(RUNS);
    for i in 0..RUNS + 20 {
        let t = Instant::now();
        call().await;
        if i >= 20 {
            took.push(t.elapsed());
        }
    }
    took
}

/// Times the first call in each of 15 new sessions (`call(n)`), the pool
/// given 2.5 s before each to refill its ready sessions.
async fn first_calls(mut call: impl AsyncFnMut(usize)) -> Vec<Duration> {
    let mut took = Vec::new();
    for n in 0..15 {
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let t = Instant::now();
        call(n).await;
        took.push(t.elapsed());
    }
    took
}

fn p50_p99(what: &str, samples: &mut [Duration]) {
    println!(
        "{what}: p50 {} p99 {}",
        ms(percentile(samples, 0.5)),
        ms(percentile(samples, 0.99))
    );
}

fn p50_max(what: &str, samples: &mut [Duration]) {
    println!(
        "{what}: p50 {} max {}",
        ms(percentile(samples, 0.5)),
        ms(*samples.iter().max().unwrap())
    );
}

/// A local pool of `kind` (2 ready sessions, folders below `dir`) and its client.
async fn pool_of(kind: ContainerType, dir: &Path) -> (LocalPool, SessionClient) {
    let mut opts = PoolOptions::embedded();
    opts.sessions_dir = dir.join(format!("{kind}-sessions"));
    opts.ready_sessions = 2;
    opts.container_type = kind;
    let pool = LocalPool::start(opts, &|l| eprintln!("{l}"))
        .await
        .expect("pool");
    let client = SessionClient::new(Target {
        endpoint: pool.endpoint(),
        api_version: ApiVersion::V2025_10_02,
        token: pool.token().map(str::to_string),
    })
    .unwrap()
    .with_container_type(kind);
    (pool, client)
}

/// `1+1` on the Python pool of `python`, `true` on a new Shell pool and `1+1`
/// on a new Node.js pool, `RUNS` runs each through HTTP; then the first
/// command (cell) of 15 new Shell (Node.js) sessions, ready sessions waiting.
async fn container_types(python: &SessionClient, dir: &Path) {
    let limit = Duration::from_secs(10);
    let mut py = timed(async || {
        python.execute("bench", "1+1", limit).await.unwrap();
    })
    .await;
    p50_p99("1+1 on the Python pool through HTTP", &mut py);

    let (pool, shell) = pool_of(ContainerType::Shell, dir).await;
    let truth = ShellRequest::line("true", limit);
    let mut sh = timed(async || {
        let e = shell.execute_shell("bench", &truth).await.unwrap();
        assert_eq!(e.exit_code, Some(0), "{e:?}");
    })
    .await;
    p50_p99("true on the Shell pool through HTTP", &mut sh);
    let mut first = first_calls(async |n| {
        shell
            .execute_shell(&format!("new-shell-{n}"), &truth)
            .await
            .unwrap();
    })
    .await;
    p50_max(
        "first command of a new Shell session (ready sessions)",
        &mut first,
    );
    pool.shutdown().await;

    let (pool, node) = pool_of(ContainerType::NodeLts, dir).await;
    let mut js = timed(async || {
        let e = node.execute("bench", "1+1", limit).await.unwrap();
        assert!(e.succeeded(), "{e:?}");
    })
    .await;
    p50_p99("1+1 on the Node.js pool through HTTP", &mut js);
    let mut first = first_calls(async |n| {
        node.execute(&format!("new-node-{n}"), "1+1", limit)
            .await
            .unwrap();
    })
    .await;
    p50_max(
        "first cell of a new Node.js session (ready sessions)",
        &mut first,
    );
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
