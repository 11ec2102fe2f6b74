//! The local pool's execute and session-management routes, checked on the wire
//! (exact statuses, headers and bodies of `aca-api.md` §3.1, §4.2, §4.4, §5.2, §6).
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::Duration;

use common::{Raw, TestPool, identifier};
use reqwest::Method;
use serde_json::json;

const B10: &str = "2025-10-02-preview";

#[tokio::test]
async fn family_a_envelope_and_result_key_per_version() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let body = json!({"properties": {"codeInputType": "inline", "executionType": "synchronous", "code": "1 + 1"}});
    let (status, _, v) = raw
        .post_json(
            &format!("/code/execute?api-version=2024-02-02-preview&identifier={id}"),
            body.clone(),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(v["$id"], "1");
    assert_eq!(v["properties"]["$id"], "2");
    assert_eq!(v["properties"]["status"], "Success");
    assert_eq!(v["properties"]["result"], 2);
    assert!(v["properties"]["executionTimeInMilliseconds"].is_u64());
    // Later versions on the same path carry executionResult (§3.1 "field name drift").
    let (_, _, v) = raw
        .post_json(
            &format!("/code/execute?identifier={id}&api-version=2024-08-02-preview"),
            body,
        )
        .await;
    assert_eq!(v["properties"]["executionResult"], 2);
    // LlamaIndexTS: pythonCode, identifier in the body, a double slash.
    let (status, _, v) = raw
        .post_json(
            &format!("//code/execute?api-version=2024-02-02-preview&identifier={id}"),
            json!({"properties": {"identifier": id, "pythonCode": "print('ts')"}}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["properties"]["stdout"], "ts\n");
}

#[tokio::test]
async fn family_b_statuses_headers_and_variants() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    for (version, expected) in [
        ("2024-10-02-preview", 202),
        ("2025-02-02-preview", 202),
        (B10, 200),
    ] {
        let resp = raw
            .req(Method::POST, &format!("/executions?api-version={version}&identifier={id}"))
            .header("operation-id", format!("op-{version}"))
            .json(&json!({"codeInputType": "Inline", "executionType": "Synchronous", "code": "print(7*9)"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), expected, "{version}");
        assert_eq!(
            resp.headers()["operation-id"],
            format!("op-{version}").as_str()
        );
        assert!(
            resp.headers()["operation-location"]
                .to_str()
                .unwrap()
                .starts_with("/executions/op-")
        );
        let v: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(v["id"], format!("op-{version}"));
        assert_eq!(v["identifier"], id);
        assert_eq!(v["status"], "Succeeded");
        assert_eq!(v["result"]["stdout"], "63\n");
        assert_eq!(v["result"]["executionResult"], "");
    }
    // Omitted timeoutInSeconds and enums, percent-encoded identifier, query order.
    let odd = "odd|id#1&x=y";
    let enc: String = url::form_urlencoded::byte_serialize(odd.as_bytes()).collect();
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?identifier={enc}&api-version={B10}"),
            json!({"code": "6*7"}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["identifier"], odd);
    assert_eq!(v["result"]["executionResult"], 42);
    // InlineBase64: "print('b64')".
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"codeInputType": "InlineBase64", "code": "cHJpbnQoJ2I2NCcp"}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["result"]["stdout"], "b64\n");
}

#[tokio::test]
async fn errors_have_azure_codes() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let (status, headers, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"properties": {"code": "1"}}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(v["error"]["code"], "SessionPropertiesMissing");
    assert_eq!(headers["x-ms-error-code"], "SessionPropertiesMissing");
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier=x"),
            json!({"code": "1"}),
        )
        .await;
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (400, Some("SessionRequestValidationFailed"))
    );
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?identifier={id}"),
            json!({"code": "1"}),
        )
        .await;
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (400, Some("SessionRequestValidationFailed"))
    );
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?api-version=1999-01-01&identifier={id}"),
            json!({"code": "1"}),
        )
        .await;
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (400, Some("SessionRequestValidationFailed"))
    );
    let resp = reqwest::Client::new()
        .post(format!(
            "{}/executions?api-version={B10}&identifier={id}",
            raw.endpoint
        ))
        .json(&json!({"code": "1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    assert_eq!(resp.headers()["x-ms-error-code"], "Unauthorized");
    // The pool names itself on a 401, so a client says to use the token
    // serve printed rather than Azure's audience (issue 27 item 18).
    let server = resp.headers()["server"].to_str().unwrap();
    assert!(server.starts_with("sessionpad/"), "{server}");
}

#[tokio::test]
async fn asynchronous_execution_is_polled_to_completion() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let resp = raw
        .req(Method::POST, &format!("/executions?api-version=2024-10-02-preview&identifier={id}"))
        .json(&json!({"codeInputType": "inline", "executionType": "Asynchronous", "code": "import time\ntime.sleep(1)\nprint('async done')", "timeoutInSeconds": 100}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 202);
    let location = resp.headers()["operation-location"]
        .to_str()
        .unwrap()
        .to_string();
    let v: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(v["status"], "Running");
    let mut last = json!(null);
    for _ in 0..100 {
        let (status, v) = raw.call(Method::GET, &location).await;
        assert_eq!(status, 200, "{v}");
        if v["status"] == "Succeeded" {
            last = v;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last["result"]["stdout"], "async done\n", "{last}");
    let (status, v) = raw
        .call(
            Method::GET,
            &format!("/executions/nope?api-version={B10}&identifier={id}"),
        )
        .await;
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (404, Some("ExecutionNotFound"))
    );
}

#[tokio::test]
async fn sessions_are_listed_shown_and_ended() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    raw.post_json(
        &format!("/executions?api-version={B10}&identifier={id}"),
        json!({"code": "a = 1"}),
    )
    .await;
    let (status, s) = raw
        .call(
            Method::GET,
            &format!("/session?api-version={B10}&identifier={id}"),
        )
        .await;
    assert_eq!(status, 200);
    for key in [
        "identifier",
        "createdAt",
        "lastAccessedAt",
        "expireAt",
        "etag",
    ] {
        assert!(s.get(key).is_some(), "{key} in {s}");
    }
    let (_, list) = raw
        .call(Method::GET, &format!("/listSessions?api-version={B10}"))
        .await;
    assert!(
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["identifier"] == id)
    );
    let (_, _, view) = raw
        .post_json(
            &format!("/.management/getSession?api-version=2025-02-02-preview&identifier={id}"),
            json!({}),
        )
        .await;
    assert!(view.get("expiresAt").is_some(), "{view}");
    let (_, _, mlist) = raw
        .post_json(
            "/.management/listSessions?api-version=2025-02-02-preview",
            json!({}),
        )
        .await;
    assert_eq!(mlist["count"], 1);
    let (status, _) = raw
        .call(
            Method::DELETE,
            &format!("/session?api-version={B10}&identifier={id}"),
        )
        .await;
    assert_eq!(status, 204);
    let (status, v) = raw
        .call(
            Method::GET,
            &format!("/session?api-version={B10}&identifier={id}"),
        )
        .await;
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (400, Some("SessionWithIdentifierNotFound"))
    );
    let (status, _, v) = raw
        .post_json(
            &format!("/.management/stopSession?api-version=2025-02-02-preview&identifier={id}"),
            json!({}),
        )
        .await;
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (400, Some("SessionWithIdentifierNotFound"))
    );
    // A new session under the same identifier starts with no state.
    let (_, _, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"code": "a"}),
        )
        .await;
    assert_eq!(v["status"], "Failed");
    assert!(
        v["result"]["stderr"]
            .as_str()
            .unwrap()
            .contains("NameError")
    );
    let (status, _, stopped) = raw
        .post_json(
            &format!("/.management/stopSession?api-version=2025-02-02-preview&identifier={id}"),
            json!({}),
        )
        .await;
    assert_eq!(status, 200);
    assert!(stopped.as_str().unwrap().contains("stopped"));
}

#[tokio::test]
async fn metadata_reads_the_real_environment() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let (status, m) = raw
        .call(Method::GET, &format!("/metadata?api-version={B10}"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(m["runtimes"][0]["name"], "python");
    assert!(
        m["runtimes"][0]["version"]
            .as_str()
            .unwrap()
            .starts_with('3')
    );
    let pkgs = m["preInstalledPackages"].as_array().unwrap();
    for name in ["numpy", "pandas", "matplotlib", "ipykernel"] {
        assert!(
            pkgs.iter()
                .any(|p| p["name"].as_str().unwrap().eq_ignore_ascii_case(name)),
            "{name}"
        );
    }
}

/// `sessionpadIsolation` is the pool's isolation as in force (sessionpad's own
/// field beside §4.4's), and the client reads it whatever api-version it speaks.
#[tokio::test]
async fn metadata_says_how_sessions_are_isolated() {
    let pool = TestPool::start_with(|o| {
        o.sandbox = false;
        o.ready_sessions = 0;
    })
    .await;
    let raw = Raw::new(&pool);
    let (status, m) = raw
        .call(Method::GET, &format!("/metadata?api-version={B10}"))
        .await;
    assert_eq!(status, 200);
    let iso = pool.pool.isolation();
    assert!(!iso.is_sandboxed());
    assert_eq!(
        m[sessionpad::protocol::isolation::METADATA_FIELD],
        serde_json::to_value(iso).unwrap()
    );
    // An api-version without `metadata` asks with one that has it.
    let read = pool
        .client(sessionpad::protocol::ApiVersion::V2024_08_02)
        .local_pool_isolation()
        .await
        .unwrap();
    assert_eq!(read.as_ref(), Some(iso));
}

#[tokio::test]
async fn a_full_pool_answers_404_or_429() {
    for status in [404, 429] {
        let pool = TestPool::start_with(|o| {
            o.max_sessions = 1;
            o.pool_full_status = status;
            o.ready_sessions = 0;
        })
        .await;
        let raw = Raw::new(&pool);
        let (first, _, _) = raw
            .post_json(
                &format!("/executions?api-version={B10}&identifier={}", identifier()),
                json!({"code": "1"}),
            )
            .await;
        assert_eq!(first, 200);
        let (second, headers, _) = raw
            .post_json(
                &format!("/executions?api-version={B10}&identifier={}", identifier()),
                json!({"code": "1"}),
            )
            .await;
        assert_eq!(second, status);
        assert!(headers.contains_key("x-ms-error-code"));
    }
}

#[tokio::test]
async fn idle_sessions_end_after_the_cooldown() {
    let pool = TestPool::start_with(|o| {
        o.cooldown = Duration::from_secs(1);
        o.ready_sessions = 0;
    })
    .await;
    let raw = Raw::new(&pool);
    let id = identifier();
    raw.post_json(
        &format!("/executions?api-version={B10}&identifier={id}"),
        json!({"code": "1"}),
    )
    .await;
    let folders = || pool.session_folders();
    assert_eq!(folders(), 1);
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let (status, _) = raw
        .call(
            Method::GET,
            &format!("/session?api-version={B10}&identifier={id}"),
        )
        .await;
    assert_eq!(status, 400, "the session ended");
    assert_eq!(folders(), 0, "its folder is gone");
}

/// The spec's examples of `returnJupyterFormatExecutionResult` (2025-10-02-preview,
/// azure-rest-api-specs `specification/app/data-plane/DynamicSessions`,
/// `CodeExecution_Execute_Result_{NaN,StringNaN}{,_JupyterFormat}.json`): with
/// the field the value is Jupyter's text/plain string, without it the JSON
/// value; a cell whose value is None (IPython publishes no result for it)
/// answers "" as a cell without a value does.
#[tokio::test]
async fn the_jupyter_format_answers_text_plain_as_the_spec_examples_show() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let run = |code: &str, jupyter: Option<bool>| {
        let mut body = json!({"codeInputType": "Inline", "executionType": "Synchronous", "code": code, "timeoutInSeconds": 60, "outputStreamsMaxLength": 4096});
        if let Some(j) = jupyter {
            body["returnJupyterFormatExecutionResult"] = json!(j);
        }
        body
    };
    let path = format!("/executions?api-version={B10}&identifier={id}");
    for (code, jupyter, expected) in [
        ("a = float('nan');a", Some(true), json!("nan")),
        ("a = \"nan\";a", Some(true), json!("'nan'")),
        ("a = None;a", Some(true), json!("")),
        (
            "{'a': 1, 'b': None}",
            Some(true),
            json!("{'a': 1, 'b': None}"),
        ),
        ("(1, 2.5, 'x')", Some(true), json!("(1, 2.5, 'x')")),
        ("6*7", Some(true), json!("42")),
        // Not asked, or asked false: the JSON value, as before.
        ("a = float('nan');a", None, json!("nan")),
        ("a = \"nan\";a", None, json!("nan")),
        (
            "{'a': 1, 'b': None}",
            Some(false),
            json!({"a": 1, "b": null}),
        ),
        ("6*7", None, json!(42)),
    ] {
        let (status, _, v) = raw.post_json(&path, run(code, jupyter)).await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["status"], "Succeeded", "{code}: {v}");
        assert_eq!(
            v["result"]["executionResult"], expected,
            "{code} {jupyter:?}"
        );
    }
    // Earlier versions do not have the field: it is ignored.
    let (_, _, v) = raw
        .post_json(
            &format!("/executions?api-version=2025-02-02-preview&identifier={id}"),
            run("{'a': None}", Some(true)),
        )
        .await;
    assert_eq!(v["result"]["executionResult"], json!({"a": null}));
    // An asynchronous execution is read back in the form it was asked in.
    let mut body = run("(1, None)", Some(true));
    body["executionType"] = json!("Asynchronous");
    let (status, headers, _) = raw.post_json(&path, body).await;
    assert_eq!(status, 202);
    let op = headers["operation-id"].to_str().unwrap().to_string();
    let done = loop {
        let (_, v) = raw
            .call(
                Method::GET,
                &format!("/executions/{op}?api-version={B10}&identifier={id}"),
            )
            .await;
        if v["status"] != "Running" {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(done["result"]["executionResult"], json!("(1, None)"));
}

/// A cell that shows figures and ends with a value: the service's fields carry
/// the value (`aca-api.md` §3.1 has an image only where there is no value);
/// sessionpad's client asks with `x-sessionpad-outputs: all` and gets every
/// figure in `sessionpadImages` too, in both families. Without the header the
/// answer is the service's shape, unchanged.
#[tokio::test]
async fn every_figure_travels_beside_the_value_when_asked() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let code = "import matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show(); plt.plot([3]); plt.show(); 5";
    let b = |header: bool| {
        let req = raw
            .req(
                Method::POST,
                &format!("/executions?api-version={B10}&identifier={id}"),
            )
            .json(&json!({"code": code, "returnJupyterFormatExecutionResult": true}));
        if header {
            req.header("x-sessionpad-outputs", "all")
        } else {
            req
        }
    };
    let plain: serde_json::Value = b(false).send().await.unwrap().json().await.unwrap();
    assert_eq!(plain["result"]["executionResult"], "5", "{plain}");
    assert!(plain["result"].get("sessionpadImages").is_none(), "{plain}");
    let all: serde_json::Value = b(true).send().await.unwrap().json().await.unwrap();
    assert_eq!(all["result"]["executionResult"], "5");
    let images = all["result"]["sessionpadImages"]
        .as_array()
        .expect("the images");
    assert_eq!(images.len(), 2, "{all}");
    for img in images {
        assert_eq!(img["type"], "image");
        assert_eq!(img["format"], "png");
        assert!(img["base64_data"].as_str().is_some_and(|b| b.len() > 100));
    }
    // Family A: the same member in `properties`.
    let body = json!({"properties": {"codeInputType": "inline", "executionType": "synchronous", "code": code}});
    let a: serde_json::Value = raw
        .req(
            Method::POST,
            &format!("/code/execute?api-version=2024-02-02-preview&identifier={id}"),
        )
        .header("x-sessionpad-outputs", "all")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(a["properties"]["result"], 5);
    assert_eq!(
        a["properties"]["sessionpadImages"].as_array().map(Vec::len),
        Some(2)
    );
    let (_, _, a) = raw
        .post_json(
            &format!("/code/execute?api-version=2024-02-02-preview&identifier={id}"),
            body,
        )
        .await;
    assert!(a["properties"].get("sessionpadImages").is_none(), "{a}");
    // A figure and no value: the §3.1 image object stands in for the value.
    let (_, _, v) = raw
        .post_json(
            &format!("/code/execute?api-version=2024-02-02-preview&identifier={id}"),
            json!({"properties": {"code": "plt.plot([1]); plt.show()"}}),
        )
        .await;
    assert_eq!(v["properties"]["result"]["type"], "image", "{v}");
}

/// `useEmptyKernel` (2025-10-02-preview, `aca-api.md` §13: "Use a kernel
/// without preloaded libraries (faster startup)"): the local pool's kernels
/// preload no libraries, so `true` and `false` run alike in such a kernel
/// (nothing beyond Python's start-up and IPython is imported: numpy, pandas
/// and matplotlib are not in `sys.modules` until a cell imports them), a
/// value that is not a boolean is refused with the service's 400, and the
/// metadata says the kernels preload nothing.
#[tokio::test]
async fn use_empty_kernel_is_accepted_checked_and_true_of_every_kernel() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let path = format!("/executions?api-version={B10}&identifier={id}");
    let code =
        "import sys; sorted(m for m in ('numpy', 'pandas', 'matplotlib') if m in sys.modules)";
    for empty in [json!(true), json!(false)] {
        let (status, _, v) = raw
            .post_json(
                &path,
                json!({"code": code, "timeoutInSeconds": 60, "useEmptyKernel": empty}),
            )
            .await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["status"], "Succeeded", "{v}");
        assert_eq!(v["result"]["executionResult"], json!([]), "{empty}: {v}");
    }
    let (status, _, v) = raw
        .post_json(
            &path,
            json!({"code": "1", "timeoutInSeconds": 60, "useEmptyKernel": "yes"}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    let text = v.to_string();
    assert!(
        text.contains("SessionRequestValidationFailed") && text.contains("boolean"),
        "{text}"
    );
    let (status, meta) = raw
        .call(
            reqwest::Method::GET,
            &format!("/metadata?api-version={B10}"),
        )
        .await;
    assert_eq!(status, 200, "{meta}");
    let described = meta["jupyterKernel"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(described.contains("no libraries preloaded"), "{meta}");
}
