//! `sessionpad replay ID`: the cells the flight recorder's ledger holds for
//! session ID (an agent's, say) run again, in order, in a fresh session of any
//! pool sessionpad can reach (the local pool by default, a profile, an
//! endpoint), each cell's outcome printed next to the recorded one: a person
//! sees whether what the agent did still does the same.
//!
//! The session is a new random identifier (`replay-<8 hex>`) unless
//! `--identifier` names one. Code is run as code and shell commands (with
//! their standard input) as shell commands, so a recording of shell commands
//! needs a Shell pool (`--container-type shell`). Exit 0 when every cell ended
//! as it did when recorded (succeeded, failed; a command's exit code), 1 when
//! one did not, 2 when the replay could not run.

use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use serde_json::json;

use super::output;
use super::target::{Connection, Settings, TargetOpt, connect};
use crate::client::ShellRequest;
use crate::ledger;
use crate::protocol::record::{CallKind, Entry};
use crate::text::sanitize::plain;

/// Options of `sessionpad replay`.
#[derive(Debug, Args)]
pub struct ReplayOpt {
    /// The recorded session whose cells to run again.
    pub id: String,
    /// The pool it was recorded on (its key, as `log --sessions` prints it),
    /// when the identifier was used on several; the most recent otherwise.
    #[arg(long, value_name = "KEY")]
    pub pool: Option<String>,
}

/// One replayed cell's outcome against its recording.
struct Outcome {
    /// `Succeeded`/`Failed`/… or `exit N` now.
    now: String,
    /// The same, as recorded.
    then: String,
    /// Whether standard output is the same as recorded.
    same_stdout: bool,
    /// Standard output now.
    stdout: String,
    /// Standard error now.
    stderr: String,
}

/// Runs `sessionpad replay`.
///
/// # Errors
///
/// An identifier that breaks the rules, nothing recorded for it, a ledger that
/// cannot be read, shell commands recorded and the target not a Shell pool (or
/// code and a Shell pool), the pool unreachable or refusing a cell.
pub async fn run(opt: &ReplayOpt, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    crate::pool::server::validate_identifier(&opt.id).map_err(|e| anyhow::anyhow!(e.message))?;
    let cells = recorded_cells(&opt.id, opt.pool.as_deref())?;
    let mut settings = target.settings()?;
    if target.identifier.is_none() {
        let fresh = uuid::Uuid::new_v4().simple().to_string();
        settings.identifier = format!("replay-{}", &fresh[..8]);
    }
    let conn = connect(&settings).await?;
    check_kinds(&cells, conn.client.container_type().is_shell())?;
    if !target.json {
        eprintln!(
            "replaying {} cell(s) of {} into session {} on {}",
            cells.len(),
            opt.id,
            settings.identifier,
            conn.label
        );
    }
    let mut differ = 0;
    let mut report = Vec::new();
    for (i, e) in cells.iter().enumerate() {
        let code = e.code.clone().unwrap_or_default();
        let outcome = replay_cell(&conn, &settings, e, &code).await?;
        let same = outcome.now == outcome.then;
        if !same {
            differ += 1;
        }
        if target.json {
            report.push(cell_json(i, &code, &outcome, same));
        } else {
            print_cell(i, cells.len(), &code, &outcome, same);
        }
    }
    if target.json {
        output::json(&json!({
            "recorded": opt.id,
            "identifier": settings.identifier,
            "cells": report,
            "differ": differ,
        }));
    } else {
        eprintln!(
            "{} cell(s) replayed into session {}; {differ} ended otherwise than recorded",
            cells.len(),
            settings.identifier
        );
    }
    Ok(if differ == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Checks that the recorded `cells` can run on the pool: shell commands only on
/// a Shell pool (`shell_pool`), code only elsewhere.
///
/// # Errors
///
/// Code recorded and a Shell pool, or shell commands recorded and another
/// pool.
fn check_kinds(cells: &[Entry], shell_pool: bool) -> anyhow::Result<()> {
    let shell_cells = cells.iter().filter(|e| e.kind == CallKind::Shell).count();
    match (shell_pool, shell_cells) {
        (true, n) if n < cells.len() => bail!(
            "{} recorded cell(s) are code, and this is a Shell pool: replay into a Python or Node.js pool",
            cells.len() - n
        ),
        (false, n) if n > 0 => bail!(
            "{n} recorded cell(s) are shell commands: give --container-type shell (a Shell pool)"
        ),
        _ => {}
    }
    Ok(())
}

/// Runs the recorded cell `e` (its `code`) again in the session: a shell
/// command (with its standard input) as one, else as code; its outcome next
/// to the recorded one.
///
/// # Errors
///
/// The pool unreachable or refusing the cell.
async fn replay_cell(
    conn: &Connection,
    settings: &Settings,
    e: &Entry,
    code: &str,
) -> anyhow::Result<Outcome> {
    let (now, then, stdout, stderr) = if e.kind == CallKind::Shell {
        let request = ShellRequest {
            stdin: e.stdin.clone(),
            ..ShellRequest::line(code.to_string(), settings.timeout)
        };
        let exec = conn
            .client
            .execute_shell(&settings.identifier, &request)
            .await?;
        let now = exec
            .exit_code
            .map_or_else(|| "no exit code".to_string(), |c| format!("exit {c}"));
        let then = e
            .exit_code
            .map_or_else(|| "no exit code".to_string(), |c| format!("exit {c}"));
        (now, then, exec.stdout, exec.stderr)
    } else {
        let exec = conn
            .client
            .execute(&settings.identifier, code, settings.timeout)
            .await?;
        let now = format!("{:?}", exec.status);
        let then = e.status.clone().unwrap_or_else(|| "unknown".into());
        (now, then, exec.stdout, exec.stderr)
    };
    Ok(Outcome {
        same_stdout: e.stdout.as_deref().unwrap_or("") == stdout,
        now,
        then,
        stdout,
        stderr,
    })
}

/// Replayed cell number `i` (from 0) in the `--json` report; `same`: whether
/// it ended as recorded.
fn cell_json(i: usize, code: &str, outcome: &Outcome, same: bool) -> serde_json::Value {
    json!({
        "cell": i + 1,
        "code": code,
        "status": outcome.now,
        "recorded_status": outcome.then,
        "same_status": same,
        "same_stdout": outcome.same_stdout,
        "stdout": outcome.stdout,
        "stderr": outcome.stderr,
    })
}

/// Prints replayed cell number `i` (from 0) of `total` for a person: how it
/// ended against the recording (`same`: as recorded), its code, then its
/// output.
fn print_cell(i: usize, total: usize, code: &str, outcome: &Outcome, same: bool) {
    let mark = if same { "same as recorded" } else { "recorded" };
    eprintln!(
        "[{}/{}] {}  ({mark}: {}{})",
        i + 1,
        total,
        outcome.now,
        outcome.then,
        if outcome.same_stdout {
            ""
        } else {
            "; stdout differs"
        }
    );
    eprintln!("{}", indent(&plain(code)));
    output::out(&outcome.stdout);
    output::err(&outcome.stderr);
}

/// The recorded executions (code and shell commands) of session `id`, oldest
/// first.
fn recorded_cells(id: &str, pool: Option<&str>) -> anyhow::Result<Vec<Entry>> {
    let path = ledger::default_path();
    let Some(conn) = ledger::schema::open_existing(&path)? else {
        bail!("nothing recorded yet: no ledger at {}", path.display());
    };
    let query = ledger::Query {
        identifier: Some(id.to_string()),
        pool: super::log::choose_pool(&conn, id, pool)?,
        ..ledger::Query::default()
    };
    let cells: Vec<Entry> = ledger::read::entries(&conn, &query)
        .map_err(|e| ledger::LedgerError::sqlite(&path, e))?
        .into_iter()
        .filter(|e| matches!(e.kind, CallKind::Code | CallKind::Shell))
        .collect();
    if cells.is_empty() {
        bail!(
            "no executions recorded for {id:?}; `sessionpad log --sessions` lists the recorded sessions"
        );
    }
    Ok(cells)
}

/// `text` with each line indented by four spaces (the cell's code under its
/// header line).
fn indent(text: &str) -> String {
    text.trim_end_matches('\n')
        .lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
