//! End to end, in a pseudo-terminal: the cell editor's keys as a Jupyter/IPython
//! user expects them (issue 27 item 4). Ctrl+C with text clears the cell and
//! leaves the notebook open (Ctrl+Z or Ctrl+Y bring the text back), Ctrl+U
//! kills to the start of the line, undo goes a word at a time, Backspace in
//! the indentation removes a level, Shift+Tab dedents, and a long line wraps
//! instead of scrolling every line sideways.
//!
//! The binary talks to an endpoint where nothing listens, so no pool starts: no
//! cell is run here.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod pty;

use std::time::Duration;

use pty::{CTRL_Q, Pty};

const DEADLINE: Duration = Duration::from_secs(20);
const CTRL_C: &str = "\x03";
const CTRL_U: &str = "\x15";
const CTRL_Y: &str = "\x19";
const CTRL_Z: &str = "\x1a";
/// What terminals send for Ctrl+_ (and Ctrl+/, Ctrl+7).
const CTRL_UNDERSCORE: &str = "\x1f";
const LEFT: &str = "\x1b[D";
const SHIFT_TAB: &str = "\x1b[Z";
const BACKSPACE: &str = "\x7f";
const PLACEHOLDER: &str = "Type Python here";

fn start() -> (Pty, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let mut pty = Pty::spawn_in(
        &data,
        dir.path(),
        &[
            "--endpoint",
            "http://127.0.0.1:9",
            "--identifier",
            "editor-keys",
        ],
    );
    pty.wait_for("the editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    (pty, dir)
}

/// The editor's text rows: the rows inside the last box on screen whose top
/// border names `In [`, without the borders, trailing spaces cut.
fn editor_rows(screen: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(top) = lines.iter().rposition(|l| l.contains("In [")) else {
        return Vec::new();
    };
    lines[top + 1..]
        .iter()
        .take_while(|l| !l.trim_start().starts_with('╰'))
        .map(|l| {
            let inner = l.trim_start().strip_prefix('│').unwrap_or(l);
            let inner = inner.trim_end().strip_suffix('│').unwrap_or(inner);
            inner.trim_end().to_string()
        })
        .collect()
}

/// Waits until the editor's rows are exactly `want`.
fn wait_rows(pty: &mut Pty, what: &str, want: &[&str]) -> String {
    pty.wait_for(what, DEADLINE, |s| editor_rows(s) == want)
}

fn quit(mut pty: Pty) {
    // The editor may hold text: Ctrl+Q then asks; `y`… is not needed when it
    // is empty, so empty it first.
    pty.send(CTRL_C);
    pty.wait_for("the empty editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    pty.quit_with(CTRL_Q);
}

#[test]
fn ctrl_c_clears_the_cell_and_ctrl_z_or_ctrl_y_brings_it_back() {
    let (mut pty, _dir) = start();
    pty.send("x = 1");
    wait_rows(&mut pty, "the typed text", &["x = 1"]);
    pty.send(CTRL_C);
    let screen = pty.wait_for("the cleared editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    assert!(
        !screen.contains("again to quit"),
        "Ctrl+C with text armed quit; screen:\n{screen}"
    );
    pty.send(CTRL_Z);
    wait_rows(&mut pty, "the text back after Ctrl+Z", &["x = 1"]);
    pty.send(CTRL_C);
    pty.wait_for("the cleared editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    pty.send(CTRL_Y);
    wait_rows(&mut pty, "the text back after Ctrl+Y", &["x = 1"]);
    quit(pty);
}

#[test]
fn ctrl_c_in_the_empty_editor_still_arms_quit() {
    let (mut pty, _dir) = start();
    pty.send(CTRL_C);
    pty.wait_for("the quit warning", DEADLINE, |s| {
        s.contains("again to quit")
    });
    pty.send(CTRL_C);
    let status = pty.wait_exit(DEADLINE);
    assert!(
        matches!(status, expectrl::WaitStatus::Exited(_, 0)),
        "{status:?}"
    );
}

#[test]
fn ctrl_u_kills_to_the_line_start_and_undo_goes_a_word_at_a_time() {
    let (mut pty, _dir) = start();
    pty.send("abc def");
    wait_rows(&mut pty, "the typed text", &["abc def"]);
    pty::keys(&mut pty, &[LEFT, LEFT, LEFT]);
    pty.send(CTRL_U);
    wait_rows(&mut pty, "the line start killed", &["def"]);
    pty.send(CTRL_Y);
    wait_rows(&mut pty, "the killed text yanked back", &["abc def"]);
    pty.send(CTRL_C);
    pty.wait_for("the cleared editor", DEADLINE, |s| s.contains(PLACEHOLDER));
    pty.send("hello big world");
    wait_rows(&mut pty, "the typed text", &["hello big world"]);
    pty.send(CTRL_UNDERSCORE);
    wait_rows(&mut pty, "one word undone", &["hello big"]);
    pty.send(CTRL_Z);
    wait_rows(&mut pty, "another word undone", &["hello"]);
    quit(pty);
}

#[test]
fn backspace_in_the_indentation_removes_a_level_and_shift_tab_dedents() {
    let (mut pty, _dir) = start();
    pty.send("if x:\r");
    wait_rows(&mut pty, "the first block", &["if x:", ""]);
    pty.send("if y:\r");
    wait_rows(&mut pty, "the second block", &["if x:", "    if y:", ""]);
    pty.send(BACKSPACE);
    pty.send("z");
    wait_rows(
        &mut pty,
        "one level removed",
        &["if x:", "    if y:", "    z"],
    );
    pty.send(SHIFT_TAB);
    wait_rows(&mut pty, "the line dedented", &["if x:", "    if y:", "z"]);
    // Shift+Tab wherever the cursor is: the middle line, cursor at its end.
    pty::keys(&mut pty, &["\x1b[A"]);
    pty.send(SHIFT_TAB);
    wait_rows(
        &mut pty,
        "the middle line dedented",
        &["if x:", "if y:", "z"],
    );
    quit(pty);
}

#[test]
fn a_long_line_wraps_and_leaves_the_other_lines_whole() {
    let (mut pty, _dir) = start();
    let long = format!("s = '{}END'", "a".repeat(149));
    assert_eq!(long.len(), 158);
    pty.send("first = 1\r");
    wait_rows(&mut pty, "the first line", &["first = 1", ""]);
    pty.send(&long);
    let screen = pty.wait_for("the long line", DEADLINE, |s| s.contains("END'"));
    let rows = editor_rows(&screen);
    assert_eq!(
        rows.first().map(String::as_str),
        Some("first = 1"),
        "the first line lost its start; screen:\n{screen}"
    );
    assert!(
        rows.get(1).is_some_and(|r| r.starts_with("s = 'aaa")),
        "the long line's start is hidden; screen:\n{screen}"
    );
    // Every character of the long line is on screen, across the rows it takes.
    let shown: String = rows[1..].iter().map(|r| r.trim_end_matches('…')).collect();
    assert_eq!(shown, long, "screen:\n{screen}");
    quit(pty);
}
