//! The wire shapes of shell executions (`POST executions` on a `Shell` pool,
//! `aca-api.md` §4.7, §13) that both sides share: the command, the typed
//! outcome, the reply as the local pool writes it ([`shell_response`]) and the
//! request body as the local pool reads it ([`ShellRequestBody`]). The reply
//! as the client and the recording proxy read it is
//! [`super::reply::parse_shell_reply`]; the body the client sends per
//! api-version is in `client::shell`, whose module doc says what the sources
//! say.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::model::{Execution, ExecutionStatus};

/// The exit code the local pool answers for a command that did not finish
/// (timed out, or its session died): `-1`, as the shell image's own API reports
/// `ExecutionTimeout` (`exitCode: -1`); the data plane's value for this case is
/// not documented.
pub const NO_EXIT_CODE: i32 = -1;

/// What to run on a Shell pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellCommand {
    /// A command line for `/bin/bash -c` (`shellCommand`).
    Line(String),
    /// A program and its arguments, run without a shell (`execCommandAndArgs`,
    /// 2025-10-02-preview).
    Argv(Vec<String>),
}

/// The outcome of one shell command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellExecution {
    /// The execution id (`id`, else the `operation-id` header), when given.
    pub id: Option<String>,
    /// The exit code (`status` as a number, else `exitCode`); `None` when the
    /// reply carried neither (then `status` is kept in [`ShellExecution::state`]).
    pub exit_code: Option<i32>,
    /// The wire `status` when it was not an exit code (e.g. `Failed`).
    pub state: Option<String>,
    /// What the command wrote to standard output.
    pub stdout: String,
    /// What it wrote to standard error.
    pub stderr: String,
    /// `result.executionTimeInMilliseconds`, else the request's round trip.
    pub duration: Duration,
    /// What the command tried to reach (a local pool's `sessionpadNetwork`,
    /// issue 29); empty from other pools.
    pub network: Vec<crate::protocol::egress::NetworkAttempt>,
}

impl ShellExecution {
    /// True when the command exited with code 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// The same outcome as a code [`Execution`] (for views that show both):
    /// `Succeeded` for exit code 0, else `Failed`; no value, no images.
    pub fn to_execution(&self) -> Execution {
        Execution {
            execution_count: None,
            id: self.id.clone(),
            status: if self.succeeded() {
                ExecutionStatus::Succeeded
            } else {
                ExecutionStatus::Failed
            },
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
            result: None,
            images: vec![],
            duration: self.duration,
            network: self.network.clone(),
        }
    }
}

/// Writes a shell execution reply as the local pool answers it: `id`,
/// `identifier`, `status` (the exit code as a string, [`NO_EXIT_CODE`] when
/// there is none) and `result {stdout, stderr, executionTimeInMilliseconds}`.
pub fn shell_response(exec: &ShellExecution, identifier: &str) -> Value {
    json!({
        "id": exec.id,
        "identifier": identifier,
        "status": exec.exit_code.unwrap_or(NO_EXIT_CODE).to_string(),
        "result": {
            "stdout": exec.stdout,
            "stderr": exec.stderr,
            "executionTimeInMilliseconds": u64::try_from(exec.duration.as_millis()).unwrap_or(u64::MAX),
        },
    })
}

/// A shell execution request body as clients send it, read by the local pool:
/// the spec's fields, the two code fields the tutorial sends (accepted and
/// ignored, since real clients send them), and `command` (an argv array in an
/// earlier version of the shell tutorial) as another name of
/// `execCommandAndArgs`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShellRequestBody {
    /// `shellCommand`.
    #[serde(default)]
    pub shell_command: Option<String>,
    /// `execCommandAndArgs` (or `command`).
    #[serde(default, alias = "command")]
    pub exec_command_and_args: Option<Vec<String>>,
    /// `stdin`.
    #[serde(default)]
    pub stdin: Option<String>,
    /// `timeoutInSeconds`.
    #[serde(default)]
    pub timeout_in_seconds: Option<u64>,
    /// `executionType`: only `synchronous` (any casing) is served.
    #[serde(default)]
    pub execution_type: Option<String>,
    /// `codeInputType` (ignored).
    #[serde(default)]
    pub code_input_type: Option<String>,
    /// `code`: never valid on a Shell pool; kept to say so.
    #[serde(default)]
    pub code: Option<String>,
    /// `outputStreamsMaxLength` (2025-10-02-preview).
    #[serde(default)]
    pub output_streams_max_length: Option<i64>,
}

impl ShellRequestBody {
    /// The command this body asks for, and its standard input.
    ///
    /// # Errors
    ///
    /// A message for a 400 answer: both or neither of `shellCommand` and
    /// `execCommandAndArgs`, an empty argv, `code` instead of a command, or an
    /// asynchronous execution.
    pub fn command(&self) -> Result<ShellCommand, String> {
        if self
            .execution_type
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("asynchronous"))
        {
            return Err(
                "shell commands run synchronously: send executionType synchronous, or none".into(),
            );
        }
        match (&self.shell_command, &self.exec_command_and_args) {
            (Some(_), Some(_)) => {
                Err("send either shellCommand or execCommandAndArgs, not both".into())
            }
            (Some(line), None) => Ok(ShellCommand::Line(line.clone())),
            (None, Some(argv)) if argv.is_empty() => {
                Err("execCommandAndArgs needs at least the program".into())
            }
            (None, Some(argv)) => Ok(ShellCommand::Argv(argv.clone())),
            (None, None) if self.code.is_some() => Err(
                "this is a Shell pool: send shellCommand or execCommandAndArgs, not code".into(),
            ),
            (None, None) => Err("shellCommand or execCommandAndArgs is required".into()),
        }
    }
}
