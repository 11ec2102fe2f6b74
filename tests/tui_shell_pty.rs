//! End to end, in a pseudo-terminal: the notebook on a Shell pool (issue 12),
//! the local pool started with `--container-type shell`. A cell is a
//! shell command: its exit code shows with its duration (non-zero in the
//! error colour), files it writes stay for the next command, Alt+I gives it
//! standard input, the files pane lists what it made, and the saved notebook
//! says it is a Bash notebook.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
mod pty;

use pty::{CELL_DEADLINE, F5, Pty, has_line};

const ALT_I: &str = "\x1bi";

#[test]
fn shell_cells_show_exit_codes_keep_files_and_take_stdin() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut pty = Pty::spawn_in(data.path(), work.path(), &["--container-type", "shell"]);
    let screen = pty.wait_local_ready();
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

    pty.quit_with(pty::CTRL_Q);
    // The saved notebook is a Bash notebook with the commands' exit codes and
    // the stdin the last one had.
    let doc = pty::saved_notebook(data.path());
    assert_eq!(doc["metadata"]["kernelspec"]["name"], "bash", "{doc}");
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells[2]["metadata"]["sessionpad"]["exit_code"], 2);
    assert_eq!(cells[3]["metadata"]["sessionpad"]["stdin"], "abc\nxyz\n");
}

/// Pointed at a `sessionpad serve --container-type shell` with no
/// `--container-type` of its own, the notebook learns from the pool that it
/// runs shell commands (the pool's brief metadata) and runs them.
#[test]
fn the_notebook_learns_that_a_serve_runs_shell_commands() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut cmd = common::serve_command(data.path(), "tok-learn", 1);
    cmd.args(["--container-type", "shell"])
        .stderr(std::process::Stdio::null());
    let (mut serve, endpoint) = common::spawn_serve(cmd);
    let mut pty = Pty::spawn_in(
        data.path(),
        work.path(),
        &["--endpoint", &endpoint, "--token", "tok-learn"],
    );
    let screen = pty.wait_for("the editor", CELL_DEADLINE, |s| {
        s.contains("Type shell commands here")
    });
    assert!(screen.contains(" shell │ "), "{screen}");
    pty.send(&format!("echo $((6*7)); exit 4{F5}"));
    pty.wait_for("the command", CELL_DEADLINE, |s| {
        has_line(s, "42") && s.contains("exit 4 in")
    });
    pty.quit_with(pty::CTRL_Q);
    // Killed (SIGKILL), this root serve left its sessions' tmpfs mounts and
    // cgroups behind at the end of every CI run.
    let pid = serve.id();
    common::end_gracefully(&mut serve);
    common::assert_pool_left_nothing(pid);
}

/// Against `serve --azure-limits --container-type shell` (issue 28): a command
/// printing 10 KB gets 4,096 bytes and exit 0, and the cell says the output is
/// probably cut (the service cuts Shell output there); `pool info` lists the
/// emulated limits with their sources, in text and in `--json`.
#[test]
fn a_shell_output_the_service_cut_is_flagged() {
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut cmd = common::serve_command(data.path(), "tok-cut", 1);
    cmd.args(["--container-type", "shell", "--azure-limits"])
        .stderr(std::process::Stdio::null());
    let (mut serve, endpoint) = common::spawn_serve(cmd);
    let target = ["--endpoint", endpoint.as_str(), "--token", "tok-cut"];
    let info = common::sessionpad_ok(data.path(), &[&["pool", "info"][..], &target[..]].concat());
    assert!(
        info.contains("azure limit: Shell stdout/stderr: cut at 4096 bytes each"),
        "{info}"
    );
    assert!(info.contains("source: "), "{info}");
    let json: serde_json::Value = serde_json::from_str(&common::sessionpad_ok(
        data.path(),
        &[&["pool", "info", "--json"][..], &target[..]].concat(),
    ))
    .unwrap();
    assert_eq!(
        json["service_limits"].as_array().unwrap().len(),
        5,
        "{json}"
    );

    let mut pty = Pty::spawn_in(data.path(), work.path(), &target);
    pty.wait_for("the editor", CELL_DEADLINE, |s| {
        s.contains("Type shell commands here")
    });
    // A short output is not flagged.
    pty.send(&format!("echo short{F5}"));
    let screen = pty.wait_for("the short command", CELL_DEADLINE, |s| {
        has_line(s, "short") && s.contains("exit 0 in")
    });
    assert!(!screen.contains("probably cut"), "{screen}");
    pty.send(&format!("head -c 10240 /dev/zero | tr '\\0' x{F5}"));
    let screen = pty.wait_for("the cut output flagged", CELL_DEADLINE, |s| {
        s.contains("probably cut")
    });
    assert!(
        screen.contains("stdout is 4,096 bytes: the service cuts Shell output"),
        "{screen}"
    );
    assert!(screen.contains("--output-streams-max-length N"), "{screen}");
    assert!(
        screen.contains("press m (runs it again with outputStreamsMaxLength 40,960"),
        "{screen}"
    );
    assert!(screen.contains("exit 0 in"), "{screen}");
    // `m` on the cut cell (Esc selects the newest) runs it again asking for
    // ten times as much: the pool then sends the whole 10 KB.
    pty.send("\x1b");
    pty.wait_for("the notebook focused", CELL_DEADLINE, |s| {
        s.contains("back to the cell")
    });
    pty.send("m");
    pty.wait_for("the cell run again", CELL_DEADLINE, |s| {
        s.contains("running In [2] again with outputStreamsMaxLength 40,960")
    });
    // The editor is In [4] once the third cell is queued; its output fills
    // the screen, ending in its exit line, with no cut note under it.
    let screen = pty.wait_for("the third cell's answer", CELL_DEADLINE, |s| {
        let above_editor = s
            .lines()
            .take_while(|l| !l.contains("╭ In [4]"))
            .filter(|l| !l.trim().is_empty())
            .last();
        s.contains("╭ In [4]") && above_editor.is_some_and(|l| l.contains("exit 0 in"))
    });
    assert!(!screen.contains("probably cut"), "{screen}");
    pty.quit_with(pty::CTRL_Q);
    let doc = pty::saved_notebook(data.path());
    let cells = doc["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 3, "{doc:#}");
    let third = &cells[2];
    assert_eq!(
        third["metadata"]["sessionpad"]["output_streams_max_length"], 40960,
        "{third:#}"
    );
    let text: String = third["outputs"][0]["text"]
        .as_array()
        .expect("the stdout stream")
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert_eq!(text.len(), 10240, "the whole output, not the cut one");
    let pid = serve.id();
    common::end_gracefully(&mut serve);
    common::assert_pool_left_nothing(pid);
}
