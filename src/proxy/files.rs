//! What an execution changed in an upstream session's `/mnt/data`, as the
//! recording proxy sees it (issue 26): the service says nothing of the files
//! code writes, so after each execution the proxy lists the session's files
//! (`GET files`, recursively where the api-version has it, `aca-api.md`
//! §4.3), compares the listing with the one before (size and last
//! modification time), downloads each changed file within the per-file
//! budget (`[ledger] file_content_max`) to hash and keep it, and records
//! every file `added`, `modified` (new bytes) or `deleted` with the
//! execution, as the local pool does with its own look
//! ([`crate::pool::files::changes`]). A file above the budget is recorded
//! by size only (no SHA-256: it was not fetched), marked `too_big`.
//!
//! **Order.** An execution's look must see its own changes and no other
//! call's, yet the agent must not wait for it. So each session has two
//! locks. Its *turn*: an execution holds it from before it is sent upstream
//! until it is recorded, so the session's next execution (an agent's retry
//! after its timeout, say) starts upstream only after the look; the service
//! runs one execution of a session at a time anyway. Its *gate*
//! ([`SessionLook::hold`]): held from the moment the answer comes until the
//! execution is handed to the ledger; every other recorded call of the
//! session (an upload, a download, a delete) waits for it before it is sent
//! (at most [`GATE_WAIT`]), so it is neither in the look nor recorded before
//! the execution. The agent gets its answer at once; only a call it sends
//! while the look lists waits. Uploads and deletes never wait for a running
//! execution (the execution may be waiting for the upload); the proxy takes
//! their file into its listing as it records them, so the execution's look
//! does not report them again. An asynchronous execution (§4.2) gives its
//! turn back once accepted; its look comes when its finished answer does.
//!
//! **The first look** at a session needs a listing from before: before the
//! first execution of an identifier, the proxy lists the session once (no
//! downloads), so files that were there before are not reported as added.
//!
//! **Which api-version lists.** The proxy lists with `2025-10-02-preview`
//! (recursive) and, where the upstream refuses it, with the agent's own
//! api-version: family B walks the folders one listing each (at most
//! [`MAX_LISTINGS`]), family A sees the top of `/mnt/data` only, which the
//! record says.
//!
//! `serve --no-record-files` or `[ledger] files = false` turns the looks off.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sha2::Digest;
use tokio::io::AsyncWrite;
use tokio::sync::OwnedMutexGuard;

use crate::client::auth::TokenSource;
use crate::client::{ClientError, SessionClient, Target};
use crate::pool::files::changes::Changes;
use crate::protocol::api::{ApiVersion, Family};
use crate::protocol::model::{FileKind, RemoteFile};
use crate::protocol::record::{ContentKept, DATA_ROOT, FileChange, FileChangeKind, hex};

/// Longest wait of an execution for the previous execution's look at the
/// same session; past it the execution goes ahead and the looks may overlap.
pub(crate) const GATE_WAIT: Duration = Duration::from_secs(30);

/// Most sessions whose listing the proxy keeps (the oldest is forgotten past
/// it; its next execution lists it afresh first).
const MAX_SESSIONS: usize = 10_000;

/// Most listings of one look that walks folders itself (an api-version
/// without recursive listing).
pub(crate) const MAX_LISTINGS: usize = 200;

/// Most files one look compares; past it the look says so.
const MAX_FILES: usize = 100_000;

/// A file as the last listing showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Known {
    /// Bytes, when the listing said.
    size: Option<u64>,
    /// Last modification time, when the listing said; `None` for a file the
    /// proxy learned of from an upload (the next listing's time is taken
    /// without counting as a change when the size agrees).
    modified: Option<DateTime<Utc>>,
    /// SHA-256 of its bytes, when fetched or uploaded through the proxy.
    sha256: Option<String>,
}

/// Longest wait of an execution for the session's previous execution to be
/// answered and looked at: 10 minutes, past the service's 220 s limit of one
/// execution (`aca-api.md` §7); past it the execution goes ahead.
pub(crate) const TURN_WAIT: Duration = Duration::from_secs(600);

/// What a call holds of its session's locks (see the module doc): its turn
/// among executions, and the gate that keeps other calls out while a look
/// lists. Dropping it gives both back.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// The execution's turn.
    pub(crate) turn: Option<OwnedMutexGuard<()>>,
    /// The gate.
    pub(crate) gate: Option<OwnedMutexGuard<()>>,
}

/// One session's files as last listed, its executions' turn and its gate
/// (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct SessionLook {
    turn: Arc<tokio::sync::Mutex<()>>,
    gate: Arc<tokio::sync::Mutex<()>>,
    /// `None` until the session was first listed.
    known: Mutex<Option<HashMap<String, Known>>>,
}

impl SessionLook {
    /// Waits (at most [`GATE_WAIT`]) for the look in progress at this
    /// session, and holds the gate until the guard is dropped; `None` when
    /// the wait ran out (the caller goes ahead without it).
    pub(crate) async fn hold(&self) -> Option<OwnedMutexGuard<()>> {
        tokio::time::timeout(GATE_WAIT, Arc::clone(&self.gate).lock_owned())
            .await
            .ok()
    }

    /// Waits (at most [`TURN_WAIT`]) until the session's previous execution
    /// has been answered and looked at, and holds the turn until the guard
    /// is dropped; `None` when the wait ran out.
    pub(crate) async fn turn(&self) -> Option<OwnedMutexGuard<()>> {
        tokio::time::timeout(TURN_WAIT, Arc::clone(&self.turn).lock_owned())
            .await
            .ok()
    }

    /// Whether the session was listed before (a baseline exists).
    fn listed(&self) -> bool {
        self.known.lock().is_ok_and(|k| k.is_some())
    }
}

/// The sessions' look states by identifier, and the identifiers oldest
/// first (to forget the oldest past [`MAX_SESSIONS`]).
type Looks = (HashMap<String, Arc<SessionLook>>, VecDeque<String>);

/// The proxy's looks at its sessions' files.
pub(crate) struct ProxyFiles {
    upstream: String,
    tokens: TokenSource,
    /// The per-file budget, bytes: larger files are not fetched.
    per_file_max: u64,
    /// Most bytes one look fetches in all (`[ledger] session_content_max`:
    /// the ledger would drop the rest anyway); past it changed files are
    /// recorded unfetched, `dropped`.
    per_look_max: u64,
    sessions: Mutex<Looks>,
    /// Clients by api-version (each holds a connection pool).
    clients: Mutex<HashMap<ApiVersion, SessionClient>>,
    /// Whether the upstream refused `2025-10-02-preview`'s recursive listing.
    no_recursive: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for ProxyFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyFiles")
            .field("upstream", &self.upstream)
            .field("per_file_max", &self.per_file_max)
            .finish_non_exhaustive()
    }
}

impl ProxyFiles {
    /// Looks at the files of `upstream`'s sessions with `tokens`, fetching
    /// files of at most `per_file_max` bytes, at most `per_look_max` bytes
    /// in all after one execution.
    pub(crate) fn new(
        upstream: &str,
        tokens: TokenSource,
        per_file_max: u64,
        per_look_max: u64,
    ) -> Self {
        Self {
            upstream: upstream.to_string(),
            tokens,
            per_file_max,
            per_look_max,
            sessions: Mutex::default(),
            clients: Mutex::default(),
            no_recursive: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The per-file budget, bytes: larger changed files are not fetched.
    pub(crate) fn per_file_max(&self) -> u64 {
        self.per_file_max
    }

    /// The look state of session `identifier` (made on first use).
    pub(crate) fn session(&self, identifier: &str) -> Arc<SessionLook> {
        let Ok(mut guard) = self.sessions.lock() else {
            return Arc::default();
        };
        let (map, order) = &mut *guard;
        if let Some(look) = map.get(identifier) {
            return Arc::clone(look);
        }
        if map.len() >= MAX_SESSIONS {
            while let Some(old) = order.pop_front() {
                if map.remove(&old).is_some() {
                    break;
                }
            }
        }
        let look = Arc::<SessionLook>::default();
        order.push_back(identifier.to_string());
        map.insert(identifier.to_string(), Arc::clone(&look));
        look
    }

    /// A client of the upstream for `version`, with the proxy's tokens,
    /// recording nothing of its own (its listings and downloads are the
    /// proxy's, not the agent's).
    fn client(&self, version: ApiVersion) -> Result<SessionClient, ClientError> {
        if let Some(c) = self
            .clients
            .lock()
            .ok()
            .and_then(|m| m.get(&version).cloned())
        {
            return Ok(c);
        }
        let client = SessionClient::new(Target {
            endpoint: self.upstream.clone(),
            api_version: version,
            token: None,
        })?
        .with_auth(self.tokens.clone())
        .recording_own_calls(false);
        if let Ok(mut m) = self.clients.lock() {
            m.insert(version, client.clone());
        }
        Ok(client)
    }

    /// Lists session `identifier` once before its first execution through the
    /// proxy, so that files there before are not reported as added. A
    /// listing that fails leaves the session unlisted: its look then says
    /// so.
    pub(crate) async fn baseline(&self, identifier: &str, agent: ApiVersion, look: &SessionLook) {
        if look.listed() {
            return;
        }
        if let Ok(listing) = self.list(identifier, agent).await {
            let known = listing
                .files
                .into_iter()
                .map(|f| (f.path(), known_of(&f)))
                .collect();
            if let Ok(mut k) = look.known.lock() {
                *k = Some(known);
            }
        }
    }

    /// Takes file `name` (below `/mnt/data`, `sub/x.csv`) uploaded through
    /// the proxy into session `identifier`'s listing, with its `size` and
    /// `sha256`, so the next look does not report it as changed by code.
    pub(crate) fn uploaded(&self, identifier: &str, name: &str, size: u64, sha256: String) {
        let look = self.session(identifier);
        let Ok(mut known) = look.known.lock() else {
            return;
        };
        if let Some(map) = known.as_mut() {
            map.insert(
                name.to_string(),
                Known {
                    size: Some(size),
                    modified: None,
                    sha256: Some(sha256),
                },
            );
        }
    }

    /// Takes file or folder `name` deleted through the proxy out of session
    /// `identifier`'s listing.
    pub(crate) fn deleted(&self, identifier: &str, name: &str) {
        let look = self.session(identifier);
        let Ok(mut known) = look.known.lock() else {
            return;
        };
        if let Some(map) = known.as_mut() {
            let folder = format!("{name}/");
            map.retain(|path, _| path != name && !path.starts_with(&folder));
        }
    }

    /// Lists session `identifier` and returns what changed since the last
    /// listing, with the bytes of the changed files within the budget (see
    /// the module doc). A listing that fails gives no files and a note
    /// saying why; the last listing is kept then.
    pub(crate) async fn look(
        &self,
        identifier: &str,
        agent: ApiVersion,
        look: &SessionLook,
    ) -> Changes {
        let listing = match self.list(identifier, agent).await {
            Ok(l) => l,
            Err(e) => {
                return Changes {
                    files: Vec::new(),
                    note: Some(format!(
                        "the proxy could not list the session's files after the execution: {e}"
                    )),
                };
            }
        };
        let before = look.known.lock().ok().and_then(|k| k.clone());
        let mut notes = listing.notes.clone();
        if before.is_none() {
            notes.push(
                "the proxy had not listed the session before: files there before show as added"
                    .to_string(),
            );
        }
        let before = before.unwrap_or_default();
        let mut files = Vec::new();
        let mut now = HashMap::with_capacity(listing.files.len());
        let mut fetched_bytes = 0u64;
        for f in &listing.files {
            let path = f.path();
            let seen = known_of(f);
            let old = before.get(&path);
            if let Some(old) = old.filter(|o| !moved(o, &seen)) {
                let modified = seen.modified.or(old.modified);
                now.insert(
                    path,
                    Known {
                        modified,
                        ..old.clone()
                    },
                );
                continue;
            }
            let room = self
                .per_file_max
                .min(self.per_look_max.saturating_sub(fetched_bytes));
            let (change, known) = self
                .fetched(listing.version, identifier, &path, old, seen, room)
                .await;
            if let Some(data) = change.as_ref().and_then(|c| c.data.as_ref()) {
                fetched_bytes += data.len() as u64;
            }
            files.extend(change);
            if let Some(known) = known {
                now.insert(path, known);
            }
        }
        for (path, old) in before {
            if now.contains_key(&path) {
                continue;
            }
            if listing.coverage.covers(&path) {
                files.push(FileChange::deleted(session_path(&path)));
            } else {
                now.insert(path, old);
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        if let Ok(mut k) = look.known.lock() {
            *k = Some(now);
        }
        Changes {
            files,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        }
    }

    /// Fetches file `path` (below `/mnt/data`), listed as `seen` and as `old`
    /// before, when within the budget: its change (none when its bytes are
    /// the same as before) and what to know of it now (`None`: it vanished
    /// meanwhile).
    async fn fetched(
        &self,
        version: ApiVersion,
        identifier: &str,
        path: &str,
        old: Option<&Known>,
        seen: Known,
        room: u64,
    ) -> (Option<FileChange>, Option<Known>) {
        let kind = if old.is_some() {
            FileChangeKind::Modified
        } else {
            FileChangeKind::Added
        };
        let size = seen.size.unwrap_or(0);
        // Too big for one file, or for what is left of the look's budget.
        let not_kept = if size > self.per_file_max {
            ContentKept::TooBig
        } else {
            ContentKept::Dropped
        };
        if size > room {
            return (Some(unfetched(path, kind, size, not_kept)), Some(seen));
        }
        let mut sink = Capped::new(room);
        let got = match self.client(version) {
            Ok(client) => {
                client
                    .download_file(identifier, path, &mut sink, &|_, _| {})
                    .await
            }
            Err(e) => Err(e),
        };
        match got {
            Ok(_) => {
                let bytes = sink.buf;
                let sha = hex(&sha2::Sha256::digest(&bytes));
                let known = Known {
                    size: Some(bytes.len() as u64),
                    modified: seen.modified,
                    sha256: Some(sha.clone()),
                };
                if old.and_then(|o| o.sha256.as_deref()) == Some(sha.as_str()) {
                    return (None, Some(known));
                }
                let change = FileChange {
                    path: session_path(path),
                    change: kind,
                    size: bytes.len() as u64,
                    sha256: Some(sha),
                    content: Some(ContentKept::Kept),
                    data: Some(Arc::new(bytes)),
                };
                (Some(change), Some(known))
            }
            Err(ClientError::NotFound { .. }) => (None, None),
            Err(_) if sink.over => (Some(unfetched(path, kind, size, not_kept)), Some(seen)),
            Err(e) => {
                tracing::debug!(file = path, "the proxy could not fetch a changed file: {e}");
                (
                    Some(unfetched(path, kind, size, ContentKept::Unreadable)),
                    Some(seen),
                )
            }
        }
    }

    /// Lists every file of session `identifier` (see the module doc for the
    /// api-versions).
    ///
    /// # Errors
    ///
    /// The client's, when no listing could be had.
    async fn list(&self, identifier: &str, agent: ApiVersion) -> Result<Listing, ClientError> {
        use std::sync::atomic::Ordering;
        if !self.no_recursive.load(Ordering::Relaxed) || agent.has_recursive_listing() {
            let version = if agent.has_recursive_listing() {
                agent
            } else {
                ApiVersion::V2025_10_02
            };
            match self
                .client(version)?
                .list_files(identifier, None, true)
                .await
            {
                Ok(files) => {
                    return Ok(Listing::whole(version, files));
                }
                Err(e) if refuses_version(&e) && version != agent => {
                    tracing::info!(
                        "the upstream refused a recursive listing ({e}); the proxy lists with the agent's api-version"
                    );
                    self.no_recursive.store(true, Ordering::Relaxed);
                }
                Err(e) => return Err(e),
            }
        }
        let client = self.client(agent)?;
        if agent.family() == Family::A {
            let files = client.list_files(identifier, None, false).await?;
            let mut listing = Listing::whole(agent, files);
            listing.coverage = Coverage::TopOnly;
            listing.notes.push(format!(
                "api-version {agent} lists only the top of {DATA_ROOT}: files in folders are not seen"
            ));
            return Ok(listing);
        }
        walk(&client, identifier, agent).await
    }
}

/// Lists `/mnt/data` folder by folder (family B without recursive listing),
/// at most [`MAX_LISTINGS`] listings and [`MAX_FILES`] files.
async fn walk(
    client: &SessionClient,
    identifier: &str,
    version: ApiVersion,
) -> Result<Listing, ClientError> {
    let mut listing = Listing::whole(version, Vec::new());
    let mut folders = VecDeque::from([String::new()]);
    let mut listed = 0;
    while let Some(folder) = folders.pop_front() {
        if listed >= MAX_LISTINGS || listing.files.len() >= MAX_FILES {
            listing.coverage = Coverage::Partial;
            listing.notes.push(format!(
                "the proxy stopped after {listed} folder listings: files deeper are not seen"
            ));
            break;
        }
        let path = (!folder.is_empty()).then(|| format!("{DATA_ROOT}/{folder}"));
        let entries = match client.list_files(identifier, path.as_deref(), false).await {
            Ok(entries) => entries,
            // A folder removed while walking.
            Err(ClientError::NotFound { .. }) if !folder.is_empty() => continue,
            Err(e) => return Err(e),
        };
        listed += 1;
        for mut e in entries {
            let below = match e.directory.as_deref().map(|d| d.trim_matches('/')) {
                Some(d) if !d.is_empty() && !folder.is_empty() => format!("{folder}/{d}"),
                Some(d) if !d.is_empty() => d.to_string(),
                _ => folder.clone(),
            };
            e.directory = (!below.is_empty()).then_some(below);
            match e.kind {
                FileKind::Directory => folders.push_back(e.path()),
                FileKind::File => listing.files.push(e),
            }
        }
    }
    Ok(listing)
}

/// A listing of a session's regular files.
#[derive(Debug)]
struct Listing {
    /// The api-version that listed (downloads use it too).
    version: ApiVersion,
    /// The regular files.
    files: Vec<RemoteFile>,
    /// What the listing saw of `/mnt/data`.
    coverage: Coverage,
    /// What it could not see.
    notes: Vec<String>,
}

impl Listing {
    /// A listing of the whole tree from `entries` (folders left out).
    fn whole(version: ApiVersion, entries: Vec<RemoteFile>) -> Self {
        let mut files: Vec<RemoteFile> = entries
            .into_iter()
            .filter(|e| e.kind == FileKind::File)
            .collect();
        let mut notes = Vec::new();
        if files.len() > MAX_FILES {
            files.truncate(MAX_FILES);
            notes.push(format!("only the first {MAX_FILES} files were compared"));
        }
        Self {
            version,
            coverage: if notes.is_empty() {
                Coverage::All
            } else {
                Coverage::Partial
            },
            files,
            notes,
        }
    }
}

/// What of `/mnt/data` a listing saw: where a file it does not show was
/// deleted, and where it was only not seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coverage {
    /// Every file.
    All,
    /// The files at the top, none in folders (family A).
    TopOnly,
    /// Some files: none is taken as deleted.
    Partial,
}

impl Coverage {
    /// Whether a file at `path` (below `/mnt/data`) would have been listed.
    fn covers(self, path: &str) -> bool {
        match self {
            Coverage::All => true,
            Coverage::TopOnly => !path.contains('/'),
            Coverage::Partial => false,
        }
    }
}

/// What the listing says of `f`.
fn known_of(f: &RemoteFile) -> Known {
    Known {
        size: f.size,
        modified: f.modified,
        sha256: None,
    }
}

/// Whether a file listed as `seen` may have new bytes since `old`: another
/// size, or another modification time where both listings gave one.
fn moved(old: &Known, seen: &Known) -> bool {
    old.size != seen.size || matches!((old.modified, seen.modified), (Some(a), Some(b)) if a != b)
}

/// A change of file `path` whose bytes the proxy did not fetch (`kept`
/// says why), with the listing's `size` and no hash.
fn unfetched(path: &str, change: FileChangeKind, size: u64, kept: ContentKept) -> FileChange {
    FileChange {
        path: session_path(path),
        change,
        size,
        sha256: None,
        content: Some(kept),
        data: None,
    }
}

/// `/mnt/data/PATH` for `path` below it.
fn session_path(path: &str) -> String {
    format!("{DATA_ROOT}/{}", path.trim_start_matches('/'))
}

/// Whether `e` is the upstream refusing an api-version or a parameter of it
/// (400, or 404 for a route it does not have), not a failure of the session.
fn refuses_version(e: &ClientError) -> bool {
    matches!(
        e,
        ClientError::Service {
            status: 400 | 404,
            ..
        }
    ) || matches!(e, ClientError::NotSupported { .. })
        || matches!(e, ClientError::NotFound { missing: None, .. })
}

/// A download's destination that keeps at most `max` bytes and fails past
/// them (the file grew past the per-file budget since it was listed).
struct Capped {
    buf: Vec<u8>,
    max: u64,
    over: bool,
}

impl Capped {
    fn new(max: u64) -> Self {
        Self {
            buf: Vec::new(),
            max,
            over: false,
        }
    }
}

impl AsyncWrite for Capped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.buf.len() as u64 + data.len() as u64 > self.max {
            self.over = true;
            return Poll::Ready(Err(std::io::Error::other(
                "larger than the ledger's per-file budget",
            )));
        }
        self.buf.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(size: u64, minute: Option<u32>) -> Known {
        Known {
            size: Some(size),
            modified: minute
                .map(|m| chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 28, 12, m, 0).unwrap()),
            sha256: None,
        }
    }

    #[test]
    fn a_file_moved_when_its_size_or_listed_time_changed() {
        assert!(!moved(&known(5, Some(1)), &known(5, Some(1))));
        assert!(moved(&known(5, Some(1)), &known(6, Some(1))));
        assert!(moved(&known(5, Some(1)), &known(5, Some(2))));
        // Learned from an upload: no time yet; the same size is the same file.
        assert!(!moved(&known(5, None), &known(5, Some(2))));
        assert!(moved(&known(5, None), &known(7, Some(2))));
    }

    #[test]
    fn what_a_listing_covers_decides_what_counts_as_deleted() {
        assert!(Coverage::All.covers("out/logs/run.log"));
        assert!(Coverage::TopOnly.covers("report.csv"));
        assert!(!Coverage::TopOnly.covers("out/run.log"));
        assert!(!Coverage::Partial.covers("report.csv"));
    }

    #[tokio::test]
    async fn a_download_past_the_budget_is_cut_and_said() {
        use tokio::io::AsyncWriteExt;
        let mut sink = Capped::new(4);
        sink.write_all(b"abcd").await.unwrap();
        assert!(sink.write_all(b"e").await.is_err());
        assert!(sink.over);
        assert_eq!(sink.buf, b"abcd");
    }
}
