//! What the session worker reports: progress and readiness of the pool, the start
//! and end of each execution, and the news of its file and sessions work. It
//! sends them through an [`EventSender`], which hands each [`SessionEvent`] to
//! whoever listens (the notebook's UI task wraps them in its own events; a test
//! or another front end reads them from [`EventSender::channel`]).

use std::fmt;
use std::sync::Arc;

use image::DynamicImage;
use tokio::sync::mpsc;

use super::failure::Failure;
use super::files::FileEvent;
use super::follow::{FollowNews, Followed};
use super::sessions::SessionsEvent;
use crate::protocol::Execution;
use crate::protocol::Isolation;
use crate::protocol::events::OutputChunk;

/// Identifies one requested execution, so that a reply can be matched to the cell
/// that asked for it and a reply nobody waits for is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunId(pub u64);

/// An image of an execution, decoded off the listener's task (or why it could
/// not be decoded).
pub type DecodedImage = Result<DynamicImage, String>;

/// News from the session worker.
#[derive(Debug)]
pub enum SessionEvent {
    /// One line of progress while the embedded pool starts (building its Python
    /// environment on first use).
    PoolProgress(String),
    /// The pool answers: executions can run.
    PoolReady,
    /// The key the flight recorder files the pool's calls under
    /// ([`crate::protocol::record::pool_key_of`]), sent once it is reached.
    PoolKey(String),
    /// The pool could not be started or reached; queued cells will fail with this.
    PoolFailed(Failure),
    /// The background local pool had ended (its idle exit, `sessionpad pool
    /// stop`, a kill) and the worker started or found it again: what to tell
    /// the person (the session's variables and files are gone). Executions can
    /// run, as after [`SessionEvent::PoolReady`].
    PoolRestarted(String),
    /// The pool is a sessionpad local pool, and this is what keeps its sessions
    /// isolated (the embedded pool's own, or a serve's from its `GET metadata`).
    PoolIsolation(Isolation),
    /// The worker began executing this run (earlier runs are done).
    ExecutionStarted(RunId),
    /// Before this run, the recorded uploads a replay asked for were done
    /// again ([`super::SessionWorker::uploads_before`]), in order: each with
    /// its size in bytes, or why it was not redone.
    UploadsRedone {
        /// The run they came before.
        run: RunId,
        /// Each upload and how it went.
        outcomes: Vec<(super::replay::RecordedUpload, Result<u64, String>)>,
    },
    /// The worker has the answer for this run.
    ExecutionFinished {
        /// Which run.
        run: RunId,
        /// The execution, or why there is none (transport, auth, service error).
        outcome: Result<Execution, Failure>,
        /// A shell command's exit code (Shell pools, `aca-api.md` §4.7);
        /// `None` for code.
        exit_code: Option<i32>,
        /// The execution's images decoded, in the order of `Execution::images`.
        images: Vec<DecodedImage>,
    },
    /// This run was not executed: it was queued behind a run that failed
    /// and stops on error ([`super::Cell::stop_on_error`], Jupyter's
    /// `stop_on_error`). Sent right after that run's
    /// [`SessionEvent::ExecutionFinished`]; nothing more names it.
    ExecutionNotRun(RunId),
    /// The worker asked the local pool to interrupt this run.
    InterruptSent {
        /// Which run.
        run: RunId,
        /// The kernel acknowledged the interrupt request.
        delivered: bool,
    },
    /// News of the session's files (listings, file heads, transfers).
    Files(FileEvent),
    /// News of the pool's sessions (listing, details, ending, pool metadata).
    Sessions(SessionsEvent),
    /// Another client's call in the session, as the pool recorded it
    /// (following, [`super::follow`]).
    Followed(Box<Followed>),
    /// A running cell printed (a local pool's event stream): `own` when the
    /// cell is this notebook's.
    LiveOutput {
        /// The cell is this notebook's (its `User-Agent` is this process's).
        own: bool,
        /// The output.
        chunk: OutputChunk,
    },
    /// News of the subscription to the pool's event stream.
    Follow(FollowNews),
}

/// The sending half the worker uses, with one method per kind of news.
///
/// Never waits: the worker sends a handful of events per execution (one whole
/// `Execution`, not a stream of chunks) and must never wait on its listener.
#[derive(Clone)]
pub struct EventSender {
    deliver: Arc<dyn Fn(SessionEvent) + Send + Sync>,
}

impl fmt::Debug for EventSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventSender")
    }
}

impl EventSender {
    /// A sender that hands each event to `deliver`, which must not block (send
    /// it on an unbounded channel, say). A listener that has gone away drops it.
    pub fn new(deliver: impl Fn(SessionEvent) + Send + Sync + 'static) -> Self {
        Self {
            deliver: Arc::new(deliver),
        }
    }

    /// A sender and the receiver its events arrive on (unbounded).
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<SessionEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            // The listener has gone away (it is quitting): nobody is left to tell.
            Self::new(move |event| {
                let _ = tx.send(event);
            }),
            rx,
        )
    }

    fn send(&self, event: SessionEvent) {
        (self.deliver)(event);
    }

    /// Reports one line of pool start-up progress.
    pub fn pool_progress(&self, line: &str) {
        self.send(SessionEvent::PoolProgress(line.to_string()));
    }

    /// Reports the key the ledger files the reached pool's calls under.
    pub fn pool_key(&self, key: String) {
        self.send(SessionEvent::PoolKey(key));
    }

    /// Reports that the pool is ready.
    pub fn pool_ready(&self) {
        self.send(SessionEvent::PoolReady);
    }

    /// Reports that the pool could not be started or reached.
    pub fn pool_failed(&self, reason: Failure) {
        self.send(SessionEvent::PoolFailed(reason));
    }

    /// Reports that the background local pool had ended and was started (or
    /// found) again, with what to tell the person.
    pub fn pool_restarted(&self, message: String) {
        self.send(SessionEvent::PoolRestarted(message));
    }

    /// Reports how the local pool's sessions are isolated.
    pub fn pool_isolation(&self, isolation: Isolation) {
        self.send(SessionEvent::PoolIsolation(isolation));
    }

    /// Reports news of the session's files.
    pub fn files(&self, event: FileEvent) {
        self.send(SessionEvent::Files(event));
    }

    /// Reports news of the pool's sessions.
    pub fn sessions(&self, event: SessionsEvent) {
        self.send(SessionEvent::Sessions(event));
    }

    /// Reports another client's call in the session.
    pub fn followed(&self, followed: Followed) {
        self.send(SessionEvent::Followed(Box::new(followed)));
    }

    /// Reports a running cell's output (`own`: this notebook's cell).
    pub fn live_output(&self, own: bool, chunk: OutputChunk) {
        self.send(SessionEvent::LiveOutput { own, chunk });
    }

    /// Reports news of the event stream's subscription.
    pub fn follow(&self, news: FollowNews) {
        self.send(SessionEvent::Follow(news));
    }

    /// Reports how the uploads redone before `run` went.
    pub fn uploads_redone(
        &self,
        run: RunId,
        outcomes: Vec<(super::replay::RecordedUpload, Result<u64, String>)>,
    ) {
        self.send(SessionEvent::UploadsRedone { run, outcomes });
    }

    /// Reports that `run` is now executing.
    pub fn execution_started(&self, run: RunId) {
        self.send(SessionEvent::ExecutionStarted(run));
    }

    /// Reports that `run` was not executed (an earlier run failed and stops
    /// on error).
    pub fn execution_not_run(&self, run: RunId) {
        self.send(SessionEvent::ExecutionNotRun(run));
    }

    /// Reports that an interrupt of `run` was sent (and whether the kernel
    /// acknowledged it).
    pub fn interrupt_sent(&self, run: RunId, delivered: bool) {
        self.send(SessionEvent::InterruptSent { run, delivered });
    }

    /// Reports the outcome of `run` (with a shell command's exit code).
    pub fn execution_finished(
        &self,
        run: RunId,
        outcome: Result<Execution, Failure>,
        exit_code: Option<i32>,
        images: Vec<DecodedImage>,
    ) {
        self.send(SessionEvent::ExecutionFinished {
            run,
            outcome,
            exit_code,
            images,
        });
    }
}
