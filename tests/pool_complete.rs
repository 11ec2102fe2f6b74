//! Tab completion (issue 27 item 1): the local pool's `/.sessionpad/complete`
//! answers from the session's real kernel (`complete_request`), a busy kernel
//! answers at once without disturbing the running cell, and a pool without the
//! route (the service answers 404) is told apart as "no completion".
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::Duration;

use common::{TestPool, identifier};
use sessionpad::client::{ClientError, SessionClient, Target};
use sessionpad::protocol::{ApiVersion, ExecutionStatus};

#[tokio::test]
async fn the_kernel_completes_a_dataframe_method() {
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    match client.complete(&id, "x", 1).await {
        Err(ClientError::Service { status, code, .. }) => {
            assert_eq!(
                (status, code.as_str()),
                (400, "SessionWithIdentifierNotFound")
            );
        }
        other => panic!("an unknown session is not found: {other:?}"),
    }
    client
        .execute(
            &id,
            "import pandas as pd\ndf = pd.DataFrame({'a': [1]})",
            common::LIMIT,
        )
        .await
        .unwrap();
    // Cursor in code points: the "é" before it counts once.
    let code = "s = 'é'; df.gr";
    let cursor = code.chars().count();
    let got = client.complete(&id, code, cursor).await.unwrap();
    assert!(
        applied(code, &got)
            .iter()
            .any(|t| t == "s = 'é'; df.groupby"),
        "{got:?}"
    );
    assert_eq!(got.cursor_end, cursor);
    assert!(!got.busy);
    // Completion ran no code: the next cell still sees the state, and no
    // variable `s` was made.
    let after = client
        .execute(&id, "'s' in dir(), len(df)", common::LIMIT)
        .await
        .unwrap();
    assert_eq!(after.status, ExecutionStatus::Succeeded);
    assert_eq!(
        after.result.and_then(|v| v.json),
        Some(serde_json::json!([false, 1]))
    );
}

#[tokio::test]
async fn a_busy_kernel_answers_at_once_and_the_cell_keeps_its_output() {
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    client
        .execute(&id, "import os", common::LIMIT)
        .await
        .unwrap();
    let (c, i) = (client.clone(), id.clone());
    let slow = tokio::spawn(async move {
        c.execute(
            &i,
            "import time\nprint('before')\ntime.sleep(3)\nprint('after')",
            common::LIMIT,
        )
        .await
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let got = client.complete(&id, "os.pa", 5).await.unwrap();
    assert!(got.busy, "{got:?}");
    assert!(got.matches.is_empty());
    let exec = slow.await.unwrap().unwrap();
    assert_eq!(exec.status, ExecutionStatus::Succeeded);
    assert_eq!(exec.stdout, "before\nafter\n");
    let idle = client.complete(&id, "os.pa", 5).await.unwrap();
    assert!(
        applied("os.pa", &idle).iter().any(|t| t == "os.path"),
        "{idle:?}"
    );
}

#[tokio::test]
async fn a_pool_without_the_route_has_no_completion() {
    // What the service answers for a path it does not have.
    let app = axum::Router::new()
        .fallback(|| async { (axum::http::StatusCode::NOT_FOUND, "Resource not found") });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let client = SessionClient::new(Target {
        endpoint: format!("http://{addr}"),
        api_version: ApiVersion::V2025_10_02,
        token: None,
    })
    .unwrap();
    let got = client.complete("some-id", "os.pa", 5).await;
    assert!(matches!(got, Err(ClientError::NoCompletion)), "{got:?}");
    server.abort();
}

/// `code` with each candidate put in place of `code[cursorStart..cursorEnd]`
/// (code points).
fn applied(code: &str, got: &sessionpad::protocol::Completion) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let head: String = chars[..got.cursor_start].iter().collect();
    let tail: String = chars[got.cursor_end..].iter().collect();
    got.matches
        .iter()
        .map(|m| format!("{head}{m}{tail}"))
        .collect()
}

#[tokio::test]
async fn a_shell_pool_has_no_completion() {
    // Its kernel is the Python that hosts the shell runner: its completions
    // would be Python's, not the shell's.
    let pool = TestPool::start_as(sessionpad::protocol::ContainerType::Shell).await;
    let client = pool
        .client(ApiVersion::V2025_10_02)
        .with_container_type(sessionpad::protocol::ContainerType::Shell);
    let got = client.complete(&identifier(), "ec", 2).await;
    assert!(matches!(got, Err(ClientError::NoCompletion)), "{got:?}");
}
