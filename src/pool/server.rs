//! The local pool's HTTP routes: family A `code/execute` (`aca-api.md` §3.1) and
//! family B `executions` (§4.2), behind bearer-token authentication.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;

use super::sessions::SessionRegistry;
use super::wire_error::WireError;
use crate::client::api::{ApiVersion, ExecuteRequest, Family, family_a_response, family_b_response};

/// Shared state of the routes.
#[derive(Clone)]
struct Pool {
    registry: Arc<SessionRegistry>,
    max_execution: Duration,
}

/// The router of the local pool. `token` `None` disables authentication;
/// `max_execution` caps `timeoutInSeconds` (and is the default when omitted).
pub fn router(
    registry: Arc<SessionRegistry>,
    token: Option<String>,
    max_execution: Duration,
) -> Router {
    let pool = Pool {
        registry,
        max_execution,
    };
    Router::new()
        .route("/code/execute", post(execute_a))
        .route("/executions", post(execute_b))
        .layer(middleware::from_fn_with_state(token.map(Arc::new), auth))
        .with_state(pool)
}

/// Rejects requests without `Authorization: Bearer <token>` (401, `aca-api.md` §2).
async fn auth(
    State(token): State<Option<Arc<String>>>,
    req: Request,
    next: Next,
) -> Response {
    if let Some(token) = token {
        let given = req
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        let Some(given) = given else {
            return WireError::unauthorized("the Authorization header is missing").into_response();
        };
        let bearer = given
            .strip_prefix("Bearer ")
            .or_else(|| given.strip_prefix("bearer "))
            .unwrap_or("");
        if !constant_time_eq(bearer.trim().as_bytes(), token.as_bytes()) {
            return WireError::unauthorized("the bearer token is not valid for this pool")
                .into_response();
        }
    }
    next.run(req).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Reads and checks `api-version` and `identifier` from the query.
fn target(query: &HashMap<String, String>) -> Result<(ApiVersion, String), WireError> {
    let version = query.get("api-version").ok_or_else(|| {
        WireError::bad_request("SessionRequestValidationFailed", "api-version is required")
    })?;
    let version: ApiVersion = version
        .parse()
        .map_err(|e: crate::client::api::UnknownApiVersion| {
            WireError::bad_request("SessionRequestValidationFailed", e.to_string())
        })?;
    let identifier = query.get("identifier").ok_or_else(|| {
        WireError::bad_request("SessionRequestValidationFailed", "identifier is required")
    })?;
    validate_identifier(identifier)?;
    Ok((version, identifier.clone()))
}

/// Identifier rules of `aca-api.md` §4.5: 4 to 128 characters from the spec's set.
pub fn validate_identifier(id: &str) -> Result<(), WireError> {
    const EXTRA: &str = "_|}{[]:\"';<>?/.,@#$%^&*()-+=!~`";
    let len = id.chars().count();
    let ok_chars = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || EXTRA.contains(c));
    if (4..=128).contains(&len) && ok_chars {
        Ok(())
    } else {
        Err(WireError::bad_request(
            "SessionRequestValidationFailed",
            format!(
                "identifier {id:?} is invalid: it must be 4 to 128 characters, letters, digits or {EXTRA}"
            ),
        ))
    }
}

fn parse_json(body: &Bytes) -> Result<Value, WireError> {
    serde_json::from_slice(body).map_err(|e| {
        WireError::bad_request("SessionRequestValidationFailed", format!("the body is not JSON: {e}"))
    })
}

fn request_from(value: Value) -> Result<ExecuteRequest, WireError> {
    let req: ExecuteRequest = serde_json::from_value(value).map_err(|e| {
        WireError::bad_request("SessionRequestValidationFailed", format!("invalid request: {e}"))
    })?;
    if req.code.is_none() {
        return Err(WireError::bad_request(
            "SessionRequestValidationFailed",
            "code is required",
        ));
    }
    Ok(req)
}

impl Pool {
    fn timeout(&self, req: &ExecuteRequest) -> Duration {
        req.timeout_in_seconds
            .map(Duration::from_secs)
            .unwrap_or(self.max_execution)
            .min(self.max_execution)
            .max(Duration::from_secs(1))
    }
}

/// `POST code/execute` (family A, `aca-api.md` §3.1).
async fn execute_a(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Result<Response, WireError> {
    let (version, identifier) = target(&query)?;
    let value = parse_json(&body)?;
    let inner = value.get("properties").cloned().unwrap_or(value);
    let req = request_from(inner)?;
    let code = req.code.clone().unwrap_or_default();
    let exec = pool
        .registry
        .execute(&identifier, &code, pool.timeout(&req))
        .await;
    Ok(Json(family_a_response(&exec, version)).into_response())
}

/// `POST executions` (family B, `aca-api.md` §4.2): flat body, 202 up to
/// 2025-02-02-preview and 200 from 2025-10-02-preview, `operation-id` honoured.
async fn execute_b(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, WireError> {
    let (version, identifier) = target(&query)?;
    if version.family() != Family::B {
        return Err(WireError::bad_request(
            "SessionRequestNotSupported",
            format!("executions is not available in api-version {version}; use code/execute"),
        ));
    }
    let value = parse_json(&body)?;
    if value.get("properties").is_some() {
        return Err(WireError::bad_request(
            "SessionPropertiesMissing",
            "executions takes a flat body: send codeInputType, executionType and code without a properties wrapper",
        ));
    }
    let req = request_from(value)?;
    let id = headers
        .get("operation-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let code = req.code.clone().unwrap_or_default();
    let mut exec = pool
        .registry
        .execute(&identifier, &code, pool.timeout(&req))
        .await;
    exec.id = Some(id.clone());
    let status = if version >= ApiVersion::V2025_10_02 {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    let body = family_b_response(&exec, &identifier, "Synchronous");
    let mut resp = (status, Json(body)).into_response();
    let location = format!(
        "/executions/{id}?api-version={version}&identifier={}",
        url::form_urlencoded::byte_serialize(identifier.as_bytes()).collect::<String>()
    );
    for (name, value) in [("operation-id", id.as_str()), ("operation-location", location.as_str())] {
        if let Ok(v) = HeaderValue::from_str(value) {
            resp.headers_mut().insert(name, v);
        }
    }
    Ok(resp)
}
