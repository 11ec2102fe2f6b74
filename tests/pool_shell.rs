//! The local pool as a Shell pool (`serve --container-type shell`, `aca-api.md`
//! §4.7, §13), through real HTTP and real sandboxed sessions: exit codes and
//! output, what persists between commands (files, background processes) and
//! what does not (working directory, variables), `stdin` and
//! `execCommandAndArgs`, both body variants clients send, timeouts, output
//! caps, and the file routes next to commands.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::Duration;

use common::{LIMIT, Raw, TestPool, identifier};
use serde_json::{Value, json};
use sessionpad::client::{SessionClient, ShellRequest};
use sessionpad::protocol::{ApiVersion, ContainerType, ShellCommand, ShellExecution};
async fn shell_pool() -> TestPool {
    TestPool::start_as(ContainerType::Shell).await
}

fn client(pool: &TestPool) -> SessionClient {
    pool.client(ApiVersion::V2025_10_02)
        .with_container_type(ContainerType::Shell)
}

async fn run(c: &SessionClient, id: &str, line: &str) -> ShellExecution {
    c.execute_shell(id, &ShellRequest::line(line, LIMIT))
        .await
        .expect("the pool answers")
}

#[tokio::test]
async fn a_command_gives_its_exit_code_stdout_and_stderr() {
    let pool = shell_pool().await;
    let c = client(&pool);
    let id = identifier();
    let e = run(&c, &id, "echo hello; echo oops >&2; exit 3").await;
    assert_eq!(
        (e.exit_code, e.stdout.as_str(), e.stderr.as_str()),
        (Some(3), "hello\n", "oops\n")
    );
    let e = run(&c, &id, "ls /no/such/folder").await;
    assert_eq!(e.exit_code, Some(2), "{e:?}");
    assert!(e.stderr.contains("No such file or directory"), "{e:?}");
    let e = run(&c, &id, "kill -TERM $$").await;
    assert_eq!(e.exit_code, Some(128 + 15), "{e:?}");
    let e = run(&c, &id, "true").await;
    assert!(e.succeeded() && e.stdout.is_empty() && e.stderr.is_empty());
}

#[tokio::test]
async fn files_and_background_processes_persist_the_directory_and_variables_do_not() {
    let pool = shell_pool().await;
    let c = client(&pool);
    let id = identifier();
    let first = run(
        &c,
        &id,
        "pwd; cd /tmp; X=41; export Y=42; echo kept > note.txt; echo tmp > /tmp/t.txt; \
         (sleep 1000 &); echo started",
    )
    .await;
    assert_eq!(first.exit_code, Some(0), "{first:?}");
    let start_dir = first.stdout.lines().next().unwrap().to_string();
    // A background process holding the pipes does not keep the command from ending.
    assert!(first.stdout.ends_with("started\n"), "{first:?}");
    let second = run(
        &c,
        &id,
        "pwd; echo \"[$X][$Y]\"; cat /tmp/note.txt /tmp/t.txt; pgrep -x sleep >/dev/null && echo sleeping",
    )
    .await;
    assert_eq!(
        second.stdout,
        format!("{start_dir}\n[][]\nkept\ntmp\nsleeping\n"),
        "{second:?}"
    );
    if pool.pool.isolation().is_sandboxed() {
        assert_eq!(start_dir, "/mnt/data");
    }
}

#[tokio::test]
async fn stdin_and_exec_command_and_args_are_run_without_a_shell() {
    let pool = shell_pool().await;
    let c = client(&pool);
    let id = identifier();
    let counted = c
        .execute_shell(
            &id,
            &ShellRequest {
                command: ShellCommand::Argv(vec!["wc".into(), "-l".into()]),
                stdin: Some("a\nb\nc\n".into()),
                timeout: LIMIT,
                output_streams_max_length: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (counted.exit_code, counted.stdout.trim()),
        (Some(0), "3"),
        "{counted:?}"
    );
    // No shell reads the arguments: `$HOME` and `;` reach echo as they are.
    let literal = c
        .execute_shell(
            &id,
            &ShellRequest {
                command: ShellCommand::Argv(vec!["echo".into(), "$HOME;".into()]),
                stdin: None,
                timeout: LIMIT,
                output_streams_max_length: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(literal.stdout, "$HOME;\n");
    let missing = c
        .execute_shell(
            &id,
            &ShellRequest {
                command: ShellCommand::Argv(vec!["no-such-program".into()]),
                stdin: None,
                timeout: LIMIT,
                output_streams_max_length: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(missing.exit_code, Some(127), "{missing:?}");
    assert!(missing.stderr.contains("no-such-program"), "{missing:?}");
    let piped = c
        .execute_shell(
            &id,
            &ShellRequest {
                command: ShellCommand::Line("tr a-z A-Z".into()),
                stdin: Some("shout\n".into()),
                timeout: LIMIT,
                output_streams_max_length: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(piped.stdout, "SHOUT\n");
}

#[tokio::test]
async fn both_body_variants_are_accepted_and_bad_bodies_say_why() {
    let pool = shell_pool().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    for (version, body, status) in [
        // LangChain's SessionsBashTool (1.0.4).
        (
            "2025-02-02-preview",
            json!({"shellCommand": "echo lc"}),
            202,
        ),
        // The tutorial's body, with the code fields.
        (
            "2025-10-02-preview",
            json!({"codeInputType":"inline","executionType":"synchronous","shellCommand":"echo lc","timeoutInSeconds":600}),
            200,
        ),
        // An earlier tutorial's argv under `command`.
        (
            "2025-10-02-preview",
            json!({"command": ["/bin/bash", "-c", "echo lc"]}),
            200,
        ),
    ] {
        let (got, headers, answer) = raw
            .post_json(
                &format!("/executions?api-version={version}&identifier={id}"),
                body.clone(),
            )
            .await;
        assert_eq!(got, status, "{body}: {answer}");
        assert_eq!(answer["status"], "0", "{answer}");
        assert_eq!(answer["identifier"], id.as_str());
        assert_eq!(answer["result"]["stdout"], "lc\n");
        assert_eq!(answer["result"]["stderr"], "");
        assert!(answer["result"]["executionTimeInMilliseconds"].is_u64());
        let exec_id = headers["operation-id"].to_str().unwrap();
        assert_eq!(answer["id"], exec_id);
        let (got, again) = raw
            .call(
                reqwest::Method::GET,
                &format!("/executions/{exec_id}?api-version={version}&identifier={id}"),
            )
            .await;
        assert_eq!((got, &again["status"]), (200, &json!("0")), "{again}");
    }
    for (body, says) in [
        (json!({"code": "print(1)"}), "not code"),
        (
            json!({"shellCommand": "a", "execCommandAndArgs": ["b"]}),
            "not both",
        ),
        (json!({"execCommandAndArgs": []}), "at least the program"),
        (json!({"timeoutInSeconds": 5}), "is required"),
        (
            json!({"shellCommand": "true", "executionType": "Asynchronous"}),
            "synchronously",
        ),
    ] {
        let (got, headers, answer) = raw
            .post_json(
                &format!("/executions?api-version=2025-10-02-preview&identifier={id}"),
                body.clone(),
            )
            .await;
        assert_eq!(got, 400, "{body}: {answer}");
        assert_eq!(headers["x-ms-error-code"], "SessionRequestValidationFailed");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{body}: {answer}");
    }
    // Family A has no shell form.
    let (got, _, answer) = raw
        .post_json(
            &format!("/code/execute?api-version=2024-02-02-preview&identifier={id}"),
            json!({"properties": {"code": "echo hi"}}),
        )
        .await;
    assert_eq!(got, 400, "{answer}");
    assert!(answer.to_string().contains("Shell pool"), "{answer}");
}

#[tokio::test]
async fn a_command_past_its_timeout_is_killed_and_the_session_lives_on() {
    let pool = shell_pool().await;
    let c = client(&pool);
    let id = identifier();
    let e = c
        .execute_shell(
            &id,
            &ShellRequest::line("echo before; sleep 600; echo after", Duration::from_secs(1)),
        )
        .await
        .unwrap();
    assert_eq!(e.exit_code, Some(-1), "{e:?}");
    assert_eq!(e.stdout, "before\n");
    assert!(e.stderr.contains("timed out"), "{e:?}");
    let next = run(&c, &id, "pgrep -x sleep || echo gone").await;
    assert_eq!(next.stdout, "gone\n", "{next:?}");
}

#[tokio::test]
async fn huge_output_is_capped_like_pythons() {
    let pool = shell_pool().await;
    let c = client(&pool);
    let id = identifier();
    let e = run(
        &c,
        &id,
        "head -c 20000000 /dev/zero | tr '\\0' x; echo done >&2",
    )
    .await;
    assert_eq!(e.exit_code, Some(0), "{:?}", &e.stderr);
    let cap = sessionpad::pool::kernel::MAX_STREAM_BYTES;
    assert!(e.stdout.starts_with("xxxx"));
    assert!(e.stdout.len() < cap + 200, "{}", e.stdout.len());
    assert!(
        e.stdout
            .contains("[output truncated by the local pool: 20.0 MB printed"),
        "{}",
        &e.stdout[e.stdout.len() - 200..]
    );
    assert_eq!(e.stderr, "done\n");
    // The client's outputStreamsMaxLength (2025-10-02-preview) keeps less.
    let raw = Raw::new(&pool);
    let (_, _, answer) = raw
        .post_json(
            &format!("/executions?api-version=2025-10-02-preview&identifier={id}"),
            json!({"shellCommand": "seq 1 1000", "outputStreamsMaxLength": 10}),
        )
        .await;
    assert_eq!(answer["result"]["stdout"], "1\n2\n3\n4\n5\n");
}

#[tokio::test]
async fn files_uploaded_are_seen_by_commands_and_files_written_are_listed() {
    let pool = shell_pool().await;
    let c = client(&pool);
    let id = identifier();
    let local = pool.dir.path().join("in.txt");
    std::fs::write(&local, "one\ntwo\n").unwrap();
    c.upload_file(&id, &local, "in.txt", None, &|_, _| {})
        .await
        .unwrap();
    let e = run(&c, &id, "wc -l < in.txt > out.txt && cat out.txt").await;
    assert_eq!((e.exit_code, e.stdout.trim()), (Some(0), "2"), "{e:?}");
    let names = common::file_names(&c, &id).await;
    assert!(names.contains(&"out.txt".to_string()), "{names:?}");
    let mut out = Vec::new();
    c.download_file(&id, "out.txt", &mut out, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(String::from_utf8(out).unwrap().trim(), "2");
}

#[tokio::test]
async fn a_python_pool_still_takes_code() {
    // The container type changes nothing for Python pools.
    let pool = TestPool::start_with(|o| o.ready_sessions = 0).await;
    let raw = Raw::new(&pool);
    let (got, _, answer): (u16, _, Value) = raw
        .post_json(
            &format!(
                "/executions?api-version=2025-10-02-preview&identifier={}",
                identifier()
            ),
            json!({"shellCommand": "echo hi"}),
        )
        .await;
    assert_eq!(got, 400, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("code is required") && message.contains("Shell pools"),
        "{answer}"
    );
}

/// A Shell pool's `metadata` names what its sessions run: bash first, with the
/// version `bash` itself reports inside a session, and no Jupyter kernel (a
/// shell session runs none). Reproduces a defect: it listed the Python
/// runtime and ipykernel, as a Python pool does.
#[tokio::test]
async fn the_metadata_names_bash_and_no_kernel() {
    let pool = shell_pool().await;
    let c = client(&pool);
    let meta = c.pool_metadata().await.expect("metadata");
    let id = identifier();
    let e = run(
        &c,
        &id,
        "echo \"${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}.${BASH_VERSINFO[2]}\"",
    )
    .await;
    let in_session = e.stdout.trim();
    assert_eq!(meta.runtimes[0].name, "bash", "{meta:?}");
    assert_eq!(meta.runtimes[0].version, in_session, "{meta:?}");
    assert!(meta.kernel.is_none(), "{meta:?}");
}
