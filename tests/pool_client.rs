//! The session client against a real local pool with real IPython kernels, in both
//! api-version families.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use common::{LIMIT, TestPool, identifier};
use serde_json::json;
use sessionpad::client::{ClientError, SessionClient, Target};
use sessionpad::protocol::{ApiVersion, Execution, ExecutionStatus};
const VERSIONS: [ApiVersion; 2] = [ApiVersion::V2024_02_02, ApiVersion::V2025_10_02];

/// The value's text (what Python shows) and JSON (when the reply was typed).
fn shown(exec: &Execution) -> (Option<&str>, Option<serde_json::Value>) {
    match &exec.result {
        Some(v) => (Some(v.text.as_str()), v.json.clone()),
        None => (None, None),
    }
}

#[tokio::test]
#[allow(clippy::many_single_char_names)] // one letter per kind of value: s(tr), f(loat), d(ict), l(ist)
async fn state_persists_and_results_read_as_python() {
    let pool = TestPool::start().await;
    for version in VERSIONS {
        let client = pool.client(version);
        let id = identifier();
        let set = client.execute(&id, "x = 6*7", LIMIT).await.unwrap();
        assert_eq!(set.status, ExecutionStatus::Succeeded, "{set:?}");
        assert_eq!(set.result, None);
        let printed = client.execute(&id, "print(x)", LIMIT).await.unwrap();
        assert_eq!(printed.stdout, "42\n");
        // 2024-02-02-preview has no Jupyter format: the JSON value, shown as
        // the Python literal it came from; 2025-10-02-preview asks for
        // Jupyter's text/plain, and the local pool sends the JSON beside it.
        let jupyter = version.has_jupyter_format();
        let value = client.execute(&id, "x", LIMIT).await.unwrap();
        assert_eq!(shown(&value), (Some("42"), Some(json!(42))), "{version}");
        let s = client.execute(&id, "'a' + 'b'", LIMIT).await.unwrap();
        assert_eq!(shown(&s), (Some("'ab'"), Some(json!("ab"))), "{version}");
        let f = client.execute(&id, "x / 4", LIMIT).await.unwrap();
        assert_eq!(shown(&f), (Some("10.5"), Some(json!(10.5))), "{version}");
        let d = client
            .execute(&id, "{'a': 1, 'b': None}", LIMIT)
            .await
            .unwrap();
        assert_eq!(
            shown(&d),
            (
                Some("{'a': 1, 'b': None}"),
                Some(json!({"a": 1, "b": null}))
            ),
            "{version}"
        );
        let l = client.execute(&id, "[1, None, True]", LIMIT).await.unwrap();
        assert_eq!(
            shown(&l),
            (Some("[1, None, True]"), Some(json!([1, null, true]))),
            "{version}"
        );
        let nan = client.execute(&id, "float('nan')", LIMIT).await.unwrap();
        assert_eq!(shown(&nan), (Some("nan"), Some(json!("nan"))), "{version}");
        // A value with no JSON type: its text/plain, never quoted twice.
        let obj = client.execute(&id, "object()", LIMIT).await.unwrap();
        let text = shown(&obj).0.unwrap_or_default().to_string();
        assert!(
            text.starts_with("<object") && text.contains(" at 0x"),
            "{version}: {text}"
        );
        // Only the Jupyter format can tell a tuple from a list, and the string
        // 'nan' from the float.
        let t = client.execute(&id, "(1, 2.5, 'x')", LIMIT).await.unwrap();
        let sn = client.execute(&id, "'nan'", LIMIT).await.unwrap();
        let (tuple, string_nan) = if jupyter {
            ("(1, 2.5, 'x')", "'nan'")
        } else {
            ("[1, 2.5, 'x']", "nan")
        };
        assert_eq!(
            shown(&t),
            (Some(tuple), Some(json!([1, 2.5, "x"]))),
            "{version}"
        );
        assert_eq!(
            shown(&sn),
            (Some(string_nan), Some(json!("nan"))),
            "{version}"
        );
    }
}

#[tokio::test]
async fn every_figure_arrives_next_to_the_value() {
    let pool = TestPool::start().await;
    for version in [
        ApiVersion::V2024_02_02,
        ApiVersion::V2024_10_02,
        ApiVersion::V2025_10_02,
    ] {
        let client = pool.client(version);
        let id = identifier();
        // A figure left open, and the artists as the value.
        let lines = client
            .execute(
                &id,
                "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])",
                LIMIT,
            )
            .await
            .unwrap();
        assert_eq!(lines.status, ExecutionStatus::Succeeded, "{}", lines.stderr);
        let text = shown(&lines).0.unwrap_or_default().to_string();
        assert!(
            text.starts_with("[<matplotlib.lines.Line2D"),
            "{version}: {text}"
        );
        assert_eq!(
            lines.images.len(),
            1,
            "{version}: the figure next to the value"
        );
        // Shown, then a value; then two figures and a value.
        let five = client
            .execute(&id, "plt.plot([1, 2]); plt.show(); 5", LIMIT)
            .await
            .unwrap();
        assert_eq!(shown(&five).0, Some("5"), "{version}");
        assert_eq!(five.images.len(), 1, "{version}");
        let two = client
            .execute(
                &id,
                "plt.plot([1]); plt.show(); plt.plot([2]); plt.show(); 'v'",
                LIMIT,
            )
            .await
            .unwrap();
        assert_eq!(shown(&two).0, Some("'v'"), "{version}");
        assert_eq!(two.images.len(), 2, "{version}");
        for img in two.images.iter().chain(&five.images) {
            image::load_from_memory(&img.data).expect("each figure decodes");
        }
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
    assert_eq!(shown(&mine).0, Some("['mine.txt']"), "{}", mine.stderr);
    let theirs = client
        .execute(&b, "import os; sorted(os.listdir('/mnt/data'))", LIMIT)
        .await
        .unwrap();
    assert_eq!(
        shown(&theirs).0,
        Some("[]"),
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
    // The local pool names itself (`Server: sessionpad/…`): its token is the
    // one serve printed, not an Entra token for Azure's audience (issue 27).
    assert!(
        matches!(
            err,
            ClientError::Unauthorized {
                sessionpad: true,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("the token `sessionpad serve` printed"),
        "{err}"
    );
    assert!(!err.to_string().contains("dynamicsessions.io"), "{err}");
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
