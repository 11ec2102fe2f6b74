//! Replaying a recorded session (issue 13, issue 26), the part the command
//! line (`sessionpad replay ID`) and the notebook share: which recorded
//! uploads come before each cell, redoing one from the bytes the flight
//! recorder's ledger kept, how a cell ended (to compare with how it ended when
//! recorded) and the summary of a replay. Knows nothing of the terminal; the
//! upload reads the ledger (a blocking read, off the async threads) and calls
//! the pool through the session client.

use std::fmt;
use std::path::Path;

use crate::client::SessionClient;
use crate::notebook::{Cell, CellOutcome};
use crate::protocol::ExecutionStatus;
use crate::protocol::record::{CallKind, Entry};

/// A recorded upload to redo: the file the pool stored, found in the ledger
/// by its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedUpload {
    /// The path below `/mnt/data` as the pool resolved it (`input.csv`,
    /// `sub/x.csv`); untrusted text: sanitise before showing it.
    pub name: String,
    /// The bytes' SHA-256, lowercase hex; `None` when the upload did not
    /// complete (then there is nothing to redo).
    pub sha256: Option<String>,
    /// Its size in bytes, as recorded (0 when not recorded).
    pub size: u64,
}

impl RecordedUpload {
    /// The upload recorded by `e`; `None` when `e` is not an upload.
    pub fn of_entry(e: &Entry) -> Option<Self> {
        if e.kind != CallKind::Upload {
            return None;
        }
        let file = e.file.as_ref();
        Some(Self {
            name: file.map(|f| f.name.clone()).unwrap_or_default(),
            sha256: file.and_then(|f| f.sha256.clone()),
            size: file.and_then(|f| f.size).unwrap_or(0),
        })
    }
}

/// A recorded session to replay in a notebook: its cells, each with the
/// uploads recorded before it and how it ended when recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayPlan {
    /// The recorded session's identifier (untrusted text).
    pub source: String,
    /// The cells, in order.
    pub cells: Vec<PlannedCell>,
    /// Uploads recorded after the last cell: redone once the last cell has
    /// run ([`super::SessionWorker::uploads_around`]).
    pub uploads_after: Vec<RecordedUpload>,
    /// The cells are shell commands (compared by exit code).
    pub shell: bool,
}

/// One cell of a [`ReplayPlan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedCell {
    /// Its source and standard input.
    pub input: crate::notebook::CellInput,
    /// The uploads to redo just before it, in order.
    pub uploads: Vec<RecordedUpload>,
    /// How it ended when recorded.
    pub recorded: Ending,
}

/// Uploads `upload` again into session `identifier` through `client`, from
/// the bytes the ledger at `ledger` kept of it; returns their size in bytes.
///
/// # Errors
///
/// What to tell the user, one line: the upload did not complete when
/// recorded, the ledger did not keep the bytes (too big, dropped, recorded
/// before the ledger kept files, pruned) or they do not match the recorded
/// SHA-256, the ledger cannot be read, or the pool refused the upload.
pub async fn redo_upload(
    client: &SessionClient,
    identifier: &str,
    ledger: &Path,
    upload: &RecordedUpload,
) -> Result<u64, String> {
    let Some(sha) = upload.sha256.clone() else {
        return Err("the recorded upload did not complete (no sha256)".into());
    };
    let path = ledger.to_path_buf();
    let bytes = tokio::task::spawn_blocking(move || upload_bytes(&path, &sha))
        .await
        .map_err(|e| e.to_string())??;
    let mut tmp = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    std::io::Write::write_all(&mut tmp, &bytes).map_err(|e| e.to_string())?;
    // `sub/x.csv`: the file `x.csv` in the folder `sub` of /mnt/data.
    let (folder, name) = match upload.name.rsplit_once('/') {
        Some((folder, name)) => (Some(folder), name),
        None => (None, upload.name.as_str()),
    };
    client
        .upload_file(identifier, tmp.path(), name, folder, &|_, _| {})
        .await
        .map_err(|e| e.to_string())?;
    Ok(bytes.len() as u64)
}

/// The bytes with SHA-256 `sha` from the ledger at `path`, checked.
fn upload_bytes(path: &Path, sha: &str) -> Result<Vec<u8>, String> {
    let read = |e: &dyn fmt::Display| format!("cannot read the ledger {}: {e}", path.display());
    let conn = crate::ledger::schema::open_existing(path)
        .map_err(|e| read(&e))?
        .ok_or_else(|| format!("no ledger at {}", path.display()))?;
    let bytes = crate::ledger::read::file_content(&conn, sha)
        .map_err(|e| read(&e))?
        .ok_or_else(|| format!("the ledger did not keep its bytes (sha256 {sha})"))?;
    if crate::protocol::record::sha256_hex(&bytes) != sha {
        return Err(format!(
            "the ledger's bytes do not match the recorded sha256 {sha}"
        ));
    }
    Ok(bytes)
}

/// How a cell ended, as a replay compares it with the recording: the
/// execution's status for code, the exit code for a shell command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Code: how the execution ended.
    Status(ExecutionStatus),
    /// No status was recorded (said in these words).
    Other(String),
    /// A shell command: its exit code (`None`: it did not finish).
    Exit(Option<i32>),
}

impl Ending {
    /// How recorded call `e` ended (`None` for a call that is no execution).
    pub fn of_entry(e: &Entry) -> Option<Self> {
        match e.kind {
            CallKind::Shell => Some(Self::Exit(e.exit_code)),
            CallKind::Code => Some(match e.status.as_deref() {
                Some(s) => Self::Status(ExecutionStatus::from_wire(s)),
                None => Self::Other("unknown".into()),
            }),
            _ => None,
        }
    }

    /// How a settled notebook cell ended (`shell`: it is a shell command);
    /// `None` while it has not.
    pub fn of_cell(cell: &Cell, shell: bool) -> Option<Self> {
        if shell {
            return cell.outcome.map(|_| Self::Exit(cell.exit_code));
        }
        Some(Self::Status(match cell.outcome? {
            CellOutcome::Succeeded => ExecutionStatus::Succeeded,
            CellOutcome::Canceled => ExecutionStatus::Canceled,
            CellOutcome::Failed | CellOutcome::Unknown | CellOutcome::NotRun => {
                ExecutionStatus::Failed
            }
        }))
    }
}

impl fmt::Display for Ending {
    /// `Succeeded`, `Failed`, `Canceled`, `exit 3`, `no exit code`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status(s) => write!(f, "{s:?}"),
            Self::Other(s) => f.write_str(&crate::text::sanitize::plain(s)),
            Self::Exit(Some(c)) => write!(f, "exit {c}"),
            Self::Exit(None) => f.write_str("no exit code"),
        }
    }
}

/// What a replay came to: its cells against their recording and the
/// uploads not redone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Cells that ended as recorded.
    pub as_recorded: usize,
    /// Cells that ended otherwise.
    pub differ: usize,
    /// Recorded uploads not redone (their bytes not kept, refused, or after
    /// the last cell where the notebook has no place for them).
    pub uploads_not_redone: usize,
}

impl Tally {
    /// Counts one cell: `then` as recorded, `now` as replayed.
    pub fn cell(&mut self, then: &Ending, now: &Ending) {
        if then == now {
            self.as_recorded += 1;
        } else {
            self.differ += 1;
        }
    }

    /// Whether everything ended as recorded and every upload was redone.
    pub fn all_as_recorded(&self) -> bool {
        self.differ == 0 && self.uploads_not_redone == 0
    }
}

impl fmt::Display for Tally {
    /// `3 as recorded, 1 differ (1 upload not redone)`; the parenthesis only
    /// when an upload was not redone.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} as recorded, {} differ",
            self.as_recorded, self.differ
        )?;
        match self.uploads_not_redone {
            0 => Ok(()),
            1 => f.write_str(" (1 upload not redone)"),
            n => write!(f, " ({n} uploads not redone)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_cells_and_uploads_not_redone() {
        let mut t = Tally::default();
        let ok = Ending::Status(ExecutionStatus::Succeeded);
        t.cell(&ok, &ok);
        t.cell(&ok, &Ending::Status(ExecutionStatus::Failed));
        assert_eq!(t.to_string(), "1 as recorded, 1 differ");
        t.uploads_not_redone = 2;
        assert_eq!(
            t.to_string(),
            "1 as recorded, 1 differ (2 uploads not redone)"
        );
        assert!(!t.all_as_recorded());
    }

    #[test]
    fn a_shell_command_is_compared_by_its_exit_code() {
        let mut cell = Cell {
            source: "false".into(),
            execution_count: 1,
            outputs: Vec::new(),
            outcome: Some(CellOutcome::Failed),
            duration: None,
            exit_code: Some(1),
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        };
        assert_eq!(Ending::of_cell(&cell, true), Some(Ending::Exit(Some(1))));
        assert_eq!(
            Ending::of_cell(&cell, false),
            Some(Ending::Status(ExecutionStatus::Failed))
        );
        cell.outcome = None;
        assert_eq!(Ending::of_cell(&cell, true), None);
        assert_eq!(Ending::Exit(Some(2)).to_string(), "exit 2");
    }
}
