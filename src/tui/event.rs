//! Things that happened outside the UI task and that it must hear about: progress
//! and readiness of the pool, and the start and end of each execution. The session
//! worker sends them through an [`AppEventSender`]; the UI task owns the receiver.
//!
//! Terminal input does not travel here: the UI task reads it from crossterm's
//! `EventStream` itself.

use image::DynamicImage;
use tokio::sync::mpsc;

use super::ui::image::Encoded;
use super::worker_files::FilesEvent;
use crate::client::Execution;
use crate::pool::Isolation;

/// Identifies one requested execution, so that a reply can be matched to the cell
/// that asked for it and a reply nobody waits for is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunId(pub u64);

/// An image of an execution, decoded off the UI task (or why it could not be).
pub type DecodedImage = Result<DynamicImage, String>;

/// An event for the UI task.
#[derive(Debug)]
pub enum AppEvent {
    /// One line of progress while the embedded pool starts (building its Python
    /// environment on first use).
    PoolProgress(String),
    /// The pool answers: executions can run.
    PoolReady,
    /// The pool could not be started or reached; queued cells will fail with this.
    PoolFailed(String),
    /// The pool is a sessionpad local pool, and this is what keeps its sessions
    /// isolated (the embedded pool's own, or a serve's from its `GET metadata`).
    PoolIsolation(Isolation),
    /// The worker began executing this run (earlier runs are done).
    ExecutionStarted(RunId),
    /// The worker has the answer for this run.
    ExecutionFinished {
        /// Which run.
        run: RunId,
        /// The execution, or why there is none (transport, auth, service error).
        outcome: Result<Execution, String>,
        /// The execution's images decoded, in the order of `Execution::images`.
        images: Vec<DecodedImage>,
    },
    /// News from the file worker (listings, previews, transfers).
    Files(FilesEvent),
    /// An image's protocol, resized and encoded on a blocking thread.
    ImageEncoded(Encoded),
    /// The worker asked the local pool to interrupt this run.
    InterruptSent {
        /// Which run.
        run: RunId,
        /// The kernel acknowledged the interrupt request.
        delivered: bool,
    },
}

/// The sending half the worker uses, with one method per kind of news.
///
/// Unbounded on purpose: the worker sends a handful of events per execution (one
/// whole `Execution`, not a stream of chunks) and must never wait on the UI.
#[derive(Debug, Clone)]
pub struct AppEventSender {
    tx: mpsc::UnboundedSender<AppEvent>,
}

impl AppEventSender {
    /// A sender and the receiver the UI task reads.
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<AppEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }

    fn send(&self, event: AppEvent) {
        // The UI task has gone away (it is quitting): nobody is left to tell.
        let _ = self.tx.send(event);
    }

    /// Reports one line of pool start-up progress.
    pub fn pool_progress(&self, line: &str) {
        self.send(AppEvent::PoolProgress(line.to_string()));
    }

    /// Reports that the pool is ready.
    pub fn pool_ready(&self) {
        self.send(AppEvent::PoolReady);
    }

    /// Reports that the pool could not be started or reached.
    pub fn pool_failed(&self, reason: String) {
        self.send(AppEvent::PoolFailed(reason));
    }

    /// Reports how the local pool's sessions are isolated.
    pub fn pool_isolation(&self, isolation: Isolation) {
        self.send(AppEvent::PoolIsolation(isolation));
    }

    /// Reports news of the session's files.
    pub fn files(&self, event: FilesEvent) {
        self.send(AppEvent::Files(event));
    }

    /// Reports that `run` is now executing.
    pub fn execution_started(&self, run: RunId) {
        self.send(AppEvent::ExecutionStarted(run));
    }

    /// Hands back an image encoding made off the UI task.
    pub fn image_encoded(&self, encoded: Encoded) {
        self.send(AppEvent::ImageEncoded(encoded));
    }

    /// Reports that an interrupt of `run` was sent (and whether the kernel
    /// acknowledged it).
    pub fn interrupt_sent(&self, run: RunId, delivered: bool) {
        self.send(AppEvent::InterruptSent { run, delivered });
    }

    /// Reports the outcome of `run`.
    pub fn execution_finished(
        &self,
        run: RunId,
        outcome: Result<Execution, String>,
        images: Vec<DecodedImage>,
    ) {
        self.send(AppEvent::ExecutionFinished {
            run,
            outcome,
            images,
        });
    }
}
