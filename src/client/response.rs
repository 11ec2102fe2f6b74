//! Turning HTTP responses into results: status codes and Azure error bodies
//! (`{"error":{"code","message"}}` plus `x-ms-error-code`, `aca-api.md` §6) become
//! [`ClientError`] variants.

use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, Utc};
use reqwest::{Response, StatusCode};
use serde_json::Value;

use super::error::ClientError;

/// Passes a 2xx response through and maps anything else to a [`ClientError`].
pub(crate) async fn check(resp: Response) -> Result<Response, ClientError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    let header_code = resp
        .headers()
        .get("x-ms-error-code")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let retry_after = super::retry::retry_after(resp.headers());
    let sessionpad = from_sessionpad(resp.headers());
    let body = resp.text().await.unwrap_or_default();
    let (body_code, body_message) = parse_error_body(&body);
    let message = body_message.or_else(|| {
        let t = body.trim();
        (!t.is_empty()).then(|| t.chars().take(300).collect())
    });
    Err(match status {
        StatusCode::UNAUTHORIZED => ClientError::Unauthorized {
            // A serve that predates its `Server` header says its own words.
            sessionpad: sessionpad
                || matches!(
                    message.as_deref(),
                    Some(crate::protocol::api::TOKEN_MISSING | crate::protocol::api::TOKEN_REFUSED)
                ),
            message,
        },
        StatusCode::FORBIDDEN => ClientError::Forbidden { message },
        StatusCode::NOT_FOUND => ClientError::NotFound {
            message,
            code: body_code.or(header_code),
            missing: None,
        },
        StatusCode::PAYLOAD_TOO_LARGE => ClientError::TooLarge { message },
        StatusCode::TOO_MANY_REQUESTS => ClientError::TooManyRequests { retry_after },
        _ => ClientError::Service {
            status: status.as_u16(),
            code: body_code.or(header_code).unwrap_or_else(|| "-".into()),
            message: message.unwrap_or_else(|| status.canonical_reason().unwrap_or("").into()),
        },
    })
}

/// Whether an answer came from a sessionpad pool: its `Server` header is
/// [`crate::protocol::api::SERVER_PRODUCT`], alone or with `/VERSION`.
fn from_sessionpad(headers: &reqwest::header::HeaderMap) -> bool {
    headers
        .get(reqwest::header::SERVER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split('/').next())
        .is_some_and(|product| product == crate::protocol::api::SERVER_PRODUCT)
}

/// Reads `{"error":{"code","message"}}`; either part may be missing.
pub(crate) fn parse_error_body(body: &str) -> (Option<String>, Option<String>) {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return (None, None);
    };
    let err = v.get("error").unwrap_or(&v);
    let get = |k: &str| err.get(k).and_then(Value::as_str).map(str::to_string);
    (get("code"), get("message"))
}

/// Maps a transport error from reqwest.
pub(crate) fn transport(endpoint: &str, timeout: Duration, e: reqwest::Error) -> ClientError {
    if e.is_timeout() {
        ClientError::Timeout(timeout)
    } else {
        ClientError::Unreachable {
            endpoint: endpoint.to_string(),
            source: e,
        }
    }
}

/// Reads a JSON body, mapping undecodable bodies to [`ClientError::Malformed`].
pub(crate) async fn json(resp: Response) -> Result<Value, ClientError> {
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| ClientError::Malformed(e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        let head: String = String::from_utf8_lossy(&bytes).chars().take(200).collect();
        ClientError::Malformed(format!("{e}; body starts with {head:?}"))
    })
}

/// Bytes of a body kept to name in an error about it.
const HEAD: usize = 200;

/// Most bytes handed to the parser at once.
const PIECE: usize = 64 * 1024;

/// Reads a JSON body as it arrives, without holding its bytes whole: the
/// pieces go to a parser on a blocking thread as the pool sends them (an
/// execution's answer can be megabytes; the parse result alone is held, each
/// string once: [`super::json_stream`]).
/// Undecodable bodies map to [`ClientError::Malformed`], as with [`json`].
pub(crate) async fn json_streamed(mut resp: Response) -> Result<Value, ClientError> {
    // One piece of at most PIECE bytes waits for the parser: HTTP reads can
    // be hundreds of kilobytes each, and a deeper queue held megabytes.
    let (tx, rx) = tokio::sync::mpsc::channel::<bytes::Bytes>(1);
    let parse = tokio::task::spawn_blocking(move || {
        let pieces = Pieces {
            rx,
            current: bytes::Bytes::new(),
        };
        super::json_stream::read_value(pieces)
    });
    let mut head = Vec::new();
    let mut broke = None;
    loop {
        match resp.chunk().await {
            Ok(Some(mut piece)) => {
                if head.len() < HEAD {
                    head.extend_from_slice(&piece[..piece.len().min(HEAD - head.len())]);
                }
                let mut stopped = false;
                while !piece.is_empty() && !stopped {
                    let part = piece.split_to(piece.len().min(PIECE));
                    // The parser stopped: its error says why.
                    stopped = tx.send(part).await.is_err();
                }
                if stopped {
                    break;
                }
            }
            Ok(None) => break,
            Err(e) => {
                broke = Some(e);
                break;
            }
        }
    }
    drop(tx);
    let parsed = parse
        .await
        .map_err(|e| ClientError::Malformed(format!("the answer could not be read: {e}")))?;
    if let Some(e) = broke {
        return Err(ClientError::Malformed(e.to_string()));
    }
    parsed.map_err(|e| {
        let head: String = String::from_utf8_lossy(&head).chars().take(HEAD).collect();
        ClientError::Malformed(format!("{e}; body starts with {head:?}"))
    })
}

/// The pieces of a body as a reader, for a parser on a blocking thread.
struct Pieces {
    rx: tokio::sync::mpsc::Receiver<bytes::Bytes>,
    current: bytes::Bytes,
}

impl std::io::Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.rx.blocking_recv() {
                Some(piece) => self.current = piece,
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

/// A wire timestamp: RFC 3339 (any number of fraction digits, .NET writes 7),
/// or the same without an offset, read as UTC. `None` when absent or unreadable:
/// a time is never worth failing a whole answer over.
pub(crate) fn time(v: Option<&Value>) -> Option<DateTime<Utc>> {
    let s = v?.as_str()?.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|t| t.and_utc())
}

/// A string member, `None` when absent, null or not a string.
pub(crate) fn string(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A byte count or other whole number: a JSON number, or a string of digits.
pub(crate) fn count(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27 item 18: a 401 from a sessionpad pool is known by its `Server`
    /// header, or (a serve from before that header) by its own words; any
    /// other 401 is Azure's.
    #[tokio::test]
    async fn a_sessionpad_pools_401_is_told_from_azures() {
        let answer = |server: Option<&str>, message: &str| {
            let mut resp = axum::http::Response::builder().status(401);
            if let Some(server) = server {
                resp = resp.header("server", server);
            }
            let body = serde_json::json!({"error": {"code": "Unauthorized", "message": message}});
            reqwest::Response::from(resp.body(body.to_string()).unwrap())
        };
        for (server, message, sessionpad) in [
            (Some("sessionpad/0.1.0"), "no", true),
            (None, crate::protocol::api::TOKEN_REFUSED, true),
            (None, crate::protocol::api::TOKEN_MISSING, true),
            (None, "Token expired", false),
            (Some("Microsoft-HTTPAPI/2.0"), "no", false),
        ] {
            match check(answer(server, message)).await {
                Err(ClientError::Unauthorized {
                    sessionpad: got, ..
                }) => {
                    assert_eq!(got, sessionpad, "{server:?} {message}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn times_of_both_families_parse() {
        let t = |s: &str| time(Some(&Value::String(s.into())));
        assert!(t("2024-08-06T14:50:38.4228269Z").is_some());
        assert!(t("2024-11-02T12:33:05.677209683Z").is_some());
        assert!(t("2025-01-05T22:18:41.752Z").is_some());
        assert_eq!(t("2024-08-06T14:50:38.5"), t("2024-08-06T14:50:38.5Z"));
        assert_eq!(t("yesterday"), None);
        assert_eq!(time(None), None);
    }

    /// A body read as it arrives parses like the whole body, whatever the
    /// pieces; a broken body is an error naming its start.
    #[tokio::test]
    async fn a_body_read_in_pieces_parses_like_the_whole() {
        let stdout: String = (0..50_000).map(|i| format!("{i}\n")).collect();
        let body = serde_json::json!({"status": "Succeeded", "result": {"stdout": stdout}});
        let text = body.to_string();
        let served = serve(text.clone()).await;
        let resp = reqwest::get(&served).await.unwrap();
        assert_eq!(json_streamed(resp).await.unwrap(), body);
        let served = serve("{\"status\": [1, 2".into()).await;
        let resp = reqwest::get(&served).await.unwrap();
        let err = json_streamed(resp).await.unwrap_err().to_string();
        assert!(err.contains("body starts with"), "{err}");
    }

    /// Serves `body` once per request, in pieces, on loopback; returns its URL.
    async fn serve(body: String) -> String {
        use axum::body::{Body, Bytes};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route(
            "/",
            axum::routing::get(move || {
                let pieces: Vec<Result<Bytes, std::io::Error>> = body
                    .as_bytes()
                    .chunks(1000)
                    .map(|c| Ok(Bytes::copy_from_slice(c)))
                    .collect();
                async move { Body::from_stream(futures::stream::iter(pieces)) }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{addr}/")
    }

    #[test]
    fn error_body_is_parsed() {
        let (c, m) =
            parse_error_body(r#"{"error":{"code":"SessionPropertiesMissing","message":"no"}}"#);
        assert_eq!(c.as_deref(), Some("SessionPropertiesMissing"));
        assert_eq!(m.as_deref(), Some("no"));
        assert_eq!(parse_error_body("<html>"), (None, None));
    }
}
