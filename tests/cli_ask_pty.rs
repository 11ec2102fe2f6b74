//! Issue 27 item 8: on a terminal, the command line asks before what it would
//! otherwise refuse: `files get NAME DIR` before creating a missing DIR,
//! `sessions rm` with no identifier before ending this folder's session. The
//! real binary in a pseudo-terminal, against a real `sessionpad serve`.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
mod pty;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use expectrl::WaitStatus;
use pty::*;

const TOKEN: &str = "cli-ask-token";

/// `sessionpad ARGS` (with the pool's flags first) in `work`, not on a
/// terminal; must succeed. Its stdout.
fn run_ok(data: &Path, work: &Path, endpoint: &str, args: &[&str]) -> String {
    let mut cmd: Command = common::sessionpad_command(data);
    cmd.args(["--endpoint", endpoint, "--token", TOKEN])
        .args(args)
        .current_dir(work);
    common::stdout_ok(&mut cmd)
}

/// The same in a pty: answers `answer` to the question ending in `[y/N]`,
/// then returns the exit code and the screen.
fn answered(
    data: &Path,
    work: &Path,
    endpoint: &str,
    args: &[&str],
    answer: &str,
) -> (i32, String) {
    let mut all = vec!["--endpoint", endpoint, "--token", TOKEN];
    all.extend_from_slice(args);
    let mut pty = Pty::spawn_in(data, work, &all);
    pty.wait_for("the question", CELL_DEADLINE, |s| s.contains("[y/N]"));
    pty.send(answer);
    let status = pty.wait_exit(Duration::from_secs(60));
    let screen = pty.contents();
    match status {
        WaitStatus::Exited(_, code) => (code, screen),
        other => panic!("{other:?}; screen:\n{screen}"),
    }
}

#[test]
fn on_a_terminal_get_and_rm_ask_first() {
    let serve_data = tempfile::tempdir().unwrap();
    let mut cmd = common::serve_command(serve_data.path(), TOKEN, 1);
    cmd.stderr(std::process::Stdio::null());
    let (child, endpoint) = common::spawn_serve(cmd);
    let _serve = common::Served(child);
    let data = serve_data.path();
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    std::fs::write(work.join("a.txt"), "a").unwrap();
    run_ok(data, work, &endpoint, &["files", "put", "a.txt"]);

    // No: nothing created, nothing downloaded.
    let (code, screen) = answered(
        data,
        work,
        &endpoint,
        &["files", "get", "a.txt", "new/dir"],
        "n\r",
    );
    assert!(
        screen.contains("new/dir does not exist; create it?"),
        "{screen}"
    );
    assert_eq!(code, 1, "{screen}");
    assert!(!work.join("new").exists());
    // Yes: created and downloaded.
    let (code, screen) = answered(
        data,
        work,
        &endpoint,
        &["files", "get", "a.txt", "new/dir"],
        "y\r",
    );
    assert_eq!(code, 0, "{screen}");
    assert_eq!(std::fs::read(work.join("new/dir/a.txt")).unwrap(), b"a");

    // This folder's session (the one `files put` used): kept on no, ended on yes.
    let listed = || run_ok(data, work, &endpoint, &["sessions", "ls"]);
    let mine = run_ok(data, work, &endpoint, &["--json", "sessions", "show"]);
    let mine: serde_json::Value = serde_json::from_str(&mine).unwrap();
    let mine = mine["identifier"].as_str().unwrap().to_string();
    let (code, screen) = answered(data, work, &endpoint, &["sessions", "rm"], "n\r");
    assert!(
        screen.contains(&format!("end this directory's session {mine}?")),
        "{screen}"
    );
    assert_eq!(code, 1, "{screen}");
    assert!(listed().contains(&mine));
    let (code, screen) = answered(data, work, &endpoint, &["sessions", "rm"], "y\r");
    assert_eq!(code, 0, "{screen}");
    assert!(!listed().contains(&mine));
}
