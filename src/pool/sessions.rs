//! The session registry of the local pool: one session per identifier, created on
//! first use, each with its own kernel and `/mnt/data` folder; one execution at a
//! time per session (others wait their turn); idle sessions end after the cooldown;
//! a few kernels are kept ready so a new identifier does not wait for a kernel start.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex as StdMutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::Mutex;
use tokio::task::JoinSet;

use super::PoolOptions;
use super::data_fs::DataFs;
use super::image::PythonEnv;
use super::kernel::{Completion, Interrupter, Kernel, KernelLaunch};

/// How long a kernel may take to answer a completion request (jedi's first
/// completion in a session loads its caches).
const COMPLETE_WAIT: Duration = Duration::from_secs(3);
use super::limits::Enforcer;
use super::process::Processes;
pub use super::remembered::ExecutionRecord;
use super::remembered::remember;
use super::sandbox::python_view::PythonView;
use super::sandbox::{SESSION_UID_BASE, SESSION_UIDS, Sandbox};
use crate::protocol::{ContainerType, Execution, ExecutionStatus};
/// Why a session could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The pool already runs its maximum number of sessions.
    #[error("the session pool is at its maximum of {0} sessions")]
    PoolFull(usize),
    /// The session folder could not be created.
    #[error("cannot create the session folder: {0}")]
    Io(#[from] std::io::Error),
}

/// One session: an identifier's kernel and folder.
pub struct Session {
    /// The session identifier clients use.
    pub identifier: String,
    /// A unique id of this session instance (a new one after the old one ended).
    pub guid: uuid::Uuid,
    /// The session's `/mnt/data` folder on this machine.
    pub folder: PathBuf,
    /// The host uid its kernel runs as when the sandbox drops root (the folder's
    /// owner then); unused otherwise.
    pub uid: u32,
    /// When the session was created.
    pub created_at: DateTime<Utc>,
    last_access: StdMutex<DateTime<Utc>>,
    /// The kernel; `None` until the first execution starts one (when no ready
    /// kernel was available), and again after it died. The lock also serialises
    /// executions.
    kernel: Mutex<Option<Kernel>>,
    /// Reaches the kernel's control channel without the lock above, which a
    /// running execution holds (see [`SessionRegistry::interrupt`]).
    interrupter: StdMutex<Option<Interrupter>>,
    executions: StdMutex<VecDeque<(String, ExecutionRecord)>>,
    /// Its files as last looked at, for the flight recorder (issue 26).
    pub(crate) files: super::files::changes::SessionFiles,
}

fn lock<T>(m: &StdMutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Session {
    /// When the session was last used.
    pub fn last_accessed_at(&self) -> DateTime<Utc> {
        *lock(&self.last_access)
    }

    /// Marks the session used now (every call resets the cooldown).
    pub fn touch(&self) {
        *lock(&self.last_access) = Utc::now();
    }

    /// The record of execution `id`, if this session knows it.
    pub fn execution(&self, id: &str) -> Option<ExecutionRecord> {
        lock(&self.executions)
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, r)| r.clone())
    }

    fn record(&self, id: &str, rec: ExecutionRecord) {
        remember(&mut lock(&self.executions), id, rec);
    }
}

/// A kernel started ahead of need, with the folder it runs in.
struct Ready {
    kernel: Kernel,
    guid: uuid::Uuid,
    folder: PathBuf,
    uid: u32,
}

/// What confines a pool's kernels: the sandbox (if any), the Python folders it
/// binds, the limits and the report of all of it.
pub struct Confinement {
    /// Bubblewrap, when usable.
    pub sandbox: Option<Sandbox>,
    /// How a sandboxed session sees the Python environment (its folders at
    /// neutral paths).
    pub python_view: PythonView,
    /// The per-session limits and their mechanism.
    pub enforcer: Enforcer,
    /// What gives session folders their size.
    pub data_fs: DataFs,
    /// What is in force, for people.
    pub isolation: crate::protocol::Isolation,
    /// A name unique among live pools ([`super::housekeeping::pool_tag`]).
    pub tag: String,
}

/// All sessions of the local pool.
pub struct SessionRegistry {
    env: PythonEnv,
    sandbox: Option<Sandbox>,
    isolation: crate::protocol::Isolation,
    python_view: Arc<PythonView>,
    enforcer: Arc<Enforcer>,
    /// What gives session folders their size.
    data_fs: DataFs,
    /// The session uids handed out so far (see [`SESSION_UID_BASE`]).
    next_uid: std::sync::atomic::AtomicU32,
    sessions_dir: PathBuf,
    runtime_root: PathBuf,
    cooldown: Duration,
    max_sessions: usize,
    ready_target: usize,
    sessions: StdMutex<HashMap<String, Arc<Session>>>,
    ready: StdMutex<Vec<Ready>>,
    starting: AtomicUsize,
    /// The tasks starting ready kernels, aborted when the pool ends.
    refills: StdMutex<JoinSet<()>>,
    /// Every kernel process, from spawn until reaped (also those starting).
    processes: Arc<Processes>,
    next_kernel: AtomicU64,
    /// What the sessions run (the kernels load the shell or Node.js runner).
    container_type: ContainerType,
    /// The pool's inotify instance over its session folders.
    watcher: Arc<super::files::changes::Watcher>,
    /// How many bytes of changed files are kept, when the pool records what
    /// each call changed in `/mnt/data` (a ledger, `[ledger] files` on).
    files_budget: Option<super::files::changes::Budget>,
    /// Where sessions' ends are recorded ([`SessionRegistry::record_ends`]).
    ends: std::sync::OnceLock<(crate::ledger::Recorder, Arc<str>)>,
}

impl SessionRegistry {
    /// A registry whose kernels run in `env` confined by `confinement`, with
    /// folders below `opts.sessions_dir` (in a folder of this pool's own,
    /// `pool-<tag>`), `opts.cooldown`, `opts.max_sessions` and
    /// `opts.ready_sessions`.
    pub fn new(env: PythonEnv, confinement: Confinement, opts: &PoolOptions) -> Self {
        let Confinement {
            sandbox,
            python_view,
            enforcer,
            data_fs,
            isolation,
            tag,
        } = confinement;
        Self {
            env,
            sandbox,
            isolation,
            python_view: Arc::new(python_view),
            enforcer: Arc::new(enforcer),
            data_fs,
            // Pools start at a random uid so that two pools rarely share one.
            next_uid: std::sync::atomic::AtomicU32::new(rand::RngExt::random_range(
                &mut rand::rng(),
                0..SESSION_UIDS,
            )),
            sessions_dir: opts.sessions_dir.join(format!("pool-{tag}")),
            // Short on purpose: IPC socket paths must stay under ~100 bytes.
            runtime_root: std::env::temp_dir().join(format!("sp-{tag}")),
            cooldown: opts.cooldown,
            max_sessions: opts.max_sessions,
            ready_target: opts.ready_sessions,
            sessions: StdMutex::new(HashMap::new()),
            ready: StdMutex::new(Vec::new()),
            starting: AtomicUsize::new(0),
            refills: StdMutex::new(JoinSet::new()),
            processes: Arc::new(Processes::default()),
            next_kernel: AtomicU64::new(0),
            container_type: opts.container_type,
            watcher: Arc::new(super::files::changes::Watcher::new()),
            files_budget: opts.ledger.as_ref().filter(|l| l.files).map(|l| {
                super::files::changes::Budget {
                    per_file: l.limits.file_content_max,
                    per_look: l.limits.session_content_max,
                }
            }),
            ends: std::sync::OnceLock::new(),
        }
    }

    /// Runs `work` (an execution, an upload, a delete) in `session` and
    /// returns its output with what it changed in the session's `/mnt/data`
    /// ([`super::files::changes`]), `order` saying how it stands to the
    /// session's other calls; nothing changed is reported when the pool does
    /// not record files.
    pub(crate) async fn noting_files<T>(
        &self,
        session: &Session,
        order: super::files::changes::Order,
        work: impl std::future::Future<Output = T>,
    ) -> (T, super::files::changes::Changes) {
        match self.files_budget {
            Some(budget) => {
                let folder = self.files_of(session);
                session
                    .files
                    .noting(&folder, &self.watcher, budget, order, work)
                    .await
            }
            None => (work.await, super::files::changes::Changes::default()),
        }
    }

    /// The idle time after which a session ends.
    pub fn cooldown(&self) -> Duration {
        self.cooldown
    }

    /// Whether the sessions' network attempts are recorded (issue 29): a
    /// sandbox with a network namespace of its own (every policy but
    /// `--egress`), whose connect watch sees direct attempts and whose proxy,
    /// under an allow-list or audit, the rest.
    pub fn records_network(&self) -> bool {
        self.sandbox
            .as_ref()
            .is_some_and(|s| !s.egress_policy().host_network())
    }

    /// Whether kernels run in the sandbox.
    pub fn sandboxed(&self) -> bool {
        self.sandbox.is_some()
    }

    /// What keeps the sessions isolated (sandbox, limits), as in force.
    pub fn isolation(&self) -> &crate::protocol::Isolation {
        &self.isolation
    }

    /// The Python environment kernels run in.
    pub fn env(&self) -> &PythonEnv {
        &self.env
    }

    fn launch(&self, folder: PathBuf, uid: u32) -> KernelLaunch {
        let n = self.next_kernel.fetch_add(1, Ordering::Relaxed);
        KernelLaunch {
            env: self.env.clone(),
            python_view: self.python_view.clone(),
            workdir: folder,
            runtime_dir: self.runtime_root.join(n.to_string()),
            sandbox: self.sandbox.clone(),
            uid,
            enforcer: self.enforcer.clone(),
            data_fs: self.data_fs.clone(),
            processes: self.processes.clone(),
            container_type: self.container_type,
        }
    }

    /// What this pool's sessions run (`serve --container-type`).
    pub fn container_type(&self) -> ContainerType {
        self.container_type
    }

    /// Creates a new session folder and the uid it belongs to: with a sandbox that
    /// drops root, the folder is given to a session uid of its own (mode 0700), so
    /// the kernel can write it and no other session can. It is a tmpfs of the
    /// session's data size where the pool can mount one ([`DataFs`]).
    fn new_folder(&self) -> std::io::Result<(uuid::Uuid, PathBuf, u32)> {
        let guid = uuid::Uuid::new_v4();
        let folder = self.sessions_dir.join(guid.simple().to_string());
        let n = self.next_uid.fetch_add(1, Ordering::Relaxed);
        let uid = SESSION_UID_BASE + n % SESSION_UIDS;
        std::fs::create_dir_all(&folder)?;
        if self.sandbox.as_ref().is_some_and(Sandbox::drops_root) {
            use std::os::unix::fs::PermissionsExt;
            std::os::unix::fs::chown(&folder, Some(uid), Some(uid))?;
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700))?;
        }
        if let Err(e) = self
            .data_fs
            .mount(&folder, self.enforcer.limits().data_bytes, uid)
        {
            let _ = std::fs::remove_dir(&folder);
            return Err(e);
        }
        // The pool may have ended meanwhile (`kill_all` on another thread,
        // after it removed the folders): take this one, and the pool's folder it
        // made again, along.
        if self.processes.is_closed() {
            self.remove_folder(&folder);
            let _ = std::fs::remove_dir(&self.sessions_dir);
            return Err(std::io::Error::other("the pool is ending"));
        }
        Ok((guid, folder, uid))
    }

    /// Where the pool reaches the files of `session`'s `/mnt/data` (for the file
    /// routes): its folder, or the folder's tmpfs as the pool's namespace sees it
    /// ([`DataFs::view`]).
    pub fn files_of(&self, session: &Session) -> PathBuf {
        self.data_fs.view(&session.folder)
    }

    /// Removes a session folder (unmounting its tmpfs first, if it has one).
    fn remove_folder(&self, folder: &std::path::Path) {
        self.data_fs.unmount(folder);
        let _ = std::fs::remove_dir_all(folder);
    }

    /// Starts kernels in the background until `ready_sessions` are waiting (none
    /// once the pool is ending).
    pub fn refill(self: &Arc<Self>) {
        let mut refills = lock(&self.refills);
        while refills.try_join_next().is_some() {}
        loop {
            let have = lock(&self.ready).len() + self.starting.load(Ordering::SeqCst);
            if have >= self.ready_target || self.processes.is_closed() {
                return;
            }
            self.starting.fetch_add(1, Ordering::SeqCst);
            let me = self.clone();
            refills.spawn(async move {
                match me.new_folder() {
                    Ok((guid, folder, uid)) => {
                        match Kernel::start(&me.launch(folder.clone(), uid)).await {
                            Ok(mut kernel) => {
                                // The first cell a user runs then skips IPython's
                                // first-run costs (issue 27); invisible to the user.
                                if !kernel.warm_up().await {
                                    tracing::debug!("a ready kernel's warm-up did not finish");
                                }
                                lock(&me.ready).push(Ready {
                                    kernel,
                                    guid,
                                    folder,
                                    uid,
                                });
                            }
                            Err(e) => {
                                if !me.processes.is_closed() {
                                    tracing::warn!("a ready kernel failed to start: {e}");
                                }
                                me.remove_folder(&folder);
                            }
                        }
                    }
                    Err(e) => tracing::warn!("cannot create a session folder: {e}"),
                }
                me.starting.fetch_sub(1, Ordering::SeqCst);
            });
        }
    }

    /// How many started (and warmed) kernels wait for a new session now.
    pub fn ready_count(&self) -> usize {
        lock(&self.ready).len()
    }

    /// The session of `identifier` if it exists (touching it).
    pub fn get(&self, identifier: &str) -> Option<Arc<Session>> {
        let s = lock(&self.sessions).get(identifier).cloned();
        if let Some(s) = &s {
            s.touch();
        }
        s
    }

    /// Whether the session of `identifier` exists, without touching it (its
    /// idle time goes on).
    pub fn contains(&self, identifier: &str) -> bool {
        lock(&self.sessions).contains_key(identifier)
    }

    /// All sessions, oldest first.
    pub fn list(&self) -> Vec<Arc<Session>> {
        let mut all: Vec<_> = lock(&self.sessions).values().cloned().collect();
        all.sort_by_key(|s| s.created_at);
        all
    }

    /// The session of `identifier`, created if it does not exist (taking a ready
    /// kernel and its folder when one is waiting). Touches it.
    ///
    /// # Errors
    ///
    /// [`SessionError::PoolFull`] at the maximum number of sessions,
    /// [`SessionError::Io`] when the folder cannot be created.
    pub fn get_or_create(self: &Arc<Self>, identifier: &str) -> Result<Arc<Session>, SessionError> {
        let mut map = lock(&self.sessions);
        if let Some(s) = map.get(identifier) {
            s.touch();
            return Ok(s.clone());
        }
        if map.len() >= self.max_sessions {
            return Err(SessionError::PoolFull(self.max_sessions));
        }
        let ready = lock(&self.ready).pop();
        let (guid, folder, uid, kernel) = match ready {
            Some(r) => (r.guid, r.folder, r.uid, Some(r.kernel)),
            None => {
                let (guid, folder, uid) = self.new_folder()?;
                (guid, folder, uid, None)
            }
        };
        let now = Utc::now();
        let interrupter = kernel.as_ref().map(Kernel::interrupter);
        let session = Arc::new(Session {
            identifier: identifier.to_string(),
            guid,
            folder,
            uid,
            created_at: now,
            last_access: StdMutex::new(now),
            kernel: Mutex::new(kernel),
            interrupter: StdMutex::new(interrupter),
            executions: StdMutex::new(VecDeque::new()),
            files: super::files::changes::SessionFiles::default(),
        });
        map.insert(identifier.to_string(), session.clone());
        drop(map);
        tracing::info!(identifier, %guid, "session created");
        self.refill();
        Ok(session)
    }

    /// Runs `code` in `session`, waiting behind any execution already running
    /// there, and records it under `id`. A dead kernel is replaced by a fresh one
    /// first (the session's variables are then gone, as after a crash on the
    /// service).
    ///
    /// Always returns an execution: a kernel that cannot start gives a `Failed`
    /// execution naming why. It is the one the session keeps for `GET
    /// executions/{id}` (shared, not copied).
    pub async fn execute(
        &self,
        session: &Session,
        id: &str,
        code: &str,
        timeout: Duration,
    ) -> Arc<Execution> {
        let mut slot = session.kernel.lock().await;
        if slot.as_mut().is_some_and(Kernel::is_dead) {
            *slot = None;
        }
        if slot.is_none() {
            *lock(&session.interrupter) = None;
            match Kernel::start(&self.launch(session.folder.clone(), session.uid)).await {
                Ok(k) => *slot = Some(k),
                Err(e) => {
                    return Arc::new(failed(format!(
                        "cannot start a kernel for this session: {e}\n"
                    )));
                }
            }
        }
        let Some(kernel) = slot.as_mut() else {
            return Arc::new(failed("no kernel\n".into()));
        };
        *lock(&session.interrupter) = Some(kernel.interrupter());
        let mut exec = kernel.execute(code, timeout).await;
        exec.network = kernel.take_network();
        drop(slot);
        session.touch();
        exec.id = Some(id.to_string());
        let exec = Arc::new(exec);
        let jupyter = super::kernel::OutputLimits::current().jupyter;
        session.record(
            id,
            ExecutionRecord::Done {
                exec: Arc::clone(&exec),
                jupyter,
            },
        );
        exec
    }

    /// Interrupts the code running in the session of `identifier` (a
    /// `KeyboardInterrupt` is raised in it; the session keeps its state). Does not
    /// wait for the execution, whose lock it does not take. Returns false when
    /// there is no such session or kernel, or the kernel did not acknowledge.
    ///
    /// The service has no such call; the embedding TUI uses it on the local pool.
    pub async fn interrupt(&self, identifier: &str) -> bool {
        let Some(session) = lock(&self.sessions).get(identifier).cloned() else {
            return false;
        };
        let handle = lock(&session.interrupter).clone();
        match handle {
            Some(handle) => handle.interrupt().await,
            None => false,
        }
    }

    /// Tab completion in the session of `identifier`: the kernel's
    /// `complete_request` for `code` at `cursor` (code points). `None` when
    /// there is no such session. A kernel running code is not disturbed: the
    /// answer is then [`Completion::busy`] at once; a session whose kernel has
    /// not started yet gives no matches.
    ///
    /// The service has no such call; the local pool's `/.sessionpad/complete`.
    pub async fn complete(
        &self,
        identifier: &str,
        code: &str,
        cursor: usize,
    ) -> Option<Completion> {
        let session = lock(&self.sessions).get(identifier).cloned()?;
        session.touch();
        let Ok(mut slot) = session.kernel.try_lock() else {
            return Some(Completion::busy(cursor));
        };
        Some(match slot.as_mut() {
            Some(kernel) => kernel.complete(code, cursor, COMPLETE_WAIT).await,
            None => Completion {
                cursor_start: cursor,
                cursor_end: cursor,
                ..Completion::default()
            },
        })
    }

    /// Marks execution `id` as submitted (asynchronous executions).
    pub fn submitted(&self, session: &Session, id: &str) {
        session.record(id, ExecutionRecord::Running);
    }

    /// Ends the session of `identifier`: its kernel is stopped and its folder
    /// removed. Returns false when there was no such session.
    pub async fn end(&self, identifier: &str) -> bool {
        self.end_for(identifier, &axum::http::HeaderMap::new())
            .await
    }

    /// [`SessionRegistry::end`] asked by a client whose request carried
    /// `headers` (its `User-Agent` is recorded with the end).
    pub(crate) async fn end_for(&self, identifier: &str, headers: &axum::http::HeaderMap) -> bool {
        let removed = lock(&self.sessions).remove(identifier);
        match removed {
            Some(s) => {
                end(self, s, Cause::Client(headers)).await;
                true
            }
            None => false,
        }
    }

    /// Records each session's end in `recorder` under pool key `key` (kind
    /// `end`, with what changed in `/mnt/data` since its last call); set
    /// once, by the pool that has a ledger.
    pub(crate) fn record_ends(&self, recorder: crate::ledger::Recorder, key: &str) {
        let _ = self.ends.set((recorder, Arc::from(key)));
    }

    /// Ends every session whose last use is older than the cooldown and that is
    /// not executing; returns how many ended.
    pub async fn reap_idle(&self) -> usize {
        let cutoff = Utc::now() - chrono::Duration::from_std(self.cooldown).unwrap_or_default();
        let expired: Vec<Arc<Session>> = {
            let mut map = lock(&self.sessions);
            let ids: Vec<String> = map
                .iter()
                .filter(|(_, s)| s.last_accessed_at() < cutoff && s.kernel.try_lock().is_ok())
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| map.remove(id)).collect()
        };
        let n = expired.len();
        for s in expired {
            end(self, s, Cause::Cooldown).await;
        }
        n
    }

    /// Ends every session and ready kernel: kernels are stopped (those still
    /// starting too, and none starts afterwards) and folders removed.
    pub async fn shutdown(&self) {
        self.processes.close();
        let mut refills = std::mem::take(&mut *lock(&self.refills));
        refills.shutdown().await;
        let all: Vec<Arc<Session>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for s in all {
            end(self, s, Cause::Stopped).await;
        }
        let ready: Vec<Ready> = lock(&self.ready).drain(..).collect();
        for r in ready {
            r.kernel.shutdown().await;
            self.remove_folder(&r.folder);
        }
        let _ = std::fs::remove_dir_all(&self.runtime_root);
        let _ = super::data_fs::host::remove_pool_folder(&self.sessions_dir);
        let enforcer = self.enforcer.clone();
        let _ = tokio::task::spawn_blocking(move || enforcer.close()).await;
    }

    /// Kills every kernel process at once without waiting (for `Drop`): those of
    /// sessions, busy or not, of ready kernels and of kernels still starting. No
    /// kernel starts afterwards. Then removes the pool's session and runtime
    /// folders (the sessions' files go with the pool, as after
    /// [`SessionRegistry::shutdown`]).
    pub fn kill_all(&self) {
        self.processes.close();
        lock(&self.refills).abort_all();
        let _ = std::fs::remove_dir_all(&self.runtime_root);
        let _ = super::data_fs::host::remove_pool_folder(&self.sessions_dir);
    }
}

/// Why a session ends.
enum Cause<'a> {
    /// A client asked (`DELETE session`, `stopSession`), with its request's
    /// headers.
    Client(&'a axum::http::HeaderMap),
    /// It was idle past the cooldown.
    Cooldown,
    /// The pool stopped.
    Stopped,
}

async fn end(registry: &SessionRegistry, session: Arc<Session>, cause: Cause<'_>) {
    let handle = lock(&session.interrupter).take();
    // An execution holds the kernel: kill it so the session ends now rather
    // than when the code finishes (the execution reports the kernel's death).
    let mut kernel = match session.kernel.try_lock() {
        Ok(kernel) => kernel,
        Err(_) => {
            if let Some(handle) = &handle {
                handle.kill();
            }
            session.kernel.lock().await
        }
    };
    if let Some(k) = kernel.take() {
        k.shutdown().await;
    }
    drop(kernel);
    if let Some((recorder, key)) = registry.ends.get() {
        // What changed since the last call (a process still writing), seen
        // before the folder goes, recorded with the end.
        let ((), changes) = registry
            .noting_files(&session, super::files::changes::Order::Serial, async {})
            .await;
        let empty = axum::http::HeaderMap::new();
        let (headers, why) = match cause {
            Cause::Client(headers) => (headers, "the client ended it"),
            Cause::Cooldown => (&empty, "idle past the cooldown"),
            Cause::Stopped => (&empty, "the pool stopped"),
        };
        super::record::Recording::start_in(recorder, Arc::clone(key), headers, &session.identifier)
            .with_files(changes)
            .ended(why);
    }
    session.files.forget(&registry.watcher);
    registry.remove_folder(&session.folder);
    tracing::info!(identifier = %session.identifier, "session ended");
}

fn failed(stderr: String) -> Execution {
    Execution {
        execution_count: None,
        id: None,
        status: ExecutionStatus::Failed,
        stdout: String::new(),
        stderr,
        result: None,
        images: vec![],
        duration: Duration::ZERO,
        network: Vec::new(),
    }
}
