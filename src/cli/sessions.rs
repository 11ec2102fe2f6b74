//! `sessionpad sessions ls|show|rm` and `sessionpad pool info`.

use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;

use super::output;
use super::target::{TargetOpt, connect};
use crate::client::SessionInfo;
use crate::pool::Isolation;
use crate::text::sanitize;

/// Session commands.
#[derive(Debug, Subcommand)]
pub enum SessionsCmd {
    /// List the pool's sessions.
    Ls,
    /// Show one session (default: this directory's).
    Show,
    /// End a session: its state and files are gone (`DELETE session`, or
    /// `.management/stopSession` with `--pool-type custom-container`).
    Rm,
}

/// Pool commands.
#[derive(Debug, Subcommand)]
pub enum PoolCmd {
    /// The pool's metadata: a local pool's isolation (sandbox, limits), runtime,
    /// installed packages, kernel.
    Info,
    /// End the background local pool that commands without an endpoint start
    /// (a `sessionpad serve` run in the foreground is left alone).
    Stop,
}

/// Runs a session command. `show` and `rm` act on `--identifier` (default: this
/// directory's session).
pub async fn run_sessions(cmd: SessionsCmd, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    let settings = target.settings()?;
    let conn = connect(&settings).await?;
    let (client, id) = (&conn.client, settings.identifier.as_str());
    match cmd {
        SessionsCmd::Ls => {
            let sessions = client.pool_sessions().await?;
            if target.json {
                output::json(&serde_json::to_value(&sessions)?);
            } else {
                for s in &sessions {
                    print_session(s);
                }
                if sessions.is_empty() {
                    eprintln!("no sessions in {}", conn.label);
                }
            }
        }
        SessionsCmd::Show => {
            let s = client.pool_session(id).await?;
            if target.json {
                output::json(&serde_json::to_value(&s)?);
            } else {
                print_session(&s);
            }
        }
        SessionsCmd::Rm => {
            let message = client.end_session(id).await?;
            if target.json {
                output::json(&json!({"deleted": id, "message": message}));
            } else {
                eprintln!("{}", sanitize::plain(&message));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn time(t: Option<chrono::DateTime<chrono::Utc>>) -> String {
    t.map_or_else(|| "-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

fn print_session(s: &SessionInfo) {
    output::out(&format!(
        "{}  created {}  last used {}  expires {}\n",
        sanitize::plain(&s.identifier),
        time(s.created),
        time(s.last_accessed),
        time(s.expires)
    ));
}

/// Runs a pool command.
pub async fn run_pool(cmd: PoolCmd, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    if let PoolCmd::Stop = cmd {
        return stop(target.json).await;
    }
    let settings = target.settings()?;
    let conn = connect(&settings).await?;
    let meta = conn.client.pool_metadata().await?;
    if target.json {
        output::json(&serde_json::to_value(&meta)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = format!(
        "pool: {} (api-version {})\n",
        conn.label, settings.api_version
    );
    // A local pool's isolation first: what a person most needs to know of it.
    for (label, value) in meta.isolation.iter().flat_map(Isolation::lines) {
        let label = if label.is_empty() { "note" } else { &label };
        text.push_str(&format!("{label}: {value}\n"));
    }
    for r in &meta.runtimes {
        text.push_str(&format!("runtime: {} {}\n", r.name, r.version));
    }
    if let Some(k) = &meta.kernel {
        text.push_str(&format!("kernel: {} {}\n", k.name, k.version));
    }
    text.push_str(&format!("packages ({}):\n", meta.packages.len()));
    for p in &meta.packages {
        text.push_str(&format!("  {} {}\n", p.name, p.version));
    }
    output::out(&text);
    Ok(ExitCode::SUCCESS)
}

/// `sessionpad pool stop`: ends the background local pool and says which.
async fn stop(json: bool) -> anyhow::Result<ExitCode> {
    let stopped = crate::background::stop().await?;
    let pid = match stopped {
        crate::background::Stopped::Ended(pid) => Some(pid),
        crate::background::Stopped::NoneRunning => None,
    };
    if json {
        output::json(&json!({ "stopped": pid }));
    } else if let Some(pid) = pid {
        eprintln!("stopped the background local pool (pid {pid})");
    } else {
        eprintln!("no background local pool is running");
    }
    Ok(ExitCode::SUCCESS)
}
