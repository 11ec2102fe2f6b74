//! The egress proxy of one sandboxed session (issue 29, `serve --egress
//! allow=HOST[:PORT],…` and `--egress audit`): an HTTP/1 proxy of the pool's,
//! on a Unix socket in the session's runtime folder ([`SOCKET_NAME`]), which
//! the sandbox's relay ([`super::sandbox::relay`]) reaches from
//! `127.0.0.1:`[`RELAY_PORT`] inside the session's network namespace, where
//! `HTTP_PROXY` and `HTTPS_PROXY` point. The session itself has no route out.
//!
//! It takes `CONNECT host:port` (HTTPS and any TCP tunnel) and absolute-form
//! `http://host:port/…` requests. Each is judged by the policy on the host and
//! port asked for, before any DNS lookup ([`Egress::allows`]): a denied one
//! gets `403` and nothing is resolved or sent; an allowed one is resolved here,
//! by the pool (the session has no resolver), connected to exactly that host
//! and port, and relayed. Every attempt is logged with the bytes relayed both
//! ways, counted as they pass, in the session's [`NetworkLog`], which the
//! execution that was running takes; [`direct`] adds what the session tried
//! outside the proxy.

use std::convert::Infallible;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixListener};

use crate::protocol::egress::{Decision, Egress, Via};

pub mod diag;
pub mod direct;
mod log;

pub use log::{MAX_ATTEMPTS, NetworkLog};

/// The proxy's socket in a session's runtime folder.
pub const SOCKET_NAME: &str = "egress.sock";

/// The TCP port of the relay inside a session (`HTTP_PROXY=http://127.0.0.1:3128`).
pub const RELAY_PORT: u16 = 3128;

/// The proxy address a proxied session's programs are given.
pub fn proxy_url() -> String {
    format!("http://127.0.0.1:{RELAY_PORT}")
}

/// A session's running egress proxy; it stops (and its socket goes) when
/// dropped. Tunnels already open end when their ends close (the sandbox's
/// relay dies with the session).
#[derive(Debug)]
pub struct EgressProxy {
    _task: tokio_util::task::AbortOnDropHandle<()>,
}

impl EgressProxy {
    /// Starts the proxy for `policy` on the Unix socket `socket` (created mode
    /// 0666: the runtime folder around it admits only the session's uid and
    /// the pool), logging each attempt in `log`. A connection that would reach
    /// `pool_port` on this machine (the pool's own API) is refused under every
    /// policy. Must be called within a tokio runtime.
    ///
    /// # Errors
    ///
    /// The socket cannot be bound (the folder is missing, the path is longer
    /// than a socket path may be, about 107 bytes).
    pub fn start(
        policy: Egress,
        socket: &Path,
        log: Arc<NetworkLog>,
        pool_port: Option<u16>,
    ) -> std::io::Result<Self> {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket)?;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o666))?;
        let rules = Arc::new(Rules { policy, pool_port });
        let task = tokio::spawn(accept(listener, rules, log));
        Ok(Self {
            _task: tokio_util::task::AbortOnDropHandle::new(task),
        })
    }
}

/// What the proxy judges by: the policy, and the pool's own port, refused on
/// this machine whatever the policy.
struct Rules {
    policy: Egress,
    pool_port: Option<u16>,
}

async fn accept(listener: UnixListener, policy: Arc<Rules>, log: Arc<NetworkLog>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!("egress proxy: accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let (policy, log) = (Arc::clone(&policy), Arc::clone(&log));
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                handle(req, Arc::clone(&policy), Arc::clone(&log))
            });
            let served = hyper::server::conn::http1::Builder::new()
                .preserve_header_case(true)
                .title_case_headers(true)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
            if let Err(e) = served {
                tracing::debug!("egress proxy: connection: {e}");
            }
        });
    }
}

type Body = BoxBody<Bytes, hyper::Error>;

/// A short plain-text answer of the proxy's own.
fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut resp = Response::new(
        Full::new(Bytes::from(text + "\n"))
            .map_err(|never| match never {})
            .boxed(),
    );
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// The host (lowercase, IPv6 without brackets) and port a request asks for:
/// a CONNECT's authority (port required), or an absolute `http://` URL (port
/// 80 unless given). `None` for anything else.
fn target_of(req: &Request<Incoming>) -> Option<(String, u16)> {
    let uri = req.uri();
    let port = if req.method() == Method::CONNECT {
        uri.authority()?.port_u16()?
    } else if uri.scheme_str() == Some("http") {
        uri.port_u16().unwrap_or(80)
    } else {
        return None;
    };
    let host = uri
        .host()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    (!host.is_empty()).then_some((host, port))
}

async fn handle(
    req: Request<Incoming>,
    rules: Arc<Rules>,
    log: Arc<NetworkLog>,
) -> Result<Response<Body>, Infallible> {
    let policy = &rules.policy;
    let Some((host, port)) = target_of(&req) else {
        return Ok(plain(
            StatusCode::BAD_REQUEST,
            "sessionpad egress proxy: send CONNECT host:port, or a request for an absolute http:// URL"
                .into(),
        ));
    };
    let decision = if policy.allows(&host, port) {
        Decision::Allowed
    } else {
        Decision::Denied
    };
    if decision == Decision::Denied {
        log.push(&host, port, decision, Via::Proxy);
        return Ok(plain(
            StatusCode::FORBIDDEN,
            format!(
                "sessionpad egress proxy: {host}:{port} is not allowed by this pool's egress policy ({policy})"
            ),
        ));
    }
    // Resolved here, by the pool: the session has no resolver.
    let connected = TcpStream::connect((host.as_str(), port)).await;
    if let Ok(s) = &connected
        && rules.pool_port == Some(port)
        && to_this_machine(s)
    {
        log.push(&host, port, Decision::Denied, Via::Proxy);
        return Ok(plain(
            StatusCode::FORBIDDEN,
            format!(
                "sessionpad egress proxy: {host}:{port} is this pool's own API, which no session may reach"
            ),
        ));
    }
    let bytes = log.push(&host, port, decision, Via::Proxy);
    let upstream = match connected {
        Ok(s) => Counting {
            inner: s,
            bytes: Arc::clone(&bytes),
        },
        Err(e) => {
            return Ok(plain(
                StatusCode::BAD_GATEWAY,
                format!("sessionpad egress proxy: cannot connect to {host}:{port}: {e}"),
            ));
        }
    };
    if req.method() == Method::CONNECT {
        tokio::spawn(tunnel(req, upstream));
        return Ok(Response::new(
            http_body_util::Empty::new()
                .map_err(|never| match never {})
                .boxed(),
        ));
    }
    Ok(forward(req, upstream, &host, port).await)
}

/// Whether `stream` is connected to this machine itself: to a loopback
/// address, or to an address of its own (the kernel then gives the
/// connection the same address at both ends).
fn to_this_machine(stream: &TcpStream) -> bool {
    match (stream.peer_addr(), stream.local_addr()) {
        (Ok(peer), Ok(local)) => peer.ip().is_loopback() || peer.ip() == local.ip(),
        _ => true,
    }
}

/// Relays a CONNECT's upgraded connection and `upstream` until both end.
async fn tunnel(req: Request<Incoming>, mut upstream: Counting<TcpStream>) {
    match hyper::upgrade::on(req).await {
        Ok(upgraded) => {
            let mut client = TokioIo::new(upgraded);
            if let Err(e) = tokio::io::copy_bidirectional(&mut client, &mut upstream).await {
                tracing::debug!("egress proxy: tunnel: {e}");
            }
        }
        Err(e) => tracing::debug!("egress proxy: upgrade: {e}"),
    }
}

/// Headers that concern the hop to the proxy, not the request forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
];

/// Forwards a plain HTTP request to `upstream` in origin form, without the
/// hop-by-hop headers, and answers with its response (streamed).
async fn forward(
    mut req: Request<Incoming>,
    upstream: Counting<TcpStream>,
    host: &str,
    port: u16,
) -> Response<Body> {
    let failed = |e: &dyn std::fmt::Display| {
        plain(
            StatusCode::BAD_GATEWAY,
            format!("sessionpad egress proxy: {host}:{port}: {e}"),
        )
    };
    let (mut sender, conn) =
        match hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await {
            Ok(pair) => pair,
            Err(e) => return failed(&e),
        };
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!("egress proxy: upstream connection: {e}");
        }
    });
    let origin_form = req
        .uri()
        .path_and_query()
        .map_or("/", hyper::http::uri::PathAndQuery::as_str)
        .to_string();
    match origin_form.parse() {
        Ok(uri) => *req.uri_mut() = uri,
        Err(e) => return failed(&e),
    }
    for name in HOP_BY_HOP {
        req.headers_mut().remove(*name);
    }
    match sender.send_request(req).await {
        Ok(resp) => resp.map(BodyExt::boxed),
        Err(e) => failed(&e),
    }
}

/// A connection that adds every byte read or written to a counter.
struct Counting<T> {
    inner: T,
    bytes: Arc<AtomicU64>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Counting<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before);
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counting<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
