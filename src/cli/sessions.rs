//! `sessionpad sessions ls|show|rm` and `sessionpad pool info`.

use std::process::ExitCode;

use clap::Subcommand;

use super::target::TargetOpt;

/// Session commands.
#[derive(Debug, Subcommand)]
pub enum SessionsCmd {
    /// List the pool's sessions.
    Ls,
    /// Show one session (default: this directory's).
    Show,
    /// End a session: its state and files are gone.
    Rm,
}

/// Pool commands.
#[derive(Debug, Subcommand)]
pub enum PoolCmd {
    /// The pool's metadata: runtime, installed packages, kernel.
    Info,
}

/// Runs a session command.
pub async fn run_sessions(_cmd: SessionsCmd, _target: &TargetOpt) -> anyhow::Result<ExitCode> {
    anyhow::bail!("session commands are being written")
}

/// Runs a pool command.
pub async fn run_pool(_cmd: PoolCmd, _target: &TargetOpt) -> anyhow::Result<ExitCode> {
    anyhow::bail!("pool commands are being written")
}
