//! The session worker's work on the pool's sessions, beside its executions: list
//! them, read one's details, end one (`DELETE session`, `aca-api.md` §4.4) and
//! read the pool's metadata; and the flight recorder's history of sessions
//! and of the cells a notebook was quit while they ran ([`super::history`]:
//! this user's ledger, read on a blocking thread). Each
//! command runs on a task of its own, so a slow listing never holds up another
//! command.

use super::event::EventSender;
use super::failure::Failure;
use super::history::{self, FoundRecord, RecordLookup, RecordedNotebook, RecordedRequest};
use super::recorded_files::{self, RecordedFileRead, RecordedFileRequest, SaveRecordedFile, Saved};
use crate::client::SessionClient;
use crate::ledger::read::RecordedSession;
use crate::protocol::{PoolMetadata, SessionInfo};

/// What a front end asks of the pool's sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionsCommand {
    /// List the pool's sessions.
    List,
    /// The details of a session.
    Info {
        /// Which one (its session identifier).
        identifier: String,
    },
    /// End a session (`DELETE session`).
    End {
        /// Which one.
        identifier: String,
    },
    /// The pool's metadata (runtimes, packages, kernel).
    PoolInfo,
    /// The pool's card: its ARM resource, when it is an Azure session pool
    /// (answered only then, [`SessionsEvent::PoolCard`]).
    PoolCard,
    /// The sessions this user's ledger recorded calls of (the flight
    /// recorder's history), most recently active first.
    Recorded,
    /// One recorded session's calls as cells.
    OpenRecorded(RecordedRequest),
    /// The flight recorder's record of the execution of a cell that was
    /// running when the notebook was quit.
    FindRecord(RecordLookup),
    /// The bytes (and diff) of a file version a recorded cell left.
    ReadRecordedFile(RecordedFileRequest),
    /// Save a file version a recorded cell left into a local folder.
    SaveRecordedFile(SaveRecordedFile),
    /// Tab completion from the session's kernel (the local pool's
    /// `/.sessionpad/complete`).
    Complete(CompletionRequest),
}

/// What a Tab completion asks ([`SessionsCommand::Complete`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    /// The session whose kernel completes.
    pub identifier: String,
    /// The cell's text.
    pub code: String,
    /// The cursor in `code`, Unicode code points.
    pub cursor: usize,
    /// The asker's number for this request, handed back so an answer for text
    /// that has since changed can be dropped.
    pub ticket: u64,
}

/// What the sessions work reports.
#[derive(Debug)]
pub enum SessionsEvent {
    /// The pool's list of sessions ([`SessionsCommand::List`]).
    Listed(Result<Vec<SessionInfo>, Failure>),
    /// The details of one session ([`SessionsCommand::Info`], and after each
    /// cell for the session cells run in).
    Info {
        /// Which one.
        identifier: String,
        /// Its details, or why there are none (`FailureKind::NotFound`: the
        /// session does not exist, or no longer).
        result: Result<SessionInfo, Failure>,
    },
    /// A session was ended (or not).
    Ended {
        /// Which one.
        identifier: String,
        /// What to tell the user (the pool's own words for stopSession), or
        /// why it failed.
        result: Result<String, Failure>,
    },
    /// The pool's metadata.
    PoolInfo(Result<PoolMetadata, Failure>),
    /// The pool's ARM resource ([`SessionsCommand::PoolCard`]), or the
    /// words of why ARM gave none (a 403 names the missing role).
    PoolCard(Result<Box<crate::client::arm::SessionPoolResource>, String>),
    /// The recorded sessions ([`SessionsCommand::Recorded`]), at most
    /// [`history::LIST_LIMIT`].
    Recorded(Result<Vec<RecordedSession>, Failure>),
    /// A recorded session's calls ([`SessionsCommand::OpenRecorded`]).
    OpenedRecorded {
        /// What was asked.
        request: RecordedRequest,
        /// The cells, or why the ledger could not be read.
        result: Result<Box<RecordedNotebook>, Failure>,
    },
    /// The record of a cell's execution ([`SessionsCommand::FindRecord`]).
    FoundRecord {
        /// What was asked.
        lookup: RecordLookup,
        /// The record (`None`: the ledger holds none), or why the ledger
        /// could not be read.
        result: Result<Option<Box<FoundRecord>>, Failure>,
    },
    /// A recorded file version read ([`SessionsCommand::ReadRecordedFile`]).
    RecordedFileRead {
        /// What was asked.
        request: RecordedFileRequest,
        /// Its bytes and diff, or why the ledger could not be read.
        result: Result<Box<RecordedFileRead>, Failure>,
    },
    /// The kernel's completions ([`SessionsCommand::Complete`]).
    Completed {
        /// What was asked.
        request: CompletionRequest,
        /// The candidates; `Ok(None)` when the pool has no completion (the
        /// service, or a Shell or NodeLTS pool); or why the call failed.
        result: Result<Option<crate::protocol::Completion>, Failure>,
    },
    /// A recorded file version saved, or not
    /// ([`SessionsCommand::SaveRecordedFile`]).
    RecordedFileSaved {
        /// What was asked.
        request: SaveRecordedFile,
        /// How it went.
        saved: Saved,
    },
}

/// Carries out `command` with `client` and reports its outcome through `events`.
pub(super) async fn perform(
    client: &SessionClient,
    command: SessionsCommand,
    events: &EventSender,
) {
    let event = match command {
        SessionsCommand::List => {
            SessionsEvent::Listed(client.pool_sessions().await.map_err(Failure::from))
        }
        SessionsCommand::Info { identifier } => info(client, identifier).await,
        SessionsCommand::End { identifier } => {
            let result = client.end_session(&identifier).await.map_err(Failure::from);
            SessionsEvent::Ended { identifier, result }
        }
        SessionsCommand::PoolInfo => {
            SessionsEvent::PoolInfo(client.pool_metadata().await.map_err(Failure::from))
        }
        SessionsCommand::PoolCard => match client.pool_resource().await {
            Some(result) => SessionsEvent::PoolCard(result.map(Box::new)),
            None => return,
        },
        SessionsCommand::Recorded => SessionsEvent::Recorded(
            blocking(|| history::list(&crate::ledger::default_path(), history::LIST_LIMIT)).await,
        ),
        SessionsCommand::OpenRecorded(request) => {
            let asked = request.clone();
            let result = blocking(move || {
                history::open(&crate::ledger::default_path(), &asked).map(Box::new)
            })
            .await;
            SessionsEvent::OpenedRecorded { request, result }
        }
        SessionsCommand::FindRecord(lookup) => {
            let asked = lookup.clone();
            let result = blocking(move || {
                history::find_record(&crate::ledger::default_path(), &asked)
                    .map(|found| found.map(Box::new))
            })
            .await;
            SessionsEvent::FoundRecord { lookup, result }
        }
        SessionsCommand::ReadRecordedFile(request) => {
            let asked = request.clone();
            let result = blocking(move || {
                recorded_files::read(&crate::ledger::default_path(), &asked).map(Box::new)
            })
            .await;
            SessionsEvent::RecordedFileRead { request, result }
        }
        SessionsCommand::Complete(request) => {
            let result = match client
                .complete(&request.identifier, &request.code, request.cursor)
                .await
            {
                Ok(found) => Ok(Some(found)),
                Err(crate::client::ClientError::NoCompletion) => Ok(None),
                Err(e) => Err(Failure::from(e)),
            };
            SessionsEvent::Completed { request, result }
        }
        SessionsCommand::SaveRecordedFile(request) => {
            let asked = request.clone();
            let saved =
                blocking(move || Ok(recorded_files::save(&crate::ledger::default_path(), &asked)))
                    .await
                    .unwrap_or_else(|e| Saved::Failed(e.message));
            SessionsEvent::RecordedFileSaved { request, saved }
        }
    };
    events.sessions(event);
}

/// Runs `read` (the ledger's work) on a blocking thread.
async fn blocking<T: Send + 'static>(
    read: impl FnOnce() -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    tokio::task::spawn_blocking(read)
        .await
        .unwrap_or_else(|e| Err(Failure::new(super::FailureKind::Local, e.to_string())))
}

/// The details of session `identifier`, as the event that reports them.
pub(super) async fn info(client: &SessionClient, identifier: String) -> SessionsEvent {
    let result = client
        .pool_session(&identifier)
        .await
        .map_err(Failure::from);
    SessionsEvent::Info { identifier, result }
}

/// Starts the task that takes sessions commands until `commands` closes (or
/// the task is aborted), each sent through the client `client` holds then (it
/// changes when a background pool is started again).
pub(super) fn spawn(
    client: tokio::sync::watch::Receiver<SessionClient>,
    mut commands: tokio::sync::mpsc::UnboundedReceiver<SessionsCommand>,
    events: EventSender,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(command) = commands.recv().await {
            let client = client.borrow().clone();
            let events = events.clone();
            tokio::spawn(async move { perform(&client, command, &events).await });
        }
    })
}
