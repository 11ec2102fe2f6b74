//! Saying when sessions are not isolated, from the real binary: `serve` refuses
//! to start without a working sandbox unless `--no-sandbox`, `exec` warns once
//! on an unsandboxed pool (a serve, or the background pool it starts itself), and the discovery file belongs to the serve
//! that wrote it.
//!
//! "No sandbox" is caused for real ([`common::forbid_sandbox`]): as root, a
//! process without `CAP_SYS_ADMIN` (a container started without it); as a user,
//! a user namespace where no more user namespaces may be made.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a serve may take to start or to refuse (no environment build: the
/// tests share the cache directory, which other tests fill first).
const START: Duration = Duration::from_secs(240);
/// How long refusing may take: it comes before the pool's environment is read.
const REFUSE: Duration = Duration::from_secs(30);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Whether the sandbox works here (the sandboxed halves of the tests need it).
fn sandbox_works() -> bool {
    sessionpad::pool::Sandbox::detect(true, false).is_ok()
}

/// `sessionpad ARGS` with its own data directory and no config file or
/// endpoint from the environment; where the machine refuses a sandbox if
/// `forbid`.
fn sessionpad(data: &Path, forbid: bool, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sessionpad"));
    if forbid {
        common::forbid_sandbox(&mut cmd);
    }
    cmd.args(args)
        .env("SESSIONPAD_DATA_DIR", data)
        .env("SESSIONPAD_CONFIG", data.join("none.toml"))
        .env_remove("POOL_MANAGEMENT_ENDPOINT")
        .env_remove("SESSIONPAD_TOKEN");
    cmd
}

/// Runs `cmd` to its end, killing it (and failing) after `deadline`: a serve
/// that does not refuse would otherwise serve forever.
fn run_to_end(mut cmd: Command, deadline: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > deadline {
            stop(&mut child);
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after {deadline:?}; stdout:\n{}\nstderr:\n{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// SIGTERM, as a service manager stops a serve.
fn stop(child: &mut Child) {
    let _ = Command::new("kill").arg(child.id().to_string()).status();
}

/// A running `sessionpad serve` and the lines it printed so far.
struct Serve {
    child: Child,
    lines: mpsc::Receiver<String>,
    printed: Vec<String>,
}

impl Serve {
    fn start(data: &Path, forbid: bool, extra: &[&str]) -> Self {
        let mut args = vec!["serve", "--port", "0", "--ready-sessions", "0"];
        args.extend_from_slice(extra);
        let mut child = sessionpad(data, forbid, &args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut serve = Self {
            child,
            lines,
            printed: Vec::new(),
        };
        serve.read_until("Press Ctrl+C to stop.");
        serve
    }

    /// Reads stdout until a line contains `what`; panics with what was printed
    /// when the serve exits or `START` passes first.
    fn read_until(&mut self, what: &str) {
        let start = Instant::now();
        while start.elapsed() < START {
            match self.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(line) => {
                    let found = line.contains(what);
                    self.printed.push(line);
                    if found {
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        panic!("serve never printed {what:?}; it printed:\n{}", self.out());
    }

    fn out(&self) -> String {
        self.printed.join("\n")
    }

    /// Stops the serve with SIGTERM and waits for it to finish.
    fn stop(mut self) {
        stop(&mut self.child);
        let start = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "serve did not stop"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            stop(&mut self.child);
            let _ = self.child.wait();
        }
    }
}

#[test]
fn serve_refuses_to_start_without_a_sandbox() {
    let data = tempfile::tempdir().unwrap();
    // The cause, named (see `sandbox::diagnose`).
    let why = if common::is_root() {
        "CAP_SYS_ADMIN"
    } else {
        "user.max_user_namespaces"
    };
    {
        let out = run_to_end(
            sessionpad(data.path(), true, &["serve", "--port", "0"]),
            REFUSE,
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "stderr:\n{err}");
        assert!(err.contains(why), "the reason is given:\n{err}");
        assert!(
            err.contains("--no-sandbox") && err.contains("NOT isolated"),
            "says how to run anyway, and what that means:\n{err}"
        );
        assert_eq!(
            err.lines().filter(|l| l.starts_with("error:")).count(),
            1,
            "one message:\n{err}"
        );
        assert!(
            !data.path().join("local-pool.json").exists(),
            "a refused serve publishes nothing"
        );
    }
}

#[test]
fn serve_with_no_sandbox_starts_and_says_sessions_are_not_isolated() {
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), true, &["--no-sandbox"]);
    let out = serve.out();
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("sandbox") && l.contains("none")),
        "the isolation lines say there is no sandbox:\n{out}"
    );
    serve.stop();
}

#[test]
fn serve_with_a_sandbox_prints_its_isolation() {
    if !sandbox_works() {
        common::sandbox_tests_skipped("the sandbox does not work here");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let path = false;
    let serve = Serve::start(data.path(), path, &[]);
    let out = serve.out();
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("sandbox") && l.contains("built in")),
        "the isolation lines name the sandbox:\n{out}"
    );
    serve.stop();
}

/// The stderr lines of `exec` that are the isolation warning.
fn warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("warning: local pool:"))
        .collect()
}

/// Stops the background local pool of a data directory when dropped (also when
/// the test fails), so no test leaves one running.
struct StopsBackground<'a>(&'a Path);

impl Drop for StopsBackground<'_> {
    fn drop(&mut self) {
        let path = false;
        let _ = run_to_end(sessionpad(self.0, path, &["pool", "stop"]), REFUSE);
    }
}

#[test]
fn exec_on_an_unsandboxed_background_pool_refuses_unless_opted_in_then_warns_once() {
    let data = tempfile::tempdir().unwrap();
    let _stops = StopsBackground(data.path());
    // Not opted in: the background pool refuses, and exec says why and how.
    let out = run_to_end(
        sessionpad(
            data.path(),
            true,
            &["--identifier", "iso-0", "exec", "-c", "print(6*7)"],
        ),
        START,
    );
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(text(&out.stdout), "", "nothing ran:\n{err}");
    assert!(
        err.contains("refusing to serve without a sandbox") && err.contains("sandbox = false"),
        "{err}"
    );
    // Opted in with the config file's key.
    let config = data.path().join("none.toml");
    std::fs::write(&config, "[pool]\nsandbox = false\n").unwrap();
    let out = run_to_end(
        sessionpad(
            data.path(),
            true,
            &["--identifier", "iso-1", "exec", "-c", "print(6*7)"],
        ),
        START,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(text(&out.stdout), "42\n");
    assert_eq!(warnings(&err).len(), 1, "one warning line:\n{err}");
    assert!(warnings(&err)[0].contains("NOT isolated"), "{err}");
    // The next command reaches the same (unsandboxed) pool and warns again.
    let out = run_to_end(
        sessionpad(
            data.path(),
            false,
            &["--identifier", "iso-1", "exec", "-c", "print(7)"],
        ),
        START,
    );
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "7\n", "{err}");
    assert_eq!(warnings(&err).len(), 1, "one warning line:\n{err}");
    // This command is not forbidden a sandbox: the line says how to get one.
    if sandbox_works() {
        assert!(warnings(&err)[0].contains("can sandbox them now"), "{err}");
    }

    std::fs::remove_file(&config).unwrap();
    if sandbox_works() {
        let path = false;
        let stop = run_to_end(sessionpad(data.path(), path, &["pool", "stop"]), REFUSE);
        assert!(stop.status.success(), "{}", text(&stop.stderr));
        let out = run_to_end(
            sessionpad(
                data.path(),
                path,
                &["--identifier", "iso-2", "exec", "-c", "print(1)"],
            ),
            START,
        );
        let err = text(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(
            warnings(&err).is_empty(),
            "no warning when isolated:\n{err}"
        );
    }
}

#[test]
fn exec_on_an_unsandboxed_serve_warns_once() {
    let data = tempfile::tempdir().unwrap();
    let path = true;
    let serve = Serve::start(data.path(), path, &["--no-sandbox"]);
    // Found through the discovery file.
    let cwd = tempfile::tempdir().unwrap();
    let out = run_to_end(
        {
            let mut cmd = sessionpad(data.path(), path, &["exec", "-c", "print(6*7)"]);
            cmd.current_dir(cwd.path());
            cmd
        },
        START,
    );
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "42\n", "{err}");
    assert_eq!(warnings(&err).len(), 1, "one warning line:\n{err}");
    // Named by --endpoint: learnt from the pool's metadata.
    let value = |label: &str| {
        serve
            .printed
            .iter()
            .find_map(|l| l.split(label).nth(1).map(|v| v.trim().to_string()))
            .unwrap()
    };
    let (endpoint, token) = (value("pool management endpoint:"), value("bearer token:"));
    let out = run_to_end(
        sessionpad(
            data.path(),
            path,
            &[
                "--endpoint",
                &endpoint,
                "--token",
                &token,
                "--identifier",
                "iso-3",
                "exec",
                "-c",
                "print(7)",
            ],
        ),
        START,
    );
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "7\n", "{err}");
    assert_eq!(warnings(&err).len(), 1, "one warning line:\n{err}");
    // `pool info` shows the isolation first.
    let out = run_to_end(
        {
            let mut cmd = sessionpad(data.path(), path, &["pool", "info"]);
            cmd.current_dir(cwd.path());
            cmd
        },
        START,
    );
    let info = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        info.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("sandbox: none: sandbox disabled")),
        "{info}"
    );
    serve.stop();
}

fn discovery_file(data: &Path) -> PathBuf {
    data.join("local-pool.json")
}

/// The pid recorded in the discovery file.
fn publisher(data: &Path) -> Option<u64> {
    let bytes = std::fs::read(discovery_file(data)).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    v["pid"].as_u64()
}

#[test]
fn a_second_serve_leaves_the_first_ones_discovery_file() {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    // Both serves run unsandboxed, so the test runs where bubblewrap does not.
    let path = true;
    let first = Serve::start(data.path(), path, &["--no-sandbox"]);
    let first_pid = u64::from(first.child.id());
    assert_eq!(publisher(data.path()), Some(first_pid));
    let mode = std::fs::metadata(discovery_file(data.path()))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the file holds a bearer token");

    let second = Serve::start(data.path(), path, &["--no-sandbox"]);
    let out = second.out();
    assert!(
        out.contains("another sessionpad serve") && out.contains(&first_pid.to_string()),
        "the second serve says it is not the one commands find:\n{out}"
    );
    assert_eq!(
        publisher(data.path()),
        Some(first_pid),
        "the second serve did not overwrite the file"
    );
    second.stop();
    assert_eq!(
        publisher(data.path()),
        Some(first_pid),
        "the second serve did not delete the first one's file on exit"
    );
    first.stop();
    assert!(
        !discovery_file(data.path()).exists(),
        "the first serve removed its own file on exit"
    );
}

#[test]
fn a_stale_discovery_file_is_replaced() {
    let data = tempfile::tempdir().unwrap();
    // A serve that is gone: a pid above Linux's largest (2^22), so no process.
    std::fs::write(
        discovery_file(data.path()),
        r#"{"endpoint":"http://127.0.0.1:9","token":"old","pid":4194999}"#,
    )
    .unwrap();
    let serve = Serve::start(data.path(), true, &["--no-sandbox"]);
    let pid = u64::from(serve.child.id());
    assert_eq!(publisher(data.path()), Some(pid), "{}", serve.out());
    serve.stop();
    assert!(!discovery_file(data.path()).exists());

    // A pid that lives on in another program is stale too.
    let mut other = Command::new("sleep").arg("60").spawn().unwrap();
    std::fs::write(
        discovery_file(data.path()),
        format!(
            r#"{{"endpoint":"http://127.0.0.1:9","token":"old","pid":{}}}"#,
            other.id()
        ),
    )
    .unwrap();
    let serve = Serve::start(data.path(), true, &["--no-sandbox"]);
    let pid = u64::from(serve.child.id());
    let published = publisher(data.path());
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(published, Some(pid), "{}", serve.out());
    serve.stop();
}

/// Issue 27 item 11: `serve --max-stream-bytes` refuses 0, nonsense and sizes
/// past 1 GiB with one clear message, as the config file's
/// `[pool] max_stream_bytes` does (with the file's path).
#[test]
fn a_stream_limit_out_of_range_is_refused() {
    let data = tempfile::tempdir().unwrap();
    for bad in ["0", "100B", "2GiB", "lots"] {
        let out = run_to_end(
            sessionpad(
                data.path(),
                false,
                &["serve", "--port", "0", "--max-stream-bytes", bad],
            ),
            REFUSE,
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--max-stream-bytes"), "{bad}: {err}");
        if bad != "lots" {
            assert!(
                err.contains("the stream limit must be 1 KiB to 1 GiB"),
                "{bad}: {err}"
            );
        }
    }
    let config = data.path().join("config.toml");
    std::fs::write(&config, "[pool]\nmax_stream_bytes = 12\n").unwrap();
    let mut cmd = sessionpad(data.path(), false, &["serve", "--port", "0"]);
    cmd.env("SESSIONPAD_CONFIG", &config);
    let out = run_to_end(cmd, REFUSE);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("config.toml"), "{err}");
    assert!(
        err.contains("the stream limit must be 1 KiB to 1 GiB, not 12 bytes"),
        "{err}"
    );
}

/// Issue 27 item 11: a serve set to keep 64 KiB per stream says so in its
/// banner and in `pool info` (text and `--json`), and a long output through
/// `exec` keeps its first and last 32 KiB with the marker between them.
#[test]
fn a_stream_limit_set_on_serve_is_shown_and_applied() {
    let data = tempfile::tempdir().unwrap();
    let path = true;
    let serve = Serve::start(
        data.path(),
        path,
        &["--no-sandbox", "--max-stream-bytes", "64KiB"],
    );
    let shown = "64 KiB per stream (stdout, stderr); a longer one keeps its first and last 32 KiB";
    assert!(serve.out().contains(shown), "{}", serve.out());
    let cwd = tempfile::tempdir().unwrap();
    let in_cwd = |args: &[&str]| {
        let mut cmd = sessionpad(data.path(), path, args);
        cmd.current_dir(cwd.path());
        run_to_end(cmd, START)
    };
    let out = in_cwd(&["pool", "info"]);
    let info = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        info.lines()
            .any(|l| l.starts_with("output:") && l.contains(shown)),
        "{info}"
    );
    let out = in_cwd(&["--json", "pool", "info"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let limits = v["isolation"]["limits"].as_array().unwrap();
    assert!(
        limits
            .iter()
            .any(|l| l["what"] == "output" && l["value"] == shown),
        "{v}"
    );
    // Read while it runs (more than a pipe holds), not by `run_to_end`.
    let out = sessionpad(
        data.path(),
        path,
        &["exec", "-c", "for i in range(100_000): print('line', i)"],
    )
    .current_dir(cwd.path())
    .stdin(Stdio::null())
    .output()
    .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.starts_with("line 0\n"), "{}", &stdout[..20]);
    assert!(
        stdout.ends_with("\nline 99999\n"),
        "{}",
        &stdout[stdout.len() - 20..]
    );
    assert!(
        stdout.contains("lines) dropped here, the first and last 32 KiB kept]\n"),
        "{}",
        stdout.len()
    );
    assert!(stdout.len() < 66 * 1024, "{}", stdout.len());
    serve.stop();
}
