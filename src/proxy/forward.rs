//! Forwarding one request to the upstream and its answer back: the path and
//! query as received (not re-encoded), every header but the hop-by-hop ones,
//! `Host` and the agent's `Authorization` (replaced by the proxy's Entra
//! token), bodies streamed; an absolute `Operation-Location` that points at
//! the upstream is rewritten to point at the proxy. What [`route::Op`] says is
//! recorded on the way.
//!
//! Errors of the proxy's own, in the service's shape (`aca-api.md` §6.1):
//! 502 `UpstreamUnreachable` (nothing answered at the upstream), 502
//! `UpstreamAuthenticationFailed` (no token could be had: not signed in, an
//! expired static token, …), and the upstream's 401 or 403 with a message
//! saying what the proxy's identity lacks (the client's own words, see
//! [`ClientError::Unauthorized`] and [`ClientError::Forbidden`]).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::files::Held;
use super::record::{self, About, Answer, Sent};
use super::route::Op;
use super::tap;
use super::{Shared, route};
use crate::client::ClientError;
use crate::pool::record::{ClientWatch, DownloadTap, Recording};
use crate::pool::wire_error::WireError;
use crate::protocol::api::ApiVersion;
use tokio::sync::OwnedMutexGuard;

/// Most bytes of an execution request the proxy reads to record it: 16 MiB
/// (the local pool takes 2 MiB; the service's limit is not documented). A
/// larger one gets 413 in the service's shape.
const MAX_EXECUTE_REQUEST: usize = 16 * 1024 * 1024;

/// Most bytes of an execution's answer the proxy holds to record it: 256 MiB
/// (outputs and images); a larger answer breaks off as the upstream's own
/// would on a failed connection.
const MAX_EXECUTE_ANSWER: usize = 256 * 1024 * 1024;

/// Most bytes of a 401/403 answer read for its message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// What a recorded upload's file part turns out to be, once the request's body
/// has gone through ([`tap::tee_upload`]).
type UploadPart = tokio::sync::oneshot::Receiver<Option<tap::UploadedPart>>;

/// Headers that belong to one connection (RFC 9110 §7.6.1) and are never
/// forwarded, with `Host` (the upstream's is set by the client) and
/// `Authorization` (the agent's token for the proxy).
const NOT_FORWARDED: [HeaderName; 9] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::HOST,
];

/// Forwards `req` to the upstream and answers with the upstream's answer (see
/// the module doc). A recorded call that changes the session (an execution,
/// an upload, a delete: [`Op::changes_the_session`]) is carried out on a task
/// of its own ([`outlive_agent`]), so it is recorded even when its agent goes
/// away before the answer.
pub(crate) async fn forward(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let query = parts.uri.query().unwrap_or("");
    let op = Op::of(
        &parts.method,
        parts.uri.path(),
        query_param(query, "path").as_deref(),
    );
    let identifier = query_param(query, "identifier").unwrap_or_default();
    let recording = shared.ledger.as_ref().and_then(|recorder| {
        (op != Op::Other && !identifier.is_empty()).then(|| {
            Recording::start_in(
                recorder,
                shared.pool_key.clone(),
                &parts.headers,
                &identifier,
            )
        })
    });
    let watch = recording
        .as_ref()
        .filter(|_| op.changes_the_session())
        .map(Recording::watch);
    let about = About {
        identifier,
        api: query_param(query, "api-version")
            .and_then(|v| v.parse().ok())
            .unwrap_or(ApiVersion::V2025_10_02),
    };
    let exchange = async move {
        let mut turn = None;
        if let (Some(files), Some(_)) = (&shared.files, &recording) {
            // An execution waits for its turn; a look at this session's
            // files in progress must not see this call: wait for it; and
            // list the session once before its first execution
            // (`super::files`).
            let look = files.session(&about.identifier);
            if op == Op::Execute {
                turn = look.turn().await;
            }
            let gate = look.hold().await;
            if op == Op::Execute {
                files.baseline(&about.identifier, about.api, &look).await;
            }
            drop(gate);
        }
        let recorded = recording.map(|r| (r, about, turn));
        forward_inner(&shared, parts, body, op, recorded)
            .await
            .unwrap_or_else(IntoResponse::into_response)
    };
    match watch {
        Some(watch) => outlive_agent(watch, exchange).await,
        None => exchange.await,
    }
}

/// Runs `exchange` (a request sent upstream, its answer read and recorded) on
/// a task of its own and waits for its answer to the agent. An agent that goes
/// away before it (its timeout, a closed connection) makes the server drop
/// this future, not the exchange: the upstream, which may be running the
/// agent's code, still gets the whole request and its answer is still read
/// and recorded, and `watch` marks the call as answered to nobody (issue 26;
/// the local pool's `outlive_client`). A task that panicked is a 500
/// `InternalServerError` in the service's shape.
async fn outlive_agent(
    watch: ClientWatch,
    exchange: impl std::future::Future<Output = Response> + Send + 'static,
) -> Response {
    match tokio::spawn(exchange).await {
        Ok(resp) => {
            watch.answered();
            resp
        }
        Err(e) => WireError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: "InternalServerError",
            message: format!("the forwarding task failed: {e}"),
        }
        .into_response(),
    }
}

/// The recording of a call, the session it is about, and the execution's
/// turn in the session when it holds it (see [`super::files`]).
type Recorded = (Recording, About, Option<OwnedMutexGuard<()>>);

/// Forwards the request of `parts` and `body`, which is `op`, and records it
/// with `recording` (`None`: not recorded) on the way.
async fn forward_inner(
    shared: &Arc<Shared>,
    parts: Parts,
    body: Body,
    op: Op,
    recording: Option<Recorded>,
) -> Result<Response, WireError> {
    let query = parts.uri.query().unwrap_or("");
    let (upstream, sent, uploaded) =
        send_upstream(shared, &parts, &op, recording.is_some(), body).await?;
    let status = upstream.status();
    if matches!(status.as_u16(), 401 | 403) {
        return Ok(refused(shared, upstream).await);
    }
    let resp_headers = answer_headers(upstream.headers(), &shared.upstream);
    let ok = status.is_success();
    let body = match (op, recording) {
        (Op::Execute | Op::Poll(_), Some(recorded)) if ok => {
            let bytes = read_answer(upstream).await?;
            // Hold the session's gate from before the agent has the answer
            // until the look at its files has listed and the execution is
            // recorded: the agent's next call waits, so it is neither seen
            // by the look nor recorded before the execution.
            let finishes = op_id(&parts.method, parts.uri.path())
                .is_none_or(|id| shared.pending.contains(&id));
            let gate = match &shared.files {
                Some(files) if finishes => files.session(&recorded.1.identifier).hold().await,
                _ => None,
            };
            record_execution(shared, &parts, recorded, sent, bytes.clone(), gate);
            Body::from(bytes)
        }
        (Op::Download(name), Some((recording, ..))) if ok => {
            let expected = upstream.content_length().unwrap_or(u64::MAX);
            let tap = DownloadTap::new(recording, name, expected);
            tap::tap_download(upstream.bytes_stream(), tap)
        }
        (Op::Upload, Some((recording, about, _))) if ok => {
            if let Some(part) = uploaded {
                let path = query_param(query, "path");
                record_upload(shared, recording, about, path, part);
            }
            Body::from_stream(upstream.bytes_stream())
        }
        (Op::Delete(name), Some((recording, about, _))) if ok => {
            if let Some(files) = &shared.files {
                files.deleted(&about.identifier, &name);
            }
            recording.file(crate::protocol::record::CallKind::Delete, name, None, None);
            Body::from_stream(upstream.bytes_stream())
        }
        _ => Body::from_stream(upstream.bytes_stream()),
    };
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    *resp.headers_mut() = resp_headers;
    Ok(resp)
}

/// The value of parameter `name` in the request's `query`, decoded.
fn query_param(query: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// Sends the agent's request upstream: the same method, path and query, its
/// headers with the proxy's token ([`upstream_headers`]) and its body (see
/// [`with_body`]); returns the upstream's answer with what was learned of the
/// body for the record.
///
/// # Errors
///
/// A [`WireError`]: no token (502 `UpstreamAuthenticationFailed`), a recorded
/// execution's request too large (413 `RequestBodyTooLarge`), or nothing
/// answered at the upstream (502 `UpstreamUnreachable`).
async fn send_upstream(
    shared: &Shared,
    parts: &Parts,
    op: &Op,
    recorded: bool,
    body: Body,
) -> Result<(reqwest::Response, Option<Sent>, Option<UploadPart>), WireError> {
    let url = match parts.uri.query() {
        Some(q) => format!("{}{}?{q}", shared.upstream, parts.uri.path()),
        None => format!("{}{}", shared.upstream, parts.uri.path()),
    };
    let headers = upstream_headers(shared, parts).await?;
    let builder = shared
        .http
        .request(parts.method.clone(), &url)
        .headers(headers);
    let (builder, sent, uploaded) = with_body(builder, op, recorded, &parts.headers, body).await?;
    let upstream = builder.send().await.map_err(|e| WireError {
        status: StatusCode::BAD_GATEWAY,
        code: "UpstreamUnreachable",
        message: format!(
            "the sessionpad proxy cannot reach the session pool at {}: {}",
            shared.upstream,
            describe_transport(&e)
        ),
    })?;
    Ok((upstream, sent, uploaded))
}

/// The headers to send upstream: the agent's (see [`forwarded_headers`]) with
/// the proxy's bearer token, except on the MCP route, which carries none.
///
/// # Errors
///
/// A 502 `UpstreamAuthenticationFailed` [`WireError`]: no token could be had,
/// or it cannot be sent in a header.
async fn upstream_headers(shared: &Shared, parts: &Parts) -> Result<HeaderMap, WireError> {
    let mcp = parts.uri.path().trim_start_matches('/') == "mcp";
    let bearer = if mcp {
        None
    } else {
        shared.tokens.bearer().await.map_err(|e| WireError {
            status: StatusCode::BAD_GATEWAY,
            code: "UpstreamAuthenticationFailed",
            message: format!(
                "the sessionpad proxy could not get a token for the session pool at {} \
                 (auth: {}): {e}",
                shared.upstream,
                shared.tokens.describe()
            ),
        })?
    };
    let mut headers = forwarded_headers(&parts.headers);
    if let Some(bearer) = bearer {
        let mut value = HeaderValue::from_str(&bearer).map_err(|_| WireError {
            status: StatusCode::BAD_GATEWAY,
            code: "UpstreamAuthenticationFailed",
            message: "the proxy's token cannot be sent in a header".into(),
        })?;
        value.set_sensitive(true);
        headers.insert(header::AUTHORIZATION, value);
    }
    Ok(headers)
}

/// `builder` with the agent's `body`: held for a recorded execution (to record
/// its code, returned read), teed for a recorded upload (to hash its file part,
/// returned as it will be known), else streamed as it comes.
///
/// # Errors
///
/// A 413 `RequestBodyTooLarge` [`WireError`]: a recorded execution's request
/// could not be read whole (larger than [`MAX_EXECUTE_REQUEST`], or broken off).
async fn with_body(
    builder: reqwest::RequestBuilder,
    op: &Op,
    recorded: bool,
    headers: &HeaderMap,
    body: Body,
) -> Result<(reqwest::RequestBuilder, Option<Sent>, Option<UploadPart>), WireError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    Ok(match (op, recorded) {
        (Op::Execute, true) => {
            let bytes = axum::body::to_bytes(body, MAX_EXECUTE_REQUEST)
                .await
                .map_err(|e| WireError {
                    status: StatusCode::PAYLOAD_TOO_LARGE,
                    code: "RequestBodyTooLarge",
                    message: format!("the execution request could not be read: {e}"),
                })?;
            let sent = Sent::read(&bytes);
            (builder.body(bytes), sent, None)
        }
        (Op::Upload, true) => {
            let (stream, part) = tap::tee_upload(body, content_type);
            (
                builder.body(reqwest::Body::wrap_stream(stream)),
                None,
                Some(part),
            )
        }
        _ => (
            builder.body(reqwest::Body::wrap_stream(body.into_data_stream())),
            None,
            None,
        ),
    })
}

/// Records a successful execution or poll from its `answer`, on a task of its
/// own: a poll (`GET executions/{id}`) settles the pending execution it names;
/// an execution's request `sent` is recorded with its answer (and what it
/// changed in the session's files, listed while `gate`, the session's, is
/// held), and one still running is watched until it ends.
fn record_execution(
    shared: &Arc<Shared>,
    parts: &Parts,
    (recording, about, turn): Recorded,
    sent: Option<Sent>,
    answer: Bytes,
    gate: Option<OwnedMutexGuard<()>>,
) {
    let held = Held { turn, gate };
    let shared = Arc::clone(shared);
    match (op_id(&parts.method, parts.uri.path()), sent) {
        (Some(id), _) => {
            shared.recording.clone().spawn(async move {
                if let record::Polled::Finished(finished) =
                    record::polled(&id, &answer, &shared.pending)
                {
                    finished.record(shared.files.as_ref(), held).await;
                }
            });
        }
        (None, Some(sent)) => {
            let query = parts.uri.query().map(str::to_string);
            shared.recording.clone().spawn(async move {
                match Answer::read(&answer) {
                    Answer::Finished(answer) => {
                        let finished = record::Finished::new(recording, sent, about, answer);
                        finished.record(shared.files.as_ref(), held).await;
                    }
                    Answer::Running(id) => {
                        drop(held);
                        record::keep_pending(&shared.pending, id.clone(), recording, sent, about);
                        // Not waited for at shutdown: it may poll for minutes.
                        tokio::spawn(super::watch::watch(shared, id, query));
                    }
                    Answer::Unreadable => {}
                }
            });
        }
        (None, None) => {}
    }
}

/// Records a successful upload once its file `part` has been read from the
/// request (its name under the data root, below the request's `path`; its size
/// and hash), on a task of its own, and takes the file into the proxy's
/// listing of the session.
fn record_upload(
    shared: &Arc<Shared>,
    recording: Recording,
    about: About,
    query_path: Option<String>,
    part: UploadPart,
) {
    let shared = Arc::clone(shared);
    shared.recording.clone().spawn(async move {
        if let Ok(Some(part)) = part.await {
            let name = route::below_data(query_path.as_deref(), &[&part.file_name]);
            if let Some(files) = &shared.files {
                files.uploaded(&about.identifier, &name, part.size, part.sha256.clone());
            }
            recording.file(
                crate::protocol::record::CallKind::Upload,
                name,
                Some(part.size),
                Some(part.sha256),
            );
        }
    });
}

/// The execution id of a polling request (`GET executions/{id}`).
fn op_id(method: &Method, path: &str) -> Option<String> {
    match Op::of(method, path, None) {
        Op::Poll(id) => Some(id),
        _ => None,
    }
}

/// The whole answer of an execution (see [`MAX_EXECUTE_ANSWER`]).
///
/// # Errors
///
/// A 502 [`WireError`]: the upstream broke off its answer, or it is larger
/// than [`MAX_EXECUTE_ANSWER`].
pub(crate) async fn read_answer(mut upstream: reqwest::Response) -> Result<Bytes, WireError> {
    let mut body = Vec::new();
    loop {
        let chunk = upstream.chunk().await.map_err(|e| WireError {
            status: StatusCode::BAD_GATEWAY,
            code: "UpstreamUnreachable",
            message: format!(
                "the session pool broke off its answer: {}",
                describe_transport(&e)
            ),
        })?;
        let Some(chunk) = chunk else { break };
        if body.len() + chunk.len() > MAX_EXECUTE_ANSWER {
            return Err(WireError {
                status: StatusCode::BAD_GATEWAY,
                code: "UpstreamAnswerTooLarge",
                message: format!(
                    "the session pool's answer is larger than the proxy holds ({MAX_EXECUTE_ANSWER} bytes)"
                ),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

/// The agent's headers to send upstream: all but [`NOT_FORWARDED`] and
/// `Authorization`.
fn forwarded_headers(given: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(given.len());
    for (name, value) in given {
        if name != header::AUTHORIZATION && !NOT_FORWARDED.contains(name) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// The upstream's headers to answer with: all but [`NOT_FORWARDED`]; an
/// `Operation-Location` under the upstream endpoint made relative to the
/// proxy (an agent that follows it then stays on the proxy).
fn answer_headers(given: &reqwest::header::HeaderMap, upstream: &str) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(given.len());
    for (name, value) in given {
        if NOT_FORWARDED.contains(name) {
            continue;
        }
        let rewritten = (name.as_str() == "operation-location")
            .then(|| value.to_str().ok())
            .flatten()
            .and_then(|v| v.strip_prefix(upstream))
            .and_then(|rest| HeaderValue::from_str(rest).ok());
        out.append(name.clone(), rewritten.unwrap_or_else(|| value.clone()));
    }
    out
}

/// The upstream's 401 or 403, in the service's shape with the upstream's
/// error code (`Unauthorized` or `Forbidden` when it sent none), saying what
/// the proxy's identity needs; a 401 also drops the cached token, so the next
/// call fetches a new one.
async fn refused(shared: &Shared, upstream: reqwest::Response) -> Response {
    let status = upstream.status();
    let header_code = upstream
        .headers()
        .get("x-ms-error-code")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = read_limited(upstream).await;
    let parsed = serde_json::from_slice::<serde_json::Value>(&body).ok();
    let field = |pointer: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.pointer(pointer))
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    };
    let message = field("/error/message").or_else(|| {
        let text = String::from_utf8_lossy(&body).trim().to_string();
        (!text.is_empty() && parsed.is_none()).then_some(text)
    });
    let unauthorized = status == StatusCode::UNAUTHORIZED;
    let what = if unauthorized {
        shared.tokens.invalidate();
        ClientError::Unauthorized {
            message,
            sessionpad: false,
        }
    } else {
        ClientError::Forbidden { message }
    };
    let code = header_code
        .or_else(|| field("/error/code"))
        .filter(|c| HeaderValue::from_str(c).is_ok())
        .unwrap_or_else(|| {
            if unauthorized {
                "Unauthorized"
            } else {
                "Forbidden"
            }
            .into()
        });
    let message = format!(
        "the session pool at {} refused the sessionpad proxy's identity (auth: {}): {what}",
        shared.upstream,
        shared.tokens.describe()
    );
    let mut resp = (
        status,
        axum::Json(serde_json::json!({"error": {"code": code, "message": message}})),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&code) {
        resp.headers_mut().insert("x-ms-error-code", v);
    }
    resp
}

async fn read_limited(mut upstream: reqwest::Response) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = upstream.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_ERROR_BODY {
            body.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    body
}

/// A transport error with its causes (reqwest's own text says only "error
/// sending request").
pub(crate) fn describe_transport(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_token_and_connection_headers_stay_behind() {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer agent"),
        );
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:1"));
        h.insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
        h.insert(header::USER_AGENT, HeaderValue::from_static("agent/1"));
        h.insert("operation-id", HeaderValue::from_static("op-1"));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("12"));
        let out = forwarded_headers(&h);
        assert!(out.get(header::AUTHORIZATION).is_none());
        assert!(out.get(header::HOST).is_none());
        assert!(out.get(header::CONNECTION).is_none());
        assert_eq!(out["user-agent"], "agent/1");
        assert_eq!(out["operation-id"], "op-1");
        assert_eq!(out["content-length"], "12");
    }

    #[test]
    fn an_operation_location_on_the_upstream_points_at_the_proxy() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "operation-location",
            HeaderValue::from_static("https://up.example/pools/p/executions/e1?api-version=v"),
        );
        h.insert("x-ms-session-guid", HeaderValue::from_static("g"));
        let out = answer_headers(&h, "https://up.example/pools/p");
        assert_eq!(out["operation-location"], "/executions/e1?api-version=v");
        assert_eq!(out["x-ms-session-guid"], "g");
        let mut relative = reqwest::header::HeaderMap::new();
        relative.insert(
            "operation-location",
            HeaderValue::from_static("/executions/e2"),
        );
        assert_eq!(
            answer_headers(&relative, "https://up.example/pools/p")["operation-location"],
            "/executions/e2"
        );
    }
}
