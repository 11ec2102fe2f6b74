//! `sessionpad sessions ls|show|rm` and `sessionpad pool info`.

use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;

use super::output;
use super::target::{TargetOpt, connect};
use crate::protocol::Isolation;
use crate::protocol::SessionInfo;
use crate::text::sanitize;

/// Session commands.
#[derive(Debug, Subcommand)]
pub enum SessionsCmd {
    /// List the pool's sessions.
    Ls,
    /// Show one session (default: --identifier, else this directory's).
    Show {
        /// The session identifier.
        id: Option<String>,
    },
    /// End sessions: their state and files are gone (`DELETE session`, or
    /// `.management/stopSession` with `--pool-type custom-container`). With no
    /// ID: --identifier's session, else this directory's, after asking.
    Rm {
        /// The session identifiers.
        ids: Vec<String>,
        /// End this directory's session without asking (needed when standard
        /// input is not a terminal).
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

/// Pool commands.
#[derive(Debug, Subcommand)]
pub enum PoolCmd {
    /// The pool's metadata: a local pool's isolation (sandbox, limits) and
    /// the service's limits it emulates (--azure-limits), runtime, installed
    /// packages, kernel.
    Info,
    /// End the background local pools that commands without an endpoint start:
    /// every container type's, or the one of --container-type (a `sessionpad
    /// serve` run in the foreground is left alone).
    Stop,
}

/// Runs a session command. `show` and `rm` act on the identifiers given,
/// else on `--identifier` (default: this directory's session, which `rm` ends
/// only after asking, or with `--yes`).
///
/// # Errors
///
/// The pool's errors; `rm` of this directory's session refused or declined.
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
        SessionsCmd::Show { id: named } => {
            let s = client.pool_session(named.as_deref().unwrap_or(id)).await?;
            if target.json {
                output::json(&serde_json::to_value(&s)?);
            } else {
                print_session(&s);
            }
        }
        SessionsCmd::Rm { ids, yes } => {
            let ids = if ids.is_empty() {
                if settings.derived_identifier && !yes && !confirmed_ending_this_folders(id)? {
                    return Ok(ExitCode::from(1));
                }
                vec![id.to_string()]
            } else {
                ids
            };
            let mut ended = Vec::new();
            for id in &ids {
                let message = client.end_session(id).await?;
                if target.json {
                    ended.push(json!({"deleted": id, "message": message}));
                } else {
                    eprintln!("{}", sanitize::plain(&message));
                }
            }
            if target.json {
                // One object for one session, as before; a list for several.
                output::json(&match ended.as_slice() {
                    [one] => one.clone(),
                    _ => json!(ended),
                });
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks before `sessions rm` with no identifier ends this directory's
/// session `id`: true to go on, false when the answer was no (said).
///
/// # Errors
///
/// Standard input is not a terminal (nobody to ask: `--yes` is named), or
/// cannot be read.
fn confirmed_ending_this_folders(id: &str) -> anyhow::Result<bool> {
    let question = format!(
        "end this directory's session {}? Its variables and /mnt/data files are lost",
        sanitize::plain(id)
    );
    match output::confirm(&question)? {
        Some(true) => Ok(true),
        Some(false) => {
            eprintln!("not ended");
            Ok(false)
        }
        None => anyhow::bail!(
            "`sessions rm` without an identifier ends this directory's session {}: \
             standard input is not a terminal, so nobody can be asked; give --yes to end it, \
             or name sessions (`sessions rm ID...`)",
            sanitize::plain(id)
        ),
    }
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
        return stop(target.container_type, target.json).await;
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
    for l in &meta.service_limits {
        text.push_str(&format!(
            "azure limit: {}: {} (source: {})\n",
            sanitize::plain(&l.what),
            sanitize::plain(&l.value),
            sanitize::plain(&l.source)
        ));
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

/// `sessionpad pool stop`: ends the background local pool of the container type
/// given on the command line (`--container-type`), else every one (Python,
/// Shell, Node.js), and says which. A serve run in the foreground is left alone
/// and named in an error (exit 2), after the others are stopped.
async fn stop(
    named: Option<crate::protocol::ContainerType>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let outcomes = match named {
        Some(container_type) => vec![(
            container_type,
            crate::background::stop(container_type).await,
        )],
        None => crate::background::stop_all().await,
    };
    let mut stopped = Vec::new();
    let mut errors = Vec::new();
    for (container_type, outcome) in outcomes {
        match outcome {
            Ok(crate::background::Stopped::Ended(pid)) => stopped.push((container_type, pid)),
            Ok(crate::background::Stopped::NoneRunning) => {}
            Err(e) => errors.push(e.to_string()),
        }
    }
    if json {
        let list: Vec<_> = stopped
            .iter()
            .map(|(t, pid)| json!({ "container_type": t.arm_name(), "pid": pid }))
            .collect();
        // `stopped` keeps its old meaning (the Python pool's pid, or null).
        let python = stopped
            .iter()
            .find(|(t, _)| *t == crate::protocol::ContainerType::PythonLts)
            .map(|(_, pid)| *pid);
        output::json(&json!({ "stopped": python, "pools": list }));
    } else {
        for (container_type, pid) in &stopped {
            eprintln!(
                "stopped the background local {}pool (pid {pid})",
                crate::background::kind_word(*container_type)
            );
        }
        if stopped.is_empty() && errors.is_empty() {
            eprintln!("no background local pool is running");
        }
    }
    if errors.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    anyhow::bail!(errors.join("\n"))
}
