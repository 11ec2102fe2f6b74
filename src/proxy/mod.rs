//! The recording proxy (`sessionpad serve --upstream ENDPOINT`, issue 13): an
//! HTTP server on loopback that agents use as their pool management endpoint,
//! with the proxy's own bearer token. It forwards every request, whatever its
//! path (both execution families and their polling, both file families,
//! `.management/*`, `metadata`, `session`, `listSessions`, a custom container's
//! own paths, `aca-api.md` §3–§5), method, api-version, query string and
//! headers, to the upstream pool with a real Entra token from sessionpad's own
//! auth ([`crate::client::auth::TokenSource`], scope `SCOPE`), so the agent
//! needs no Azure credential. The agent's `Authorization` never leaves the
//! proxy. Bodies stream both ways (files are never held whole); executions,
//! uploads, downloads and deletes are recorded in the flight recorder's ledger
//! through the local pool's [`crate::pool::record::Recording`] API, under the
//! upstream endpoint as pool key. An asynchronous execution is recorded when
//! it finishes, even when the agent never polls it: the proxy polls the
//! upstream itself ([`watch`]). An execution, upload or delete whose agent
//! goes away before the answer (its timeout, a closed connection) still goes
//! through: it runs on a task of its own, and is recorded when the upstream
//! answers, marked as answered to nobody (`client_gone`, issue 26; see
//! [`forward`]).
//!
//! Where the upstream cannot be reached, no token can be had, or the upstream
//! refuses the proxy's token (401, 403), the agent gets the service's error
//! shape (`aca-api.md` §6.1) with a message saying what to fix on the proxy's
//! side ([`forward`]).
//!
//! After each execution the proxy lists the session's files and records
//! what the execution changed in `/mnt/data`, with the bytes of the changed
//! files within the ledger's budget ([`files`], issue 26), so what an agent
//! left outlives the session on the service too; `--no-record-files` or
//! `[ledger] files = false` turns it off.
//!
//! `/mcp` (a sessionpad upstream's MCP server, `aca-api.md` §8) is forwarded
//! as it is, with the agent's `x-ms-apikey` and without the proxy's bearer
//! token: an MCP client sends only that key, which is the upstream's own (the
//! Entra token does not open it), and MCP calls are not recorded. Azure's
//! platform MCP server has an endpoint of its own (`mcpServerEndpoint`), not a
//! path below the pool management endpoint, so it is not reached through the
//! proxy at all.

mod files;
mod forward;
mod record;
mod route;
mod tap;
mod watch;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;

use crate::client::auth::TokenSource;
use crate::ledger::{LedgerOptions, Recorder};

/// How to start a [`Proxy`].
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// The upstream pool management endpoint (Azure's, or another pool's), an
    /// `http` or `https` URL; a trailing `/` is ignored.
    pub upstream: String,
    /// Where the upstream's tokens come from (`auth = …` of the profile or
    /// flags; a static token from `token-env`).
    pub tokens: TokenSource,
    /// The address to bind (loopback unless told otherwise).
    pub bind: IpAddr,
    /// The port (0 picks a free one).
    pub port: u16,
    /// The bearer token agents must send the proxy; `None` accepts any
    /// request (`--no-auth`).
    pub token: Option<String>,
    /// Where calls are recorded; `None` records nothing.
    pub ledger: Option<LedgerOptions>,
}

/// Why a proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The upstream is not an `http(s)` URL.
    #[error("invalid upstream endpoint {endpoint:?}: {reason}")]
    Upstream {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The ledger could not be opened.
    #[error(transparent)]
    Ledger(#[from] crate::ledger::LedgerError),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// State the forwarding handler shares.
pub(crate) struct Shared {
    /// The upstream endpoint without a trailing `/`.
    pub(crate) upstream: String,
    /// The pool key calls are recorded under (the upstream endpoint as given).
    pub(crate) pool_key: Arc<str>,
    /// The HTTP client to the upstream (no overall timeout: an execution may
    /// take 220 s and a file as long as it takes).
    pub(crate) http: reqwest::Client,
    /// The upstream's tokens.
    pub(crate) tokens: TokenSource,
    /// Where calls are recorded.
    pub(crate) ledger: Option<Recorder>,
    /// Asynchronous executions waiting for their finished answer.
    pub(crate) pending: record::PendingMap,
    /// The looks at the sessions' files after executions (`None`: files are
    /// not recorded: no ledger, `[ledger] files = false` or
    /// `--no-record-files`).
    pub(crate) files: Option<files::ProxyFiles>,
    /// The tasks that record calls (a look at files first, which takes a
    /// listing and downloads): [`Proxy::shutdown`] waits for them, at most
    /// [`RECORD_WAIT`].
    pub(crate) recording: tokio_util::task::TaskTracker,
}

/// Longest wait of [`Proxy::shutdown`] for the calls still being recorded.
const RECORD_WAIT: Duration = Duration::from_secs(60);

/// Longest wait for the upstream to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A running recording proxy; [`Proxy::shutdown`] stops it and flushes the
/// ledger (dropping it stops the server without waiting).
pub struct Proxy {
    addr: SocketAddr,
    token: Option<String>,
    upstream: String,
    auth: String,
    ledger: Option<Recorder>,
    files_budget: Option<u64>,
    recording: tokio_util::task::TaskTracker,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    /// Opens the ledger, binds the address and starts serving.
    ///
    /// # Errors
    ///
    /// [`ProxyError`]: an upstream that is not an `http(s)` URL, an address
    /// that cannot be bound, a ledger that cannot be opened.
    pub async fn start(opts: ProxyOptions) -> Result<Self, ProxyError> {
        let upstream = check_upstream(&opts.upstream)?;
        let ledger = match &opts.ledger {
            Some(l) => Some(Recorder::start(&l.path, l.limits)?),
            None => None,
        };
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("sessionpad-proxy/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let auth = opts.tokens.describe();
        let files = opts.ledger.as_ref().filter(|l| l.files).map(|l| {
            files::ProxyFiles::new(
                &upstream,
                opts.tokens.clone(),
                l.limits.file_content_max,
                l.limits.session_content_max,
            )
        });
        let files_budget = files.as_ref().map(files::ProxyFiles::per_file_max);
        let recording = tokio_util::task::TaskTracker::new();
        let shared = Arc::new(Shared {
            files,
            recording: recording.clone(),
            pool_key: opts.upstream.trim_end_matches('/').into(),
            upstream: upstream.clone(),
            http,
            tokens: opts.tokens,
            ledger: ledger.clone(),
            pending: record::PendingMap::default(),
        });
        // The proxy's own event stream (`GET /.sessionpad/events`): each call
        // it records, as the local pool pushes its own (nothing without a
        // ledger).
        let hub = ledger
            .as_ref()
            .map_or_else(crate::events::Hub::new, |l| l.hub().clone());
        let app = router(shared, opts.token.clone(), hub);
        let addr = SocketAddr::new(opts.bind, opts.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ProxyError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ProxyError::Bind { addr, source })?;
        let (stop, server) =
            crate::pool::server::run::serve_until_stopped(listener, app, "recording proxy");
        tracing::info!(%addr, %upstream, "recording proxy listening");
        Ok(Self {
            addr,
            token: opts.token,
            upstream,
            auth,
            ledger,
            files_budget,
            recording,
            stop: Some(stop),
            server: Some(server),
        })
    }

    /// The proxy's pool management endpoint, e.g. `http://127.0.0.1:41234`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The upstream endpoint, without a trailing `/`.
    pub fn upstream(&self) -> &str {
        &self.upstream
    }

    /// How the upstream's tokens are had ("az login", "static token", …).
    pub fn auth(&self) -> &str {
        &self.auth
    }

    /// The bearer token agents must send, or `None` without authentication.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Where calls are recorded, if anywhere.
    pub fn ledger(&self) -> Option<&Recorder> {
        self.ledger.as_ref()
    }

    /// The per-file budget (bytes) of the files the proxy fetches after each
    /// execution to record what changed (`[ledger] file_content_max`);
    /// `None` when it does not look at files (no ledger, `[ledger] files =
    /// false`, `--no-record-files`).
    pub fn files_budget(&self) -> Option<u64> {
        self.files_budget
    }

    /// Stops accepting requests, waits for the answers in flight, for the
    /// calls still being recorded (their look at files; at most 60 s) and
    /// until the ledger holds every call recorded.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
        self.recording.close();
        if tokio::time::timeout(RECORD_WAIT, self.recording.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                "calls still being recorded after {} s are lost",
                RECORD_WAIT.as_secs()
            );
        }
        if let Some(ledger) = self.ledger.clone() {
            let _ = tokio::task::spawn_blocking(move || ledger.flush()).await;
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The upstream endpoint without its trailing `/`, when it is an `http(s)`
/// URL with a host and no query or fragment.
fn check_upstream(endpoint: &str) -> Result<String, ProxyError> {
    let bad = |reason: &str| ProxyError::Upstream {
        endpoint: endpoint.to_string(),
        reason: reason.to_string(),
    };
    let url = url::Url::parse(endpoint).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("it must be an http or https URL"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("it has no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("a pool management endpoint has no query or fragment"));
    }
    Ok(endpoint.trim_end_matches('/').to_string())
}

/// Every path goes to [`forward::forward`]; the proxy's bearer token is
/// checked first (the local pool's check, `aca-api.md` §2), except on `/mcp`
/// (see the module doc); what an agent still sends after an early answer (the
/// proxy's 401, the upstream's 400 or 413 before it read an upload) is read
/// and dropped so the answer reaches it (the local pool's
/// `drain_unread_body`); each request is logged without its headers.
fn router(shared: Arc<Shared>, token: Option<String>, hub: crate::events::Hub) -> Router {
    let token = token.map(Arc::new);
    Router::new()
        .merge(crate::pool::events::routes(hub))
        .fallback(forward::forward)
        .with_state(shared)
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            let token = token.clone();
            async move { check_token(token, req, next).await }
        }))
        .layer(middleware::from_fn(
            crate::pool::server::drain::drain_unread_body,
        ))
        .layer(middleware::from_fn(crate::pool::server::log_request))
}

async fn check_token(token: Option<Arc<String>>, req: Request, next: Next) -> Response {
    let path = req.uri().path().trim_start_matches('/');
    let mcp = crate::protocol::routes::MCP_ROUTE.trim_start_matches('/');
    if path == mcp || path.starts_with(&format!("{mcp}/")) {
        return next.run(req).await;
    }
    crate::pool::server::auth(axum::extract::State(token), req, next).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_http_endpoint_without_query_is_an_upstream() {
        assert_eq!(
            check_upstream(
                "https://eastus.dynamicsessions.io/subscriptions/s/resourceGroups/r/sessionPools/p/"
            )
            .unwrap(),
            "https://eastus.dynamicsessions.io/subscriptions/s/resourceGroups/r/sessionPools/p"
        );
        assert_eq!(
            check_upstream("http://127.0.0.1:8330").unwrap(),
            "http://127.0.0.1:8330"
        );
        for bad in [
            "ftp://x",
            "not a url",
            "http://h/p?api-version=1",
            "file:///tmp",
        ] {
            assert!(check_upstream(bad).is_err(), "{bad}");
        }
    }
}
