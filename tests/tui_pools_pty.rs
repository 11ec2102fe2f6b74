//! End to end: switching pools without restarting (issue 6), in the real
//! binary in a pseudo-terminal. The config file names a second pool (a real
//! `sessionpad serve` with a bearer token from an environment variable); the
//! TUI starts on the local pool, runs a cell, switches to the profile
//! from the sessions pane (`F3`, `p`), finds a fresh session there, and switches
//! back: the local notebook is reloaded, the cell typed before the switch is
//! still in the editor, and the local kernel kept its state. And a session
//! ended from the sessions pane (with stopSession, the pool treated as a custom
//! container) is gone from `sessionpad sessions ls`.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
mod pty;

use std::time::Duration;

use expectrl::WaitStatus;
use pty::*;

const F3: &str = "\x1bOR";
const TOKEN: &str = "pools-test-token";

/// The status line's first field: the pool (without the warning of a local
/// pool that is not isolated).
fn status_pool(screen: &str) -> String {
    let line = screen.lines().last().unwrap_or_default();
    line.split('│')
        .next()
        .unwrap_or_default()
        .replace(NOT_ISOLATED, "")
        .trim()
        .to_string()
}

struct Serve(std::process::Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .arg(self.0.id().to_string())
            .status();
        let _ = self.0.wait();
    }
}

#[test]
fn switching_pools_keeps_each_notebook_the_draft_and_the_local_kernel() {
    let serve_data = tempfile::tempdir().unwrap();
    let (child, endpoint) = common::serve(serve_data.path(), TOKEN);
    let _serve = Serve(child);
    let remote_host = endpoint.trim_start_matches("http://").to_string();

    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("no-config.toml"),
        format!(
            "[profiles.remote]\nendpoint = \"{endpoint}\"\nauth = \"token-env\"\n\
             token_env = \"POOLS_TEST_TOKEN\"\nidentifier = \"remote-notebook\"\n"
        ),
    )
    .unwrap();
    let mut pty = Pty::spawn_with(
        data.path(),
        work.path(),
        &[],
        &[("POOLS_TEST_TOKEN", TOKEN)],
    );
    pty.wait_for("the local pool", POOL_DEADLINE, |s| {
        assert!(!s.contains("pool failed"), "{s}");
        shows_local(s) && !s.contains("starting pool")
    });

    // A cell on the local pool.
    pty.send("x = 41");
    pty.send(F5);
    pty.wait_for("the first cell", CELL_DEADLINE, |s| {
        s.contains("In [1]") && s.contains("done")
    });

    // The chooser lists the profile and the local pool, the local one in use.
    keys(&mut pty, &[F3, "p"]);
    let screen = pty.wait_for("the pools chooser", CELL_DEADLINE, |s| {
        s.contains("Pools · Enter switches") && s.contains("remote") && s.contains("● local")
    });
    println!("{screen}");
    assert!(screen.contains(&remote_host), "{screen}");
    // remote is first (profiles, then the local pool): up, Enter.
    keys(&mut pty, &["k", "\r"]);
    let screen = pty.wait_for("the remote pool", CELL_DEADLINE, |s| {
        status_pool(s) == remote_host && s.contains("switched to pool remote")
    });
    println!("{screen}");
    assert!(
        screen.contains("remote-notebook"),
        "the profile's identifier: {screen}"
    );
    assert!(
        !screen.contains("x = 41"),
        "the local notebook is not shown: {screen}"
    );

    // A fresh session there: x is not defined.
    pty.send("print('x' in globals())");
    pty.send(F5);
    pty.wait_for("the remote cell", CELL_DEADLINE, |s| {
        has_line_like(s, "False")
    });

    // Type a cell, then switch back: the draft moves along, and the local kernel
    // still has x.
    pty.send("print(x + 1)");
    keys(&mut pty, &[F3, "p"]);
    pty.wait_for("the chooser again", CELL_DEADLINE, |s| {
        s.contains("● remote")
    });
    keys(&mut pty, &["j", "\r"]);
    let screen = pty.wait_for("the local pool again", CELL_DEADLINE, |s| {
        status_pool(s) == "local" && s.contains("x = 41") && s.contains("print(x + 1)")
    });
    println!("{screen}");
    pty.send(F5);
    let screen = pty.wait_for("the local kernel's state", CELL_DEADLINE, |s| {
        has_line_like(s, "42")
    });
    println!("{screen}");

    pty.send(CTRL_Q);
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
}

/// A screen line whose text (inside the notebook's frame) is exactly `text`.
fn has_line_like(screen: &str, text: &str) -> bool {
    screen
        .lines()
        .any(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()) == text)
}

/// Issue 6: a session ended from the pane is gone from `sessions ls`. On a pool
/// treated as a custom container (`--pool-type custom-container`) the pane
/// lists through `.management/listSessions` and ends the session with
/// `.management/stopSession`, whose own words the status line shows; the CLI
/// then no longer lists it.
#[test]
fn a_session_stopped_from_the_pane_is_gone_from_sessions_ls() {
    let serve_data = tempfile::tempdir().unwrap();
    let (child, endpoint) = common::serve(serve_data.path(), TOKEN);
    let _serve = Serve(child);
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let id = "agent-run-7";
    let pool_args = ["--endpoint", &endpoint, "--token", TOKEN];
    let mut args = pool_args.to_vec();
    args.extend(["--pool-type", "custom-container", "--identifier", id]);
    let mut pty = Pty::spawn_in(data.path(), work.path(), &args);
    pty.wait_for("the first frame", CELL_DEADLINE, |s| {
        s.contains(&format!("{id} │")) && s.contains("ready")
    });
    pty.send("y = 1");
    pty.send(F5);
    pty.wait_for("the cell", CELL_DEADLINE, |s| {
        s.contains("In [1]") && s.contains("done")
    });

    keys(&mut pty, &[F3]);
    pty.wait_for("the pool's list", CELL_DEADLINE, |s| s.contains("Pool · 1"));
    // The selection starts on this machine's only identifier, the one in use.
    keys(&mut pty, &["e"]);
    pty.wait_for("the question", CELL_DEADLINE, |s| s.contains("End session"));
    keys(&mut pty, &["y"]);
    let screen = pty.wait_for("the pool without it", CELL_DEADLINE, |s| {
        s.contains("Pool · 0") && s.contains(&format!("Session {id} in session pool"))
    });
    println!("{screen}");

    let listed = common::stdout_ok(
        common::sessionpad_command(data.path())
            .args(pool_args)
            .args(["--json", "sessions", "ls"]),
    );
    assert!(!listed.contains(id), "{listed}");

    pty.send(CTRL_Q);
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
}
