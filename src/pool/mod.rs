//! The local pool: an HTTP server on loopback that speaks the dynamic-sessions data
//! plane (`aca-api.md`) and runs each session in a real IPython kernel. It is the
//! embedded default of the TUI and what `sessionpad serve` offers other clients.
//! It knows nothing of the terminal.

pub mod image;
pub mod kernel;
pub mod server;
pub mod sessions;
mod wire_error;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use image::{ImageError, PythonEnv};
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
    /// An existing interpreter that has ipykernel (`--python`); `None` builds the
    /// pool's own environment in the cache directory.
    pub python: Option<PathBuf>,
    /// Cache directory (the Python environment lives below it).
    pub cache_dir: PathBuf,
    /// Folder under which each session gets its own `/mnt/data` folder.
    pub sessions_dir: PathBuf,
    /// Idle time after which a session ends (the pool's cooldown), seconds precision.
    pub cooldown: Duration,
    /// Upper bound of one execution's `timeoutInSeconds` (220 s like the service).
    pub max_execution: Duration,
}

impl PoolOptions {
    /// Defaults for an embedded pool: loopback, ephemeral port, a random token,
    /// folders below the cache and data directories.
    pub fn embedded() -> Self {
        Self {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            token: Some(random_token()),
            python: None,
            cache_dir: crate::dirs::cache_dir(),
            sessions_dir: crate::dirs::data_dir().join("pool-sessions"),
            cooldown: Duration::from_secs(300),
            max_execution: Duration::from_secs(220),
        }
    }
}

/// A random bearer token: 32 hex characters from the OS random source.
pub fn random_token() -> String {
    use rand::Rng;
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

/// A running local pool. Dropping it (or calling [`LocalPool::shutdown`]) stops the
/// server and ends every kernel.
pub struct LocalPool {
    addr: SocketAddr,
    token: Option<String>,
    registry: Arc<SessionRegistry>,
    stop: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl LocalPool {
    /// Prepares the Python environment (reporting each step of a first build to
    /// `progress` as one line of text), binds the listener and starts serving.
    ///
    /// Errors: [`PoolError::Image`] when no usable Python environment can be made,
    /// [`PoolError::Bind`] when the address is taken, [`PoolError::Folder`].
    pub async fn start(
        opts: PoolOptions,
        progress: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<Self, PoolError> {
        let env = image::ensure(&opts.cache_dir, opts.python.as_deref(), progress).await?;
        std::fs::create_dir_all(&opts.sessions_dir).map_err(|source| PoolError::Folder {
            path: opts.sessions_dir.clone(),
            source,
        })?;
        let addr = SocketAddr::new(opts.bind, opts.port);
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| PoolError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| PoolError::Bind { addr, source })?;
        let registry = Arc::new(SessionRegistry::new(env, &opts));
        let app = server::router(registry.clone(), opts.token.clone(), opts.max_execution);
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            if let Err(e) = axum::serve(listener, app).with_graceful_shutdown(shutdown).await {
                tracing::error!("local pool server stopped: {e}");
            }
        });
        tracing::info!(%addr, "local pool listening");
        Ok(Self {
            addr,
            token: opts.token,
            registry,
            stop: Some(stop),
            server: Some(server),
        })
    }

    /// The pool management endpoint, e.g. `http://127.0.0.1:41234`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bearer token clients must send, or `None` without authentication.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Stops accepting requests, waits for the server task and ends every kernel.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
        self.registry.shutdown().await;
    }
}

impl Drop for LocalPool {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.registry.kill_all();
    }
}
