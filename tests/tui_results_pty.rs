//! Results as a Jupyter user expects them (issue 11, points 1–3), read off the
//! screen of the real binary in a pseudo-terminal on the local pool:
//! values as Python shows them, every figure next to a value, a DataFrame under
//! its `Out[n]:` with its columns in line; then the saved notebook, exported, holds
//! the same.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::time::Duration;

mod common;
mod nbformat;
mod pty;

use pty::*;

/// Rows drawn in half-blocks (an image on a terminal without a graphics
/// protocol) right above the line that starts with `out` (a cell's figures
/// come before its `Out[n]:`); 0 when that line is not on screen.
fn figure_above(screen: &str, out: &str) -> usize {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(at) = lines.iter().position(|l| l.starts_with(out)) else {
        return 0;
    };
    lines[..at]
        .iter()
        .rev()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| l.contains('▀') || l.contains('▄'))
        .count()
}

#[test]
fn results_read_as_python_with_their_figures_and_tables_in_line() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &[]);
    pty.wait_local_ready();

    // 1. Python's repr, not JSON.
    pty.send(&format!("{{'a': 1, 'b': None}}{F5}"));
    pty.wait_for("the dict as Python shows it", CELL_DEADLINE, |s| {
        assert!(!s.contains(r#"{"a":1"#), "shown as JSON:\n{s}");
        has_line(s, "Out[1]: {'a': 1, 'b': None}")
    });
    pty.send(&format!("(1, 2.5, 'x'){F5}"));
    pty.wait_for("the tuple as Python shows it", CELL_DEADLINE, |s| {
        has_line(s, "Out[2]: (1, 2.5, 'x')")
    });

    // 3. A DataFrame starts on the line under `Out[3]:`, its header in line with
    // its rows.
    pty.send(&format!(
        "import pandas as pd; pd.DataFrame({{'a': [1, 2], 'b': [3, 4]}}){F5}"
    ));
    let screen = pty.wait_for("the DataFrame under Out[3]:", PLOT_DEADLINE, |s| {
        has_line(s, "Out[3]:") && has_line(s, "   a  b")
    });
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let at = lines
        .iter()
        .position(|l| *l == "Out[3]:")
        .expect("Out[3]: on a line of its own");
    assert_eq!(
        &lines[at..at + 4],
        &["Out[3]:", "   a  b", "0  1  3", "1  2  4"],
        "the table, in line:\n{screen}"
    );
    println!("{screen}");

    // 2. A figure left open and a value: both are shown.
    pty.send(&format!(
        "import matplotlib.pyplot as plt; plt.plot([1, 4, 9]){F5}"
    ));
    let screen = pty.wait_for("the value and the figure", PLOT_DEADLINE, |s| {
        assert!(
            !s.contains("[image not shown"),
            "the plot was not drawn:\n{s}"
        );
        figure_above(s, "Out[4]: [<matplotlib.lines.Line2D") >= 5
    });
    println!("{screen}");
    // A figure shown, then a value.
    pty.send(&format!("plt.plot([1, 2]); plt.show(); 5{F5}"));
    let screen = pty.wait_for("the figure and Out[5]: 5", PLOT_DEADLINE, |s| {
        has_line(s, "Out[5]: 5") && figure_above(s, "Out[5]: 5") >= 5
    });
    println!("{screen}");

    pty.focus_notebook();
    pty.send("q");
    pty.wait_exit(Duration::from_secs(30));

    // The saved notebook, exported: text/plain is the Python form, and every
    // figure is a display_data beside its value.
    let exported = work.path().join("results.ipynb");
    common::stdout_ok(
        common::sessionpad_command(data.path())
            .args(["export", "-o"])
            .arg(&exported)
            .current_dir(work.path()),
    );
    nbformat::validate(&exported);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&exported).expect("read the export"))
            .expect("JSON");
    let cells = doc["cells"].as_array().expect("cells");
    let plain = |cell: usize| -> String {
        let outputs = cells[cell]["outputs"].as_array().expect("outputs");
        let result = outputs
            .iter()
            .find(|o| o["output_type"] == "execute_result")
            .unwrap_or_else(|| panic!("cell {cell} has a result: {outputs:?}"));
        match &result["data"]["text/plain"] {
            serde_json::Value::Array(parts) => parts.iter().filter_map(|p| p.as_str()).collect(),
            other => other.as_str().unwrap_or_default().to_string(),
        }
    };
    let images = |cell: usize| {
        cells[cell]["outputs"]
            .as_array()
            .expect("outputs")
            .iter()
            .filter(|o| o["output_type"] == "display_data")
            .count()
    };
    assert_eq!(plain(0), "{'a': 1, 'b': None}");
    assert_eq!(
        cells[0]["outputs"][0]["data"]["application/json"],
        serde_json::json!({"a": 1, "b": null})
    );
    assert_eq!(plain(1), "(1, 2.5, 'x')");
    assert_eq!(plain(2), "   a  b\n0  1  3\n1  2  4");
    assert!(plain(3).starts_with("[<matplotlib.lines.Line2D"));
    assert_eq!(images(3), 1, "the figure of cell 4 is saved");
    assert_eq!(plain(4), "5");
    assert_eq!(images(4), 1, "the figure of cell 5 is saved");
}
