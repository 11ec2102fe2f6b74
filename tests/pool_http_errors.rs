//! Every error of the local pool has Azure's shape (`aca-api.md` §6.1: a JSON
//! `{"error":{"code","message"}}` body and the `x-ms-error-code` header), also
//! where axum's extractors or router answer (body too large, bad path, unknown
//! route, wrong method); and the request log cannot be forged by what a client
//! sends.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::io::{Read, Write};

use common::{Raw, TestPool, identifier};
use reqwest::Method;

const B10: &str = "2025-10-02-preview";

/// Checks an answer has `status` and Azure's error shape; returns its code.
async fn azure_error(resp: reqwest::Response, status: u16) -> String {
    assert_eq!(resp.status().as_u16(), status);
    let header = resp
        .headers()
        .get("x-ms-error-code")
        .map(|v| v.to_str().unwrap().to_string());
    let kind = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string());
    let text = resp.text().await.unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({kind:?}): {text:?}"));
    let code = v["error"]["code"].as_str().expect("error.code").to_string();
    assert!(v["error"]["message"].is_string(), "{v}");
    assert_eq!(header.as_deref(), Some(code.as_str()), "x-ms-error-code");
    assert_eq!(kind.as_deref(), Some("application/json"));
    code
}

#[tokio::test]
async fn an_execution_body_over_the_limit_gets_azures_error() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let code = format!("x = '{}'", "a".repeat(3 * 1024 * 1024));
    for path in [
        format!("/executions?api-version={B10}&identifier={id}"),
        format!("/code/execute?api-version=2024-02-02-preview&identifier={id}"),
    ] {
        let resp = raw
            .req(Method::POST, &path)
            .json(&serde_json::json!({"code": code}))
            .send()
            .await
            .unwrap();
        let code = azure_error(resp, 413).await;
        assert_eq!(code, "RequestBodyTooLarge");
    }
}

#[tokio::test]
async fn router_and_extractor_rejections_get_azures_error() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    // Path: not UTF-8 once percent-decoded.
    let resp = raw
        .req(
            Method::GET,
            &format!("/executions/%FF%FE?api-version={B10}&identifier={id}"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        azure_error(resp, 400).await,
        "SessionRequestValidationFailed"
    );
    // No such route.
    let resp = raw
        .req(Method::GET, &format!("/nowhere?api-version={B10}"))
        .send()
        .await
        .unwrap();
    assert_eq!(azure_error(resp, 404).await, "NotFound");
    // A route without that method.
    let resp = raw
        .req(
            Method::PUT,
            &format!("/executions?api-version={B10}&identifier={id}"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(azure_error(resp, 405).await, "MethodNotAllowed");
    // Query: not UTF-8, and a lone `%`.
    let resp = raw
        .req(
            Method::GET,
            &format!("/session?api-version={B10}&identifier=%FF%FF%FF%FF"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        azure_error(resp, 400).await,
        "SessionRequestValidationFailed"
    );
    // JSON that is not an object of the right types.
    let resp = raw
        .req(
            Method::POST,
            &format!("/executions?api-version={B10}&identifier={id}"),
        )
        .header("content-type", "application/json")
        .body("{\"code\": 5}")
        .send()
        .await
        .unwrap();
    assert_eq!(
        azure_error(resp, 400).await,
        "SessionRequestValidationFailed"
    );
}

/// A request whose identifier holds a newline and an escape sequence leaves one
/// log line, with both escaped.
#[test]
fn the_request_log_escapes_what_the_client_sent() {
    let data = tempfile::tempdir().unwrap();
    let token = "log-token-1234";
    let mut cmd = common::serve_command(data.path(), token, 0);
    cmd.env("SESSIONPAD_LOG", "info")
        .stderr(std::process::Stdio::piped());
    let (mut child, endpoint) = common::spawn_serve(cmd);
    let forged = "abcd\n2026-01-01T00:00:00Z  INFO sessionpad::pool::requests: FORGED\u{1b}[2J";
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("api-version", B10)
        .append_pair("identifier", forged)
        .finish();
    let addr = endpoint.trim_start_matches("http://");
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    write!(
        conn,
        "GET /session%0AFAKE?{query} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    common::end_gracefully(&mut child);
    let out = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    eprintln!("{log}");
    assert!(
        !log.contains('\u{1b}'),
        "an escape sequence reached the log"
    );
    let request_lines: Vec<&str> = log.lines().filter(|l| l.contains("FORGED")).collect();
    assert_eq!(request_lines.len(), 1, "{log}");
    assert!(
        request_lines[0].contains("sessionpad::pool::requests")
            && request_lines[0].contains(r"abcd\n2026")
            && request_lines[0].contains(r"\u{1b}[2J"),
        "{}",
        request_lines[0]
    );
}
