//! End to end: the real `sessionpad` binary in a pseudo-terminal of 100x30, its
//! output fed into a `vt100` terminal emulator, typing the cells of issue 2 on the
//! embedded local pool and reading the screen.
//!
//! The first run on a machine builds the local pool's Python environment in the
//! cache directory (shared with other tests and runs), so the wait for the pool is
//! long; the data directory is a fresh temporary one.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::Path;
use std::time::Duration;

use expectrl::WaitStatus;

mod common;
mod pty;

use pty::*;

#[test]
fn types_cells_on_the_local_pool_and_reads_the_screen() {
    let data = tempfile::tempdir().expect("temp data dir");
    let mut pty = Pty::spawn(data.path());

    pty.wait_for("the first frame", Duration::from_secs(20), |s| {
        s.contains("sessionpad")
    });
    pty.wait_for("the pool to be ready", POOL_DEADLINE, |s| {
        assert!(
            !s.contains("pool failed"),
            "the pool failed to start; screen:\n{s}"
        );
        s.contains("│ ready")
    });

    pty.send(&format!("x = 6*7{F5}"));
    pty.wait_for("cell 1 to finish", CELL_DEADLINE, |s| {
        s.contains("In [1]: x = 6*7") && s.contains("done in")
    });

    pty.send(&format!("print(x){F5}"));
    pty.wait_for("print(x) to show 42", CELL_DEADLINE, |s| {
        s.contains("In [2]: print(x)") && has_line(s, "42")
    });

    pty.send(&format!("x{ALT_ENTER}"));
    pty.wait_for("the result Out[3]: 42", CELL_DEADLINE, |s| {
        has_line(s, "Out[3]: 42")
    });

    pty.send(&format!("1/0{F5}"));
    let screen = pty.wait_for("the ZeroDivisionError traceback", CELL_DEADLINE, |s| {
        s.contains("ZeroDivisionError")
    });
    // Shown with `--nocapture`, for a person checking what the screen looked like.
    println!("{screen}");
    assert!(
        has_line(&screen, "42"),
        "print output still on screen:\n{screen}"
    );
    assert!(
        screen.contains("failed"),
        "the failed run is marked:\n{screen}"
    );

    // A plot, drawn with half-blocks (the first import of matplotlib is slow).
    pty.send(&format!(
        "import matplotlib.pyplot as plt; plt.plot([1, 3, 2]); plt.show(){F5}"
    ));
    let screen = pty.wait_for("the plot in half-blocks", PLOT_DEADLINE, |s| {
        assert!(
            !s.contains("[image not shown"),
            "the plot was not drawn:\n{s}"
        );
        // A tall plot may push its `In [5]:` line off the top: count the rows
        // drawn in half-blocks instead.
        s.lines()
            .filter(|l| l.contains('▀') || l.contains('▄'))
            .count()
            >= 5
    });
    println!("{screen}");

    // `q` in the editor is text, never a quit: the cell `q = 1` runs.
    pty.send("q = 1");
    pty.send(F5);
    pty.wait_for("the cell q = 1", CELL_DEADLINE, |s| {
        s.contains("In [6]: q = 1")
    });
    assert!(pty.poll_exit().is_none(), "typing q must not quit");
    // Esc gives the notebook the focus, where `q` quits.
    pty.focus_notebook();
    pty.send("q");
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}; screen:\n{}",
        pty.contents()
    );
    // The terminal was given back: the alternate screen is left.
    assert!(
        !pty.parser.screen().alternate_screen(),
        "still on the alternate screen"
    );
}

mod nbformat;

const UP: &str = "\x1b[A";

/// Esc gives the notebook the focus, `q` quits; the exit must be clean.
fn quit(mut pty: Pty) {
    pty.focus_notebook();
    pty.quit_with("q");
}

#[test]
fn the_notebook_is_reloaded_after_a_restart_and_exports_as_valid_ipynb() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");

    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("y = 6*7{F5}"));
    pty.wait_for("cell 1 to finish", CELL_DEADLINE, |s| {
        s.contains("In [1]: y = 6*7") && s.contains("done in")
    });
    pty.send(&format!("print('kept', y){F5}"));
    pty.wait_for("cell 2 to print", CELL_DEADLINE, |s| has_line(s, "kept 42"));
    quit(pty);

    // The same folder and data directory: the cells are back, before the pool is
    // even ready, as records (not re-run).
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    let screen = pty.wait_for("the reloaded notebook", Duration::from_secs(20), |s| {
        s.contains("In [1]: y = 6*7") && s.contains("In [2]: print('kept', y)")
    });
    assert!(
        has_line(&screen, "kept 42"),
        "outputs reloaded too:\n{screen}"
    );
    pty.wait_local_ready();
    // Up recalls the reloaded cell; run in the new session it shows the state is new.
    pty.send(UP);
    pty.wait_for("Up to recall cell 2 into the editor", CELL_DEADLINE, |s| {
        s.matches("print('kept', y)").count() >= 2
    });
    pty.send(F5);
    // The new session's kernel counts from 1 again, and so do the labels
    // (issue 27 item 5).
    pty.wait_for("the recalled cell to run as In [1]", CELL_DEADLINE, |s| {
        s.contains("In [1]: print('kept', y)") && s.contains("NameError")
    });
    pty.send(&format!("2 + 3{F5}"));
    let screen = pty.wait_for("Out[2]: 5", CELL_DEADLINE, |s| has_line(s, "Out[2]: 5"));
    println!("{screen}");
    quit(pty);

    // `sessionpad export` in that folder writes a notebook nbformat accepts.
    let exported = work.path().join("exported.ipynb");
    common::stdout_ok(
        common::sessionpad_command(data.path())
            .args(["export", "-o"])
            .arg(&exported)
            .current_dir(work.path()),
    );
    let summary = nbformat::validate(&exported);
    let cells: Vec<(String, String)> = summary["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .map(|c| {
            (
                c["source"].as_str().unwrap_or("").to_string(),
                c["outputs"].to_string(),
            )
        })
        .collect();
    let expected = [
        ("y = 6*7", "[]"),
        ("print('kept', y)", r#"["stream"]"#),
        ("print('kept', y)", r#"["error"]"#),
        ("2 + 3", r#"["execute_result"]"#),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
        .collect();
    assert_eq!(cells, expected);

    // `sessionpad open` offers the file's cells in the editor, one per run.
    let mut pty = Pty::spawn_in(
        data.path(),
        work.path(),
        &["open", exported.to_str().expect("utf-8 path")],
    );
    pty.wait_local_ready();
    pty.send(F5);
    // A new session again: its kernel numbers the opened cells from 1.
    pty.wait_for("the first opened cell to run", CELL_DEADLINE, |s| {
        s.matches("In [1]: y = 6*7").count() >= 2
    });
    pty.send(F5);
    let screen = pty.wait_for("the second opened cell to run", CELL_DEADLINE, |s| {
        s.matches("In [2]: print('kept', y)").count() >= 2 && s.matches("kept 42").count() >= 2
    });
    println!("{screen}");
    quit(pty);
}

#[test]
fn a_running_cell_is_interrupted_on_the_local_pool() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    pty.send(&format!("kept = 7{F5}"));
    pty.wait_for("cell 1 to finish", CELL_DEADLINE, |s| {
        s.contains("In [1]: kept = 7") && s.contains("done in")
    });
    pty.send(&format!("import time; time.sleep(120){F5}"));
    pty.wait_for("the sleep to run", CELL_DEADLINE, |s| {
        s.contains("In [2]: import time") && s.contains(" running ")
    });
    // Let the kernel start the sleep, then stop it from the notebook: `x`.
    std::thread::sleep(Duration::from_millis(500));
    pty.focus_notebook();
    pty.send("x");
    let screen = pty.wait_for("the KeyboardInterrupt", Duration::from_secs(30), |s| {
        s.contains("KeyboardInterrupt")
    });
    println!("{screen}");
    // Back to the editor: the session kept its state.
    pty.send("i");
    pty.send(&format!("kept{F5}"));
    pty.wait_for("Out[3]: 7", CELL_DEADLINE, |s| has_line(s, "Out[3]: 7"));
    quit(pty);

    // The pty answers no terminal queries: the graphics probe gave up and
    // chose half-blocks, and the log says so, with how to force a protocol
    // (issue 23: a late or missing answer is not taken for "no graphics"
    // silently).
    let log = log_text(data.path());
    let line = log
        .lines()
        .find(|l| l.contains("image protocol"))
        .unwrap_or_else(|| panic!("no probe in the log:\n{log}"));
    assert!(line.contains("Halfblocks"), "{line}");
    assert!(line.contains("why=\"no answer\""), "{line}");
    let warning = log
        .lines()
        .find(|l| l.contains("did not say what graphics it has"))
        .unwrap_or_else(|| panic!("no warning in the log:\n{log}"));
    assert!(
        warning.contains("SESSIONPAD_IMAGE_PROTOCOL=kitty, sixel or iterm2 forces a protocol"),
        "{warning}"
    );
}

/// Everything the binary logged in `data_dir`.
fn log_text(data_dir: &Path) -> String {
    let mut text = String::new();
    if let Ok(entries) = std::fs::read_dir(data_dir.join("logs")) {
        for entry in entries.flatten() {
            text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    text
}

/// A running cell printing more than half a megabyte shows its latest lines
/// after a line saying the rest comes when it ends (the notebook keeps the
/// last 256 KiB of a running cell); when it ends, all of it is there: all its
/// lines counted on screen, every line in the saved notebook.
#[test]
fn a_running_cell_shows_the_tail_of_a_huge_output_and_all_of_it_when_it_ends() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    // 30,000 lines of 30 bytes (900 kB), then a pause to look at it running.
    pty.send(&format!(
        "exec('import time\\nfor i in range(30000): print(f\"row {{i:06}} \" + \"x\" * 18)\\ntime.sleep(4)'){F5}"
    ));
    // While it runs: the latest lines, and fewer than all (the first line
    // of what is kept says the rest comes at the end; it is above the screen).
    let running = pty.wait_for("the tail while it runs", CELL_DEADLINE, |s| {
        s.contains("row 029999") && s.contains(" running ")
    });
    assert!(!running.contains("row 000000"), "{running}");
    assert!(!running.contains("30,000 lines"), "{running}");
    pty.wait_for("the whole output once it ended", CELL_DEADLINE, |s| {
        s.contains("done in") && s.contains("… 30,000 lines, 900 kB in all")
    });
    quit(pty);
    let notebook = saved_notebook(data.path());
    let text: String = notebook["cells"][0]["outputs"][0]["text"]
        .as_array()
        .expect("stream text lines")
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert_eq!(text.lines().count(), 30_000);
    assert!(text.starts_with("row 000000 ") && text.ends_with("row 029999 xxxxxxxxxxxxxxxxxx\n"));
}

const CTRL_R: &str = "\x12";

/// True when `needle` occurs in `haystack`.
fn has_bytes(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn copy_writes_our_osc52_and_history_search_recalls_a_cell() {
    use base64::Engine;
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();
    // Session output that tries to set the clipboard itself, and to clear the
    // screen and move the cursor off it, must not get through.
    pty.send(&format!(
        "print('copied text' + chr(27) + ']52;c;aGk=' + chr(7) + chr(27) + '[2J' + chr(27) + '[99;77H'){F5}"
    ));
    pty.wait_for("the printed line", CELL_DEADLINE, |s| {
        has_line(s, "copied text")
    });
    assert!(
        !has_bytes(&pty.raw, b"\x1b]52;c;aGk="),
        "the session's OSC 52 got through"
    );
    assert!(
        !has_bytes(&pty.raw, b"\x1b[99;77H"),
        "the session's cursor move got through"
    );
    pty.send(&format!("'second cell'{F5}"));
    pty.wait_for("Out[2]", CELL_DEADLINE, |s| {
        has_line(s, "Out[2]: 'second cell'")
    });

    // The notebook: select In [1] and copy its output (`y`): our own OSC 52.
    pty.focus_notebook();
    pty.send("k");
    pty.send("y");
    pty.wait_for("the copy notice", CELL_DEADLINE, |s| {
        s.contains("to the clipboard")
    });
    let expected = base64::engine::general_purpose::STANDARD.encode("copied text\n");
    let osc = format!("\x1b]52;c;{expected}\x07");
    assert!(
        has_bytes(&pty.raw, osc.as_bytes()),
        "no OSC 52 with the output in {:?}",
        String::from_utf8_lossy(&pty.raw)
    );

    // Save it (`s`): the prompt offers out-1.txt in the working directory; a
    // second save asks before replacing the file, and `n` keeps it.
    pty.send("s");
    pty.wait_for("the save prompt", CELL_DEADLINE, |s| {
        s.contains("out-1.txt")
    });
    pty.send("\r");
    pty.wait_for("the save notice", CELL_DEADLINE, |s| {
        s.contains("saved In [1]'s text")
    });
    let saved = work.path().join("out-1.txt");
    assert_eq!(
        std::fs::read_to_string(&saved).ok().as_deref(),
        Some("copied text\n")
    );
    pty.send("s");
    pty.wait_for("the save prompt again", CELL_DEADLINE, |s| {
        s.contains("Save In [1]")
    });
    pty.send("\r");
    pty.wait_for("the question", CELL_DEADLINE, |s| {
        s.contains("exists. Replace it?")
    });
    pty.send("n");
    pty.wait_for("the file kept", CELL_DEADLINE, |s| {
        s.contains("out-1.txt is kept")
    });

    // Back in the editor, Ctrl+R finds the first cell by a word of it.
    pty.send("i");
    pty.send(CTRL_R);
    pty.wait_for("the history list", CELL_DEADLINE, |s| s.contains("History"));
    pty.send("copied");
    pty.wait_for("the search to narrow", CELL_DEADLINE, |s| {
        s.contains(" 1 of 2 ")
    });
    pty.send("\r");
    pty.wait_for("the cell in the editor", CELL_DEADLINE, |s| {
        // The recalled line is wider than the editor: depending on where the
        // cursor lands, its start or its end is in view.
        !s.contains("History")
            && (s.matches("print('copied text'").count() >= 2
                || s.matches("[99;77H')").count() >= 2)
    });
    pty.send(F5);
    let screen = pty.wait_for("the recalled cell to run as In [3]", CELL_DEADLINE, |s| {
        s.contains("In [3]: print('copied text'") && s.contains("│ done in")
    });
    println!("{screen}");

    // The mouse: a click on In [2] focuses the notebook and selects that cell
    // (`Y` then copies its code); a click on the editor takes the keys back.
    let row = screen
        .lines()
        .position(|l| l.starts_with("In [2]"))
        .unwrap_or_else(|| panic!("In [2] is not on screen:\n{screen}"));
    pty.send(&format!("\x1b[<0;3;{}M\x1b[<0;3;{}m", row + 1, row + 1));
    pty.send("Y");
    pty.wait_for("the copy of In [2]", CELL_DEADLINE, |s| {
        s.contains("copied In [2] (")
    });
    pty.send(&format!(
        "\x1b[<0;5;{ROWS}M\x1b[<0;5;{ROWS}m",
        ROWS = ROWS - 2
    ));
    pty.wait_for("the editor's focus after the click", CELL_DEADLINE, |s| {
        s.contains("Alt+Enter run")
    });
    pty.send("q = 2");
    pty.wait_for("typing in the editor again", CELL_DEADLINE, |s| {
        s.contains("q = 2")
    });
    // The line typed is not run: `q` asks before quitting, `y` quits.
    pty.focus_notebook();
    pty.send("q");
    pty.wait_for("the quit question", CELL_DEADLINE, |s| {
        s.contains("The editor holds 1 line: quit anyway?")
    });
    pty.quit_with("y");
}
