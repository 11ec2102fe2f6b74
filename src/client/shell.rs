//! Shell executions: `POST executions` on a `Shell` pool (`aca-api.md` §4.7,
//! §13): the request the client sends per api-version, and the call that reads
//! the reply into a typed [`ShellExecution`]. The reply's reader is in
//! protocol ([`crate::protocol::reply::parse_shell_reply`]), as are the wire
//! shapes of the local pool, which reads the request
//! ([`crate::protocol::shell::ShellRequestBody`]) and writes the reply
//! ([`crate::protocol::shell::shell_response`]).
//!
//! What the sources say and what sessionpad decides from them:
//!
//! - Request: the 2025-10-02-preview spec (`SessionCodeExecutionRequest`) has
//!   `shellCommand` (a string for `/bin/bash -c`), `execCommandAndArgs` (an
//!   argv array run without a shell), `stdin` and the required
//!   `timeoutInSeconds`. langchain-azure PR #445 found that Shell pools reject
//!   `codeInputType`/`executionType` with 400, and its `SessionsBashTool` sends
//!   only `{"shellCommand"}` with 2025-02-02-preview, which the service accepts.
//!   So the client sends `{"shellCommand"|"execCommandAndArgs", "stdin"?,
//!   "timeoutInSeconds"}` and never the two code fields, in every family-B
//!   version; `execCommandAndArgs` and `stdin` only where the spec defines them
//!   (2025-10-02-preview; earlier versions get [`ClientError::InvalidArgument`]
//!   rather than a field the service may ignore). Family A (`code/execute`) has
//!   no shell form: [`ClientError::NotSupported`].
//! - Reply: the top-level `status` is the command's exit code as a string
//!   (`"0"`), with `result.stdout`, `result.stderr`,
//!   `result.executionTimeInMilliseconds`; the sources, and the `exitCode`
//!   member read when `status` is not a number, are in
//!   [`crate::protocol::reply`]'s module doc.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::files::unsupported;
use super::response::json as read_json;
use super::retry::Limit;
use super::{ClientError, SessionClient};
use crate::protocol::api::{ApiVersion, Family};
use crate::protocol::reply::parse_shell_reply;
use crate::protocol::shell::{ShellCommand, ShellExecution};

/// Extra time the HTTP request may take beyond the command's limit (a session
/// may have to start).
const REQUEST_SLACK: Duration = Duration::from_secs(30);

/// One shell execution request: the command, its standard input and its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRequest {
    /// What to run.
    pub command: ShellCommand,
    /// Text given to the command on standard input (`stdin`,
    /// 2025-10-02-preview); `None` gives it an empty input.
    pub stdin: Option<String>,
    /// Execution limit, sent as `timeoutInSeconds` (whole seconds, at least 1).
    pub timeout: Duration,
    /// Most characters of stdout and of stderr the answer may carry, sent as
    /// `outputStreamsMaxLength` (2025-10-02-preview, `aca-api.md` §13; the
    /// service's default is 4096); `None` sends nothing.
    pub output_streams_max_length: Option<u32>,
}

impl ShellRequest {
    /// A `shellCommand` request for `line` without standard input.
    pub fn line(line: impl Into<String>, timeout: Duration) -> Self {
        Self {
            command: ShellCommand::Line(line.into()),
            stdin: None,
            timeout,
            output_streams_max_length: None,
        }
    }

    /// The JSON body for `version` (see the module doc for why this shape).
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] in family A; [`ClientError::InvalidArgument`]
    /// for an empty argv, or for `execCommandAndArgs`, `stdin` or
    /// `outputStreamsMaxLength` before 2025-10-02-preview.
    pub fn to_body(&self, version: ApiVersion) -> Result<Value, ClientError> {
        if version.family() != Family::B {
            return Err(unsupported("shell executions", version));
        }
        let newest = version >= ApiVersion::V2025_10_02;
        let too_old = |what: &str| {
            ClientError::InvalidArgument(format!(
                "{what} needs api-version 2025-10-02-preview (this pool speaks {version})"
            ))
        };
        let mut body = serde_json::Map::new();
        match &self.command {
            ShellCommand::Line(line) => {
                body.insert("shellCommand".into(), json!(line));
            }
            ShellCommand::Argv(argv) => {
                if argv.is_empty() {
                    return Err(ClientError::InvalidArgument(
                        "execCommandAndArgs needs at least the program".into(),
                    ));
                }
                if !newest {
                    return Err(too_old("execCommandAndArgs"));
                }
                body.insert("execCommandAndArgs".into(), json!(argv));
            }
        }
        if let Some(stdin) = &self.stdin {
            if !newest {
                return Err(too_old("stdin"));
            }
            body.insert("stdin".into(), json!(stdin));
        }
        body.insert(
            "timeoutInSeconds".into(),
            json!(self.timeout.as_secs().max(1)),
        );
        if let Some(max) = self.output_streams_max_length {
            if !newest {
                return Err(too_old("outputStreamsMaxLength"));
            }
            body.insert("outputStreamsMaxLength".into(), json!(max));
        }
        Ok(Value::Object(body))
    }
}

impl SessionClient {
    /// Runs a shell command synchronously in session `identifier` of a Shell
    /// pool and returns its exit code and output.
    ///
    /// Wire: `POST executions?api-version&identifier` with the body of
    /// [`ShellRequest::to_body`] → 200/202 and the reply
    /// [`parse_shell_reply`] reads (`aca-api.md` §4.7, §13). Never retried.
    ///
    /// # Errors
    ///
    /// As [`ShellRequest::to_body`] (nothing is sent then); transport and
    /// service errors; [`ClientError::Malformed`].
    pub async fn execute_shell(
        &self,
        identifier: &str,
        request: &ShellRequest,
    ) -> Result<ShellExecution, ClientError> {
        let body = request.to_body(self.api_version)?;
        let url = self.url("executions", Some(identifier))?;
        let limit = Duration::from_secs(request.timeout.as_secs().max(1)) + REQUEST_SLACK;
        let started = Instant::now();
        let at = chrono::Utc::now();
        let resp = self
            .send_once(self.http.post(url).json(&body), Limit::Whole(limit))
            .await?;
        let header = resp
            .headers()
            .get("operation-id")
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map(str::to_string);
        let mut exec = parse_shell_reply(&read_json(resp).await?)?;
        if exec.id.is_none() {
            exec.id = header;
        }
        if exec.duration.is_zero() {
            exec.duration = started.elapsed();
        }
        if let Some(r) = &self.recording {
            r.shell(identifier, at, started.elapsed(), request, &exec);
        }
        Ok(exec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::shell::ShellRequestBody;

    #[test]
    fn bodies_are_read_with_every_variant_clients_send() {
        let b: ShellRequestBody = serde_json::from_value(json!({"codeInputType":"inline","executionType":"synchronous","shellCommand":"echo hi","timeoutInSeconds":600})).unwrap();
        assert_eq!(b.command(), Ok(ShellCommand::Line("echo hi".into())));
        let b: ShellRequestBody =
            serde_json::from_value(json!({"command":["/bin/bash","-c","echo x"]})).unwrap();
        assert!(matches!(b.command(), Ok(ShellCommand::Argv(a)) if a.len() == 3));
        let b: ShellRequestBody = serde_json::from_value(json!({"code":"print(1)"})).unwrap();
        assert!(b.command().unwrap_err().contains("not code"));
        let b: ShellRequestBody =
            serde_json::from_value(json!({"shellCommand":"a","execCommandAndArgs":["b"]})).unwrap();
        assert!(b.command().unwrap_err().contains("not both"));
        let b: ShellRequestBody = serde_json::from_value(json!({})).unwrap();
        assert!(b.command().is_err());
    }
}
