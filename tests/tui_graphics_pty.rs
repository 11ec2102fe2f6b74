//! The screen keeps living after a plot drawn with a graphics protocol (issue
//! 23), read off the screen of the real binary as a person would: with each
//! protocol forced (`SESSIONPAD_IMAGE_PROTOCOL` = sixel, kitty, iterm2), a plot,
//! then text typed in the editor, the next cell and its output all appear.
//!
//! Two terminals: the pty harness's vt100 emulator (always), and tmux (where it
//! is installed; skipped with a reason otherwise), driven with `send-keys` and
//! read with `capture-pane`. Neither shows pixels, and both ignore the image's
//! escape sequences: what is checked is that everything drawn after the image
//! reaches the terminal, which failed with ratatui-image 10 (its escape
//! sequence measured thousands of columns wide in ratatui's diff, so nothing
//! after it was ever sent again). The pictures themselves are checked in real
//! emulators by `tui_graphics_emulators.rs`.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
mod pty;

use pty::*;

/// The protocols sessionpad draws with besides half-blocks, and the bytes
/// each image's escape sequence starts with.
const PROTOCOLS: [(&str, &[u8]); 3] = [
    ("sixel", b"\x1bP"),
    ("kitty", b"\x1b_G"),
    ("iterm2", b"\x1b]1337;File="),
];

const PLOT: &str = "import matplotlib.pyplot as plt; plt.plot([1, 4, 9, 16]); plt.show(); 42";
const TYPED: &str = "print('typed after the plot')";

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The editor's title for the next cell, `In [n]`.
fn editor_title(screen: &str, n: usize) -> bool {
    screen.contains(&format!("In [{n}]"))
}

#[test]
fn after_a_plot_typing_and_the_next_cell_appear_with_every_protocol() {
    let data = tempfile::tempdir().expect("temp data dir");
    for (protocol, escape) in PROTOCOLS {
        let work = tempfile::tempdir().expect("temp working dir");
        let mut pty = Pty::spawn_with(
            data.path(),
            work.path(),
            &[],
            &[("SESSIONPAD_IMAGE_PROTOCOL", protocol)],
        );
        pty.wait_local_ready();
        pty.send(&format!("{PLOT}{F5}"));
        pty.wait_for("the plot's cell", PLOT_DEADLINE, |s| {
            has_line(s, "Out[1]: 42")
        });
        let start = Instant::now();
        while !contains(&pty.raw, escape) {
            assert!(
                start.elapsed() < CELL_DEADLINE,
                "{protocol}: the image's escape sequence was never written"
            );
            std::thread::sleep(Duration::from_millis(50));
            pty.pump();
        }
        // Text typed in the editor shows while the plot is on screen.
        pty.send(TYPED);
        pty.wait_for(
            &format!("{protocol}: the typed text in the editor"),
            CELL_DEADLINE,
            |s| s.contains(TYPED),
        );
        // The next cell runs, its output shows, and the editor moves on.
        pty.send(F5);
        let screen = pty.wait_for(
            &format!("{protocol}: the second cell's output and In [3]"),
            CELL_DEADLINE,
            |s| has_line(s, "typed after the plot") && editor_title(s, 3),
        );
        println!("{protocol}:\n{screen}");
        pty.quit_with(CTRL_Q);
    }
    stop_background_pools(data.path());
}

/// One tmux server of this test's own (`-L`), with no config file.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &self.socket, "-f", "/dev/null"]);
        cmd
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Starts sessionpad in a 100x30 window, in `work`, with `env`.
    fn start(socket: String, data: &Path, work: &Path, env: &[(&str, &str)]) -> Self {
        let tmux = Self { socket };
        let mut command = vec![
            "env".to_string(),
            format!("SESSIONPAD_DATA_DIR={}", data.display()),
            format!(
                "SESSIONPAD_CONFIG={}",
                data.join("no-config.toml").display()
            ),
            "RUST_LIB_BACKTRACE=0".to_string(),
        ];
        command.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        command.push(env!("CARGO_BIN_EXE_sessionpad").to_string());
        let mut args = vec![
            "new-session".to_string(),
            "-d".into(),
            "-x".into(),
            COLS.to_string(),
            "-y".into(),
            ROWS.to_string(),
            "-c".into(),
            work.display().to_string(),
        ];
        args.extend(command);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        tmux.run(&args);
        tmux
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p"])
    }

    fn send_literal(&self, text: &str) {
        self.run(&["send-keys", "-l", text]);
    }

    fn key(&self, key: &str) {
        self.run(&["send-keys", key]);
    }

    fn wait_for(&self, what: &str, deadline: Duration, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() <= deadline,
                "timed out after {deadline:?} waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self
            .cmd()
            .args(["kill-server"])
            .stderr(Stdio::null())
            .status();
    }
}

#[test]
fn in_tmux_after_a_plot_typing_and_the_next_cell_appear_with_every_protocol() {
    if Command::new("tmux")
        .arg("-V")
        .stdout(Stdio::null())
        .status()
        .is_err()
    {
        println!("skipped: tmux is not installed (apt-get install tmux)");
        return;
    }
    let data = tempfile::tempdir().expect("temp data dir");
    for (protocol, _) in PROTOCOLS {
        let work = tempfile::tempdir().expect("temp working dir");
        let socket = format!("sp-graphics-{}-{protocol}", std::process::id());
        let tmux = Tmux::start(
            socket,
            data.path(),
            work.path(),
            &[("SESSIONPAD_IMAGE_PROTOCOL", protocol)],
        );
        tmux.wait_for("the pool to be ready", POOL_DEADLINE, |s| {
            assert!(!s.contains("pool failed"), "the pool failed:\n{s}");
            shows_local(s) && !s.contains("starting pool")
        });
        tmux.send_literal(PLOT);
        tmux.key("F5");
        tmux.wait_for(
            &format!("{protocol}: the plot's cell"),
            PLOT_DEADLINE,
            |s| has_line(s, "Out[1]: 42"),
        );
        tmux.send_literal(TYPED);
        tmux.wait_for(
            &format!("{protocol}: the typed text in the editor"),
            CELL_DEADLINE,
            |s| s.contains(TYPED),
        );
        tmux.key("F5");
        let screen = tmux.wait_for(
            &format!("{protocol}: the second cell's output and In [3]"),
            CELL_DEADLINE,
            |s| has_line(s, "typed after the plot") && editor_title(s, 3),
        );
        println!("tmux, {protocol}:\n{screen}");
        tmux.key("C-q");
    }
    stop_background_pools(data.path());
}
