//! What the MCP tools run code on: a [`SessionHost`] runs Python (and, through
//! the one shell seam, shell commands) in a session of a pool named by its
//! identifier. The local pool implements it in-process over its registry
//! (`pool::mcp_host`); [`ClientHost`] implements it over the session client,
//! for `sessionpad mcp` on any pool sessionpad can reach.

use std::sync::RwLock;
use std::time::Duration;

use async_trait::async_trait;
use futures::future::BoxFuture;

use super::caller::Caller;
use super::shell::{ShellCommand, ShellRun};
use crate::client::{ClientError, SessionClient};
use crate::protocol::Execution;
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
/// is created on the first command, as the data plane does. A command also
/// takes the [`Caller`] it is run for, which the pool records as the call's
/// client.
#[async_trait]
pub trait SessionHost: Send + Sync + 'static {
    /// Runs Python `code` in session `identifier` for `caller` and returns its
    /// outcome: an exception is a `Failed` execution, not an error.
    ///
    /// # Errors
    ///
    /// [`HostError`] when nothing could run: pool full, pool unreachable,
    /// authentication refused, a reply of the wrong shape.
    async fn run_python(
        &self,
        identifier: &str,
        code: &str,
        caller: &Caller,
    ) -> Result<Execution, HostError>;

    /// Runs a shell command in session `identifier` for `caller`: its exit
    /// code, standard output and error. The one seam for shell execution: by
    /// default the command runs through the session's Python kernel
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
        caller: &Caller,
    ) -> Result<ShellRun, HostError> {
        let exec = self
            .run_python(identifier, &command.as_python(), caller)
            .await?;
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

/// How a [`ClientHost`] reaches its pool again after it has gone (the
/// background local pool ends after its idle period, and the next command
/// starts another): a new client, or why there is none.
pub type Reconnect =
    Box<dyn Fn() -> BoxFuture<'static, Result<SessionClient, String>> + Send + Sync>;

/// A [`SessionHost`] over the session client: any pool sessionpad reaches
/// (Azure with its Entra credential, a `serve`, the background local pool).
/// Each command is one `POST executions` (or `code/execute`) of the client's
/// api-version, `aca-api.md` §3.1 / §4.2, whose `User-Agent` is the
/// [`Caller`]'s label: a local pool or the recording proxy records the call
/// under it, and so does this process where it records its own calls (an
/// `https` pool, `client::recording`).
pub struct ClientHost {
    client: RwLock<SessionClient>,
    timeout: Duration,
    cooldown: Duration,
    reconnect: Option<Reconnect>,
}

impl ClientHost {
    /// Runs commands through `client`, each with the execution limit `timeout`
    /// (whole seconds), counting environments gone after `cooldown` without a
    /// command (the pool's cooldown where known, else [`DEFAULT_COOLDOWN`]).
    pub fn new(client: SessionClient, timeout: Duration, cooldown: Duration) -> Self {
        Self {
            client: RwLock::new(client),
            timeout,
            cooldown,
            reconnect: None,
        }
    }

    /// Where the pool refuses the connection (it has ended), `reconnect` gives
    /// a client of the pool to use from then on, and the command is sent there
    /// once more: a refused connection carried nothing, so nothing runs twice.
    #[must_use]
    pub fn with_reconnect(mut self, reconnect: Reconnect) -> Self {
        self.reconnect = Some(reconnect);
        self
    }

    fn client(&self) -> SessionClient {
        self.client
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl SessionHost for ClientHost {
    /// Sends the execution with `caller`'s label as its `User-Agent`
    /// ([`SessionClient::with_user_agent`]), which the pool records.
    async fn run_python(
        &self,
        identifier: &str,
        code: &str,
        caller: &Caller,
    ) -> Result<Execution, HostError> {
        let host_error = |e: ClientError| HostError(e.to_string());
        let as_caller = |client: SessionClient| client.with_user_agent(caller.header_value());
        let client = as_caller(self.client());
        match client.execute(identifier, code, self.timeout).await {
            Err(ClientError::Unreachable { source, .. }) if source.is_connect() => {
                let Some(reconnect) = &self.reconnect else {
                    return Err(HostError(format!(
                        "cannot reach the session pool: {source}"
                    )));
                };
                let fresh = reconnect().await.map_err(HostError)?;
                tracing::info!(
                    endpoint = fresh.endpoint(),
                    "the pool had gone: reconnected"
                );
                *self
                    .client
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = fresh.clone();
                as_caller(fresh)
                    .execute(identifier, code, self.timeout)
                    .await
                    .map_err(host_error)
            }
            other => other.map_err(host_error),
        }
    }

    fn session_exists(&self, _identifier: &str) -> Option<bool> {
        None
    }

    fn cooldown(&self) -> Duration {
        self.cooldown
    }
}
