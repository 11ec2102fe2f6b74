//! End to end, in a pseudo-terminal, on the local pool: how queued cells and
//! timed-out cells behave (issue 27 items 3 and 6).
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod pty;

use pty::{CELL_DEADLINE, F5, Pty, has_line};

/// A cell queued behind a cell that fails is not run, as Jupyter stops its
/// queue on an error; it stays in the notebook saying why. Reproduces issue
/// 27 item 3: `print("after error")` ran and printed `after error`.
#[test]
fn cells_queued_behind_a_failing_cell_are_not_run() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("import time; time.sleep(2); 1/0{F5}"));
    pty.wait_for("the first cell", CELL_DEADLINE, |s| {
        s.contains("In [1]: import time")
    });
    pty.send(&format!("print(\"after error\"){F5}"));
    let screen = pty.wait_for("the second cell to settle", CELL_DEADLINE, |s| {
        s.contains("not run: an earlier cell failed") || has_line(s, "after error")
    });
    assert!(
        !has_line(&screen, "after error"),
        "the queued cell ran after the error:\n{screen}"
    );
    assert!(screen.contains("ZeroDivisionError"), "{screen}");
    // What was typed is kept: the cell is in the notebook, and runs again.
    assert!(screen.contains("print(\"after error\")"), "{screen}");
    pty.send(&format!("print(\"now\"){F5}"));
    pty.wait_for("a new cell to run", CELL_DEADLINE, |s| has_line(s, "now"));
}

/// A cell past its execution limit says what became of its code: the local
/// pool interrupted it at the limit, and what it printed after is not kept.
/// Reproduces issue 27 item 6: it said only `Request timed out`.
#[test]
fn a_timed_out_cell_says_what_became_of_its_code() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &["--timeout", "3"]);
    pty.wait_local_ready();
    pty.send(&format!("import time; time.sleep(6){F5}"));
    let screen = pty.wait_for("the cell to time out", CELL_DEADLINE, |s| {
        s.contains("failed in")
    });
    assert!(screen.contains("Request timed out"), "{screen}");
    assert!(
        screen.contains("stopped at its 3 s limit"),
        "the cell does not say what became of its code:\n{screen}"
    );
    // The session is free again: the next cell runs at once.
    pty.send(&format!("print(\"free\"){F5}"));
    pty.wait_for("the next cell", CELL_DEADLINE, |s| has_line(s, "free"));
}

/// A cell's `In [n]` is the kernel's own count, the one its traceback names:
/// after the kernel started again (it died) the numbering starts again at 1,
/// and the notebook says so. Reproduces issue 27 item 5: a cell labelled
/// `In [60]` showed `Cell In[1], line 1` in its traceback.
#[test]
fn cell_labels_follow_the_kernels_count_across_a_restart() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("kept = 1{F5}"));
    pty.wait_for("cell 1", CELL_DEADLINE, |s| {
        s.contains("In [1]: kept = 1") && s.contains("done in")
    });
    pty.send(&format!("import os; os._exit(1){F5}"));
    pty.wait_for("the kernel to die", CELL_DEADLINE, |s| {
        s.contains("In [2]: import os") && s.contains("kernel died")
    });
    pty.send(&format!("1/0{F5}"));
    let screen = pty.wait_for("the error", CELL_DEADLINE, |s| {
        s.contains("ZeroDivisionError") && s.contains("failed in")
    });
    assert!(screen.contains("Cell In[1]"), "{screen}");
    assert!(
        screen.contains("In [1]: 1/0"),
        "the label disagrees with the traceback:\n{screen}"
    );
    assert!(
        screen.contains("kernel restarted — numbering starts again"),
        "{screen}"
    );
}
