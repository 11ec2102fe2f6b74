//! Errors as Azure sends them: `{"error":{"code","message"}}` plus the
//! `x-ms-error-code` header (`aca-api.md` §6.1), with the status codes of §6.2.

use axum::Json;
use axum::extract::Request;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The header every error answer carries (`aca-api.md` §6.1).
const ERROR_CODE_HEADER: &str = "x-ms-error-code";

/// Most bytes of a non-Azure error body kept as the message: 4 KiB (axum's
/// rejection texts are one line).
const MAX_REJECTION_TEXT: usize = 4 * 1024;

/// An error answer of the local pool.
#[derive(Debug, Clone)]
pub struct WireError {
    /// HTTP status.
    pub status: StatusCode,
    /// Azure error code, e.g. `SessionRequestValidationFailed`.
    pub code: &'static str,
    /// Human-readable message.
    pub message: String,
}

impl WireError {
    /// A 400 with `code` (`aca-api.md` §6.2).
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code,
            message: message.into(),
        }
    }

    /// A 401: token missing or wrong.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            code: "Unauthorized",
            message: message.into(),
        }
    }
}

/// The Azure error code given to an error answer that had none (`aca-api.md`
/// §6.2): 400, 415 and 422 `SessionRequestValidationFailed` (bad identifier,
/// api-version, path, query or body), 404 `NotFound`, 405 `MethodNotAllowed`, 413
/// `RequestBodyTooLarge`, other 4xx `SessionRequestValidationFailed`, 5xx
/// `InternalServerError`.
fn code_for(status: StatusCode) -> &'static str {
    match status {
        StatusCode::NOT_FOUND => "NotFound",
        StatusCode::METHOD_NOT_ALLOWED => "MethodNotAllowed",
        StatusCode::PAYLOAD_TOO_LARGE => "RequestBodyTooLarge",
        s if s.is_server_error() => "InternalServerError",
        _ => "SessionRequestValidationFailed",
    }
}

/// Middleware: an error answer (4xx, 5xx) without `x-ms-error-code`, as axum's
/// router and extractors write them (an unknown route, a wrong method, a path
/// that is not UTF-8, a body over the limit: plain text or empty), becomes
/// Azure's JSON error (`aca-api.md` §6.1) with the same status, the code of
/// [`code_for`] and axum's text (at most 4 KiB) as the message. Other headers
/// (e.g. `Allow` on 405) are kept.
pub(crate) async fn azure_shape(req: Request, next: Next) -> Response {
    let resp = next.run(req).await;
    let status = resp.status();
    if !(status.is_client_error() || status.is_server_error())
        || resp.headers().contains_key(ERROR_CODE_HEADER)
    {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let text = axum::body::to_bytes(body, MAX_REJECTION_TEXT)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("the request failed")
            .to_string()
    } else {
        text
    };
    let mut out = WireError {
        status,
        code: code_for(status),
        message,
    }
    .into_response();
    for (name, value) in &parts.headers {
        if name != CONTENT_TYPE && name != CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

impl IntoResponse for WireError {
    fn into_response(self) -> Response {
        let body = Json(json!({"error": {"code": self.code, "message": self.message}}));
        let mut resp = (self.status, body).into_response();
        resp.headers_mut()
            .insert(ERROR_CODE_HEADER, HeaderValue::from_static(self.code));
        resp
    }
}
