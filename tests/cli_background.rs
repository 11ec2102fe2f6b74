//! The background local pool, from the real binary: `exec`, `files` and
//! `sessions` without an endpoint reuse a running local pool or start
//! `sessionpad serve` detached (idle exit, log in the data dir), so state
//! carries across commands with no set-up; two commands starting at once share
//! one pool; `pool stop` ends it.
//!
//! Every test has its own data directory (where the discovery file and the log
//! live) and stops what it started, also when it fails.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// How long a pool may take to start, stop or idle out (generous: the machine
/// is shared; nothing is asserted about speed).
const PATIENCE: Duration = Duration::from_secs(240);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A private data directory and config file; drop stops its background pool.
struct Home {
    data: tempfile::TempDir,
    cwd: tempfile::TempDir,
}

impl Home {
    fn new(config: &str) -> Self {
        let data = tempfile::tempdir().unwrap();
        std::fs::write(data.path().join("config.toml"), config).unwrap();
        Self {
            data,
            cwd: tempfile::tempdir().unwrap(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sessionpad"));
        cmd.args(args)
            .current_dir(self.cwd.path())
            .env("SESSIONPAD_DATA_DIR", self.data.path())
            .env("SESSIONPAD_CONFIG", self.data.path().join("config.toml"))
            .env_remove("POOL_MANAGEMENT_ENDPOINT")
            .env_remove("SESSIONPAD_TOKEN");
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn discovery(&self) -> PathBuf {
        self.data.path().join("local-pool.json")
    }

    /// The pid in the discovery file, if there is one.
    fn pool_pid(&self) -> Option<u32> {
        let bytes = std::fs::read(self.discovery()).ok()?;
        let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        v["pid"].as_u64().and_then(|p| u32::try_from(p).ok())
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let pid = self.pool_pid();
        let _ = self.run(&["pool", "stop"]);
        // Belt and braces when `pool stop` itself is what failed.
        if let Some(pid) = pid.filter(|p| alive(*p)) {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

/// Whether `pid` is a running (not zombie) process.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

/// The session id of process `pid` (field 6 of `/proc/PID/stat`).
fn session_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = stat.rsplit_once(')').unwrap().1;
    rest.split_whitespace().nth(3).unwrap().parse().unwrap()
}

/// Waits until `done` holds, failing after [`PATIENCE`].
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "still waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn exec_keeps_state_with_no_set_up_and_pool_stop_ends_the_pool() {
    let home = Home::new("");
    let set = home.run(&["exec", "-c", "x = 1"]);
    assert!(set.status.success(), "{}", text(&set.stderr));
    let pid = home.pool_pid().expect("a background pool published itself");
    assert!(alive(pid), "the pool outlives the command");
    assert!(
        text(&set.stderr).contains(&format!("started the background local pool (pid {pid})")),
        "{}",
        text(&set.stderr)
    );
    assert_eq!(
        session_of(pid),
        pid,
        "detached: a session of its own, no terminal"
    );
    let printed = home.run(&["exec", "-c", "print(x)"]);
    assert_eq!(text(&printed.stdout), "1\n", "{}", text(&printed.stderr));
    assert_eq!(home.pool_pid(), Some(pid), "the same pool is reused");
    // files and sessions reach the same pool and session.
    home.run(&["exec", "-c", "open('/mnt/data/kept.txt', 'w').write('k')"]);
    let ls = home.run(&["files", "ls"]);
    assert!(
        text(&ls.stdout).contains("kept.txt"),
        "{}",
        text(&ls.stderr)
    );
    let sessions = home.run(&["--json", "sessions", "ls"]);
    let v: serde_json::Value = serde_json::from_slice(&sessions.stdout).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{v}");
    // Its log is in the data directory, for this user only, without the token.
    let log_path = home.data.path().join("logs/local-pool.log");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("pool management endpoint"), "{log}");
    assert!(log.contains(&format!("(pid {pid})")), "{log}");
    let discovery: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.discovery()).unwrap()).unwrap();
    let token = discovery["token"].as_str().unwrap();
    assert!(!log.contains(token), "the log holds no secret:\n{log}");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&log_path).unwrap().permissions(),
    );
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    // `pool stop` ends it and its discovery file.
    let stop = home.run(&["pool", "stop"]);
    assert!(stop.status.success(), "{}", text(&stop.stderr));
    assert!(
        text(&stop.stderr).contains("stopped"),
        "{}",
        text(&stop.stderr)
    );
    wait_for("the pool to end", || !alive(pid));
    assert!(!home.discovery().exists());
    let again = home.run(&["pool", "stop"]);
    assert!(again.status.success());
    assert!(
        text(&again.stderr).contains("no background local pool"),
        "{}",
        text(&again.stderr)
    );
}

#[test]
fn two_commands_starting_at_once_share_one_pool() {
    let home = Home::new("");
    let code = "import uuid\nmine = globals().setdefault('first', uuid.uuid4().hex)\nprint(mine)";
    let children: Vec<_> = (0..2)
        .map(|_| {
            home.command(&["exec", "-c", code])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for out in &outs {
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    assert_eq!(
        text(&outs[0].stdout),
        text(&outs[1].stdout),
        "both ran in the same session of the same pool"
    );
    let serves = std::fs::read_to_string(home.data.path().join("logs/local-pool.log"))
        .unwrap()
        .matches("pool management endpoint")
        .count();
    assert_eq!(serves, 1, "one pool was started");
}

#[test]
fn the_background_pool_ends_after_its_idle_period() {
    let home = Home::new("[background_pool]\nidle_exit = 1\n");
    let out = home.run(&["exec", "-c", "print(2)"]);
    assert_eq!(text(&out.stdout), "2\n", "{}", text(&out.stderr));
    let pid = home.pool_pid().expect("a background pool published itself");
    wait_for("the idle pool to end", || !alive(pid));
    assert!(!home.discovery().exists(), "it removed its discovery file");
    let log = std::fs::read_to_string(home.data.path().join("logs/local-pool.log")).unwrap();
    assert!(log.contains("idle"), "{log}");
}

#[test]
fn a_running_serve_is_reused_and_not_stopped_by_pool_stop() {
    let home = Home::new("");
    let mut serve = home.command(&["serve", "--port", "0", "--ready-sessions", "0"]);
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        serve.arg("--no-sandbox");
    }
    let mut child = serve
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let serve_pid = child.id();
    wait_for("the serve's discovery file", || {
        home.pool_pid() == Some(serve_pid)
    });
    let out = home.run(&["exec", "-c", "print(3)"]);
    assert_eq!(text(&out.stdout), "3\n", "{}", text(&out.stderr));
    assert_eq!(home.pool_pid(), Some(serve_pid), "no second pool");
    let stop = home.run(&["pool", "stop"]);
    assert_eq!(stop.status.code(), Some(2));
    assert!(
        text(&stop.stderr).contains("sessionpad serve"),
        "{}",
        text(&stop.stderr)
    );
    assert!(alive(serve_pid));
    let _ = Command::new("kill").arg(serve_pid.to_string()).status();
    let _ = child.wait();
}

/// The pid in the discovery file of the local pool of `kind` (`shell`, `node`).
fn typed_pool_pid(home: &Home, kind: &str) -> Option<u32> {
    let path = home.data.path().join(format!("local-pool-{kind}.json"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    v["pid"].as_u64().and_then(|p| u32::try_from(p).ok())
}

#[test]
fn shell_and_node_commands_get_background_pools_of_their_own() {
    let home = Home::new("");
    // A shell command's exit code is exec's, from a Shell pool started for it.
    let shell = home.run(&[
        "--container-type",
        "shell",
        "exec",
        "-c",
        "echo hi from $0; exit 3",
    ]);
    assert_eq!(shell.status.code(), Some(3), "{}", text(&shell.stderr));
    assert!(
        text(&shell.stdout).starts_with("hi from"),
        "{}",
        text(&shell.stdout)
    );
    let shell_pid = typed_pool_pid(&home, "shell").expect("a Shell pool published itself");
    assert!(
        text(&shell.stderr).contains(&format!(
            "started the background local shell pool (pid {shell_pid})"
        )),
        "{}",
        text(&shell.stderr)
    );
    // Node.js state is kept between two commands.
    let set = home.run(&["--container-type", "node", "exec", "-c", "let n = 41"]);
    assert!(set.status.success(), "{}", text(&set.stderr));
    let get = home.run(&[
        "--container-type",
        "node",
        "exec",
        "-c",
        "console.log(n + 1)",
    ]);
    assert_eq!(text(&get.stdout), "42\n", "{}", text(&get.stderr));
    let node_pid = typed_pool_pid(&home, "node").expect("a Node.js pool published itself");
    assert_ne!(node_pid, shell_pid);
    assert_eq!(home.pool_pid(), None, "no Python pool was needed");
    // A second shell command reuses the Shell pool.
    let again = home.run(&["--container-type", "shell", "exec", "-c", "true"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(typed_pool_pid(&home, "shell"), Some(shell_pid));
    // `pool stop --container-type shell` ends that one only; `pool stop` the rest.
    let one = home.run(&["--container-type", "shell", "pool", "stop"]);
    assert!(one.status.success(), "{}", text(&one.stderr));
    wait_for("the Shell pool to end", || !alive(shell_pid));
    assert!(alive(node_pid), "the Node.js pool was not named");
    let all = home.run(&["pool", "stop"]);
    assert!(
        text(&all.stderr).contains(&format!(
            "stopped the background local Node.js pool (pid {node_pid})"
        )),
        "{}",
        text(&all.stderr)
    );
    wait_for("the Node.js pool to end", || !alive(node_pid));
    assert_eq!(typed_pool_pid(&home, "node"), None, "it removed its file");
}
