//! The session worker: the one task that owns the [`crate::client::SessionClient`]
//! (and, with no endpoint configured, the embedded [`crate::pool::LocalPool`]),
//! runs a notebook's executions one at a time, does its file and sessions work
//! beside them, and watches what each cell leaves in `/mnt/data` (the artifact
//! radar). A front end hands it commands without waiting and hears back through
//! an [`EventSender`]. It knows nothing of the terminal: it sends plain values
//! (executions, listings, the head of a file, typed [`Failure`]s), never
//! something drawn.

mod attach;
pub mod connect;
pub mod event;
pub mod failure;
pub mod files;
mod files_tree;
pub mod follow;
mod head;
pub mod history;
mod queue;
pub mod radar;
mod radar_listing;
pub mod recorded_files;
pub mod replay;
pub mod sessions;
mod side;
pub mod worker;

pub use event::{DecodedImage, EventSender, RunId, SessionEvent};
pub use failure::{Failure, FailureKind};
pub use files::{FileCommand, FileEvent, FileHead, HeadRequest};
pub use follow::{FollowNews, Followed};
pub use history::{FoundRecord, RecordLookup, RecordedNotebook, RecordedRequest};
pub use sessions::{CompletionRequest, SessionsCommand, SessionsEvent};
pub use worker::{Cell, Connection, SessionWorker, WorkerConfig};
