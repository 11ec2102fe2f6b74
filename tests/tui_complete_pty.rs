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

/// A notebook on a fresh local pool whose first cell ran `import os`, and its
/// folders (bind them first, so they outlive the pty, which stops the pool).
fn start_with_os_imported() -> ((tempfile::TempDir, tempfile::TempDir), Pty) {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("import os{F5}"));
    pty.wait_for("the import to run", CELL_DEADLINE, |s| {
        s.contains("In [1]: import os") && s.contains("done in")
    });
    ((data, work), pty)
}

#[test]
fn tab_completes_from_the_kernel_one_match_and_several() {
    let (_dirs, mut pty) = start_with_os_imported();
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

/// Several candidates open a list near the cursor (issue 27 item 1): Down
/// and Enter take the second; Esc closes the list and leaves the keys in the
/// editor (a letter typed after it lands in the cell, not in the notebook).
#[test]
fn several_candidates_open_a_list_down_enter_takes_one_esc_closes_it() {
    let (_dirs, mut pty) = start_with_os_imported();
    keys(&mut pty, &["os.get", "\t"]);
    let screen = pty.wait_for("the list of candidates", DEADLINE, |s| {
        list_row(s, "getcwd").is_some() && list_row(s, "getenv").is_some()
    });
    // The list's first row is the one under its top border (a row with no
    // `│`); the second candidate is the row under it.
    let (mut row, col) = list_row(&screen, "getcwd").unwrap();
    while row > 0 && cell_at(&screen, row - 1, col).is_some() {
        row -= 1;
    }
    let second = cell_at(&screen, row + 1, col).unwrap();
    assert_ne!(second, "", "no second row in the list; screen:\n{screen}");
    keys(&mut pty, &["\x1b[B", "\r"]);
    // The kernel names candidates from `.` (`.getcwd`), or as typed.
    let wanted = if second.starts_with("os.") {
        second.clone()
    } else if second.starts_with('.') {
        format!("os{second}")
    } else {
        format!("os.{second}")
    };
    pty.wait_for("the second candidate taken", DEADLINE, |s| {
        editor_has(s, &wanted) && list_row(s, "getenv").is_none()
    });
    // Esc closes the list and the editor keeps the keys.
    pty.send(CTRL_C);
    pty.wait_for("the empty editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    keys(&mut pty, &["os.get", "\t"]);
    pty.wait_for("the list again", DEADLINE, |s| {
        list_row(s, "getenv").is_some()
    });
    pty.send("\x1b");
    pty.wait_for("the list closed", DEADLINE, |s| {
        list_row(s, "getenv").is_none()
    });
    keys(&mut pty, &["x"]);
    pty.wait_for("the letter typed into the cell", DEADLINE, |s| {
        editor_has(s, "os.getx")
    });
    pty.send(CTRL_C);
    pty.wait_for("the empty editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    pty.quit_with(CTRL_Q);
}

/// Issue 27 item 1: typing while the list is open narrows it, as IPython's
/// does: `os.get` + Tab lists getcwd and getenv; `e` leaves getenv (and its
/// kin) and drops getcwd; Backspace brings getcwd back.
#[test]
fn typing_while_the_list_is_open_narrows_it() {
    let (_dirs, mut pty) = start_with_os_imported();
    keys(&mut pty, &["os.get", "\t"]);
    pty.wait_for("the list of candidates", DEADLINE, |s| {
        list_row(s, "getcwd").is_some() && list_row(s, "getenv").is_some()
    });
    keys(&mut pty, &["e"]);
    pty.wait_for("the list narrowed to get-e names", DEADLINE, |s| {
        editor_has(s, "os.gete")
            && list_row(s, "getenv").is_some()
            && list_row(s, "getcwd").is_none()
    });
    keys(&mut pty, &["\x7f"]);
    pty.wait_for("the list widened again", DEADLINE, |s| {
        editor_has(s, "os.get")
            && list_row(s, "getenv").is_some()
            && list_row(s, "getcwd").is_some()
    });
    keys(&mut pty, &["env", "\r"]);
    pty.wait_for("a candidate taken from the narrowed list", DEADLINE, |s| {
        // The editor's own row reads os.getenv; the closed list no longer
        // shows getenvb, which `env` left in it.
        editor_has(s, "os.getenv") && list_row(s, "getenvb").is_none()
    });
    pty.send(CTRL_C);
    pty.wait_for("the empty editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    pty.quit_with(CTRL_Q);
}

/// Where a box row reads exactly `name`, `.name` or `os.name` between two
/// borders: the screen row and the index of the `│`-separated piece.
fn list_row(screen: &str, name: &str) -> Option<(usize, usize)> {
    let dotted = format!("os.{name}");
    let dot = format!(".{name}");
    screen.lines().enumerate().find_map(|(row, line)| {
        line.split('│')
            .enumerate()
            .skip(1)
            .find(|(_, piece)| {
                let t = piece.trim();
                t == name || t == dotted || t == dot
            })
            .map(|(col, _)| (row, col))
    })
}

/// The trimmed `col`th `│`-separated piece of screen row `row`.
fn cell_at(screen: &str, row: usize, col: usize) -> Option<String> {
    let line = screen.lines().nth(row)?;
    line.split('│').nth(col).map(|p| p.trim().to_string())
}

/// A row of a box on screen reads exactly `text` (borders and padding cut).
fn editor_has(screen: &str, text: &str) -> bool {
    screen
        .lines()
        .any(|l| l.split('│').nth(1).is_some_and(|c| c.trim_end() == text))
}
