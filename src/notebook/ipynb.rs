//! The notebook as nbformat v4.5 JSON (`.ipynb`) and as a `# %%` Python script.
//!
//! It owns the mapping between [`Cell`]/[`Output`] and nbformat's cells and
//! outputs, in both directions: stdout and stderr are `stream` outputs, a result is
//! an `execute_result` (`text/plain`, plus `application/json` when the value is not
//! a plain string), an image is `display_data` with base64 `image/<format>`, a
//! failure is an `error`. What the model has and nbformat does not (what a cell's
//! execution came to, its duration, a command's exit code and standard input)
//! goes into the cell's `metadata.sessionpad`: `status` is `succeeded`,
//! `failed` or `canceled`, or `queued` for a cell not settled yet, or
//! [`RUNNING_WHEN_QUIT`] / [`QUEUED_WHEN_QUIT`] for a cell the notebook was
//! quit while it waited, with what identifies its execution beside it
//! (`identifier`, `pool`, `execution_id`, `started_at`, `quit_at`,
//! `quit_while`; and
//! `recorded_seq` once the flight recorder's record filled it in). The
//! notebook's `metadata.sessionpad.draft` keeps the text typed in the editor
//! and not run when the notebook was quit.
//!
//! Reading accepts what Jupyter writes too: multiline strings as one string or as a
//! list of lines, markdown and raw cells (skipped, and counted), rich outputs
//! without an image (their `text/plain` becomes stdout). It does no I/O.

use std::fmt::Write as _;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value};

use super::ipynb_write::Doc;
use super::language::Language;
use super::{Cell, CellOutcome, Output, QuitWhile, StreamName, Waiting};

/// The `status` of a cell the notebook was quit while it ran, until the
/// flight recorder's record fills it in.
pub const RUNNING_WHEN_QUIT: &str = "running when you quit";

/// The stored status of a cell never run: it was queued behind a cell that
/// failed ([`CellOutcome::NotRun`]).
pub const NOT_RUN: &str = "not run";

/// The `status` of a cell the notebook was quit while it was queued: it was
/// never sent to the pool.
pub const QUEUED_WHEN_QUIT: &str = "queued when you quit";

/// Where a notebook's cells ran, kept in the notebook's `metadata.sessionpad`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotebookMeta {
    /// The pool: its management endpoint, or `local` for the local pool.
    pub pool: String,
    /// The session identifier.
    pub identifier: String,
    /// The api-version spoken (`2025-10-02-preview`).
    pub api_version: String,
    /// The language of the cells (from the pool's container type), written
    /// as `kernelspec` and `language_info`.
    pub language: Language,
}

/// A notebook read from `.ipynb` text.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadNotebook {
    /// Its code cells, in order, each settled (a cell saved before its
    /// answer came is read as failed).
    pub cells: Vec<Cell>,
    /// Its `metadata.sessionpad`, when it was written by sessionpad.
    pub meta: Option<NotebookMeta>,
    /// Markdown and raw cells left out.
    pub skipped: usize,
    /// The language its metadata names (`language_info`, `kernelspec`);
    /// Python when it names none sessionpad runs.
    pub language: Language,
    /// The text typed in the editor and not run when the notebook was quit
    /// (`metadata.sessionpad.draft`).
    pub draft: Option<String>,
}

/// Why `.ipynb` text could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IpynbError {
    /// Not JSON at all.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// JSON, but not a notebook this reader understands.
    #[error("not an nbformat v4 notebook: {0}")]
    Shape(String),
}

/// The notebook as an nbformat v4.5 document (the same document
/// [`to_string`] writes, as a JSON tree: for tests and small notebooks).
pub fn to_value(cells: &[Cell], meta: &NotebookMeta) -> Value {
    serde_json::to_value(Doc::new(cells, meta, None)).unwrap_or(Value::Null)
}

/// The notebook as `.ipynb` text, laid out as Jupyter writes it (one-space indent,
/// sorted keys, a final newline) so that saved notebooks diff well. Written
/// straight from the cells ([`super::ipynb_write`]): no JSON tree, no copy
/// per line of output.
pub fn to_string(cells: &[Cell], meta: &NotebookMeta) -> String {
    let mut out = Vec::new();
    // Writing into a `Vec` cannot fail (no I/O, string keys only).
    if write(cells, meta, &mut out).is_err() {
        return to_value(cells, meta).to_string();
    }
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_default()
}

/// Writes the notebook's `.ipynb` text ([`to_string`]'s bytes) to `out` as it
/// is made, so that a notebook of megabytes is never held whole in memory
/// (the saver writes straight into its file).
///
/// # Errors
///
/// `out`'s.
pub fn write(cells: &[Cell], meta: &NotebookMeta, out: impl std::io::Write) -> std::io::Result<()> {
    write_with_draft(cells, meta, None, out)
}

/// [`write`], with `draft` (the text typed in the editor and not run when
/// the notebook was quit) in `metadata.sessionpad.draft`.
///
/// # Errors
///
/// `out`'s.
pub fn write_with_draft(
    cells: &[Cell],
    meta: &NotebookMeta,
    draft: Option<&str>,
    mut out: impl std::io::Write,
) -> std::io::Result<()> {
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(&Doc::new(cells, meta, draft), &mut ser)
        .map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// The notebook as a script in its language with `# %%` cell markers (`// %%`
/// in JavaScript: the "percent" format of Jupytext, VS Code and Spyder).
/// Outputs are left out.
pub fn to_script(cells: &[Cell], meta: &NotebookMeta) -> String {
    let comment = meta.language.comment();
    let mut out = format!(
        "{comment} sessionpad notebook: pool {}, identifier {}\n",
        one_line(&meta.pool),
        one_line(&meta.identifier)
    );
    for cell in cells {
        let _ = write!(out, "\n{comment} %% In [{}]\n", cell.execution_count);
        out.push_str(&cell.source);
        if !cell.source.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// A header value that cannot break out of its comment line.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Reads `.ipynb` text: its code cells (with outputs), its sessionpad metadata and
/// how many other cells it had.
///
/// # Errors
///
/// The text is not JSON, or not an nbformat v4 notebook (no `cells` list, a cell
/// that is not an object, a code cell without a readable `source`).
pub fn from_str(text: &str) -> Result<ReadNotebook, IpynbError> {
    // Multiline strings joined as they are read (no node per line).
    let doc: Value = serde_json::from_str::<super::ipynb_read::Lean>(text)?.0;
    let major = doc.get("nbformat").and_then(Value::as_u64);
    if major != Some(4) {
        return Err(IpynbError::Shape(format!(
            "nbformat is {}, expected 4",
            major.map_or_else(|| "missing".to_string(), |m| m.to_string())
        )));
    }
    let raw_cells = doc
        .get("cells")
        .and_then(Value::as_array)
        .ok_or_else(|| IpynbError::Shape("no cells list".into()))?;
    let mut cells = Vec::new();
    let mut skipped = 0;
    for (n, raw) in raw_cells.iter().enumerate() {
        let shape = |what: &str| IpynbError::Shape(format!("cell {}: {what}", n + 1));
        let obj = raw.as_object().ok_or_else(|| shape("not an object"))?;
        if obj.get("cell_type").and_then(Value::as_str) != Some("code") {
            skipped += 1;
            continue;
        }
        let index = cells.len();
        cells.push(read_cell(obj, index).map_err(|e| shape(&e))?);
    }
    let language = doc
        .get("metadata")
        .and_then(Language::from_metadata)
        .unwrap_or_default();
    let meta = doc
        .pointer("/metadata/sessionpad")
        .and_then(|v| read_meta(v, language));
    let draft = doc
        .pointer("/metadata/sessionpad/draft")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
        .map(str::to_string);
    Ok(ReadNotebook {
        cells,
        meta,
        skipped,
        language,
        draft,
    })
}

fn read_meta(v: &Value, language: Language) -> Option<NotebookMeta> {
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    Some(NotebookMeta {
        pool: field("pool")?,
        identifier: field("identifier")?,
        api_version: field("api_version").unwrap_or_default(),
        language,
    })
}

/// An nbformat multiline string (one string, or a list of strings to join).
fn multiline(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => parts.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

fn read_cell(obj: &Map<String, Value>, index: usize) -> Result<Cell, String> {
    let source = multiline(obj.get("source")).ok_or("no readable source")?;
    let fallback_count = u32::try_from(index + 1).unwrap_or(u32::MAX);
    let execution_count = obj
        .get("execution_count")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(fallback_count);
    let outputs: Vec<Output> = obj
        .get("outputs")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(read_output).collect())
        .unwrap_or_default();
    let ours = obj.get("metadata").and_then(|m| m.get("sessionpad"));
    let status = ours.and_then(|m| m.get("status")).and_then(Value::as_str);
    let quit_while = ours.and_then(|m| read_quit_while(m, status));
    let outcome = status
        .and_then(read_status)
        .unwrap_or_else(|| infer_outcome(&outputs));
    let duration = ours
        .and_then(|m| m.get("duration_ms"))
        .and_then(Value::as_u64)
        .map(Duration::from_millis);
    let exit_code = ours
        .and_then(|m| m.get("exit_code"))
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok());
    let stdin = ours
        .and_then(|m| m.get("stdin"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let output_streams_max_length = ours
        .and_then(|m| m.get("output_streams_max_length"))
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    let network = ours
        .and_then(|m| m.get("network"))
        .and_then(|n| serde_json::from_value(n.clone()).ok())
        .unwrap_or_default();
    Ok(Cell {
        source,
        execution_count,
        outputs,
        outcome: Some(outcome),
        duration,
        exit_code,
        stdin,
        quit_while,
        output_streams_max_length,
        network,
    })
}

/// A stored status. A cell saved while queued or running never got its answer,
/// so it is read as failed rather than left unsettled forever; a cell the
/// notebook was quit while it waited is read as such (not known).
fn read_status(name: &str) -> Option<CellOutcome> {
    match name {
        "succeeded" => Some(CellOutcome::Succeeded),
        "failed" | "queued" | "running" => Some(CellOutcome::Failed),
        "canceled" => Some(CellOutcome::Canceled),
        NOT_RUN => Some(CellOutcome::NotRun),
        RUNNING_WHEN_QUIT | QUEUED_WHEN_QUIT => Some(CellOutcome::Unknown),
        _ => None,
    }
}

/// What a cell's `metadata.sessionpad` (`ours`, with its `status`) says of
/// the notebook being quit while the cell waited: `None` for a cell it was
/// not. The status alone is enough (a file edited by hand may have lost the
/// rest); without an identifier the lookup in the flight recorder finds
/// nothing, and the cell says so.
fn read_quit_while(ours: &Value, status: Option<&str>) -> Option<Box<QuitWhile>> {
    let field = |k: &str| ours.get(k).and_then(Value::as_str).map(str::to_string);
    let was = match (field("quit_while").as_deref(), status) {
        (Some("queued"), _) | (None, Some(QUEUED_WHEN_QUIT)) => Waiting::Queued,
        (Some("running"), _) | (None, Some(RUNNING_WHEN_QUIT)) => Waiting::Running,
        _ => return None,
    };
    let time = |k: &str| {
        field(k)
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.with_timezone(&chrono::Utc))
    };
    Some(Box::new(QuitWhile {
        was,
        identifier: field("identifier").unwrap_or_default(),
        pool: field("pool"),
        execution_id: field("execution_id"),
        started_at: time("started_at"),
        quit_at: time("quit_at"),
        recorded_seq: ours.get("recorded_seq").and_then(Value::as_i64),
    }))
}

fn infer_outcome(outputs: &[Output]) -> CellOutcome {
    if outputs.iter().any(|o| matches!(o, Output::Error { .. })) {
        CellOutcome::Failed
    } else {
        CellOutcome::Succeeded
    }
}

/// One output; `None` for kinds the model cannot show (a rich display with
/// neither an image nor text).
fn read_output(v: &Value) -> Option<Output> {
    match v.get("output_type")?.as_str()? {
        "stream" => Some(Output::Stream {
            name: match v.get("name")?.as_str()? {
                "stderr" => StreamName::Stderr,
                _ => StreamName::Stdout,
            },
            text: multiline(v.get("text"))?.into(),
        }),
        "execute_result" => {
            let data = v.get("data")?;
            let json = data.get("application/json").cloned();
            // A notebook written by another tool may hold only the JSON.
            let text = match (multiline(data.get("text/plain")), &json) {
                // Written by an earlier sessionpad, which stored the JSON text
                // as text/plain: show the Python form (these notebooks are
                // Python's, `kernelspec` python3).
                (Some(text), Some(json))
                    if serde_json::to_string(json).is_ok_and(|j| j == text) =>
                {
                    crate::protocol::python_repr::python_literal(json)
                }
                (Some(text), _) => text,
                (None, Some(json)) => crate::protocol::python_repr::python_literal(json),
                (None, None) => String::new(),
            };
            let execution_count = v
                .get("execution_count")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0);
            Some(Output::ExecuteResult {
                execution_count,
                text,
                json,
            })
        }
        "display_data" | "update_display_data" => {
            let files = v
                .get("metadata")
                .and_then(|m| m.get(super::output::FILES_METADATA))
                .and_then(Value::as_str)
                == Some("files");
            if files {
                let line = multiline(v.get("data")?.get("text/plain"))?;
                return Some(Output::Files {
                    line: line.trim_end().to_string(),
                });
            }
            read_display(v.get("data")?)
        }
        "error" => Some(Output::Error {
            ename: v.get("ename")?.as_str()?.to_string(),
            evalue: v.get("evalue")?.as_str()?.to_string(),
            traceback: v
                .get("traceback")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        }),
        _ => None,
    }
}

/// The first base64 image of a display bundle; else its `text/plain` as stdout.
fn read_display(data: &Value) -> Option<Output> {
    let bundle = data.as_object()?;
    let image = bundle.iter().find_map(|(mime, payload)| {
        let format = mime.strip_prefix("image/")?;
        // SVG is text, not base64; the model only holds raster bytes.
        if format.starts_with("svg") {
            return None;
        }
        let text: String = multiline(Some(payload))?
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let bytes = BASE64.decode(text).ok()?;
        Some(Output::DisplayData {
            format: format.to_string(),
            data: bytes,
        })
    });
    image.or_else(|| {
        Some(Output::Stream {
            name: StreamName::Stdout,
            text: multiline(bundle.get("text/plain"))?.into(),
        })
    })
}

#[cfg(test)]
#[path = "ipynb_tests.rs"]
mod tests;
