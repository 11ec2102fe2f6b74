//! Finishing the record of an asynchronous execution (family B,
//! `executionType: asynchronous`, `aca-api.md` §4.2) that the agent may never
//! poll: once the upstream accepted it as `Running`, the proxy polls
//! `GET executions/{id}` itself, with its own token and the query of the
//! agent's request (`api-version`, `identifier`), pausing 250 ms, then twice
//! as long each time up to 5 s, for at most [`WATCH_LIMIT`]. The first
//! finished answer, the proxy's or the agent's own polling, records the
//! execution; the [`PendingMap`](super::record::PendingMap) hands it out once,
//! so it is never recorded twice. The proxy stops polling as soon as the agent's
//! polling finished it, when the upstream no longer knows the execution (404
//! or another refusal that a retry does not change), or at the limit (then a
//! late poll of the agent's can still record it). A proxy that stops drops its
//! polling with it: an execution still running then is not recorded.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::http::header::{self, HeaderValue};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::Shared;
use super::files::Held;
use super::forward::{describe_transport, read_answer};
use super::record;

/// First pause before the proxy polls an execution it watches.
const FIRST_PAUSE: Duration = Duration::from_millis(250);

/// Longest pause between two polls.
const MAX_PAUSE: Duration = Duration::from_secs(5);

/// Longest time an execution is watched: 10 minutes, well past the service's
/// 220 s limit of one execution (`aca-api.md` §7), for a queued start.
const WATCH_LIMIT: Duration = Duration::from_secs(600);

/// Longest wait for one polling answer.
const POLL_TIMEOUT: Duration = Duration::from_secs(30);

/// Characters of an execution id escaped in the polling path: all but
/// letters, digits and `-_.~` (RFC 3986's unreserved ones).
const ID_ESCAPED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// What one poll of the upstream gave.
#[derive(Debug)]
enum Polled {
    /// A 2xx answer's body.
    Answer(bytes::Bytes),
    /// Worth asking again later: no token now, a transport error, 401 (the
    /// token is dropped and fetched anew), 408, 429, 5xx.
    Retry(String),
    /// The upstream refused in a way a retry does not change (404: the
    /// execution or its session is gone; another 4xx).
    Refused(StatusCode),
}

/// Polls the upstream for execution `id` until it is recorded or given up (see
/// the module doc). `query` is the query string of the agent's execution
/// request, as received.
pub(crate) async fn watch(shared: Arc<Shared>, id: String, query: Option<String>) {
    let url = poll_url(&shared.upstream, &id, query.as_deref());
    let started = tokio::time::Instant::now();
    let mut pause = FIRST_PAUSE;
    loop {
        tokio::time::sleep(pause).await;
        if !shared.pending.contains(&id) {
            // The agent's own polling finished it (or it was forgotten).
            return;
        }
        match poll(&shared, &url).await {
            Polled::Answer(body) => match record::polled(&id, &body, &shared.pending) {
                record::Polled::Running => {}
                record::Polled::Settled => return,
                record::Polled::Finished(finished) => {
                    finished
                        .record(shared.files.as_ref(), Held::default())
                        .await;
                    return;
                }
            },
            Polled::Retry(why) => {
                tracing::debug!(execution = %id, "polling the upstream again later: {why}");
            }
            Polled::Refused(status) => {
                shared.pending.take(&id);
                tracing::warn!(
                    execution = %id,
                    %status,
                    "the upstream no longer answers for an asynchronous execution; it is not recorded"
                );
                return;
            }
        }
        if started.elapsed() + pause >= WATCH_LIMIT {
            tracing::warn!(
                execution = %id,
                "an asynchronous execution still runs after {} s; the proxy stops polling it",
                WATCH_LIMIT.as_secs()
            );
            return;
        }
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// `GET {upstream}/executions/{id}?{query}`, the id escaped as one path
/// segment.
fn poll_url(upstream: &str, id: &str, query: Option<&str>) -> String {
    let id = utf8_percent_encode(id, ID_ESCAPED);
    match query {
        Some(q) if !q.is_empty() => format!("{upstream}/executions/{id}?{q}"),
        _ => format!("{upstream}/executions/{id}"),
    }
}

/// One `GET` of `url` with the proxy's token.
async fn poll(shared: &Shared, url: &str) -> Polled {
    let bearer = match shared.tokens.bearer().await {
        Ok(b) => b,
        Err(e) => return Polled::Retry(format!("no token: {e}")),
    };
    let mut req = shared.http.get(url).timeout(POLL_TIMEOUT);
    if let Some(bearer) = bearer {
        let Ok(mut value) = HeaderValue::from_str(&bearer) else {
            return Polled::Retry("the proxy's token cannot be sent in a header".into());
        };
        value.set_sensitive(true);
        req = req.header(header::AUTHORIZATION, value);
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return Polled::Retry(describe_transport(&e)),
    };
    let status = resp.status();
    if status.is_success() {
        return match read_answer(resp).await {
            Ok(body) => Polled::Answer(body),
            Err(e) => Polled::Retry(e.message),
        };
    }
    if status == StatusCode::UNAUTHORIZED {
        shared.tokens.invalidate();
        return Polled::Retry(format!("the upstream answered {status}"));
    }
    if status.is_server_error()
        || matches!(
            status,
            StatusCode::REQUEST_TIMEOUT | StatusCode::TOO_MANY_REQUESTS
        )
    {
        return Polled::Retry(format!("the upstream answered {status}"));
    }
    Polled::Refused(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_polling_url_keeps_the_agents_query_and_escapes_the_id() {
        assert_eq!(
            poll_url(
                "https://up.example/pools/p",
                "8963ad02-1f",
                Some("api-version=2024-10-02-preview&identifier=a%20b")
            ),
            "https://up.example/pools/p/executions/8963ad02-1f?api-version=2024-10-02-preview&identifier=a%20b"
        );
        assert_eq!(
            poll_url("http://127.0.0.1:1", "a/b?c", None),
            "http://127.0.0.1:1/executions/a%2Fb%3Fc"
        );
    }
}
