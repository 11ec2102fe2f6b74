//! Faults and isolation of the local pool with real kernels: timeouts interrupt
//! (then kill) the kernel, a dying kernel fails one execution and is replaced,
//! and sandboxed sessions have no network and a read-only root.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::{Duration, Instant};

use common::{TestPool, identifier};
use serde_json::json;
use sessionpad::protocol::{ApiVersion, ExecutionStatus};
#[tokio::test]
async fn a_timeout_interrupts_and_keeps_the_state() {
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    client
        .execute(&id, "kept = 5", common::LIMIT)
        .await
        .unwrap();
    let started = Instant::now();
    let exec = client
        .execute(&id, "import time\ntime.sleep(60)", Duration::from_secs(1))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "answered, not hung"
    );
    assert_eq!(exec.status, ExecutionStatus::Failed);
    assert!(exec.stderr.contains("timed out"), "{}", exec.stderr);
    // It says what became of the code (issue 27 item 6: only `timed out`).
    assert!(
        exec.stderr
            .contains("the code was stopped at its 1 s limit (interrupted)"),
        "{}",
        exec.stderr
    );
    let after = client.execute(&id, "kept", common::LIMIT).await.unwrap();
    assert_eq!(
        after.result.clone().and_then(|v| v.json),
        Some(json!(5)),
        "an interrupted kernel keeps its state"
    );
}

#[tokio::test]
async fn code_that_ignores_interrupts_is_killed_and_replaced() {
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    let stubborn = "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass";
    let exec = client
        .execute(&id, stubborn, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(exec.status, ExecutionStatus::Failed);
    assert!(exec.stderr.contains("timed out"), "{}", exec.stderr);
    assert!(
        exec.stderr
            .contains("it ignored the interrupt, so its kernel was ended"),
        "{}",
        exec.stderr
    );
    let next = client.execute(&id, "6*7", common::LIMIT).await.unwrap();
    assert_eq!(
        next.result.clone().and_then(|v| v.json),
        Some(json!(42)),
        "{}",
        next.stderr
    );
}

#[tokio::test]
async fn a_dying_kernel_fails_once_then_a_fresh_one_runs() {
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2024_02_02);
    let id = identifier();
    client
        .execute(&id, "lost = 1", common::LIMIT)
        .await
        .unwrap();
    for code in [
        "import os; os._exit(1)",
        "import ctypes; ctypes.string_at(0)",
    ] {
        let exec = client.execute(&id, code, common::LIMIT).await.unwrap();
        assert_eq!(exec.status, ExecutionStatus::Failed, "{code}");
        assert!(
            exec.stderr.contains("kernel died"),
            "{code}: {}",
            exec.stderr
        );
        let next = client.execute(&id, "1 + 1", common::LIMIT).await.unwrap();
        assert_eq!(
            next.result.clone().and_then(|v| v.json),
            Some(json!(2)),
            "{}",
            next.stderr
        );
    }
    let gone = client.execute(&id, "lost", common::LIMIT).await.unwrap();
    assert!(gone.stderr.contains("NameError"));
}

#[tokio::test]
async fn sandboxed_sessions_have_no_network_and_a_read_only_root() {
    let pool = TestPool::start().await;
    if !pool.pool.registry().sandboxed() {
        assert!(
            !pool.pool.warnings().is_empty(),
            "without a sandbox the pool warns"
        );
        common::sandbox_tests_skipped(&pool.pool.warnings().join("; "));
        return;
    }
    assert!(
        pool.pool.registry().sandboxed(),
        "warnings: {:?}",
        pool.pool.warnings()
    );
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    let port = pool.pool.addr().port();
    let net = format!(
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    r = 'connected'\nexcept OSError as e:\n    r = 'blocked'\nr"
    );
    let exec = client.execute(&id, &net, common::LIMIT).await.unwrap();
    assert_eq!(
        exec.result.clone().and_then(|v| v.json),
        Some(json!("blocked")),
        "{}",
        exec.stderr
    );
    let ro = client
        .execute(&id, "try:\n    open('/usr/sessionpad-escape', 'w')\n    r = 'wrote'\nexcept OSError as e:\n    r = e.strerror\nr", common::LIMIT)
        .await
        .unwrap();
    assert_eq!(
        ro.result.clone().and_then(|v| v.json),
        Some(json!("Read-only file system")),
        "{}",
        ro.stderr
    );
    let home = client
        .execute(
            &id,
            "open('/tmp/t', 'w').write('x'); open('/mnt/data/a.txt', 'w').write('hi')",
            common::LIMIT,
        )
        .await
        .unwrap();
    assert_eq!(home.status, ExecutionStatus::Succeeded, "{}", home.stderr);
    let session = pool.pool.registry().get(&id).unwrap();
    assert_eq!(
        std::fs::read_to_string(pool.pool.registry().files_of(&session).join("a.txt")).unwrap(),
        "hi"
    );
}

#[tokio::test]
async fn without_a_sandbox_mnt_data_maps_to_the_session_folder() {
    let pool = TestPool::start_with(|o| o.sandbox = false).await;
    assert!(
        pool.pool
            .warnings()
            .iter()
            .any(|w| w.contains("NOT isolated"))
    );
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    let code = "import os, pathlib\nos.makedirs('/mnt/data/sub', exist_ok=True)\nopen('/mnt/data/sub/x.txt', 'w').write('mapped')\n[pathlib.Path('/mnt/data/sub/x.txt').read_text(), sorted(os.listdir('/mnt/data'))]";
    let exec = client.execute(&id, code, common::LIMIT).await.unwrap();
    assert_eq!(
        exec.result.clone().and_then(|v| v.json),
        Some(json!(["mapped", ["sub"]])),
        "{}",
        exec.stderr
    );
    let session = pool.pool.registry().get(&id).unwrap();
    assert_eq!(
        std::fs::read_to_string(pool.pool.registry().files_of(&session).join("sub/x.txt")).unwrap(),
        "mapped"
    );
}

#[tokio::test]
async fn executions_in_one_session_queue_one_at_a_time() {
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    client.execute(&id, "v = 0", common::LIMIT).await.unwrap();
    let (c1, id1) = (client.clone(), id.clone());
    let slow = tokio::spawn(async move {
        c1.execute(&id1, "import time\ntime.sleep(1)\nv = 1", common::LIMIT)
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Sent while the first runs: it waits its turn and sees the first's result.
    let second = client.execute(&id, "v", common::LIMIT).await.unwrap();
    assert_eq!(
        second.result.clone().and_then(|v| v.json),
        Some(json!(1)),
        "{}",
        second.stderr
    );
    assert!(slow.await.unwrap().unwrap().succeeded());
}

/// `DELETE session` while the session executes ends it now: the kernel is
/// killed, the running execution reports it, and the next execution of the
/// identifier starts a fresh session. (Before, the delete waited for the code
/// to finish: here, ten minutes.)
#[tokio::test]
async fn deleting_a_busy_session_ends_it_at_once() {
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    client
        .execute(&id, "kept = 1", common::LIMIT)
        .await
        .unwrap();
    let (c1, id1) = (client.clone(), id.clone());
    let busy = tokio::spawn(async move {
        c1.execute(
            &id1,
            "import time\ntime.sleep(600)",
            Duration::from_secs(600),
        )
        .await
    });
    // Wait until the execution runs (the session says it was used since).
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A hang detector, not a speed check: the code would run for ten minutes.
    tokio::time::timeout(Duration::from_secs(60), client.delete_session(&id))
        .await
        .expect("the delete does not wait for the running code")
        .unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(60), busy)
        .await
        .expect("the running execution ends with its kernel")
        .unwrap()
        .unwrap();
    assert_eq!(ended.status, ExecutionStatus::Failed);
    let fresh = client
        .execute(&id, "'kept' in globals()", common::LIMIT)
        .await
        .unwrap();
    assert_eq!(
        fresh.result.clone().and_then(|v| v.json),
        Some(json!(false)),
        "{}",
        fresh.stderr
    );
}
