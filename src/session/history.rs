//! The flight recorder's history for a front end (issue 13): the sessions
//! this user's ledger holds calls of, and one recorded session's calls as
//! notebook cells with their images decoded. The sessions pane lists the
//! first, opens the second read-only, exports and replays it; following reads
//! the calls an agent made before following began. Everything here reads a
//! local SQLite file and decodes images, so the session worker runs it on a
//! blocking thread. Knows nothing of the terminal.

use std::path::Path;

use super::event::DecodedImage;
use super::failure::{Failure, FailureKind};
use crate::ledger::read::RecordedSession;
use crate::ledger::{self, Query};
use crate::notebook::language::Language;
use crate::notebook::{Cell, Output};

/// How many recorded sessions the sessions pane lists: the most recently
/// active ones.
pub const LIST_LIMIT: usize = 500;

/// The prefix of sessionpad's own `User-Agent` ([`crate::client::user_agent`]):
/// the calls of a notebook or a CLI command, never an agent's.
pub const OWN_CLIENT_PREFIX: &str = "sessionpad/";

/// Which calls of a recorded session to read as cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// The session identifier.
    pub identifier: String,
    /// Only calls recorded under this pool key (`local`, or an endpoint
    /// without its trailing `/`); `None`: under any pool key.
    pub pool: Option<String>,
    /// The language code executions are in: the ledger does not say whether a
    /// pool ran Python or JavaScript (shell commands are always Shell).
    pub language: Language,
    /// Only calls with a ledger `seq` above this one (`None`: all).
    pub after: Option<i64>,
    /// Leave out the calls of sessionpad itself (clients named
    /// [`OWN_CLIENT_PREFIX`]…): what following catches up on is the agent's.
    pub others_only: bool,
}

/// A recorded session read as cells ([`open`]).
#[derive(Debug)]
pub struct RecordedNotebook {
    /// One finished cell per recorded execution, oldest first.
    pub cells: Vec<Cell>,
    /// Per cell: the client that ran it (its `User-Agent` as recorded:
    /// untrusted text) and the call's ledger `seq`.
    pub calls: Vec<(Option<String>, i64)>,
    /// The cells' language: Shell when the calls were shell commands.
    pub language: Language,
    /// The images of `DisplayData` outputs, decoded: ((cell, output index),
    /// image), in order.
    pub images: Vec<((usize, usize), DecodedImage)>,
    /// File calls (uploads, downloads, deletes) in the range read: not cells.
    pub file_calls: usize,
    /// Images the ledger no longer held (pruned): left out.
    pub missing_images: usize,
    /// The highest ledger `seq` read (`None`: no call).
    pub last_seq: Option<i64>,
}

fn local_failure(path: &Path, e: impl std::fmt::Display) -> Failure {
    Failure::new(
        FailureKind::Local,
        format!("cannot read the ledger {}: {e}", path.display()),
    )
}

/// The recorded sessions in the ledger at `path`, most recently active
/// first, at most `limit`; none when nothing was ever recorded (no file).
///
/// # Errors
///
/// A [`FailureKind::Local`] failure naming the file when it cannot be opened
/// or read (not SQLite, a newer schema, unreadable).
pub fn list(path: &Path, limit: usize) -> Result<Vec<RecordedSession>, Failure> {
    let Some(conn) = ledger::schema::open_existing(path).map_err(|e| local_failure(path, e))?
    else {
        return Ok(Vec::new());
    };
    ledger::read::sessions(&conn, limit).map_err(|e| local_failure(path, e))
}

/// The calls `request` names, from the ledger at `path`, as cells
/// ([`crate::notebook::recorded::cells`]) with their images decoded; no
/// cells when nothing matches (or nothing was ever recorded).
///
/// # Errors
///
/// A [`FailureKind::Local`] failure naming the file when it cannot be opened
/// or read.
pub fn open(path: &Path, request: &RecordedRequest) -> Result<RecordedNotebook, Failure> {
    let fail = |e: &dyn std::fmt::Display| local_failure(path, e);
    let Some(conn) = ledger::schema::open_existing(path).map_err(|e| fail(&e))? else {
        return Ok(RecordedNotebook {
            cells: Vec::new(),
            calls: Vec::new(),
            language: request.language,
            images: Vec::new(),
            file_calls: 0,
            missing_images: 0,
            last_seq: None,
        });
    };
    let query = Query {
        identifier: Some(request.identifier.clone()),
        ..Query::default()
    };
    let mut entries = ledger::read::entries(&conn, &query).map_err(|e| fail(&e))?;
    entries.retain(|e| {
        request.pool.as_ref().is_none_or(|p| *p == e.pool)
            && request.after.is_none_or(|after| e.seq > after)
            && !(request.others_only
                && e.client
                    .as_deref()
                    .is_some_and(|c| c.starts_with(OWN_CLIENT_PREFIX)))
    });
    let last_seq = entries.iter().map(|e| e.seq).max();
    let got =
        crate::notebook::recorded::read(&conn, &entries, request.language).map_err(|e| fail(&e))?;
    let images = decode_images(&got.cells);
    Ok(RecordedNotebook {
        cells: got.cells,
        calls: got.calls,
        language: got.language,
        images,
        file_calls: got.file_calls,
        missing_images: got.missing_images,
        last_seq,
    })
}

/// The images of `cells`' display outputs, decoded, keyed by (cell, output).
pub fn decode_images(cells: &[Cell]) -> Vec<((usize, usize), DecodedImage)> {
    let mut images = Vec::new();
    for (cell, c) in cells.iter().enumerate() {
        for (output, o) in c.outputs.iter().enumerate() {
            if let Output::DisplayData { data, .. } = o {
                let decoded =
                    image::load_from_memory(data).map_err(|e| format!("cannot decode: {e}"));
                images.push(((cell, output), decoded));
            }
        }
    }
    images
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
