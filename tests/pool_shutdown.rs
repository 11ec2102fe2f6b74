//! No kernel outlives its pool: a pool dropped or shut down while its ready kernels
//! are still starting (the usual end of a test, or a pool switch in the TUI) leaves
//! no process behind, sandboxed (bwrap → bwrap → python) or not.
//!
//! Each test gives its pools a unique sessions folder and looks for processes whose
//! command line or environment names it (a kernel's session folder is in bwrap's
//! arguments, and in `SESSIONPAD_MNT_DATA` without a sandbox), so kernels of other
//! pools on this machine do not count.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sessionpad::pool::{LocalPool, PoolOptions};

/// How long leftover processes get to disappear (they are killed, not asked).
const GRACE: Duration = Duration::from_secs(10);

/// Pids of live processes whose command line or environment contains `marker`.
fn processes_naming(marker: &str) -> Vec<(u32, String)> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let dir = entry.path();
        // A zombie is dead already; only its parent's wait is missing.
        let state = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
        if state
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'))
        {
            continue;
        }
        let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
        let names = |bytes: &[u8]| String::from_utf8_lossy(bytes).contains(marker);
        if names(&cmdline) || names(&environ) {
            let args = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push((pid, args));
        }
    }
    found
}

/// Waits up to [`GRACE`] for every process naming `marker` to be gone; returns
/// those still there.
fn survivors(marker: &str) -> Vec<(u32, String)> {
    let until = Instant::now() + GRACE;
    loop {
        let left = processes_naming(marker);
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn options(sessions_dir: &Path, sandbox: bool) -> PoolOptions {
    let mut opts = PoolOptions::embedded();
    opts.sessions_dir = sessions_dir.to_path_buf();
    opts.ready_sessions = 3;
    opts.sandbox = sandbox;
    opts
}

/// How a round ends its pool.
#[derive(Clone, Copy, Debug)]
enum End {
    /// The pool and then the runtime are dropped (a `#[tokio::test]` ending).
    Drop,
    /// The runtime is dropped with the pool still alive inside a task.
    DropRuntime,
    /// `LocalPool::shutdown` is awaited.
    Shutdown,
}

/// Starts pools whose ready kernels are still starting and ends them after a delay
/// that sweeps through a kernel's start (so some end while bwrap is half-way
/// through setting up its sandbox), then checks that nothing is left.
fn rounds(sandbox: bool, multi_thread: bool) {
    let root = tempfile::tempdir().expect("tempdir");
    let marker = root.path().to_string_lossy().into_owned();
    let ends = [End::Drop, End::DropRuntime, End::Shutdown];
    for round in 0..24_u64 {
        let end = ends[usize::try_from(round).unwrap_or(0) % ends.len()];
        let delay = Duration::from_micros(round * 1_500);
        let rt = if multi_thread {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
        } else {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        }
        .expect("runtime");
        let opts = options(&root.path().join(round.to_string()), sandbox);
        let pool = rt.block_on(async {
            LocalPool::start(opts, &|line| eprintln!("[python env] {line}"))
                .await
                .expect("local pool starts")
        });
        match end {
            End::Drop => rt.block_on(async move {
                tokio::time::sleep(delay).await;
                drop(pool);
            }),
            End::DropRuntime => {
                rt.spawn(async move {
                    let _kept = pool;
                    std::future::pending::<()>().await;
                });
                rt.block_on(async move { tokio::time::sleep(delay).await });
            }
            End::Shutdown => rt.block_on(async move {
                tokio::time::sleep(delay).await;
                pool.shutdown().await;
            }),
        }
        drop(rt);
    }
    let left = survivors(&marker);
    assert!(
        left.is_empty(),
        "kernel processes outlived their pool:\n{}",
        left.iter()
            .map(|(pid, args)| format!("{pid}: {args}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Root pools mount a tmpfs on each session folder: none may outlive its pool.
    let mounts: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|m| m.starts_with(marker.as_str()))
        .map(str::to_string)
        .collect();
    assert!(
        mounts.is_empty(),
        "session folders still mounted: {mounts:?}"
    );
    // However it ended, a pool takes its session folders along.
    let folders: Vec<PathBuf> = (0..24)
        .filter_map(|round| std::fs::read_dir(root.path().join(round.to_string())).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .collect();
    assert!(folders.is_empty(), "pool folders left: {folders:?}");
}

fn bwrap_installed() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("bwrap").is_file()))
}

#[test]
fn sandboxed_kernels_still_starting_end_with_their_pool() {
    if !bwrap_installed() {
        eprintln!("bubblewrap is not installed: only unsandboxed kernels are tested here");
    }
    rounds(true, false);
}

#[test]
fn sandboxed_kernels_end_with_a_multi_thread_runtime() {
    rounds(true, true);
}

#[test]
fn unsandboxed_kernels_still_starting_end_with_their_pool() {
    rounds(false, false);
}

/// A pool dropped while a session executes, the runtime going on (as when the TUI
/// switches pools): the busy kernel ends now, not when its execution would.
#[test]
fn a_busy_kernel_ends_when_its_pool_is_dropped_and_the_runtime_goes_on() {
    let root = tempfile::tempdir().expect("tempdir");
    let marker = root.path().to_string_lossy().into_owned();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let left = rt.block_on(async {
        let mut opts = options(&root.path().join("busy"), true);
        opts.ready_sessions = 0;
        let pool = LocalPool::start(opts, &|line| eprintln!("[python env] {line}"))
            .await
            .expect("local pool starts");
        let registry = pool.registry().clone();
        let session = registry.get_or_create("busy").expect("session");
        let busy = tokio::spawn(async move {
            let code = "print('started', flush=True)\nimport time\ntime.sleep(600)";
            registry
                .execute(&session, "x1", code, Duration::from_secs(600))
                .await
        });
        // The kernel exists once a process names the session folder; give it
        // time to be inside the cell.
        let until = Instant::now() + Duration::from_secs(60);
        while processes_naming(&marker).is_empty() && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        drop(pool);
        let left = tokio::task::spawn_blocking(move || survivors(&marker))
            .await
            .expect("scan");
        busy.abort();
        left
    });
    drop(rt);
    assert!(
        left.is_empty(),
        "kernel processes outlived their pool: {left:?}"
    );
}
