//! The pseudo-terminal harness of the end-to-end tests: the real `sessionpad`
//! binary in a pty of 100x30, its output fed into a `vt100` terminal emulator, keys
//! sent as a terminal sends them, and the screen read as a person would.

#![allow(dead_code)]

use std::io::{ErrorKind, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::{Session, WaitStatus};

pub const COLS: u16 = 100;
pub const ROWS: u16 = 30;
/// The pool may have to build its Python environment first.
pub const POOL_DEADLINE: Duration = Duration::from_secs(300);
/// One cell on a warm kernel.
pub const CELL_DEADLINE: Duration = Duration::from_secs(60);
/// Importing matplotlib the first time builds its font cache.
pub const PLOT_DEADLINE: Duration = Duration::from_secs(120);

pub const F5: &str = "\x1b[15~";
pub const ALT_ENTER: &str = "\x1b\r";
pub const CTRL_Q: &str = "\x11";

/// The binary in a pty, and the emulator that reads what it draws.
pub struct Pty {
    pub session: Session,
    pub parser: vt100::Parser,
    pub exited: Option<WaitStatus>,
    /// Every byte the binary wrote, for checks on the bytes themselves.
    pub raw: Vec<u8>,
    /// The binary's data directory (`SESSIONPAD_DATA_DIR`), whose background
    /// local pools are stopped when this is dropped.
    pub data_dir: Option<std::path::PathBuf>,
}

impl Pty {
    pub fn spawn(data_dir: &Path) -> Self {
        let bin = env!("CARGO_BIN_EXE_sessionpad");
        // Size the pty before the binary starts, so its first frame is 100x30.
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("stty cols {COLS} rows {ROWS} && exec \"$0\""))
            .arg(bin)
            .env("SESSIONPAD_DATA_DIR", data_dir)
            .env("TERM", "xterm-256color")
            .env("RUST_LIB_BACKTRACE", "0")
            .env_remove("SESSIONPAD_ENDPOINT");
        Self::start(cmd)
    }

    /// The binary with `args`, started in `work_dir` (its session identifier, and
    /// so its stored notebook, follows the working directory), with no config file
    /// and no endpoint from the environment.
    pub fn spawn_in(data_dir: &Path, work_dir: &Path, args: &[&str]) -> Self {
        Self::spawn_with(data_dir, work_dir, args, &[])
    }

    /// As [`Pty::spawn_in`], with these variables added to the environment.
    pub fn spawn_with(
        data_dir: &Path,
        work_dir: &Path,
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> Self {
        Self::spawn_adjusted(data_dir, work_dir, args, envs, |_| {})
    }

    /// [`Pty::spawn_with`], after `adjust` changed the command (e.g. how it
    /// starts).
    pub fn spawn_adjusted(
        data_dir: &Path,
        work_dir: &Path,
        args: &[&str],
        envs: &[(&str, &str)],
        adjust: impl FnOnce(&mut Command),
    ) -> Self {
        let mut cmd = Command::new("sh");
        adjust(&mut cmd);
        cmd.envs(envs.iter().copied());
        cmd.arg("-c")
            .arg(format!(
                "stty cols {COLS} rows {ROWS} && exec \"$0\" \"$@\""
            ))
            .arg(env!("CARGO_BIN_EXE_sessionpad"))
            .args(args)
            .current_dir(work_dir)
            .env("SESSIONPAD_DATA_DIR", data_dir)
            .env("SESSIONPAD_CONFIG", data_dir.join("no-config.toml"))
            .env("TERM", "xterm-256color")
            .env("RUST_LIB_BACKTRACE", "0")
            .env_remove("POOL_MANAGEMENT_ENDPOINT");
        Self::start(cmd)
    }

    pub fn start(cmd: Command) -> Self {
        let data_dir = cmd
            .get_envs()
            .find(|(k, _)| *k == "SESSIONPAD_DATA_DIR")
            .and_then(|(_, v)| v.map(std::path::PathBuf::from));
        let mut session = Session::spawn(cmd).expect("spawn sessionpad in a pty");
        // Also size the pty from this side: the `stty` in the child races with the
        // pty's own 80x24 default on a loaded machine. A late change reaches the
        // binary as a resize, which it redraws for.
        session
            .get_process_mut()
            .set_window_size(COLS, ROWS)
            .expect("set the pty size");
        Self {
            session,
            parser: vt100::Parser::new(ROWS, COLS, 0),
            exited: None,
            raw: Vec::new(),
            data_dir,
        }
    }

    pub fn contents(&self) -> String {
        self.parser.screen().contents()
    }

    /// Moves whatever the binary wrote into the emulator; true if anything came.
    pub fn pump(&mut self) -> bool {
        let mut buf = [0u8; 8192];
        let mut any = false;
        loop {
            match self.session.try_read(&mut buf) {
                Ok(0) => return any,
                Ok(n) => {
                    self.parser.process(&buf[..n]);
                    self.raw.extend_from_slice(&buf[..n]);
                    any = true;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return any,
                // EIO: the child closed the pty (it exited).
                Err(_) => return any,
            }
        }
    }

    /// Pumps until `pred` holds on the screen text; panics with the screen when
    /// `deadline` passes or the binary exits first.
    pub fn wait_for(
        &mut self,
        what: &str,
        deadline: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let got = self.pump();
            let screen = self.contents();
            // A frame can be read half-drawn: return once the screen is quiet
            // (nothing more for 30 ms) and still matches.
            if pred(&screen) && !got {
                std::thread::sleep(Duration::from_millis(30));
                if !self.pump() {
                    return screen;
                }
                continue;
            }
            if let Some(status) = self.poll_exit() {
                panic!(
                    "sessionpad exited ({status:?}) while waiting for {what}; screen:\n{screen}"
                );
            }
            assert!(
                start.elapsed() <= deadline,
                "timed out after {deadline:?} waiting for {what}; screen:\n{screen}"
            );
            if !got {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Esc to the notebook focus, waiting until its key hints show: a key sent
    /// right after a lone Esc could otherwise arrive in the same read and be
    /// taken for Alt+key on a loaded machine.
    pub fn focus_notebook(&mut self) {
        self.send("\x1b");
        self.wait_for("the notebook focus", Duration::from_secs(30), |s| {
            s.contains("j/k select")
        });
    }

    /// Waits until the local pool is ready: its name on the status
    /// line and no "starting pool"; panics (with the screen) if it failed.
    /// Returns the screen.
    pub fn wait_local_ready(&mut self) -> String {
        self.wait_for("the pool to be ready", POOL_DEADLINE, |s| {
            assert!(
                !s.contains("pool failed"),
                "the pool failed to start; screen:\n{s}"
            );
            shows_local(s) && !s.contains("starting pool")
        })
    }

    /// Sends `keys` (Ctrl+Q, or Esc-focus-then-q) and asserts that the binary
    /// exits cleanly (status 0) within 30 s.
    pub fn quit_with(mut self, keys: &str) {
        self.send(keys);
        let status = self.wait_exit(Duration::from_secs(30));
        assert!(
            matches!(status, WaitStatus::Exited(_, 0)),
            "exit status {status:?}; screen:\n{}",
            self.contents()
        );
    }

    pub fn send(&mut self, text: &str) {
        self.session
            .write_all(text.as_bytes())
            .expect("write to pty");
        self.session.flush().expect("flush pty");
    }

    pub fn poll_exit(&mut self) -> Option<WaitStatus> {
        if self.exited.is_none() {
            match self.session.get_process().status() {
                Ok(WaitStatus::StillAlive) | Err(_) => {}
                Ok(status) => self.exited = Some(status),
            }
        }
        self.exited
    }

    /// Waits for the binary to exit, pumping its output meanwhile.
    pub fn wait_exit(&mut self, deadline: Duration) -> WaitStatus {
        let start = Instant::now();
        loop {
            self.pump();
            if let Some(status) = self.poll_exit() {
                return status;
            }
            assert!(
                start.elapsed() <= deadline,
                "sessionpad did not exit within {deadline:?}; screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        // On a failed assertion, ask politely first so the pool stops its kernels
        // (twice: the first Ctrl+Q may ask whether to quit with a cell
        // running or text typed, the second confirms).
        if self.poll_exit().is_none() {
            let _ = self.session.write_all(CTRL_Q.as_bytes());
            std::thread::sleep(Duration::from_millis(200));
            let _ = self.session.write_all(CTRL_Q.as_bytes());
            let start = Instant::now();
            while self.poll_exit().is_none() && start.elapsed() < Duration::from_secs(15) {
                self.pump();
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // The notebook leaves the background local pool running for the next
        // launch; a test leaves nothing running.
        if let Some(data_dir) = &self.data_dir {
            stop_background_pools(data_dir);
        }
    }
}

/// Stops the background local pools of the data directory `data_dir` (every
/// container type's), as `sessionpad pool stop` does.
pub fn stop_background_pools(data_dir: &Path) {
    let _ = Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args(["pool", "stop"])
        .env("SESSIONPAD_DATA_DIR", data_dir)
        .env("SESSIONPAD_CONFIG", data_dir.join("no-config.toml"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// As [`stop_background_pools`], asserting that `sessionpad pool stop`
/// succeeded (every pool it found ended), for a test whose next step needs
/// no pool running.
pub fn stop_background_pools_checked(data_dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args(["pool", "stop"])
        .env("SESSIONPAD_DATA_DIR", data_dir)
        .env("SESSIONPAD_CONFIG", data_dir.join("no-config.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pool stop failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Sends keys one by one with a pause, so each is read as its own key.
pub fn keys(pty: &mut Pty, keys: &[&str]) {
    for k in keys {
        pty.send(k);
        std::thread::sleep(Duration::from_millis(150));
        pty.pump();
    }
}

/// A screen line that is exactly `text` once trailing spaces are cut.
pub fn has_line(screen: &str, text: &str) -> bool {
    screen.lines().any(|l| l.trim_end() == text)
}

/// The status line's warning when the local pool's sessions are not isolated
/// (where the user opted in to that).
pub const NOT_ISOLATED: &str = "⚠ not isolated";

/// Whether the screen's status line names the local pool (with what it runs
/// when that is not Python, and with its warning where sessions are not
/// isolated).
pub fn shows_local(screen: &str) -> bool {
    ["", " shell", " javascript"].iter().any(|kind| {
        screen.contains(&format!(" local{kind} │ "))
            || screen.contains(&format!(" local{kind} {NOT_ISOLATED} │ "))
    })
}

/// The one notebook (`.ipynb`) the binary saved below `data_dir`, parsed.
pub fn saved_notebook(data_dir: &Path) -> serde_json::Value {
    fn walk(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "ipynb") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(data_dir, &mut found);
    assert_eq!(found.len(), 1, "one saved notebook: {found:?}");
    let text = std::fs::read_to_string(&found[0]).expect("read the notebook");
    serde_json::from_str(&text).expect("the notebook is JSON")
}
