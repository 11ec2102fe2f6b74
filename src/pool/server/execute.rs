//! The local pool's execution routes: family A `POST code/execute`
//! (`aca-api.md` §3.1), family B `POST executions` and `GET executions/{id}`
//! (§4.2): the request body read and checked (size, JSON, `code` or its base64
//! form, the output limits of 2025-10-02-preview), the code run in the
//! session's kernel, and the answer written in the family's shape
//! ([`super::reply::Reply`]), with the local pool's extra members when the
//! client asks for them ([`OUTPUTS_HEADER`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::reply::Reply;
use super::{MAX_EXECUTE_BODY, Pool, node, shell, target};
use crate::pool::events::LiveOutput;
use crate::pool::kernel::OutputLimits;
use crate::pool::record::{ClientWatch, Recording};
use crate::pool::sessions::ExecutionRecord;
use crate::pool::wire_error::WireError;
use crate::protocol::api::{
    AnswerForm, ApiVersion, ExecuteRequest, FAMILY_A_STREAMS, FAMILY_B_STREAMS, Family,
    OUTPUTS_HEADER, family_a_frame, family_b_frame,
};
use crate::protocol::{ContainerType, Execution, ExecutionStatus};

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

/// The execute request in an execution body's JSON (family A's `properties`
/// or family B's flat body, `aca-api.md` §3.1, §4.2), its `code` decoded when
/// `codeInputType` is `InlineBase64`. Errors: 400
/// `SessionRequestValidationFailed` for a body without `code` (naming Shell
/// pools when it carries a shell command), one that does not read as a
/// request, or base64 code that does not decode to UTF-8 text.
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
    /// The execution limit of a request: its `timeoutInSeconds`, the pool's
    /// `max_execution` when absent, kept between 1 s and `max_execution`.
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
pub(super) async fn execute_a(
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
    let recording = Recording::start(
        pool.ledger.as_ref(),
        &pool.ledger_key,
        &headers,
        &identifier,
    );
    let live = LiveOutput::new(pool.hub.clone(), &identifier, &id, &headers);
    let (registry, sent, watch) = (
        pool.registry.clone(),
        req.code.clone(),
        recording.as_ref().map(Recording::watch),
    );
    let exec = outlive_client(watch, async move {
        let run = live.scope(registry.execute(&session, &id, &code, timeout));
        let (exec, changes) = registry
            .noting_files(&session, crate::pool::files::changes::Order::Serial, run)
            .await;
        if let Some(r) = recording {
            r.with_files(changes)
                .with_network(&exec.network)
                .code(sent.as_deref().unwrap_or_default(), &exec);
        }
        exec
    })
    .await?;
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
    add_network(&mut body, &exec, pool.registry.records_network());
    let reply = Reply {
        frame: body,
        container: FAMILY_A_STREAMS,
        exec,
    };
    Ok(reply.into_response(StatusCode::OK))
}

/// `POST executions` (family B, `aca-api.md` §4.2): flat body, 202 up to
/// 2025-02-02-preview and 200 from 2025-10-02-preview, `operation-id` honoured.
pub(super) async fn execute_b(
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
        let recording = Recording::start(
            pool.ledger.as_ref(),
            &pool.ledger_key,
            &headers,
            &identifier,
        );
        return shell::execute(&pool, version, &identifier, &id, value, recording).await;
    }
    let req = request_from(value)?;
    let limits = output_limits(&req, version)?;
    let timeout = pool.timeout(&req);
    let code = pool.cell(req.code.clone().unwrap_or_default(), timeout);
    let session = pool.session(&identifier)?;
    let recording = Recording::start(
        pool.ledger.as_ref(),
        &pool.ledger_key,
        &headers,
        &identifier,
    );
    let sent = req.code.clone().unwrap_or_default();
    let asynchronous = req
        .execution_type
        .as_deref()
        .is_some_and(|t| t.eq_ignore_ascii_case("asynchronous"));
    let cell = CellRun {
        registry: pool.registry.clone(),
        session,
        id: id.clone(),
        code,
        timeout,
        limits,
        live: LiveOutput::new(pool.hub.clone(), &identifier, &id, &headers),
    };
    let (status, frame, exec) = if asynchronous {
        pool.registry.submitted(&cell.session, &id);
        tokio::spawn(cell.run(recording, sent));
        let running = running(&id);
        let frame = family_b_frame(&running, &identifier, "Asynchronous", AnswerForm::default());
        (StatusCode::ACCEPTED, frame, running)
    } else {
        let watch = recording.as_ref().map(Recording::watch);
        let exec = outlive_client(watch, cell.run(recording, sent)).await?;
        let status = if version >= ApiVersion::V2025_10_02 {
            StatusCode::OK
        } else {
            StatusCode::ACCEPTED
        };
        let form = AnswerForm {
            jupyter: limits.jupyter,
            extras: wants_extras(&headers),
        };
        let mut frame = family_b_frame(&exec, &identifier, "Synchronous", form);
        add_network(&mut frame, &exec, pool.registry.records_network());
        (status, frame, exec)
    };
    let reply = Reply {
        frame,
        container: FAMILY_B_STREAMS,
        exec,
    };
    let mut resp = reply.into_response(status);
    add_operation_headers(&mut resp, &id, version, &identifier);
    Ok(resp)
}

/// One family B execution to run (`aca-api.md` §4.2): its session, id,
/// code (as the kernel runs it), limit, output limits and the publisher of
/// its running output.
struct CellRun {
    registry: Arc<crate::pool::sessions::SessionRegistry>,
    session: Arc<crate::pool::sessions::Session>,
    id: String,
    code: String,
    timeout: Duration,
    limits: OutputLimits,
    live: LiveOutput,
}

impl CellRun {
    /// Runs it, looks at what it changed in `/mnt/data`, and records it
    /// with `recording` as `sent` (the code as the client sent it).
    async fn run(self, recording: Option<Recording>, sent: String) -> Arc<Execution> {
        let Self {
            registry,
            session,
            id,
            code,
            timeout,
            limits,
            live,
        } = self;
        let run = live.scope(limits.scope(registry.execute(&session, &id, &code, timeout)));
        let (exec, changes) = registry
            .noting_files(&session, crate::pool::files::changes::Order::Serial, run)
            .await;
        if let Some(r) = recording {
            r.with_files(changes)
                .with_network(&exec.network)
                .code(&sent, &exec);
        }
        exec
    }
}

/// The `operation-id` and `operation-location` headers of a family B
/// execution's answer (`aca-api.md` §4.2): where `GET executions/{id}` finds
/// execution `id` of `identifier` again.
fn add_operation_headers(resp: &mut Response, id: &str, version: ApiVersion, identifier: &str) {
    let location = format!(
        "/executions/{id}?api-version={version}&identifier={}",
        url::form_urlencoded::byte_serialize(identifier.as_bytes()).collect::<String>()
    );
    for (name, value) in [
        ("operation-id", id),
        ("operation-location", location.as_str()),
    ] {
        if let Ok(v) = HeaderValue::from_str(value) {
            resp.headers_mut().insert(name, v);
        }
    }
}

/// Runs `work` (an execution, then its recording) on a task of its own and
/// waits for its output. A client that goes away before the answer (its
/// timeout, a closed connection) makes the server drop this future, not the
/// work: the kernel's answer is still recorded, and `watch` marks it as
/// answered to nobody (issue 26).
///
/// # Errors
///
/// A 500 `InternalServerError` when the task panicked.
pub(super) async fn outlive_client<T: Send + 'static>(
    watch: Option<ClientWatch>,
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, WireError> {
    let out = tokio::spawn(work)
        .await
        .map_err(|e| crate::pool::files::internal(format!("the execution's task failed: {e}")))?;
    if let Some(watch) = watch {
        watch.answered();
    }
    Ok(out)
}

/// `GET executions/{id}` (family B, `aca-api.md` §4.2): the state of an execution
/// of this session; 404 `ExecutionNotFound` for an unknown id.
pub(super) async fn get_execution(
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
        ExecutionRecord::Running => (running(&id), false),
    };
    if pool.container_type.is_shell() {
        let mut answer = shell::recorded(&exec, &identifier);
        add_network(&mut answer, &exec, pool.registry.records_network());
        return Ok(Json(answer).into_response());
    }
    let form = AnswerForm {
        jupyter,
        extras: wants_extras(&headers),
    };
    let mut frame = family_b_frame(&exec, &identifier, "Asynchronous", form);
    add_network(&mut frame, &exec, pool.registry.records_network());
    let reply = Reply {
        frame,
        container: FAMILY_B_STREAMS,
        exec,
    };
    Ok(reply.into_response(StatusCode::OK))
}

/// Adds what `exec` tried to reach, through its session's egress proxy or
/// directly (issue 29), to its answer `frame`, at the top level as
/// `sessionpadNetwork` (an array of `{"host","port","decision","via",
/// "bytes","at"}`, [`crate::protocol::egress::NetworkAttempt`]), whenever the
/// pool records its sessions' attempts (`recorded`: a sandbox without
/// `--egress`), even empty; nothing otherwise. sessionpad's own field, which
/// other clients ignore.
pub(super) fn add_network(frame: &mut serde_json::Value, exec: &Execution, recorded: bool) {
    if recorded && let Some(fields) = frame.as_object_mut() {
        fields.insert(
            crate::protocol::egress::REPLY_FIELD.to_string(),
            serde_json::json!(exec.network),
        );
    }
}

/// What an answer says of execution `id` while it runs: status `Running`, no
/// output, no value, no duration yet (family B, `aca-api.md` §4.2).
fn running(id: &str) -> Arc<Execution> {
    Arc::new(Execution {
        execution_count: None,
        id: Some(id.to_string()),
        status: ExecutionStatus::Running,
        stdout: String::new(),
        stderr: String::new(),
        result: None,
        images: vec![],
        duration: Duration::ZERO,
        network: Vec::new(),
    })
}
