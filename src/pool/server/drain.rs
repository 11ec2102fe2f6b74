//! Reading what a client still sends after the pool has its answer, so the
//! answer reaches the client.
//!
//! An error is often known before the request body is read: a wrong token (401),
//! a bad query (400), an upload whose `Content-Length` is past the limit (413).
//! hyper then writes the answer and closes the connection with the body still
//! arriving; the kernel answers the unread bytes with a TCP reset, and a client
//! still writing its body (`httpx.AsyncClient`, aiohttp, Node's `fetch`) sees a
//! reset connection or a broken pipe instead of the answer. [`drain_unread_body`]
//! reads and drops the rest of the body before the answer leaves, bounded by
//! [`DRAIN_MAX_BYTES`] and [`DRAIN_MAX_TIME`]; past either, the answer says
//! `Connection: close` and nothing better can be done.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{CONNECTION, CONTENT_LENGTH, EXPECT};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Body as _, Frame, SizeHint};

/// Most bytes of a request body read and dropped after the answer is known:
/// 256 MiB, above the largest upload the pool takes (128 MiB of file data plus
/// framing, `aca-api.md` §7), so an upload refused for its size is read whole.
pub(crate) const DRAIN_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// Most time spent reading it: 30 s (a client sending slowly gets
/// `Connection: close` after that).
pub(crate) const DRAIN_MAX_TIME: Duration = Duration::from_secs(30);

/// The request body, shared by the handler (through [`SharedBody`]) and the
/// middleware, which reads what the handler left.
struct State {
    body: Body,
    /// The handler asked for body data at least once.
    polled: bool,
    /// The body ended (or broke): nothing is left to read.
    ended: bool,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The body the handler sees: the real one, behind a lock the middleware shares.
struct SharedBody(Arc<Mutex<State>>);

impl http_body::Body for SharedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let mut state = lock(&self.0);
        state.polled = true;
        let polled = Pin::new(&mut state.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            state.ended = true;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        let state = lock(&self.0);
        state.ended || state.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        lock(&self.0).body.size_hint()
    }
}

/// The request's `Content-Length` in bytes, when it has a valid one.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Middleware: once the handler has answered, reads and drops what is left of
/// the request body (at most [`DRAIN_MAX_BYTES`] within [`DRAIN_MAX_TIME`])
/// before the answer is sent, so the client reads the answer instead of a reset.
///
/// Not drained: a body already read to its end; one announced with
/// `Expect: 100-continue` that the handler never asked for (the client waits for
/// the answer and never sends it); one whose `Content-Length` is past
/// [`DRAIN_MAX_BYTES`]. In the last case, and when the limits run out, the answer
/// carries `Connection: close`.
pub(crate) async fn drain_unread_body(req: Request, next: Next) -> Response {
    if req.body().is_end_stream() {
        return next.run(req).await;
    }
    let waits_for_continue = req
        .headers()
        .get(EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let declared = declared_length(req.headers());
    let (parts, body) = req.into_parts();
    let state = Arc::new(Mutex::new(State {
        body,
        polled: false,
        ended: false,
    }));
    let shared = Body::new(SharedBody(state.clone()));
    let mut resp = next.run(Request::from_parts(parts, shared)).await;
    let (polled, ended) = {
        let s = lock(&state);
        (s.polled, s.ended || s.body.is_end_stream())
    };
    if ended || (waits_for_continue && !polled) {
        return resp;
    }
    let drained = match declared {
        Some(n) if n > DRAIN_MAX_BYTES => false,
        _ => drain(&state, DRAIN_MAX_BYTES, DRAIN_MAX_TIME).await,
    };
    if !drained {
        tracing::debug!("request body left unread: closing the connection after the answer");
        resp.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

/// Reads and drops the body until it ends (true), or until more than `max_bytes`
/// were read, `max_time` passed or it broke (false).
async fn drain(state: &Mutex<State>, max_bytes: u64, max_time: Duration) -> bool {
    let read_all = async {
        let mut read = 0u64;
        loop {
            let frame =
                std::future::poll_fn(|cx| Pin::new(&mut lock(state).body).poll_frame(cx)).await;
            match frame {
                None => return true,
                Some(Err(_)) => return false,
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        read += data.len() as u64;
                        if read > max_bytes {
                            return false;
                        }
                    }
                }
            }
        }
    };
    tokio::time::timeout(max_time, read_all)
        .await
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(body: Body) -> Mutex<State> {
        Mutex::new(State {
            body,
            polled: false,
            ended: false,
        })
    }

    #[tokio::test]
    async fn a_body_within_the_limits_is_read_to_its_end() {
        let s = state(Body::from(vec![0u8; 1000]));
        assert!(drain(&s, 1000, Duration::from_secs(1)).await);
    }

    #[tokio::test]
    async fn a_body_past_the_byte_limit_is_given_up() {
        let s = state(Body::from(vec![0u8; 1001]));
        assert!(!drain(&s, 1000, Duration::from_secs(1)).await);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_never_ends_is_given_up_in_time() {
        let stream = futures::stream::pending::<Result<Bytes, std::io::Error>>();
        let s = state(Body::from_stream(stream));
        assert!(!drain(&s, 1000, Duration::from_secs(30)).await);
    }
}
