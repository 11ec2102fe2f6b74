//! The flight recorder's ledger end to end: real clients (reqwest, with their
//! own User-Agent) drive a real local pool over HTTP, and `sessionpad log
//! --json` gives back exactly the calls they made; no token or Authorization
//! header reaches the database file; `kill -9` of `serve` leaves a database
//! that opens and holds the calls it had recorded.

#![allow(clippy::unwrap_used)]

mod common;
mod nbformat;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use sessionpad::ledger;
use sessionpad::protocol::ContainerType;

const TOKEN: &str = "ledger-test-secret-token-4f1c9e";
const AGENT: &str = "ledger-test-agent/1.0 (reqwest)";
const V: &str = "2025-10-02-preview";

fn http() -> reqwest::Client {
    common::http_as(AGENT)
}

/// `sessionpad log ARGS` over the ledger of `data_dir`.
fn log(data_dir: &Path, args: &[&str]) -> std::process::Output {
    common::sessionpad_command(data_dir)
        .arg("log")
        .args(args)
        .output()
        .unwrap()
}

/// The `host:port` of a pool management endpoint (`http://127.0.0.1:8341`).
fn endpoint_addr(endpoint: &str) -> &str {
    endpoint.trim_start_matches("http://").trim_end_matches('/')
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn terminate(child: &mut std::process::Child) {
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGTERM);
    }
    assert!(child.wait().unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_records_each_call_a_client_makes_and_log_gives_them_back() {
    let data = tempfile::tempdir().unwrap();
    let (mut child, endpoint) = common::serve(data.path(), TOKEN);
    let http = http();
    let id = common::identifier();
    let q = |path: &str| format!("{endpoint}/{path}?api-version={V}&identifier={id}");
    // 1. Code whose value and output are recorded.
    let r = http
        .post(q("executions"))
        .bearer_auth(TOKEN)
        .json(
            &json!({"codeInputType": "inline", "executionType": "synchronous",
                      "code": "x = 6 * 7\nprint('hello', x)\nx"}),
        )
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    // 2. Code that fails.
    let r = http
        .post(q("executions"))
        .bearer_auth(TOKEN)
        .json(
            &json!({"codeInputType": "inline", "executionType": "synchronous",
                      "code": "1/0"}),
        )
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    // 3. An upload, 4. its download, 5. its delete.
    let content = b"name,value\na,1\nb,2\n".to_vec();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(content.clone()).file_name("notes.csv"),
    );
    let r = http
        .post(q("files"))
        .bearer_auth(TOKEN)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.text().await.unwrap());
    let got = http
        .get(q("files/notes.csv/content"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(got.as_ref(), content.as_slice());
    let r = http
        .delete(q("files/notes.csv"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success());
    // The orderly end writes every answered call.
    terminate(&mut child);

    let mut calls = common::log_json(data.path(), &[&id]);
    // The pool's orderly end ended the session, which is recorded too.
    let end = calls.pop().unwrap();
    assert_eq!(end["kind"], "end", "{end}");
    assert_eq!(end["status"], "the pool stopped", "{end}");
    assert!(end.get("client").is_none(), "{end}");
    let kinds: Vec<&str> = calls.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["code", "code", "upload", "download", "delete"],
        "{calls:#?}"
    );
    for c in &calls {
        assert_eq!(c["client"], AGENT, "{c}");
        assert_eq!(c["identifier"], id.as_str());
        let pool = c["pool"].as_str().unwrap();
        assert_eq!(
            pool,
            format!("local/PythonLTS/{}", endpoint_addr(&endpoint))
        );
    }
    assert_eq!(calls[0]["code"], "x = 6 * 7\nprint('hello', x)\nx");
    assert_eq!(calls[0]["stdout"], "hello 42\n");
    assert_eq!(calls[0]["status"], "Succeeded");
    assert_eq!(calls[0]["result"]["json"], 42);
    assert_eq!(calls[1]["code"], "1/0");
    assert_eq!(calls[1]["status"], "Failed");
    assert!(
        calls[1]["stderr"]
            .as_str()
            .unwrap()
            .contains("ZeroDivisionError")
    );
    let hash = sessionpad::protocol::record::sha256_hex(&content);
    for c in &calls[2..4] {
        assert_eq!(c["file"]["name"], "notes.csv", "{c}");
        assert_eq!(c["file"]["size"], content.len());
        assert_eq!(c["file"]["sha256"], hash.as_str());
    }
    assert_eq!(
        calls[4]["file"],
        json!({"name": "notes.csv", "size": null, "sha256": null})
    );

    // The text form names the client and shows the code and outputs.
    let out = log(data.path(), &[&id]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(AGENT), "{text}");
    assert!(text.contains("In     x = 6 * 7"), "{text}");
    assert!(text.contains("Out    hello 42"), "{text}");
    // Every call of every session: this one's under its heading (its end,
    // when the pool stopped, included).
    let out = log(data.path(), &["--all"]);
    let all = String::from_utf8(out.stdout).unwrap();
    let heading = format!(
        "=== {id} on local/PythonLTS/{} (6 call(s))",
        endpoint_addr(&endpoint)
    );
    assert!(all.contains(&heading), "{all}");
    // Without an identifier (issue 26): the recorded sessions, not every
    // call: this one's line, and none of its code or output.
    let out = log(data.path(), &[]);
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(summary.contains(&id), "{summary}");
    assert!(!summary.contains("hello 42"), "{summary}");
    assert_eq!(summary.lines().count(), 1, "{summary}");
    // The recorded sessions: this one, its two cells among six calls (five and
    // its end).
    let out = log(data.path(), &["--json", "--sessions"]);
    let listed: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let s = &listed[0];
    assert_eq!(
        (
            &s["identifier"],
            &s["cells"],
            &s["calls"],
            &s["client"],
            &s["pool"]
        ),
        (
            &json!(id),
            &json!(2),
            &json!(6),
            &json!(AGENT),
            &json!(format!("local/PythonLTS/{}", endpoint_addr(&endpoint)))
        ),
        "{s}"
    );
    // Exported as a notebook: the agent's two cells with their outputs, valid
    // to the real nbformat package.
    let nb = data.path().join("agent.ipynb");
    common::stdout_ok(
        common::sessionpad_command(data.path())
            .args(["export", "--recorded", &id, "-o"])
            .arg(&nb),
    );
    let summary = nbformat::validate(&nb);
    let exported: Vec<_> = summary["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["source"].clone(), c["outputs"].clone()))
        .collect();
    assert_eq!(
        exported,
        [
            (
                json!("x = 6 * 7\nprint('hello', x)\nx"),
                json!(["stream", "execute_result"])
            ),
            (json!("1/0"), json!(["error"])),
        ]
    );

    // No token, no Authorization header, anywhere in the files.
    let bytes = common::ledger_bytes(data.path());
    assert!(
        contains(&bytes, b"hello 42"),
        "the grep looks at the right files"
    );
    assert!(
        !contains(&bytes, TOKEN.as_bytes()),
        "the token reached the ledger"
    );
    for needle in [&b"Authorization"[..], b"authorization", b"Bearer"] {
        assert!(
            !contains(&bytes, needle),
            "{} reached the ledger",
            String::from_utf8_lossy(needle)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_pool_records_commands_with_stdin_and_exit_code() {
    let data = tempfile::tempdir().unwrap();
    let pool = common::TestPool::recording(data.path(), ContainerType::Shell).await;
    let raw = common::Raw::new(&pool);
    let id = common::identifier();
    let (status, _, body) = raw
        .post_json(
            &format!("/executions?api-version={V}&identifier={id}"),
            json!({"shellCommand": "read a; echo got $a; echo oops >&2; exit 3", "stdin": "milk\n"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    pool.pool.ledger().unwrap().flush();
    let calls = common::log_json(data.path(), &[&id]);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    let c = &calls[0];
    assert_eq!(c["kind"], "shell");
    assert_eq!(c["code"], "read a; echo got $a; echo oops >&2; exit 3");
    assert_eq!(c["stdin"], "milk\n");
    assert_eq!(c["stdout"], "got milk\n");
    assert_eq!(c["stderr"], "oops\n");
    assert_eq!(c["exit_code"], 3);
    // reqwest sends no User-Agent unless told: none is recorded, none made up.
    assert!(c.get("client").is_none(), "{c}");
}

#[test]
fn kill_9_of_serve_leaves_a_ledger_that_opens_with_the_recorded_calls() {
    let data = tempfile::tempdir().unwrap();
    let (mut child, endpoint) = common::serve(data.path(), TOKEN);
    let id = common::identifier();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let post = |code: String| {
        let url = format!(
            "{endpoint}/executions?api-version={V}&identifier={id}-{}",
            code.len() % 4
        );
        async move {
            http()
                .post(url)
                .bearer_auth(TOKEN)
                .json(&json!({"codeInputType": "inline", "executionType": "synchronous", "code": code}))
                .send()
                .await
        }
    };
    // Four clients run 3 cells each, to the end.
    let done: Vec<String> = rt.block_on(async {
        let mut tasks = Vec::new();
        for client in 0..4 {
            for cell in 0..3 {
                let code = format!("print('client {client} cell {cell}')");
                let fut = post(code.clone());
                tasks.push(tokio::spawn(async move {
                    let r = fut.await.unwrap();
                    assert!(r.status().is_success());
                    code
                }));
            }
        }
        let mut done = Vec::new();
        for t in tasks {
            done.push(t.await.unwrap());
        }
        done
    });
    // Wait (bounded) until the writer has committed them: the ledger is read
    // live, as `log` reads it while the pool runs.
    let path = data.path().join(ledger::FILE_NAME);
    let recorded = |conn: &rusqlite::Connection| -> Vec<String> {
        ledger::read::entries(conn, &ledger::Query::default())
            .unwrap()
            .into_iter()
            .filter_map(|e| e.code)
            .collect()
    };
    let mut seen = Vec::new();
    for _ in 0..300 {
        let conn = ledger::schema::open_existing(&path).unwrap().unwrap();
        seen = recorded(&conn);
        if done.iter().all(|c| seen.contains(c)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(done.iter().all(|c| seen.contains(c)), "{seen:?}");
    // Now 20 clients are in the middle of cells when the pool is killed.
    let in_flight: Vec<_> = (0..20)
        .map(|i| rt.spawn(post(format!("import time\ntime.sleep(30)\nprint({i})"))))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    for t in in_flight {
        let answered = rt.block_on(t).unwrap();
        assert!(answered.is_err() || !answered.unwrap().status().is_success());
    }
    let conn = ledger::open(&path).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let after = recorded(&conn);
    for c in &done {
        assert!(after.contains(c), "{c} lost: {after:?}");
    }
    assert_eq!(
        after.len(),
        done.len(),
        "no call in flight was recorded: {after:?}"
    );
    // What the killed pool left (its sessions' tmpfs mounts when root, session
    // and runtime folders, cgroups) goes as the next pool would sweep it, so
    // the temporary folder leaves nothing mounted behind.
    sessionpad::pool::housekeeping::sweep(
        &data.path().join("pool-sessions"),
        &std::env::temp_dir(),
    );
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let root = data.path().to_string_lossy().into_owned();
    assert!(
        !mounts.lines().any(|l| l.contains(root.as_str())),
        "left mounted: {mounts}"
    );
}

#[test]
fn serve_no_ledger_records_nothing() {
    let data = tempfile::tempdir().unwrap();
    let mut cmd = common::serve_command(data.path(), TOKEN, 1);
    cmd.arg("--no-ledger").stderr(std::process::Stdio::null());
    let (mut child, endpoint) = common::spawn_serve(cmd);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let id = common::identifier();
    rt.block_on(async {
        let r = http()
            .post(format!(
                "{endpoint}/executions?api-version={V}&identifier={id}"
            ))
            .bearer_auth(TOKEN)
            .json(&json!({"codeInputType": "inline", "executionType": "synchronous", "code": "1"}))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    });
    terminate(&mut child);
    assert!(!data.path().join(ledger::FILE_NAME).exists());
    let out = log(data.path(), &[&id]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing recorded yet"));
}

#[test]
fn log_reports_a_damaged_ledger_and_keeps_it() {
    let data = tempfile::tempdir().unwrap();
    let path = data.path().join(ledger::FILE_NAME);
    let junk = b"not a database, the user's bytes".repeat(300);
    std::fs::write(&path, &junk).unwrap();
    let out = log(data.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a readable SQLite database"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), junk);
}

/// `sessionpad replay ID` runs an agent's recorded cells again, in order, in a
/// fresh session of the pool, compares each outcome with the recording, and
/// the replay is itself recorded (by the pool, with sessionpad's User-Agent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_runs_a_recorded_session_again_in_a_fresh_session() {
    let data = tempfile::tempdir().unwrap();
    let (mut child, endpoint) = common::serve(data.path(), TOKEN);
    let id = common::identifier();
    let url = format!("{endpoint}/executions?api-version={V}&identifier={id}");
    for code in [
        "x = 20",
        "print(x + 22)",
        "import uuid\nprint(uuid.uuid4())",
        "1/0",
    ] {
        let r = http()
            .post(&url)
            .bearer_auth(TOKEN)
            .json(&json!({"codeInputType": "inline", "executionType": "synchronous", "code": code}))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }
    // Wait (bounded) until the writer has the four cells.
    for _ in 0..200 {
        if common::log_json(data.path(), &[&id]).len() == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let replay = |args: &[&str]| {
        common::sessionpad_command(data.path())
            .args(["--endpoint", &endpoint, "--token", TOKEN])
            .args(args)
            .output()
            .unwrap()
    };
    let out = replay(&["--json", "replay", &id]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fresh = report["identifier"].as_str().unwrap().to_string();
    assert!(fresh.starts_with("replay-") && fresh != id, "{report}");
    let cells = report["cells"].as_array().unwrap();
    let got: Vec<_> = cells
        .iter()
        .map(|c| {
            (
                c["status"].clone(),
                c["same_status"].clone(),
                c["same_stdout"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (json!("Succeeded"), json!(true), json!(true)),
            // State carried from the first cell: the same 42.
            (json!("Succeeded"), json!(true), json!(true)),
            // A new random UUID: the same outcome, other output.
            (json!("Succeeded"), json!(true), json!(false)),
            (json!("Failed"), json!(true), json!(true)),
        ],
        "{report}"
    );
    assert_eq!(cells[1]["stdout"], "42\n");
    // The pool recorded the replay under the fresh identifier, as sessionpad.
    let replayed = common::log_json(data.path(), &[&fresh]);
    assert_eq!(replayed.len(), 4, "{replayed:?}");
    assert!(
        replayed[0]["client"]
            .as_str()
            .unwrap()
            .starts_with("sessionpad/"),
        "{}",
        replayed[0]
    );
    // A session with nothing recorded: a clear error, exit 2.
    let out = replay(&["replay", "no-such-session"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no executions recorded"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    terminate(&mut child);
}

/// Issue 26: an agent's HTTP client gives up (its 1 s timeout) while its cell
/// still runs; the kernel finishes the cell, and the ledger holds the
/// execution, its output and the file it wrote, marked as answered to a
/// client that had gone. The same for a Shell pool's command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_execution_whose_client_went_away_is_recorded_when_it_ends() {
    let data = tempfile::tempdir().unwrap();
    let (mut child, endpoint) = common::serve(data.path(), TOKEN);
    let impatient = reqwest::Client::builder()
        .user_agent(AGENT)
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let id = common::identifier();
    let q = |path: &str| format!("{endpoint}/{path}?api-version={V}&identifier={id}");
    let code = "import time\nopen('/mnt/data/late.txt', 'w').write('written')\nprint('before the sleep', flush=True)\ntime.sleep(3)\nprint('after the sleep')";
    let gave_up = impatient
        .post(q("executions"))
        .bearer_auth(TOKEN)
        .json(&json!({"codeInputType": "inline", "executionType": "synchronous", "code": code}))
        .send()
        .await;
    assert!(
        gave_up.as_ref().is_err_and(reqwest::Error::is_timeout),
        "the client should have timed out: {gave_up:?}"
    );
    // The cell runs on after its client left: the file it writes appears
    // (listed by a patient client).
    let mut listed = Value::Null;
    for _ in 0..100 {
        listed = http()
            .get(q("files"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if listed.to_string().contains("late.txt") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(listed.to_string().contains("late.txt"), "{listed}");
    // The kernel ends the cell about 3 s after it began; the recorder writes
    // it then, without anyone waiting for the reply.
    let mut calls = Vec::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        calls = common::log_json(data.path(), &[&id]);
        if calls.iter().any(|c| c["kind"] == "code") {
            break;
        }
    }
    terminate(&mut child);
    let calls = if calls.iter().any(|c| c["kind"] == "code") {
        calls
    } else {
        common::log_json(data.path(), &[&id])
    };
    let cell = calls
        .iter()
        .find(|c| c["kind"] == "code")
        .unwrap_or_else(|| panic!("the execution was not recorded: {calls:#?}"));
    assert_eq!(cell["code"], code);
    assert_eq!(
        cell["stdout"], "before the sleep\nafter the sleep\n",
        "{cell}"
    );
    assert_eq!(cell["status"], "Succeeded", "{cell}");
    assert_eq!(cell["client_gone"], true, "{cell}");
    // The text form says so.
    let text = String::from_utf8(log(data.path(), &[&id]).stdout).unwrap();
    assert!(text.contains("the client had gone"), "{text}");
}

/// Issue 26, on a Shell pool: a command whose client timed out is recorded
/// with its output and exit code when it ends, marked as answered to nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_command_whose_client_went_away_is_recorded_when_it_ends() {
    let data = tempfile::tempdir().unwrap();
    let pool = common::TestPool::recording(data.path(), ContainerType::Shell).await;
    let mut raw = common::Raw::new(&pool);
    raw.http = reqwest::Client::builder()
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let id = common::identifier();
    let command = "echo started; sleep 3; echo done; exit 4";
    let gave_up = raw
        .req(
            reqwest::Method::POST,
            &format!("/executions?api-version={V}&identifier={id}"),
        )
        .json(&json!({ "shellCommand": command }))
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
        calls = common::log_json(data.path(), &[&id]);
        if !calls.is_empty() {
            break;
        }
    }
    assert_eq!(calls.len(), 1, "the command was not recorded: {calls:#?}");
    let c = &calls[0];
    assert_eq!(
        (&c["code"], &c["stdout"], &c["exit_code"], &c["client_gone"]),
        (
            &json!(command),
            &json!("started\ndone\n"),
            &json!(4),
            &json!(true)
        ),
        "{c}"
    );
}

/// Issue 26: `sessionpad log ID | head -1` on a session whose output is far
/// bigger than a pipe holds: the reader stops after one line, and log ends
/// quietly (exit 0, nothing on standard error) instead of `error: Broken
/// pipe`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_into_a_pipe_closed_early_ends_quietly() {
    use std::io::BufRead;
    let data = tempfile::tempdir().unwrap();
    let pool = common::TestPool::recording(data.path(), ContainerType::PythonLts).await;
    let raw = common::Raw::new(&pool);
    let id = common::identifier();
    let (status, _, body) = raw
        .post_json(
            &format!("/executions?api-version={V}&identifier={id}"),
            json!({"codeInputType": "inline", "executionType": "synchronous",
                   "code": "for i in range(200000): print('line', i)"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    pool.pool.ledger().unwrap().flush();
    for args in [
        vec![id.as_str()],
        vec!["--json", id.as_str()],
        vec!["--all"],
    ] {
        let mut child = common::sessionpad_command(data.path())
            .arg("log")
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty(), "log {args:?} printed nothing");
        // The reader is gone: its end of the pipe closed.
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "log {args:?}: {:?} {stderr}",
            out.status
        );
        assert!(stderr.is_empty(), "log {args:?}: {stderr}");
    }
}

/// Issue 26's check of files per execution: a script agent against `serve
/// --cooldown 3`; one cell writes `report.csv` and `out/logs/run.log`,
/// another writes `late.txt` and sleeps past the client's 1 s timeout. Once
/// the cooldown has ended the session (its files gone with it), `log --json`
/// holds both executions with the three files and their SHA-256, `log` lists
/// them, `log --diff` shows the text, and `export --recorded ID --files DIR`
/// writes them byte for byte (`--at 1`: the state after the first cell).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_files_an_agent_left_outlive_its_session() {
    let data = tempfile::tempdir().unwrap();
    let mut cmd = common::serve_command(data.path(), TOKEN, 1);
    cmd.args(["--cooldown", "3"])
        .stderr(std::process::Stdio::null());
    let (mut child, endpoint) = common::spawn_serve(cmd);
    let agent = "acme-research-agent/0.3";
    let impatient = reqwest::Client::builder()
        .user_agent(agent)
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let id = common::identifier();
    let q = |path: &str| format!("{endpoint}/{path}?api-version={V}&identifier={id}");
    let report = "region,total\nnorth,3\nsouth,5\n";
    let first = format!(
        "import os\nos.makedirs('/mnt/data/out/logs', exist_ok=True)\nopen('/mnt/data/report.csv', 'w').write({report:?})\nopen('/mnt/data/out/logs/run.log', 'w').write('run started\\n')\nprint('wrote')"
    );
    let patient = common::http_as(agent);
    let answer: Value = patient
        .post(q("executions"))
        .bearer_auth(TOKEN)
        .json(&json!({"codeInputType": "inline", "executionType": "synchronous", "code": first}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["status"], "Succeeded", "{answer}");
    // A timer writes after.txt 1.5 s after the cell ends, before the
    // cooldown ends the session: the end's look finds it.
    let second = "import threading, time\nopen('/mnt/data/late.txt', 'w').write('written late')\nopen('/mnt/data/out/logs/run.log', 'a').write('late cell\\n')\nthreading.Timer(4.5, lambda: open('/mnt/data/after.txt', 'w').write('after the last call')).start()\ntime.sleep(3)";
    let gave_up = impatient
        .post(q("executions"))
        .bearer_auth(TOKEN)
        .json(&json!({"codeInputType": "inline", "executionType": "synchronous", "code": second}))
        .send()
        .await;
    assert!(
        gave_up.as_ref().is_err_and(reqwest::Error::is_timeout),
        "{gave_up:?}"
    );
    // The session ends after the cooldown (the cell's 3 s, then 3 s idle);
    // asking about it touches it, so ask once it should be gone.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let mut ended = false;
    for _ in 0..10 {
        let status = http()
            .get(format!(
                "{endpoint}/session?api-version={V}&identifier={id}"
            ))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .status();
        if status == 400 {
            ended = true;
            break;
        }
        tokio::time::sleep(Duration::from_secs(4)).await;
    }
    terminate(&mut child);
    assert!(ended, "the cooldown did not end the session");
    let calls = common::log_json(data.path(), &[&id]);
    let executions: Vec<&Value> = calls.iter().filter(|c| c["kind"] == "code").collect();
    assert_eq!(executions.len(), 2, "{calls:#?}");
    assert_eq!(executions[1]["client_gone"], true, "{}", executions[1]);
    // The end is recorded, with why and what changed since the last call.
    let end = calls.last().unwrap();
    assert_eq!(end["kind"], "end", "{calls:#?}");
    assert_eq!(end["status"], "idle past the cooldown", "{end}");
    assert_eq!(end["files"][0]["path"], "/mnt/data/after.txt", "{end}");
    assert_eq!(end["files"][0]["change"], "added", "{end}");
    let files = |cell: &Value| -> Vec<(String, String, u64, String)> {
        cell["files"]
            .as_array()
            .unwrap_or_else(|| panic!("no files: {cell}"))
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_string(),
                    f["change"].as_str().unwrap().to_string(),
                    f["size"].as_u64().unwrap(),
                    f["sha256"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let sha = |s: &str| sessionpad::protocol::record::sha256_hex(s.as_bytes());
    let log_after = "run started\nlate cell\n";
    assert_eq!(
        files(executions[0]),
        vec![
            (
                "/mnt/data/out/logs/run.log".into(),
                "added".into(),
                12,
                sha("run started\n")
            ),
            (
                "/mnt/data/report.csv".into(),
                "added".into(),
                report.len() as u64,
                sha(report)
            ),
        ]
    );
    assert_eq!(
        files(executions[1]),
        vec![
            (
                "/mnt/data/late.txt".into(),
                "added".into(),
                12,
                sha("written late")
            ),
            (
                "/mnt/data/out/logs/run.log".into(),
                "modified".into(),
                log_after.len() as u64,
                sha(log_after)
            ),
        ]
    );
    // The text log lists them under each cell; --diff shows the new line.
    let text = String::from_utf8(log(data.path(), &[&id]).stdout).unwrap();
    assert!(text.contains("added    /mnt/data/report.csv"), "{text}");
    assert!(
        text.contains(
            "session ended: idle past the cooldown; its variables and /mnt/data files are gone"
        ),
        "{text}"
    );
    assert!(
        text.contains("Files  added    /mnt/data/after.txt"),
        "{text}"
    );
    assert!(
        text.contains("modified /mnt/data/out/logs/run.log"),
        "{text}"
    );
    let diff = String::from_utf8(log(data.path(), &[&id, "--diff"]).stdout).unwrap();
    assert!(diff.contains("    +late cell"), "{diff}");
    assert!(diff.contains("    +north,3"), "{diff}");
    // Every file the session left, byte for byte, after the session is gone.
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("left");
    let export = common::sessionpad_command(data.path())
        .args(["export", "--recorded", &id, "--files"])
        .arg(&dest)
        .output()
        .unwrap();
    assert!(export.status.success(), "{export:?}");
    assert_eq!(
        std::fs::read_to_string(dest.join("report.csv")).unwrap(),
        report
    );
    assert_eq!(
        std::fs::read_to_string(dest.join("out/logs/run.log")).unwrap(),
        log_after
    );
    assert_eq!(
        std::fs::read_to_string(dest.join("late.txt")).unwrap(),
        "written late"
    );
    assert_eq!(
        std::fs::read_to_string(dest.join("after.txt")).unwrap(),
        "after the last call"
    );
    // The exported notebook says per cell who ran it, when, and what it
    // changed.
    let nb = common::sessionpad_command(data.path())
        .args(["export", "--recorded", &id])
        .output()
        .unwrap();
    assert!(nb.status.success(), "{nb:?}");
    let nb: Value = serde_json::from_slice(&nb.stdout).unwrap();
    let second = &nb["cells"][1]["metadata"]["sessionpad"]["recorded"];
    assert_eq!(second["client"], agent, "{nb}");
    assert_eq!(second["client_gone"], true, "{nb}");
    assert!(second["at"].as_str().unwrap().starts_with("20"), "{nb}");
    assert_eq!(second["files"][0]["path"], "/mnt/data/late.txt", "{nb}");
    // As they were after the first cell; an existing file is not replaced.
    let at1 = out.path().join("at1");
    let export = common::sessionpad_command(data.path())
        .args(["export", "--recorded", &id, "--at", "1", "--files"])
        .arg(&at1)
        .output()
        .unwrap();
    assert!(export.status.success(), "{export:?}");
    assert_eq!(
        std::fs::read_to_string(at1.join("out/logs/run.log")).unwrap(),
        "run started\n"
    );
    assert!(!at1.join("late.txt").exists());
    let again = common::sessionpad_command(data.path())
        .args(["export", "--recorded", &id, "--files"])
        .arg(&at1)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("--force replaces it"),
        "{again:?}"
    );
    assert_eq!(
        std::fs::read_to_string(at1.join("out/logs/run.log")).unwrap(),
        "run started\n",
        "kept as it was"
    );
}

/// Issue 26: one identifier used on a Python and a Shell pool is two recorded
/// sessions, each under its pool's key; `log` says so and prints each under
/// its pool, `--pool` picks one, and `export --recorded` writes one pool's
/// cells in that pool's language, saying which it took.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_identifier_on_two_pools_is_two_recorded_sessions() {
    let data = tempfile::tempdir().unwrap();
    let python = common::TestPool::recording(data.path(), ContainerType::PythonLts).await;
    let shell = common::TestPool::recording(data.path(), ContainerType::Shell).await;
    let id = common::identifier();
    let (status, _, body) = common::Raw::new(&python)
        .post_json(
            &format!("/executions?api-version={V}&identifier={id}"),
            json!({"code": "print('from python')"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = common::Raw::new(&shell)
        .post_json(
            &format!("/executions?api-version={V}&identifier={id}"),
            json!({"shellCommand": "echo from shell"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    python.pool.ledger().unwrap().flush();
    shell.pool.ledger().unwrap().flush();
    let python_key = python.pool.ledger_key().to_string();
    let shell_key = shell.pool.ledger_key().to_string();
    assert!(
        python_key.starts_with("local/PythonLTS/127.0.0.1:"),
        "{python_key}"
    );
    assert!(
        shell_key.starts_with("local/Shell/127.0.0.1:"),
        "{shell_key}"
    );
    let sessions: Vec<Value> = common::log_json(data.path(), &["--sessions"])
        .into_iter()
        .filter(|s| s["identifier"] == id.as_str())
        .collect();
    let mut pools: Vec<&str> = sessions
        .iter()
        .map(|s| s["pool"].as_str().unwrap())
        .collect();
    pools.sort_unstable();
    assert_eq!(pools, [python_key.as_str(), shell_key.as_str()]);
    assert!(sessions.iter().all(|s| s["cells"] == 1), "{sessions:#?}");
    // The text log names both pools and prints each session under its own.
    let out = log(data.path(), &[&id]);
    let (text, said) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(said.contains("was used on 2 pools"), "{said}");
    assert!(text.contains(&format!("on {python_key}")), "{text}");
    assert!(text.contains(&format!("on {shell_key}")), "{text}");
    let one = common::log_json(data.path(), &[&id, "--pool", &shell_key]);
    assert_eq!(one.len(), 1, "{one:#?}");
    assert_eq!(one[0]["stdout"], "from shell\n");
    // export --recorded takes one pool: the Python one asked for, in Python.
    let out = common::sessionpad_command(data.path())
        .args(["export", "--recorded", &id, "--pool", &python_key])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let nb: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(nb["cells"].as_array().unwrap().len(), 1, "{nb}");
    assert_eq!(nb["metadata"]["kernelspec"]["language"], "python", "{nb}");
    // Without --pool: the latest (the Shell pool's), said on stderr.
    let out = common::sessionpad_command(data.path())
        .args(["export", "--recorded", &id])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("taking the most recent"),
        "{out:?}"
    );
    let nb: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(nb["cells"].as_array().unwrap().len(), 1, "{nb}");
    assert_eq!(nb["cells"][0]["source"][0], "echo from shell", "{nb}");
}

/// Issue 26: with two serves running (the first publishes the discovery
/// file), an agent's identifier on the second; `log ID -f` and `--follow ID`
/// without `--endpoint` refuse and name the pool that records it, instead of
/// following the other pool (and, for a take-over, running cells in a new
/// session there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn following_without_an_endpoint_finds_the_pool_that_records_the_identifier() {
    let data = tempfile::tempdir().unwrap();
    let (mut published, _) = common::serve(data.path(), TOKEN);
    let (mut other, endpoint) = common::serve(data.path(), TOKEN);
    let id = common::identifier();
    let answer = http()
        .post(format!(
            "{endpoint}/executions?api-version={V}&identifier={id}"
        ))
        .bearer_auth(TOKEN)
        .json(&json!({"code": "x = 1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    // Recorded: the ledger knows which pool wrote it.
    for _ in 0..50 {
        if !common::log_json(data.path(), &[&id]).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for args in [
        vec!["log", id.as_str(), "-f"],
        vec!["--follow", id.as_str()],
    ] {
        let out = common::sessionpad_command(data.path())
            .args(&args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {out:?}");
        assert!(
            said.contains(&format!("being recorded by the pool at {endpoint}")),
            "{args:?}: {said}"
        );
        assert!(said.contains(&format!("--endpoint {endpoint}")), "{said}");
    }
    terminate(&mut other);
    terminate(&mut published);
}

/// Issue 26: replay redoes a recorded upload, in its place, from the bytes
/// the ledger kept: the cell that reads the uploaded file ends as recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_redoes_recorded_uploads_from_the_ledger() {
    let data = tempfile::tempdir().unwrap();
    let (mut child, endpoint) = common::serve(data.path(), TOKEN);
    let id = common::identifier();
    let content = b"city,n\nOslo,3\nLima,4\n".to_vec();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(content.clone()).file_name("input.csv"),
    );
    let r = http()
        .post(format!("{endpoint}/files?api-version={V}&identifier={id}"))
        .bearer_auth(TOKEN)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{r:?}");
    let read =
        "print(sum(int(l.split(',')[1]) for l in open('/mnt/data/input.csv').read().split()[1:]))";
    let r = http()
        .post(format!(
            "{endpoint}/executions?api-version={V}&identifier={id}"
        ))
        .bearer_auth(TOKEN)
        .json(&json!({"code": read}))
        .send()
        .await
        .unwrap();
    let answer: Value = r.json().await.unwrap();
    assert_eq!(answer["result"]["stdout"], "7\n", "{answer}");
    for _ in 0..200 {
        if common::log_json(data.path(), &[&id]).len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = common::sessionpad_command(data.path())
        .args([
            "--endpoint",
            &endpoint,
            "--token",
            TOKEN,
            "--json",
            "replay",
            &id,
        ])
        .output()
        .unwrap();
    terminate(&mut child);
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(out.status.code(), Some(0), "{report}");
    let steps = report["cells"].as_array().unwrap();
    assert_eq!(steps[0]["upload"], "input.csv", "{report}");
    assert_eq!(steps[0]["redone"], true, "{report}");
    assert_eq!(steps[1]["stdout"], "7\n", "{report}");
    assert_eq!(steps[1]["same_stdout"], true, "{report}");
}

/// Issue 26: a session a client ends (`DELETE session`, `aca-api.md` §4.4)
/// is recorded as ended by that client, with what its code left changed
/// since the last call (a process still writing when it was ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_a_client_ends_is_recorded_as_ended_by_it() {
    let data = tempfile::tempdir().unwrap();
    let (mut child, endpoint) = common::serve(data.path(), TOKEN);
    let id = common::identifier();
    let q = |path: &str| format!("{endpoint}/{path}?api-version={V}&identifier={id}");
    let code = "import threading\nthreading.Timer(0.5, lambda: open('/mnt/data/left.txt', 'w').write('still writing')).start()";
    let answer: Value = http()
        .post(q("executions"))
        .bearer_auth(TOKEN)
        .json(&json!({"codeInputType": "inline", "executionType": "synchronous", "code": code}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["status"], "Succeeded", "{answer}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let ender = "session-ender/2.0";
    let r = common::http_as(ender)
        .delete(q("session"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    terminate(&mut child);
    let calls = common::log_json(data.path(), &[&id]);
    let kinds: Vec<&str> = calls.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["code", "end"], "{calls:#?}");
    assert!(calls[0].get("files").is_none(), "{}", calls[0]);
    let end = &calls[1];
    assert_eq!(end["status"], "the client ended it", "{end}");
    assert_eq!(end["client"], ender, "{end}");
    assert_eq!(end["files"][0]["path"], "/mnt/data/left.txt", "{end}");
    assert_eq!(
        end["files"][0]["sha256"],
        sessionpad::protocol::record::sha256_hex(b"still writing"),
        "{end}"
    );
    let text = String::from_utf8(log(data.path(), &[&id]).stdout).unwrap();
    assert!(
        text.contains("session ended: the client ended it (session-ender/2.0)"),
        "{text}"
    );
}

/// Issue 27: the pool warms each ready kernel with a silent execution before a
/// session takes it, so the first cell skips IPython's first-run costs. The
/// warm-up is invisible: the user's first cell is still execution 1 (the
/// notebook's `In [1]`), the kernel's history holds only the user's cells, and
/// the ledger records the user's calls and nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ready_kernels_warm_up_is_neither_counted_nor_recorded() {
    let data = tempfile::tempdir().unwrap();
    let pool = common::TestPool::recording(data.path(), ContainerType::PythonLts).await;
    // The ready kernel is started (and warmed) in the background: wait for it,
    // so the session below takes a warmed kernel.
    let deadline = std::time::Instant::now() + common::LIMIT;
    while pool.pool.registry().ready_count() == 0 {
        assert!(std::time::Instant::now() < deadline, "no ready kernel");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let client = pool.client(sessionpad::protocol::ApiVersion::V2025_10_02);
    let id = common::identifier();
    let first = client.execute(&id, "1+1", common::LIMIT).await.unwrap();
    assert_eq!(first.execution_count, Some(1), "{first:?}");
    let history = "len(get_ipython().history_manager.input_hist_raw) - 1";
    let second = client.execute(&id, history, common::LIMIT).await.unwrap();
    assert_eq!(second.execution_count, Some(2), "{second:?}");
    // Two cells in the kernel's history (the one asking included).
    let value = second.result.as_ref().map(|v| v.text.clone());
    assert_eq!(value.as_deref(), Some("2"), "{second:?}");
    pool.pool.ledger().unwrap().flush();
    let path = data.path().join(ledger::FILE_NAME);
    let conn = ledger::schema::open_existing(&path).unwrap().unwrap();
    let codes: Vec<_> = ledger::read::entries(&conn, &ledger::Query::default())
        .unwrap()
        .into_iter()
        .map(|e| e.code)
        .collect();
    assert_eq!(
        codes,
        [Some("1+1".to_string()), Some(history.to_string())],
        "the ledger holds exactly the user's calls"
    );
}
