//! Attacks on the local pool's sandbox, run for real: each test executes hostile
//! code in a real sandboxed kernel through the pool's HTTP API, and the code
//! prints what it tries before the step that must fail (`trying …`), so a test
//! cannot pass by not trying. Covered: host files (home, data, cache, another
//! session's folder and kernel runtime folder), the environment, capabilities,
//! `no_new_privs`, the seccomp filter, the user id, memory, processes, `/tmp`,
//! file size and the network. A Shell pool's commands (`--container-type
//! shell`) are attacked too: host files, the environment, the user id and new
//! namespaces; and a shell command run through the MCP server.
//!
//! Run as root (CI) the limits are enforced by cgroups where the machine allows;
//! `the_attacks_also_fail_as_an_unprivileged_user` then runs every other test of
//! this file again as `nobody` (user namespaces and rlimits), with a Python
//! environment of its own built from `/usr/bin/python3`.
//!
//! The sandbox is built into sessionpad: these tests run on any Linux machine
//! with user namespaces. Where the machine cannot build it they say why and
//! pass without attacking, except under CI (`CI` set), where that fails.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{TestPool, identifier};
use sessionpad::client::{SessionClient, ShellRequest};
use sessionpad::protocol::limits::Limits;
use sessionpad::protocol::{ApiVersion, ContainerType, Execution, ExecutionStatus};

const MIB: u64 = 1024 * 1024;

/// A pool with small limits, so the attacks reach them quickly; `None` (and a
/// note on stderr) when this machine cannot build the sandbox, a failure under
/// CI.
async fn pool() -> Option<TestPool> {
    let pool = TestPool::start_with(|o| {
        o.ready_sessions = 1;
        o.limits = Limits {
            memory_bytes: 768 * MIB,
            processes: 64,
            tmp_bytes: 32 * MIB,
            file_bytes: 64 * MIB,
            data_bytes: 48 * MIB,
            cpu_weight: 100,
            stream_bytes: 8 * MIB,
        };
    })
    .await;
    if pool.pool.isolation().is_sandboxed() {
        Some(pool)
    } else {
        common::sandbox_tests_skipped(&pool.pool.isolation().warning().unwrap_or_default());
        None
    }
}

async fn run(client: &SessionClient, id: &str, code: &str) -> Execution {
    client
        .execute(id, code, Duration::from_secs(120))
        .await
        .expect("the pool answers")
}

/// `stdout`, after checking the attack printed `done` last.
fn ran_to_its_end(stdout: String, stderr: &str) -> String {
    assert!(
        stdout.trim_end().ends_with("done"),
        "the attack did not run to its end:\nstdout: {stdout}\nstderr: {stderr}"
    );
    stdout
}

/// Runs `code` and returns stdout, after checking it ran to its end (`done`).
async fn run_ok(client: &SessionClient, id: &str, code: &str) -> String {
    let e = run(client, id, &format!("{code}\nprint('done')")).await;
    ran_to_its_end(e.stdout, &e.stderr)
}

/// Python that defines `fill(path, total, ok=False)`: writes `path` a MiB at a
/// time up to `total` bytes, and prints `blocked PATH: ERROR after N MiB` where
/// the file system (or a limit) stops it, else `wrote` (when `ok`) or `LEAKED`.
const FILL_PY: &str = r#"
import os
def fill(path, total, ok=False):
    print("writing" if ok else "trying", path)
    written = 0
    try:
        with open(path, "wb") as f:
            while written < total:
                f.write(b"z" * (1024 * 1024))
                f.flush()
                written += 1024 * 1024
        print("wrote" if ok else "LEAKED", path, written // (1024 * 1024), "MiB")
    except OSError as e:
        print(f"blocked {path}: {e} after {written // (1024 * 1024)} MiB")
"#;

/// What every session's environment may hold (the kernel's allow-list, and
/// `PWD`, which shells and Python's `os` may set).
const SESSION_ENV: [&str; 7] = [
    "PATH",
    "HOME",
    "LANG",
    "TZ",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "PWD",
];

/// The `env NAME=VALUE` lines of `out`, as pairs.
fn env_lines(out: &str) -> Vec<(&str, &str)> {
    out.lines()
        .filter_map(|l| l.strip_prefix("env "))
        .filter_map(|l| l.split_once('='))
        .collect()
}

/// Asserts that nothing of this test process's environment (cargo's
/// variables, the user's secrets) is in `seen` (what a session's code saw),
/// but for the `allowed` names, and that `HOME` is `/tmp`.
fn assert_no_leak(seen: &[(&str, &str)], allowed: &[&str], what: &str) {
    for (name, value) in std::env::vars() {
        if allowed.contains(&name.as_str()) {
            continue;
        }
        assert!(
            !seen.iter().any(|(k, v)| *k == name && *v == value),
            "{name} leaked into the {what}"
        );
    }
    assert!(
        seen.iter().any(|(k, v)| *k == "HOME" && *v == "/tmp"),
        "{seen:?}"
    );
}

/// Asserts every `trying X` line of `out` is followed by `blocked X: …`.
fn all_blocked(out: &str) {
    let tried: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("trying "))
        .collect();
    assert!(!tried.is_empty(), "nothing was tried:\n{out}");
    for t in tried {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("blocked {t}:"))),
            "{t} was not blocked:\n{out}"
        );
    }
    assert!(!out.contains("LEAKED"), "{out}");
}

/// Python that tries to read each path and prints `blocked` or `LEAKED`.
fn read_each(paths: &[PathBuf]) -> String {
    read_each_but(paths, "False")
}

/// [`read_each`], skipping the paths `p` for which the Python expression `skip`
/// is true.
fn read_each_but(paths: &[PathBuf], skip: &str) -> String {
    let list: Vec<String> = paths
        .iter()
        .map(|p| format!("{:?}", p.to_string_lossy()))
        .collect();
    format!(
        r#"
import os
for p in [{}]:
    if {}:
        continue
    print("trying", p)
    try:
        if os.path.isdir(p):
            print("LEAKED", p, os.listdir(p))
        else:
            print("LEAKED", p, open(p, "rb").read(60))
    except OSError as e:
        print(f"blocked {{p}}: {{e}}")
"#,
        list.join(", "),
        skip
    )
}

#[tokio::test]
async fn host_folders_and_secrets_are_not_visible() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    // Secrets planted where a user keeps them: the home folder, sessionpad's own
    // data and cache folders, next to the session folders.
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let secret_name = format!("sessionpad-test-secret-{}", uuid::Uuid::new_v4().simple());
    let mut planted = Planted::default();
    for dir in [
        home.clone(),
        sessionpad::dirs::data_dir(),
        sessionpad::dirs::cache_dir(),
        pool.dir.path().to_path_buf(),
    ] {
        if std::fs::create_dir_all(&dir).is_ok() {
            let p = dir.join(&secret_name);
            if std::fs::write(&p, "TOPSECRET").is_ok() {
                planted.0.push(p);
            }
        }
    }
    assert!(!planted.0.is_empty());
    let mut paths = planted.0.clone();
    paths.extend(
        [
            "/etc/shadow",
            "/home",
            "/var",
            "/run",
            "/sys/fs/cgroup",
            "/boot",
        ]
        .map(PathBuf::from),
    );
    paths.push(home.join(".ssh"));
    paths.push(home.join(".azure"));
    paths.push(home.join(".config"));
    paths.push(sessionpad::dirs::data_dir().join("pool-sessions"));
    paths.push(pool.dir.path().join("sessions"));
    let out = run_ok(&client, &identifier(), &read_each(&paths)).await;
    all_blocked(&out);
    assert!(!out.contains("TOPSECRET"));
}

/// The Python environment sessionpad builds lives below the host user's cache
/// folder (`~/.cache/sessionpad/python/env-…`): bound at that path, it told a
/// session the host's user name (`/home` listed it) and where the host keeps
/// its files (`sys.prefix`). A session sees it at a neutral path instead.
#[tokio::test]
async fn the_python_environment_does_not_tell_where_the_host_keeps_it() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let cache = sessionpad::dirs::cache_dir();
    let code = format!(
        "import os, sys\nprint('prefix', sys.prefix)\nprint('executable', sys.executable)\n\
         print('path', os.environ.get('PATH'))\nprint('sys.path', sys.path)\n\
         import numpy\nprint('numpy', numpy.__file__)\n{}",
        read_each(&[home.clone(), cache.clone(), PathBuf::from("/home")])
    );
    let out = run_ok(&client, &identifier(), &code).await;
    all_blocked(&out);
    for host in [&home, &cache] {
        let host = host.to_string_lossy();
        assert!(
            !out.lines()
                .filter(|l| !l.starts_with("trying ") && !l.starts_with("blocked "))
                .any(|l| l.contains(&*format!("{host}/"))),
            "the session saw the host path {host}:\n{out}"
        );
    }
}

/// Secrets a test planted, removed when it ends, even by a failed assertion.
#[derive(Default)]
struct Planted(Vec<PathBuf>);

impl Drop for Planted {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[tokio::test]
async fn another_sessions_folder_and_kernel_are_out_of_reach() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    let (victim, attacker) = (identifier(), identifier());
    run_ok(
        &client,
        &victim,
        "open('/mnt/data/victim.txt','w').write('VICTIM-DATA')",
    )
    .await;
    let session = pool.pool.registry().get(&victim).expect("victim session");
    // Where the files are (a holder's view when a tmpfs in the pool's user
    // namespace holds them), and the folder's own path on the host.
    let view = pool.pool.registry().files_of(&session);
    assert!(view.join("victim.txt").exists());
    let mut paths = vec![
        view.join("victim.txt"),
        view,
        session.folder.join("victim.txt"),
        session.folder.clone(),
    ];
    // The victim's kernel runtime folders (connection file with its key).
    let runtime: Vec<PathBuf> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("sp-"))
        })
        .collect();
    for r in &runtime {
        for n in 0..6 {
            paths.push(r.join(n.to_string()).join("connection.json"));
        }
    }
    // The attacker's own kernel may read its own runtime folder: skip it (its
    // path is on the kernel's command line, `-f …/connection.json`).
    let code = format!(
        "import os\nargv = open('/proc/self/cmdline').read().split('\\0')\nown = os.path.dirname(argv[argv.index('-f') + 1])\nprint('own runtime folder', own)\n{}",
        read_each_but(&paths, "p.startswith(own + '/')")
    );
    let out = run_ok(&client, &attacker, &code).await;
    all_blocked(&out);
    assert!(!out.contains("VICTIM-DATA"));
}

#[tokio::test]
async fn the_environment_is_an_allow_list() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    let out = run_ok(
        &client,
        &identifier(),
        "import os\nfor k, v in sorted(os.environ.items()): print(f'env {k}={v}')",
    )
    .await;
    let kernel = env_lines(&out);
    // Nothing of this test process's environment reaches the kernel, but for
    // the few allowed names.
    let allowed = [
        &SESSION_ENV[..],
        &["PYTHONUNBUFFERED", "PYDEVD_DISABLE_FILE_VALIDATION"],
    ]
    .concat();
    assert_no_leak(&kernel, &allowed, "kernel");
    assert!(kernel.iter().all(|(k, _)| *k != "CARGO_MANIFEST_DIR"));
}

#[tokio::test]
async fn no_capabilities_no_new_privileges_and_a_seccomp_filter() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    let code = format!(
        r#"
import ctypes, ctypes.util, errno, os
status = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\t" in l)
for k in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"]:
    print("status", k, status[k].strip())
print("uid", os.getuid(), os.geteuid())
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def attempt(name, nr, *args):
    print("trying", name)
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    e = ctypes.get_errno()
    if r == -1 and e in (errno.EPERM, errno.ENOSYS, errno.EACCES):
        print(f"blocked {{name}}: {{os.strerror(e)}}")
    else:
        print("LEAKED", name, r, e)
attempt("mount", {mount}, 0, 0, 0, 0, 0)
attempt("umount2", {umount2}, 0, 0)
attempt("unshare(CLONE_NEWUSER)", {unshare}, {newuser})
attempt("unshare(CLONE_NEWNS)", {unshare}, {newns})
attempt("setns", {setns}, 0, 0)
attempt("ptrace(PTRACE_ATTACH, 1)", {ptrace}, 16, 1, 0, 0)
attempt("bpf", {bpf}, 0, 0, 0)
attempt("keyctl", {keyctl}, 0, 0, 0, 0, 0)
attempt("add_key", {add_key}, 0, 0, 0, 0, 0)
attempt("init_module", {init_module}, 0, 0, 0)
attempt("reboot", {reboot}, 0xfee1dead, 672274793, 0x4321fedc, 0)
attempt("clone3", {clone3}, 0, 0)
attempt("clone(CLONE_NEWUSER)", {clone}, {newuser} | 17, 0, 0, 0, 0)
attempt("pivot_root", {pivot_root}, 0, 0)
attempt("open_by_handle_at", {open_by_handle_at}, 0, 0, 0)
"#,
        mount = libc::SYS_mount,
        umount2 = libc::SYS_umount2,
        unshare = libc::SYS_unshare,
        setns = libc::SYS_setns,
        ptrace = libc::SYS_ptrace,
        bpf = libc::SYS_bpf,
        keyctl = libc::SYS_keyctl,
        add_key = libc::SYS_add_key,
        init_module = libc::SYS_init_module,
        reboot = libc::SYS_reboot,
        clone3 = libc::SYS_clone3,
        clone = libc::SYS_clone,
        pivot_root = libc::SYS_pivot_root,
        open_by_handle_at = libc::SYS_open_by_handle_at,
        newuser = libc::CLONE_NEWUSER,
        newns = libc::CLONE_NEWNS,
    );
    let out = run_ok(&client, &identifier(), &code).await;
    all_blocked(&out);
    for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert!(
            out.contains(&format!("status {cap} 0000000000000000")),
            "{cap}:\n{out}"
        );
    }
    assert!(out.contains("status NoNewPrivs 1"), "{out}");
    assert!(out.contains("status Seccomp 2"), "{out}");
    // The shell tools fail too (they reach the same calls).
    let e = run(
        &client,
        &identifier(),
        "import subprocess\nprint(subprocess.run('mount -o remount,bind,rw /; umount -l /tmp; unshare -r true', shell=True, capture_output=True, text=True))",
    )
    .await;
    assert!(e.stdout.contains("returncode=1"), "{}", e.stdout);
}

#[tokio::test]
async fn sessions_never_act_as_host_root() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    let out = run_ok(
        &client,
        &id,
        "import os\nprint('uid', os.getuid())\nopen('/mnt/data/mine.txt','w').write('x')\nprint('trying chown to root')\ntry:\n    os.chown('/mnt/data/mine.txt', 0, 0)\n    print('LEAKED chown')\nexcept OSError as e:\n    print(f'blocked chown to root: {e}')",
    )
    .await;
    all_blocked(&out);
    assert!(!out.contains("uid 0\n"), "{out}");
    let session = pool.pool.registry().get(&id).unwrap();
    let meta = std::fs::metadata(pool.pool.registry().files_of(&session).join("mine.txt")).unwrap();
    assert_ne!(
        std::os::unix::fs::MetadataExt::uid(&meta),
        0,
        "the session's file belongs to host root"
    );
}

#[tokio::test]
async fn memory_over_the_limit_fails_the_cell_and_the_pool_lives_on() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    let (hog, bystander) = (identifier(), identifier());
    run_ok(&client, &bystander, "kept = 7").await;
    run_ok(&client, &hog, "before = 1").await;
    let e = run(
        &client,
        &hog,
        "open('/mnt/data/hog-started', 'w').write('trying 1 GiB')\nx = bytearray(1024**3)\nx[::4096] = b'y' * len(x[::4096])\nprint('LEAKED')",
    )
    .await;
    assert_eq!(e.status, ExecutionStatus::Failed, "{e:?}");
    // The attack ran up to the allocation (its output may die with the kernel,
    // so it leaves a mark in its folder instead).
    let registry = pool.pool.registry();
    let folder = registry.files_of(&registry.get(&hog).unwrap());
    assert!(folder.join("hog-started").exists(), "{e:?}");
    assert!(!e.stdout.contains("LEAKED"));
    // cgroups: the kernel is killed and Azure's "Execution aborted"; rlimits: a
    // MemoryError in the cell.
    assert!(
        e.stderr.contains("Execution aborted") || e.stderr.contains("MemoryError"),
        "{}",
        e.stderr
    );
    let after = run_ok(&client, &hog, "print('alive')").await;
    assert!(after.contains("alive"));
    let other = run_ok(&client, &bystander, "print('kept', kept)").await;
    assert!(other.contains("kept 7"), "{other}");
}

#[tokio::test]
async fn a_fork_bomb_stops_at_the_limit_and_is_cleaned_up() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    run_ok(&client, &id, "x = 1").await;
    let bomb = r#"
import os, time
print("trying the fork bomb", flush=True)
refused = 0
children = 0
for _ in range(400):
    try:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        children += 1
    except OSError:
        refused += 1
print("children", children, "refused", refused, flush=True)
"#;
    let e = run(&client, &id, bomb).await;
    assert!(e.stdout.contains("trying the fork bomb"), "{e:?}");
    let (children, refused) = e
        .stdout
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("children")).then(|| {
                let c: u64 = w.next().and_then(|n| n.parse().ok()).unwrap_or(999);
                let _ = w.next();
                let r: u64 = w.next().and_then(|n| n.parse().ok()).unwrap_or(0);
                (c, r)
            })
        })
        .expect("the bomb reported");
    assert!(children < 64, "{children} children: the limit did not hold");
    assert!(refused > 0);
    assert_eq!(e.status, ExecutionStatus::Failed, "{e:?}");
    assert!(e.stderr.contains("limit of 64 processes"), "{}", e.stderr);
    // Cleaned up: the next cell runs in a fresh kernel with few processes.
    let out = run_ok(
        &client,
        &id,
        "import os\nprint('processes', len([p for p in os.listdir('/proc') if p.isdigit()]))",
    )
    .await;
    let n: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("processes "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    assert!(n < 10, "{n} processes left in the session");
}

#[tokio::test]
async fn tmp_data_and_file_sizes_are_limited() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    // One file past /tmp's size and past /mnt/data's; then /mnt/data's total:
    // files of 20 MiB each, every one under the 64 MiB file limit.
    let code = FILL_PY.to_string()
        + r#"
fill("/tmp/big", 100 * 1024 * 1024)
os.remove("/tmp/big")  # IPython keeps its history below /tmp (HOME)
fill("/mnt/data/big", 100 * 1024 * 1024)
os.remove("/mnt/data/big")
fill("/mnt/data/a", 20 * 1024 * 1024, ok=True)
fill("/mnt/data/b", 20 * 1024 * 1024, ok=True)
fill("/mnt/data/c", 20 * 1024 * 1024)
"#;
    let id = identifier();
    let out = run_ok(&client, &id, &code).await;
    all_blocked(&out);
    let blocked_after = |path: &str| -> u64 {
        out.lines()
            .find_map(|l| {
                l.strip_prefix(&format!(
                    "blocked {path}: [Errno 28] No space left on device after "
                ))
            })
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{path} was not full:\n{out}"))
    };
    // /tmp: 32 MiB of tmpfs (the kernel keeps a little there itself).
    assert!((24..=32).contains(&blocked_after("/tmp/big")), "{out}");
    // /mnt/data: a 48 MiB tmpfs, on the host where the pool runs as root, else
    // in the pool's user namespace. One file stops at 48 MiB, before its 64 MiB
    // file limit; and the third 20 MiB file stops at what the first two left.
    let mechanism = pool
        .pool
        .isolation()
        .limits
        .iter()
        .find(|l| l.what == "/mnt/data")
        .map(|l| l.mechanism.clone())
        .unwrap_or_default();
    assert!(mechanism.starts_with("tmpfs"), "{mechanism}");
    assert_eq!(blocked_after("/mnt/data/big"), 48, "{out}");
    assert!(out.contains("wrote /mnt/data/a 20 MiB"), "{out}");
    assert!(out.contains("wrote /mnt/data/b 20 MiB"), "{out}");
    assert!((7..=8).contains(&blocked_after("/mnt/data/c")), "{out}");
    // The pool sees the session's files (the same tmpfs), and an upload that
    // does not fit gets a clear 413, not a half-written file.
    let names = common::file_names(&client, &id).await;
    assert!(
        names.contains(&"a".to_string()) && names.contains(&"b".to_string()),
        "{names:?}"
    );
    let local = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(local.path(), vec![1u8; 16 * 1024 * 1024]).unwrap();
    let err = client
        .upload_file(&id, local.path(), "big-upload.bin", None, &|_, _| {})
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("413") && text.contains("is full"), "{text}");
    let after = run_ok(
        &client,
        &id,
        "import os\nprint(sorted(os.listdir('/mnt/data')))",
    )
    .await;
    assert!(!after.contains("big-upload"), "{after}");
}

#[tokio::test]
async fn the_hosts_udp_ipv6_and_abstract_unix_sockets_are_out_of_reach() {
    use std::os::linux::net::SocketAddrExt;
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    // Listeners of this (host) process: UDP on loopback, TCP on IPv6's
    // loopback, and an abstract Unix socket (no file: only the network
    // namespace separates it).
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let tcp6 = std::net::TcpListener::bind("[::1]:0").ok();
    let tcp6_port = tcp6.as_ref().map_or(0, |l| l.local_addr().unwrap().port());
    let name = format!("sessionpad-attack-{}", uuid::Uuid::new_v4().simple());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _abstract = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let code = format!(
        r#"
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# Into the sandbox's own loopback: sent, and it must not arrive on the host's.
s.sendto(b"LEAK", ("127.0.0.1", {udp_port}))
print("sent udp to 127.0.0.1")
print("trying udp out")
try:
    s.sendto(b"LEAK", ("10.0.0.1", 9))
    print("LEAKED udp out")
except OSError as e:
    print(f"blocked udp out: {{e}}")
if {tcp6_port}:
    print("trying tcp6")
    try:
        socket.create_connection(("::1", {tcp6_port}), timeout=3)
        print("LEAKED tcp6")
    except OSError as e:
        print(f"blocked tcp6: {{e}}")
print("trying abstract")
try:
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.connect("\0{name}")
    print("LEAKED abstract")
except OSError as e:
    print(f"blocked abstract: {{e}}")
"#
    );
    let out = run_ok(&client, &identifier(), &code).await;
    all_blocked(&out);
    assert!(out.contains("sent udp to 127.0.0.1"), "{out}");
    // Nothing the session sent reached the host's UDP socket.
    std::thread::sleep(Duration::from_millis(300));
    let mut buf = [0u8; 16];
    assert!(udp.recv_from(&mut buf).is_err(), "a datagram arrived");
}

#[tokio::test]
async fn no_network_without_egress() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    let port = pool.pool.addr().port();
    let code = format!(
        r#"
import socket
for host in ["127.0.0.1", "10.0.0.1"]:
    print("trying", host)
    try:
        socket.create_connection((host, {port}), timeout=3)
        print("LEAKED", host)
    except OSError as e:
        print(f"blocked {{host}}: {{e}}")
"#
    );
    let out = run_ok(&client, &identifier(), &code).await;
    all_blocked(&out);
}

#[tokio::test]
async fn socket_families_beyond_unix_inet_and_netlink_route_are_refused() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    // AF_VSOCK reaches the host of a virtual machine (cloud VMs, WSL2, microVM
    // guests); the others reach devices, the kernel's crypto or its events.
    let code = r#"
import socket
refused = [
    ("AF_VSOCK", 40, socket.SOCK_STREAM, 0),
    ("AF_VSOCK datagram", 40, socket.SOCK_DGRAM, 0),
    ("AF_PACKET", 17, socket.SOCK_RAW, 0),
    ("AF_ALG", 38, socket.SOCK_SEQPACKET, 0),
    ("AF_BLUETOOTH", 31, socket.SOCK_STREAM, 0),
    ("AF_KEY", 15, socket.SOCK_RAW, 2),
    ("AF_XDP", 44, socket.SOCK_RAW, 0),
    ("AF_TIPC", 30, socket.SOCK_RDM, 0),
    ("netlink audit", 16, socket.SOCK_RAW, 9),
    ("netlink uevent", 16, socket.SOCK_DGRAM, 15),
]
for name, family, kind, proto in refused:
    print("trying", name)
    try:
        socket.socket(family, kind, proto)
        print("LEAKED", name)
    except OSError as e:
        print(f"blocked {name}: {e}")
print("trying socketpair AF_VSOCK")
try:
    socket.socketpair(40, socket.SOCK_STREAM)
    print("LEAKED socketpair")
except OSError as e:
    print(f"blocked socketpair AF_VSOCK: {e}")
for name, family, kind, proto in [
    ("AF_UNIX", socket.AF_UNIX, socket.SOCK_STREAM, 0),
    ("AF_INET", socket.AF_INET, socket.SOCK_STREAM, 0),
    ("AF_INET6", socket.AF_INET6, socket.SOCK_DGRAM, 0),
    ("netlink route", 16, socket.SOCK_RAW, 0),
]:
    socket.socket(family, kind, proto).close()
    print("allowed", name)
"#;
    let out = run_ok(&client, &identifier(), code).await;
    all_blocked(&out);
    // The filter refuses them (EPERM), whatever this kernel was built with.
    for line in out.lines().filter(|l| l.starts_with("blocked ")) {
        assert!(line.contains("[Errno 1] Operation not permitted"), "{line}");
    }
    for name in ["AF_UNIX", "AF_INET", "AF_INET6", "netlink route"] {
        assert!(out.contains(&format!("allowed {name}")), "{out}");
    }
}

#[tokio::test]
async fn pid_1_and_proc_show_nothing_of_the_host() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    let host_dir = pool.dir.path().to_string_lossy().into_owned();
    let code = r#"
import os
print("pid 1 cmdline", repr(open("/proc/1/cmdline").read()))
for what, act in [
    ("/proc/1/environ", lambda: open("/proc/1/environ").read()),
    ("/proc/1/exe", lambda: os.readlink("/proc/1/exe")),
    ("/proc/1/root", lambda: os.listdir("/proc/1/root")),
    ("/proc/1/mem", lambda: open("/proc/1/mem", "rb")),
    ("/proc/1/maps", lambda: open("/proc/1/maps").read(200)),
    ("/proc/1/fd", lambda: os.listdir("/proc/1/fd")),
]:
    print("trying", what)
    try:
        print("LEAKED", what, act())
    except OSError as e:
        print(f"blocked {what}: {e}")
seen = ""
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            seen += open(f"/proc/{pid}/cmdline").read() + "\n"
        except OSError:
            pass
seen += open("/proc/self/mountinfo").read()
open("/tmp/seen.txt", "w").write(seen)
print("read", len(seen), "bytes of /proc")
"#;
    let id = identifier();
    let out = run_ok(&client, &id, code).await;
    all_blocked(&out);
    assert!(
        out.contains("pid 1 cmdline 'sessionpad-sandbox\\x00'"),
        "{out}"
    );
    let seen = run_ok(&client, &id, "print(open('/tmp/seen.txt').read())").await;
    assert!(seen.contains("/mnt/data"), "{seen}");
    assert!(
        !seen.contains(&host_dir),
        "the host's data folder {host_dir} shows in /proc:\n{seen}"
    );
}

#[tokio::test]
async fn every_writable_file_system_is_bounded_in_bytes_and_files() {
    let Some(pool) = pool().await else { return };
    let client = pool.client(ApiVersion::V2025_10_02);
    // The kernel's runtime folder (its sockets) is on its command line.
    let code = FILL_PY.to_string()
        + r#"
argv = open("/proc/self/cmdline").read().split("\0")
runtime = os.path.dirname(argv[argv.index("-f") + 1])
print("runtime", runtime)
def files(folder, most):
    print("trying", folder + "/files")
    os.makedirs(folder + "/many", exist_ok=True)
    n = 0
    try:
        while n < most:
            open(f"{folder}/many/{n}", "w").close()
            n += 1
        print("LEAKED", folder + "/files", n)
    except OSError as e:
        print(f"blocked {folder}/files: {e} after {n} files")
    for i in range(n):
        os.remove(f"{folder}/many/{i}")
    os.rmdir(folder + "/many")
# Each file stays under the 64 MiB file limit; together they pass /dev/shm's.
fill("/dev/shm/a", 48 * 1024 * 1024, ok=True)
fill("/dev/shm/b", 48 * 1024 * 1024)
for name in ["a", "b"]:
    os.remove("/dev/shm/" + name)
fill(runtime + "/big", 200 * 1024 * 1024)
os.remove(runtime + "/big")
for target in ["/x", "/dev/x", "/etc/x", "/usr/x", "/mnt/x", "/proc/sys/kernel/hostname"]:
    print("trying", target)
    try:
        open(target, "w").write("x")
        print("LEAKED", target)
    except OSError as e:
        print(f"blocked {target}: {e}")
for folder in ["/tmp", "/dev/shm", "/mnt/data", runtime]:
    files(folder, 100000)
"#;
    let out = run_ok(&client, &identifier(), &code).await;
    all_blocked(&out);
    let after = |what: &str, unit: &str| -> u64 {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("blocked {what}: [Errno 28]")))
            .unwrap_or_else(|| panic!("{what} was not full:\n{out}"));
        line.rsplit_once(" after ")
            .and_then(|(_, n)| n.strip_suffix(unit))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    // /dev/shm: 64 MiB; the runtime folder: 1 MiB (less what the pool wrote).
    assert!(out.contains("wrote /dev/shm/a 48 MiB"), "{out}");
    assert!((12..=16).contains(&after("/dev/shm/b", "MiB")), "{out}");
    let runtime = out
        .lines()
        .find_map(|l| l.strip_prefix("runtime "))
        .unwrap_or_else(|| panic!("{out}"))
        .to_string();
    assert_eq!(after(&format!("{runtime}/big"), "MiB"), 0, "{out}");
    // Read-only everywhere else.
    for target in [
        "/x",
        "/dev/x",
        "/etc/x",
        "/usr/x",
        "/mnt/x",
        "/proc/sys/kernel/hostname",
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("blocked {target}: ")))
            .unwrap_or_else(|| panic!("{target}:\n{out}"));
        assert!(
            line.contains("Read-only file system") || line.contains("Permission denied"),
            "{line}"
        );
    }
    // Files: one per 16 KiB of each tmpfs, at least 256 (less those already
    // there).
    let most = |bytes: u64| sessionpad::pool::sandbox::inodes_for(bytes);
    for (folder, limit) in [
        ("/tmp", most(32 * MIB)),
        ("/dev/shm", most(sessionpad::pool::sandbox::SHM_BYTES)),
        ("/mnt/data", most(48 * MIB)),
    ] {
        let n = after(&format!("{folder}/files"), "files");
        assert!(
            n + 64 >= limit && n <= limit,
            "{folder}: {n} files of {limit}\n{out}"
        );
    }
    let n = after(&format!("{runtime}/files"), "files");
    assert!(n <= 256, "{n} files in the runtime folder\n{out}");
    // The pool answers throughout.
    let again = run_ok(&client, &identifier(), "print(1 + 1)").await;
    assert!(again.contains('2'), "{again}");
    // And leaves no mount on the host (its sessions' and kernels' tmpfs).
    let common::TestPool { pool, dir } = pool;
    pool.shutdown().await;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let runtime_parent = std::path::Path::new(&runtime)
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for left in [runtime_parent, dir.path().to_string_lossy().into_owned()] {
        assert!(
            !mounts.contains(&left),
            "a mount under {left} is left:\n{mounts}"
        );
    }
}

// ---- a Shell pool's commands ------------------------------------------------------

/// A Shell pool with the same sandbox; `None` (and a note) without one.
async fn shell_pool() -> Option<(TestPool, SessionClient)> {
    let pool = TestPool::start_as(ContainerType::Shell).await;
    if !pool.pool.isolation().is_sandboxed() {
        common::sandbox_tests_skipped(&pool.pool.isolation().warning().unwrap_or_default());
        return None;
    }
    let client = pool
        .client(ApiVersion::V2025_10_02)
        .with_container_type(ContainerType::Shell);
    Some((pool, client))
}

/// Runs a shell script and returns its stdout, after checking it ran to its
/// end (`done`).
async fn shell_ok(client: &SessionClient, id: &str, script: &str) -> String {
    let e = client
        .execute_shell(
            id,
            &ShellRequest::line(format!("{script}\necho done"), Duration::from_secs(120)),
        )
        .await
        .expect("the pool answers");
    ran_to_its_end(e.stdout, &e.stderr)
}

/// A shell loop that tries to read (or list) each path and prints `blocked`
/// or `LEAKED` and the start of what it read.
fn shell_read_each(paths: &[PathBuf]) -> String {
    let quoted: Vec<String> = paths
        .iter()
        .map(|p| format!("'{}'", p.to_string_lossy().replace('\'', "'\\''")))
        .collect();
    format!(
        r#"for p in {}; do
  echo "trying $p"
  if got=$(head -c 60 "$p" 2>&1) || got=$(ls -A "$p" 2>&1); then
    echo "LEAKED $p $got"
  else
    echo "blocked $p: $got"
  fi
done"#,
        quoted.join(" ")
    )
}

#[tokio::test]
async fn shell_commands_see_no_host_files() {
    let Some((pool, client)) = shell_pool().await else {
        return;
    };
    // Secrets planted in the home folder and in the cache folder, whose Python
    // environment (only) is bound read-only.
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let name = format!("sessionpad-shell-secret-{}", uuid::Uuid::new_v4().simple());
    let secret = home.join(&name);
    std::fs::write(&secret, "TOPSECRET").unwrap();
    let cached = sessionpad::dirs::cache_dir().join(&name);
    std::fs::write(&cached, "TOPSECRET").unwrap();
    let victim = identifier();
    shell_ok(&client, &victim, "echo VICTIM-DATA > /mnt/data/victim.txt").await;
    let session = pool.pool.registry().get(&victim).unwrap();
    let (folder, view) = (
        session.folder.clone(),
        pool.pool.registry().files_of(&session),
    );
    assert!(view.join("victim.txt").exists());
    let paths = vec![
        secret.clone(),
        cached.clone(),
        "/etc/shadow".into(),
        "/home".into(),
        home.join(".ssh"),
        home.join(".config"),
        folder.join("victim.txt"),
        folder,
        view.join("victim.txt"),
        view,
        pool.dir.path().join("sessions"),
    ];
    let out = shell_ok(&client, &identifier(), &shell_read_each(&paths)).await;
    let _ = std::fs::remove_file(&secret);
    let _ = std::fs::remove_file(&cached);
    all_blocked(&out);
    assert!(
        !out.contains("TOPSECRET") && !out.contains("VICTIM-DATA"),
        "{out}"
    );
}

#[tokio::test]
async fn shell_commands_get_only_the_allowed_environment() {
    let Some((_pool, client)) = shell_pool().await else {
        return;
    };
    let out = shell_ok(&client, &identifier(), "env | sed 's/^/env /'").await;
    let seen = env_lines(&out);
    // bash's own (PWD, SHLVL, _) and the allow-list of the kernel, without
    // Python's settings.
    let allowed = [&SESSION_ENV[..], &["SHLVL", "_"]].concat();
    for (name, _) in &seen {
        assert!(allowed.contains(name), "{name} reached the command:\n{out}");
    }
    assert_no_leak(&seen, &allowed, "command");
}

#[tokio::test]
async fn shell_commands_never_act_as_root_nor_make_namespaces() {
    let Some((pool, client)) = shell_pool().await else {
        return;
    };
    let id = identifier();
    let out = shell_ok(
        &client,
        &id,
        r#"echo "uid $(id -u) gid $(id -g)"
echo x > mine.txt
for attempt in "chown 0:0 mine.txt" "unshare --user --map-root-user true" "unshare --mount true" "setpriv --reuid=0 true" "mount -t tmpfs none /mnt"; do
  echo "trying $attempt"
  if got=$($attempt 2>&1); then echo "LEAKED $attempt"; else echo "blocked $attempt: $got"; fi
done"#,
    )
    .await;
    all_blocked(&out);
    assert!(!out.contains("uid 0 "), "{out}");
    let session = pool.pool.registry().get(&id).unwrap();
    let meta = std::fs::metadata(pool.pool.registry().files_of(&session).join("mine.txt")).unwrap();
    assert_ne!(std::os::unix::fs::MetadataExt::uid(&meta), 0);
}

// ---- a NodeLTS pool's JavaScript ------------------------------------------------------

#[tokio::test]
async fn javascript_sees_no_host_files_no_secrets_and_is_not_root() {
    let pool = TestPool::start_as(ContainerType::NodeLts).await;
    if !pool.pool.isolation().is_sandboxed() {
        common::sandbox_tests_skipped("no sandbox");
        return;
    }
    let client = pool
        .client(ApiVersion::V2025_10_02)
        .with_container_type(ContainerType::NodeLts);
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let secret = home.join(format!(
        "sessionpad-node-secret-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::write(&secret, "TOPSECRET").unwrap();
    let paths: Vec<String> = [secret.clone(), "/etc/shadow".into(), home.join(".ssh")]
        .iter()
        .map(|p| format!("{:?}", p.to_string_lossy()))
        .collect();
    let code = format!(
        r"const fs = require('fs');
const out = [];
for (const p of [{}]) {{
  out.push('trying ' + p);
  try {{ out.push('LEAKED ' + p + ' ' + fs.readFileSync(p, 'utf8').slice(0, 60)); }}
  catch (e) {{ out.push('blocked ' + p + ': ' + e.code); }}
}}
for (const k of Object.keys(process.env)) out.push('env ' + k);
out.push('uid ' + process.getuid());
out.push('trying setuid(0)');
try {{ process.setuid(0); out.push('LEAKED setuid'); }} catch (e) {{ out.push('blocked setuid(0): ' + e.code); }}
out.push('done');
out.join('\n')",
        paths.join(", ")
    );
    let e = client
        .execute(&identifier(), &code, Duration::from_secs(60))
        .await
        .unwrap();
    let _ = std::fs::remove_file(&secret);
    let out = e.result.and_then(|v| v.json).unwrap_or_default();
    let out = out.as_str().unwrap_or_default().to_string();
    assert!(out.ends_with("done"), "{out}\n{}", e.stderr);
    all_blocked(&out);
    assert!(
        !out.contains("TOPSECRET") && !out.contains("uid 0\n"),
        "{out}"
    );
    for var in out.lines().filter_map(|l| l.strip_prefix("env ")) {
        assert!(
            ["PATH", "HOME", "LANG", "TZ"].contains(&var),
            "{var} reached JavaScript"
        );
    }
}

/// A shell command of the MCP tool `runShellCommandInRemoteEnvironment` runs
/// in the session's sandbox too: as an unprivileged user, with no
/// capabilities, `no_new_privs` and the seccomp filter, blind to host secrets,
/// with system folders read-only, writing nothing on the host outside
/// `/mnt/data`, with no network but loopback.
#[tokio::test]
async fn mcp_shell_commands_run_in_the_same_sandbox() {
    let Some(pool) = pool().await else { return };
    let mcp = common::Mcp::new(&pool);
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    // A secret next to the pool's own folders (a host temp folder: as root
    // or as `nobody`, always writable here).
    let secret = pool.dir.path().join("sessionpad-mcp-secret");
    std::fs::write(&secret, "TOPSECRET").unwrap();
    let script = format!(
        r#"echo "uid $(id -u)"
grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status
for p in '{secret}' /etc/shadow '{home}/.ssh'; do
  echo "trying read $p"
  if out=$(cat "$p" 2>&1); then echo "LEAKED $p $out"; else echo "blocked read $p: $out"; fi
done
echo "trying write /usr/pwned"
if out=$( (echo x > /usr/pwned) 2>&1); then echo "LEAKED /usr/pwned"; else echo "blocked write /usr/pwned: $out"; fi
for p in /etc/pwned '{home}/pwned' /mnt/pwned; do (echo x > "$p") 2>/dev/null; done
echo "net $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
echo done"#,
        secret = secret.display(),
        home = home.display()
    );
    let env = mcp.launch().await;
    let result = mcp
        .tool(
            "runShellCommandInRemoteEnvironment",
            serde_json::json!({"environmentId": env, "shellCommand": script}),
        )
        .await;
    let _ = std::fs::remove_file(&secret);
    let out = result["structuredContent"]["stdout"].as_str().unwrap_or("");
    assert!(out.trim_end().ends_with("done"), "{result}");
    all_blocked(out);
    assert!(!out.contains("TOPSECRET"), "{out}");
    assert!(!out.contains("uid 0\n"), "{out}");
    assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    assert!(out.contains("Seccomp:\t2"), "{out}");
    assert!(out.contains("net lo \n"), "{out}");
    // Where the sandbox has a private writable folder (its own /tmp, and /etc
    // and /mnt when it runs in a user namespace), writes stay in it: none
    // reaches the host.
    for p in [home.join("pwned"), "/etc/pwned".into(), "/mnt/pwned".into()] {
        assert!(!p.exists(), "{} was written on the host", p.display());
    }
}

/// Runs every other test of this file again as `nobody` when this one runs as
/// root and the machine can switch users: sandboxes then come from user
/// namespaces and limits from rlimits.
#[test]
fn the_attacks_also_fail_as_an_unprivileged_user() {
    common::rerun_as_nobody("the_attacks_also_fail");
}

/// Issue 26: the pool reads the files a call changed, on the host side, to
/// record them. A session plants links in its `/mnt/data` to a host file,
/// to a host folder and to another session's file, a hard link attempt, and a
/// FIFO that would block a reader: the look follows no link and opens no
/// FIFO (the cell's answer comes), so neither the host's nor the other
/// session's bytes reach the ledger; the session's own file is recorded.
#[tokio::test]
async fn the_look_at_changed_files_follows_no_planted_link() {
    let data = tempfile::tempdir().unwrap();
    let secret_dir = tempfile::tempdir().unwrap();
    let host_secret = format!("HOST-SECRET-{}", uuid::Uuid::new_v4().simple());
    let secret = secret_dir.path().join("secret.txt");
    std::fs::write(&secret, &host_secret).unwrap();
    let ledger_path = data.path().join(sessionpad::ledger::FILE_NAME);
    let pool = TestPool::start_with(|o| {
        o.ready_sessions = 1;
        o.ledger = Some(sessionpad::ledger::LedgerOptions {
            path: ledger_path.clone(),
            limits: sessionpad::ledger::LedgerConfig::default().limits(),
            files: true,
        });
    })
    .await;
    if !pool.pool.isolation().is_sandboxed() {
        common::sandbox_tests_skipped(&pool.pool.isolation().warning().unwrap_or_default());
        return;
    }
    let client = pool.client(ApiVersion::V2025_10_02);
    let (victim, attacker) = (identifier(), identifier());
    run_ok(
        &client,
        &victim,
        "open('/mnt/data/victim.txt','w').write('VICTIM-DATA')",
    )
    .await;
    let session = pool.pool.registry().get(&victim).expect("victim session");
    let view = pool.pool.registry().files_of(&session);
    let code = format!(
        "import os\n\
         for name, target in [('leak', {secret:?}), ('leakdir', {dir:?}), ('steal', {victim_file:?}), ('stealdir', {victim_dir:?})]:\n    \
             print('trying a link', name, '->', target)\n    \
             os.symlink(target, '/mnt/data/' + name)\n\
         try:\n    \
             print('trying a hard link to the host file')\n    \
             os.link({secret:?}, '/mnt/data/hard')\n    \
             print('LINKED')\n\
         except OSError as e:\n    \
             print('blocked hard link:', e)\n\
         print('trying a FIFO')\n\
         os.mkfifo('/mnt/data/pipe')\n\
         open('/mnt/data/own.txt', 'w').write('own bytes')",
        secret = secret.display().to_string(),
        dir = secret_dir.path().display().to_string(),
        victim_file = view.join("victim.txt").display().to_string(),
        victim_dir = view.display().to_string(),
    );
    let out = run_ok(&client, &attacker, &code).await;
    assert!(out.contains("trying a FIFO"), "{out}");
    assert!(!out.contains("LINKED"), "{out}");
    let recorder = pool.pool.ledger().unwrap();
    recorder.flush();
    let conn = sessionpad::ledger::schema::open_existing(&ledger_path)
        .unwrap()
        .unwrap();
    let left = sessionpad::ledger::read::files_after(&conn, None, &attacker, None).unwrap();
    assert_eq!(
        left.keys().collect::<Vec<_>>(),
        ["/mnt/data/own.txt"],
        "only the session's own regular file is recorded"
    );
    for f in left.values() {
        let bytes = sessionpad::ledger::read::file_content(&conn, f.sha256.as_deref().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(bytes, b"own bytes");
    }
    drop(conn);
    let all = common::ledger_bytes(data.path());
    assert!(
        !all.windows(host_secret.len())
            .any(|w| w == host_secret.as_bytes()),
        "the host file's bytes reached the ledger"
    );
}
