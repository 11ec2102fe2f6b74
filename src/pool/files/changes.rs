//! What a call changed in a session's `/mnt/data` (issue 26): after each
//! execution, upload and delete the pool looks at the session's folder and
//! records every file added, modified (new bytes: a new SHA-256) or deleted,
//! recursively, with its size and hash, and the bytes of those within the
//! per-file budget, so that what an agent left outlives the session.
//!
//! Looking must not slow executions that change nothing, so the pool has one
//! inotify instance ([`Watcher`]) with a watch on every folder of every
//! session: after a call the queued events are read (one `read`), and a
//! session none of whose folders saw an event is not walked at all. A walk
//! re-reads only the files whose size, times or inode moved since the last
//! look ([`SessionFiles`] keeps each file's and its SHA-256). Where a watch
//! cannot be had (no inotify, the user's watch limit reached, a queue
//! overflow), every call walks the folder: slower, never blind.
//!
//! The session's code owns the folder and may change it during the walk, so
//! every name is opened beneath the folder's handle without following links
//! ([`super::beneath`]), only regular files are read, each checked on the
//! handle it was opened as, and a watch is added through the open folder's
//! own handle (`/proc/self/fd/N`), never a path the session could swap. The
//! walk reads at most [`MAX_NAMES`] names and [`super::beneath::MAX_DEPTH`]
//! levels and says what it left out ([`Changes::note`]). Writes made through
//! a shared memory mapping raise no inotify event; they are seen at the next
//! walk another event causes.

use std::collections::HashMap;
use std::future::Future;
use std::io::Read;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use sha2::Digest;

use super::beneath::{self, MAX_DEPTH};
use crate::protocol::record::{ContentKept, DATA_ROOT, FileChange, FileChangeKind, hex};

/// Most names (files, folders, anything) one walk of a session's folder
/// reads; past it the walk stops and says so, and no file it did not reach
/// is reported deleted.
pub(crate) const MAX_NAMES: usize = 100_000;

/// The events that mean a folder's files may have changed.
const EVENTS: WatchFlags = WatchFlags::MODIFY
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::CREATE)
    .union(WatchFlags::DELETE)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::MOVE_SELF);

/// Bytes read at a time from a file too big to keep (it is only hashed).
const CHUNK: usize = 256 * 1024;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The pool's one inotify instance: which watch belongs to which session's
/// "something changed" flag.
#[derive(Debug)]
pub(crate) struct Watcher {
    /// The inotify handle (non-blocking); `None` where the kernel gave none.
    fd: Option<OwnedFd>,
    /// Each watch descriptor's session flag.
    flags: Mutex<HashMap<i32, Arc<AtomicBool>>>,
}

impl Watcher {
    /// A watcher; without inotify (logged) every look walks the folder.
    pub(crate) fn new() -> Self {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)
            .map_err(|e| {
                tracing::info!(
                    "no inotify ({e}): the files each call changes are found by walking /mnt/data every time"
                );
            })
            .ok();
        Self {
            fd,
            flags: Mutex::default(),
        }
    }

    /// Watches the open folder `dir` for the session whose flag is `dirty`;
    /// false when it cannot (no inotify, the watch limit reached).
    fn watch(&self, dir: BorrowedFd<'_>, dirty: &Arc<AtomicBool>) -> bool {
        let Some(fd) = &self.fd else {
            return false;
        };
        // The folder as opened, not a path the session could have swapped.
        let path = format!("/proc/self/fd/{}", dir.as_raw_fd());
        match inotify::add_watch(fd, path.as_str(), EVENTS) {
            Ok(wd) => {
                lock(&self.flags).insert(wd, Arc::clone(dirty));
                true
            }
            Err(e) => {
                tracing::debug!("no inotify watch on a session folder: {e}");
                false
            }
        }
    }

    /// Reads every queued event and raises the flag of each session it
    /// concerns (all of them when the queue overflowed or cannot be read).
    fn drain(&self) {
        let Some(fd) = &self.fd else {
            return;
        };
        let mut flags = lock(&self.flags);
        let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
        let mut reader = inotify::Reader::new(fd, &mut buf);
        loop {
            match reader.next() {
                Ok(event) => {
                    let what = event.events();
                    if what.contains(ReadFlags::QUEUE_OVERFLOW) {
                        flags.values().for_each(|f| f.store(true, Ordering::SeqCst));
                    } else if what.contains(ReadFlags::IGNORED) {
                        // The folder is gone (or unwatched): so is its watch.
                        if let Some(f) = flags.remove(&event.wd()) {
                            f.store(true, Ordering::SeqCst);
                        }
                    } else if let Some(f) = flags.get(&event.wd()) {
                        f.store(true, Ordering::SeqCst);
                    }
                }
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => {}
                Err(e) => {
                    tracing::warn!("reading inotify events failed: {e}");
                    flags.values().for_each(|f| f.store(true, Ordering::SeqCst));
                    break;
                }
            }
        }
    }

    /// Forgets the watches of the session whose flag is `dirty` (it ended;
    /// the kernel drops the watches with the folder).
    pub(crate) fn forget(&self, dirty: &Arc<AtomicBool>) {
        lock(&self.flags).retain(|_, f| !Arc::ptr_eq(f, dirty));
    }
}

/// How a call's look stands to the session's other calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// An execution: it and its look hold the session's look throughout,
    /// so calls' changes are never mixed; a second execution starts once the
    /// first's look is done (executions wait for each other anyway).
    Serial,
    /// An upload or a delete, which may come while an execution runs: it
    /// never waits for one. It is looked at after it is done unless the look
    /// is held (an execution runs): then nothing is reported for it, and the
    /// running execution's look records what it changed.
    Aside,
}

/// How many bytes of changed files one look keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Most bytes of one file (`[ledger] file_content_max`); bigger files
    /// are hashed, not kept.
    pub(crate) per_file: u64,
    /// Most bytes kept by one look in all (`[ledger]
    /// session_content_max`): the ledger would drop the rest anyway.
    pub(crate) per_look: u64,
}

/// What one look found changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Changes {
    /// The files added, modified or deleted, in path order, with the bytes of
    /// those kept.
    pub(crate) files: Vec<FileChange>,
    /// What the look could not see (a tree past [`MAX_NAMES`] names or
    /// [`MAX_DEPTH`] levels, a folder that could not be opened, names that
    /// are not UTF-8); `None` when it saw everything.
    pub(crate) note: Option<String>,
}

/// A regular file as last seen: what tells a changed file from an unchanged
/// one without reading it, and its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, u64),
    ctime: (i64, u64),
    /// SHA-256 (hex) of the bytes read; `None` when they could not be.
    sha256: Option<String>,
}

impl Seen {
    fn of(st: &Stat, sha256: Option<String>) -> Self {
        #[allow(clippy::useless_conversion)] // the field types differ by architecture
        Self {
            dev: u64::from(st.st_dev),
            ino: u64::from(st.st_ino),
            size: u64::try_from(st.st_size).unwrap_or(0),
            mtime: (i64::from(st.st_mtime), u64::from(st.st_mtime_nsec)),
            ctime: (i64::from(st.st_ctime), u64::from(st.st_ctime_nsec)),
            sha256,
        }
    }

    /// Whether `st` describes the same bytes as far as metadata can tell.
    fn same_as(&self, st: &Stat) -> bool {
        let now = Self::of(st, None);
        (now.dev, now.ino, now.size, now.mtime, now.ctime)
            == (self.dev, self.ino, self.size, self.mtime, self.ctime)
    }
}

/// One session's view of its folder: the files as last seen, and the flag
/// the [`Watcher`] raises when one of its folders sees an event.
#[derive(Debug)]
pub(crate) struct SessionFiles {
    /// Each regular file by its path below the folder (`out/logs/run.log`).
    /// Held for the whole of a call and its look, so that two calls'
    /// changes are never mixed.
    seen: tokio::sync::Mutex<HashMap<String, Seen>>,
    /// Raised by the watcher's events, and while some folder has no watch.
    dirty: Arc<AtomicBool>,
}

impl Default for SessionFiles {
    fn default() -> Self {
        Self {
            seen: tokio::sync::Mutex::default(),
            // The first look walks whatever the folder holds.
            dirty: Arc::new(AtomicBool::new(true)),
        }
    }
}

impl SessionFiles {
    /// Runs `work`, then looks at the session's `folder` (the pool's path of
    /// its `/mnt/data`) and returns what changed since the last look, keeping
    /// bytes within `budget`. `order` says how `work` stands to the
    /// session's other calls ([`Order`]).
    pub(crate) async fn noting<T>(
        &self,
        folder: &Path,
        watcher: &Arc<Watcher>,
        budget: Budget,
        order: Order,
        work: impl Future<Output = T>,
    ) -> (T, Changes) {
        let (out, seen) = match order {
            Order::Serial => {
                let seen = self.seen.lock().await;
                (work.await, Some(seen))
            }
            Order::Aside => {
                let out = work.await;
                (out, self.seen.try_lock().ok())
            }
        };
        match seen {
            Some(seen) => (out, self.look(seen, folder, watcher, budget).await),
            None => (out, Changes::default()),
        }
    }

    /// What changed since the last look, `seen` held.
    async fn look(
        &self,
        mut seen: tokio::sync::MutexGuard<'_, HashMap<String, Seen>>,
        folder: &Path,
        watcher: &Arc<Watcher>,
        budget: Budget,
    ) -> Changes {
        watcher.drain();
        if !self.dirty.swap(false, Ordering::SeqCst) {
            return Changes::default();
        }
        let mut before = std::mem::take(&mut *seen);
        let (folder, watcher2, dirty) = (
            folder.to_path_buf(),
            Arc::clone(watcher),
            Arc::clone(&self.dirty),
        );
        let walked = tokio::task::spawn_blocking(move || {
            let changes = look(&mut before, &folder, &watcher2, &dirty, budget);
            (before, changes)
        })
        .await;
        match walked {
            Ok((now, changes)) => {
                *seen = now;
                changes
            }
            Err(e) => {
                self.dirty.store(true, Ordering::SeqCst);
                Changes {
                    files: Vec::new(),
                    note: Some(format!("/mnt/data could not be looked at: {e}")),
                }
            }
        }
    }

    /// Forgets this session's watches (it ended).
    pub(crate) fn forget(&self, watcher: &Watcher) {
        watcher.forget(&self.dirty);
    }
}

/// Walks `folder`, updating `seen` (path → last seen) and returning what
/// changed; every folder walked is watched for `dirty` (raised again when one
/// cannot be, so the next call walks too).
fn look(
    seen: &mut HashMap<String, Seen>,
    folder: &Path,
    watcher: &Watcher,
    dirty: &Arc<AtomicBool>,
    budget: Budget,
) -> Changes {
    let root = match rustix::fs::open(
        folder,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(e) => {
            dirty.store(true, Ordering::SeqCst);
            return Changes {
                files: Vec::new(),
                note: Some(format!("/mnt/data could not be opened: {e}")),
            };
        }
    };
    let mut walk = Walk {
        before: seen,
        now: HashMap::new(),
        files: Vec::new(),
        names: 0,
        not_utf8: 0,
        complete: true,
        notes: Vec::new(),
        kept: 0,
        budget,
    };
    let mut all_watched = true;
    let mut stack = vec![(root, String::new(), 0_usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        all_watched &= watcher.watch(dir.as_fd(), dirty);
        if !walk.folder(&dir, &prefix, depth, &mut stack) {
            break;
        }
    }
    let Walk {
        mut now,
        mut files,
        complete,
        mut notes,
        not_utf8,
        ..
    } = walk;
    for (path, was) in seen.drain() {
        if now.contains_key(&path) {
            continue;
        }
        if complete {
            files.push(FileChange::deleted(shown(&path)));
        } else {
            // Not reached: not known to be gone.
            now.insert(path, was);
        }
    }
    *seen = now;
    if not_utf8 > 0 {
        notes.push(format!(
            "{not_utf8} name(s) that are not UTF-8 were not looked at"
        ));
    }
    if !all_watched {
        dirty.store(true, Ordering::SeqCst);
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Changes {
        files,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// A path below the folder as the session sees it.
fn shown(rel: &str) -> String {
    format!("{DATA_ROOT}/{rel}")
}

/// One walk's state.
struct Walk<'a> {
    before: &'a HashMap<String, Seen>,
    now: HashMap<String, Seen>,
    files: Vec<FileChange>,
    names: usize,
    not_utf8: usize,
    /// Every name was reached (deletions can be told).
    complete: bool,
    notes: Vec<String>,
    /// Bytes kept so far.
    kept: u64,
    budget: Budget,
}

impl Walk<'_> {
    /// Looks at the names in the open folder `dir` (`prefix` is its path
    /// below the root, with a trailing `/`; `depth` its level), pushing its
    /// sub-folders on `stack`. Returns false once [`MAX_NAMES`] is reached.
    fn folder(
        &mut self,
        dir: &OwnedFd,
        prefix: &str,
        depth: usize,
        stack: &mut Vec<(OwnedFd, String, usize)>,
    ) -> bool {
        let entries = match rustix::fs::Dir::read_from(dir) {
            Ok(d) => d,
            Err(e) => {
                self.complete = false;
                self.notes.push(format!(
                    "{} could not be read: {e}",
                    shown(prefix.trim_end_matches('/'))
                ));
                return true;
            }
        };
        for entry in entries {
            let Ok(entry) = entry else {
                self.complete = false;
                continue;
            };
            let raw = entry.file_name().to_bytes();
            if raw == b"." || raw == b".." {
                continue;
            }
            self.names += 1;
            if self.names > MAX_NAMES {
                self.complete = false;
                self.notes.push(format!(
                    "the folder holds more than {MAX_NAMES} names: the rest were not looked at"
                ));
                return false;
            }
            let Ok(name) = std::str::from_utf8(raw) else {
                self.not_utf8 += 1;
                continue;
            };
            let Ok(st) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
                // Gone since the folder was read.
                continue;
            };
            let rel = format!("{prefix}{name}");
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory if depth + 1 >= MAX_DEPTH => {
                    self.complete = false;
                    self.notes.push(format!(
                        "folders deeper than {MAX_DEPTH} levels were not looked at"
                    ));
                }
                FileType::Directory => match beneath::open_child_dir(dir.as_fd(), name) {
                    Ok(fd) => stack.push((fd, format!("{rel}/"), depth + 1)),
                    Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => {}
                    Err(e) => {
                        self.complete = false;
                        self.notes
                            .push(format!("{} could not be opened: {e}", shown(&rel)));
                    }
                },
                FileType::RegularFile => self.file(dir.as_fd(), name, rel, &st),
                // Links, FIFOs, sockets, devices: no bytes of their own.
                _ => {}
            }
        }
        true
    }

    /// Looks at the regular file `name` in `dir` (`rel` below the root),
    /// whose `lstat` was `st`.
    fn file(&mut self, dir: BorrowedFd<'_>, name: &str, rel: String, st: &Stat) {
        let before = self.before.get(&rel);
        if let Some(was) = before
            && was.same_as(st)
        {
            self.now.insert(rel, was.clone());
            return;
        }
        let room = self
            .budget
            .per_file
            .min(self.budget.per_look.saturating_sub(self.kept));
        let change = if before.is_some() {
            FileChangeKind::Modified
        } else {
            FileChangeKind::Added
        };
        match read(dir, name, room) {
            Ok(read) => {
                let unchanged = before.is_some_and(|w| w.sha256.as_ref() == Some(&read.sha256));
                let seen = Seen::of(&read.stat, Some(read.sha256.clone()));
                if !unchanged {
                    let content = match &read.data {
                        Some(d) => {
                            self.kept += d.len() as u64;
                            ContentKept::Kept
                        }
                        None if read.size > self.budget.per_file => ContentKept::TooBig,
                        None => ContentKept::Dropped,
                    };
                    self.files.push(FileChange {
                        path: shown(&rel),
                        change,
                        size: read.size,
                        sha256: Some(read.sha256),
                        content: Some(content),
                        data: read.data.map(Arc::new),
                    });
                }
                self.now.insert(rel, seen);
            }
            // Gone, or replaced by something else, since it was listed.
            Err(ReadError::Gone) => {}
            Err(ReadError::Failed(e)) => {
                tracing::debug!("a changed session file could not be read: {e}");
                self.files.push(FileChange {
                    path: shown(&rel),
                    change,
                    size: u64::try_from(st.st_size).unwrap_or(0),
                    sha256: None,
                    content: Some(ContentKept::Unreadable),
                    data: None,
                });
                self.now.insert(rel, Seen::of(st, None));
            }
        }
    }
}

/// A file read whole.
struct ReadFile {
    /// Its `fstat` when opened (what the next walk compares with).
    stat: Stat,
    /// Bytes read.
    size: u64,
    /// SHA-256 of them, hex.
    sha256: String,
    /// The bytes, when they fitted the room given.
    data: Option<Vec<u8>>,
}

enum ReadError {
    /// The name is gone or is no longer a regular file.
    Gone,
    /// Reading failed.
    Failed(std::io::Error),
}

/// Reads the regular file `name` in `dir` to its end, hashing it and keeping
/// the bytes when there are at most `room` of them.
fn read(dir: BorrowedFd<'_>, name: &str, room: u64) -> Result<ReadFile, ReadError> {
    let fd = match beneath::open_child_file(dir, name) {
        Ok(fd) => fd,
        Err(Errno::NOENT | Errno::LOOP | Errno::NXIO | Errno::ISDIR) => {
            return Err(ReadError::Gone);
        }
        Err(e) => return Err(ReadError::Failed(e.into())),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| ReadError::Failed(e.into()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(ReadError::Gone);
    }
    let mut file = std::fs::File::from(fd);
    let mut hasher = sha2::Sha256::new();
    let expected = u64::try_from(stat.st_size).unwrap_or(0);
    let mut data = None;
    let mut size = 0_u64;
    if expected <= room {
        // Read one byte past the room: a file that grew is hashed, not kept.
        let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
        (&mut file)
            .take(room.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(ReadError::Failed)?;
        hasher.update(&bytes);
        size = bytes.len() as u64;
        if size <= room {
            data = Some(bytes);
        }
    }
    if data.is_none() {
        let mut buf = vec![0_u8; CHUNK];
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ReadError::Failed(e)),
            };
            hasher.update(&buf[..n]);
            size += n as u64;
        }
    }
    Ok(ReadFile {
        stat,
        size,
        sha256: hex(&hasher.finalize()),
        data,
    })
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
