//! The local pool: an HTTP server on loopback that speaks the dynamic-sessions data
//! plane (`aca-api.md`) and runs each session in a real IPython kernel. It is the
//! embedded default of the TUI and what `sessionpad serve` offers other clients.
//! It knows nothing of the terminal.

pub mod activity;
mod cgroup;
pub mod cgroup_base;
mod complete;
pub mod data_fs;
pub mod egress;
pub mod events;
pub(crate) mod files;
pub mod housekeeping;
pub mod image;
pub mod interrupt;
pub mod kernel;
pub mod limits;
mod manage;
mod mcp_host;
pub mod node;
pub mod process;
pub(crate) mod record;
mod remembered;
pub mod runtime;
pub mod sandbox;
pub mod server;
pub mod sessions;
pub(crate) mod wire_error;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::protocol::Isolation;
pub use image::{ImageError, PythonEnv};
pub use sandbox::Sandbox;
pub use sessions::SessionRegistry;

/// Settings of a local pool.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// Address to bind; loopback unless the user says otherwise.
    pub bind: IpAddr,
    /// TCP port; 0 picks an ephemeral port.
    pub port: u16,
    /// Bearer token clients must send; `None` disables authentication (`--no-auth`).
    pub token: Option<String>,
    /// API key MCP clients must send in `x-ms-apikey` at the pool's `/mcp`
    /// route; `None` disables its authentication (`--no-auth`).
    pub mcp_key: Option<String>,
    /// An existing interpreter that has ipykernel (`--python`); `None` builds the
    /// pool's own environment in the cache directory.
    pub python: Option<PathBuf>,
    /// Which packages the built environment holds (`--image`, `[pool] image`;
    /// default [`image::Image::PythonLts`], like the service's image). Unused
    /// with `python`.
    pub image: image::Image,
    /// Cache directory (the Python environment lives below it).
    pub cache_dir: PathBuf,
    /// Folder under which each session gets its own `/mnt/data` folder.
    pub sessions_dir: PathBuf,
    /// Idle time after which a session ends (the pool's cooldown), seconds precision.
    pub cooldown: Duration,
    /// Upper bound of one execution's `timeoutInSeconds` (220 s like the service).
    pub max_execution: Duration,
    /// Most sessions at once (`--max-sessions`, default 100).
    pub max_sessions: usize,
    /// HTTP status when the pool is full: 404 (documented) or 429 (seen on custom
    /// pools), `aca-api.md` §6.2.
    pub pool_full_status: u16,
    /// Kernels kept started ahead of need (`--ready-sessions`, default 2).
    pub ready_sessions: usize,
    /// Run kernels in the sandbox (default true): then [`LocalPool::start`]
    /// fails with [`PoolError::NoSandbox`] where it cannot be built. `false` is
    /// the user's opt-in to kernels NOT isolated (`--no-sandbox`).
    pub sandbox: bool,
    /// Where sandboxed kernels may connect (`--egress`, `[pool] egress`;
    /// default off, like a pool with egress disabled): the host's network
    /// (`on`), or an allow-list or audit through the pool's proxy.
    pub egress: crate::protocol::egress::Egress,
    /// Per-session memory, process, `/tmp`, file size and CPU limits.
    pub limits: crate::protocol::limits::Limits,
    /// What the sessions run (`--container-type`): `PythonLTS` (an IPython
    /// kernel per session), `Shell` (shell commands, run by the same sandboxed
    /// kernel, see `assets/python/shell_session.py`) or `NodeLTS` (JavaScript
    /// in one `vm` context per session, a Node.js process the same kernel
    /// starts, see `assets/python/node_session.py`).
    pub container_type: crate::protocol::ContainerType,
    /// Where the pool records every execution and file call of its clients
    /// (the flight recorder's ledger, [`crate::ledger`]); `None` records
    /// nothing. [`PoolOptions::embedded`] leaves it `None`: the front ends set
    /// it from the config's `[ledger]`.
    pub ledger: Option<crate::ledger::LedgerOptions>,
    /// Emulate the service's limits (`serve --azure-limits`, `[pool]
    /// azure_limits`; off by default): a Shell pool cuts each of stdout and
    /// stderr at 4,096 bytes and still answers the exit code, and `GET
    /// metadata` lists every emulated limit with its source
    /// ([`crate::protocol::service_limits`]). Set it with
    /// [`PoolOptions::with_azure_limits`], which also takes the service's
    /// 429 for a full pool.
    pub azure_limits: bool,
}

impl PoolOptions {
    /// Defaults for an embedded pool: loopback, ephemeral port, a random token,
    /// folders below the cache and data directories.
    pub fn embedded() -> Self {
        Self {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            token: Some(random_token()),
            mcp_key: Some(random_token()),
            python: None,
            image: image::Image::default(),
            cache_dir: crate::dirs::cache_dir(),
            sessions_dir: crate::dirs::data_dir().join("pool-sessions"),
            cooldown: Duration::from_secs(300),
            max_execution: Duration::from_secs(220),
            max_sessions: 100,
            pool_full_status: 404,
            ready_sessions: 2,
            sandbox: true,
            egress: crate::protocol::egress::Egress::Off,
            limits: crate::protocol::limits::Limits::default(),
            container_type: crate::protocol::ContainerType::PythonLts,
            ledger: None,
            azure_limits: false,
        }
    }

    /// These options with the service's limits emulated ([`PoolOptions::azure_limits`]):
    /// a full pool answers the service's 429. The execution limit, the
    /// cooldown and the maximum of sessions keep their values (the service's
    /// 220 s and 300 s unless the user gave others).
    #[must_use]
    pub fn with_azure_limits(mut self) -> Self {
        self.azure_limits = true;
        self.pool_full_status = crate::protocol::service_limits::POOL_FULL_STATUS;
        self
    }

    /// The service's limits this pool emulates, each with its source; empty
    /// without [`PoolOptions::azure_limits`].
    pub fn service_limits(&self) -> Vec<crate::protocol::service_limits::ServiceLimit> {
        if !self.azure_limits {
            return Vec::new();
        }
        crate::protocol::service_limits::Emulated {
            container_type: self.container_type,
            max_execution_secs: self.max_execution.as_secs(),
            cooldown_secs: self.cooldown.as_secs(),
            max_sessions: self.max_sessions,
            pool_full_status: self.pool_full_status,
            max_upload: files::upload::MAX_UPLOAD,
        }
        .limits()
    }
}

/// A random bearer token: 32 hex characters from the OS random source.
pub fn random_token() -> String {
    use rand::RngExt;
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Errors starting a local pool.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The Python environment could not be built or found.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// The listening socket could not be opened.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The pool cannot run sessions of this container type.
    #[error(
        "the local pool runs PythonLTS, Shell and NodeLTS sessions, not {0} (use --container-type python, shell or node)"
    )]
    ContainerType(crate::protocol::ContainerType),
    /// The ledger could not be opened (damaged, of a newer schema, …).
    #[error(transparent)]
    Ledger(#[from] crate::ledger::LedgerError),
    /// An egress allow-list or audit was asked for sessions that would not be
    /// sandboxed: without their own network namespace nothing would make them
    /// use the proxy, so the policy would not hold.
    #[error(
        "egress {0} needs the sandbox (sessions with no route out but the pool's proxy); unsandboxed sessions have the host's network"
    )]
    EgressNeedsSandbox(String),
    /// Sessions would run NOT isolated and the user did not allow it
    /// ([`PoolOptions::sandbox`] is true): the sandbox cannot be built here.
    #[error(
        "{0}; set `sandbox = false` under [pool] in the config file (or `serve --no-sandbox`) to run them anyway"
    )]
    NoSandbox(sandbox::NoSandbox),
    /// A folder the pool needs could not be created.
    #[error("cannot create {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// What keeps the pool's sessions isolated, as in force: the sandbox's notes
/// (and why there are no cgroups, with its fix) and each limit's mechanism; or,
/// without a sandbox, the last of `warnings` (why not).
fn isolation(
    sandbox: Option<&Sandbox>,
    enforcer: &limits::Enforcer,
    data_fs: &data_fs::DataFs,
    warnings: &[String],
) -> Isolation {
    match sandbox {
        Some(s) => Isolation {
            unsandboxed: None,
            limits: enforcer.report(data_fs.mechanism()),
            notes: s
                .notes()
                .into_iter()
                .chain(enforcer.no_cgroups_note())
                .collect(),
        },
        None => Isolation {
            unsandboxed: warnings.last().cloned(),
            limits: enforcer.report(None),
            notes: Vec::new(),
        },
    }
}

/// This machine's sandbox for a pool with `opts`: `None` when the user turned
/// it off (said in `warnings`).
///
/// # Errors
///
/// [`PoolError::NoSandbox`] when it cannot be built and the user did not opt
/// in to sessions NOT isolated (the cause and its fix are logged).
fn detect_sandbox(
    opts: &PoolOptions,
    warnings: &mut Vec<String>,
) -> Result<Option<Sandbox>, PoolError> {
    match Sandbox::detect_with(opts.sandbox, opts.egress.clone()) {
        Ok(s) => Ok(Some(s)),
        Err(why) => {
            tracing::warn!("{why}");
            if let Some(fix) = why.fix() {
                tracing::warn!("to fix it, {fix}");
            }
            // Never unisolated unless the user said so.
            if opts.sandbox {
                return Err(PoolError::NoSandbox(why));
            }
            warnings.push(why.to_string());
            Ok(None)
        }
    }
}

/// A running local pool. Dropping it (or calling [`LocalPool::shutdown`]) stops the
/// server and ends every kernel.
pub struct LocalPool {
    addr: SocketAddr,
    token: Option<String>,
    mcp_key: Option<String>,
    registry: Arc<SessionRegistry>,
    warnings: Vec<String>,
    stop: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
    reaper: tokio::task::JoinHandle<()>,
    activity: Arc<activity::Activity>,
    ledger: Option<crate::ledger::Recorder>,
    /// The key its calls are recorded under.
    ledger_key: String,
    hub: crate::events::Hub,
}

impl std::fmt::Debug for LocalPool {
    /// The address and whether a token is required; never the token itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalPool")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("mcp_key", &self.mcp_key.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

/// Ends idle sessions every second until the registry is gone.
/// The recorder of the pool's calls, when `opts` asks for a ledger; it
/// publishes what it records on `hub`.
///
/// # Errors
///
/// When the ledger's database cannot be opened.
fn start_ledger(
    opts: &PoolOptions,
    hub: &crate::events::Hub,
) -> Result<Option<crate::ledger::Recorder>, PoolError> {
    Ok(match &opts.ledger {
        Some(l) => Some(crate::ledger::Recorder::start_publishing(
            &l.path,
            l.limits,
            hub.clone(),
        )?),
        None => None,
    })
}

/// How sandboxed sessions see `env` (nothing to bind without a sandbox).
///
/// # Errors
///
/// When Python cannot say where its folders are.
async fn python_view(
    sandboxed: bool,
    env: &image::PythonEnv,
) -> Result<sandbox::python_view::PythonView, PoolError> {
    if !sandboxed {
        return Ok(sandbox::python_view::PythonView::default());
    }
    let dirs = sandbox::binds::python_dirs(&env.prefixes().await?);
    Ok(sandbox::python_view::PythonView::new(&dirs, &env.python))
}

async fn reap_idle_sessions(registry: std::sync::Weak<SessionRegistry>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let Some(registry) = registry.upgrade() else {
            return;
        };
        let n = registry.reap_idle().await;
        if n > 0 {
            tracing::info!("{n} idle session(s) ended after the cooldown");
        }
    }
}

impl LocalPool {
    /// Prepares the Python environment (reporting each step of a first build to
    /// `progress` as one line of text), binds the listener and starts serving.
    ///
    /// # Errors
    ///
    /// [`PoolError::ContainerType`] for a container type it cannot run,
    /// [`PoolError::Image`] when no usable Python environment can be made,
    /// [`PoolError::Bind`] when the address is taken, [`PoolError::Folder`],
    /// [`PoolError::Ledger`] when `opts.ledger` names a ledger that cannot be
    /// opened.
    pub async fn start(
        opts: PoolOptions,
        progress: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<Self, PoolError> {
        use crate::protocol::ContainerType;
        if !matches!(
            opts.container_type,
            ContainerType::PythonLts | ContainerType::Shell | ContainerType::NodeLts
        ) {
            return Err(PoolError::ContainerType(opts.container_type));
        }
        // One hub for the event stream: recorded calls and running cells' output.
        let hub = crate::events::Hub::new();
        let ledger = start_ledger(&opts, &hub)?;
        let env = image::ensure(
            &opts.cache_dir,
            opts.python.as_deref(),
            opts.image,
            progress,
        )
        .await?;
        std::fs::create_dir_all(&opts.sessions_dir).map_err(|source| PoolError::Folder {
            path: opts.sessions_dir.clone(),
            source,
        })?;
        let addr = SocketAddr::new(opts.bind, opts.port);
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| PoolError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| PoolError::Bind { addr, source })?;
        let runtime_parent = std::env::temp_dir();
        let swept = housekeeping::sweep(&opts.sessions_dir, &runtime_parent);
        if swept > 0 {
            tracing::info!("removed {swept} folder(s) and cgroup(s) left by pools that are gone");
        }
        let mut warnings = Vec::new();
        let sandbox = detect_sandbox(&opts, &mut warnings)?.map(|s| s.with_pool_port(addr.port()));
        if sandbox.is_none() && opts.egress.proxied() {
            return Err(PoolError::EgressNeedsSandbox(opts.egress.to_string()));
        }
        let tag = housekeeping::pool_tag();
        // The holder's check (a sandboxed `true` in its namespace, as a user)
        // runs while Python reports its folders.
        let data_fs = tokio::task::spawn_blocking({
            let sandbox = sandbox.clone();
            move || data_fs::DataFs::detect(sandbox.as_ref())
        });
        let python_view = python_view(sandbox.is_some(), &env).await?;
        let enforcer = limits::Enforcer::new(opts.limits, &format!("sessionpad-{tag}"));
        let data_fs = data_fs.await.unwrap_or(data_fs::DataFs::Plain);
        let isolation = isolation(sandbox.as_ref(), &enforcer, &data_fs, &warnings);
        let confinement = sessions::Confinement {
            sandbox,
            python_view,
            enforcer,
            data_fs,
            isolation,
            tag,
        };
        let registry = Arc::new(SessionRegistry::new(env, confinement, &opts));
        registry.refill();
        let reaper = tokio::spawn(reap_idle_sessions(Arc::downgrade(&registry)));
        let activity = Arc::new(activity::Activity::default());
        let ledger_key =
            crate::protocol::record::local_pool_key(opts.container_type, &addr.to_string());
        if let Some(recorder) = &ledger {
            registry.record_ends(recorder.clone(), &ledger_key);
        }
        let app = server::router(
            registry.clone(),
            &opts,
            ledger.clone(),
            &ledger_key,
            hub.clone(),
        )
        .layer(axum::middleware::from_fn_with_state(
            activity.clone(),
            activity::track,
        ));
        let (stop, server) =
            crate::pool::server::run::serve_until_stopped(listener, app, "local pool server");
        tracing::info!(%addr, "local pool listening");
        Ok(Self {
            addr,
            token: opts.token,
            mcp_key: opts.mcp_key,
            registry,
            warnings,
            stop: Some(stop),
            server: Some(server),
            reaper,
            activity,
            ledger,
            ledger_key,
            hub,
        })
    }

    /// The key this pool's calls are recorded under in the ledger
    /// (`local/PythonLTS/127.0.0.1:41234`,
    /// [`crate::protocol::record::local_pool_key`]).
    pub fn ledger_key(&self) -> &str {
        &self.ledger_key
    }

    /// The pool management endpoint, e.g. `http://127.0.0.1:41234`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Things the user should know about this pool (e.g. sessions are not
    /// sandboxed), one sentence each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// What keeps this pool's sessions isolated (sandbox, limits), as in force.
    pub fn isolation(&self) -> &Isolation {
        self.registry.isolation()
    }

    /// The session registry (for tests and the embedding application).
    pub fn registry(&self) -> &Arc<SessionRegistry> {
        &self.registry
    }

    /// How long the pool has had no request: `None` while one is being
    /// answered, else the time since the last answer (or since the start).
    pub fn idle_for(&self) -> Option<Duration> {
        self.activity.idle_for()
    }

    /// The recorder of this pool's calls, when it records them.
    pub fn ledger(&self) -> Option<&crate::ledger::Recorder> {
        self.ledger.as_ref()
    }

    /// The hub of this pool's event stream ([`crate::events`]): recorded calls
    /// (when it records) and running cells' output.
    pub fn hub(&self) -> &crate::events::Hub {
        &self.hub
    }

    /// The bearer token clients must send, or `None` without authentication.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The pool's MCP endpoint (JSON-RPC over HTTP POST, `aca-api.md` §8),
    /// e.g. `http://127.0.0.1:41234/mcp`.
    pub fn mcp_endpoint(&self) -> String {
        format!("{}{}", self.endpoint(), crate::protocol::routes::MCP_ROUTE)
    }

    /// The API key MCP clients must send in `x-ms-apikey`, or `None` without
    /// authentication.
    pub fn mcp_key(&self) -> Option<&str> {
        self.mcp_key.as_deref()
    }

    /// Stops accepting requests, waits for the server task, ends every kernel
    /// and waits until the ledger holds every call recorded.
    pub async fn shutdown(mut self) {
        // Open event streams end, so the graceful end does not wait for them.
        self.hub.close();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
        self.reaper.abort();
        self.registry.shutdown().await;
        // Every call answered is in the ledger before the pool says it ended.
        if let Some(ledger) = self.ledger.clone() {
            let _ = tokio::task::spawn_blocking(move || ledger.flush()).await;
        }
    }
}

impl Drop for LocalPool {
    fn drop(&mut self) {
        self.hub.close();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.reaper.abort();
        self.registry.kill_all();
    }
}
