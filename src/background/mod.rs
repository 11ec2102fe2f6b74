//! The background local pool: what commands without an endpoint talk to, so that
//! a session's state outlives each command (`sessionpad exec -c 'x = 1'`, then
//! `sessionpad exec -c 'print(x)'` prints 1) with nothing to set up.
//!
//! There is one local pool per container type the local pool runs (Python,
//! Shell, Node.js), each with its own discovery file, lock and log
//! ([`discovery::file_stem`]): [`find_or_start`] reuses the local pool of the
//! asked container type that a running `sessionpad serve` publishes in its
//! discovery file (in the foreground, or the background one), else starts
//! `sessionpad serve --background --container-type …` detached from the
//! terminal (its own session, its output in `<data dir>/logs/local-pool.log`,
//! `local-pool-shell.log`, …). That serve is sandboxed as any serve is, and
//! refuses to start where the sandbox cannot be built unless the user opted in
//! (`[pool] sandbox = false`: then commands warn), and ends by itself after an idle
//! period (`[background_pool] idle_exit`, 15 minutes), removing its discovery
//! file first. Commands starting at once take a lock file, so one pool of a
//! type starts. [`stop`] ends one, [`stop_all`] every one (`sessionpad pool
//! stop`).
//!
//! The serve is started with the egress policy the command asks for
//! ([`StartOptions::egress`]: a profile's `egress`, else `[pool] egress`), and
//! publishes it; a running local pool with another policy is not used
//! ([`BackgroundError::EgressDiffers`] names both and how to end it), since
//! one pool of a type runs at a time and its sessions are the ones a directory
//! keeps between commands.
//!
//! This module knows no terminal: progress is reported through a callback, so
//! the CLI and the notebook can both attach to the same pool.

pub mod discovery;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use self::discovery::{Discovery, DiscoveryGuard, NotPublished};
use crate::protocol::ContainerType;
use crate::protocol::Isolation;
use crate::protocol::egress::Egress;

/// The container types the local pool runs, so the ones a background pool
/// can be started for, in the order [`stop_all`] goes through them.
pub const LOCAL_TYPES: [ContainerType; 3] = [
    ContainerType::PythonLts,
    ContainerType::Shell,
    ContainerType::NodeLts,
];

/// How long a started pool may take to publish itself once its Python
/// environment is ready (sandbox detection, the listener, one ready kernel).
const START_LIMIT: Duration = Duration::from_secs(120);

/// How long [`stop`] waits for the pool to end after SIGTERM.
const STOP_LIMIT: Duration = Duration::from_secs(30);

/// The log is moved aside (to `local-pool.log.1`) when a pool starts and it is
/// larger than this many bytes.
const LOG_ROTATE: u64 = 4 * 1024 * 1024;

/// The word naming a local pool's container type in messages, with a space
/// after it: empty for Python (the local pool's default), `shell `, `Node.js `.
pub fn kind_word(container_type: ContainerType) -> &'static str {
    match container_type {
        ContainerType::Shell => "shell ",
        ContainerType::NodeLts => "Node.js ",
        _ => "",
    }
}

/// How to start the background pool when none runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartOptions {
    /// The config file the serve reads (`[pool]` limits); `None` for the
    /// default place (or `$SESSIONPAD_CONFIG`).
    pub config: Option<PathBuf>,
    /// Time without a request after which the pool ends, also its sessions'
    /// cooldown (`[background_pool] idle_exit`).
    pub idle_exit: Duration,
    /// The packages of the Python environment built before the serve starts
    /// (`[pool] image`, which the serve reads from the same config file).
    pub image: crate::pool::image::Image,
    /// The egress policy asked for (a profile's `egress`, else `[pool]
    /// egress`): the serve is started with it (`--egress`; off when none is
    /// asked), and a running local pool with another is not used
    /// ([`BackgroundError::EgressDiffers`]). `None`: nothing asked, so a
    /// running pool of any policy is used (its isolation note names it).
    pub egress: Option<Egress>,
}

/// A running local pool that a command can reach.
#[derive(Debug, Clone)]
pub struct Found {
    /// The pool management endpoint, `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The bearer token to send, if the pool wants one.
    pub token: Option<String>,
    /// The serve's process id.
    pub pid: u32,
    /// The isolation of its sessions, as the serve published it.
    pub isolation: Option<Isolation>,
    /// True for the background pool, false for a serve run in the foreground.
    pub background: bool,
    /// What its sessions run.
    pub container_type: ContainerType,
    /// The egress policy it was started with (`None`: written by an older
    /// version, not known).
    pub egress: Option<Egress>,
    /// True when this call started it.
    pub started: bool,
}

impl Found {
    /// What the pool is, for messages: `local (background, pid N)`, or
    /// `local (serve, pid N)` for a serve run in the foreground (with the
    /// container type's word, `local shell (background, pid N)`).
    pub fn label(&self) -> String {
        let kind = kind_word(self.container_type);
        let how = if self.background {
            "background"
        } else {
            "serve"
        };
        format!("local {kind}({how}, pid {})", self.pid)
    }

    /// The line a front end says when it reached this pool: that it started it
    /// (with its pid, and how it ends: after `idle_exit` without a request, or
    /// on `sessionpad pool stop`), or attached to it. The command line and the
    /// notebook say the same words.
    pub fn reached_line(&self, idle_exit: Duration) -> String {
        let what = self.reached_what();
        if self.started {
            format!(
                "started the {what} (pid {}): it keeps sessions between commands and after \
                 the notebook quits, and ends after {} without a request, or on `sessionpad \
                 pool stop`",
                self.pid,
                human_duration(idle_exit)
            )
        } else {
            format!("attached to the {what} (pid {})", self.pid)
        }
    }

    fn from(d: Discovery, started: bool) -> Self {
        Self {
            endpoint: d.endpoint,
            token: d.token,
            pid: d.pid,
            isolation: d.isolation,
            background: d.background,
            container_type: d.container_type,
            egress: d.egress,
            started,
        }
    }

    /// This pool if its egress policy is `asked` (or not known: a discovery
    /// file of an older version).
    ///
    /// # Errors
    ///
    /// [`BackgroundError::EgressDiffers`], naming both policies and how to
    /// end the running pool.
    pub fn with_egress(self, asked: &Egress) -> Result<Self, BackgroundError> {
        match &self.egress {
            Some(running) if running != asked => Err(BackgroundError::EgressDiffers {
                what: self.reached_what(),
                pid: self.pid,
                running: running.clone(),
                asked: asked.clone(),
                stop: if self.background {
                    "end it with `sessionpad pool stop` (its sessions end too)".to_string()
                } else {
                    format!(
                        "stop it where it runs (Ctrl+C) or with `kill {}` (or give --endpoint \
                         and its token to use it as it is)",
                        self.pid
                    )
                },
            }),
            _ => Ok(self),
        }
    }

    /// `background local pool` or `local pool (a sessionpad serve)`, with the
    /// container type's word.
    fn reached_what(&self) -> String {
        let kind = kind_word(self.container_type);
        if self.background {
            format!("background local {kind}pool")
        } else {
            format!("local {kind}pool (a sessionpad serve)")
        }
    }
}

/// Why no background pool could be had.
#[derive(Debug, thiserror::Error)]
pub enum BackgroundError {
    /// The Python environment of the local pool could not be prepared.
    #[error("preparing the local pool's Python environment: {0}")]
    Environment(#[from] crate::pool::ImageError),
    /// A file or process operation failed (the text says which).
    #[error("{action}: {source}")]
    Io {
        /// What was being done.
        action: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The started serve ended (or did not publish itself in time) without
    /// becoming reachable; the end of its log says why.
    #[error("the background local pool did not start ({why}); its log {log}:\n{tail}")]
    NotStarted {
        /// What was seen: its exit status, or the time waited.
        why: String,
        /// The log file.
        log: String,
        /// The last lines of the log.
        tail: String,
    },
    /// The running local pool is a serve in the foreground, which
    /// [`stop`] leaves alone.
    #[error(
        "the local pool is a `sessionpad serve` run in the foreground (pid {pid}), not the \
         background pool: stop it where it runs (Ctrl+C) or with `kill {pid}`"
    )]
    Foreground {
        /// Its process id.
        pid: u32,
    },
    /// The local pool cannot run sessions of this container type (it runs
    /// Python, Shell and Node.js ones).
    #[error(
        "the local pool runs PythonLTS, Shell and NodeLTS sessions, not {0}: give an endpoint \
         (--endpoint, a profile) for a pool of that type, or use --container-type python, \
         shell or node"
    )]
    ContainerType(ContainerType),
    /// The running local pool's sessions have another egress policy than the
    /// one asked for: it is not used, so that no cell runs under a policy it
    /// did not ask for.
    #[error(
        "the running {what}, pid {pid}, has egress {running}, but egress {asked} is asked for \
         (the profile's egress, else [pool] egress, else off): to run under egress {asked}, \
         {stop}, then run this again"
    )]
    EgressDiffers {
        /// `background local pool` or `local pool (a sessionpad serve)`.
        what: String,
        /// Its process id.
        pid: u32,
        /// Its policy.
        running: Egress,
        /// The policy asked for.
        asked: Egress,
        /// How to end it.
        stop: String,
    },
    /// The pool did not end within the wait after SIGTERM.
    #[error("the background local pool (pid {pid}) did not end within {secs} s")]
    StillRunning {
        /// Its process id.
        pid: u32,
        /// Seconds waited.
        secs: u64,
    },
}

fn io(action: impl Into<String>) -> impl FnOnce(std::io::Error) -> BackgroundError {
    let action = action.into();
    move |source| BackgroundError::Io { action, source }
}

/// The log of the background pool running `container_type`:
/// `<data dir>/logs/local-pool.log` for Python, `local-pool-shell.log`, …
pub fn log_path(container_type: ContainerType) -> PathBuf {
    crate::dirs::data_dir()
        .join("logs")
        .join(format!("{}.log", discovery::file_stem(container_type)))
}

/// The running local pool of `container_type`, if any: the one a live serve
/// published (foreground or background). Never starts anything.
pub fn find(container_type: ContainerType) -> Option<Found> {
    Discovery::find(container_type).map(|d| Found::from(d, false))
}

/// As [`find`], for a command that asks for the egress policy of `opts`.
///
/// # Errors
///
/// [`BackgroundError::EgressDiffers`] when the running pool has another
/// policy ([`Found::with_egress`]).
pub fn find_for(
    opts: &StartOptions,
    container_type: ContainerType,
) -> Result<Option<Found>, BackgroundError> {
    find(container_type)
        .map(|found| match &opts.egress {
            Some(asked) => found.with_egress(asked),
            None => Ok(found),
        })
        .transpose()
}

/// Finds the running local pool of `container_type`, or starts the background
/// one (`serve --background --container-type …`) and waits until it is
/// reachable ([`Found::started`] says which). `progress` gets one line of text
/// per step of a first build of the Python environment (it takes minutes).
///
/// Commands starting at once serialise on `<data dir>/local-pool.lock`
/// (`local-pool-shell.lock`, …), so one pool of a type starts and the others
/// find it.
///
/// # Errors
///
/// [`BackgroundError::ContainerType`] for a type the local pool cannot run;
/// [`BackgroundError::EgressDiffers`] when the running one has another egress
/// policy than `opts` asks for;
/// [`BackgroundError::Environment`] when the Python environment cannot be
/// built; [`BackgroundError::Io`] when the data directory, lock, log or process
/// cannot be made; [`BackgroundError::NotStarted`] with the end of its log when
/// the serve ends or does not publish itself within two minutes.
pub async fn find_or_start(
    opts: &StartOptions,
    container_type: ContainerType,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<Found, BackgroundError> {
    if !LOCAL_TYPES.contains(&container_type) {
        return Err(BackgroundError::ContainerType(container_type));
    }
    if let Some(found) = find_for(opts, container_type)? {
        return Ok(found);
    }
    let data = crate::dirs::data_dir();
    crate::dirs::create_private(&data.join("logs"))
        .map_err(io(format!("creating {}", data.display())))?;
    let stem = discovery::file_stem(container_type);
    let lock = lock(&data.join(format!("{stem}.lock"))).await?;
    // Another command may have started it while this one waited for the lock.
    if let Some(found) = find_for(opts, container_type)? {
        return Ok(found);
    }
    // Built here, in front of the person waiting, not in the detached serve.
    crate::pool::image::ensure(&crate::dirs::cache_dir(), None, opts.image, progress).await?;
    let mut child = spawn(opts, container_type)?;
    let result = wait_published(&mut child, container_type).await;
    drop(lock);
    // Another serve that won a race may have another policy.
    result.and_then(|d| {
        let found = Found::from(d, true);
        match &opts.egress {
            Some(asked) => found.with_egress(asked),
            None => Ok(found),
        }
    })
}

/// Takes the exclusive lock on `path` (created if missing), waiting for another
/// command that holds it; released when the returned file is dropped.
async fn lock(path: &Path) -> Result<std::fs::File, BackgroundError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io(format!("opening {}", path.display())))?;
    let shown = path.display().to_string();
    tokio::task::spawn_blocking(move || file.lock().map(|()| file))
        .await
        .map_err(|e| BackgroundError::Io {
            action: format!("locking {shown}"),
            source: std::io::Error::other(e),
        })?
        .map_err(io(format!("locking {}", path.display())))
}

/// Starts `sessionpad serve --background --container-type …` in a session of
/// its own (no controlling terminal: closing the terminal or Ctrl+C does not
/// reach it), standard input from `/dev/null`, its output appended to
/// [`log_path`].
fn spawn(
    opts: &StartOptions,
    container_type: ContainerType,
) -> Result<std::process::Child, BackgroundError> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    let log = log_path(container_type);
    if std::fs::metadata(&log).is_ok_and(|m| m.len() > LOG_ROTATE) {
        let _ = std::fs::rename(&log, log.with_extension("log.1"));
    }
    // Readable by this user only, as the data directory's other files.
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&log)
        .map_err(io(format!("opening {}", log.display())))?;
    let err = out
        .try_clone()
        .map_err(io(format!("opening {}", log.display())))?;
    let exe = std::env::current_exe().map_err(io("finding the sessionpad executable"))?;
    // A daemon keeps no folder of the command busy: it runs in `/`, so every
    // path it is given must be absolute.
    let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
    let secs = opts.idle_exit.as_secs().max(1).to_string();
    let mut cmd = std::process::Command::new(exe);
    cmd.args([
        "serve",
        "--background",
        "--port",
        "0",
        "--ready-sessions",
        "1",
    ])
    .args(["--idle-exit", &secs, "--cooldown", &secs])
    .args(["--container-type", container_type.arm_name()])
    .arg(format!(
        "--egress={}",
        opts.egress.clone().unwrap_or_default()
    ));
    if let Some(config) = &opts.config {
        cmd.arg("--config").arg(absolute(config.clone()));
    }
    if let Some(config) = std::env::var_os("SESSIONPAD_CONFIG").filter(|c| !c.is_empty()) {
        cmd.env("SESSIONPAD_CONFIG", absolute(config.into()));
    }
    // The serve picks its own random token; these name other pools.
    cmd.env_remove("SESSIONPAD_TOKEN")
        .env_remove("POOL_MANAGEMENT_ENDPOINT")
        .env("SESSIONPAD_DATA_DIR", absolute(crate::dirs::data_dir()))
        .env("SESSIONPAD_CACHE_DIR", absolute(crate::dirs::cache_dir()))
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err);
    // SAFETY: setsid(2) is async-signal-safe and touches no memory of the
    // parent; it only fails when the child already leads a process group,
    // which a freshly forked child never does.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)
        });
    }
    cmd.spawn()
        .map_err(io("starting sessionpad serve --background"))
}

/// Waits until a live serve publishes the discovery file of `container_type`
/// (normally the one just started; another serve that won a race is as good).
async fn wait_published(
    child: &mut std::process::Child,
    container_type: ContainerType,
) -> Result<Discovery, BackgroundError> {
    let start = Instant::now();
    loop {
        if let Some(found) = Discovery::find(container_type) {
            return Ok(found);
        }
        let status = child
            .try_wait()
            .map_err(io("waiting for sessionpad serve --background"))?;
        let why = match status {
            Some(status) => Some(format!("it exited with {status}")),
            None if start.elapsed() > START_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                Some(format!("not reachable after {} s", START_LIMIT.as_secs()))
            }
            None => None,
        };
        if let Some(why) = why {
            let log = log_path(container_type);
            return Err(BackgroundError::NotStarted {
                why,
                tail: tail(&log, 12),
                log: log.display().to_string(),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The last `n` lines of the file at `path` (empty when unreadable).
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// What [`stop`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// No local pool was running.
    NoneRunning,
    /// The background pool with this process id ended.
    Ended(u32),
}

/// Ends every background local pool ([`LOCAL_TYPES`], one after the other,
/// as [`stop`] does), returning what happened to each type's.
pub async fn stop_all() -> Vec<(ContainerType, Result<Stopped, BackgroundError>)> {
    let mut done = Vec::new();
    for container_type in LOCAL_TYPES {
        done.push((container_type, stop(container_type).await));
    }
    done
}

/// Ends the background local pool of `container_type`: SIGTERM (it removes its
/// discovery file and ends its kernels, as a serve does on Ctrl+C), then waits
/// for it to go.
///
/// # Errors
///
/// [`BackgroundError::Foreground`] when the running local pool is a serve in
/// the foreground (left alone); [`BackgroundError::Io`] when the signal cannot
/// be sent; [`BackgroundError::StillRunning`] after 30 s.
pub async fn stop(container_type: ContainerType) -> Result<Stopped, BackgroundError> {
    let Some(found) = find(container_type) else {
        return Ok(Stopped::NoneRunning);
    };
    if !found.background {
        return Err(BackgroundError::Foreground { pid: found.pid });
    }
    let pid =
        rustix::process::Pid::from_raw(i32::try_from(found.pid).unwrap_or(0)).ok_or_else(|| {
            BackgroundError::Io {
                action: format!("stopping pid {}", found.pid),
                source: std::io::Error::other("not a process id"),
            }
        })?;
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).map_err(|e| {
        BackgroundError::Io {
            action: format!("stopping the background local pool (pid {})", found.pid),
            source: e.into(),
        }
    })?;
    let start = Instant::now();
    while running(found.pid) {
        if start.elapsed() > STOP_LIMIT {
            return Err(BackgroundError::StillRunning {
                pid: found.pid,
                secs: STOP_LIMIT.as_secs(),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(Stopped::Ended(found.pid))
}

/// Whether `pid` is a process that has not ended (a zombie has ended: its
/// parent, the command that started it, has just not reaped it).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// The local pool's isolation for a first frame: the running background
/// pool's, else what the one about to be started will say
/// ([`expected_isolation`]); and whether the running one has no sandbox but
/// this machine can build one now (it was fixed, or the pool was started with
/// `--no-sandbox`), so that the front end can say how to restart it.
pub async fn isolation_for(container_type: ContainerType) -> (Option<Isolation>, bool) {
    let Some(found) = find(container_type) else {
        return (expected_isolation().await, false);
    };
    let unsandboxed = found.isolation.as_ref().is_some_and(|i| !i.is_sandboxed());
    let could = unsandboxed && can_sandbox_now().await;
    (found.isolation, could)
}

/// Whether this machine can sandbox a local pool's sessions now (the same
/// detection a pool runs as it starts; a few ms, on a blocking thread).
pub async fn can_sandbox_now() -> bool {
    tokio::task::spawn_blocking(|| crate::pool::Sandbox::detect(true, false).is_ok())
        .await
        .unwrap_or(false)
}

/// What a background local pool started now will say of its isolation (it
/// detects the same way as it starts), so a first frame says whether sessions
/// are sandboxed; the limits are known once the pool runs and reports its own.
/// `None` when the detection itself failed (logged).
pub async fn expected_isolation() -> Option<Isolation> {
    let detected = tokio::task::spawn_blocking(|| crate::pool::Sandbox::detect(true, false)).await;
    match detected {
        Ok(Ok(sandbox)) => Some(Isolation {
            unsandboxed: None,
            limits: Vec::new(),
            notes: sandbox.notes(),
        }),
        Ok(Err(why)) => Some(Isolation::unsandboxed(why.to_string())),
        Err(e) => {
            tracing::error!("sandbox detection failed: {e}");
            None
        }
    }
}

/// A duration for people: `15 min`, `90 s`.
pub fn human_duration(d: Duration) -> String {
    match d.as_secs() {
        s if s >= 60 && s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(egress: Option<&str>, background: bool) -> Found {
        Found {
            endpoint: "http://127.0.0.1:9".into(),
            token: None,
            pid: 4242,
            isolation: None,
            background,
            container_type: ContainerType::Shell,
            egress: egress.map(|e| e.parse().unwrap()),
            started: false,
        }
    }

    #[test]
    fn a_running_pool_with_another_egress_policy_is_not_used() {
        let audit = Egress::Audit;
        assert!(found(Some("audit"), true).with_egress(&audit).is_ok());
        // An older discovery file does not say: used as before.
        assert!(found(None, true).with_egress(&audit).is_ok());
        let e = found(Some("allow=pypi.org:443,*.github.com"), true)
            .with_egress(&Egress::Off)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "the running background local shell pool, pid 4242, has egress \
                 allow=pypi.org:443,*.github.com, but egress off is asked for"
            ),
            "{e}"
        );
        assert!(e.contains("`sessionpad pool stop`"), "{e}");
        let e = found(Some("on"), false)
            .with_egress(&audit)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(a sessionpad serve), pid 4242, has egress on"),
            "{e}"
        );
        assert!(e.contains("`kill 4242`") && !e.contains("pool stop"), "{e}");
    }
}
