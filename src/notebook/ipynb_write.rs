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

use super::ipynb::NotebookMeta;
use super::{Cell, CellOutcome, Output, StreamName};

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
    /// The view of `cells` with `meta`.
    pub(super) fn new(cells: &'a [Cell], meta: &'a NotebookMeta) -> Self {
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
                sessionpad: Ours {
                    duration_ms: cell
                        .duration
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                    exit_code: cell.exit_code,
                    status: status_name(cell.outcome),
                    stdin: cell.stdin.as_deref(),
                },
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

/// What the model has and nbformat does not, in `metadata.sessionpad`.
#[derive(Serialize)]
struct Ours<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    stdin: Option<&'a str>,
}

/// The `status` written for a cell's outcome. A cell not settled yet (sent,
/// no answer) is written `queued`, as every unsettled cell was before the
/// model stopped keeping queued and running apart; reading takes it (and an
/// older file's `running`) as failed, since its answer never came.
pub(super) fn status_name(outcome: Option<CellOutcome>) -> &'static str {
    match outcome {
        None => "queued",
        Some(CellOutcome::Succeeded) => "succeeded",
        Some(CellOutcome::Failed) => "failed",
        Some(CellOutcome::Canceled) => "canceled",
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
