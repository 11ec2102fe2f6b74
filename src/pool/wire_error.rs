//! Errors as Azure sends them: `{"error":{"code","message"}}` plus the
//! `x-ms-error-code` header (`aca-api.md` §6.1), with the status codes of §6.2.

use axum::Json;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

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

impl IntoResponse for WireError {
    fn into_response(self) -> Response {
        let body = Json(json!({"error": {"code": self.code, "message": self.message}}));
        let mut resp = (self.status, body).into_response();
        resp.headers_mut()
            .insert("x-ms-error-code", HeaderValue::from_static(self.code));
        resp
    }
}
