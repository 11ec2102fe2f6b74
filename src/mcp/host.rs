//! What the MCP tools run code on: a [`SessionHost`] runs Python (and, through
//! the one shell seam, shell commands) in a session of a pool named by its
//! identifier. The local pool implements it in-process over its registry
//! (`pool::mcp_host`); [`ClientHost`] implements it over the session client,
//! for `sessionpad mcp` on any pool sessionpad can reach.

use std::time::Duration;

use async_trait::async_trait;

use super::shell::{ShellCommand, ShellRun};
use crate::client::{Execution, SessionClient};

/// The service's default cooldown of a session pool (`aca-api.md` §7): idle
/// time after which a session ends, used where the pool does not say.
pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(300);

/// Why a command could not be run at all (not: the code failed, which is a
/// `Failed` [`Execution`]). The text is shown to the MCP client as the tool's
/// error: the pool is full, unreachable, refused the credential, …
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HostError(pub String);

/// A pool whose sessions the MCP tools run code in. Every method takes the
/// session identifier (`aca-api.md` §4.5) an environment maps onto; a session
/// is created on the first command, as the data plane does.
#[async_trait]
pub trait SessionHost: Send + Sync + 'static {
    /// Runs Python `code` in session `identifier` and returns its outcome: an
    /// exception is a `Failed` execution, not an error.
    ///
    /// # Errors
    ///
    /// [`HostError`] when nothing could run: pool full, pool unreachable,
    /// authentication refused, a reply of the wrong shape.
    async fn run_python(&self, identifier: &str, code: &str) -> Result<Execution, HostError>;

    /// Runs a shell command in session `identifier`: its exit code, standard
    /// output and error. The one seam for shell execution: by default the
    /// command runs through the session's Python kernel
    /// ([`ShellCommand::as_python`], a real child process in the session's
    /// sandbox); a pool that runs shell commands itself (a Shell pool)
    /// overrides this.
    ///
    /// # Errors
    ///
    /// As [`SessionHost::run_python`]; also when the kernel's reply does not
    /// carry the exit code (the session's Python misbehaved).
    async fn run_shell(
        &self,
        identifier: &str,
        command: &ShellCommand,
    ) -> Result<ShellRun, HostError> {
        let exec = self.run_python(identifier, &command.as_python()).await?;
        ShellRun::from_python(exec)
    }

    /// Whether session `identifier` exists now: `Some(true)` or `Some(false)`
    /// where the pool can tell at no cost (the local pool), `None` where it
    /// cannot (a remote pool), and the environment's age decides.
    fn session_exists(&self, identifier: &str) -> Option<bool>;

    /// The pool's cooldown: idle time after which a session (and so its
    /// environment) is gone.
    fn cooldown(&self) -> Duration;
}

/// A [`SessionHost`] over the session client: any pool sessionpad reaches
/// (Azure with its Entra credential, a `serve`, the background local pool).
/// Each command is one `POST executions` (or `code/execute`) of the client's
/// api-version, `aca-api.md` §3.1 / §4.2.
pub struct ClientHost {
    client: SessionClient,
    timeout: Duration,
    cooldown: Duration,
}

impl ClientHost {
    /// Runs commands through `client`, each with the execution limit `timeout`
    /// (whole seconds), counting environments gone after `cooldown` without a
    /// command (the pool's cooldown where known, else [`DEFAULT_COOLDOWN`]).
    pub fn new(client: SessionClient, timeout: Duration, cooldown: Duration) -> Self {
        Self {
            client,
            timeout,
            cooldown,
        }
    }

    /// The pool management endpoint commands go to.
    pub fn endpoint(&self) -> &str {
        self.client.endpoint()
    }
}

#[async_trait]
impl SessionHost for ClientHost {
    async fn run_python(&self, identifier: &str, code: &str) -> Result<Execution, HostError> {
        self.client
            .execute(identifier, code, self.timeout)
            .await
            .map_err(|e| HostError(e.to_string()))
    }

    fn session_exists(&self, _identifier: &str) -> Option<bool> {
        None
    }

    fn cooldown(&self) -> Duration {
        self.cooldown
    }
}
