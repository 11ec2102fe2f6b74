//! End to end, in a pseudo-terminal: the notebook on a Shell pool (issue 12),
//! the embedded local pool started with `--container-type shell`. A cell is a
//! shell command: its exit code shows with its duration (non-zero in the
//! error colour), files it writes stay for the next command, Alt+I gives it
//! standard input, the files pane lists what it made, and the saved notebook
//! says it is a Bash notebook.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod pty;

use std::time::Duration;

use expectrl::WaitStatus;
use pty::{CELL_DEADLINE, F5, POOL_DEADLINE, Pty, has_line, shows_local};

const ALT_I: &str = "\x1bi";

#[test]
fn shell_cells_show_exit_codes_keep_files_and_take_stdin() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &["--container-type", "shell"]);
    let screen = pty.wait_for("the pool to be ready", POOL_DEADLINE, |s| {
        assert!(!s.contains("pool failed"), "the pool failed; screen:\n{s}");
        shows_local(s) && !s.contains("starting pool")
    });
    assert!(
        screen.contains("Type shell commands here"),
        "the editor says what it takes:\n{screen}"
    );

    // A command's output and its exit code.
    pty.send(&format!("echo made > note.txt; cat note.txt{F5}"));
    pty.wait_for("the first command", CELL_DEADLINE, |s| {
        has_line(s, "made") && s.contains("exit 0 in")
    });
    // Files persist between commands (each runs in a new shell).
    pty.send(&format!("cat note.txt | wc -c{F5}"));
    pty.wait_for("the file read back", CELL_DEADLINE, |s| has_line(s, "5"));
    // A failing command: its stderr and its exit code, no traceback made up.
    pty.send(&format!("ls no-such-file{F5}"));
    let screen = pty.wait_for("the failure", CELL_DEADLINE, |s| s.contains("exit 2 in"));
    assert!(screen.contains("No such file"), "{screen}");
    assert!(!screen.contains("SessionError"), "{screen}");
    // Standard input, typed on the prompt Alt+I opens.
    pty.send("tr a-z A-Z");
    pty.send(ALT_I);
    pty.wait_for("the stdin prompt", CELL_DEADLINE, |s| {
        s.contains("Standard input")
    });
    pty.send("abc\\nxyz\r");
    pty.wait_for("the command's output", CELL_DEADLINE, |s| {
        has_line(s, "ABC") && has_line(s, "XYZ")
    });
    // The files pane lists what the commands made.
    pty.send("\x1bOQ"); // F2
    pty.wait_for("the files pane", CELL_DEADLINE, |s| s.contains("note.txt"));

    pty.send(pty::CTRL_Q);
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "exit status {status:?}; screen:\n{}",
        pty.contents()
    );
    // The saved notebook is a Bash notebook with the commands' exit codes and
    // the stdin the last one had.
    let saved = walk(data.path())
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "ipynb"))
        .expect("a saved notebook");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(doc["metadata"]["kernelspec"]["name"], "bash", "{doc}");
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells[2]["metadata"]["sessionpad"]["exit_code"], 2);
    assert_eq!(cells[3]["metadata"]["sessionpad"]["stdin"], "abc\nxyz\n");
}

/// Every file below `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}
