//! Things that happened outside the UI task and that it must hear about: the
//! session worker's news ([`SessionEvent`]), and work the UI handed to blocking
//! threads coming back (an image encoded for the terminal, a file's preview
//! built from its head).
//!
//! Terminal input does not travel here: the UI task reads it from crossterm's
//! `EventStream` itself.

use tokio::sync::mpsc;

use super::files::preview::Preview;
use crate::session::{EventSender, SessionEvent};
use crate::tui::widgets::image::Encoded;

/// An event for the UI task.
#[derive(Debug)]
pub enum AppEvent {
    /// News from the session worker.
    Session(SessionEvent),
    /// An image's protocol, resized and encoded on a blocking thread.
    ImageEncoded(Encoded),
    /// A file's preview, built from its head on a blocking thread.
    PreviewBuilt {
        /// The generation of the preview request it answers.
        generation: u64,
        /// The preview, or why it could not be built.
        result: Result<Box<Preview>, String>,
    },
    /// The terminal's answer to the graphics probe, read off the UI task
    /// while the loop ran: the picker images are drawn with from now on.
    GraphicsProbed(ratatui_image::picker::Picker),
}

impl From<SessionEvent> for AppEvent {
    fn from(event: SessionEvent) -> Self {
        Self::Session(event)
    }
}

/// The sending half of the UI task's events: the session worker's sender is
/// made from it ([`AppEventSender::session`]), and blocking work sends its
/// results through it.
///
/// Unbounded on purpose: nothing that sends may wait on the UI.
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

    /// The sender the session worker reports through: its events arrive here
    /// as [`AppEvent::Session`].
    pub fn session(&self) -> EventSender {
        let tx = self.tx.clone();
        EventSender::new(move |event| {
            let _ = tx.send(AppEvent::Session(event));
        })
    }

    /// Hands back an image encoding made off the UI task.
    pub fn image_encoded(&self, encoded: Encoded) {
        self.send(AppEvent::ImageEncoded(encoded));
    }

    /// Hands back the picker the graphics probe made.
    pub fn graphics_probed(&self, picker: ratatui_image::picker::Picker) {
        self.send(AppEvent::GraphicsProbed(picker));
    }

    /// Hands back a preview built off the UI task.
    pub fn preview_built(&self, generation: u64, result: Result<Box<Preview>, String>) {
        self.send(AppEvent::PreviewBuilt { generation, result });
    }
}
