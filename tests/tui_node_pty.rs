//! End to end, in a pseudo-terminal: the notebook on a NodeLTS pool (issue
//! 12), the local pool started with `--container-type node`. A cell
//! is JavaScript: state stays between cells, `console.log` is its output, the
//! last expression's value is shown as JavaScript shows it (not as a Python
//! literal), an error shows its stack, and the saved notebook is a JavaScript
//! notebook.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod pty;

use pty::{CELL_DEADLINE, F5, Pty, has_line};

#[test]
fn javascript_cells_keep_state_show_values_and_errors() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &["--container-type", "node"]);
    let screen = pty.wait_local_ready();
    assert!(screen.contains("Type JavaScript here"), "{screen}");
    assert!(screen.contains(" local javascript "), "{screen}");

    pty.send(&format!(
        "const seen = {{a: 1, b: null}}; console.log('logged', 2 + 3){F5}"
    ));
    pty.wait_for("console.log", CELL_DEADLINE, |s| has_line(s, "logged 5"));
    // State stays; the value is JavaScript's own text, not a Python literal.
    pty.send(&format!("seen{F5}"));
    let screen = pty.wait_for("the value", CELL_DEADLINE, |s| s.contains("Out[2]:"));
    assert!(
        screen.contains("{ a: 1, b: null }"),
        "the value as Node.js shows it:\n{screen}"
    );
    assert!(!screen.contains("None"), "{screen}");
    // An error, with its stack.
    pty.send(&format!("undefinedThing.x{F5}"));
    let screen = pty.wait_for("the error", CELL_DEADLINE, |s| s.contains("failed in"));
    assert!(screen.contains("ReferenceError"), "{screen}");

    pty.quit_with(pty::CTRL_Q);
    let doc = pty::saved_notebook(data.path());
    assert_eq!(doc["metadata"]["kernelspec"]["name"], "javascript", "{doc}");
    assert_eq!(doc["metadata"]["language_info"]["file_extension"], ".js");
}
