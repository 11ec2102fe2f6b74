//! End to end, in a pseudo-terminal: the keymap and theme from a config file, the
//! help overlay, and handing the cell to `$EDITOR` and back (the terminal is
//! given away and taken back, and the cell survives an editor that fails).
//!
//! The binary talks to an endpoint where nothing listens, so no pool starts: no
//! cell is run here.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::io::{ErrorKind, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use expectrl::{Session, WaitStatus};

const COLS: u16 = 100;
const ROWS: u16 = 30;
const DEADLINE: Duration = Duration::from_secs(30);

const CTRL_E: &str = "\x05";
const CTRL_Q: &str = "\x11";
const F1: &str = "\x1bOP";
const ESC: &str = "\x1b";
const PAGE_DOWN: &str = "\x1b[6~";

struct Pty {
    session: Session,
    parser: vt100::Parser,
}

impl Pty {
    fn spawn(dir: &Path, config: &Path, editor: &str) -> Self {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!(
                "stty cols {COLS} rows {ROWS} && exec \"$0\" \"$@\""
            ))
            .arg(env!("CARGO_BIN_EXE_sessionpad"))
            .args([
                "--endpoint",
                "http://127.0.0.1:9",
                "--identifier",
                "keys-test",
            ])
            .current_dir(dir)
            .env("SESSIONPAD_DATA_DIR", dir.join("data"))
            .env("SESSIONPAD_CONFIG", config)
            .env("EDITOR", editor)
            .env_remove("VISUAL")
            .env("TERM", "xterm-256color");
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
        }
    }

    fn pump(&mut self) -> bool {
        let mut buf = [0u8; 8192];
        let mut any = false;
        loop {
            match self.session.try_read(&mut buf) {
                Ok(n) if n > 0 => {
                    self.parser.process(&buf[..n]);
                    any = true;
                }
                Err(e) if e.kind() != ErrorKind::WouldBlock => return any,
                _ => return any,
            }
        }
    }

    fn wait_for(&mut self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let got = self.pump();
            let screen = self.parser.screen().contents();
            // A frame can be read half-drawn: return once the screen is quiet.
            if pred(&screen) && !got {
                std::thread::sleep(Duration::from_millis(30));
                if !self.pump() {
                    return self.parser.screen().contents();
                }
                continue;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; screen:\n{screen}"
            );
            if !got {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    fn send(&mut self, text: &str) {
        self.session.write_all(text.as_bytes()).expect("write");
        self.session.flush().expect("flush");
    }

    fn wait_exit(&mut self) -> WaitStatus {
        let start = Instant::now();
        loop {
            self.pump();
            match self.session.get_process().status() {
                Ok(WaitStatus::StillAlive) | Err(_) => {}
                Ok(status) => return status,
            }
            assert!(start.elapsed() < DEADLINE, "sessionpad did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let status = Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    assert!(status.success());
    path.to_string_lossy().into_owned()
}

#[test]
fn keys_from_the_config_the_help_and_the_external_editor() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "theme = \"light\"\n[keys.outputs]\n\"x\" = { run = \"quit\", desc = \"Leave now\", hint = \"leave\" }\n",
    )
    .unwrap();
    // An editor that adds a line to the cell.
    let editor = script(dir.path(), "add-line", "printf 'y = 6*7\\n' >> \"$1\"");
    let mut pty = Pty::spawn(dir.path(), &config, &editor);
    pty.wait_for("the editor", |s| {
        s.contains("In [1]") && s.contains("F1 help")
    });
    pty.send("x = 1");
    pty.wait_for("typed text", |s| s.contains("x = 1"));
    pty.send(CTRL_E);
    // A frame may be read half-drawn: wait for everything expected on it.
    pty.wait_for("the edited cell", |s| {
        s.contains("y = 6*7") && s.contains("x = 1")
    });

    pty.send(F1);
    pty.wait_for("the help", |s| {
        s.contains(" Keys ") && s.contains("Go to the notebook")
    });
    // The notebook's keys are further down (how far depends on how the
    // descriptions wrap): page down until the user's key shows.
    // (It may be on the first page already: look before paging.)
    for _ in 0..25 {
        pty.pump();
        if pty.parser.screen().contents().contains("Leave now") {
            break;
        }
        pty.send(PAGE_DOWN);
        std::thread::sleep(Duration::from_millis(200));
    }
    pty.wait_for("the user's key in the help", |s| s.contains("Leave now"));
    pty.send(ESC);
    pty.wait_for("the help to close", |s| !s.contains(" Keys "));

    pty.send(ESC);
    pty.wait_for("the notebook hints", |s| s.contains("x leave"));
    pty.send("x");
    // The cell typed is not run: quitting asks first (and keeps it).
    pty.wait_for("the quit question", |s| {
        s.contains("The editor holds 2 lines: quit anyway?")
    });
    pty.send("y");
    assert!(matches!(pty.wait_exit(), WaitStatus::Exited(_, 0)));
}

#[test]
fn a_failing_editor_leaves_the_cell_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none.toml");
    let editor = script(dir.path(), "broken", "echo junk > \"$1\"; exit 3");
    let mut pty = Pty::spawn(dir.path(), &config, &editor);
    pty.wait_for("the editor", |s| s.contains("In [1]"));
    pty.send("keep = 1");
    pty.wait_for("typed text", |s| s.contains("keep = 1"));
    pty.send(CTRL_E);
    let screen = pty.wait_for("the notice", |s| s.contains("unchanged"));
    assert!(
        screen.contains("keep = 1") && !screen.contains("junk"),
        "{screen}"
    );
    pty.send(CTRL_Q);
    pty.wait_for("the quit question", |s| s.contains("quit anyway?"));
    // Ctrl+Q again confirms.
    pty.send(CTRL_Q);
    assert!(matches!(pty.wait_exit(), WaitStatus::Exited(_, 0)));
}

#[test]
fn the_editor_gets_the_keys_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("none.toml");
    // An editor that reads one line from the terminal into the cell.
    let editor = script(
        dir.path(),
        "read-line",
        "printf 'EDITOR READY\\n'; read line; printf '%s\\n' \"$line\" >> \"$1\"",
    );
    let mut pty = Pty::spawn(dir.path(), &config, &editor);
    pty.wait_for("the editor", |s| s.contains("In [1]"));
    pty.send(CTRL_E);
    pty.wait_for("the external editor", |s| s.contains("EDITOR READY"));
    pty.send("typed_in_the_editor = 1\r");
    let screen = pty.wait_for("the cell back", |s| {
        s.contains("In [1]") && s.contains("typed_in_the_editor = 1")
    });
    assert!(!screen.contains("EDITOR READY"), "{screen}");
    pty.send(CTRL_Q);
    pty.wait_for("the quit question", |s| s.contains("quit anyway?"));
    pty.send(CTRL_Q);
    assert!(matches!(pty.wait_exit(), WaitStatus::Exited(_, 0)));
}
