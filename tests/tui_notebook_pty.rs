//! End to end, in a pseudo-terminal, on the local pool: what a Jupyter
//! user expects of the notebook (issue 11): Ctrl+C interrupts a running cell,
//! a reopened notebook says its cells ran in an earlier session and replays
//! them, prompts and notices leave nothing behind on the bottom row, Esc selects
//! the newest cell, and keys typed while the notebook starts are kept.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod pty;

use std::time::Duration;

use expectrl::WaitStatus;
use pty::{CELL_DEADLINE, F5, Pty, has_line};

const CTRL_C: &str = "\x03";

/// The bottom row of the screen (the status line, or a prompt over it).
fn bottom(screen: &str) -> String {
    screen
        .lines()
        .last()
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

#[test]
fn ctrl_c_interrupts_a_running_cell_and_quits_only_when_idle() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("kept = 7{F5}"));
    pty.wait_for("cell 1", CELL_DEADLINE, |s| {
        s.contains("In [1]: kept = 7") && s.contains("done in")
    });
    pty.send(&format!("import time; time.sleep(120){F5}"));
    pty.wait_for("the sleep to run", CELL_DEADLINE, |s| {
        s.contains(" running ")
    });
    std::thread::sleep(Duration::from_millis(500));
    // The next cell typed meanwhile.
    pty.send("draft = 1");
    pty.wait_for("the draft", Duration::from_secs(10), |s| {
        s.contains("│draft = 1")
    });
    // Ctrl+C in the editor, as in Jupyter: the running cell is interrupted,
    // before the text typed is cleared (issue 27: a running cell comes first).
    pty.send(CTRL_C);
    let screen = pty.wait_for("the KeyboardInterrupt", Duration::from_secs(30), |s| {
        s.contains("KeyboardInterrupt")
    });
    assert!(
        !screen.contains("again to quit"),
        "Ctrl+C on a running cell must not ask to quit:\n{screen}"
    );
    assert!(
        screen.contains("│draft = 1"),
        "the interrupt cleared the text typed:\n{screen}"
    );
    // The notice about the interrupt ended with the cell, with no key pressed.
    let screen = pty.wait_for("the cell to settle", CELL_DEADLINE, |s| {
        s.contains("failed in")
    });
    assert!(
        !screen.contains("interrupting"),
        "a stale notice stays after the cell ended:\n{screen}"
    );
    // Nothing runs: Ctrl+C clears the cell, IPython's habit.
    pty.send(CTRL_C);
    let screen = pty.wait_for("the cleared editor", Duration::from_secs(10), |s| {
        s.contains("Type Python here")
    });
    assert!(!screen.contains("again to quit"), "{screen}");
    // The session lived on.
    pty.send(&format!("kept{F5}"));
    pty.wait_for("Out[3]: 7", CELL_DEADLINE, |s| has_line(s, "Out[3]: 7"));
    // Idle, Ctrl+C twice quits.
    pty.send(CTRL_C);
    pty.wait_for("the quit warning", Duration::from_secs(10), |s| {
        s.contains("again to quit")
    });
    pty.send(CTRL_C);
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
}

#[test]
fn a_reopened_notebook_marks_the_new_session_and_replays_it() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("x = 6*7{F5}"));
    pty.wait_for("cell 1", CELL_DEADLINE, |s| {
        s.contains("In [1]: x = 6*7") && s.contains("done in")
    });
    pty.send(&format!("print('x is', x){F5}"));
    let screen = pty.wait_for("cell 2", CELL_DEADLINE, |s| has_line(s, "x is 42"));
    assert!(
        !screen.contains("new session"),
        "no boundary while one session ran every cell:\n{screen}"
    );
    pty.quit_with(pty::CTRL_Q);
    // The harness stops the pool when a `Pty` is dropped; here the next step
    // needs it gone for sure.
    pty::stop_background_pools_checked(data.path());

    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    // The pool (a new one) says it has no such session, which makes the
    // boundary certain.
    pty.wait_for(
        "the reopened notebook to say its state is gone",
        CELL_DEADLINE,
        |s| {
            s.contains("In [2]: print('x is', x)")
                && s.contains("session ended: variables and /mnt/data files are gone")
        },
    );
    // R (in the notebook) replays the cells above into this session, once
    // asked (issue 27 item 10).
    pty.focus_notebook();
    pty.send("R");
    pty.wait_for("the replay question", CELL_DEADLINE, |s| {
        s.contains("earlier cell(s) in this session")
    });
    assert_eq!(
        pty.contents().matches("x = 6*7").count(),
        1,
        "nothing runs before the answer:\n{}",
        pty.contents()
    );
    pty.send("y");
    // The new session's kernel numbers its cells from 1 again (issue 27
    // item 5): the replayed cells are In [1] and In [2] below the boundary.
    let screen = pty.wait_for("the replay", CELL_DEADLINE, |s| {
        s.matches("In [2]: print('x is', x)").count() == 2 && s.matches("x is 42").count() >= 2
    });
    assert!(!screen.contains("NameError"), "{screen}");
    // After the replay the state is alive again.
    pty.send("i");
    pty.send(&format!("x + 1{F5}"));
    pty.wait_for("Out[3]: 43", CELL_DEADLINE, |s| has_line(s, "Out[3]: 43"));
    pty.quit_with(pty::CTRL_Q);
}

/// A reopened notebook whose session still runs says so (issue 27 item 9:
/// it said "maybe in a session that has ended since"), and the state is
/// there; `R` then asks whether to run the cells again anyway.
#[test]
fn a_reopened_notebook_on_a_live_session_says_it_is_live() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("x = 6*7{F5}"));
    pty.wait_for("cell 1", CELL_DEADLINE, |s| {
        s.contains("In [1]: x = 6*7") && s.contains("done in")
    });
    // The background pool, and its session, outlive the notebook.
    quit_leaving_the_pool(pty);

    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    let screen = pty.wait_for("the pool's answer", CELL_DEADLINE, |s| {
        s.contains("reopened · session live (created") && s.contains("variables and files kept")
    });
    assert!(!screen.contains("ended"), "{screen}");
    pty.send(&format!("print('x is', x){F5}"));
    pty.wait_for("the state kept", CELL_DEADLINE, |s| has_line(s, "x is 42"));
    pty.focus_notebook();
    pty.send("R");
    pty.wait_for("the replay question", CELL_DEADLINE, |s| {
        s.contains("The session is live and ran them")
    });
    pty.send("n");
    pty.wait_for("the question gone", CELL_DEADLINE, |s| {
        !s.contains("The session is live and ran them")
    });
    pty.quit_with(pty::CTRL_Q);
}

#[test]
fn prompts_and_notices_leave_nothing_behind() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("open('notes.txt', 'w').write('hello'){F5}"));
    pty.wait_for("the file to be written", CELL_DEADLINE, |s| {
        has_line(s, "Out[1]: 5") && s.contains("done in")
    });
    // The files pane, the file selected, delete: the question stands alone on
    // the bottom row.
    pty.send("\x1bOQ"); // F2
    pty.wait_for("the file listed", Duration::from_secs(30), |s| {
        s.contains("notes.txt")
    });
    pty.send("x");
    let screen = pty.wait_for("the delete question", Duration::from_secs(10), |s| {
        bottom(s).contains("Delete")
    });
    let row = bottom(&screen);
    assert!(
        row.ends_with("y/N"),
        "old text is left after the question: {row:?}\n{screen}"
    );
    pty.send("n");
    pty.quit_with(pty::CTRL_Q);
}

#[test]
fn esc_selects_the_newest_cell() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    for (n, code) in ["a = 1", "b = 2", "c = 3"].iter().enumerate() {
        pty.send(&format!("{code}{F5}"));
        let seen = format!("In [{}]: {code}", n + 1);
        pty.wait_for(&seen, CELL_DEADLINE, |s| s.contains(&seen));
    }
    // Select the first cell, go back to the editor, run one more.
    pty.focus_notebook();
    pty::keys(&mut pty, &["k", "k", "i"]);
    pty.send(&format!("d = 4{F5}"));
    pty.wait_for("cell 4", CELL_DEADLINE, |s| {
        s.contains("In [4]: d = 4") && s.contains("done in")
    });
    // Esc then k: the cell before the newest, copied (Y) to say which.
    pty.focus_notebook();
    pty::keys(&mut pty, &["k", "Y"]);
    let screen = pty.wait_for("the copy notice", Duration::from_secs(10), |s| {
        s.contains("copied")
    });
    assert!(
        bottom(&screen).contains("In [3]"),
        "Esc then k must select the cell before the newest:\n{screen}"
    );
    pty.quit_with(pty::CTRL_Q);
}

#[test]
fn keys_typed_while_the_notebook_starts_are_kept() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    // Typed at once, before the first frame and while the terminal is probed
    // for its graphics (the pty never answers, so the probe waits it out).
    pty.send("6*7");
    std::thread::sleep(Duration::from_millis(60));
    pty.send("+1");
    let screen = pty.wait_for("the first frame", Duration::from_secs(20), |s| {
        s.contains("╭ In [1]")
    });
    println!("{screen}");
    pty.wait_local_ready();
    pty.send(F5);
    let screen = pty.wait_for("the typed cell to run", CELL_DEADLINE, |s| {
        s.contains("done in") || s.contains("failed")
    });
    assert!(
        has_line(&screen, "Out[1]: 43"),
        "keys typed at start were lost:\n{screen}"
    );
    pty.quit_with(pty::CTRL_Q);
}

/// Stops the background pools of a data directory when dropped (the test's
/// end, or its failure): the notebooks below are quit without stopping
/// them, since the pool goes on running the cell the notebook left.
struct StopPools<'a>(&'a std::path::Path);

impl Drop for StopPools<'_> {
    fn drop(&mut self) {
        pty::stop_background_pools(self.0);
    }
}

/// Quits with Ctrl+Q (asserting a clean exit), leaving the background pool
/// running.
fn quit_leaving_the_pool(mut pty: Pty) {
    pty.data_dir = None;
    pty.quit_with(pty::CTRL_Q);
}

/// A cell that runs until a file named `go` appears in the session's
/// `/mnt/data` ([`open_the_gate`]), then prints `done`.
const GATED_CELL: &str = "import os, time; [time.sleep(0.05) for _ in \
    iter(lambda: os.path.exists(\"/mnt/data/go\"), True)]; print(\"done\")";

/// `sessionpad ARGS` run in the folder `work` with the notebook's data
/// directory `data` (so on the notebook's session), and what it printed.
fn cli_in(data: &std::path::Path, work: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args(args)
        .current_dir(work)
        .env("SESSIONPAD_DATA_DIR", data)
        .env("SESSIONPAD_CONFIG", data.join("no-config.toml"))
        .env_remove("POOL_MANAGEMENT_ENDPOINT")
        .output()
        .expect("run sessionpad")
}

/// Uploads `go` into the session of the notebook of `work` (the same
/// session: `sessionpad files put` run in that folder), ending
/// [`GATED_CELL`].
fn open_the_gate(data: &std::path::Path, work: &std::path::Path) {
    let file = work.join("go");
    std::fs::write(&file, "go").expect("write the gate file");
    let out = cli_in(data, work, &["files", "put", "go"]);
    assert!(
        out.status.success(),
        "files put go: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until the flight recorder of the pool of `data` holds the gated
/// cell's end (`sessionpad log --all --json` shows `done`).
fn wait_until_recorded(data: &std::path::Path, work: &std::path::Path) {
    let deadline = std::time::Instant::now() + CELL_DEADLINE;
    loop {
        let out = cli_in(data, work, &["log", "--all", "--json"]);
        let text = String::from_utf8_lossy(&out.stdout);
        if text.contains("done\\n") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the gated cell's end never reached the flight recorder: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Issue 26 and 27: Ctrl+Q while a cell runs and text is typed asks first
/// (Esc stays); confirmed, the notebook is saved with the running cell
/// marked as running when you quit and the typed text as its draft. Opened
/// again before the cell ended, the cell says it was running when you quit
/// and the text is back in the editor; opened once the pool (which went on
/// without the notebook) recorded its end, the cell shows the recorded
/// output, saying it came from the flight recorder.
#[test]
fn quitting_while_a_cell_runs_asks_and_keeps_the_cell_and_the_typed_text() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let _pools = StopPools(data.path());
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    // The cell runs until the test lets it end (a file in its /mnt/data), so
    // no step below races a timer on a loaded machine.
    pty.send(&format!("{GATED_CELL}{F5}"));
    pty.wait_for("the gated cell to run", CELL_DEADLINE, |s| {
        s.contains(" running ")
    });
    // Three lines typed and not run (Enter is a new line in the editor).
    pty.send("a = 1\rb = 2\rprint(a + b)");
    pty.wait_for("the typed lines", Duration::from_secs(10), |s| {
        s.contains("print(a + b)")
    });
    pty.send(pty::CTRL_Q);
    let question = "A cell is running (In [1]) and the editor holds 3 lines: quit anyway?";
    pty.wait_for("the quit question", Duration::from_secs(10), |s| {
        bottom(s).contains(question)
    });
    // Esc stays.
    pty.send("\x1b");
    pty.wait_for("the question taken down", Duration::from_secs(10), |s| {
        bottom(s).contains("not quitting")
    });
    assert!(pty.poll_exit().is_none(), "Esc must not quit");
    // Asked again, a second Ctrl+Q confirms.
    pty.send(pty::CTRL_Q);
    pty.wait_for("the quit question again", Duration::from_secs(10), |s| {
        bottom(s).contains(question)
    });
    quit_leaving_the_pool(pty);

    let doc = pty::saved_notebook(data.path());
    let cells = doc["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 1, "the running cell is kept: {doc:#}");
    let ours = &cells[0]["metadata"]["sessionpad"];
    assert_eq!(ours["status"], "running when you quit", "{doc:#}");
    assert_eq!(ours["quit_while"], "running", "{doc:#}");
    assert!(
        ours["identifier"].as_str().is_some_and(|id| !id.is_empty()),
        "{doc:#}"
    );
    assert!(ours["started_at"].is_string(), "{doc:#}");
    assert!(ours["quit_at"].is_string(), "{doc:#}");
    assert_eq!(cells[0]["source"], serde_json::json!([GATED_CELL]));
    assert_eq!(
        doc["metadata"]["sessionpad"]["draft"], "a = 1\nb = 2\nprint(a + b)",
        "the typed text is kept: {doc:#}"
    );

    // Opened again while the pool still runs the cell: it says so, and the
    // typed text is back in the editor.
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    let screen = pty.wait_for("the cell running when you quit", CELL_DEADLINE, |s| {
        s.contains("In [1]: import os, time;")
            && s.contains("running when you quit")
            && s.contains("print(a + b)")
    });
    assert!(
        !screen.contains("done in"),
        "a cell running when you quit must not show as finished:\n{screen}"
    );
    pty.wait_for("the flight recorder's answer", CELL_DEADLINE, |s| {
        bottom(s).contains("not in the flight recorder (yet)")
    });
    // Unchanged, the draft is kept already: Ctrl+Q quits at once.
    quit_leaving_the_pool(pty);

    // Once the cell ended, the pool recorded it: opened again, its output is
    // filled in from the record.
    open_the_gate(data.path(), work.path());
    wait_until_recorded(data.path(), work.path());
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    let screen = pty.wait_for("the cell filled in from the record", CELL_DEADLINE, |s| {
        s.contains("ended after you quit: outputs from the flight recorder")
    });
    assert!(has_line(&screen, "done"), "the recorded output:\n{screen}");
    assert!(
        screen.contains("  done in ") && !screen.contains("running when you quit"),
        "the record says it finished, and how long it ran:\n{screen}"
    );
    assert!(
        screen.contains("print(a + b)"),
        "the draft is still in the editor:\n{screen}"
    );
    quit_leaving_the_pool(pty);
    let doc = pty::saved_notebook(data.path());
    let ours = &doc["cells"][0]["metadata"]["sessionpad"];
    assert_eq!(ours["status"], "succeeded", "{doc:#}");
    assert!(ours["recorded_seq"].is_i64(), "{doc:#}");
    assert_eq!(
        doc["cells"][0]["outputs"][0]["text"],
        serde_json::json!(["done\n"]),
        "{doc:#}"
    );
    assert_eq!(
        doc["metadata"]["sessionpad"]["draft"],
        "a = 1\nb = 2\nprint(a + b)"
    );
}

/// stdout and stderr in the order the cell printed them (issue 27 item 2:
/// the notebook showed 1, 3, 5, then 2 and 4), on the local pool, which
/// streams them as they come.
#[test]
fn stdout_and_stderr_show_in_the_order_they_were_printed() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!(
        "import sys, warnings; print('step 1'); warnings.warn('step 2'); print('step 3'); \
         sys.stderr.write('step 4\\n'); print('step 5'){F5}"
    ));
    let screen = pty.wait_for("the cell", CELL_DEADLINE, |s| {
        s.contains("done in") && has_line(s, "step 5")
    });
    let rows: Vec<&str> = screen.lines().collect();
    let at = |step: &str| {
        rows.iter()
            .position(|r| r.contains(step) && !r.contains("print("))
            .unwrap_or_else(|| panic!("no {step}:\n{screen}"))
    };
    let order: Vec<usize> = ["step 1", "step 2", "step 3", "step 4", "step 5"]
        .iter()
        .map(|s| at(s))
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "out of order {order:?}:\n{screen}"
    );
    pty.quit_with(pty::CTRL_Q);
}
