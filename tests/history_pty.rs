//! The flight recorder's history in the notebook (issue 13), end to end in a
//! pseudo-terminal against `sessionpad serve`: an agent (a plain Python HTTP
//! client with its own `User-Agent`) runs two cells before anyone follows;
//! `sessionpad --follow ID` starts with them ("before following"); the
//! sessions pane lists the session under Recorded, opens it read-only,
//! exports it as `.ipynb` (checked cell by cell), and a cell typed then runs
//! in the live session again. Started again, following adds nothing twice.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
mod pty;

use std::process::{Command, Stdio};

use pty::{CELL_DEADLINE, F5, Pty};

const TOKEN: &str = "history-pty-secret-token-77aa";
const AGENT: &str = "history-agent/1.0";

/// Runs `code` in `session` as the agent: a synchronous execution
/// (2025-10-02-preview, `aca-api.md` §4.2) from Python's standard library.
fn agent_runs(endpoint: &str, session: &str, code: &str) {
    let script = r#"
import json, sys, urllib.request
endpoint, token, session, agent, code = sys.argv[1:]
body = json.dumps({"codeInputType": "inline", "executionType": "synchronous",
                   "code": code, "timeoutInSeconds": 60}).encode()
req = urllib.request.Request(
    f"{endpoint}/executions?api-version=2025-10-02-preview&identifier={session}",
    data=body, method="POST",
    headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
             "User-Agent": agent})
with urllib.request.urlopen(req, timeout=120) as r:
    reply = json.load(r)
assert reply["status"] == "Succeeded", reply
"#;
    let status = Command::new("python3")
        .args(["-c", script, endpoint, TOKEN, session, AGENT, code])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Moves the sessions pane's selection down until its line (marked `›`)
/// names `session` below the "Recorded" title.
fn select_recorded(pty: &mut Pty, session: &str) {
    for _ in 0..40 {
        let screen = pty.contents();
        let recorded_at = screen.lines().position(|l| l.contains("Recorded ·"));
        let selected_at = screen
            .lines()
            .position(|l| l.contains('›') && l.contains(session));
        if let (Some(r), Some(s)) = (recorded_at, selected_at)
            && s > r
        {
            return;
        }
        pty::keys(pty, &["j"]);
    }
    panic!(
        "{session} never selected under Recorded:\n{}",
        pty.contents()
    );
}

#[test]
fn the_history_opens_exports_and_catches_up_on_an_agent_s_session() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (server, endpoint) = common::serve(data.path(), TOKEN);
    let _server = common::Served(server);
    let session = format!("agent-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    agent_runs(
        &endpoint,
        &session,
        "x_agent = 6*7; print('agent says', x_agent)",
    );
    agent_runs(&endpoint, &session, "print('agent again', x_agent + 1)");

    let args = [
        "--endpoint",
        endpoint.as_str(),
        "--token",
        TOKEN,
        "--follow",
        session.as_str(),
    ];
    let mut pty = Pty::spawn_in(data.path(), work.path(), &args);
    // Following starts with what the agent ran before.
    let screen = pty.wait_for("the agent's earlier cells", CELL_DEADLINE, |s| {
        s.contains("agent says 42") && s.contains("agent again 43") && s.contains("(following)")
    });
    assert!(screen.contains("before following"), "{screen}");
    assert!(screen.contains(AGENT), "marked with its client:\n{screen}");

    // The sessions pane's history: open the session read-only.
    pty.send("\x1b[13~"); // F3
    pty.wait_for("the recorded sessions", CELL_DEADLINE, |s| {
        s.contains("Recorded ·") && s.contains("live")
    });
    select_recorded(&mut pty, &session);
    pty.send("\r");
    pty.wait_for("the read-only view", CELL_DEADLINE, |s| {
        s.contains("2 cells, read-only") && s.contains("agent says 42")
    });
    // Export it where the notebook runs, under the name offered.
    pty.send("x");
    pty.wait_for("the export prompt", CELL_DEADLINE, |s| {
        s.contains("as .ipynb to:")
    });
    pty.send("\r");
    pty.wait_for("the export", CELL_DEADLINE, |s| {
        s.contains("saved recorded session")
    });
    let file = work.path().join(format!("{session}.ipynb"));
    let notebook: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let sources: Vec<String> = notebook["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| match &c["source"] {
            serde_json::Value::Array(parts) => parts
                .iter()
                .map(|p| p.as_str().unwrap())
                .collect::<String>(),
            other => other.as_str().unwrap().to_string(),
        })
        .collect();
    assert_eq!(
        sources,
        [
            "x_agent = 6*7; print('agent says', x_agent)",
            "print('agent again', x_agent + 1)"
        ]
    );

    // A cell typed now runs in the live session, which comes back.
    pty.send("\t");
    pty.send(&format!("print('person sees', x_agent - 2){F5}"));
    let screen = pty.wait_for("the person's cell", CELL_DEADLINE, |s| {
        s.contains("person sees 40")
    });
    assert!(!screen.contains("(read-only; cells run in"), "{screen}");
    assert!(
        screen.contains(&format!("{session} (following)")),
        "{screen}"
    );
    pty.quit_with(pty::CTRL_Q);

    // Following again: the agent's cells are in the notebook once.
    let mut pty = Pty::spawn_in(data.path(), work.path(), &args);
    let screen = pty.wait_for("the reopened notebook caught up", CELL_DEADLINE, |s| {
        s.contains("person sees 40") && s.contains("following · nothing earlier")
    });
    assert_eq!(
        screen.matches("agent says 42").count(),
        1,
        "once:\n{screen}"
    );
    pty.quit_with(pty::CTRL_Q);
}

/// Ends `session` as the agent: `DELETE session` (2025-10-02-preview,
/// `aca-api.md` §4.4).
fn agent_ends(endpoint: &str, session: &str) {
    let script = r#"
import sys, urllib.request
endpoint, token, session, agent = sys.argv[1:]
req = urllib.request.Request(
    f"{endpoint}/session?api-version=2025-10-02-preview&identifier={session}",
    method="DELETE", headers={"Authorization": f"Bearer {token}", "User-Agent": agent})
with urllib.request.urlopen(req, timeout=60) as r:
    assert r.status == 204, r.status
"#;
    let status = Command::new("python3")
        .args(["-c", script, endpoint, TOKEN, session, AGENT])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Issue 26: after an agent's session has ended (its `/mnt/data` gone with
/// it), the file one of its cells wrote is listed under that cell in the
/// recorded view, previewed from the ledger's copy, and saved, byte for
/// byte, into a new folder the person names (asked before it is created).
#[test]
fn a_file_an_agent_left_is_previewed_and_saved_after_its_session_ended() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (server, endpoint) = common::serve(data.path(), TOKEN);
    let _server = common::Served(server);
    let session = format!("agent-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let report = "region,total\nnorth,3\nsouth,5\n";
    agent_runs(
        &endpoint,
        &session,
        &format!("open('/mnt/data/report.csv', 'w').write({report:?})"),
    );
    agent_ends(&endpoint, &session);

    let args = ["--endpoint", endpoint.as_str(), "--token", TOKEN];
    let mut pty = Pty::spawn_in(data.path(), work.path(), &args);
    pty.send("\x1b[13~"); // F3
    pty.wait_for("the recorded sessions", CELL_DEADLINE, |s| {
        s.contains("Recorded ·") && s.contains(&session)
    });
    select_recorded(&mut pty, &session);
    pty.send("\r");
    pty.wait_for("the read-only view", CELL_DEADLINE, |s| {
        s.contains("read-only") && s.contains("1 file(s) changed") && s.contains(AGENT)
    });
    pty.send("F");
    pty.wait_for("the cell's files", CELL_DEADLINE, |s| {
        s.contains("Files cell 1 changed") && s.contains("added    /mnt/data/report.csv")
    });
    pty.send("\r");
    pty.wait_for("the preview from the ledger", CELL_DEADLINE, |s| {
        s.contains("north") && s.contains("south")
    });
    pty.send("s");
    pty.wait_for("the folder prompt", CELL_DEADLINE, |s| {
        s.contains("Save report.csv into folder:")
    });
    pty.send(&"\x7f".repeat(200));
    let folder = work.path().join("kept/from the agent");
    pty.send(&folder.display().to_string());
    pty.send("\r");
    pty.wait_for("the question", CELL_DEADLINE, |s| {
        s.contains("Create folder")
    });
    assert!(!folder.exists(), "nothing is created before the answer");
    pty.send("y");
    pty.wait_for("the save", CELL_DEADLINE, |s| s.contains("sha256 checked"));
    assert_eq!(
        std::fs::read_to_string(folder.join("report.csv")).unwrap(),
        report
    );
    // Esc closes the preview (the list stays); waited for, so the next key
    // is not read as part of an escape sequence.
    pty.send("\x1b");
    pty.wait_for("the preview closed", CELL_DEADLINE, |s| {
        s.contains("Enter preview · d diff · s save · Esc close")
    });
    pty.quit_with(pty::CTRL_Q);
}
