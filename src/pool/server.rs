//! The local pool's HTTP router: the routes of `aca-api.md` (the execution
//! routes, family A `code/execute` §3.1 and family B `executions` §4.2, in
//! `server/execute.rs`; files, session management, events and interrupts in their own
//! modules) behind bearer-token authentication; every error in Azure's shape
//! (§6.1, `wire_error::azure_shape`), the unread rest of a request body
//! drained before an early answer (`server::drain`), one escaped log line per
//! request; and the checks of the `api-version` and `identifier` query
//! parameters every route shares.

pub(crate) mod drain;
mod execute;
mod node;
mod reply;
pub(crate) mod run;
mod shell;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use super::PoolOptions;
use super::sessions::{Session, SessionError, SessionRegistry};
use super::wire_error::WireError;
use crate::protocol::ContainerType;
use crate::protocol::api::ApiVersion;
use execute::{execute_a, execute_b, get_execution};

/// Most bytes of an execution request body (`code/execute`, `executions`): 2 MiB,
/// axum's default, made explicit. Larger bodies get 413 `RequestBodyTooLarge`
/// in Azure's error shape.
pub(crate) const MAX_EXECUTE_BODY: usize = 2 * 1024 * 1024;

/// Shared state of the routes.
#[derive(Clone)]
pub(crate) struct Pool {
    /// The sessions.
    pub(crate) registry: Arc<SessionRegistry>,
    /// Cap (and default) of `timeoutInSeconds`.
    pub(crate) max_execution: Duration,
    /// Status answered when the pool is full (404 or 429).
    #[allow(clippy::struct_field_names)] // the pool-full status, as `PoolOptions` names it
    pub(crate) pool_full_status: StatusCode,
    /// The `GET metadata` document, read once from the Python environment.
    pub(crate) metadata: Arc<tokio::sync::OnceCell<Value>>,
    /// What the sessions run: a Shell pool takes shell commands on
    /// `executions` ([`shell`]), a NodeLTS pool's code is JavaScript ([`node`]).
    pub(crate) container_type: ContainerType,
    /// Where calls are recorded (the flight recorder's ledger); `None` records
    /// nothing (`serve --no-ledger`, `[ledger] enabled = false`).
    pub(crate) ledger: Option<crate::ledger::Recorder>,
    /// The key its calls are recorded under
    /// ([`crate::protocol::record::local_pool_key`]).
    pub(crate) ledger_key: Arc<str>,
    /// The event stream's hub: running cells' output is published to it
    /// ([`super::events::LiveOutput`]).
    pub(crate) hub: crate::events::Hub,
    /// Bytes a Shell pool keeps of each of stdout and stderr
    /// (`--azure-limits`: [`crate::protocol::service_limits::SHELL_STREAM_BYTES`]);
    /// `None` keeps what the kernel's caps keep.
    pub(crate) shell_stream_cap: Option<usize>,
    /// The service's limits this pool emulates, for `GET metadata`
    /// (`sessionpadServiceLimits`); empty without `--azure-limits`.
    pub(crate) service_limits: Arc<Vec<crate::protocol::service_limits::ServiceLimit>>,
}

impl Pool {
    /// The session of `identifier`, created on first use; a full pool or a folder
    /// that cannot be made become wire errors (`aca-api.md` §6.2).
    pub(crate) fn session(&self, identifier: &str) -> Result<Arc<Session>, WireError> {
        self.registry
            .get_or_create(identifier)
            .map_err(|e| match e {
                SessionError::PoolFull(_) => WireError {
                    status: self.pool_full_status,
                    code: "SessionPoolFull",
                    message: e.to_string(),
                },
                SessionError::Io(_) => WireError {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    code: "InternalServerError",
                    message: e.to_string(),
                },
            })
    }
}

/// The route of the pool's MCP server: the service's tutorials post to the
/// pool's `mcpServerEndpoint`, which `mcp-overview.md` describes as "the
/// session pool's `/mcp` endpoint" (`aca-api.md` §8); so the local pool's MCP
/// endpoint is its pool management endpoint followed by `/mcp`.
use crate::protocol::routes::MCP_ROUTE;

/// The router of the local pool: every route of `aca-api.md` behind bearer-token
/// authentication (`opts.token`, none when `None`), the MCP server at
/// [`MCP_ROUTE`] behind the API key (`opts.mcp_key`, none when `None`), and
/// recording of executions and file calls into `ledger` when there is one,
/// and the event stream of `hub` ([`super::events::routes`], behind the
/// bearer token too).
pub fn router(
    registry: Arc<SessionRegistry>,
    opts: &PoolOptions,
    ledger: Option<crate::ledger::Recorder>,
    ledger_key: &str,
    hub: crate::events::Hub,
) -> Router {
    let pool = Pool {
        registry,
        max_execution: opts.max_execution,
        pool_full_status: StatusCode::from_u16(opts.pool_full_status)
            .unwrap_or(StatusCode::NOT_FOUND),
        metadata: Arc::default(),
        container_type: opts.container_type,
        ledger,
        ledger_key: ledger_key.into(),
        hub: hub.clone(),
        shell_stream_cap: opts
            .azure_limits
            .then_some(crate::protocol::service_limits::SHELL_STREAM_BYTES),
        service_limits: Arc::new(opts.service_limits()),
    };
    // An agent on a pool without a sandbox (the user opted in) reads so in
    // every result.
    let notice = pool.registry.isolation().warning();
    let tools =
        crate::mcp::SessionTools::new(Arc::new(super::mcp_host::PoolHost::new(pool.clone())))
            .with_notice(notice);
    let mcp = crate::mcp::http::router(MCP_ROUTE, tools, !opts.bind.is_loopback()).layer(
        middleware::from_fn_with_state(opts.mcp_key.clone().map(Arc::new), mcp_auth),
    );
    let api = Router::new()
        .route(
            "/code/execute",
            post(execute_a).layer(DefaultBodyLimit::max(MAX_EXECUTE_BODY)),
        )
        .route(
            "/executions",
            post(execute_b).layer(DefaultBodyLimit::max(MAX_EXECUTE_BODY)),
        )
        .route("/executions/{id}", get(get_execution))
        .merge(super::files::routes())
        .merge(super::manage::routes())
        .merge(super::events::routes(hub))
        .merge(super::interrupt::routes())
        .merge(super::complete::routes())
        .layer(middleware::from_fn_with_state(
            opts.token.clone().map(Arc::new),
            auth,
        ))
        .with_state(pool);
    // Routing happens in `api`, after the outer layers have normalised the path
    // and started the request log. Outermost first: slashes, log, drain, shape.
    Router::new()
        .merge(mcp)
        .fallback_service(api)
        .layer(middleware::from_fn(super::wire_error::azure_shape))
        .layer(middleware::from_fn(drain::drain_unread_body))
        .layer(middleware::from_fn(log_request))
        .layer(middleware::map_request(collapse_slashes))
}

/// Collapses repeated slashes in the path (`…//code/execute`, sent by clients that
/// join an endpoint ending in `/` with a path starting with `/`, `aca-api.md` §1.1).
async fn collapse_slashes(mut req: Request) -> Request {
    let path = req.uri().path();
    if path.contains("//") {
        let mut collapsed = String::with_capacity(path.len());
        for c in path.chars() {
            if !(c == '/' && collapsed.ends_with('/')) {
                collapsed.push(c);
            }
        }
        let pq = match req.uri().query() {
            Some(q) => format!("{collapsed}?{q}"),
            None => collapsed,
        };
        let mut parts = req.uri().clone().into_parts();
        if let Ok(pq) = pq.parse() {
            parts.path_and_query = Some(pq);
            if let Ok(uri) = axum::http::Uri::from_parts(parts) {
                *req.uri_mut() = uri;
            }
        }
    }
    req
}

/// Logs each request: method, path, session identifier, status and duration in
/// milliseconds. Headers (and so tokens) are never logged. The path and the
/// identifier are the client's text: they are written escaped (`escape_debug`;
/// the identifier quoted, as `{:?}` writes it), so a newline or an escape
/// sequence in them can neither start a forged log line nor reach a terminal.
pub(crate) async fn log_request(req: Request, next: Next) -> Response {
    let started = std::time::Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let identifier = req
        .uri()
        .query()
        .and_then(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "identifier")
                .map(|(_, v)| format!("{v:?}"))
        })
        .unwrap_or_else(|| "-".into());
    let resp = next.run(req).await;
    tracing::info!(
        target: "sessionpad::pool::requests",
        "{method} {} identifier={identifier} status={} {:.1} ms",
        path.escape_debug(),
        resp.status().as_u16(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    resp
}

/// Rejects requests without `Authorization: Bearer <token>` (401, `aca-api.md` §2).
pub(crate) async fn auth(
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
            return named(WireError::unauthorized(crate::protocol::api::TOKEN_MISSING));
        };
        let bearer = given
            .strip_prefix("Bearer ")
            .or_else(|| given.strip_prefix("bearer "))
            .unwrap_or("");
        if !constant_time_eq(bearer.trim().as_bytes(), token.as_bytes()) {
            return named(WireError::unauthorized(crate::protocol::api::TOKEN_REFUSED));
        }
    }
    next.run(req).await
}

/// `refusal` answered with `Server: sessionpad/VERSION`
/// ([`crate::protocol::api::SERVER_PRODUCT`]): a client then knows the token
/// wanted is the one serve printed, not an Entra token.
fn named(refusal: WireError) -> Response {
    let mut resp = refusal.into_response();
    let server = format!(
        "{}/{}",
        crate::protocol::api::SERVER_PRODUCT,
        env!("CARGO_PKG_VERSION")
    );
    if let Ok(value) = axum::http::HeaderValue::from_str(&server) {
        resp.headers_mut().insert(axum::http::header::SERVER, value);
    }
    resp
}

/// Rejects MCP requests without `x-ms-apikey: <key>` with 401, as the
/// service's MCP endpoint does (a bearer token is not a key:
/// `mcp-authentication.md`, `aca-api.md` §2).
async fn mcp_auth(State(key): State<Option<Arc<String>>>, req: Request, next: Next) -> Response {
    if let Some(key) = key {
        let given = req.headers().get(MCP_KEY_HEADER).map(HeaderValue::as_bytes);
        let Some(given) = given else {
            return WireError::unauthorized(format!("the {MCP_KEY_HEADER} header is missing"))
                .into_response();
        };
        if !constant_time_eq(given, key.as_bytes()) {
            return WireError::unauthorized("the API key is not valid for this pool's MCP server")
                .into_response();
        }
    }
    next.run(req).await
}

/// The header of the MCP server's API key.
pub const MCP_KEY_HEADER: &str = "x-ms-apikey";

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Reads and checks `api-version` and `identifier` from the query.
pub(crate) fn target(query: &HashMap<String, String>) -> Result<(ApiVersion, String), WireError> {
    let version = query.get("api-version").ok_or_else(|| {
        WireError::bad_request("SessionRequestValidationFailed", "api-version is required")
    })?;
    let version: ApiVersion =
        version
            .parse()
            .map_err(|e: crate::protocol::api::UnknownApiVersion| {
                WireError::bad_request("SessionRequestValidationFailed", e.to_string())
            })?;
    let identifier = query.get("identifier").ok_or_else(|| {
        WireError::bad_request("SessionRequestValidationFailed", "identifier is required")
    })?;
    validate_identifier(identifier)?;
    Ok((version, identifier.clone()))
}

/// Identifier rules of `aca-api.md` §4.5: 4 to 128 characters from the spec's set.
///
/// # Errors
///
/// A 400 `SessionRequestValidationFailed` `WireError` (`aca-api.md` §6) naming
/// the identifier and the rule.
pub fn validate_identifier(id: &str) -> Result<(), WireError> {
    crate::protocol::identifier::check(id)
        .map_err(|message| WireError::bad_request("SessionRequestValidationFailed", message))
}
