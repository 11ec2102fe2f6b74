//! The local pool's MCP server (`/mcp`, `aca-api.md` §8 and §13) on the wire,
//! as the service's tutorials call it with curl: the API key, the shapes of
//! `initialize`, `tools/list` and `tools/call`, environments that get their
//! session on the first command and are gone after the cooldown, and the
//! session an environment used, visible by its identifier through the REST
//! API. Real kernels in the pool's sandbox.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::Duration;

use common::{Mcp, TestPool};
use serde_json::json;
use sessionpad::protocol::ApiVersion;

fn initialize() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": "1", "method": "initialize"})
}

#[tokio::test]
async fn the_endpoint_wants_its_api_key_and_nothing_else() {
    let pool = TestPool::start().await;
    let mcp = Mcp::new(&pool);
    let key = mcp.key.clone().unwrap();
    let bearer = format!("Bearer {}", pool.pool.token().unwrap());
    for (headers, what) in [
        (vec![], "no key"),
        (vec![("x-ms-apikey", "wrong-key")], "a wrong key"),
        (
            vec![("authorization", bearer.as_str())],
            "the pool's bearer token",
        ),
        (
            vec![("x-ms-apikey", pool.pool.token().unwrap())],
            "the bearer token as key",
        ),
    ] {
        let (status, body) = mcp.post_with(&headers, &initialize()).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert_eq!(body["error"]["code"], "Unauthorized", "{what}: {body}");
    }
    let (status, body) = mcp
        .post_with(&[("x-ms-apikey", key.as_str())], &initialize())
        .await;
    assert_eq!(status, 200, "{body}");
    // The key is not a bearer token for the data plane either.
    let raw = reqwest::Client::new()
        .get(format!(
            "{}/listSessions?api-version=2025-10-02-preview",
            pool.pool.endpoint()
        ))
        .header("x-ms-apikey", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status().as_u16(), 401);
}

#[tokio::test]
async fn initialize_tools_and_other_methods_answer_as_the_service() {
    let pool = TestPool::start().await;
    let mcp = Mcp::new(&pool);
    let key = mcp.key.clone().unwrap();
    // The tutorials' initialize, without params.
    let (status, init) = mcp
        .post_with(&[("x-ms-apikey", key.as_str())], &initialize())
        .await;
    assert_eq!(status, 200, "{init}");
    assert_eq!(init["id"], "1");
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(
        init["result"]["serverInfo"]["name"],
        "Microsoft Container Apps MCP Server"
    );
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    let tools = mcp.request("tools/list", json!({})).await;
    let mut names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "launchPythonEnvironment",
            "launchShell",
            "runPythonCodeInRemoteEnvironment",
            "runShellCommandInRemoteEnvironment"
        ]
    );
    for method in ["resources/list", "prompts/list", "sessions/list", "foo"] {
        let answer = mcp.request(method, json!({})).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    // Both launch tools give an environment.
    let other = mcp.tool("launchPythonEnvironment", json!({})).await;
    assert!(other["structuredContent"]["environmentId"].is_string());
}

#[tokio::test]
async fn an_environment_gets_its_session_on_its_first_command_and_keeps_its_state() {
    let pool = TestPool::start().await;
    let mcp = Mcp::new(&pool);
    let env = mcp.launch().await;
    assert!(
        !pool.pool.registry().contains(&env),
        "a session before the first command"
    );
    let first = mcp
        .tool(
            "runPythonCodeInRemoteEnvironment",
            json!({"environmentId": env, "pythonCode": "x = 20\nopen('mcp.txt', 'w').write('hi')\nprint('ok')\nx * 2"}),
        )
        .await;
    let out = &first["structuredContent"];
    assert_eq!(first["isError"], false, "{first}");
    assert_eq!(out["stdout"], "ok\n");
    assert_eq!(out["executionResult"], "40");
    assert_eq!(out["status"], "Succeeded");
    assert_eq!(out["environmentId"], env.as_str());
    // The text content is the same JSON, for hosts that read only text.
    let text: serde_json::Value =
        serde_json::from_str(first["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, out);
    assert!(pool.pool.registry().contains(&env));
    let second = mcp
        .tool(
            "runPythonCodeInRemoteEnvironment",
            json!({"environmentId": env, "pythonCode": "print(x + 1)"}),
        )
        .await;
    assert_eq!(second["structuredContent"]["stdout"], "21\n", "{second}");
    // The environment's session, by its identifier, through the REST API.
    let client = pool.client(ApiVersion::V2025_10_02);
    let sessions = client.list_sessions().await.unwrap();
    assert!(sessions.iter().any(|s| s.identifier == env), "{sessions:?}");
    let files = client.list_files(&env, None, false).await.unwrap();
    assert!(files.iter().any(|f| f.name == "mcp.txt"), "{files:?}");
    let exec = client
        .execute(&env, "x", Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        exec.result.unwrap().text,
        "20",
        "the REST call sees the state"
    );
}

/// `print(1)` in a new environment of `pool`, through its MCP server: the
/// tool's result.
async fn print_one(pool: &TestPool) -> serde_json::Value {
    let mcp = Mcp::new(pool);
    let env = mcp.launch().await;
    mcp.tool(
        "runPythonCodeInRemoteEnvironment",
        json!({"environmentId": env, "pythonCode": "print(1)"}),
    )
    .await
}

#[tokio::test]
async fn results_say_when_sessions_are_not_isolated_and_only_then() {
    // Opted out of the sandbox: every result says so, after its JSON.
    let run = print_one(&TestPool::start_with(|o| o.sandbox = false).await).await;
    assert_eq!(run["structuredContent"]["stdout"], "1\n", "{run}");
    let notice = run["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        notice.starts_with("warning: local pool: ") && notice.contains("NOT isolated"),
        "{run}"
    );
    // Sandboxed (the pool refuses to start otherwise): the JSON alone.
    let run = print_one(&TestPool::start().await).await;
    assert_eq!(run["content"].as_array().map(Vec::len), Some(1), "{run}");
}

#[tokio::test]
async fn a_failed_cell_is_a_tool_error_with_its_traceback() {
    let pool = TestPool::start().await;
    let mcp = Mcp::new(&pool);
    let env = mcp.launch().await;
    let failed = mcp
        .tool(
            "runPythonCodeInRemoteEnvironment",
            json!({"environmentId": env, "pythonCode": "print('before')\n1/0"}),
        )
        .await;
    assert_eq!(failed["isError"], true, "{failed}");
    let out = &failed["structuredContent"];
    assert_eq!(out["status"], "Failed");
    assert_eq!(out["stdout"], "before\n");
    assert!(
        out["stderr"]
            .as_str()
            .unwrap()
            .contains("ZeroDivisionError"),
        "{out}"
    );
}

#[tokio::test]
async fn shell_commands_run_in_the_session_in_both_forms() {
    let pool = TestPool::start().await;
    let mcp = Mcp::new(&pool);
    let env = mcp.launch().await;
    let shell = |args: serde_json::Value| {
        let mut args = args;
        args["environmentId"] = json!(env);
        mcp.tool("runShellCommandInRemoteEnvironment", args)
    };
    let line =
        shell(json!({"shellCommand": "pwd; echo made > shell.txt; echo err >&2; exit 4"})).await;
    let out = &line["structuredContent"];
    assert_eq!(line["isError"], false, "{line}");
    assert_eq!(out["stdout"], "/mnt/data\n");
    assert_eq!(out["stderr"], "err\n");
    assert_eq!(out["exitCode"], 4);
    // Same session: Python sees the shell's file, the shell sees Python's.
    let py = mcp
        .tool(
            "runPythonCodeInRemoteEnvironment",
            json!({"environmentId": env, "pythonCode": "open('shell.txt').read().strip()"}),
        )
        .await;
    assert_eq!(py["structuredContent"]["executionResult"], "'made'");
    let argv = shell(json!({"execCommandAndArgs": ["printf", "[%s]", "a b", "$(id)", ";"]})).await;
    assert_eq!(argv["structuredContent"]["stdout"], "[a b][$(id)][;]");
    assert_eq!(argv["structuredContent"]["exitCode"], 0);
    let missing = shell(json!({"execCommandAndArgs": ["no-such-program-here"]})).await;
    assert_eq!(missing["structuredContent"]["exitCode"], 127, "{missing}");
    // The helper left nothing in the session's namespace.
    let names = mcp
        .tool(
            "runPythonCodeInRemoteEnvironment",
            json!({"environmentId": env, "pythonCode": "sorted(n for n in globals() if 'sessionpad' in n)"}),
        )
        .await;
    assert_eq!(names["structuredContent"]["executionResult"], "[]");
    // Both forms, or neither: invalid params.
    for args in [
        json!({"environmentId": env, "shellCommand": "ls", "execCommandAndArgs": ["ls"]}),
        json!({"environmentId": env}),
    ] {
        let answer = mcp
            .request(
                "tools/call",
                json!({"name": "runShellCommandInRemoteEnvironment", "arguments": args}),
            )
            .await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }
}

#[tokio::test]
async fn an_unknown_environment_is_not_found() {
    let pool = TestPool::start().await;
    let mcp = Mcp::new(&pool);
    for tool in [
        "runPythonCodeInRemoteEnvironment",
        "runShellCommandInRemoteEnvironment",
    ] {
        let result = mcp
            .tool(
                tool,
                json!({"environmentId": "never-launched", "pythonCode": "1", "shellCommand": "true"}),
            )
            .await;
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            result["content"][0]["text"],
            "environment ID not found: never-launched"
        );
    }
    assert!(!pool.pool.registry().contains("never-launched"));
}

#[tokio::test]
async fn an_environment_is_gone_after_the_cooldown() {
    let pool = TestPool::start_with(|o| o.cooldown = Duration::from_secs(1)).await;
    let mcp = Mcp::new(&pool);
    let used = mcp.launch().await;
    let unused = mcp.launch().await;
    let run = |env: &str| {
        mcp.tool(
            "runPythonCodeInRemoteEnvironment",
            json!({"environmentId": env, "pythonCode": "print(1)"}),
        )
    };
    assert_eq!(run(&used).await["isError"], false);
    // Wait for the pool to end the idle session (its reaper runs every second).
    // (`contains`, not `get`, which would touch it.)
    for _ in 0..300 {
        if !pool.pool.registry().contains(&used) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!pool.pool.registry().contains(&used), "never reaped");
    for env in [&used, &unused] {
        let result = run(env).await;
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            result["content"][0]["text"],
            format!("environment ID not found: {env}")
        );
    }
    assert!(
        !pool.pool.registry().contains(&used),
        "no new session for a gone environment"
    );
}

/// `sessionpad mcp`'s host over the session client: where its pool refuses the
/// connection (the background pool ended), it takes the client of the pool
/// found again and sends the command there; without a way to reconnect the
/// refusal is the error.
#[tokio::test]
async fn the_client_host_reaches_a_pool_again_after_it_has_gone() {
    use sessionpad::mcp::{Caller, ClientHost, SessionHost};
    let pool = TestPool::start().await;
    // A port nothing listens on any more.
    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", gone.local_addr().unwrap());
    drop(gone);
    let client_of = |endpoint: &str| {
        sessionpad::client::SessionClient::new(sessionpad::client::Target {
            endpoint: endpoint.to_string(),
            api_version: ApiVersion::V2025_10_02,
            token: pool.pool.token().map(str::to_string),
        })
        .unwrap()
    };
    let limit = Duration::from_secs(60);
    let caller = Caller::of_client_info("acme-agent", "0.3", None);
    let stuck = ClientHost::new(client_of(&dead), limit, limit);
    let err = stuck
        .run_python("env-1234", "print(1)", &caller)
        .await
        .unwrap_err();
    assert!(err.0.contains("cannot reach"), "{err}");
    let live = client_of(&pool.pool.endpoint());
    let host =
        ClientHost::new(client_of(&dead), limit, limit).with_reconnect(Box::new(move || {
            let live = live.clone();
            Box::pin(async move { Ok(live) })
        }));
    let exec = host
        .run_python("env-1234", "x = 5\nprint(x)", &caller)
        .await
        .unwrap();
    assert_eq!(exec.stdout, "5\n");
    // From then on the new pool: the same session, its state.
    let exec = host
        .run_python("env-1234", "print(x + 1)", &caller)
        .await
        .unwrap();
    assert_eq!(exec.stdout, "6\n");
}

/// One JSON-RPC request to the MCP endpoint of `pool` with its key, as an MCP
/// host's HTTP client named `agent` (its `User-Agent`) sends it, with the
/// `Mcp-Session-Id` the server named at `initialize` where it named one (the
/// MCP specification, 2025-03-26, "Session Management"): the answer's
/// `Mcp-Session-Id` header and its JSON.
async fn host_request(
    pool: &TestPool,
    agent: &str,
    session: Option<&str>,
    body: serde_json::Value,
) -> (Option<String>, serde_json::Value) {
    let mut req = common::http_as(agent)
        .post(pool.pool.mcp_endpoint())
        .header("x-ms-apikey", pool.pool.mcp_key().unwrap())
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(session) = session {
        req = req.header("mcp-session-id", session);
    }
    let resp = req.send().await.unwrap();
    assert!(resp.status().is_success(), "{body}: {}", resp.status());
    let named = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = resp.text().await.unwrap();
    (named, serde_json::from_str(&text).unwrap_or_default())
}

/// An MCP host's session on `pool` as its HTTP client `agent` makes it:
/// `initialize` with `params` (none: the tutorials' curl request), then
/// `notifications/initialized`, a new environment, the Python `code` and the
/// shell `command` in it. The environment's id.
async fn host_session(
    pool: &TestPool,
    agent: &str,
    params: Option<serde_json::Value>,
    code: &str,
    command: &str,
) -> String {
    let mut init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"});
    if let Some(params) = params {
        init["params"] = params;
    }
    let (named, answer) = host_request(pool, agent, None, init).await;
    assert_eq!(
        answer["result"]["serverInfo"]["name"],
        "Microsoft Container Apps MCP Server"
    );
    let session = named.as_deref();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    host_request(pool, agent, session, initialized).await;
    let call = |id: u64, name: &str, arguments: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    let (_, launched) = host_request(pool, agent, session, call(2, "launchShell", json!({}))).await;
    let env = launched["result"]["structuredContent"]["environmentId"]
        .as_str()
        .unwrap()
        .to_string();
    let python = call(
        3,
        "runPythonCodeInRemoteEnvironment",
        json!({"environmentId": env, "pythonCode": code}),
    );
    let (_, ran) = host_request(pool, agent, session, python).await;
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    let shell = call(
        4,
        "runShellCommandInRemoteEnvironment",
        json!({"environmentId": env, "shellCommand": command}),
    );
    let (_, ran) = host_request(pool, agent, session, shell).await;
    assert_eq!(ran["result"]["structuredContent"]["exitCode"], 0, "{ran}");
    env
}

/// Issue 26: what an MCP host runs through the pool's `/mcp` is in the flight
/// recorder under the name the host gave in `initialize` (`clientInfo`:
/// `acme-agent/0.3 via MCP`), not its HTTP client's: the cell with its code and
/// output, the shell command as sent with its output and exit code. A host
/// that named nothing (the tutorials' curl, `initialize` without `params`) is
/// named by its HTTP client's `User-Agent`, said to have come through MCP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_recorded_under_the_name_the_mcp_host_gave() {
    let data = tempfile::tempdir().unwrap();
    let pool =
        TestPool::recording(data.path(), sessionpad::protocol::ContainerType::PythonLts).await;
    let params = json!({"protocolVersion": "2025-03-26", "capabilities": {},
                        "clientInfo": {"name": "acme-agent", "version": "0.3"}});
    let env = host_session(
        &pool,
        "python-httpx/0.28.1",
        Some(params),
        "print('from acme')",
        "echo shell from acme",
    )
    .await;
    let curl = host_session(&pool, "curl/8.5.0", None, "print('from curl')", "true").await;
    pool.pool.ledger().unwrap().flush();
    let calls = common::log_json(data.path(), &[&env]);
    let got: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["kind"].as_str().unwrap(),
                c["code"].as_str().unwrap(),
                c["stdout"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("code", "print('from acme')", "from acme\n"),
            ("shell", "echo shell from acme", "shell from acme\n")
        ],
        "{calls:#?}"
    );
    for c in &calls {
        assert_eq!(c["client"], "acme-agent/0.3 via MCP", "{c}");
    }
    assert_eq!(calls[1]["exit_code"], 0, "{}", calls[1]);
    let calls = common::log_json(data.path(), &[&curl]);
    assert_eq!(calls.len(), 2, "{calls:#?}");
    for c in &calls {
        assert_eq!(c["client"], "curl/8.5.0 via MCP", "{c}");
    }
}

/// Issue 26: a cell whose MCP host went away before the answer (its HTTP
/// client's timeout, after 1 s of a 3 s cell) runs to its end and is recorded
/// then, with its output, marked as answered to nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cell_whose_mcp_host_went_away_is_recorded_when_it_ends() {
    let data = tempfile::tempdir().unwrap();
    let pool =
        TestPool::recording(data.path(), sessionpad::protocol::ContainerType::PythonLts).await;
    let mcp = Mcp::new(&pool);
    let env = mcp.launch().await;
    let code = "import time\nprint('before the sleep')\ntime.sleep(3)\nprint('after the sleep')";
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let gave_up = impatient
        .post(pool.pool.mcp_endpoint())
        .header("x-ms-apikey", pool.pool.mcp_key().unwrap())
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "runPythonCodeInRemoteEnvironment",
                                 "arguments": {"environmentId": env, "pythonCode": code}}}))
        .send()
        .await;
    assert!(
        gave_up.as_ref().is_err_and(reqwest::Error::is_timeout),
        "{gave_up:?}"
    );
    let mut calls = Vec::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        pool.pool.ledger().unwrap().flush();
        calls = common::log_json(data.path(), &[&env]);
        if !calls.is_empty() {
            break;
        }
    }
    assert_eq!(calls.len(), 1, "the cell was not recorded: {calls:#?}");
    let c = &calls[0];
    assert_eq!(c["code"], code);
    assert_eq!(c["stdout"], "before the sleep\nafter the sleep\n", "{c}");
    assert_eq!(c["client_gone"], true, "{c}");
}
