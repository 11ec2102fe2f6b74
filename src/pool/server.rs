//! The local pool's HTTP routes: family A `code/execute` (`aca-api.md` §3.1) and
//! family B `executions` (§4.2), behind bearer-token authentication; every error
//! in Azure's shape (§6.1, `wire_error::azure_shape`), the unread rest of
//! a request body drained before an early answer (`server::drain`), one escaped log line
//! per request.

pub(crate) mod drain;
mod node;
mod reply;
pub(crate) mod run;
mod shell;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use super::PoolOptions;
use super::kernel::OutputLimits;
use super::record::Recording;
use super::sessions::{ExecutionRecord, Session, SessionError, SessionRegistry};
use super::wire_error::WireError;
use crate::client::api::{
    AnswerForm, ApiVersion, ExecuteRequest, FAMILY_A_STREAMS, FAMILY_B_STREAMS, Family,
    OUTPUTS_HEADER, family_a_frame, family_b_frame,
};
use crate::client::{ContainerType, Execution, ExecutionStatus};
use reply::Reply;

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
    /// The event stream's hub: running cells' output is published to it
    /// ([`super::events::LiveOutput`]).
    pub(crate) hub: crate::events::Hub,
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
pub const MCP_ROUTE: &str = "/mcp";

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
        hub: hub.clone(),
    };
    let tools =
        crate::mcp::SessionTools::new(Arc::new(super::mcp_host::PoolHost::new(pool.clone())));
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
///
/// # Errors
///
/// A 400 `SessionRequestValidationFailed` `WireError` (`aca-api.md` §6) naming
/// the identifier and the rule.
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

/// The JSON of an execution request body. Errors: 413 `RequestBodyTooLarge` past
/// [`MAX_EXECUTE_BODY`], 400 `SessionRequestValidationFailed` for a body that
/// cannot be read or is not JSON.
fn parse_json(body: Result<Bytes, BytesRejection>) -> Result<Value, WireError> {
    let body = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            WireError {
                status: StatusCode::PAYLOAD_TOO_LARGE,
                code: "RequestBodyTooLarge",
                message: format!(
                    "the request body is larger than the {MAX_EXECUTE_BODY} bytes an execution request may have"
                ),
            }
        } else {
            WireError::bad_request(
                "SessionRequestValidationFailed",
                format!("the request body could not be read: {e}"),
            )
        }
    })?;
    serde_json::from_slice(&body).map_err(|e| {
        WireError::bad_request(
            "SessionRequestValidationFailed",
            format!("the body is not JSON: {e}"),
        )
    })
}

fn request_from(value: Value) -> Result<ExecuteRequest, WireError> {
    if value.get("code").is_none()
        && ["shellCommand", "execCommandAndArgs"]
            .iter()
            .any(|k| value.get(k).is_some())
    {
        return Err(WireError::bad_request(
            "SessionRequestValidationFailed",
            "code is required: this pool runs code, and shellCommand and execCommandAndArgs are for Shell pools (sessionpad serve --container-type shell)",
        ));
    }
    let mut req: ExecuteRequest = serde_json::from_value(value).map_err(|e| {
        WireError::bad_request(
            "SessionRequestValidationFailed",
            format!("invalid request: {e}"),
        )
    })?;
    let Some(code) = req.code.take() else {
        return Err(WireError::bad_request(
            "SessionRequestValidationFailed",
            "code is required",
        ));
    };
    // `InlineBase64` carries the code base64-encoded (`aca-api.md` §4.2).
    let base64 = req
        .code_input_type
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case("inlinebase64"));
    req.code = Some(if base64 {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(code.trim())
            .map_err(|e| {
                WireError::bad_request(
                    "SessionRequestValidationFailed",
                    format!("codeInputType is InlineBase64 but code is not base64: {e}"),
                )
            })?;
        String::from_utf8(bytes).map_err(|_| {
            WireError::bad_request(
                "SessionRequestValidationFailed",
                "the base64 code is not UTF-8 text",
            )
        })?
    } else {
        code
    });
    Ok(req)
}

/// The output limits a family B request asks for: `outputStreamsMaxLength`
/// (characters, see [`OutputLimits::stream_chars`]) and
/// `returnJupyterFormatExecutionResult` ([`OutputLimits::jupyter`]) from
/// 2025-10-02-preview, where the fields exist (§4.2, §13); earlier versions do
/// not have them and they are ignored.
/// Errors: 400 `SessionRequestValidationFailed` for a negative value or one past
/// int32.
fn output_limits(req: &ExecuteRequest, version: ApiVersion) -> Result<OutputLimits, WireError> {
    let jupyter = req.wants_jupyter_format(version);
    let Some(n) = req.output_streams_max_length else {
        return Ok(OutputLimits {
            stream_chars: None,
            jupyter,
        });
    };
    if version < ApiVersion::V2025_10_02 {
        return Ok(OutputLimits::default());
    }
    if !(0..=i64::from(i32::MAX)).contains(&n) {
        return Err(WireError::bad_request(
            "SessionRequestValidationFailed",
            format!("outputStreamsMaxLength must be 0 to {}, not {n}", i32::MAX),
        ));
    }
    Ok(OutputLimits {
        stream_chars: usize::try_from(n).ok(),
        jupyter: req.wants_jupyter_format(version),
    })
}

/// Whether the request asks for the local pool's extra members
/// ([`OUTPUTS_HEADER`]`: all`, sent by sessionpad's client); published clients
/// never send it and get the service's shapes.
fn wants_extras(headers: &HeaderMap) -> bool {
    headers
        .get(OUTPUTS_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("all"))
}

impl Pool {
    fn timeout(&self, req: &ExecuteRequest) -> Duration {
        req.timeout_in_seconds
            .map_or(self.max_execution, Duration::from_secs)
            .min(self.max_execution)
            .max(Duration::from_secs(1))
    }

    /// What the session's kernel runs for the `code` of a request with limit
    /// `timeout`: the code itself on a Python pool, the call that runs it as
    /// JavaScript on a NodeLTS pool.
    fn cell(&self, code: String, timeout: Duration) -> String {
        match self.container_type {
            ContainerType::NodeLts => node::runner_call(&code, timeout),
            _ => code,
        }
    }
}

/// `POST code/execute` (family A, `aca-api.md` §3.1).
async fn execute_a(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, WireError> {
    let (version, identifier) = target(&query)?;
    if pool.container_type.is_shell() {
        return Err(WireError::bad_request(
            "SessionRequestNotSupported",
            "this is a Shell pool: shell commands go to POST executions (api-version 2024-10-02-preview or later) as shellCommand or execCommandAndArgs",
        ));
    }
    let value = parse_json(body)?;
    let inner = value.get("properties").cloned().unwrap_or(value);
    let req = request_from(inner)?;
    let timeout = pool.timeout(&req);
    let code = pool.cell(req.code.clone().unwrap_or_default(), timeout);
    let session = pool.session(&identifier)?;
    let id = uuid::Uuid::new_v4().to_string();
    let recording = Recording::start(pool.ledger.as_ref(), &headers, &identifier);
    let live = super::events::LiveOutput::new(pool.hub.clone(), &identifier, &id, &headers);
    let exec = live
        .scope(pool.registry.execute(&session, &id, &code, timeout))
        .await;
    if let Some(r) = &recording {
        r.code(req.code.as_deref().unwrap_or_default(), &exec);
    }
    let mut body = family_a_frame(&exec, version, wants_extras(&headers));
    // Microsoft's Node.js tutorial shows `executionResult` in 2024-02-02-preview,
    // where Python pools answer `result` (`aca-api.md` §3.1, §13).
    if pool.container_type == ContainerType::NodeLts
        && let Some(value) = body["properties"]
            .as_object_mut()
            .and_then(|p| p.remove("result"))
    {
        body["properties"]["executionResult"] = value;
    }
    let reply = Reply {
        frame: body,
        container: FAMILY_A_STREAMS,
        exec,
    };
    Ok(reply.into_response(StatusCode::OK))
}

/// `POST executions` (family B, `aca-api.md` §4.2): flat body, 202 up to
/// 2025-02-02-preview and 200 from 2025-10-02-preview, `operation-id` honoured.
async fn execute_b(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, WireError> {
    let (version, identifier) = target(&query)?;
    if version.family() != Family::B {
        return Err(WireError::bad_request(
            "SessionRequestNotSupported",
            format!("executions is not available in api-version {version}; use code/execute"),
        ));
    }
    let value = parse_json(body)?;
    if value.get("properties").is_some() {
        return Err(WireError::bad_request(
            "SessionPropertiesMissing",
            "executions takes a flat body: send codeInputType, executionType and code without a properties wrapper",
        ));
    }
    let id = headers
        .get("operation-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_string);
    if pool.container_type.is_shell() {
        let recording = Recording::start(pool.ledger.as_ref(), &headers, &identifier);
        return shell::execute(&pool, version, &identifier, &id, value, recording).await;
    }
    let req = request_from(value)?;
    let limits = output_limits(&req, version)?;
    let timeout = pool.timeout(&req);
    let code = pool.cell(req.code.clone().unwrap_or_default(), timeout);
    let session = pool.session(&identifier)?;
    let recording = Recording::start(pool.ledger.as_ref(), &headers, &identifier);
    let sent = req.code.clone().unwrap_or_default();
    let asynchronous = req
        .execution_type
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case("asynchronous"));
    let (status, frame, exec) = if asynchronous {
        pool.registry.submitted(&session, &id);
        let (registry, session, id2) = (pool.registry.clone(), session.clone(), id.clone());
        let live = super::events::LiveOutput::new(pool.hub.clone(), &identifier, &id, &headers);
        tokio::spawn(async move {
            let exec = live
                .scope(limits.scope(registry.execute(&session, &id2, &code, timeout)))
                .await;
            if let Some(r) = &recording {
                r.code(&sent, &exec);
            }
        });
        let running = Arc::new(Execution {
            id: Some(id.clone()),
            status: ExecutionStatus::Running,
            stdout: String::new(),
            stderr: String::new(),
            result: None,
            images: vec![],
            duration: Duration::ZERO,
        });
        let frame = family_b_frame(&running, &identifier, "Asynchronous", AnswerForm::default());
        (StatusCode::ACCEPTED, frame, running)
    } else {
        let live = super::events::LiveOutput::new(pool.hub.clone(), &identifier, &id, &headers);
        let exec = live
            .scope(limits.scope(pool.registry.execute(&session, &id, &code, timeout)))
            .await;
        if let Some(r) = &recording {
            r.code(&sent, &exec);
        }
        let status = if version >= ApiVersion::V2025_10_02 {
            StatusCode::OK
        } else {
            StatusCode::ACCEPTED
        };
        let form = AnswerForm {
            jupyter: limits.jupyter,
            extras: wants_extras(&headers),
        };
        let frame = family_b_frame(&exec, &identifier, "Synchronous", form);
        (status, frame, exec)
    };
    let reply = Reply {
        frame,
        container: FAMILY_B_STREAMS,
        exec,
    };
    let mut resp = reply.into_response(status);
    let location = format!(
        "/executions/{id}?api-version={version}&identifier={}",
        url::form_urlencoded::byte_serialize(identifier.as_bytes()).collect::<String>()
    );
    for (name, value) in [
        ("operation-id", id.as_str()),
        ("operation-location", location.as_str()),
    ] {
        if let Ok(v) = HeaderValue::from_str(value) {
            resp.headers_mut().insert(name, v);
        }
    }
    Ok(resp)
}

/// `GET executions/{id}` (family B, `aca-api.md` §4.2): the state of an execution
/// of this session; 404 `ExecutionNotFound` for an unknown id.
async fn get_execution(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Result<Response, WireError> {
    let (_, identifier) = target(&query)?;
    let not_found = || WireError {
        status: StatusCode::NOT_FOUND,
        code: "ExecutionNotFound",
        message: format!("no execution {id} in session {identifier}"),
    };
    let session = pool.registry.get(&identifier).ok_or_else(not_found)?;
    let record = session.execution(&id).ok_or_else(not_found)?;
    let (exec, jupyter) = match record {
        ExecutionRecord::Done { exec, jupyter } => (exec, jupyter),
        ExecutionRecord::Running => (
            Arc::new(Execution {
                id: Some(id.clone()),
                status: ExecutionStatus::Running,
                stdout: String::new(),
                stderr: String::new(),
                result: None,
                images: vec![],
                duration: Duration::ZERO,
            }),
            false,
        ),
    };
    if pool.container_type.is_shell() {
        return Ok(Json(shell::recorded(&exec, &identifier)).into_response());
    }
    let form = AnswerForm {
        jupyter,
        extras: wants_extras(&headers),
    };
    let reply = Reply {
        frame: family_b_frame(&exec, &identifier, "Asynchronous", form),
        container: FAMILY_B_STREAMS,
        exec,
    };
    Ok(reply.into_response(StatusCode::OK))
}
