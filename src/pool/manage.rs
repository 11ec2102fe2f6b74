//! Session management routes of the local pool: family B `GET|DELETE session`,
//! `GET listSessions`, `GET metadata` (`aca-api.md` §4.4) and the custom-container
//! `.management/getSession|stopSession|listSessions` (§5.2).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use super::server::{Pool, target};
use super::sessions::Session;
use super::wire_error::WireError;

/// Page size of `listSessions` (the documented page of custom pools, §5.2).
const PAGE: usize = 300;

/// The management routes, merged into the pool's router.
pub(crate) fn routes() -> Router<Pool> {
    Router::new()
        .route("/session", get(get_session).delete(delete_session))
        .route("/listSessions", get(list_sessions))
        .route("/metadata", get(metadata))
        .route("/.management/getSession", post(mgmt_get_session))
        .route("/.management/stopSession", post(mgmt_stop_session))
        .route("/.management/listSessions", post(mgmt_list_sessions))
}

type Params = Query<HashMap<String, String>>;

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn expires(pool: &Pool, s: &Session) -> DateTime<Utc> {
    s.last_accessed_at() + chrono::Duration::from_std(pool.registry.cooldown()).unwrap_or_default()
}

/// The family B `Session` shape (§4.4), with `expireAt`.
fn session_b(pool: &Pool, s: &Session) -> Value {
    json!({
        "identifier": s.identifier,
        "createdAt": time(s.created_at),
        "lastAccessedAt": time(s.last_accessed_at()),
        "expireAt": time(expires(pool, s)),
        "etag": s.guid.to_string(),
    })
}

/// The custom-container `SessionView` shape (§5.2), with `expiresAt`.
fn session_view(pool: &Pool, s: &Session) -> Value {
    json!({
        "identifier": s.identifier,
        "etag": s.guid.to_string(),
        "expiresAt": time(expires(pool, s)),
        "createdAt": time(s.created_at),
        "lastAccessedAt": time(s.last_accessed_at()),
    })
}

fn not_found(identifier: &str) -> WireError {
    WireError::bad_request(
        "SessionWithIdentifierNotFound",
        format!("session with identifier {identifier} was not found (it may have expired)"),
    )
}

fn existing(pool: &Pool, query: &HashMap<String, String>) -> Result<Arc<Session>, WireError> {
    let (_, identifier) = target(query)?;
    pool.registry
        .get(&identifier)
        .ok_or_else(|| not_found(&identifier))
}

/// `skip` from the query (default 0).
fn skip(query: &HashMap<String, String>) -> Result<usize, WireError> {
    query.get("skip").map_or(Ok(0), |s| {
        s.parse().map_err(|_| {
            WireError::bad_request(
                "SessionRequestValidationFailed",
                "skip must be a whole number",
            )
        })
    })
}

/// One page of sessions, the total count, and the link to the next page.
struct Page {
    sessions: Vec<Arc<Session>>,
    total: usize,
    next: Option<String>,
}

/// One page of sessions and the link to the next one.
fn page(pool: &Pool, path: &str, query: &HashMap<String, String>) -> Result<Page, WireError> {
    let from = skip(query)?;
    let all = pool.registry.list();
    let total = all.len();
    let next = (from + PAGE < total).then(|| {
        let version = query.get("api-version").map_or("", String::as_str);
        format!("{path}?api-version={version}&skip={}", from + PAGE)
    });
    Ok(Page {
        sessions: all.into_iter().skip(from).take(PAGE).collect(),
        total,
        next,
    })
}

fn require_version(query: &HashMap<String, String>) -> Result<(), WireError> {
    let v = query.get("api-version").ok_or_else(|| {
        WireError::bad_request("SessionRequestValidationFailed", "api-version is required")
    })?;
    v.parse::<crate::protocol::ApiVersion>()
        .map(|_| ())
        .map_err(|e| WireError::bad_request("SessionRequestValidationFailed", e.to_string()))
}

/// `GET session` → the session (§4.4); unknown → 400 `SessionWithIdentifierNotFound`.
async fn get_session(State(pool): State<Pool>, Query(q): Params) -> Result<Response, WireError> {
    let s = existing(&pool, &q)?;
    Ok(Json(session_b(&pool, &s)).into_response())
}

/// `DELETE session` → 204 and the session's kernel and folder are gone (§4.4).
async fn delete_session(
    State(pool): State<Pool>,
    Query(q): Params,
    headers: axum::http::HeaderMap,
) -> Result<Response, WireError> {
    let (_, identifier) = target(&q)?;
    if pool.registry.end_for(&identifier, &headers).await {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(not_found(&identifier))
    }
}

/// `GET listSessions?skip=` → `{"sessions":[…],"nextLink"}` (§4.4).
async fn list_sessions(State(pool): State<Pool>, Query(q): Params) -> Result<Response, WireError> {
    require_version(&q)?;
    let page = page(&pool, "/listSessions", &q)?;
    let sessions: Vec<Value> = page.sessions.iter().map(|s| session_b(&pool, s)).collect();
    Ok(Json(json!({"sessions": sessions, "nextLink": page.next})).into_response())
}

/// `POST .management/getSession` → `SessionView` (§5.2).
async fn mgmt_get_session(
    State(pool): State<Pool>,
    Query(q): Params,
) -> Result<Response, WireError> {
    let s = existing(&pool, &q)?;
    Ok(Json(session_view(&pool, &s)).into_response())
}

/// `POST .management/stopSession` → 200 text (§5.2).
async fn mgmt_stop_session(
    State(pool): State<Pool>,
    Query(q): Params,
    headers: axum::http::HeaderMap,
) -> Result<Response, WireError> {
    let (_, identifier) = target(&q)?;
    if !pool.registry.end_for(&identifier, &headers).await {
        return Err(not_found(&identifier));
    }
    let text = format!("Session {identifier} in session pool local stopped.");
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response())
}

/// `POST .management/listSessions?skip=` → `{"value","count","nextLink"}` (§5.2).
async fn mgmt_list_sessions(
    State(pool): State<Pool>,
    Query(q): Params,
) -> Result<Response, WireError> {
    require_version(&q)?;
    let page = page(&pool, "/.management/listSessions", &q)?;
    let value: Vec<Value> = page
        .sessions
        .iter()
        .map(|s| session_view(&pool, s))
        .collect();
    Ok(Json(json!({"value": value, "count": page.total, "nextLink": page.next})).into_response())
}

/// `GET metadata` → runtimes, installed packages and the kernel (§4.4), as
/// [`super::runtime::describe`] reads them for the pool's container type, and sessionpad's own fields
/// `sessionpadIsolation` (the serialized [`super::Isolation`]: sandbox, limits,
/// notes), `sessionpadContainerType` (the ARM name) and, with `--azure-limits`,
/// `sessionpadServiceLimits` (the service's limits it emulates, with their
/// sources), which Azure's pools do not send. With the request header `x-sessionpad-metadata: brief`, only
/// sessionpad's own fields, at once.
async fn metadata(
    State(pool): State<Pool>,
    Query(q): Params,
    headers: axum::http::HeaderMap,
) -> Result<Response, WireError> {
    require_version(&q)?;
    let ours = |mut doc: Value| {
        if let (Some(fields), Ok(isolation)) = (
            doc.as_object_mut(),
            serde_json::to_value(pool.registry.isolation()),
        ) {
            fields.insert(
                crate::protocol::isolation::METADATA_FIELD.to_string(),
                isolation,
            );
            fields.insert(
                crate::protocol::container_type::METADATA_FIELD.to_string(),
                json!(pool.registry.container_type().arm_name()),
            );
            let python_packages =
                pool.registry.container_type() != crate::protocol::ContainerType::NodeLts;
            if let Some(image) = pool.registry.env().image.filter(|_| python_packages) {
                fields.insert(
                    crate::protocol::image::METADATA_FIELD.to_string(),
                    json!(image),
                );
            }
            if !pool.service_limits.is_empty() {
                fields.insert(
                    crate::protocol::service_limits::METADATA_FIELD.to_string(),
                    json!(*pool.service_limits),
                );
            }
        }
        doc
    };
    let brief = headers
        .get(crate::protocol::api::METADATA_HEADER)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"brief"));
    if brief {
        return Ok(Json(ours(json!({}))).into_response());
    }
    let doc = pool
        .metadata
        .get_or_try_init(|| async {
            let internal = |e: super::runtime::RuntimeError| WireError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                code: "InternalServerError",
                message: e.to_string(),
            };
            let mut doc =
                super::runtime::describe(pool.registry.container_type(), pool.registry.env())
                    .await
                    .map_err(internal)?;
            let now = time(Utc::now());
            if let Some(fields) = doc.as_object_mut() {
                fields.insert("createdAt".to_string(), json!(now));
                fields.insert("lastUpdatedAt".to_string(), json!(now));
            }
            Ok::<Value, WireError>(doc)
        })
        .await?;
    Ok(Json(ours(doc.clone())).into_response())
}
