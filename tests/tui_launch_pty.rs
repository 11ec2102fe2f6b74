//! End to end, in a pseudo-terminal: the notebook's launch on the background
//! local pool (issue 14). With no endpoint the notebook attaches to the
//! background pool the command line uses (started when none runs), so a cell
//! typed and run before the pool is ready runs as soon as it is, state set by
//! `sessionpad exec` is there in the notebook, and a pool that ends between
//! two cells is started again with the cell kept and the loss said. The first
//! frame is drawn before the terminal is asked about its graphics (the pty
//! never answers that question).
//!
//! Every test has its own data directory; the pty harness stops the
//! directory's background pools when a test ends, also when it fails.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod pty;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use expectrl::WaitStatus;
use pty::{CELL_DEADLINE, F5, POOL_DEADLINE, Pty, has_line};

/// The pid the Python background pool of `data` published, if one runs.
fn pool_pid(data: &Path) -> Option<u32> {
    let bytes = std::fs::read(data.join("local-pool.json")).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    assert_eq!(v["background"], true, "{v}");
    v["pid"].as_u64().and_then(|p| u32::try_from(p).ok())
}

/// Whether `pid` is a running (not zombie) process.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

/// `sessionpad ARGS` run in `work` with the data directory `data`, no config
/// file and no endpoint, as the notebook of the same folder is.
fn sessionpad(data: &Path, work: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args(args)
        .current_dir(work)
        .env("SESSIONPAD_DATA_DIR", data)
        .env("SESSIONPAD_CONFIG", data.join("no-config.toml"))
        .env_remove("POOL_MANAGEMENT_ENDPOINT")
        .env_remove("SESSIONPAD_TOKEN")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Where `needle` first occurs in `haystack`.
fn position(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn a_cell_typed_before_the_pool_runs_runs_once_it_does_and_the_pool_stays() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    assert_eq!(pool_pid(data.path()), None, "no pool runs yet");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    // Typed and run at once: before the first frame, while the terminal is
    // probed and while the background pool starts.
    pty.send(&format!("6*7{F5}"));
    let screen = pty.wait_for("the typed cell's result", POOL_DEADLINE, |s| {
        has_line(s, "Out[1]: 42")
    });
    assert!(screen.contains("In [1]: 6*7"), "{screen}");
    // The editor came first: the frame was drawn before the graphics question
    // (the status report request every probe ends with) was written.
    let frame = position(&pty.raw, "In [1]".as_bytes()).expect("a first frame");
    let question = position(&pty.raw, b"\x1b[5n").expect("the graphics question");
    assert!(
        frame < question,
        "the first frame waited for the terminal: frame at byte {frame}, question at {question}"
    );
    let pid = pool_pid(data.path()).expect("the notebook started the background pool");
    pty.send(pty::CTRL_Q);
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
    // Quitting leaves the pool for the next launch and the command line (the
    // harness stops it when the test ends).
    assert!(alive(pid), "the background pool ended with the notebook");
    let out = sessionpad(data.path(), work.path(), &["exec", "-c", "print(6*7)"]);
    assert_eq!(text(&out.stdout), "42\n", "{}", text(&out.stderr));
    assert_eq!(pool_pid(data.path()), Some(pid), "the command line used it");
}

#[test]
fn the_notebook_attaches_to_the_running_background_pool_and_its_session() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // The command line starts the pool and sets a variable in this folder's
    // session.
    let set = sessionpad(data.path(), work.path(), &["exec", "-c", "y = 42"]);
    assert!(set.status.success(), "{}", text(&set.stderr));
    let pid = pool_pid(data.path()).expect("exec started the background pool");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.send(&format!("y * 2{F5}"));
    // The cell is the session kernel's second (the command line's was its
    // first), and its label says so (issue 27 item 5).
    let screen = pty.wait_for("the cell's result", CELL_DEADLINE, |s| {
        has_line(s, "Out[2]: 84") || s.contains("Error")
    });
    assert!(
        has_line(&screen, "Out[2]: 84"),
        "the session's state is not there:\n{screen}"
    );
    assert_eq!(pool_pid(data.path()), Some(pid), "no second pool started");
    pty.quit_with(pty::CTRL_Q);
}

#[test]
fn a_pool_that_ends_between_two_cells_is_started_again_and_the_cell_kept() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("x = 1{F5}"));
    pty.wait_for("cell 1", CELL_DEADLINE, |s| {
        s.contains("In [1]: x = 1") && s.contains("done in")
    });
    let first = pool_pid(data.path()).expect("the notebook started the background pool");
    // Killed outright, as a crash or the OOM killer would: it leaves its
    // discovery file behind.
    assert!(
        Command::new("kill")
            .args(["-9", &first.to_string()])
            .status()
            .unwrap()
            .success()
    );
    while alive(first) {
        std::thread::sleep(Duration::from_millis(50));
    }
    pty.send(&format!("print('x is', x){F5}"));
    let screen = pty.wait_for("the cell to run again", POOL_DEADLINE, |s| {
        // The new pool's kernel counts from 1 (issue 27 item 5).
        s.contains("In [1]: print('x is', x)") && s.contains("failed in")
    });
    // The cell ran, in a fresh session of a new pool, and says what was lost.
    assert!(screen.contains("NameError"), "{screen}");
    assert!(
        screen.contains("a fresh session: variables and files from before are"),
        "{screen}"
    );
    let second = pool_pid(data.path()).expect("a new background pool");
    assert_ne!(second, first);
    // The ended pool is named (on the status line, until the replay question
    // that follows takes its place), and the replay is offered.
    let screen = pty.wait_for("the replay question", Duration::from_secs(30), |s| {
        s.contains("run the 1 earlier cells again?")
    });
    assert!(
        screen
            .contains("new session: the variables and /mnt/data files of the cells above are gone"),
        "{screen}"
    );
    pty.send("y");
    pty.wait_for("the replay", CELL_DEADLINE, |s| {
        s.contains("In [2]: x = 1") && s.matches("done in").count() >= 2
    });
    pty.send(&format!("print('x is', x){F5}"));
    // Quit once the cell has ended: Ctrl+Q asks while a cell runs.
    pty.wait_for("the state back", CELL_DEADLINE, |s| {
        has_line(s, "x is 1") && s.matches("done in").count() >= 3
    });
    pty.quit_with(pty::CTRL_Q);
}
