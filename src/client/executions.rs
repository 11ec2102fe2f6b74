//! Executing code: `POST code/execute` (family A, `aca-api.md` §3.1) and
//! `POST executions` (family B, §4.2), both read into one [`Execution`].
//! Asynchronous executions (family B only): submit, poll `GET executions/{id}`
//! with backoff, stop waiting on request (§4.2).

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::files::unsupported;
use super::response::{json, json_streamed};
use super::retry::{CALL_TIMEOUT, Limit};
use super::{ClientError, SessionClient};
use crate::protocol::api::{ExecuteRequest, Family, OUTPUTS_HEADER, ValueForm, outputs_from_wire};
use crate::protocol::model::{Execution, ExecutionStatus, PoolType};

/// Extra time the HTTP request may take beyond the execution limit: the pool needs
/// time to start a session and send the answer.
const REQUEST_SLACK: Duration = Duration::from_secs(30);

impl SessionClient {
    /// How the value of a reply to `request` is read: as Jupyter's `text/plain`
    /// when the request asked for it, and as a Python literal when this is a
    /// code-interpreter pool running Python (sessionpad's local pool is one by
    /// default), not a custom container whose language is unknown nor a
    /// NodeLTS pool.
    fn value_form(&self, request: &ExecuteRequest) -> ValueForm {
        ValueForm {
            jupyter: request.wants_jupyter_format(self.api_version),
            python: self.pool_type == PoolType::CodeInterpreter
                && self.container_type != crate::protocol::ContainerType::NodeLts,
        }
    }

    /// Runs `code` synchronously in the session `identifier`, with an execution
    /// limit of `timeout` (sent as `timeoutInSeconds`, whole seconds, at least 1).
    /// Where the api-version has it (2025-10-02-preview) the request asks for the
    /// value in Jupyter's `text/plain` form (`returnJupyterFormatExecutionResult`),
    /// and every request asks a local pool for what the service's fields cannot
    /// carry: all of the cell's images, and the value's JSON beside its text
    /// ([`crate::protocol::api::OUTPUTS_HEADER`]).
    ///
    /// Returns the [`Execution`] whatever the code did: an exception is a
    /// `Failed` execution, not an error. Executions are never retried.
    ///
    /// # Errors
    ///
    /// [`ClientError`] about the transport and the service: unreachable pool,
    /// 401/403/404, a 4xx/5xx with the service's code, or a body that is not the
    /// shape of `aca-api.md` §3.1/§4.2.
    pub async fn execute(
        &self,
        identifier: &str,
        code: &str,
        timeout: Duration,
    ) -> Result<Execution, ClientError> {
        let family = self.api_version.family();
        let path = match family {
            Family::A => "code/execute",
            Family::B => "executions",
        };
        let secs = timeout.as_secs().max(1);
        let request = ExecuteRequest::inline(code, secs).jupyter_format_for(self.api_version);
        let form = self.value_form(&request);
        let body = request.to_body(self.api_version);
        let url = self.url(path, Some(identifier))?;
        let limit = Duration::from_secs(secs) + REQUEST_SLACK;
        let started = Instant::now();
        let at = chrono::Utc::now();
        let req = self
            .http
            .post(url)
            .header(OUTPUTS_HEADER, "all")
            .json(&body);
        let resp = self.send_once(req, Limit::Whole(limit)).await?;
        let operation_id = operation_id(&resp);
        let mut value = json_streamed(resp).await?;
        let mut exec = match family {
            Family::A => parse_family_a(&mut value, form)?,
            Family::B => parse_family_b(&mut value, form)?,
        };
        if exec.id.is_none() {
            exec.id = operation_id;
        }
        if exec.duration.is_zero() {
            exec.duration = started.elapsed();
        }
        if let Some(r) = &self.recording {
            r.code(identifier, at, started.elapsed(), code, &exec);
        }
        Ok(exec)
    }
}

/// First pause between two polls of an asynchronous execution.
const POLL_FIRST: Duration = Duration::from_millis(100);

/// Longest pause between two polls.
const POLL_MAX: Duration = Duration::from_secs(2);

impl SessionClient {
    /// Starts `code` asynchronously in session `identifier` (execution limit
    /// `timeout`, whole seconds, at least 1) and returns the execution id at
    /// once, without waiting for the code.
    ///
    /// Wire (family B, §4.2): `POST executions?api-version&identifier` with
    /// header `operation-id: <new UUID>` (the caller-chosen execution id of the
    /// spec) and body `{"codeInputType":"inline","executionType":"asynchronous",
    /// "code","timeoutInSeconds"}` → 202 `{"id",…,"status":"Running"}`. The id is
    /// read from `id`, else the `operation-id` answer header, else the one sent.
    /// Never retried.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] in family A (no execution ids);
    /// transport and service errors; [`ClientError::Malformed`].
    pub async fn submit_execution(
        &self,
        identifier: &str,
        code: &str,
        timeout: Duration,
    ) -> Result<String, ClientError> {
        if self.api_version.family() != Family::B {
            return Err(unsupported("submit_execution", self.api_version));
        }
        let secs = timeout.as_secs().max(1);
        let body = ExecuteRequest::inline_asynchronous(code, secs)
            .jupyter_format_for(self.api_version)
            .to_body(self.api_version);
        let chosen = uuid::Uuid::new_v4().to_string();
        let req = self
            .http
            .post(self.url("executions", Some(identifier))?)
            .header("operation-id", &chosen)
            .json(&body);
        let resp = self.send_once(req, Limit::Whole(CALL_TIMEOUT)).await?;
        let header = operation_id(&resp);
        let value = json(resp).await?;
        Ok(value
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .or(header)
            .unwrap_or(chosen))
    }

    /// The current state of execution `id` of session `identifier`: `Running`
    /// while the code runs, then its result.
    ///
    /// Wire (family B, §4.2): `GET executions/{id}?api-version&identifier` →
    /// the execution body of §4.2. Retried when transient.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] in family A; [`ClientError::NotFound`]
    /// for an unknown id; transport and service errors; [`ClientError::Malformed`].
    pub async fn get_execution(
        &self,
        identifier: &str,
        id: &str,
    ) -> Result<Execution, ClientError> {
        if self.api_version.family() != Family::B {
            return Err(unsupported("get_execution", self.api_version));
        }
        let mut url = self.url("executions", Some(identifier))?;
        url.path_segments_mut()
            .map_err(|()| {
                ClientError::InvalidArgument("the endpoint cannot have path segments".into())
            })?
            .push(id);
        let resp = self
            .send_idempotent(Limit::Whole(CALL_TIMEOUT), || {
                Ok(self.http.get(url.clone()).header(OUTPUTS_HEADER, "all"))
            })
            .await?;
        // Submitted by `submit_execution`, which asks for the Jupyter format
        // where the version has it.
        let form = self.value_form(
            &ExecuteRequest::inline_asynchronous("", 1).jupyter_format_for(self.api_version),
        );
        let mut exec = parse_family_b(&mut json_streamed(resp).await?, form)?;
        exec.id.get_or_insert_with(|| id.to_string());
        Ok(exec)
    }

    /// Runs `code` asynchronously in session `identifier` and waits for it:
    /// [`SessionClient::submit_execution`], then [`SessionClient::get_execution`]
    /// every 100 ms, doubling to every 2 s, calling `progress` with each
    /// `Running` state. Stops waiting when `cancel` fires (the code may go on
    /// running in the session: the API has no way to stop it).
    ///
    /// Returns the finished [`Execution`] (`Succeeded`, `Failed` or `Canceled`).
    ///
    /// # Errors
    ///
    /// [`ClientError::Cancelled`]; [`ClientError::Timeout`] when the
    /// execution is still running `timeout` + 30 s after submission;
    /// [`ClientError::NotSupported`] in family A; errors of the two calls.
    pub async fn execute_async(
        &self,
        identifier: &str,
        code: &str,
        timeout: Duration,
        progress: &(dyn Fn(&Execution) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<Execution, ClientError> {
        let limit = Duration::from_secs(timeout.as_secs().max(1)) + REQUEST_SLACK;
        let deadline = tokio::time::Instant::now() + limit;
        let id = tokio::select! {
            () = cancel.cancelled() => return Err(ClientError::Cancelled),
            r = self.submit_execution(identifier, code, timeout) => r?,
        };
        let mut pause = POLL_FIRST;
        loop {
            tokio::select! {
                () = cancel.cancelled() => return Err(ClientError::Cancelled),
                () = tokio::time::sleep_until(deadline) => return Err(ClientError::Timeout(limit)),
                () = tokio::time::sleep(pause) => {}
            }
            let exec = tokio::select! {
                () = cancel.cancelled() => return Err(ClientError::Cancelled),
                r = self.get_execution(identifier, &id) => r?,
            };
            if exec.status != ExecutionStatus::Running {
                return Ok(exec);
            }
            progress(&exec);
            pause = (pause * 2).min(POLL_MAX);
        }
    }
}

/// The `operation-id` answer header (§4.2, §4.6).
fn operation_id(resp: &reqwest::Response) -> Option<String> {
    resp.headers()
        .get("operation-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// The text of member `key`, taken out of `v` (an output stream can be
/// megabytes: it is moved, not copied).
fn text(v: &mut Value, key: &str) -> String {
    match v.get_mut(key) {
        Some(Value::String(s)) => std::mem::take(s),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn millis(v: &Value) -> Duration {
    Duration::from_millis(
        v.get("executionTimeInMilliseconds")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    )
}

/// Reads a family A body: `{"$id","properties":{status,stdout,stderr,result|executionResult,…}}`.
/// The legacy flat form (no `properties`, `aca-api.md` §3.6) is read too. The
/// value is read per `form`; every image from `sessionpadImages` when present.
/// Its output streams are taken out of `v`, not copied.
pub(crate) fn parse_family_a(v: &mut Value, form: ValueForm) -> Result<Execution, ClientError> {
    let props = if v.get("properties").is_some() {
        &mut v["properties"]
    } else {
        v
    };
    let Some(status) = props.get("status").and_then(Value::as_str) else {
        return Err(ClientError::Malformed(
            "code/execute answer has no properties.status".into(),
        ));
    };
    let status = ExecutionStatus::from_wire(status);
    let (result, images) = outputs_from_wire(
        props,
        props.get("result").or_else(|| props.get("executionResult")),
        form,
    );
    Ok(Execution {
        id: None,
        status,
        stdout: text(props, "stdout"),
        stderr: text(props, "stderr"),
        result,
        images,
        duration: millis(props),
    })
}

/// Reads a family B body: `{"id","status","result":{stdout,stderr,executionResult,…}}`,
/// the value per `form`; every image from `result.sessionpadImages` when present.
/// Its output streams are taken out of `v`, not copied.
pub(crate) fn parse_family_b(v: &mut Value, form: ValueForm) -> Result<Execution, ClientError> {
    let Some(status) = v.get("status").and_then(Value::as_str) else {
        return Err(ClientError::Malformed(
            "executions answer has no status".into(),
        ));
    };
    let status = ExecutionStatus::from_wire(status);
    let id = v.get("id").and_then(Value::as_str).map(str::to_string);
    let error = v
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut empty = Value::Null;
    let result = match v.get_mut("result") {
        Some(r) => r,
        None => &mut empty,
    };
    let (value, images) = outputs_from_wire(result, result.get("executionResult"), form);
    let mut stderr = text(result, "stderr");
    if let Some(msg) = error
        && !stderr.contains(&msg)
    {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&msg);
    }
    Ok(Execution {
        id,
        status,
        stdout: text(result, "stdout"),
        stderr,
        result: value,
        images,
        duration: millis(result),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn family_a_transcript_parses() {
        // Real transcript, aca-api.md §3.1.
        let mut v: Value = serde_json::from_str(
            r#"{"$id":"1","properties":{"$id":"2","status":"Success","stdout":"Hello from aa!\n","stderr":"","result":"","executionTimeInMilliseconds":10}}"#,
        )
        .unwrap();
        let e = parse_family_a(&mut v, ValueForm::default()).unwrap();
        assert_eq!(e.status, ExecutionStatus::Succeeded);
        assert_eq!(e.stdout, "Hello from aa!\n");
        assert_eq!(e.result, None);
        assert_eq!(e.duration, Duration::from_millis(10));
    }

    #[test]
    fn a_reply_s_streams_are_moved_out_of_the_tree_not_copied() {
        let mut b = json!({"id":"e","status":"Succeeded","result":{"stdout":"big\n","stderr":"warn\n","executionResult":""}});
        let at = b["result"]["stdout"].as_str().unwrap().as_ptr();
        let e = parse_family_b(&mut b, ValueForm::default()).unwrap();
        assert_eq!((e.stdout.as_str(), e.stderr.as_str()), ("big\n", "warn\n"));
        assert_eq!(e.stdout.as_ptr(), at, "the reply's string itself");
        assert_eq!(b["result"]["stdout"], "");
        let mut a = json!({"properties":{"status":"Success","stdout":"x\n","stderr":""}});
        let at = a["properties"]["stdout"].as_str().unwrap().as_ptr();
        let e = parse_family_a(&mut a, ValueForm::default()).unwrap();
        assert_eq!(e.stdout.as_ptr(), at);
        assert_eq!(e.stdout, "x\n");
    }

    #[test]
    fn family_b_example_parses() {
        // Spec example, aca-api.md §4.2.
        let mut v = json!({"id":"testExecutionId","identifier":"testSessionIdentifier","executionType":"Synchronous","status":"Succeeded","result":{"stdout":"63\n","stderr":"","executionResult":42,"executionTimeInMilliseconds":4}});
        let e = parse_family_b(&mut v, ValueForm::default()).unwrap();
        assert_eq!(e.id.as_deref(), Some("testExecutionId"));
        assert_eq!(e.result.and_then(|r| r.json), Some(json!(42)));
    }

    #[test]
    fn malformed_bodies_are_errors_not_panics() {
        assert!(parse_family_a(&mut json!({"x":1}), ValueForm::default()).is_err());
        assert!(parse_family_b(&mut json!([1, 2]), ValueForm::default()).is_err());
    }
}
