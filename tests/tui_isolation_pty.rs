//! End to end: the notebook on a local pool that cannot sandbox its
//! kernels (the machine refuses it for real: [`common::forbid_sandbox`]) says so in the status line from its first frame, and the pool
//! info (`F3`, `i`) says why.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
mod pty;

use std::time::{Duration, Instant};

use pty::*;

const F3: &str = "\x1bOR";

#[test]
fn an_unsandboxed_local_pool_is_flagged_from_the_first_frame() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
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
            .any(|l| l.contains("sandbox ") && l.contains(" none: the sandbox cannot be built")),
        "{screen}"
    );
}
