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
use super::replay::{Ending, RecordedUpload};
use crate::ledger::read::RecordedSession;
use crate::ledger::{self, Query};
use crate::notebook::language::Language;
use crate::notebook::{Cell, Output};
use crate::protocol::record::FileChange;

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
    /// Per cell, what the flight recorder says of it beside its outputs
    /// (when, how long, what it changed, the uploads before it).
    pub records: Vec<CellRecord>,
    /// The uploads recorded after the last cell (no cell follows them).
    pub uploads_after: Vec<RecordedUpload>,
}

/// What the flight recorder says of one recorded cell beside its outputs
/// (issue 26). Strings are the session's or a client's: untrusted, sanitise
/// before showing them.
#[derive(Debug, Clone, PartialEq)]
pub struct CellRecord {
    /// The call's ledger `seq`.
    pub seq: i64,
    /// The pool key it was recorded under.
    pub pool: String,
    /// The session identifier.
    pub identifier: String,
    /// When the call arrived (UTC).
    pub at: chrono::DateTime<chrono::Utc>,
    /// How long the call took, in milliseconds.
    pub duration_ms: f64,
    /// Nobody received the pool's answer (the client was gone).
    pub client_gone: bool,
    /// The files of `/mnt/data` it changed, in path order.
    pub files: Vec<FileChange>,
    /// What the look at `/mnt/data` after it could not do, if anything.
    pub files_note: Option<String>,
    /// The uploads recorded between the cell before it and this one, in order.
    pub uploads_before: Vec<RecordedUpload>,
    /// How it ended, for a replay to compare with.
    pub ending: Ending,
}

/// The per-cell records of `calls` (the cells' ledger `seq`s) from
/// `entries`, and the uploads after the last cell.
fn records_of(
    entries: &[crate::protocol::record::Entry],
    calls: &[(Option<String>, i64)],
) -> (Vec<CellRecord>, Vec<RecordedUpload>) {
    let mut records = Vec::new();
    let mut uploads = Vec::new();
    let mut next = calls.iter().map(|(_, seq)| *seq).peekable();
    for e in entries {
        if let Some(upload) = RecordedUpload::of_entry(e) {
            uploads.push(upload);
            continue;
        }
        if next.peek() != Some(&e.seq) {
            continue;
        }
        next.next();
        records.push(CellRecord {
            seq: e.seq,
            pool: e.pool.clone(),
            identifier: e.identifier.clone(),
            at: e.at,
            duration_ms: e.duration_ms,
            client_gone: e.client_gone,
            files: e.files.clone(),
            files_note: e.files_note.clone(),
            uploads_before: std::mem::take(&mut uploads),
            ending: Ending::of_entry(e).unwrap_or_else(|| Ending::Other("unknown".into())),
        });
    }
    (records, uploads)
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
            records: Vec::new(),
            uploads_after: Vec::new(),
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
    let (records, uploads_after) = records_of(&entries, &got.calls);
    Ok(RecordedNotebook {
        cells: got.cells,
        calls: got.calls,
        language: got.language,
        images,
        file_calls: got.file_calls,
        missing_images: got.missing_images,
        last_seq,
        records,
        uploads_after,
    })
}

/// How far before the time a notebook says its cell began executing the
/// flight recorder's record of it may say it arrived: the notebook's clock
/// is read when it hears that the cell began, which is after the pool got it
/// (by as much as the UI was busy), on the same machine for a local pool.
pub const RECORD_SLACK: chrono::TimeDelta = chrono::TimeDelta::seconds(5);

/// How far after the notebook was quit its running cell's record may say it
/// arrived: none should (it was running then); a second for the clocks.
const QUIT_SLACK: chrono::TimeDelta = chrono::TimeDelta::seconds(1);

/// Which recorded call to find: the execution of a notebook's cell that was
/// running when the notebook was quit ([`crate::notebook::QuitWhile`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordLookup {
    /// The cell's index in the notebook that asks (handed back as it is).
    pub cell: usize,
    /// The cell's source.
    pub code: String,
    /// The session identifier it ran in.
    pub identifier: String,
    /// Only calls recorded under this pool key; `None`: under any.
    pub pool: Option<String>,
    /// The pool's execution id of it, when the notebook heard it: then the
    /// call is found by it alone.
    pub execution_id: Option<String>,
    /// When it began executing, as the notebook saw it (wall clock, UTC).
    pub started_at: Option<chrono::DateTime<chrono::Utc>>,
    /// When the notebook was quit (wall clock, UTC). Without an execution
    /// id, the call is the last of sessionpad's own (its `User-Agent`) with
    /// this code that arrived between `started_at` (less [`RECORD_SLACK`])
    /// and `quit_at`: the cell ran then, and the notebook runs one cell at a
    /// time, so an earlier run of the same code arrived before it. With
    /// neither time nor id, no call can be told to be it.
    pub quit_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The language code executions are in.
    pub language: Language,
}

/// The recorded call of a cell ([`find_record`]).
#[derive(Debug)]
pub struct FoundRecord {
    /// The call as a finished cell (its outputs, outcome, duration).
    pub cell: Cell,
    /// The call's ledger `seq`.
    pub seq: i64,
    /// The images of its display outputs, decoded, in order.
    pub images: Vec<DecodedImage>,
    /// Nobody received the pool's answer (the notebook was gone).
    pub client_gone: bool,
}

/// The flight recorder's record (in the ledger at `path`) of the execution
/// `lookup` names, as a cell; `None` when the ledger holds none (not yet:
/// the cell may still run; or never: the pool records nothing, the record
/// was pruned, the pool was not a local one).
///
/// # Errors
///
/// A [`FailureKind::Local`] failure naming the file when it cannot be opened
/// or read.
pub fn find_record(path: &Path, lookup: &RecordLookup) -> Result<Option<FoundRecord>, Failure> {
    let fail = |e: &dyn std::fmt::Display| local_failure(path, e);
    if lookup.execution_id.is_none() && lookup.started_at.is_none() && lookup.quit_at.is_none() {
        return Ok(None);
    }
    let Some(conn) = ledger::schema::open_existing(path).map_err(|e| fail(&e))? else {
        return Ok(None);
    };
    let query = Query {
        identifier: Some(lookup.identifier.clone()),
        pool: lookup.pool.clone(),
        since: lookup.started_at.map(|t| t - RECORD_SLACK),
        tail: None,
    };
    let entries = ledger::read::entries(&conn, &query).map_err(|e| fail(&e))?;
    let execution = |e: &crate::protocol::record::Entry| {
        matches!(
            e.kind,
            crate::protocol::record::CallKind::Code | crate::protocol::record::CallKind::Shell
        )
    };
    let found = match &lookup.execution_id {
        Some(id) => entries
            .into_iter()
            .find(|e| execution(e) && e.execution_id.as_ref() == Some(id)),
        None => {
            let until = lookup.quit_at.map(|t| t + QUIT_SLACK);
            let candidates = entries.into_iter().filter(|e| {
                execution(e)
                    && e.code.as_ref() == Some(&lookup.code)
                    && e.client
                        .as_deref()
                        .is_some_and(|c| c.starts_with(OWN_CLIENT_PREFIX))
                    && until.is_none_or(|until| e.at <= until)
            });
            // Before the quit, the last; without its time, the first since
            // the cell began.
            if until.is_some() {
                candidates.last()
            } else {
                candidates.into_iter().next()
            }
        }
    };
    let Some(entry) = found else {
        return Ok(None);
    };
    let (seq, client_gone) = (entry.seq, entry.client_gone);
    let got = crate::notebook::recorded::read(&conn, std::slice::from_ref(&entry), lookup.language)
        .map_err(|e| fail(&e))?;
    let Some(cell) = got.cells.into_iter().next() else {
        return Ok(None);
    };
    let images = decode_images(std::slice::from_ref(&cell))
        .into_iter()
        .map(|(_, decoded)| decoded)
        .collect();
    Ok(Some(FoundRecord {
        cell,
        seq,
        images,
        client_gone,
    }))
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
