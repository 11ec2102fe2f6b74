//! Following an agent's session in the notebook (issue 13), end to end in a
//! pseudo-terminal: LangChain's `SessionsPythonREPLTool`, unchanged, runs a
//! short scripted sequence against `sessionpad serve` while the notebook,
//! started with `--follow ID`, shows each of its cells (marked with the
//! client) as it finishes; the person takes over and their cell runs in the
//! same session (state shared both ways); `sessionpad log --json` gives back
//! exactly the sequence the client sent. The same through the recording proxy
//! (`serve --upstream`) in front of a second `serve` standing in for Azure,
//! with another published client (azure-dynamic-sessions-code-interpreter).
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
#[path = "common/proxy.rs"]
mod proxy_support;
mod pty;

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use pty::{CELL_DEADLINE, F5, Pty};

const TOKEN: &str = "follow-pty-secret-token-1c2d";
/// The agent's client installs and starts on a loaded machine: a deadline
/// against hanging, not a measure.
const AGENT_DEADLINE: Duration = Duration::from_secs(300);

/// The LangChain agent, paced by the test: one scripted cell per line sent.
struct Agent {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl Agent {
    fn start(endpoint: &str, session: &str) -> Self {
        let python = common::client_env("langchain");
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/compat/langchain_follow_client.py");
        let mut child = Command::new(python)
            .arg(script)
            .env("ENDPOINT", endpoint)
            .env("TOKEN", TOKEN)
            .env("SESSION", session)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        Self { child, lines }
    }

    /// Runs the next scripted cell and waits until the client has its answer.
    fn step(&mut self, n: usize) {
        writeln!(self.child.stdin.as_mut().unwrap(), "go").unwrap();
        let line = self.lines.recv_timeout(AGENT_DEADLINE).unwrap();
        assert_eq!(line, format!("STEP {n} DONE"));
    }

    /// Ends the script; returns the codes it sent.
    fn finish(mut self) -> Vec<String> {
        drop(self.child.stdin.take());
        let line = self.lines.recv_timeout(AGENT_DEADLINE).unwrap();
        let sent = line.strip_prefix("SENT ").unwrap();
        assert!(self.child.wait().unwrap().success());
        serde_json::from_str(sent).unwrap()
    }
}

#[test]
fn the_notebook_follows_a_langchain_agent_and_the_person_takes_over() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (server, endpoint) = common::serve(data.path(), TOKEN);
    let _server = common::Served(server);
    let session = format!("agent-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    // The agent's client (and its venv) first: building it must not keep the
    // notebook waiting.
    let mut agent = Agent::start(&endpoint, &session);
    let mut pty = Pty::spawn_in(
        data.path(),
        work.path(),
        &[
            "--endpoint",
            &endpoint,
            "--token",
            TOKEN,
            "--follow",
            &session,
        ],
    );
    pty.wait_for("the follow to be open", CELL_DEADLINE, |s| {
        s.contains("(following)")
    });

    agent.step(1);
    // Its output may show while it runs (a placeholder cell); the recorded
    // call then fills in its code.
    let screen = pty.wait_for("the agent's first cell", CELL_DEADLINE, |s| {
        s.contains("x_agent = 6*7") && s.contains("agent says 42") && s.contains("done in")
    });
    assert!(
        screen.contains("ran by langchain-azure-dynamic-sessions/1.0.4"),
        "the cell is marked with its client:\n{screen}"
    );
    assert!(!screen.contains("its code shows when it ends"), "{screen}");
    agent.step(2);
    pty.wait_for("the agent's second cell", CELL_DEADLINE, |s| {
        s.contains("42.0")
    });

    // The person takes over: their cell runs in the agent's session.
    pty.send(&format!(
        "y_person = 5; print('person sees', x_agent + 1){F5}"
    ));
    pty.wait_for("the person's cell", CELL_DEADLINE, |s| {
        s.contains("person sees 43")
    });
    agent.step(3);
    pty.wait_for(
        "the agent seeing the person's variable",
        CELL_DEADLINE,
        |s| s.contains("agent sees 5"),
    );
    let sent = agent.finish();
    pty.quit_with(pty::CTRL_Q);

    // The ledger holds exactly what the client sent, in order, and the
    // person's cell as sessionpad's.
    let calls = common::log_json(data.path(), &[&session]);
    let by = |prefix: &str| -> Vec<String> {
        calls
            .iter()
            .filter(|c| c["kind"] == "code")
            .filter(|c| c["client"].as_str().is_some_and(|a| a.starts_with(prefix)))
            .map(|c| c["code"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(by("langchain-azure-dynamic-sessions/"), sent);
    assert_eq!(
        by("sessionpad/"),
        vec!["y_person = 5; print('person sees', x_agent + 1)".to_string()]
    );
}

#[test]
fn the_notebook_follows_another_client_through_the_recording_proxy() {
    use proxy_support::{PROXY_TOKEN, UPSTREAM_TOKEN};
    let python = common::client_env("adsci");
    let up_data = tempfile::tempdir().unwrap();
    // The proxy and the notebook share a data directory: one ledger.
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (_up, up_endpoint) = proxy_support::upstream(up_data.path(), &[]);
    let (proxy, endpoint) = proxy_support::proxy(data.path(), &up_endpoint, UPSTREAM_TOKEN);
    let session = format!("adsci-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let mut pty = Pty::spawn_in(
        data.path(),
        work.path(),
        &[
            "--endpoint",
            &endpoint,
            "--token",
            PROXY_TOKEN,
            "--follow",
            &session,
        ],
    );
    pty.wait_for("the follow to be open", CELL_DEADLINE, |s| {
        s.contains("(following)")
    });

    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/adsci_client.py");
    let out = Command::new(python)
        .arg(script)
        .env("ENDPOINT", &endpoint)
        .env("TOKEN", PROXY_TOKEN)
        .env("SESSION", &session)
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("ADSCI OK"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Its cells, as the upstream answered them, marked with its client.
    let screen = pty.wait_for("the client's cells", CELL_DEADLINE, |s| {
        s.contains("adsci 42") && s.contains("NameError") && s.contains("x,y")
    });
    assert!(
        screen.contains("ran by visualiz3d-azure-dynamic-sessions-lib/"),
        "{screen}"
    );
    // The person takes over, in the same upstream session.
    pty.send(&format!("print('person sees', y){F5}"));
    pty.wait_for("the person's cell", CELL_DEADLINE, |s| {
        s.contains("person sees 42")
    });
    pty.quit_with(pty::CTRL_Q);
    proxy.terminate();
}
