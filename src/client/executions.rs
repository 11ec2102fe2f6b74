//! Executing code: `POST code/execute` (family A, `aca-api.md` §3.1) and
//! `POST executions` (family B, §4.2), both read into one [`Execution`].
//! Asynchronous executions (family B only): submit, poll `GET executions/{id}`
//! with backoff, stop waiting on request (§4.2). The answers are read by
//! [`crate::protocol::reply`]; a body it cannot read is [`ClientError::Malformed`].

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::files::unsupported;
use super::response::{json, json_streamed};
use super::retry::{CALL_TIMEOUT, Limit};
use super::{ClientError, SessionClient};
use crate::protocol::api::{ExecuteRequest, Family, OUTPUTS_HEADER, ValueForm};
use crate::protocol::model::{Execution, ExecutionStatus, PoolType};
use crate::protocol::reply::{parse_family_a, parse_family_b};

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
        self.execute_capped(identifier, code, timeout, None).await
    }

    /// [`SessionClient::execute`] asking for at most `max_length` characters
    /// of stdout and of stderr (`outputStreamsMaxLength`, 2025-10-02-preview,
    /// `aca-api.md` §13; the service's default is 4096); `None` sends nothing.
    ///
    /// # Errors
    ///
    /// As [`SessionClient::execute`]; [`ClientError::InvalidArgument`] for a
    /// `max_length` on an api-version without the field (nothing is sent).
    pub async fn execute_capped(
        &self,
        identifier: &str,
        code: &str,
        timeout: Duration,
        max_length: Option<u32>,
    ) -> Result<Execution, ClientError> {
        if max_length.is_some() && self.api_version < crate::protocol::ApiVersion::V2025_10_02 {
            return Err(ClientError::InvalidArgument(format!(
                "outputStreamsMaxLength needs api-version 2025-10-02-preview (this pool speaks {})",
                self.api_version
            )));
        }
        self.check_empty_kernel()?;
        let family = self.api_version.family();
        let path = match family {
            Family::A => "code/execute",
            Family::B => "executions",
        };
        let secs = timeout.as_secs().max(1);
        let mut request = ExecuteRequest::inline(code, secs).jupyter_format_for(self.api_version);
        request.output_streams_max_length = max_length.map(i64::from);
        request.use_empty_kernel = self.empty_kernel.then_some(true);
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

impl SessionClient {
    /// Refuses an execution asked for an empty kernel
    /// ([`SessionClient::with_empty_kernel`]) on an api-version without
    /// `useEmptyKernel`, before anything is sent.
    fn check_empty_kernel(&self) -> Result<(), ClientError> {
        if self.empty_kernel && self.api_version < crate::protocol::ApiVersion::V2025_10_02 {
            return Err(ClientError::InvalidArgument(format!(
                "useEmptyKernel (--empty-kernel) needs api-version 2025-10-02-preview (this pool speaks {})",
                self.api_version
            )));
        }
        Ok(())
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
        self.check_empty_kernel()?;
        let secs = timeout.as_secs().max(1);
        let mut request =
            ExecuteRequest::inline_asynchronous(code, secs).jupyter_format_for(self.api_version);
        request.use_empty_kernel = self.empty_kernel.then_some(true);
        let body = request.to_body(self.api_version);
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
