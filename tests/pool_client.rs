//! The session client against a real local pool with real IPython kernels, in both
//! api-version families.

mod common;

use common::{LIMIT, TestPool, identifier};
use serde_json::json;
use sessionpad::client::{ApiVersion, ClientError, ExecutionStatus, SessionClient, Target};

const VERSIONS: [ApiVersion; 2] = [ApiVersion::V2024_02_02, ApiVersion::V2025_10_02];

#[tokio::test]
async fn state_persists_and_results_are_typed() {
    let pool = TestPool::start().await;
    for version in VERSIONS {
        let client = pool.client(version);
        let id = identifier();
        let set = client.execute(&id, "x = 6*7", LIMIT).await.unwrap();
        assert_eq!(set.status, ExecutionStatus::Succeeded, "{set:?}");
        assert_eq!(set.result, None);
        let printed = client.execute(&id, "print(x)", LIMIT).await.unwrap();
        assert_eq!(printed.stdout, "42\n");
        let value = client.execute(&id, "x", LIMIT).await.unwrap();
        assert_eq!(value.result, Some(json!(42)), "{version}: {value:?}");
        let s = client.execute(&id, "'a' + 'b'", LIMIT).await.unwrap();
        assert_eq!(s.result, Some(json!("ab")));
        let f = client.execute(&id, "x / 4", LIMIT).await.unwrap();
        assert_eq!(f.result, Some(json!(10.5)));
        let l = client.execute(&id, "[1, None, True]", LIMIT).await.unwrap();
        assert_eq!(l.result, Some(json!([1, null, true])));
        let nan = client.execute(&id, "float('nan')", LIMIT).await.unwrap();
        assert_eq!(nan.result, Some(json!("nan")));
    }
}

#[tokio::test]
async fn an_exception_fails_with_its_traceback() {
    let pool = TestPool::start().await;
    for version in VERSIONS {
        let exec = pool
            .client(version)
            .execute(&identifier(), "print('before')\n1/0", LIMIT)
            .await
            .unwrap();
        assert_eq!(exec.status, ExecutionStatus::Failed);
        assert_eq!(exec.stdout, "before\n");
        assert!(exec.stderr.contains("ZeroDivisionError"), "{}", exec.stderr);
        assert!(exec.stderr.contains("Traceback"), "{}", exec.stderr);
        assert!(
            !exec.stderr.contains('\x1b'),
            "no ANSI colours: {:?}",
            exec.stderr
        );
    }
}

#[tokio::test]
async fn a_plot_gives_a_png_that_decodes() {
    let pool = TestPool::start().await;
    for version in VERSIONS {
        let exec = pool
            .client(version)
            .execute(
                &identifier(),
                "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
                LIMIT,
            )
            .await
            .unwrap();
        assert_eq!(exec.status, ExecutionStatus::Succeeded, "{}", exec.stderr);
        assert_eq!(exec.images.len(), 1, "{version}");
        let img = image::load_from_memory(&exec.images[0].data).expect("decodes");
        assert!(img.width() > 100 && img.height() > 100);
    }
}

#[tokio::test]
async fn identifiers_do_not_share_state() {
    let pool = TestPool::start().await;
    let client = pool.client(ApiVersion::V2025_10_02);
    let (a, b) = (identifier(), identifier());
    client.execute(&a, "secret = 1", LIMIT).await.unwrap();
    let other = client.execute(&b, "secret", LIMIT).await.unwrap();
    assert_eq!(other.status, ExecutionStatus::Failed);
    assert!(other.stderr.contains("NameError"), "{}", other.stderr);
    let write =
        "open('/mnt/data/mine.txt', 'w').write('a'); import os; sorted(os.listdir('/mnt/data'))";
    let mine = client.execute(&a, write, LIMIT).await.unwrap();
    assert_eq!(mine.result, Some(json!(["mine.txt"])), "{}", mine.stderr);
    let theirs = client
        .execute(&b, "import os; sorted(os.listdir('/mnt/data'))", LIMIT)
        .await
        .unwrap();
    assert_eq!(
        theirs.result,
        Some(json!([])),
        "each session has its own /mnt/data"
    );
}

#[tokio::test]
async fn a_wrong_token_is_a_401_the_client_explains() {
    let pool = TestPool::start().await;
    let client = SessionClient::new(Target {
        endpoint: pool.pool.endpoint(),
        api_version: ApiVersion::V2025_10_02,
        token: Some("wrong".into()),
    })
    .unwrap();
    let err = client.execute(&identifier(), "1", LIMIT).await.unwrap_err();
    assert!(matches!(err, ClientError::Unauthorized { .. }), "{err}");
    assert!(err.to_string().contains("dynamicsessions.io"));
}

#[tokio::test]
async fn a_bad_identifier_is_a_400_with_the_service_code() {
    let pool = TestPool::start().await;
    let err = pool
        .client(ApiVersion::V2025_10_02)
        .execute("ab", "1", LIMIT)
        .await
        .unwrap_err();
    match err {
        ClientError::Service { status, code, .. } => {
            assert_eq!(status, 400);
            assert_eq!(code, "SessionRequestValidationFailed");
        }
        other => panic!("unexpected {other}"),
    }
}

#[tokio::test]
async fn an_unreachable_endpoint_is_named() {
    let client = SessionClient::new(Target {
        endpoint: "http://127.0.0.1:9".into(),
        api_version: ApiVersion::V2025_10_02,
        token: None,
    })
    .unwrap();
    let err = client.execute("abcd", "1", LIMIT).await.unwrap_err();
    assert!(matches!(err, ClientError::Unreachable { .. }), "{err}");
}
