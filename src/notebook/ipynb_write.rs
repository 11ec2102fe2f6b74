//! Writing a notebook as nbformat v4.5 JSON without building a JSON tree:
//! borrowed views of the cells that serde serializes straight into the text,
//! each multiline string written as nbformat's list of lines, sliced from the
//! cell's own text. A cell that printed a million lines costs the text written
//! and nothing per line (a `serde_json::Value` tree of them held a `String` and
//! a `Value` per line: about ten times the output).
//!
//! Fields are declared in sorted order, so the text is laid out as Jupyter
//! writes it (sorted keys); [`super::ipynb::to_value`] is this same view as a
//! `Value`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::ipynb::{NOT_RUN, NotebookMeta, QUEUED_WHEN_QUIT, RUNNING_WHEN_QUIT};
use super::{Cell, CellOutcome, Output, StreamName, Waiting};

/// The `nbformat_minor` written: 4.5 is the first with cell ids.
pub(super) const NBFORMAT_MINOR: u64 = 5;

/// The whole notebook.
#[derive(Serialize)]
pub(super) struct Doc<'a> {
    cells: Vec<CellOut<'a>>,
    metadata: DocMeta<'a>,
    nbformat: u64,
    nbformat_minor: u64,
}

impl<'a> Doc<'a> {
    /// The view of `cells` with `meta`, and `draft`, the text typed in the
    /// editor and not run when the notebook was quit.
    pub(super) fn new(cells: &'a [Cell], meta: &'a NotebookMeta, draft: Option<&'a str>) -> Self {
        Self {
            cells: cells
                .iter()
                .enumerate()
                .map(|(i, c)| CellOut::new(i, c))
                .collect(),
            metadata: DocMeta {
                kernelspec: meta.language.kernelspec(),
                language_info: meta.language.language_info(),
                sessionpad: Where {
                    api_version: &meta.api_version,
                    draft,
                    identifier: &meta.identifier,
                    pool: &meta.pool,
                },
            },
            nbformat: 4,
            nbformat_minor: NBFORMAT_MINOR,
        }
    }
}

#[derive(Serialize)]
struct DocMeta<'a> {
    kernelspec: Value,
    language_info: Value,
    sessionpad: Where<'a>,
}

#[derive(Serialize)]
struct Where<'a> {
    api_version: &'a str,
    /// The text typed in the editor and not run when the notebook was quit,
    /// given back to the editor when it is opened again.
    #[serde(skip_serializing_if = "Option::is_none")]
    draft: Option<&'a str>,
    identifier: &'a str,
    pool: &'a str,
}

#[derive(Serialize)]
struct CellOut<'a> {
    cell_type: &'static str,
    execution_count: u32,
    // Cells are only ever appended, so the position is a stable, unique id.
    id: String,
    metadata: CellMeta<'a>,
    outputs: Vec<OutputOut<'a>>,
    source: Lines<'a>,
}

impl<'a> CellOut<'a> {
    fn new(index: usize, cell: &'a Cell) -> Self {
        Self {
            cell_type: "code",
            execution_count: cell.execution_count,
            id: format!("cell-{}", index + 1),
            metadata: CellMeta {
                sessionpad: Ours::new(cell),
            },
            outputs: cell.outputs.iter().map(OutputOut).collect(),
            source: Lines(&cell.source),
        }
    }
}

#[derive(Serialize)]
struct CellMeta<'a> {
    sessionpad: Ours<'a>,
}

/// What the model has and nbformat does not, in `metadata.sessionpad`: for
/// a cell the notebook was quit while it waited, where it was (`quit_while`:
/// `queued` or `running`) and what identifies its execution (the session
/// `identifier`, the flight recorder's `pool` key, the `execution_id`, when
/// it `started_at` and when the notebook was quit, `quit_at`), and once the
/// flight recorder's record filled it in, that
/// record's `recorded_seq`; the `output_streams_max_length` it was run with,
/// if it asked for one; the `network` attempts of its execution through a
/// local pool's egress proxy, if any.
#[derive(Serialize)]
struct Ours<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    execution_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    identifier: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    network: &'a [crate::protocol::egress::NetworkAttempt],
    #[serde(skip_serializing_if = "Option::is_none")]
    output_streams_max_length: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    quit_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    quit_while: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded_seq: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    started_at: Option<String>,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    stdin: Option<&'a str>,
}

impl<'a> Ours<'a> {
    fn new(cell: &'a Cell) -> Self {
        let quit = cell.quit_while.as_deref();
        Self {
            duration_ms: cell
                .duration
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            execution_id: quit.and_then(|q| q.execution_id.as_deref()),
            exit_code: cell.exit_code,
            identifier: quit.map(|q| q.identifier.as_str()),
            network: &cell.network,
            output_streams_max_length: cell.output_streams_max_length,
            pool: quit.and_then(|q| q.pool.as_deref()),
            quit_at: quit.and_then(|q| q.quit_at).map(rfc3339),
            quit_while: quit.map(|q| waiting_name(q.was)),
            recorded_seq: quit.and_then(|q| q.recorded_seq),
            started_at: quit.and_then(|q| q.started_at).map(rfc3339),
            status: status_name(cell.outcome, quit.map(|q| q.was)),
            stdin: cell.stdin.as_deref(),
        }
    }
}

/// A time as written in the notebook: RFC 3339, UTC, milliseconds.
fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The `quit_while` written for where a cell was when the notebook was quit.
pub(super) fn waiting_name(was: Waiting) -> &'static str {
    match was {
        Waiting::Queued => "queued",
        Waiting::Running => "running",
    }
}

/// The `status` written for a cell's outcome. A cell not settled yet (sent,
/// no answer) is written `queued`, as every unsettled cell was before the
/// model stopped keeping queued and running apart; reading takes it (and an
/// older file's `running`) as failed, since its answer never came. A cell
/// the notebook was quit while it waited (`quit`) is written
/// [`RUNNING_WHEN_QUIT`] or [`QUEUED_WHEN_QUIT`], and read back as such.
pub(super) fn status_name(outcome: Option<CellOutcome>, quit: Option<Waiting>) -> &'static str {
    match (outcome, quit) {
        (None, _) => "queued",
        (Some(CellOutcome::Succeeded), _) => "succeeded",
        (Some(CellOutcome::Failed), _) => "failed",
        (Some(CellOutcome::Canceled), _) => "canceled",
        (Some(CellOutcome::NotRun), _) => NOT_RUN,
        (Some(CellOutcome::Unknown), Some(Waiting::Queued)) => QUEUED_WHEN_QUIT,
        (Some(CellOutcome::Unknown), _) => RUNNING_WHEN_QUIT,
    }
}

/// A multiline string as nbformat's list of lines, each with its `\n`.
struct Lines<'a>(&'a str);

impl Serialize for Lines<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for line in self.0.split_inclusive('\n') {
            seq.serialize_element(line)?;
        }
        seq.end()
    }
}

/// An empty object (`"metadata": {}`).
struct Empty;

impl Serialize for Empty {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_map(Some(0))?.end()
    }
}

/// One output, as its nbformat `output_type`.
struct OutputOut<'a>(&'a Output);

impl Serialize for OutputOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Output::Stream { name, text } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry(
                    "name",
                    match name {
                        StreamName::Stdout => "stdout",
                        StreamName::Stderr => "stderr",
                    },
                )?;
                m.serialize_entry("output_type", "stream")?;
                m.serialize_entry("text", &Lines(text))?;
                m.end()
            }
            Output::ExecuteResult {
                execution_count,
                text,
                json,
            } => {
                let mut m = s.serialize_map(Some(4))?;
                m.serialize_entry(
                    "data",
                    &ResultData {
                        json: json.as_ref(),
                        text: Lines(text),
                    },
                )?;
                m.serialize_entry("execution_count", execution_count)?;
                m.serialize_entry("metadata", &Empty)?;
                m.serialize_entry("output_type", "execute_result")?;
                m.end()
            }
            Output::DisplayData { format, data } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("data", &Image { format, data })?;
                m.serialize_entry("metadata", &Empty)?;
                m.serialize_entry("output_type", "display_data")?;
                m.end()
            }
            Output::Files { line } => {
                // A display line other tools show as text; the metadata tells
                // sessionpad it is the cell's files line.
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("data", &serde_json::json!({ "text/plain": [line] }))?;
                m.serialize_entry(
                    "metadata",
                    &serde_json::json!({ super::output::FILES_METADATA: "files" }),
                )?;
                m.serialize_entry("output_type", "display_data")?;
                m.end()
            }
            Output::Error {
                ename,
                evalue,
                traceback,
            } => {
                let mut m = s.serialize_map(Some(4))?;
                m.serialize_entry("ename", ename)?;
                m.serialize_entry("evalue", evalue)?;
                m.serialize_entry("output_type", "error")?;
                m.serialize_entry("traceback", traceback)?;
                m.end()
            }
        }
    }
}

/// An `execute_result`'s `data`: `application/json` when the value has one,
/// and `text/plain`.
#[derive(Serialize)]
struct ResultData<'a> {
    #[serde(rename = "application/json", skip_serializing_if = "Option::is_none")]
    json: Option<&'a Value>,
    #[serde(rename = "text/plain")]
    text: Lines<'a>,
}

/// A `display_data`'s `data`: `image/<format>` with the base64 of the bytes.
struct Image<'a> {
    format: &'a str,
    data: &'a [u8],
}

impl Serialize for Image<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(&format!("image/{}", self.format), &BASE64.encode(self.data))?;
        m.end()
    }
}
