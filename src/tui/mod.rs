//! PLACEHOLDER by the lead so the crate compiles; helper-2 replaces this file.
use std::time::Duration;

use crate::client::ApiVersion;

/// Placeholder.
pub struct TuiOptions {
    /// Placeholder.
    pub endpoint: Option<String>,
    /// Placeholder.
    pub token: Option<String>,
    /// Placeholder.
    pub api_version: ApiVersion,
    /// Placeholder.
    pub identifier: Option<String>,
    /// Placeholder.
    pub timeout: Duration,
}

/// Placeholder.
pub async fn run(_opts: TuiOptions) -> anyhow::Result<()> {
    anyhow::bail!("the TUI is not written yet")
}
