//! The session worker's work beside its executions: the file work
//! ([`super::files`]), the sessions work ([`super::sessions`]) and a local
//! pool's event stream ([`super::follow`]), started once
//! the pool answers and handed a new client when the background local pool is
//! started again.

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::event::EventSender;
use super::files::{self, FileCommand};
use super::sessions::{self, SessionsCommand};
use crate::client::SessionClient;

/// The receiving ends of the work done beside the executions.
pub(super) struct Side {
    pub(super) files: mpsc::UnboundedReceiver<FileCommand>,
    pub(super) sessions: mpsc::UnboundedReceiver<SessionsCommand>,
}

/// The file and sessions work, started once the pool answers, and the
/// client they send through (replaced when a background pool is started again).
pub(super) struct SideWork {
    /// The receivers, until the work starts.
    waiting: Option<Side>,
    /// Hands the work a new client.
    client: Option<watch::Sender<SessionClient>>,
    tasks: Vec<JoinHandle<()>>,
    /// The session's event stream on a local pool (other clients' cells,
    /// running cells' output, [`super::follow`]), opened again on a new client.
    follow: Option<JoinHandle<()>>,
}

impl SideWork {
    pub(super) fn new(side: Side) -> Self {
        Self {
            waiting: Some(side),
            client: None,
            tasks: Vec::new(),
            follow: None,
        }
    }

    /// Starts the work on `client`, or hands it `client` if it runs.
    pub(super) fn serve(
        &mut self,
        client: &SessionClient,
        identifier: &watch::Receiver<String>,
        events: &EventSender,
    ) {
        if let Some(task) = self.follow.take() {
            task.abort();
        }
        self.follow = super::follow::spawn(
            client.clone(),
            crate::client::user_agent().to_string(),
            identifier.clone(),
            events.clone(),
        );
        if let Some(sender) = &self.client {
            sender.send_replace(client.clone());
            return;
        }
        let Some(side) = self.waiting.take() else {
            return;
        };
        let (sender, receiver) = watch::channel(client.clone());
        self.tasks.push(files::spawn(
            receiver.clone(),
            identifier.clone(),
            side.files,
            events.clone(),
        ));
        self.tasks
            .push(sessions::spawn(receiver, side.sessions, events.clone()));
        self.client = Some(sender);
    }

    /// Ends the work.
    pub(super) fn abort(self) {
        for task in self.tasks.into_iter().chain(self.follow) {
            task.abort();
        }
    }
}
