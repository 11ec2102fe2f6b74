//! `sessionpad replay ID`: the cells the flight recorder's ledger holds for
//! session ID (an agent's, say) run again, in order, in a fresh session of any
//! pool sessionpad can reach (the local pool by default, a profile, an
//! endpoint), each cell's outcome printed next to the recorded one: a person
//! sees whether what the agent did still does the same.
//!
//! The session is a new random identifier (`replay-<8 hex>`) unless
//! `--identifier` names one. Code is run as code and shell commands (with
//! their standard input) as shell commands, so a recording of shell commands
//! needs a Shell pool (`--container-type shell`). Recorded uploads are done
//! again in their place, from the bytes the ledger kept (the files each call
//! changed, issue 26); an upload whose bytes it did not keep is said and
//! counts as a difference. Exit 0 when every cell ended as it did when
//! recorded (succeeded, failed; a command's exit code) and every upload was
//! redone, 1 when not, 2 when the replay could not run.

use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use serde_json::json;

use super::output;
use super::target::{Connection, Settings, TargetOpt, connect};
use crate::client::ShellRequest;
use crate::ledger;
use crate::protocol::record::{CallKind, Entry};
use crate::session::replay::{Ending, RecordedUpload, Tally, redo_upload};
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
    /// How it ended now: `Succeeded`/`Failed`/… or `exit N`.
    now: Ending,
    /// The same, as recorded.
    then: Ending,
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
            cells.iter().filter(|e| e.kind != CallKind::Upload).count(),
            opt.id,
            settings.identifier,
            conn.label
        );
    }
    let mut tally = Tally::default();
    let mut report = Vec::new();
    let executions = cells.iter().filter(|e| e.kind != CallKind::Upload).count();
    let mut i = 0;
    let ledger = ledger::default_path();
    for e in &cells {
        if let Some(upload) = RecordedUpload::of_entry(e) {
            let redone = redo_upload(&conn.client, &settings.identifier, &ledger, &upload).await;
            if redone.is_err() {
                tally.uploads_not_redone += 1;
            }
            let name = upload.name.as_str();
            match &redone {
                _ if target.json => report.push(json!({
                    "upload": name,
                    "redone": redone.is_ok(),
                    "why_not": redone.as_ref().err(),
                })),
                Ok(size) => eprintln!(
                    "upload of {} redone ({})",
                    plain(name),
                    crate::text::human_size(*size)
                ),
                Err(why) => eprintln!("upload of {} NOT redone: {}", plain(name), plain(why)),
            }
            continue;
        }
        let code = e.code.clone().unwrap_or_default();
        let outcome = replay_cell(&conn, &settings, e, &code).await?;
        tally.cell(&outcome.then, &outcome.now);
        let same = outcome.now == outcome.then;
        if target.json {
            report.push(cell_json(i, &code, &outcome, same));
        } else {
            print_cell(i, executions, &code, &outcome, same);
        }
        i += 1;
    }
    let differ = tally.differ + tally.uploads_not_redone;
    if target.json {
        output::json(&json!({
            "recorded": opt.id,
            "identifier": settings.identifier,
            "cells": report,
            "differ": differ,
            "summary": tally.to_string(),
        }));
    } else {
        eprintln!(
            "{executions} cell(s) replayed into session {}: {tally}",
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
    let cells: Vec<&Entry> = cells
        .iter()
        .filter(|e| e.kind != CallKind::Upload)
        .collect();
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
    let then = Ending::of_entry(e).unwrap_or_else(|| Ending::Other("unknown".into()));
    let (now, stdout, stderr) = if e.kind == CallKind::Shell {
        let request = ShellRequest {
            stdin: e.stdin.clone(),
            ..ShellRequest::line(code.to_string(), settings.timeout)
        };
        let exec = conn
            .client
            .execute_shell(&settings.identifier, &request)
            .await?;
        (Ending::Exit(exec.exit_code), exec.stdout, exec.stderr)
    } else {
        let exec = conn
            .client
            .execute(&settings.identifier, code, settings.timeout)
            .await?;
        (Ending::Status(exec.status), exec.stdout, exec.stderr)
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
        "status": outcome.now.to_string(),
        "recorded_status": outcome.then.to_string(),
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
    let (conn, path, pool) = super::log::recorded_session(id, pool)?;
    let query = ledger::Query {
        identifier: Some(id.to_string()),
        pool,
        ..ledger::Query::default()
    };
    let cells: Vec<Entry> = ledger::read::entries(&conn, &query)
        .map_err(|e| ledger::LedgerError::sqlite(&path, e))?
        .into_iter()
        .filter(|e| matches!(e.kind, CallKind::Code | CallKind::Shell | CallKind::Upload))
        .collect();
    if cells.iter().all(|e| e.kind == CallKind::Upload) {
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
