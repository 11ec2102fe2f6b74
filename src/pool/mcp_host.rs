//! The local pool as the MCP tools' [`SessionHost`]: commands run in-process
//! in the pool's own sessions (the same registry, kernels, sandbox and limits
//! as the data plane's `executions`), with no HTTP hop between the MCP
//! endpoint and the kernel; whether an environment's session still exists is
//! the registry's answer.
//!
//! Each command is recorded in the flight recorder as the data plane's are
//! ([`Recording`]: a cell with its code, a shell command as sent with its exit
//! code, what it changed in `/mnt/data`), with the MCP host's label as the
//! client ([`Caller`], e.g. `acme-agent/0.3 via MCP`), and its output is
//! pushed live on the event stream under that name. It runs on a task of its
//! own: an MCP host that goes away before the answer leaves it running, and
//! it is recorded when it ends, marked as answered to nobody (issue 26).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::http::HeaderMap;
use axum::http::header::USER_AGENT;

use super::events::LiveOutput;
use super::record::Recording;
use super::server::Pool;
use crate::mcp::{Caller, HostError, SessionHost, ShellCommand, ShellRun};
use crate::protocol::Execution;

/// The local pool's sessions, for its `/mcp` route.
pub(crate) struct PoolHost {
    pool: Pool,
}

/// What a command is recorded as.
enum Recorded {
    /// A cell: the code as run.
    Code,
    /// A shell command (run through the kernel): the command as sent (the
    /// line, or the argv as its JSON array, as the data plane's are).
    Shell(String),
}

impl Recorded {
    /// Records `exec`, the outcome of `code`, with `recording`.
    fn record(&self, recording: &Recording, code: &str, exec: &Arc<Execution>) {
        match self {
            Recorded::Code => recording.code(code, exec),
            Recorded::Shell(command) => {
                let exit_code = ShellRun::from_python(Execution::clone(exec))
                    .ok()
                    .and_then(|run| run.exit_code)
                    .and_then(|c| i32::try_from(c).ok());
                // The exit code is the helper's value: recorded as the exit
                // code, not as a value too.
                let shown = Arc::new(Execution {
                    result: None,
                    ..Execution::clone(exec)
                });
                recording.shell(command.clone(), None, &shown, exit_code);
            }
        }
    }
}

impl PoolHost {
    /// The host over the routes' shared state.
    pub(crate) fn new(pool: Pool) -> Self {
        Self { pool }
    }

    /// Runs `code` in session `identifier` (made on first use) for `caller`,
    /// with the pool's execution limit, on a task of its own, and records it
    /// as `what` (see the module doc).
    ///
    /// # Errors
    ///
    /// [`HostError`]: a full pool, a session folder that cannot be made, a
    /// task that panicked.
    async fn run(
        &self,
        identifier: &str,
        code: String,
        caller: &Caller,
        what: Recorded,
    ) -> Result<Arc<Execution>, HostError> {
        let session = self
            .pool
            .session(identifier)
            .map_err(|e| HostError(e.message))?;
        let id = uuid::Uuid::new_v4().to_string();
        // The caller's label stands where a data-plane call's User-Agent does.
        let mut headers = HeaderMap::new();
        headers.insert(USER_AGENT, caller.header_value());
        let recording = Recording::start(
            self.pool.ledger.as_ref(),
            &self.pool.ledger_key,
            &headers,
            identifier,
        );
        let live = LiveOutput::new(self.pool.hub.clone(), identifier, &id, &headers);
        let watch = recording.as_ref().map(Recording::watch);
        let (registry, timeout) = (self.pool.registry.clone(), self.pool.max_execution);
        let task = tokio::spawn(async move {
            let run = live.scope(registry.execute(&session, &id, &code, timeout));
            let (exec, changes) = registry
                .noting_files(&session, crate::pool::files::changes::Order::Serial, run)
                .await;
            if let Some(r) = recording {
                let r = r.with_files(changes).with_network(&exec.network);
                what.record(&r, &code, &exec);
            }
            exec
        });
        let exec = task
            .await
            .map_err(|e| HostError(format!("the execution's task failed: {e}")))?;
        if let Some(watch) = watch {
            watch.answered();
        }
        Ok(exec)
    }
}

#[async_trait]
impl SessionHost for PoolHost {
    /// Runs `code` as `POST executions` does (a session made on first use,
    /// the pool's execution limit; a full pool is an error), recorded as a
    /// cell of `caller`'s.
    async fn run_python(
        &self,
        identifier: &str,
        code: &str,
        caller: &Caller,
    ) -> Result<Execution, HostError> {
        let exec = self
            .run(identifier, code.to_string(), caller, Recorded::Code)
            .await?;
        Ok(Arc::unwrap_or_clone(exec))
    }

    /// Runs `command` through the session's kernel, as every host does
    /// ([`ShellCommand::as_python`]), recorded as the shell command it is.
    async fn run_shell(
        &self,
        identifier: &str,
        command: &ShellCommand,
        caller: &Caller,
    ) -> Result<ShellRun, HostError> {
        let sent = match command {
            ShellCommand::Line(line) => line.clone(),
            ShellCommand::Argv(argv) => serde_json::to_string(argv).unwrap_or_default(),
        };
        let exec = self
            .run(
                identifier,
                command.as_python(),
                caller,
                Recorded::Shell(sent),
            )
            .await?;
        ShellRun::from_python(Arc::unwrap_or_clone(exec))
    }

    fn session_exists(&self, identifier: &str) -> Option<bool> {
        Some(self.pool.registry.contains(identifier))
    }

    fn cooldown(&self) -> Duration {
        self.pool.registry.cooldown()
    }
}
