//! Interrupting a running execution of the local pool from outside the execution
//! (what the embedded TUI does for a cell the user stops): the registry reaches
//! the kernel's control channel without waiting for the execution lock, the cell
//! ends with a `KeyboardInterrupt` and the session keeps its state.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::{Duration, Instant};

use common::{TestPool, identifier};
use serde_json::json;
use sessionpad::protocol::{ApiVersion, ExecutionStatus};
#[tokio::test]
async fn interrupt_stops_the_running_cell_and_keeps_the_state() {
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    assert!(
        !pool.pool.registry().interrupt(&id).await,
        "no session yet: nothing to interrupt"
    );
    client
        .execute(&id, "kept = 5", common::LIMIT)
        .await
        .unwrap();
    let (c, i) = (client.clone(), id.clone());
    let started = Instant::now();
    let slow = tokio::spawn(async move {
        c.execute(&i, "import time\ntime.sleep(60)", common::LIMIT)
            .await
    });
    // Let the kernel start the sleep (the request travels over HTTP first).
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        pool.pool.registry().interrupt(&id).await,
        "the kernel acknowledged"
    );
    let exec = slow.await.unwrap().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "stopped, not waited out"
    );
    assert_eq!(exec.status, ExecutionStatus::Failed);
    assert!(exec.stderr.contains("KeyboardInterrupt"), "{}", exec.stderr);
    let after = client.execute(&id, "kept", common::LIMIT).await.unwrap();
    assert_eq!(
        after.result.clone().and_then(|v| v.json),
        Some(json!(5)),
        "the session kept its state"
    );
}

#[tokio::test]
async fn the_interrupt_route_reaches_a_pool_in_another_process() {
    // What the notebook uses on the background local pool: the same interrupt
    // through `POST .sessionpad/interrupt`, behind the bearer token.
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    match client.interrupt_local(&id).await {
        Err(sessionpad::client::ClientError::Service { status, code, .. }) => {
            assert_eq!(
                (status, code.as_str()),
                (400, "SessionWithIdentifierNotFound")
            );
        }
        other => panic!("an unknown session is not found: {other:?}"),
    }
    client
        .execute(&id, "kept = 6", common::LIMIT)
        .await
        .unwrap();
    let (c, i) = (client.clone(), id.clone());
    let slow = tokio::spawn(async move {
        c.execute(&i, "import time\ntime.sleep(60)", common::LIMIT)
            .await
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        client.interrupt_local(&id).await.unwrap(),
        "the kernel acknowledged"
    );
    let exec = slow.await.unwrap().unwrap();
    assert_eq!(exec.status, ExecutionStatus::Failed);
    assert!(exec.stderr.contains("KeyboardInterrupt"), "{}", exec.stderr);
    let after = client.execute(&id, "kept", common::LIMIT).await.unwrap();
    assert_eq!(after.result.and_then(|v| v.json), Some(json!(6)));
    // Without the pool's token: 401, nothing interrupted.
    let anonymous = sessionpad::client::SessionClient::new(sessionpad::client::Target {
        endpoint: pool.pool.endpoint(),
        api_version: ApiVersion::V2025_10_02,
        token: None,
    })
    .unwrap();
    assert!(matches!(
        anonymous.interrupt_local(&id).await,
        Err(sessionpad::client::ClientError::Unauthorized { .. })
    ));
}
