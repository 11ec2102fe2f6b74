//! `sessionpad export` and `sessionpad open`: the stored notebook of (pool,
//! identifier) written anywhere as `.ipynb` or a `# %%` script in its language
//! (Python, shell or JavaScript), and a
//! notebook file's code cells brought into the TUI for running.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

use super::target::TargetOpt;
use crate::notebook::Cell;
use crate::notebook::ipynb::{self, NotebookMeta};
use crate::notebook::store;
use crate::tui;

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// An nbformat v4 notebook with its outputs, for Jupyter.
    Ipynb,
    /// A script in the notebook's language (Python, shell, JavaScript), one
    /// `# %%` (`// %%`) block per cell, without outputs.
    #[value(alias = "py")]
    Script,
}

/// Options of `sessionpad export`.
#[derive(Debug, Args)]
pub struct ExportOpt {
    /// Format; by default from the output file's extension (`.py`, `.sh`,
    /// `.js`: a script), else ipynb.
    #[arg(long, value_enum)]
    pub format: Option<ExportFormat>,
    /// File to write (replaced atomically); standard output when omitted or `-`.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Export session ID as the flight recorder's ledger holds it (the cells an
    /// agent, or anyone, ran in it, with their outputs and images), not the
    /// notebook stored on this machine.
    #[arg(long, value_name = "ID")]
    pub recorded: Option<String>,
    /// With --recorded: write the files the session left in /mnt/data, as
    /// last recorded, into DIR (created if missing; sub-folders kept, names
    /// made safe as downloads are; nothing is written outside DIR). The
    /// notebook is then written only when -o names a file.
    #[arg(long, value_name = "DIR", requires = "recorded")]
    pub files: Option<PathBuf>,
    /// With --files: the files as they were after execution N (the cells'
    /// numbers, from 1), not at the end.
    #[arg(long, value_name = "N", requires = "files", value_parser = clap::value_parser!(u64).range(1..))]
    pub at: Option<u64>,
    /// With --files: replace files that already exist in DIR.
    #[arg(long, requires = "files")]
    pub force: bool,
    /// With --recorded: the pool the session was recorded on (its key, as
    /// `log --sessions` prints it), when the identifier was used on several;
    /// the most recent otherwise.
    #[arg(long, value_name = "KEY", requires = "recorded")]
    pub pool: Option<String>,
}

/// Options of `sessionpad open`.
#[derive(Debug, Args)]
pub struct OpenOpt {
    /// A notebook (`.ipynb`) whose code cells are offered in the editor, one at a
    /// time, to run or edit (they are not run by themselves).
    pub file: PathBuf,
}

/// Writes the stored notebook of the current directory's (or `--identifier`'s,
/// or the profile's) session.
///
/// # Errors
///
/// No notebook is stored for that session, it cannot be read, or the output
/// cannot be written.
pub fn export(opt: &ExportOpt, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    let settings = target.settings()?;
    if let (Some(id), Some(dir)) = (&opt.recorded, &opt.files) {
        let files = super::recorded_files::Files {
            at: opt.at,
            force: opt.force,
            pool: opt.pool.as_deref(),
            json: target.json,
        };
        let code = super::recorded_files::export(id, dir, &files)?;
        if opt.output.is_none() {
            return Ok(code);
        }
        let (cells, meta, extras) = recorded(id, opt.pool.as_deref(), &settings)?;
        let written = write(opt, target, &cells, &meta, &extras)?;
        return Ok(if code == ExitCode::SUCCESS {
            written
        } else {
            code
        });
    }
    let (cells, meta, extras) = match &opt.recorded {
        Some(id) => recorded(id, opt.pool.as_deref(), &settings)?,
        None => {
            let (cells, meta) = stored(&settings)?;
            (cells, meta, Vec::new())
        }
    };
    write(opt, target, &cells, &meta, &extras)
}

/// The notebook stored on this machine for the settings' pool and session.
fn stored(settings: &super::target::Settings) -> anyhow::Result<(Vec<Cell>, NotebookMeta)> {
    let language = settings.container_type.into();
    let pool = store::pool_name(settings.endpoint.as_deref(), language);
    let path = store::notebook_path(&crate::dirs::data_dir(), &pool, &settings.identifier);
    let Some(stored) = store::load(&path)? else {
        bail!(
            "no notebook for session {} on pool {pool} yet (looked for {}); run a cell in the notebook first",
            settings.identifier,
            path.display()
        );
    };
    let meta = stored.meta.unwrap_or(NotebookMeta {
        pool,
        identifier: settings.identifier.clone(),
        api_version: settings.api_version.to_string(),
        language: stored.language,
    });
    Ok((stored.cells, meta))
}

/// Session `id`'s recorded executions as cells ([`crate::notebook::recorded`]),
/// code read as the pool's language (from its ledger key, else the settings':
/// `--container-type`, the profile's), shell commands as shell; with, per
/// cell, what the ledger says of its call ([`recorded_extras`]).
fn recorded(
    id: &str,
    pool: Option<&str>,
    settings: &super::target::Settings,
) -> anyhow::Result<(Vec<Cell>, NotebookMeta, Vec<serde_json::Value>)> {
    use crate::ledger;
    let (conn, path, pool) = super::log::recorded_session(id, pool)?;
    let read = |e| ledger::LedgerError::sqlite(&path, e);
    // A local pool's key names what its sessions ran.
    let container_type = pool
        .as_deref()
        .and_then(|k| k.strip_prefix("local/"))
        .and_then(|rest| rest.split('/').next())
        .and_then(|t| t.parse::<crate::protocol::ContainerType>().ok())
        .unwrap_or(settings.container_type);
    let query = ledger::Query {
        identifier: Some(id.to_string()),
        pool,
        ..ledger::Query::default()
    };
    let entries = ledger::read::entries(&conn, &query).map_err(read)?;
    let got =
        crate::notebook::recorded::read(&conn, &entries, container_type.into()).map_err(read)?;
    let extras = recorded_extras(&entries);
    if got.cells.is_empty() {
        bail!(
            "no executions recorded for {id:?} ({} file call(s)); `sessionpad log --sessions` lists the recorded sessions",
            got.file_calls
        );
    }
    if got.missing_images > 0 {
        eprintln!(
            "{} image(s) left out: the ledger no longer holds their bytes",
            got.missing_images
        );
    }
    let meta = NotebookMeta {
        pool: entries
            .first()
            .map_or_else(|| "local".to_string(), |e| e.pool.clone()),
        identifier: id.to_string(),
        api_version: settings.api_version.to_string(),
        language: got.language,
    };
    Ok((got.cells, meta, extras))
}

/// Per recorded execution in `entries` (one session's calls, oldest first),
/// what the notebook's cells do not hold (issue 26): who ran it (`client`),
/// when (`at`), its `execution_id` and ledger `seq`, whether its client had
/// gone, the files it changed in `/mnt/data` (`files`, as `log --json`), and
/// the uploads made since the cell before (`uploads_before`: name, size,
/// sha256, at). Written as `metadata.sessionpad.recorded` of each cell.
fn recorded_extras(entries: &[crate::protocol::record::Entry]) -> Vec<serde_json::Value> {
    use crate::protocol::record::CallKind;
    let mut extras = Vec::new();
    let mut uploads = Vec::new();
    for e in entries {
        match e.kind {
            CallKind::Upload => {
                if let Some(f) = &e.file {
                    uploads.push(serde_json::json!({
                        "name": f.name, "size": f.size, "sha256": f.sha256, "at": e.at,
                    }));
                }
            }
            CallKind::Code | CallKind::Shell => extras.push(serde_json::json!({
                "client": e.client,
                "at": e.at,
                "execution_id": e.execution_id,
                "seq": e.seq,
                "client_gone": e.client_gone,
                "files": e.files,
                "uploads_before": std::mem::take(&mut uploads),
            })),
            CallKind::Download | CallKind::Delete | CallKind::End => {}
        }
    }
    extras
}

/// `text` (an .ipynb) with `extras[i]` as `metadata.sessionpad.recorded` of
/// its `i`th cell; unchanged when the counts differ or it does not parse.
fn with_recorded(text: String, extras: &[serde_json::Value]) -> String {
    let Ok(mut nb) = serde_json::from_str::<serde_json::Value>(&text) else {
        return text;
    };
    let Some(cells) = nb["cells"]
        .as_array_mut()
        .filter(|c| c.len() == extras.len())
    else {
        return text;
    };
    for (cell, extra) in cells.iter_mut().zip(extras) {
        if !cell["metadata"].is_object() {
            cell["metadata"] = serde_json::json!({});
        }
        if !cell["metadata"]["sessionpad"].is_object() {
            cell["metadata"]["sessionpad"] = serde_json::json!({});
        }
        cell["metadata"]["sessionpad"]["recorded"] = extra.clone();
    }
    serde_json::to_string_pretty(&nb).map_or(text, |t| t + "\n")
}

/// Writes `cells` as `opt` asks: the format, the file or standard output;
/// an .ipynb carries `extras` per cell ([`recorded_extras`]; none for a
/// stored notebook).
fn write(
    opt: &ExportOpt,
    target: &TargetOpt,
    cells: &[Cell],
    meta: &NotebookMeta,
    extras: &[serde_json::Value],
) -> anyhow::Result<ExitCode> {
    let output = opt.output.as_deref().filter(|p| *p != Path::new("-"));
    let format = opt.format.unwrap_or(match output {
        Some(p)
            if p.extension().is_some_and(|e| {
                crate::notebook::language::Language::ALL
                    .iter()
                    .any(|l| e == l.extension())
            }) =>
        {
            ExportFormat::Script
        }
        _ => ExportFormat::Ipynb,
    });
    let text = match format {
        ExportFormat::Ipynb if !extras.is_empty() => {
            with_recorded(ipynb::to_string(cells, meta), extras)
        }
        ExportFormat::Ipynb => ipynb::to_string(cells, meta),
        ExportFormat::Script => ipynb::to_script(cells, meta),
    };
    match output {
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("writing to standard output")?;
        }
        Some(file) => {
            store::write_atomic(file, text.as_bytes())
                .with_context(|| format!("writing {}", file.display()))?;
            if target.json {
                super::output::json(&serde_json::json!({
                    "path": file,
                    "cells": cells.len(),
                    "identifier": meta.identifier,
                }));
            } else {
                eprintln!(
                    "wrote {} cells of session {} to {}",
                    cells.len(),
                    meta.identifier,
                    file.display()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Starts the notebook with the code cells of `opt.file` waiting in the editor.
/// Cells run in the target's session and are saved to its stored notebook, as
/// usual; the file itself is only read.
///
/// # Errors
///
/// The file cannot be read or is not a v4 notebook; the TUI failed.
pub async fn open(opt: OpenOpt, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&opt.file)
        .with_context(|| format!("reading {}", opt.file.display()))?;
    let nb = ipynb::from_str(&text).with_context(|| format!("reading {}", opt.file.display()))?;
    let sources: Vec<String> = nb
        .cells
        .into_iter()
        .map(|c| c.source)
        .filter(|s| !s.trim().is_empty())
        .collect();
    if sources.is_empty() {
        bail!("{} has no code cells", opt.file.display());
    }
    let mut s = target.settings()?;
    s.learn_container_type().await;
    tui::run_with(s.tui_options(target), sources).await?;
    Ok(ExitCode::SUCCESS)
}
