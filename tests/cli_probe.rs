//! `sessionpad probe` from the real binary, against two real pools on this
//! machine side by side: a sandboxed `serve` and a `serve --no-sandbox`. The
//! battery runs for real in each (real kernels, real system calls); the rows
//! the sandbox decides must differ, and every check of the battery appears.
//! Network traffic stays on loopback (the battery judges routes off the
//! machine by UDP `connect()` only).
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// Every check the battery prints, in its order (docs/cli.md lists them).
const CHECKS: &[&str] = &[
    "host /etc/shadow",
    "host /home",
    "host processes",
    "container sockets",
    "other sessions' files",
    "uid and gid",
    "capabilities",
    "no_new_privs",
    "seccomp",
    "unshare user namespace",
    "unshare mount namespace",
    "mount tmpfs",
    "ptrace",
    "bpf",
    "io_uring",
    "network interfaces",
    "routes",
    "route off the machine (IPv4)",
    "route off the machine (IPv6)",
    "cloud metadata endpoint",
    "DNS resolver",
    "managed identity endpoint",
    "proxy variables",
    "loopback services",
    "writable /",
    "writable /etc",
    "writable /usr",
    "writable /tmp",
    "writable /mnt/data",
    "writable home",
    "memory limit",
    "process limit",
    "disk limit",
    "time limit",
    "not tried",
];

/// `sessionpad ARGS` with its own data directory, no config file, no
/// endpoint or token from the environment.
fn sessionpad(data: &Path, args: &[&str]) -> Command {
    let mut cmd = common::sessionpad_command(data);
    cmd.args(args);
    cmd
}

/// A running `sessionpad serve --no-auth` and its endpoint.
struct Serve {
    child: Child,
    endpoint: String,
}

impl Serve {
    fn start(data: &Path, extra: &[&str]) -> Self {
        let mut args = vec!["serve", "--port", "0", "--ready-sessions", "0", "--no-auth"];
        args.extend_from_slice(extra);
        let mut cmd = sessionpad(data, &args);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let (child, endpoint) = common::spawn_serve(cmd);
        Self { child, endpoint }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        common::end_gracefully(&mut self.child);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The result of `check` on `pool` in a two-pool `--json` answer.
fn result<'a>(all: &'a [Value], pool: &str, check: &str) -> (&'a str, &'a str) {
    let row = all
        .iter()
        .find(|v| v["pool"] == pool && v["check"] == check)
        .unwrap_or_else(|| panic!("no {check:?} for {pool}"));
    (
        row["result"].as_str().unwrap(),
        row["evidence"].as_str().unwrap(),
    )
}

#[test]
fn probe_shows_where_a_sandboxed_pool_and_an_unsandboxed_one_differ() {
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        common::sandbox_tests_skipped("the sandbox does not work here");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let sandboxed = Serve::start(&data.path().join("a"), &[]);
    let open = Serve::start(&data.path().join("b"), &["--no-sandbox"]);
    let (a, b) = (sandboxed.endpoint.as_str(), open.endpoint.as_str());
    let both = ["probe", "--endpoint", a, "--endpoint", b];

    // --json: one object a check and pool, each with its pool.
    let out = sessionpad(data.path(), &[&both[..], &["--json"]].concat())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let all: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let label = |e: &str| e.trim_start_matches("http://").to_string();
    let (la, lb) = (label(a), label(b));
    for pool in [&la, &lb] {
        let names: Vec<&str> = all
            .iter()
            .filter(|v| v["pool"] == pool.as_str())
            .map(|v| v["check"].as_str().unwrap())
            .collect();
        assert_eq!(names, CHECKS, "every check, once, in order, for {pool}");
    }
    for v in &all {
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["check", "evidence", "pool", "result", "tried"],
            "{v}"
        );
        assert!(
            ["held", "open", "not tried"].contains(&v["result"].as_str().unwrap()),
            "{v}"
        );
    }
    // Rows the sandbox decides: held in it, open without it (as root, the
    // unsandboxed session is root of this machine, so more rows differ).
    let mut differ = vec![
        "host processes",
        "other sessions' files",
        "seccomp",
        "no_new_privs",
        "unshare user namespace",
        "mount tmpfs",
        "network interfaces",
    ];
    if common::is_root() {
        differ.extend(["host /etc/shadow", "capabilities", "bpf", "writable /usr"]);
    }
    for check in differ {
        let (ra, ea) = result(&all, &la, check);
        let (rb, eb) = result(&all, &lb, check);
        assert_eq!(
            (ra, rb),
            ("held", "open"),
            "{check}: sandboxed {ea:?}, unsandboxed {eb:?}"
        );
    }
    // The sandboxed session's namespace holds only lo; the host has more.
    assert_eq!(result(&all, &la, "network interfaces").1, "lo");
    assert!(result(&all, &lb, "network interfaces").1.contains("lo "));
    assert!(result(&all, &la, "seccomp").1.contains("Seccomp 2"));
    // The system calls ran up to the step that must fail, and failed there.
    assert!(
        result(&all, &la, "unshare user namespace")
            .1
            .starts_with("failed: EPERM"),
        "{:?}",
        result(&all, &la, "unshare user namespace")
    );
    // The unsandboxed session has no /mnt/data: its working folder is
    // measured instead, and said so (it was `/mnt/data: ENOENT`).
    let disk = result(&all, &lb, "disk limit").1;
    assert!(
        disk.starts_with("/mnt/data (not there: its working folder) ") && disk.contains("MiB free"),
        "{disk}"
    );
    assert!(result(&all, &la, "disk limit").1.starts_with("/mnt/data "));
    // Both pools' sessions are writable where a session must write.
    for pool in [&la, &lb] {
        assert_eq!(result(&all, pool, "writable /tmp").0, "open");
        assert_eq!(result(&all, pool, "time limit").0, "not tried");
    }

    // The table: one row a check, the differing rows marked, no escapes.
    let out = sessionpad(data.path(), &both).output().unwrap();
    let table = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!table.contains('\x1b'), "{table:?}");
    let row = |check: &str| {
        table
            .lines()
            .find(|l| l.starts_with(check) && !l.starts_with("    "))
            .unwrap_or_else(|| panic!("no row {check:?}:\n{table}"))
            .to_string()
    };
    assert!(row("seccomp").contains("differs"), "{table}");
    assert!(!row("time limit").contains("differs"), "{table}");
    for check in CHECKS {
        row(check);
    }

    // One pool: no "pool" key, and the fresh session was ended.
    let out = sessionpad(data.path(), &["probe", "--endpoint", a, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let one: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(one.len(), CHECKS.len());
    assert!(one.iter().all(|v| v.get("pool").is_none()));
    let out = sessionpad(data.path(), &["--endpoint", a, "sessions", "ls", "--json"])
        .output()
        .unwrap();
    let listed = text(&out.stdout);
    assert!(
        !listed.contains("probe-"),
        "the probe's sessions ended:\n{listed}"
    );
}

/// `sessionpad --endpoint A probe --endpoint B` used to probe B alone, A
/// dropped without a word (clap gives probe's own `--endpoint` the global
/// one's place): it is refused before anything is sent, saying how to ask.
#[test]
fn an_endpoint_before_probe_is_refused_not_dropped() {
    let data = tempfile::tempdir().unwrap();
    let out = sessionpad(
        data.path(),
        &[
            "--endpoint",
            "http://127.0.0.1:9/a",
            "probe",
            "--endpoint",
            "http://127.0.0.1:9/b",
        ],
    )
    .output()
    .unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("--endpoint before `probe` is not used by probe")
            && err.contains("probe --endpoint A --endpoint B"),
        "{err}"
    );
    assert!(!err.contains("cannot reach"), "nothing was sent: {err}");
}
