//! The session registry of the local pool: one session per identifier, created on
//! first use, each with its own kernel and `/mnt/data` folder; one execution at a
//! time per session (others wait their turn); idle sessions end after the cooldown.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::Mutex;

use super::PoolOptions;
use super::image::PythonEnv;
use super::kernel::{Kernel, KernelLaunch};
use crate::client::{Execution, ExecutionStatus};

/// One session: an identifier's kernel and folder.
pub struct Session {
    /// The session identifier clients use.
    pub identifier: String,
    /// A unique id of this session instance (a new one after the old one ended).
    pub guid: uuid::Uuid,
    /// The session's `/mnt/data` folder on this machine.
    pub folder: PathBuf,
    /// When the session was created.
    pub created_at: DateTime<Utc>,
    last_access: StdMutex<DateTime<Utc>>,
    /// The kernel; `None` until the first execution starts one, and again after
    /// it died. The lock also serialises executions.
    kernel: Mutex<Option<Kernel>>,
}

impl Session {
    /// When the session was last used.
    pub fn last_accessed_at(&self) -> DateTime<Utc> {
        *self.last_access.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn touch(&self) {
        *self.last_access.lock().unwrap_or_else(|e| e.into_inner()) = Utc::now();
    }
}

/// All sessions of the local pool.
pub struct SessionRegistry {
    env: PythonEnv,
    sessions_dir: PathBuf,
    runtime_root: PathBuf,
    cooldown: Duration,
    sessions: StdMutex<HashMap<String, Arc<Session>>>,
    next_kernel: AtomicU64,
}

impl SessionRegistry {
    /// A registry whose kernels run in `env`, with folders below
    /// `opts.sessions_dir` and the cooldown `opts.cooldown`.
    pub fn new(env: PythonEnv, opts: &PoolOptions) -> Self {
        let tag = uuid::Uuid::new_v4().simple().to_string();
        Self {
            env,
            sessions_dir: opts.sessions_dir.clone(),
            // Short on purpose: IPC socket paths must stay under ~100 bytes.
            runtime_root: std::env::temp_dir().join(format!("sp-{}", &tag[..8])),
            cooldown: opts.cooldown,
            sessions: StdMutex::new(HashMap::new()),
            next_kernel: AtomicU64::new(0),
        }
    }

    /// The idle time after which a session ends.
    pub fn cooldown(&self) -> Duration {
        self.cooldown
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session of `identifier`, created (with an empty folder) if it does not
    /// exist. Touches it. Errors: the folder cannot be created.
    pub fn get_or_create(&self, identifier: &str) -> std::io::Result<Arc<Session>> {
        let mut map = self.map();
        if let Some(s) = map.get(identifier) {
            s.touch();
            return Ok(s.clone());
        }
        let guid = uuid::Uuid::new_v4();
        let folder = self.sessions_dir.join(guid.simple().to_string());
        std::fs::create_dir_all(&folder)?;
        let now = Utc::now();
        let session = Arc::new(Session {
            identifier: identifier.to_string(),
            guid,
            folder,
            created_at: now,
            last_access: StdMutex::new(now),
            kernel: Mutex::new(None),
        });
        map.insert(identifier.to_string(), session.clone());
        tracing::info!(identifier, %guid, "session created");
        Ok(session)
    }

    /// Runs `code` in the session of `identifier` (creating it, and its kernel, on
    /// first use), waiting behind any execution already running there.
    ///
    /// Always returns an execution: a kernel that cannot start gives a `Failed`
    /// execution naming why.
    pub async fn execute(&self, identifier: &str, code: &str, timeout: Duration) -> Execution {
        let session = match self.get_or_create(identifier) {
            Ok(s) => s,
            Err(e) => return failed(format!("cannot create the session folder: {e}\n")),
        };
        let mut slot = session.kernel.lock().await;
        if slot.as_mut().is_some_and(Kernel::is_dead) {
            *slot = None;
        }
        if slot.is_none() {
            let n = self.next_kernel.fetch_add(1, Ordering::Relaxed);
            let launch = KernelLaunch {
                env: self.env.clone(),
                workdir: session.folder.clone(),
                runtime_dir: self.runtime_root.join(n.to_string()),
            };
            match Kernel::start(&launch).await {
                Ok(k) => *slot = Some(k),
                Err(e) => return failed(format!("cannot start a kernel for this session: {e}\n")),
            }
        }
        let Some(kernel) = slot.as_mut() else {
            return failed("no kernel\n".into());
        };
        let exec = kernel.execute(code, timeout).await;
        session.touch();
        exec
    }

    /// Ends every session whose last use is older than the cooldown; returns how
    /// many ended.
    pub async fn reap_idle(&self) -> usize {
        let cutoff = Utc::now() - chrono::Duration::from_std(self.cooldown).unwrap_or_default();
        let expired: Vec<Arc<Session>> = {
            let mut map = self.map();
            let ids: Vec<String> = map
                .iter()
                .filter(|(_, s)| s.last_accessed_at() < cutoff && s.kernel.try_lock().is_ok())
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| map.remove(id)).collect()
        };
        let n = expired.len();
        for s in expired {
            end(s).await;
        }
        n
    }

    /// Ends every session: kernels are stopped and folders removed.
    pub async fn shutdown(&self) {
        let all: Vec<Arc<Session>> = self.map().drain().map(|(_, s)| s).collect();
        for s in all {
            end(s).await;
        }
        let _ = std::fs::remove_dir_all(&self.runtime_root);
    }

    /// Kills every kernel at once without waiting (for `Drop`).
    pub fn kill_all(&self) {
        for s in self.map().values() {
            if let Ok(mut k) = s.kernel.try_lock() {
                if let Some(k) = k.as_mut() {
                    k.kill();
                }
            }
        }
    }
}

async fn end(session: Arc<Session>) {
    if let Some(k) = session.kernel.lock().await.take() {
        k.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&session.folder);
    tracing::info!(identifier = %session.identifier, "session ended");
}

fn failed(stderr: String) -> Execution {
    Execution {
        id: None,
        status: ExecutionStatus::Failed,
        stdout: String::new(),
        stderr,
        result: None,
        images: vec![],
        duration: Duration::ZERO,
    }
}
