//! The wire of the local pool's event stream (`GET /.sessionpad/events`,
//! sessionpad only; see [`crate::events`] for the route, who publishes and
//! the hub that fans events out): the SSE event names and the JSON object
//! each carries.

use serde::{Deserialize, Serialize};

use super::record::Entry;

/// The path of the event stream, below the pool's endpoint. It starts with
/// `/.sessionpad/`, a path the service never uses, so it cannot shadow an
/// Azure route.
pub const ROUTE: &str = "/.sessionpad/events";

/// The query parameter (`others=true`) that leaves out the `call` events of
/// the subscriber's own calls: those recorded with the `User-Agent` its
/// subscription carries.
pub const OTHERS_QUERY: &str = "others";

/// SSE event name of a [`RecordedCall`].
pub const CALL_EVENT: &str = "call";
/// SSE event name of an [`OutputChunk`].
pub const OUTPUT_EVENT: &str = "output";
/// SSE event name of a [`Lagged`] notice.
pub const LAGGED_EVENT: &str = "lagged";

/// A recorded call as the event stream carries it: the ledger's [`Entry`]
/// (what `sessionpad log --json` prints) and the images' bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedCall {
    /// The call as recorded, with its ledger `seq`.
    #[serde(flatten)]
    pub entry: Entry,
    /// The bytes of `entry.images`, base64 (standard alphabet, padded), in the
    /// same order; empty when the call displayed no image.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_data: Vec<String>,
}

/// Which output stream a chunk was printed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamName {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// A piece of a running cell's output (local pool only, see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputChunk {
    /// The session identifier the cell runs in.
    pub identifier: String,
    /// The execution's id (the one its reply will carry).
    pub execution_id: String,
    /// The `User-Agent` of the client that asked for the execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The stream printed on.
    pub stream: StreamName,
    /// The text as the kernel sent it (raw: a reader sanitises it before
    /// showing it).
    pub text: String,
}

/// A subscriber fell behind and missed events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lagged {
    /// How many events it missed.
    pub missed: u64,
}

/// One event of the stream, as a reader gets it.
#[derive(Debug, Clone, PartialEq)]
pub enum PoolEvent {
    /// A call was recorded.
    Call(Box<RecordedCall>),
    /// A running cell printed.
    Output(OutputChunk),
    /// The reader missed events.
    Lagged(Lagged),
}

impl PoolEvent {
    /// The session the event is about (`None` for [`PoolEvent::Lagged`]).
    pub fn identifier(&self) -> Option<&str> {
        match self {
            Self::Call(c) => Some(&c.entry.identifier),
            Self::Output(o) => Some(&o.identifier),
            Self::Lagged(_) => None,
        }
    }

    /// The SSE event name and JSON data of this event.
    ///
    /// # Errors
    ///
    /// `serde_json`'s error (never for these types in practice).
    pub fn to_wire(&self) -> serde_json::Result<(&'static str, String)> {
        Ok(match self {
            Self::Call(c) => (CALL_EVENT, serde_json::to_string(c)?),
            Self::Output(o) => (OUTPUT_EVENT, serde_json::to_string(o)?),
            Self::Lagged(l) => (LAGGED_EVENT, serde_json::to_string(l)?),
        })
    }

    /// Reads an event back from its SSE name and data; `Ok(None)` for an event
    /// name this build does not know (a newer pool's), which a reader skips.
    ///
    /// # Errors
    ///
    /// The data is not the JSON object its name promises.
    pub fn from_wire(name: &str, data: &str) -> serde_json::Result<Option<Self>> {
        Ok(Some(match name {
            CALL_EVENT => Self::Call(Box::new(serde_json::from_str(data)?)),
            OUTPUT_EVENT => Self::Output(serde_json::from_str(data)?),
            LAGGED_EVENT => Self::Lagged(serde_json::from_str(data)?),
            _ => return Ok(None),
        }))
    }
}

/// The [`Entry`] a call written to the ledger as row `seq` reads back as (what
/// `log --json` prints for it), and its images' bytes in base64.
pub fn recorded_call(call: super::record::Call, seq: i64) -> RecordedCall {
    use base64::Engine;
    let engine = base64::engine::general_purpose::STANDARD;
    let super::record::Call {
        pool,
        identifier,
        client,
        at,
        duration,
        kind,
        execution_id,
        code,
        stdin,
        output,
        images,
        file,
        client_gone,
        files,
        files_note,
        network,
    } = call;
    let execution = matches!(
        kind,
        super::record::CallKind::Code | super::record::CallKind::Shell
    );
    let (status, exit_code, stdout, stderr, result) = match output {
        Some(o) => (
            Some(o.status),
            o.exit_code,
            Some(o.stdout.into_string()),
            Some(o.stderr.into_string()),
            o.result,
        ),
        None => (None, None, None, None, None),
    };
    let entry = Entry {
        seq,
        // The ledger keeps milliseconds.
        at: chrono::DateTime::from_timestamp_millis(at.timestamp_millis()).unwrap_or(at),
        duration_ms: i64::try_from(duration.as_micros()).unwrap_or(i64::MAX) as f64 / 1000.0,
        pool,
        identifier,
        client,
        kind,
        execution_id,
        code,
        stdin,
        status,
        exit_code,
        stdout,
        stderr,
        result,
        images: images
            .iter()
            .map(|i| super::record::RecordedImage {
                format: i.format.clone(),
                sha256: super::record::sha256_hex(&i.data),
                size: i.data.len() as u64,
            })
            .collect(),
        file,
        client_gone,
        files: files
            .into_iter()
            .map(|f| super::record::FileChange { data: None, ..f })
            .collect(),
        files_note,
        network: execution.then_some(network),
    };
    RecordedCall {
        entry,
        image_data: images.iter().map(|i| engine.encode(&i.data)).collect(),
    }
}
