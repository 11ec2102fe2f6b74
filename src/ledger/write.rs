//! Writing the ledger off the HTTP handlers: a [`Recorder`] hands each [`Call`]
//! to a writer thread over a bounded channel, as the notebook's sessions store
//! does (`notebook::sessions_store::StoreWriter`). A handler never waits on
//! disk: when the channel is full the call is dropped and counted
//! ([`Recorder::dropped`]), and the log says so. The thread writes what it
//! finds queued in one transaction, and prunes ([`super::retention`]) when it
//! starts and every [`PRUNE_EVERY`] records.
//!
//! Once a batch is committed, the thread publishes each of its calls, with
//! its ledger `seq`, to the recorder's [`Hub`] (the pool's event stream,
//! [`crate::events`]): whatever records through a `Recorder` is followed live
//! without more code.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};

use rusqlite::{Connection, params};

use super::LedgerError;
use super::retention::{self, Limits};
use crate::events::Hub;
use crate::protocol::events::PoolEvent;
use crate::protocol::record::{Call, ContentKept};
/// Calls queued for the writer at most; more are dropped (and counted).
pub const QUEUE: usize = 4096;

/// Calls written in one transaction at most.
const BATCH: usize = 256;

/// Records written between two prunings.
pub const PRUNE_EVERY: u64 = 1000;

/// The writer's page cache, in KiB (SQLite's default is 2,000). The writer
/// appends rows and prunes the oldest, a few pages each, but a call of
/// megabytes of output passes through the cache page by page, and every page
/// the cache once held stays allocated: with the default, the 1,000,000-line
/// cell left the pool 1.9 MB bigger for good.
pub const WRITER_CACHE_KIB: i64 = 256;

/// What the writer thread is asked to do.
enum Job {
    /// Write this call.
    Record(Box<Call>),
    /// Answer once everything sent before is written (tests, shutdown).
    Flush(std::sync::mpsc::Sender<()>),
}

/// The handle through which the local pool records calls: cheap to clone,
/// never blocks. The writer thread ends when the last clone is dropped, after
/// writing what was queued.
#[derive(Clone)]
pub struct Recorder {
    tx: SyncSender<Job>,
    dropped: Arc<AtomicU64>,
    path: Arc<PathBuf>,
    hub: Hub,
    limits: Limits,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("path", &self.path)
            .field("dropped", &self.dropped())
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// Opens (or creates) the ledger at `path` ([`super::schema::open`]) and
    /// starts its writer thread, which keeps the ledger within `limits`.
    ///
    /// # Errors
    ///
    /// The ledger cannot be opened ([`LedgerError`]); the thread cannot be
    /// started ([`LedgerError::Folder`] naming the file, with the OS error).
    pub fn start(path: &Path, limits: Limits) -> Result<Self, LedgerError> {
        Self::start_publishing(path, limits, Hub::new())
    }

    /// Starts a recorder like [`Recorder::start`] that publishes each call it
    /// writes to `hub` (a pool's own hub, which its kernels also publish
    /// running cells' output to).
    ///
    /// # Errors
    ///
    /// As [`Recorder::start`].
    pub fn start_publishing(path: &Path, limits: Limits, hub: Hub) -> Result<Self, LedgerError> {
        let conn = super::schema::open(path)?;
        conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)
            .map_err(|e| LedgerError::sqlite(path, e))?;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(QUEUE);
        let owned = path.to_path_buf();
        let publish = hub.clone();
        std::thread::Builder::new()
            .name("ledger-writer".into())
            .spawn(move || run(&conn, &rx, &owned, limits, &publish))
            .map_err(|source| LedgerError::Folder {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            tx,
            dropped: Arc::default(),
            path: Arc::new(path.to_path_buf()),
            hub,
            limits,
        })
    }

    /// The limits the writer keeps the ledger within (the pool reads the
    /// per-file content budget from them before it reads a changed file).
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The hub each recorded call is published to once written (serve it with
    /// [`crate::pool::events::routes`]).
    pub fn hub(&self) -> &Hub {
        &self.hub
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues `call` for writing; never blocks. A full queue drops it: the count
    /// goes up and the log says so (at the 1st, 2nd, 4th, 8th… drop).
    pub fn record(&self, call: Call) {
        match self.tx.try_send(Job::Record(Box::new(call))) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!(
                        "ledger: the writer is behind ({QUEUE} calls queued); {n} call(s) not recorded so far"
                    );
                }
            }
            Err(TrySendError::Disconnected(_)) => {
                tracing::error!("ledger: the writer thread is gone; a call is not recorded");
            }
        }
    }

    /// Calls dropped so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Blocks until every call queued before is written (or the writer is
    /// gone). For tests and an orderly end; never call it from a handler.
    pub fn flush(&self) {
        let (done, wait) = std::sync::mpsc::channel();
        if self.tx.send(Job::Flush(done)).is_ok() {
            let _ = wait.recv();
        }
    }
}

/// The writer thread: batches, writes, prunes.
fn run(conn: &Connection, rx: &Receiver<Job>, path: &Path, limits: Limits, hub: &Hub) {
    prune(conn, path, limits);
    let mut since_prune = 0_u64;
    while let Ok(first) = rx.recv() {
        let mut calls = Vec::new();
        let mut flushes = Vec::new();
        let mut next = Some(first);
        while let Some(job) = next {
            match job {
                Job::Record(call) => calls.push(call),
                Job::Flush(done) => flushes.push(done),
            }
            next = if calls.len() < BATCH {
                rx.try_recv().ok()
            } else {
                None
            };
        }
        if !calls.is_empty() {
            let count = calls.len();
            match insert_batch(conn, &calls, limits.session_content_max) {
                Ok(seqs) => publish(hub, calls, &seqs),
                Err(e) => tracing::error!(
                    "ledger {}: {count} call(s) not recorded: {e}",
                    path.display(),
                ),
            }
            since_prune += count as u64;
            if since_prune >= PRUNE_EVERY {
                since_prune = 0;
                prune(conn, path, limits);
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

fn prune(conn: &Connection, path: &Path, limits: Limits) {
    match retention::prune(conn, limits, chrono::Utc::now()) {
        Ok(0) => {}
        Ok(n) => tracing::info!("ledger {}: pruned {n} old call(s)", path.display()),
        Err(e) => tracing::warn!("ledger {}: pruning failed: {e}", path.display()),
    }
}

/// Writes `calls` in one transaction.
///
/// # Errors
///
/// SQLite's error; nothing of the batch is written then.
pub fn insert_all(conn: &Connection, calls: &[Box<Call>]) -> rusqlite::Result<()> {
    insert_batch(conn, calls, Limits::DEFAULT_SESSION_CONTENT_MAX).map(drop)
}

/// Writes `calls` in one transaction, then keeps each session whose calls
/// kept file contents within `session_content_max` bytes of them
/// ([`keep_within_budget`]); returns their row ids (`seq`s).
fn insert_batch(
    conn: &Connection,
    calls: &[Box<Call>],
    session_content_max: u64,
) -> rusqlite::Result<Vec<i64>> {
    let tx = conn.unchecked_transaction()?;
    let mut seqs = Vec::with_capacity(calls.len());
    let mut kept_in: Vec<(&str, &str)> = Vec::new();
    for call in calls {
        seqs.push(insert(&tx, call)?);
        if call.files.iter().any(|f| f.data.is_some())
            && !kept_in.contains(&(call.pool.as_str(), call.identifier.as_str()))
        {
            kept_in.push((&call.pool, &call.identifier));
        }
    }
    for (pool, identifier) in kept_in {
        keep_within_budget(&tx, pool, identifier, session_content_max)?;
    }
    tx.commit()?;
    Ok(seqs)
}

/// Drops the bytes of session (`pool`, `identifier`)'s oldest kept file
/// versions while its kept versions come to more than `max` bytes (each
/// version counted at its size, even where two share their bytes); the
/// versions stay recorded, as [`ContentKept::Dropped`], and bytes no kept
/// version points at any more are deleted. Returns how many were dropped.
///
/// # Errors
///
/// SQLite's error.
pub fn keep_within_budget(
    conn: &Connection,
    pool: &str,
    identifier: &str,
    max: u64,
) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare_cached(
        "SELECT f.call_id, f.seq, f.size FROM calls c JOIN call_files f ON f.call_id = c.id
         WHERE c.identifier = ?1 AND c.pool = ?2 AND f.content = 'kept'
         ORDER BY f.call_id DESC, f.seq DESC",
    )?;
    let kept = stmt
        .query_map(params![identifier, pool], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // Newest first: the versions past the budget are the oldest.
    let mut total = 0_u64;
    let mut dropped = 0;
    for (call_id, seq, size) in kept {
        total = total.saturating_add(size.unsigned_abs());
        if total > max {
            conn.prepare_cached(
                "UPDATE call_files SET content = 'dropped' WHERE call_id = ?1 AND seq = ?2",
            )?
            .execute(params![call_id, seq])?;
            dropped += 1;
        }
    }
    if dropped > 0 {
        super::retention::remove_orphan_contents(conn)?;
    }
    Ok(dropped)
}

/// Publishes written `calls` (rows `seqs`) to `hub`, each only when a
/// subscriber wants it ([`Hub::wants_call`]): a call's output can be
/// megabytes, and the event holds a copy of a stream the pool's session
/// keeps too. The calls are moved into the events.
fn publish(hub: &Hub, calls: impl IntoIterator<Item = Box<Call>>, seqs: &[i64]) {
    for (call, &seq) in calls.into_iter().zip(seqs) {
        if !hub.wants_call(&call.identifier, call.client.as_deref()) {
            continue;
        }
        hub.publish(PoolEvent::Call(Box::new(
            crate::protocol::events::recorded_call(*call, seq),
        )));
    }
}

/// Writes one call (and its images, each stored once by hash) in the
/// connection's current transaction; returns its row id. Big outputs are
/// written in place, without SQLite copying them ([`super::in_place`]).
///
/// # Errors
///
/// SQLite's error.
pub fn insert(conn: &Connection, call: &Call) -> rusqlite::Result<i64> {
    let outputs = super::in_place::Outputs::of(call.output.as_ref());
    let out = call.output.as_ref();
    let file = call.file.as_ref();
    let mut stmt = conn.prepare_cached(
        "INSERT INTO calls (at_ms, duration_us, pool, identifier, client, kind, execution_id,
            code, stdin, status, exit_code, stdout, stderr, result, file_name, file_size, file_sha256,
            client_gone, files_note)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
            ?19)",
    )?;
    stmt.execute(params![
        call.at.timestamp_millis(),
        i64::try_from(call.duration.as_micros()).unwrap_or(i64::MAX),
        call.pool,
        call.identifier,
        call.client,
        call.kind.as_str(),
        call.execution_id,
        call.code,
        call.stdin,
        out.map(|o| o.status.as_str()),
        out.and_then(|o| o.exit_code),
        outputs.stdout(),
        outputs.stderr(),
        outputs.result(),
        file.map(|f| f.name.as_str()),
        file.and_then(|f| f.size)
            .and_then(|s| i64::try_from(s).ok()),
        file.and_then(|f| f.sha256.as_deref()),
        call.client_gone,
        call.files_note,
    ])?;
    let id = conn.last_insert_rowid();
    outputs.fill(conn, id)?;
    for (seq, image) in call.images.iter().enumerate() {
        let hash = crate::protocol::record::sha256_hex(&image.data);
        conn.prepare_cached(
            "INSERT OR IGNORE INTO images (sha256, format, data) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![hash, image.format, image.data])?;
        conn.prepare_cached("INSERT INTO call_images (call_id, seq, sha256) VALUES (?1, ?2, ?3)")?
            .execute(params![id, i64::try_from(seq).unwrap_or(i64::MAX), hash])?;
    }
    insert_files(conn, id, call)?;
    for (seq, a) in call.network.iter().enumerate() {
        conn.prepare_cached(
            "INSERT INTO call_network (call_id, seq, host, port, decision, bytes, at_ms, via)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            id,
            i64::try_from(seq).unwrap_or(i64::MAX),
            a.host,
            a.port,
            a.decision.as_str(),
            i64::try_from(a.bytes).unwrap_or(i64::MAX),
            a.at.timestamp_millis(),
            a.via.as_str(),
        ])?;
    }
    Ok(id)
}

/// Writes the files call `id` changed ([`Call::files`]), their bytes stored
/// once per SHA-256. A version said to be kept whose bytes neither come with
/// it nor are in the ledger already is recorded as
/// [`ContentKept::Unreadable`].
fn insert_files(conn: &Connection, id: i64, call: &Call) -> rusqlite::Result<()> {
    for (seq, f) in call.files.iter().enumerate() {
        let mut content = f.content;
        if content == Some(ContentKept::Kept) {
            let stored = match (&f.data, &f.sha256) {
                (Some(data), Some(sha)) => {
                    conn.prepare_cached(
                        "INSERT OR IGNORE INTO file_contents (sha256, data) VALUES (?1, ?2)",
                    )?
                    .execute(params![sha, data.as_slice()])?;
                    true
                }
                (None, Some(sha)) => conn
                    .prepare_cached("SELECT 1 FROM file_contents WHERE sha256 = ?1")?
                    .exists([sha])?,
                _ => false,
            };
            if !stored {
                content = Some(ContentKept::Unreadable);
            }
        }
        conn.prepare_cached(
            "INSERT INTO call_files (call_id, seq, path, change, size, sha256, content)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            id,
            i64::try_from(seq).unwrap_or(i64::MAX),
            f.path,
            f.change.as_str(),
            i64::try_from(f.size).unwrap_or(i64::MAX),
            f.sha256,
            content.map(ContentKept::as_str),
        ])?;
    }
    Ok(())
}

/// The ledger as the sink of a process's own calls (the command line
/// installs it as the client's `CallSink`): opened at the first record, by one
/// [`Recorder`] (a writer thread) per process, so that a process that records
/// nothing never opens the database. A ledger that cannot be opened is said
/// once in the log and its calls are dropped.
pub struct ProcessSink {
    options: super::LedgerOptions,
    recorder: std::sync::OnceLock<Option<Recorder>>,
}

impl ProcessSink {
    /// The sink of the ledger `options` name.
    pub fn new(options: super::LedgerOptions) -> Self {
        Self {
            options,
            recorder: std::sync::OnceLock::new(),
        }
    }

    /// Records `call` (opening the ledger at the first one); never blocks.
    pub fn record(&self, call: Call) {
        if let Some(r) = self.recorder() {
            r.record(call);
        }
    }

    /// Waits until every call recorded so far is written (nothing when the
    /// ledger was never opened).
    pub fn flush(&self) {
        if let Some(Some(r)) = self.recorder.get() {
            r.flush();
        }
    }

    fn recorder(&self) -> Option<&Recorder> {
        self.recorder
            .get_or_init(
                || match Recorder::start(&self.options.path, self.options.limits) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        tracing::error!("ledger: this process's own calls are not recorded: {e}");
                        None
                    }
                },
            )
            .as_ref()
    }
}
