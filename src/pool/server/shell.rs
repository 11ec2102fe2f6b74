//! `POST executions` on a Shell pool (`serve --container-type shell`,
//! `aca-api.md` §4.7, §13): the body is read as clients send it
//! ([`ShellRequestBody`]: `shellCommand` or `execCommandAndArgs`, `stdin`,
//! `timeoutInSeconds`, with or without `codeInputType`/`executionType`), the
//! command runs in the session's sandboxed kernel through the shell runner
//! (`assets/python/shell_session.py`), and the answer is the service's shell
//! reply: `status` is the exit code as a string.

use std::time::Duration;

use axum::Json;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};

use super::{Pool, WireError};
use crate::pool::kernel::OutputLimits;
use crate::pool::record::Recording;
use crate::protocol::api::ApiVersion;
use crate::protocol::shell::{ShellCommand, ShellExecution, ShellRequestBody, shell_response};
use crate::protocol::{Execution, ExecutionStatus};

/// The Python call that runs `command` with `stdin` in a Shell pool's kernel:
/// the request travels as base64 JSON, so no part of it is read as Python.
pub(crate) fn runner_call(command: &ShellCommand, stdin: Option<&str>) -> String {
    let mut req = match command {
        ShellCommand::Line(line) => json!({ "line": line }),
        ShellCommand::Argv(argv) => json!({ "argv": argv }),
    };
    if let Some(stdin) = stdin {
        req["stdin"] = json!(stdin);
    }
    let b64 = base64::engine::general_purpose::STANDARD.encode(req.to_string());
    format!("_sessionpad_shell('{b64}')")
}

/// A kernel execution of [`runner_call`] as a shell outcome: the exit code is
/// the call's value; a command that did not finish (timed out, its session
/// died) has none, and the kernel's reason is in `stderr`.
pub(crate) fn outcome(exec: &Execution) -> ShellExecution {
    let exit_code = match exec.status {
        ExecutionStatus::Succeeded => exec
            .result
            .as_ref()
            .and_then(|v| v.json.as_ref())
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok()),
        _ => None,
    };
    ShellExecution {
        id: exec.id.clone(),
        exit_code,
        state: None,
        stdout: exec.stdout.clone(),
        stderr: exec.stderr.clone(),
        duration: exec.duration,
        network: exec.network.clone(),
    }
}

/// The service's cut of a Shell execution's streams (`serve --azure-limits`):
/// each of stdout and stderr keeps at most `cap` bytes, whole characters, with
/// no marker; the exit code is left as it is (the service still answers `"0"`).
fn cut_streams(exec: &mut Execution, cap: usize) {
    use crate::protocol::service_limits::cut_bytes;
    for stream in [&mut exec.stdout, &mut exec.stderr] {
        let keep = cut_bytes(stream, cap).len();
        stream.truncate(keep);
    }
}

fn bad(message: impl Into<String>) -> WireError {
    WireError::bad_request("SessionRequestValidationFailed", message)
}

/// `POST executions` of a Shell pool, for `identifier` in `version` (family B),
/// with the execution id `id`.
pub(super) async fn execute(
    pool: &Pool,
    version: ApiVersion,
    identifier: &str,
    id: &str,
    value: Value,
    recording: Option<Recording>,
) -> Result<Response, WireError> {
    let body: ShellRequestBody =
        serde_json::from_value(value).map_err(|e| bad(format!("invalid request: {e}")))?;
    let command = body.command().map_err(bad)?;
    let stream_chars = match body.output_streams_max_length {
        Some(n) if version >= ApiVersion::V2025_10_02 => Some(
            usize::try_from(n)
                .ok()
                .filter(|_| i32::try_from(n).is_ok())
                .ok_or_else(|| {
                    bad(format!(
                        "outputStreamsMaxLength must be 0 to {}, not {n}",
                        i32::MAX
                    ))
                })?,
        ),
        _ => None,
    };
    let timeout = body
        .timeout_in_seconds
        .map_or(pool.max_execution, Duration::from_secs)
        .min(pool.max_execution)
        .max(Duration::from_secs(1));
    let session = pool.session(identifier)?;
    let code = runner_call(&command, body.stdin.as_deref());
    let limits = OutputLimits {
        stream_chars,
        jupyter: false,
    };
    let (registry, id2, watch) = (
        pool.registry.clone(),
        id.to_string(),
        recording.as_ref().map(Recording::watch),
    );
    let stdin = body.stdin;
    // A client that asked for its own `outputStreamsMaxLength` gets that cut
    // (by characters, above) instead of the service's default one.
    let cap = pool.shell_stream_cap.filter(|_| stream_chars.is_none());
    let (outcome, exec) = super::execute::outlive_client(watch, async move {
        let run = limits.scope(registry.execute(&session, &id2, &code, timeout));
        let (mut exec, changes) = registry
            .noting_files(&session, crate::pool::files::changes::Order::Serial, run)
            .await;
        if let Some(cap) = cap {
            cut_streams(std::sync::Arc::make_mut(&mut exec), cap);
        }
        let outcome = outcome(&exec);
        if let Some(r) = recording {
            r.with_files(changes).with_network(&exec.network).shell(
                crate::protocol::record::shell_command_text(&command),
                stdin,
                &exec,
                outcome.exit_code,
            );
        }
        (outcome, exec)
    })
    .await?;
    let status = if version >= ApiVersion::V2025_10_02 {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    let mut answer = shell_response(&outcome, identifier);
    super::execute::add_network(&mut answer, &exec, pool.registry.records_network());
    let mut resp = (status, Json(answer)).into_response();
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut().insert("operation-id", v);
    }
    Ok(resp)
}

/// The answer to `GET executions/{id}` on a Shell pool: the shell reply of a
/// finished command.
pub(super) fn recorded(exec: &Execution, identifier: &str) -> Value {
    shell_response(&outcome(exec), identifier)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ExecutionValue;

    #[test]
    fn the_call_carries_the_request_as_base64_json_only() {
        let call = runner_call(
            &ShellCommand::Line("echo '); import os #".into()),
            Some("x"),
        );
        let b64 = call
            .strip_prefix("_sessionpad_shell('")
            .and_then(|c| c.strip_suffix("')"))
            .unwrap();
        assert!(
            b64.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+/=".contains(c))
        );
        let req: Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(req, json!({"line": "echo '); import os #", "stdin": "x"}));
    }

    #[test]
    fn the_exit_code_is_the_calls_value_and_none_without_one() {
        let mut exec = Execution {
            execution_count: None,
            id: Some("e".into()),
            status: ExecutionStatus::Succeeded,
            stdout: "o".into(),
            stderr: String::new(),
            result: Some(ExecutionValue {
                text: "3".into(),
                json: Some(json!(3)),
            }),
            images: vec![],
            duration: Duration::from_millis(2),
            network: Vec::new(),
        };
        assert_eq!(outcome(&exec).exit_code, Some(3));
        exec.status = ExecutionStatus::Failed;
        exec.result = None;
        assert_eq!(outcome(&exec).exit_code, None);
    }
}
