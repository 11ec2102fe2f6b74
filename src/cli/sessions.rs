//! `sessionpad sessions ls|show|rm` and `sessionpad pool info`.

use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;

use super::output;
use super::target::{TargetOpt, connect};
use crate::client::arm::SessionPoolResource;
use crate::protocol::Isolation;
use crate::protocol::SessionInfo;
use crate::text::sanitize;

/// Session commands.
#[derive(Debug, Subcommand)]
pub enum SessionsCmd {
    /// List the pool's sessions.
    Ls {
        /// Only the sessions created longer ago than this (30m, 1h, 2d);
        /// sessions whose creation time the pool does not say are left out.
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: Option<std::time::Duration>,
    },
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
        #[arg(conflicts_with = "older_than")]
        ids: Vec<String>,
        /// End every session created longer ago than this (30m, 1h, 2d),
        /// after asking which.
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: Option<std::time::Duration>,
        /// End this directory's session, or the sessions of --older-than,
        /// without asking (needed when standard input is not a terminal).
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

/// Pool commands.
#[derive(Debug, Subcommand)]
pub enum PoolCmd {
    /// The pool's metadata: a local pool's isolation (sandbox, limits), the
    /// service's limits it emulates (--azure-limits), runtime, installed
    /// packages, kernel; for an Azure pool, first its card from ARM (egress,
    /// lifecycle, sessions alive of the maximum, image, MCP server, health).
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
        SessionsCmd::Ls { older_than } => {
            let mut sessions = client.pool_sessions().await?;
            if let Some(age) = older_than {
                sessions = older(sessions, age, chrono::Utc::now());
            }
            if target.json {
                output::json(&serde_json::to_value(&sessions)?);
            } else {
                for s in &sessions {
                    print_session(s);
                }
                if sessions.is_empty() {
                    match older_than {
                        Some(age) => eprintln!(
                            "no sessions older than {} in {}",
                            humantime::format_duration(age),
                            conn.label
                        ),
                        None => eprintln!("no sessions in {}", conn.label),
                    }
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
        SessionsCmd::Rm {
            ids,
            older_than,
            yes,
        } => {
            let ids = if let Some(age) = older_than {
                let old = older(client.pool_sessions().await?, age, chrono::Utc::now());
                if old.is_empty() {
                    eprintln!(
                        "no sessions older than {} in {}",
                        humantime::format_duration(age),
                        conn.label
                    );
                    if target.json {
                        output::json(&json!([]));
                    }
                    return Ok(ExitCode::SUCCESS);
                }
                if !yes && !confirmed_ending_old(&old, age, &conn.label)? {
                    return Ok(ExitCode::from(1));
                }
                let ids: Vec<String> = old.into_iter().map(|s| s.identifier).collect();
                // A list, whatever its length: a script reads one shape.
                return end_sessions(client, &ids, target.json, true).await;
            } else if ids.is_empty() {
                if settings.derived_identifier && !yes && !confirmed_ending_this_folders(id)? {
                    return Ok(ExitCode::from(1));
                }
                vec![id.to_string()]
            } else {
                ids
            };
            return end_sessions(client, &ids, target.json, false).await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Ends the sessions `ids` one after the other, saying each (`--json`: one
/// object for one session unless `as_list`, else a list).
///
/// # Errors
///
/// The first session the pool would not end (those before it are ended).
async fn end_sessions(
    client: &crate::client::SessionClient,
    ids: &[String],
    json_out: bool,
    as_list: bool,
) -> anyhow::Result<ExitCode> {
    let mut ended = Vec::new();
    for id in ids {
        let message = client.end_session(id).await?;
        if json_out {
            ended.push(json!({"deleted": id, "message": message}));
        } else {
            eprintln!("{}", sanitize::plain(&message));
        }
    }
    if json_out {
        // One object for one session, as before; a list for several.
        output::json(&match ended.as_slice() {
            [one] if !as_list => one.clone(),
            _ => json!(ended),
        });
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads `--older-than`: a duration in humantime's units (`30m`, `1h`, `2d`).
///
/// # Errors
///
/// A message with an example.
fn parse_age(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s.trim())
        .map_err(|e| format!("{s:?} is not a duration (30m, 1h, 2d): {e}"))
}

/// The sessions of `sessions` created more than `age` before `now`, oldest
/// first; a session whose creation time is unknown is not among them.
fn older(
    sessions: Vec<SessionInfo>,
    age: std::time::Duration,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<SessionInfo> {
    let Ok(age) = chrono::Duration::from_std(age) else {
        return Vec::new();
    };
    let cutoff = now - age;
    let mut old: Vec<SessionInfo> = sessions
        .into_iter()
        .filter(|s| s.created.is_some_and(|c| c < cutoff))
        .collect();
    old.sort_by_key(|s| s.created);
    old
}

/// Asks before `sessions rm --older-than` ends `old` (listed first): true to
/// go on, false when the answer was no (said).
///
/// # Errors
///
/// Standard input is not a terminal (nobody to ask: `--yes` is named), or
/// cannot be read.
fn confirmed_ending_old(
    old: &[SessionInfo],
    age: std::time::Duration,
    label: &str,
) -> anyhow::Result<bool> {
    let age = humantime::format_duration(age);
    // On standard error, beside the question: standard output stays the answer's.
    for s in old {
        output::err(&session_line(s));
    }
    let question = format!(
        "end these {} sessions of {label}, created more than {age} ago? Their variables and \
         /mnt/data files are lost",
        old.len()
    );
    ask_to_end(&question, || {
        format!(
            "`sessions rm --older-than {age}` would end {} sessions: standard input is not a \
             terminal, so nobody can be asked; give --yes to end them",
            old.len()
        )
    })
}

/// Asks `question`: true to go on, false when the answer was no (said).
///
/// # Errors
///
/// `refusal()` when standard input is not a terminal (nobody to ask), or
/// when it cannot be read.
fn ask_to_end(question: &str, refusal: impl FnOnce() -> String) -> anyhow::Result<bool> {
    match output::confirm(question)? {
        Some(true) => Ok(true),
        Some(false) => {
            eprintln!("not ended");
            Ok(false)
        }
        None => anyhow::bail!(refusal()),
    }
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
    ask_to_end(&question, || {
        format!(
            "`sessions rm` without an identifier ends this directory's session {}: \
             standard input is not a terminal, so nobody can be asked; give --yes to end it, \
             or name sessions (`sessions rm ID...`)",
            sanitize::plain(id)
        )
    })
}

fn time(t: Option<chrono::DateTime<chrono::Utc>>) -> String {
    t.map_or_else(|| "-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

/// One session as a line: identifier, created, last used, expires.
fn session_line(s: &SessionInfo) -> String {
    format!(
        "{}  created {}  last used {}  expires {}\n",
        sanitize::plain(&s.identifier),
        time(s.created),
        time(s.last_accessed),
        time(s.expires)
    )
}

fn print_session(s: &SessionInfo) {
    output::out(&session_line(s));
}

/// Runs a pool command. `info` prints, for a pool whose endpoint names an
/// Azure session pool, its card from ARM first (see [`pool_card`]), then the
/// data plane's metadata.
///
/// # Errors
///
/// The data plane's errors (ARM's are printed, not returned: the metadata is
/// still worth having).
pub async fn run_pool(cmd: PoolCmd, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    if let PoolCmd::Stop = cmd {
        return stop(target.container_type, target.json).await;
    }
    let settings = target.settings()?;
    let conn = connect(&settings).await?;
    let pool = settings.pool_target();
    let (meta, card) = tokio::join!(conn.client.pool_metadata(), pool_card(&pool, &conn.client));
    let meta = meta?;
    if target.json {
        let mut value = serde_json::to_value(&meta)?;
        if let (Some(card), Some(object)) = (card, value.as_object_mut()) {
            object.insert("session_pool".into(), card.json());
        }
        output::json(&value);
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = format!(
        "pool: {} (api-version {})\n",
        conn.label, settings.api_version
    );
    if let Some(card) = &card {
        text.push_str(&card.text());
    }
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
    if let Some(image) = meta.image {
        text.push_str(&format!("image: {}\n", image_line(image)));
    }
    text.push_str(&format!("packages ({}):\n", meta.packages.len()));
    for p in &meta.packages {
        text.push_str(&format!("  {} {}\n", p.name, p.version));
    }
    output::out(&text);
    Ok(ExitCode::SUCCESS)
}

/// What `pool info` says of a local pool's image: its name and what it holds.
fn image_line(image: crate::protocol::image::Image) -> String {
    use crate::protocol::image::Image;
    match image {
        Image::PythonLts => format!(
            "{image} (like the service's PythonLTS image: NumPy, pandas, scikit-learn, SciPy, \
             seaborn, requests, polars, pkg_resources and more; --image minimal for less)"
        ),
        Image::Minimal => format!(
            "{image} (a kernel, NumPy, pandas and Matplotlib only; the default image has what the \
             service's PythonLTS image documents)"
        ),
    }
}

/// What ARM said of an Azure pool, for `pool info`.
struct PoolCard {
    /// The ARM api-version read with.
    api_version: crate::client::arm::ArmApiVersion,
    /// The resource, or why there is none.
    resource: Result<SessionPoolResource, String>,
    /// The sessions the data plane lists (alive now), when it listed them.
    alive: Option<usize>,
}

impl PoolCard {
    /// The card as `session pool (ARM …):` and indented `label: value` lines,
    /// or the one line saying why ARM gave none.
    fn text(&self) -> String {
        match &self.resource {
            Ok(resource) => {
                let mut text = format!("session pool (ARM, api-version {}):\n", self.api_version);
                for (label, value) in resource.card(self.alive) {
                    text.push_str(&format!("  {label}: {value}\n"));
                }
                text
            }
            Err(e) => format!("session pool (ARM): {e}\n"),
        }
    }

    /// `{"api_version", "resource" (ARM's shape), "alive"}` or `{"api_version", "error"}`.
    fn json(&self) -> serde_json::Value {
        match &self.resource {
            Ok(resource) => json!({
                "api_version": self.api_version.as_str(),
                "resource": resource,
                "alive": self.alive,
            }),
            Err(e) => json!({"api_version": self.api_version.as_str(), "error": e}),
        }
    }
}

/// The card of `target`'s pool when its endpoint names an Azure session pool
/// (`None` otherwise): its ARM resource and, beside it, how many sessions the
/// data plane lists, both asked at once.
async fn pool_card(
    target: &crate::target::PoolTarget,
    client: &crate::client::SessionClient,
) -> Option<PoolCard> {
    let (arm, id) = match target.arm()? {
        Ok(found) => found,
        Err(e) => {
            return Some(PoolCard {
                api_version: crate::client::arm::ArmApiVersion::default(),
                resource: Err(e.to_string()),
                alive: None,
            });
        }
    };
    let (resource, sessions) = tokio::join!(arm.session_pool(&id), client.pool_sessions());
    Some(PoolCard {
        api_version: arm.api_version(),
        resource: resource.map_err(|e| e.to_string()),
        alive: sessions.ok().map(|s| s.len()),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn session(id: &str, created: Option<chrono::DateTime<Utc>>) -> SessionInfo {
        SessionInfo {
            identifier: id.into(),
            created,
            last_accessed: None,
            expires: None,
            etag: None,
        }
    }

    #[test]
    fn older_keeps_the_sessions_created_before_the_age_oldest_first() {
        let now = Utc.with_ymd_and_hms(2026, 5, 1, 12, 0, 0).unwrap();
        let at = |h: u32, m: u32| Some(Utc.with_ymd_and_hms(2026, 5, 1, h, m, 0).unwrap());
        let sessions = vec![
            session("young", at(11, 30)),
            session("old", at(10, 0)),
            session("oldest", at(8, 0)),
            session("edge", at(11, 0)),
            session("unknown", None),
        ];
        let age = parse_age("1h").unwrap();
        let ids: Vec<_> = older(sessions, age, now)
            .into_iter()
            .map(|s| s.identifier)
            .collect();
        assert_eq!(ids, ["oldest", "old"]);
    }

    #[test]
    fn ages_are_humantime_durations() {
        assert_eq!(parse_age("30m").unwrap().as_secs(), 1800);
        assert_eq!(parse_age(" 2d ").unwrap().as_secs(), 2 * 86400);
        let err = parse_age("an hour").unwrap_err();
        assert!(err.contains("30m, 1h, 2d"), "{err}");
    }
}
