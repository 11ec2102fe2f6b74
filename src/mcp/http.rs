//! The MCP server over HTTP, as the service offers it at a pool's
//! `mcpServerEndpoint` (`aca-api.md` §8, §13): JSON-RPC 2.0 in one POST, one
//! JSON answer, no session state a request depends on. This is `rmcp`'s
//! streamable HTTP transport in stateless mode with JSON answers; the only
//! code of ours is what makes it take the requests the service's tutorials
//! send with curl (`as_the_service_takes_it`), and what names the host a
//! request comes from ([`Hosts`]). Authentication (`x-ms-apikey`) is the
//! mounting router's (the local pool's `/mcp` route).
//!
//! Stateless as it is, the transport keeps nothing of an `initialize` for the
//! requests after it, so which MCP host made a command would be lost. The
//! answer to `initialize` therefore names a session, as the MCP specification
//! allows (2025-03-26, "Session Management": an `Mcp-Session-Id` header on the
//! answer carrying the `InitializeResult`, which clients send back on every
//! later request): the server remembers the host's `clientInfo` under it, and
//! a command made with it is recorded under that name ([`super::caller`]). The
//! session is only a name: nothing else depends on it, a request without one
//! (the tutorials' curl) or with one the server does not know (after a
//! restart) is served as before, its host known by its `User-Agent`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};

use super::SessionTools;
use super::caller::Caller;

/// Most bytes of one JSON-RPC request: 2 MiB, as an execution request of the
/// data plane (`pool::server::MAX_EXECUTE_BODY`).
pub const MAX_REQUEST_BODY: usize = 2 * 1024 * 1024;

/// The header naming an MCP session (MCP specification 2025-03-26, "Streamable
/// HTTP").
pub const SESSION_HEADER: &str = "mcp-session-id";

/// Most MCP hosts remembered by their session: past it, the host that
/// initialized longest ago is forgotten (its later commands are then known by
/// their `User-Agent`).
pub const MAX_HOSTS: usize = 4096;

/// The MCP hosts that initialized, by the session id their `initialize` was
/// answered with (see the module doc); at most [`MAX_HOSTS`].
#[derive(Debug, Default)]
pub struct Hosts {
    inner: Mutex<(HashMap<String, Caller>, VecDeque<String>)>,
}

impl Hosts {
    /// Remembers `caller` under a new session id, which it returns (32 hex
    /// characters).
    pub fn name(&self, caller: Caller) -> String {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let mut guard = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (map, order) = &mut *guard;
        while map.len() >= MAX_HOSTS {
            match order.pop_front() {
                Some(old) => {
                    map.remove(&old);
                }
                None => break,
            }
        }
        order.push_back(id.clone());
        map.insert(id.clone(), caller);
        id
    }

    /// The host that initialized with session `id`, if remembered.
    pub fn get(&self, id: &str) -> Option<Caller> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0
            .get(id)
            .cloned()
    }
}

/// The MCP endpoint at `route` (e.g. `/mcp`) as a router to merge into the
/// caller's: every request is answered by a clone of `tools` (one shared table
/// of environments). `any_host` accepts any `Host` header; otherwise only
/// loopback names are taken (rmcp's guard against DNS rebinding, right for a
/// pool bound to loopback).
pub fn router(route: &str, tools: SessionTools, any_host: bool) -> Router {
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(MAX_REQUEST_BODY);
    if any_host {
        config = config.disable_allowed_hosts();
    }
    let service = StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new()
        .route_service(route, service)
        .layer(middleware::from_fn_with_state(
            Arc::new(Hosts::default()),
            as_the_service_takes_it,
        ))
}

/// Makes a POST as the service's tutorials send it acceptable to the
/// transport, which follows the MCP specification more strictly than the
/// service does: an `Accept` that does not name both `application/json` and
/// `text/event-stream` (curl sends `*/*`) is taken as both (the answer is
/// JSON either way), and an `initialize` without `params` (the tutorials'
/// `{"jsonrpc":"2.0","id":"1","method":"initialize"}`) gets the empty
/// parameters of a client that asks for the service's protocol version.
/// Each request carries the [`Caller`] it comes from ([`initialized`],
/// [`caller_of`]) to the tools, as an extension of the request; an accepted
/// `initialize` is answered with the session that names its host
/// ([`SESSION_HEADER`]).
async fn as_the_service_takes_it(
    State(hosts): State<Arc<Hosts>>,
    mut req: Request,
    next: Next,
) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    req.headers_mut().insert(
        header::ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    let (mut parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REQUEST_BODY).await else {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("an MCP request may have at most {MAX_REQUEST_BODY} bytes"),
        )
            .into_response();
    };
    let mut message = serde_json::from_slice::<Value>(&bytes).ok();
    let initialize = message
        .as_ref()
        .is_some_and(|m| m.get("method").and_then(Value::as_str) == Some("initialize"));
    let body = match &mut message {
        Some(Value::Object(msg)) if initialize && msg.get("params").is_none() => {
            msg.insert(
                "params".into(),
                json!({
                    "protocolVersion": super::PROTOCOL_VERSION.as_str(),
                    "capabilities": {},
                    "clientInfo": {"name": "", "version": ""},
                }),
            );
            parts.headers.remove(header::CONTENT_LENGTH);
            Body::from(Value::Object(msg.clone()).to_string())
        }
        _ => Body::from(bytes),
    };
    let (caller, named) = match message.filter(|_| initialize) {
        Some(init) => {
            let caller = initialized(&init, &parts.headers);
            let id = hosts.name(caller.clone());
            (caller, Some(id))
        }
        None => (caller_of(&hosts, &parts.headers), None),
    };
    parts.extensions.insert(caller);
    let mut resp = next.run(Request::from_parts(parts, body)).await;
    if let Some(id) = named
        && resp.status().is_success()
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        resp.headers_mut().insert(SESSION_HEADER, v);
    }
    resp
}

/// The `User-Agent` of a request, as text.
fn user_agent(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::USER_AGENT)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// The host an `initialize` request `init` (with `headers`) comes from: its
/// `params.clientInfo` `name` and `version`, or its `User-Agent`.
fn initialized(init: &Value, headers: &HeaderMap) -> Caller {
    let field = |name: &str| {
        init.pointer(&format!("/params/clientInfo/{name}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    Caller::of_client_info(
        field("name"),
        field("version"),
        user_agent(headers).as_deref(),
    )
}

/// The host a request after `initialize` (with `headers`) comes from: the one
/// its session names, else the one its `User-Agent` names.
fn caller_of(hosts: &Hosts, headers: &HeaderMap) -> Caller {
    headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|id| hosts.get(id.trim()))
        .unwrap_or_else(|| Caller::unnamed(user_agent(headers).as_deref()))
}
