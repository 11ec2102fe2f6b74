//! The local pool as the MCP tools' [`SessionHost`]: commands run in-process
//! in the pool's own sessions (the same registry, kernels, sandbox and limits
//! as the data plane's `executions`), with no HTTP hop between the MCP
//! endpoint and the kernel; whether an environment's session still exists is
//! the registry's answer.

use std::time::Duration;

use async_trait::async_trait;

use super::server::Pool;
use crate::mcp::{HostError, SessionHost};
use crate::protocol::Execution;

/// The local pool's sessions, for its `/mcp` route.
pub(crate) struct PoolHost {
    pool: Pool,
}

impl PoolHost {
    /// The host over the routes' shared state.
    pub(crate) fn new(pool: Pool) -> Self {
        Self { pool }
    }
}

#[async_trait]
impl SessionHost for PoolHost {
    /// Runs `code` as `POST executions` does (a session made on first use,
    /// the pool's execution limit; a full pool is an error).
    async fn run_python(&self, identifier: &str, code: &str) -> Result<Execution, HostError> {
        let session = self
            .pool
            .session(identifier)
            .map_err(|e| HostError(e.message))?;
        let id = uuid::Uuid::new_v4().to_string();
        let exec = self
            .pool
            .registry
            .execute(&session, &id, code, self.pool.max_execution)
            .await;
        Ok(std::sync::Arc::unwrap_or_clone(exec))
    }

    fn session_exists(&self, identifier: &str) -> Option<bool> {
        Some(self.pool.registry.contains(identifier))
    }

    fn cooldown(&self) -> Duration {
        self.pool.registry.cooldown()
    }
}
