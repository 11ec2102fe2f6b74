//! The MCP server over HTTP, as the service offers it at a pool's
//! `mcpServerEndpoint` (`aca-api.md` §8, §13): JSON-RPC 2.0 in one POST, one
//! JSON answer, no session (`Mcp-Session-Id`) to keep. This is `rmcp`'s
//! streamable HTTP transport in stateless mode with JSON answers; the only
//! code of ours is what makes it take the requests the service's tutorials
//! send with curl (`as_the_service_takes_it`). Authentication (`x-ms-apikey`)
//! is the mounting router's (the local pool's `/mcp` route).

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};

use super::SessionTools;

/// Most bytes of one JSON-RPC request: 2 MiB, as an execution request of the
/// data plane (`pool::server::MAX_EXECUTE_BODY`).
pub const MAX_REQUEST_BODY: usize = 2 * 1024 * 1024;

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
        .layer(middleware::from_fn(as_the_service_takes_it))
}

/// Makes a POST as the service's tutorials send it acceptable to the
/// transport, which follows the MCP specification more strictly than the
/// service does: an `Accept` that does not name both `application/json` and
/// `text/event-stream` (curl sends `*/*`) is taken as both (the answer is
/// JSON either way), and an `initialize` without `params` (the tutorials'
/// `{"jsonrpc":"2.0","id":"1","method":"initialize"}`) gets the empty
/// parameters of a client that asks for the service's protocol version.
async fn as_the_service_takes_it(mut req: Request, next: Next) -> Response {
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
    let body = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(mut msg))
            if msg.get("method").and_then(Value::as_str) == Some("initialize")
                && msg.get("params").is_none() =>
        {
            msg.insert(
                "params".into(),
                json!({
                    "protocolVersion": super::PROTOCOL_VERSION.as_str(),
                    "capabilities": {},
                    "clientInfo": {"name": "", "version": ""},
                }),
            );
            parts.headers.remove(header::CONTENT_LENGTH);
            Body::from(Value::Object(msg).to_string())
        }
        _ => Body::from(bytes),
    };
    next.run(Request::from_parts(parts, body)).await
}
