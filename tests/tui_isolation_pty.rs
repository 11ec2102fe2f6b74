//! End to end: on a machine that refuses the sandbox for real
//! ([`common::forbid_sandbox`]), the notebook's local pool refuses to run
//! sessions NOT isolated and the notebook says why and how to opt in; opted in
//! (`[pool] sandbox = false`), the status line flags it from its first frame and
//! the pool info (`F3`, `i`) says so.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
mod pty;

use std::time::{Duration, Instant};

use pty::*;

const F3: &str = "\x1bOR";

#[test]
fn without_the_opt_in_the_local_pool_refuses_and_the_notebook_says_why() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut pty = Pty::spawn_adjusted(data.path(), work.path(), &[], &[], common::forbid_sandbox);
    let screen = pty.wait_for("the refusal", POOL_DEADLINE, |s| {
        s.contains("refusing to serve without a sandbox")
    });
    assert!(screen.contains(NOT_ISOLATED), "{screen}");
    let log = std::fs::read_to_string(data.path().join("logs/local-pool.log")).unwrap_or_default();
    assert!(log.contains("sandbox = false"), "{log}");
}

#[test]
fn an_unsandboxed_local_pool_is_flagged_from_the_first_frame() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // Opted in.
    std::fs::write(
        data.path().join("no-config.toml"),
        "[pool]\nsandbox = false\n",
    )
    .unwrap();
    let mut pty = Pty::spawn_adjusted(data.path(), work.path(), &[], &[], common::forbid_sandbox);

    // The first screen with a status line: it is drawn in one pass, left to
    // right, so once the api-version after the warning is there, so is the
    // warning.
    let start = Instant::now();
    let first = loop {
        pty.pump();
        let screen = pty.contents();
        if screen.contains("2025-10-02-preview") {
            break screen;
        }
        assert!(
            pty.poll_exit().is_none(),
            "sessionpad exited; screen:\n{screen}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no status line; screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let status = first.lines().last().unwrap_or_default();
    assert!(
        status.starts_with(&format!(" local {NOT_ISOLATED} │ ")),
        "the first frame warns:\n{first}"
    );

    // Still there once the pool runs (its own report replaces the guess).
    pty.wait_for("the pool to be ready", POOL_DEADLINE, |s| {
        assert!(!s.contains("pool failed"), "{s}");
        shows_local(s) && !s.contains("starting pool")
    });
    let screen = pty.contents();
    assert!(screen.contains(NOT_ISOLATED), "{screen}");

    // The pool info says why.
    keys(&mut pty, &[F3, "i"]);
    let screen = pty.wait_for("the pool info", CELL_DEADLINE, |s| {
        s.contains("Pool info") && s.contains("runtime")
    });
    assert!(
        screen
            .lines()
            .any(|l| l.contains("sandbox ") && l.contains(" none: sandbox disabled")),
        "{screen}"
    );
}
