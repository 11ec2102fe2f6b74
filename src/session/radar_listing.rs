//! The artifact radar's listings of the session's data root, taken by the
//! session worker around each cell: one before (bounded, so a slow pool does not
//! hold the cell up for long) and one after, compared in [`super::radar`]; and
//! the session's details after each cell, for the idle countdown.

use std::time::Duration;

use super::event::EventSender;
use super::files::FileEvent;
use super::sessions;
use crate::client::SessionClient;
use crate::protocol::RemoteFile;
/// The longest the radar's listing before a cell may hold up its start.
pub const BEFORE_WAIT: Duration = Duration::from_secs(2);
/// The longest the radar's listing after a cell may take (it holds up the next
/// cell in the queue, not this one's outputs).
const AFTER_WAIT: Duration = Duration::from_secs(10);

/// After a cell: the radar's second listing (compared with `before` when that
/// was taken) and the session's details (for the idle countdown and to notice a
/// recycled session). Returns whether the listing answered within its limit.
pub async fn after_cell(
    client: &SessionClient,
    identifier: &str,
    before: Option<Vec<RemoteFile>>,
    events: &EventSender,
) -> bool {
    // Listed even without a `before` (the radar then has nothing to compare):
    // an answer says the pool lists promptly again, so the next cell gets its
    // `before` listing.
    let after = snapshot(client, identifier, AFTER_WAIT).await;
    let answered = after.is_some();
    if let (Some(before), Some(after)) = (before, after) {
        events.files(FileEvent::CellListing { before, after });
    }
    if client.api_version().has_session_management() {
        events.sessions(sessions::info(client, identifier.to_string()).await);
    }
    answered
}

/// The listing of the data root, for the radar, if it comes within `wait`
/// (`None` when it fails or is late: the radar then has nothing to compare):
/// every level below it where the api-version lists recursively (2025-10-02
/// and later, `aca-api.md` §4.3), so files written into subfolders are found.
pub async fn snapshot(
    client: &SessionClient,
    identifier: &str,
    wait: Duration,
) -> Option<Vec<RemoteFile>> {
    let recursive = client.api_version().has_recursive_listing();
    let listing = client.list_files(identifier, None, recursive);
    tokio::time::timeout(wait, listing).await.ok()?.ok()
}
