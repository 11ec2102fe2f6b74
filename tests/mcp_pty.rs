//! End to end: what an MCP client did in an environment is opened in the
//! notebook by its identifier (issue 12). A real `sessionpad serve`; an MCP
//! client launches an environment on its `/mcp` endpoint and runs Python in it;
//! then the real binary in a pseudo-terminal opens that pool with
//! `--identifier <environmentId>`, where the client's variable and file are.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
mod pty;

use std::time::Duration;

use expectrl::WaitStatus;
use pty::*;
use serde_json::json;

const TOKEN: &str = "mcp-pty-token";
const KEY: &str = "mcp-pty-key-1234";

#[test]
fn the_session_of_an_mcp_environment_opens_in_the_notebook() {
    let serve_data = tempfile::tempdir().unwrap();
    let mut cmd = common::serve_command(serve_data.path(), TOKEN, 1);
    cmd.args(["--mcp-key", KEY])
        .stderr(std::process::Stdio::null());
    let (child, endpoint) = common::spawn_serve(cmd);
    let _serve = common::Served(child);

    let mcp = common::Mcp {
        http: reqwest::Client::new(),
        url: format!("{endpoint}/mcp"),
        key: Some(KEY.into()),
    };
    let env = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let env = mcp.launch().await;
        let ran = mcp
            .tool(
                "runPythonCodeInRemoteEnvironment",
                json!({"environmentId": env, "pythonCode": "agent_answer = 6 * 7\nopen('agent-notes.txt', 'w').write('left by the agent')"}),
            )
            .await;
        assert_eq!(ran["isError"], false, "{ran}");
        env
    });

    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let args = [
        "--endpoint",
        &endpoint,
        "--token",
        TOKEN,
        "--identifier",
        &env,
    ];
    let mut pty = Pty::spawn_in(data.path(), work.path(), &args);
    pty.wait_for("the first frame", CELL_DEADLINE, |s| {
        s.contains(&env[..8]) && s.contains("ready")
    });
    pty.send("print(agent_answer, open('agent-notes.txt').read())");
    pty.send(F5);
    // Its label is the kernel's count, which the agent's cells come into
    // (issue 27 item 5): not In [1].
    let screen = pty.wait_for("the cell", CELL_DEADLINE, |s| {
        s.contains("]: print(agent_answer") && s.contains("42 left by the agent")
    });
    assert!(!screen.contains("In [1]: print(agent_answer"), "{screen}");
    println!("{screen}");
    pty.send(CTRL_Q);
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
}
