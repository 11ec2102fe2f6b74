//! End to end, in a pseudo-terminal, on the local pool: Tab after a name or
//! `.` in the cell editor completes from the session's kernel (issue 27
//! item 1). Before it, Tab indented by four spaces.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod pty;

use std::time::Duration;

use pty::{CELL_DEADLINE, CTRL_Q, F5, Pty, keys};

const DEADLINE: Duration = Duration::from_secs(30);
const CTRL_C: &str = "\x03";
const PLACEHOLDER: &str = "Type Python here";

#[test]
fn tab_completes_from_the_kernel_one_match_and_several() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("import os{F5}"));
    pty.wait_for("the import to run", CELL_DEADLINE, |s| {
        s.contains("In [1]: import os") && s.contains("done in")
    });
    // One match: `os.getcw` becomes `os.getcwd`.
    keys(&mut pty, &["os.getcw", "\t"]);
    pty.wait_for("os.getcwd completed", DEADLINE, |s| {
        editor_has(s, "os.getcwd")
    });
    // Several: `os.pat` gets their common prefix, `os.path`, and names them.
    pty.send(CTRL_C);
    pty.wait_for("the empty editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    keys(&mut pty, &["os.pat", "\t"]);
    pty.wait_for("the common prefix and the candidates", DEADLINE, |s| {
        editor_has(s, "os.path") && s.contains(".pathsep")
    });
    pty.send(CTRL_C);
    pty.wait_for("the empty editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    pty.quit_with(CTRL_Q);
}

/// A row of a box on screen reads exactly `text` (borders and padding cut).
fn editor_has(screen: &str, text: &str) -> bool {
    screen
        .lines()
        .any(|l| l.split('│').nth(1).is_some_and(|c| c.trim_end() == text))
}
