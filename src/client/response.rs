//! Turning HTTP responses into results: status codes and Azure error bodies
//! (`{"error":{"code","message"}}` plus `x-ms-error-code`, `aca-api.md` §6) become
//! [`ClientError`] variants.

use std::time::Duration;

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
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let body = resp.text().await.unwrap_or_default();
    let (body_code, body_message) = parse_error_body(&body);
    let message = body_message.or_else(|| {
        let t = body.trim();
        (!t.is_empty()).then(|| t.chars().take(300).collect())
    });
    Err(match status {
        StatusCode::UNAUTHORIZED => ClientError::Unauthorized { message },
        StatusCode::FORBIDDEN => ClientError::Forbidden { message },
        StatusCode::NOT_FOUND => ClientError::NotFound { message },
        StatusCode::PAYLOAD_TOO_LARGE => ClientError::TooLarge,
        StatusCode::TOO_MANY_REQUESTS => ClientError::TooManyRequests { retry_after },
        _ => ClientError::Service {
            status: status.as_u16(),
            code: body_code.or(header_code).unwrap_or_else(|| "-".into()),
            message: message.unwrap_or_else(|| status.canonical_reason().unwrap_or("").into()),
        },
    })
}

/// Reads `{"error":{"code","message"}}`; either part may be missing.
fn parse_error_body(body: &str) -> (Option<String>, Option<String>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_body_is_parsed() {
        let (c, m) = parse_error_body(r#"{"error":{"code":"SessionPropertiesMissing","message":"no"}}"#);
        assert_eq!(c.as_deref(), Some("SessionPropertiesMissing"));
        assert_eq!(m.as_deref(), Some("no"));
        assert_eq!(parse_error_body("<html>"), (None, None));
    }
}
