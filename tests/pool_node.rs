//! The local pool as a NodeLTS pool (`serve --container-type node`): one
//! persistent JavaScript context per session, through real HTTP and real
//! sandboxed sessions, in both families (`code/execute` as Microsoft's Node.js
//! tutorial sends it, and `executions`): `console.log`, the last expression's
//! value, errors with their stack, state, promises, timeouts, `require` and
//! files.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::Duration;

use common::{LIMIT, Raw, TestPool, identifier};
use serde_json::json;
use sessionpad::client::SessionClient;
use sessionpad::protocol::{ApiVersion, ContainerType, Execution, ExecutionStatus};
async fn node_pool() -> TestPool {
    TestPool::start_as(ContainerType::NodeLts).await
}

fn client(pool: &TestPool) -> SessionClient {
    pool.client(ApiVersion::V2025_10_02)
        .with_container_type(ContainerType::NodeLts)
}

async fn run(c: &SessionClient, id: &str, code: &str) -> Execution {
    c.execute(id, code, LIMIT).await.expect("the pool answers")
}

fn value(e: &Execution) -> (Option<&str>, Option<&serde_json::Value>) {
    match &e.result {
        Some(v) => (Some(v.text.as_str()), v.json.as_ref()),
        None => (None, None),
    }
}

#[tokio::test]
async fn the_tutorials_request_gets_the_tutorials_answer() {
    let pool = node_pool().await;
    let raw = Raw::new(&pool);
    let (status, _, answer) = raw
        .post_json(
            &format!(
                "/code/execute?api-version=2024-02-02-preview&identifier={}",
                identifier()
            ),
            json!({"properties": {"codeInputType": "inline", "executionType": "synchronous", "code": "console.log(\"hello-world\")"}}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let p = &answer["properties"];
    assert_eq!(p["status"], "Success", "{answer}");
    assert_eq!(p["stdout"], "hello-world\n");
    assert_eq!(p["stderr"], "");
    assert_eq!(p["executionResult"], "");
    assert!(p["executionTimeInMilliseconds"].is_u64());
}

#[tokio::test]
async fn state_values_and_console_output_carry_across_cells() {
    let pool = node_pool().await;
    let c = client(&pool);
    let id = identifier();
    let e = run(
        &c,
        &id,
        "let x = 6 * 7; const greet = (n) => `hi ${n}`; console.log('set')",
    )
    .await;
    // The session's Node.js process was started with its ready session.
    assert_eq!(
        (e.status, e.stdout.as_str(), e.stderr.as_str()),
        (ExecutionStatus::Succeeded, "set\n", ""),
        "{e:?}"
    );
    assert_eq!(value(&e), (None, None));
    let e = run(&c, &id, "x").await;
    assert_eq!(value(&e), (Some("42"), Some(&json!(42))));
    let e = run(&c, &id, "greet('you')").await;
    assert_eq!(value(&e), (Some("'hi you'"), Some(&json!("hi you"))));
    let e = run(&c, &id, "({a: 1, b: [true, null]})").await;
    assert_eq!(
        value(&e),
        (
            Some("{ a: 1, b: [ true, null ] }"),
            Some(&json!({"a": 1, "b": [true, null]}))
        )
    );
    let e = run(&c, &id, "console.error('warn'); Promise.resolve(x + 1)").await;
    assert_eq!(e.stderr, "warn\n");
    assert_eq!(value(&e).1, Some(&json!(43)));
    let e = run(&c, &id, "require('os').platform()").await;
    assert_eq!(value(&e).1, Some(&json!("linux")), "{e:?}");
    // The 2024-10-02-preview answer carries the JSON value as it is.
    let old = pool
        .client(ApiVersion::V2024_10_02)
        .with_container_type(ContainerType::NodeLts);
    let e = run(&old, &id, "[x, 'y']").await;
    assert_eq!(value(&e).1, Some(&json!([42, "y"])), "{e:?}");
}

#[tokio::test]
async fn errors_carry_their_stack_and_the_context_survives_them() {
    let pool = node_pool().await;
    let c = client(&pool);
    let id = identifier();
    run(&c, &id, "var kept = 'yes'").await;
    let e = run(&c, &id, "function f() { throw new Error('boom') }\nf()").await;
    assert_eq!(e.status, ExecutionStatus::Failed);
    assert!(e.stderr.starts_with("Error: boom\n"), "{}", e.stderr);
    assert!(e.stderr.contains("at f (cell.js:1:"), "{}", e.stderr);
    assert!(!e.stderr.contains("node:vm"), "{}", e.stderr);
    let e = run(&c, &id, "this is not javascript").await;
    assert_eq!(e.status, ExecutionStatus::Failed);
    assert!(e.stderr.contains("SyntaxError"), "{}", e.stderr);
    let e = run(&c, &id, "kept").await;
    assert_eq!(value(&e).1, Some(&json!("yes")));
    // A loop past the limit is ended by the context's own timeout.
    let e = c
        .execute(&id, "while (true) {}", Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(e.status, ExecutionStatus::Failed);
    assert!(e.stderr.contains("timed out"), "{}", e.stderr);
    let e = run(&c, &id, "kept").await;
    assert_eq!(value(&e).1, Some(&json!("yes")), "{e:?}");
    // process.exit ends the context: the next cell says so and starts anew.
    let e = run(&c, &id, "process.exit(3)").await;
    assert_eq!(e.status, ExecutionStatus::Failed);
    assert!(e.stderr.contains("new context"), "{e:?}");
    let e = run(&c, &id, "typeof kept").await;
    assert_eq!(value(&e).1, Some(&json!("undefined")), "{e:?}");
}

#[tokio::test]
async fn files_written_by_javascript_are_the_sessions_files() {
    let pool = node_pool().await;
    let c = client(&pool);
    let id = identifier();
    let e = run(
        &c,
        &id,
        "require('fs').writeFileSync('made.txt', 'from node'); require('fs').readdirSync('.')",
    )
    .await;
    assert_eq!(value(&e).1, Some(&json!(["made.txt"])), "{e:?}");
    let mut out = Vec::new();
    c.download_file(&id, "made.txt", &mut out, &|_, _| {})
        .await
        .unwrap();
    assert_eq!(out, b"from node");
}

/// A Node.js pool's `metadata` names Node.js with the version
/// `process.versions.node` gives inside a session, no Python packages and no
/// Jupyter kernel. Reproduces a defect: it listed the Python runtime, the
/// Python environment's packages and ipykernel, as a Python pool does.
#[tokio::test]
async fn the_metadata_names_node_and_no_python() {
    let pool = node_pool().await;
    let c = client(&pool);
    let meta = c.pool_metadata().await.expect("metadata");
    let e = run(&c, &identifier(), "process.versions.node").await;
    let in_session = value(&e).0.expect("a value").trim_matches('\'').to_string();
    assert_eq!(meta.runtimes.len(), 1, "{meta:?}");
    assert_eq!(meta.runtimes[0].name, "node", "{meta:?}");
    assert_eq!(meta.runtimes[0].version, in_session, "{meta:?}");
    assert!(meta.packages.is_empty(), "{meta:?}");
    assert!(meta.kernel.is_none(), "{meta:?}");
}

/// Cells are evaluated as Node's REPL does (V8's REPL mode): running
/// `const fs = require('fs')` again redeclares it, and `await` at the top
/// level waits. Reproduces issue 27 item 12: the second run failed with
/// `SyntaxError: Identifier 'fs' has already been declared`, and top-level
/// `await` was refused.
#[tokio::test]
async fn const_cells_run_again_and_top_level_await_waits() {
    let pool = node_pool().await;
    let c = client(&pool);
    let id = identifier();
    for n in 1..=2 {
        let e = run(
            &c,
            &id,
            "const fs = require('fs'); let n = typeof fs.readFileSync; n",
        )
        .await;
        assert_eq!(e.status, ExecutionStatus::Succeeded, "run {n}: {e:?}");
        assert_eq!(value(&e).1, Some(&json!("function")), "run {n}: {e:?}");
    }
    let e = run(
        &c,
        &id,
        "const later = await new Promise((r) => setTimeout(() => r(6 * 7), 50)); later",
    )
    .await;
    assert_eq!(e.status, ExecutionStatus::Succeeded, "{e:?}");
    assert_eq!(value(&e).1, Some(&json!(42)), "{e:?}");
    // What the awaited cell declared stays, as any cell's does.
    let e = run(&c, &id, "later + 1").await;
    assert_eq!(value(&e).1, Some(&json!(43)), "{e:?}");
    // An awaited rejection is the cell's error, with its stack.
    let e = run(&c, &id, "await Promise.reject(new Error('nope'))").await;
    assert_eq!(e.status, ExecutionStatus::Failed, "{e:?}");
    assert!(e.stderr.starts_with("Error: nope"), "{}", e.stderr);
}

/// Without a sandbox there is no `/mnt/data` mount: as in a Python session,
/// a Node.js session's paths below `/mnt/data` are its session folder's.
/// Reproduces issue 27 item 12: `/mnt/data` did not exist there.
#[tokio::test]
async fn without_a_sandbox_mnt_data_is_the_session_folder() {
    let pool = TestPool::start_with(|o| {
        o.container_type = ContainerType::NodeLts;
        o.sandbox = false;
    })
    .await;
    let c = client(&pool);
    let id = identifier();
    let e = run(
        &c,
        &id,
        "const fs = require('fs'); fs.mkdirSync('/mnt/data/sub', { recursive: true }); \
         fs.writeFileSync('/mnt/data/sub/x.txt', 'mapped'); \
         [fs.readFileSync('/mnt/data/sub/x.txt', 'utf8'), fs.readdirSync('/mnt/data'), \
          fs.existsSync('/mnt/data/sub/x.txt'), await fs.promises.readFile('/mnt/data/sub/x.txt', 'utf8')]",
    )
    .await;
    assert_eq!(
        value(&e).1,
        Some(&json!(["mapped", ["sub"], true, "mapped"])),
        "{e:?}"
    );
    let session = pool.pool.registry().get(&id).unwrap();
    assert_eq!(
        std::fs::read_to_string(pool.pool.registry().files_of(&session).join("sub/x.txt")).unwrap(),
        "mapped"
    );
}

/// A Node.js installed outside the system folders (nvm's
/// `~/.nvm/versions/node/vX/bin`, a tarball in `/opt` or a home folder) is the
/// one a session runs: the pool finds `node` on its own `PATH`, binds its
/// installation read-only at `/opt/node` in a sandboxed session (not at its
/// host path, which names the user's home) and puts its `bin` on the
/// session's `PATH`. Before, sessions searched only `/usr/local/bin:/usr/bin:/bin`,
/// so on a machine whose only Node.js came from nvm every Node.js session failed.
#[test]
fn a_node_outside_the_system_folders_is_the_sessions_node() {
    let system_node = ["/usr/local/bin/node", "/usr/bin/node", "/bin/node"]
        .iter()
        .map(std::path::Path::new)
        .find(|p| p.exists())
        .expect("this test needs a Node.js in the system folders to copy");
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("nvm/versions/node/v0");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::create_dir_all(prefix.join("lib/node_modules")).unwrap();
    let node = prefix.join("bin/node");
    let real = std::fs::canonicalize(system_node).unwrap();
    if std::fs::hard_link(&real, &node).is_err() {
        std::fs::copy(&real, &node).unwrap();
    }
    let data = tempfile::tempdir().unwrap();
    let mut cmd = common::serve_command(data.path(), "node-token", 1);
    cmd.args(["--container-type", "node"]).env(
        "PATH",
        format!("{}:/usr/bin:/bin", prefix.join("bin").display()),
    );
    let sandboxed = !cmd.get_args().any(|a| a == "--no-sandbox");
    let (child, endpoint) = common::spawn_serve(cmd);
    let _served = common::Served(child);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = SessionClient::new(sessionpad::client::Target {
            endpoint,
            api_version: ApiVersion::V2025_10_02,
            token: Some("node-token".into()),
        })
        .unwrap()
        .with_container_type(ContainerType::NodeLts);
        let e = run(
            &c,
            &identifier(),
            "[process.execPath, process.env.PATH.split(':')[0]]",
        )
        .await;
        let want = if sandboxed {
            json!(["/opt/node/bin/node", "/opt/node/bin"])
        } else {
            let bin = std::fs::canonicalize(prefix.join("bin")).unwrap();
            json!([bin.join("node"), bin])
        };
        assert_eq!(value(&e).1, Some(&want), "{e:?}");
        let meta = c.pool_metadata().await.expect("metadata");
        assert_eq!(meta.runtimes[0].name, "node", "{meta:?}");
    });
}
