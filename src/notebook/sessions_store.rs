//! The session identifiers this machine has used with each pool, for the sessions
//! pane: one JSON file, `<data dir>/sessions.json`, with per entry the pool key
//! ([`store::pool_name`]: the endpoint, or `local`), the identifier, an optional
//! label, the first and last use (RFC 3339) and the notebook file when known.
//!
//! It owns that file and nothing else: every change is written at once,
//! atomically ([`store::write_atomic`]), after re-reading the file so that two
//! sessionpad instances (one per folder is common) do not drop each other's
//! entries. A file that cannot be parsed is kept as `sessions.json.bak` and the
//! store starts empty, saying so once ([`Loaded::problem`]).
//!
//! Blocking file I/O: call it from the session worker or a blocking task, never
//! from the UI task. No clocks: the caller passes `now`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::store;

/// The file's name in the data directory.
pub const FILE_NAME: &str = "sessions.json";

/// Entries kept per pool; the least recently used go first when there are more.
pub const MAX_PER_POOL: usize = 200;

/// The version written into the file, for a later change of shape.
const FORMAT_VERSION: u32 = 1;

/// One identifier used with one pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionEntry {
    /// The pool key: the endpoint as configured (no trailing `/`), or `local`.
    pub pool: String,
    /// The session identifier.
    pub identifier: String,
    /// A name the user gave it ("agent run 3"), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When this machine first used it.
    pub first_used: DateTime<Utc>,
    /// When this machine last used it (opened its notebook, switched to it or
    /// ran a cell in it): orders the list.
    pub last_used: DateTime<Utc>,
    /// When a cell this machine ran in it last finished (`None`: never, or
    /// recorded by a version that did not keep it). Shown as "last used" where
    /// the pool's own `lastAccessedAt` is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<DateTime<Utc>>,
    /// The notebook file of (pool, identifier), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notebook: Option<PathBuf>,
    /// The flight recorder's `seq` of the last call of another client the
    /// notebook showed while following (`None`: never followed): following
    /// again catches up on the calls after it only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub followed_seq: Option<i64>,
}

/// The file's shape.
#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    version: u32,
    #[serde(default)]
    sessions: Vec<SessionEntry>,
}

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionsStoreError {
    /// The file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// No entry has that pool and identifier.
    #[error("no session {identifier:?} recorded for pool {pool}")]
    NotFound {
        /// The pool key.
        pool: String,
        /// The identifier.
        identifier: String,
    },
}

/// A loaded store and what went wrong while loading it, if anything.
#[derive(Debug)]
pub struct Loaded {
    /// The store (empty when the file was missing or unreadable).
    pub store: SessionsStore,
    /// A sentence for the user when the file was corrupt (and set aside as
    /// `.bak`) or could not be read.
    pub problem: Option<String>,
}

/// The identifiers used with each pool, backed by one JSON file.
#[derive(Debug, Clone)]
pub struct SessionsStore {
    path: PathBuf,
    entries: Vec<SessionEntry>,
}

/// What reading the file gave.
enum Read {
    Missing,
    Entries(Vec<SessionEntry>),
    Corrupt(String),
}

fn read(path: &Path) -> Result<Read, SessionsStoreError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Read::Missing),
        // Not UTF-8 at all: as corrupt as a broken JSON file.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            return Ok(Read::Corrupt(e.to_string()));
        }
        Err(source) => {
            return Err(SessionsStoreError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    match serde_json::from_str::<StoreFile>(&text) {
        Ok(file) => Ok(Read::Entries(file.sessions)),
        Err(e) => Ok(Read::Corrupt(e.to_string())),
    }
}

/// `sessions.json` → `sessions.json.bak`.
fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    path.with_file_name(name)
}

impl SessionsStore {
    /// Loads `<data dir>/sessions.json` ([`crate::dirs::data_dir`], which honours
    /// `$SESSIONPAD_DATA_DIR`).
    pub fn load() -> Loaded {
        Self::load_in(&crate::dirs::data_dir())
    }

    /// Loads `sessions.json` in `data_dir`. Never fails: a missing file is an
    /// empty store; a corrupt one is renamed to `sessions.json.bak` (replacing an
    /// older backup) and the store starts empty; an unreadable one leaves the
    /// store empty. The last two are reported in [`Loaded::problem`].
    pub fn load_in(data_dir: &Path) -> Loaded {
        let path = data_dir.join(FILE_NAME);
        let (entries, problem) = match read(&path) {
            Ok(Read::Missing) => (Vec::new(), None),
            Ok(Read::Entries(entries)) => (entries, None),
            Ok(Read::Corrupt(why)) => (Vec::new(), Some(set_aside(&path, &why))),
            Err(e) => (
                Vec::new(),
                Some(format!("{e}; the sessions list starts empty")),
            ),
        };
        Loaded {
            store: Self { path, entries },
            problem,
        }
    }

    /// The file this store is kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// The entries of `pool`, most recently used first.
    pub fn list_for_pool(&self, pool: &str) -> Vec<&SessionEntry> {
        let mut list: Vec<&SessionEntry> = self.entries.iter().filter(|e| e.pool == pool).collect();
        list.sort_by(|a, b| {
            b.last_used
                .cmp(&a.last_used)
                .then_with(|| a.identifier.cmp(&b.identifier))
        });
        list
    }

    /// The entry of (`pool`, `identifier`), if recorded.
    pub fn get(&self, pool: &str, identifier: &str) -> Option<&SessionEntry> {
        self.entries
            .iter()
            .find(|e| e.pool == pool && e.identifier == identifier)
    }

    /// Records that `identifier` was used with `pool` at `now`: a new entry, or
    /// the existing one's last use moved to `now` (never backwards). Written at
    /// once.
    ///
    /// # Errors
    ///
    /// The file cannot be written (the change is kept in memory all the same).
    pub fn record_use(
        &mut self,
        pool: &str,
        identifier: &str,
        now: DateTime<Utc>,
    ) -> Result<(), SessionsStoreError> {
        self.change(|entries| {
            mark_use(entries, pool, identifier, now);
            Ok(())
        })
    }

    /// As [`SessionsStore::record_use`], in memory only (the file is neither
    /// read nor written): for a copy kept where no file I/O may happen, while a
    /// [`StoreWriter`] writes the same change.
    pub fn note_use(&mut self, pool: &str, identifier: &str, now: DateTime<Utc>) {
        mark_use(&mut self.entries, pool, identifier, now);
    }

    /// Records that a cell run in `identifier` on `pool` finished at `now`: as
    /// [`SessionsStore::record_use`], and the entry's last run moved to `now`
    /// (never backwards). Written at once.
    ///
    /// # Errors
    ///
    /// The file cannot be written (the change is kept in memory all the same).
    pub fn record_run(
        &mut self,
        pool: &str,
        identifier: &str,
        now: DateTime<Utc>,
    ) -> Result<(), SessionsStoreError> {
        self.change(|entries| {
            mark_run(entries, pool, identifier, now);
            Ok(())
        })
    }

    /// As [`SessionsStore::record_run`], in memory only (see
    /// [`SessionsStore::note_use`]).
    pub fn note_run(&mut self, pool: &str, identifier: &str, now: DateTime<Utc>) {
        mark_run(&mut self.entries, pool, identifier, now);
    }

    /// Records that the notebook following (`pool`, `identifier`) showed the
    /// flight recorder's call `seq` ([`SessionEntry::followed_seq`], never
    /// moved backwards). Nothing for an identifier never used. Written at once.
    ///
    /// # Errors
    ///
    /// The file cannot be written (the change is kept in memory all the same).
    pub fn record_followed(
        &mut self,
        pool: &str,
        identifier: &str,
        seq: i64,
    ) -> Result<(), SessionsStoreError> {
        self.change(|entries| {
            mark_followed(entries, pool, identifier, seq);
            Ok(())
        })
    }

    /// As [`SessionsStore::record_followed`], in memory only.
    pub fn note_followed(&mut self, pool: &str, identifier: &str, seq: i64) {
        mark_followed(&mut self.entries, pool, identifier, seq);
    }

    /// Sets (or, with `None` or a blank text, clears) the label of an entry.
    ///
    /// # Errors
    ///
    /// [`SessionsStoreError::NotFound`] when (pool, identifier) was never
    /// recorded; the file cannot be written.
    pub fn set_label(
        &mut self,
        pool: &str,
        identifier: &str,
        label: Option<&str>,
    ) -> Result<(), SessionsStoreError> {
        let label = label.map(str::trim).filter(|l| !l.is_empty());
        self.change(|entries| {
            let entry = find_mut(entries, pool, identifier)?;
            entry.label = label.map(str::to_string);
            Ok(())
        })
    }

    /// Records the notebook file of an entry.
    ///
    /// # Errors
    ///
    /// As [`SessionsStore::set_label`].
    pub fn set_notebook(
        &mut self,
        pool: &str,
        identifier: &str,
        notebook: &Path,
    ) -> Result<(), SessionsStoreError> {
        self.change(|entries| {
            find_mut(entries, pool, identifier)?.notebook = Some(notebook.to_path_buf());
            Ok(())
        })
    }

    /// Forgets an entry (the session itself, and its notebook file, are left
    /// alone). Returns whether there was one.
    ///
    /// # Errors
    ///
    /// The file cannot be written.
    pub fn remove(&mut self, pool: &str, identifier: &str) -> Result<bool, SessionsStoreError> {
        let mut removed = false;
        self.change(|entries| {
            let before = entries.len();
            entries.retain(|e| !(e.pool == pool && e.identifier == identifier));
            removed = entries.len() != before;
            Ok(())
        })?;
        Ok(removed)
    }

    /// Re-reads the file (another instance may have written it), applies `f`,
    /// and writes the result. A file that has become unreadable or corrupt is
    /// overwritten from memory rather than merged.
    fn change(
        &mut self,
        f: impl FnOnce(&mut Vec<SessionEntry>) -> Result<(), SessionsStoreError>,
    ) -> Result<(), SessionsStoreError> {
        if let Ok(Read::Entries(on_disk)) = read(&self.path) {
            self.entries = on_disk;
        }
        f(&mut self.entries)?;
        self.save()
    }

    /// Writes the entries atomically (temp file, fsync, rename).
    fn save(&self) -> Result<(), SessionsStoreError> {
        let file = StoreFile {
            version: FORMAT_VERSION,
            sessions: self.entries.clone(),
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| SessionsStoreError::Write {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        store::write_atomic(&self.path, text.as_bytes()).map_err(|source| {
            SessionsStoreError::Write {
                path: self.path.clone(),
                source,
            }
        })
    }
}

/// (`pool`, `identifier`) used at `now`: a new entry, or the last use moved
/// to `now` (never backwards); old entries of the pool pruned.
fn mark_use(entries: &mut Vec<SessionEntry>, pool: &str, identifier: &str, now: DateTime<Utc>) {
    match entries
        .iter_mut()
        .find(|e| e.pool == pool && e.identifier == identifier)
    {
        Some(e) => e.last_used = e.last_used.max(now),
        None => entries.push(new_entry(pool, identifier, now)),
    }
    prune(entries, pool);
}

/// A cell run in (`pool`, `identifier`) finished at `now`: as [`mark_use`],
/// and the last run moved to `now` (never backwards).
fn mark_run(entries: &mut Vec<SessionEntry>, pool: &str, identifier: &str, now: DateTime<Utc>) {
    let i = match entries
        .iter()
        .position(|e| e.pool == pool && e.identifier == identifier)
    {
        Some(i) => i,
        None => {
            entries.push(new_entry(pool, identifier, now));
            entries.len() - 1
        }
    };
    let entry = &mut entries[i];
    entry.last_used = entry.last_used.max(now);
    entry.last_run = Some(entry.last_run.map_or(now, |t| t.max(now)));
    prune(entries, pool);
}

fn mark_followed(entries: &mut [SessionEntry], pool: &str, identifier: &str, seq: i64) {
    if let Some(entry) = entries
        .iter_mut()
        .find(|e| e.pool == pool && e.identifier == identifier)
    {
        entry.followed_seq = Some(entry.followed_seq.map_or(seq, |s| s.max(seq)));
    }
}

fn new_entry(pool: &str, identifier: &str, now: DateTime<Utc>) -> SessionEntry {
    SessionEntry {
        pool: pool.to_string(),
        identifier: identifier.to_string(),
        label: None,
        first_used: now,
        last_used: now,
        last_run: None,
        notebook: None,
        followed_seq: None,
    }
}

/// A change for the [`StoreWriter`]'s thread.
#[derive(Debug)]
enum Change {
    Use(String, String, DateTime<Utc>),
    Run(String, String, DateTime<Utc>),
    Followed(String, String, i64),
}

/// Writes the store's file on a thread of its own, so that the notebook's UI
/// task never reads, writes or fsyncs it: each change is applied there in the
/// order given, as [`SessionsStore::record_use`] and
/// [`SessionsStore::record_run`] apply it (read, change, atomic write). The
/// thread ends when the writer is dropped and its changes are written; join
/// it with the [`store::SaverThread`] [`StoreWriter::spawn`] returns. A write
/// that fails is logged (the change stays in the caller's copy).
#[derive(Debug)]
pub struct StoreWriter {
    tx: std::sync::mpsc::Sender<Change>,
}

impl StoreWriter {
    /// Starts the writer of `store`'s file (`store` is the thread's own copy).
    ///
    /// # Errors
    ///
    /// The thread cannot be started (the system is out of threads).
    pub fn spawn(mut store: SessionsStore) -> std::io::Result<(Self, store::SaverThread)> {
        let (tx, rx) = std::sync::mpsc::channel::<Change>();
        let handle = std::thread::Builder::new()
            .name("sessions-store".into())
            .spawn(move || {
                for change in rx {
                    let written = match change {
                        Change::Use(pool, id, now) => store.record_use(&pool, &id, now),
                        Change::Run(pool, id, now) => store.record_run(&pool, &id, now),
                        Change::Followed(pool, id, seq) => store.record_followed(&pool, &id, seq),
                    };
                    if let Err(e) = written {
                        tracing::warn!("sessions store: {e}");
                    }
                }
            })?;
        Ok((Self { tx }, store::SaverThread::from_handle(handle)))
    }

    /// Writes that (`pool`, `identifier`) was used at `now`.
    pub fn record_use(&self, pool: &str, identifier: &str, now: DateTime<Utc>) {
        self.send(Change::Use(pool.into(), identifier.into(), now));
    }

    /// Writes that a cell run in (`pool`, `identifier`) finished at `now`.
    pub fn record_run(&self, pool: &str, identifier: &str, now: DateTime<Utc>) {
        self.send(Change::Run(pool.into(), identifier.into(), now));
    }

    /// Writes that the notebook following (`pool`, `identifier`) showed the
    /// recorded call `seq`.
    pub fn record_followed(&self, pool: &str, identifier: &str, seq: i64) {
        self.send(Change::Followed(pool.into(), identifier.into(), seq));
    }

    fn send(&self, change: Change) {
        if self.tx.send(change).is_err() {
            tracing::error!("the sessions store writer is gone; a change is not written");
        }
    }
}

fn find_mut<'a>(
    entries: &'a mut [SessionEntry],
    pool: &str,
    identifier: &str,
) -> Result<&'a mut SessionEntry, SessionsStoreError> {
    entries
        .iter_mut()
        .find(|e| e.pool == pool && e.identifier == identifier)
        .ok_or_else(|| SessionsStoreError::NotFound {
            pool: pool.to_string(),
            identifier: identifier.to_string(),
        })
}

/// Drops the least recently used entries of `pool` beyond [`MAX_PER_POOL`].
fn prune(entries: &mut Vec<SessionEntry>, pool: &str) {
    let mut of_pool: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].pool == pool)
        .collect();
    if of_pool.len() <= MAX_PER_POOL {
        return;
    }
    of_pool.sort_by(|&a, &b| entries[b].last_used.cmp(&entries[a].last_used));
    let dropped: HashSet<usize> = of_pool[MAX_PER_POOL..].iter().copied().collect();
    let mut i = 0;
    entries.retain(|_| {
        let keep = !dropped.contains(&i);
        i += 1;
        keep
    });
}

/// Moves a corrupt file to `.bak` and says what happened.
fn set_aside(path: &Path, why: &str) -> String {
    let bak = backup_path(path);
    match std::fs::rename(path, &bak) {
        Ok(()) => format!(
            "{} was unreadable ({why}); kept it as {} and started an empty sessions list",
            path.display(),
            bak.display()
        ),
        Err(e) => format!(
            "{} was unreadable ({why}) and could not be kept as {} ({e}); the sessions list starts empty",
            path.display(),
            bak.display()
        ),
    }
}

#[cfg(test)]
#[path = "sessions_store_tests.rs"]
mod tests;
