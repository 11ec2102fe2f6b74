//! Sending requests: the one place where the session client authorizes a request,
//! applies its time limit and, for idempotent requests only, retries transient
//! failures (`aca-api.md` §6.2: 429, and the gateway answers 502/503/504).
//!
//! Listings follow `nextLink` pages here too ([`SessionClient::send_paged`]).
//! Executions and uploads go through [`SessionClient::send_once`] and are never
//! retried: running code twice or storing a file twice is not harmless.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::Value;
use url::Url;

use super::response::{check, json, transport};
use super::{ClientError, SessionClient};

/// Time limit of a plain call (list, metadata, info, delete, session calls), from
/// sending the request to the end of the answer.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest pause between two chunks of a streamed download before it is given up.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Most pages one listing follows (`nextLink`); 1000 pages of 300 sessions.
pub(crate) const MAX_PAGES: usize = 1000;

/// How long a request may take.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Limit {
    /// The whole exchange, body included, within this time.
    Whole(Duration),
    /// The response headers within this time; the body may take as long as it
    /// needs (downloads watch the gap between chunks instead, [`IDLE_TIMEOUT`]).
    Headers(Duration),
}

impl Limit {
    fn duration(self) -> Duration {
        match self {
            Self::Whole(d) | Self::Headers(d) => d,
        }
    }
}

/// Capped exponential backoff of idempotent requests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Backoff {
    /// Retries after the first attempt.
    pub(crate) retries: u32,
    /// Pause before the first retry; doubled for each further one.
    pub(crate) base: Duration,
    /// Longest computed pause.
    pub(crate) cap: Duration,
    /// Longest `Retry-After` honoured; a longer one is returned to the caller as
    /// the error rather than waited out.
    pub(crate) max_retry_after: Duration,
}

/// The policy of every idempotent request: 3 retries, 250 ms, 500 ms, 1 s
/// (capped at 4 s), or the service's `Retry-After` up to 30 s.
pub(crate) const BACKOFF: Backoff = Backoff {
    retries: 3,
    base: Duration::from_millis(250),
    cap: Duration::from_secs(4),
    max_retry_after: Duration::from_secs(30),
};

impl Backoff {
    /// The pause before retry number `attempt` (0 = the first retry).
    pub(crate) fn delay(&self, attempt: u32) -> Duration {
        self.base
            .saturating_mul(2u32.saturating_pow(attempt))
            .min(self.cap)
    }
}

/// Whether an answer is worth retrying: 429 (throttled, pool full on custom
/// pools) and the gateway failures 502, 503, 504.
fn transient(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 502 | 503 | 504)
}

/// The delay a `Retry-After` header asks for: whole seconds or an HTTP date
/// (RFC 9110), or Azure's `retry-after-ms` / `x-ms-retry-after-ms` in
/// milliseconds. `None` when absent or unreadable.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    for name in ["retry-after-ms", "x-ms-retry-after-ms"] {
        if let Some(ms) = text(name).and_then(|v| v.parse::<u64>().ok()) {
            return Some(Duration::from_millis(ms));
        }
    }
    let value = text(reqwest::header::RETRY_AFTER.as_str())?;
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// Why one attempt produced no response.
enum Failed {
    /// reqwest failed (connect, TLS, reset, its own timeout).
    Transport(reqwest::Error),
    /// No response headers within [`Limit::Headers`].
    NoHeaders(Duration),
}

impl SessionClient {
    /// [`check`], and after a 401 the cached token is forgotten so the next
    /// request asks the credential for a new one.
    async fn checked(&self, resp: reqwest::Response) -> Result<reqwest::Response, ClientError> {
        let result = check(resp).await;
        if matches!(result, Err(ClientError::Unauthorized { .. })) {
            self.on_unauthorized();
        }
        result
    }

    /// `req` with the pool's credentials. The only caller of `authorize`, so a
    /// change in how credentials are obtained touches this one function.
    pub(crate) async fn authorized(
        &self,
        req: RequestBuilder,
    ) -> Result<RequestBuilder, ClientError> {
        self.authorize(req).await
    }

    /// Sends `req` once, within `limit`, and maps a non-2xx answer to its
    /// [`ClientError`]. For executions and uploads, which are never retried.
    ///
    /// # Errors
    ///
    /// [`ClientError::Unreachable`], [`ClientError::Timeout`], or the
    /// answer's error (401, 403, 404, 413, 429, other 4xx/5xx).
    pub(crate) async fn send_once(
        &self,
        req: RequestBuilder,
        limit: Limit,
    ) -> Result<Response, ClientError> {
        let req = self.authorized(req).await?;
        match attempt(req, limit).await {
            Ok(resp) => self.checked(resp).await,
            Err(f) => Err(self.failure(f, limit)),
        }
    }

    /// Sends the request `build` makes (once per attempt), retrying connection
    /// failures and 429/502/503/504 answers with [`BACKOFF`], honouring
    /// `Retry-After`. Only for requests that change nothing on the service.
    ///
    /// # Errors
    ///
    /// As [`SessionClient::send_once`], for the last attempt.
    pub(crate) async fn send_idempotent(
        &self,
        limit: Limit,
        build: impl Fn() -> Result<RequestBuilder, ClientError>,
    ) -> Result<Response, ClientError> {
        let mut retry = 0;
        loop {
            let req = self.authorized(build()?).await?;
            let last = retry >= BACKOFF.retries;
            match attempt(req, limit).await {
                Ok(resp) if !last && transient(resp.status()) => {
                    let wait = retry_after(resp.headers()).unwrap_or(BACKOFF.delay(retry));
                    if wait > BACKOFF.max_retry_after {
                        return self.checked(resp).await;
                    }
                    tracing::debug!(status = resp.status().as_u16(), ?wait, "retrying");
                    drop(resp);
                    tokio::time::sleep(wait).await;
                }
                Ok(resp) => return self.checked(resp).await,
                Err(Failed::Transport(e)) if !last && e.is_connect() => {
                    tracing::debug!(error = %e, "retrying after a connection failure");
                    tokio::time::sleep(BACKOFF.delay(retry)).await;
                }
                Err(f) => return Err(self.failure(f, limit)),
            }
            retry += 1;
        }
    }

    /// Sends `method` to `first` and then to each page's `nextLink`, returning
    /// the JSON pages in order. Every page is an idempotent request (retried);
    /// a POST carries an empty body ([`empty_body`]).
    ///
    /// A `nextLink` is followed only within the endpoint: relative links are
    /// resolved below the endpoint (like `Operation-Location`, §4.2), absolute
    /// ones must have the endpoint's origin, so the bearer token never goes
    /// elsewhere; a link without `api-version` gets this client's. A link seen
    /// before, or more than [`MAX_PAGES`] pages, ends the walk.
    ///
    /// # Errors
    ///
    /// As [`SessionClient::send_idempotent`]; [`ClientError::Malformed`]
    /// for a page that is not JSON or a `nextLink` to another origin.
    pub(crate) async fn send_paged(
        &self,
        method: Method,
        first: Url,
    ) -> Result<Vec<Value>, ClientError> {
        let mut pages = Vec::new();
        let mut seen = HashSet::new();
        let mut next = Some(first);
        while let Some(url) = next.take() {
            if pages.len() >= MAX_PAGES || !seen.insert(url.to_string()) {
                break;
            }
            let resp = self
                .send_idempotent(Limit::Whole(CALL_TIMEOUT), || {
                    let req = self.http.request(method.clone(), url.clone());
                    Ok(if method == Method::POST {
                        empty_body(req)
                    } else {
                        req
                    })
                })
                .await?;
            let page = json(resp).await?;
            let link = page.get("nextLink").and_then(Value::as_str).map(str::trim);
            next = match link.filter(|l| !l.is_empty()) {
                Some(link) => Some(self.resolve_link(link)?),
                None => None,
            };
            pages.push(page);
        }
        Ok(pages)
    }

    /// A `nextLink` as a URL below the endpoint (see [`SessionClient::send_paged`]).
    fn resolve_link(&self, link: &str) -> Result<Url, ClientError> {
        let mut url = match Url::parse(link) {
            Ok(url) if url.origin() == self.base.origin() => url,
            Ok(_) => {
                return Err(ClientError::Malformed(format!(
                    "nextLink {link:?} leaves the pool endpoint; not following it"
                )));
            }
            Err(_) => {
                // `/pool-path/x` is below the origin, `/x` (and `x`) below the
                // endpoint: the local pool and `Operation-Location` use the latter.
                let below_origin = link.starts_with(self.base.path());
                let relative = if below_origin {
                    link
                } else {
                    link.trim_start_matches('/')
                };
                self.base
                    .join(relative)
                    .map_err(|e| ClientError::Malformed(format!("nextLink {link:?}: {e}")))?
            }
        };
        if !url.query_pairs().any(|(k, _)| k == "api-version") {
            url.query_pairs_mut()
                .append_pair("api-version", self.api_version.as_str());
        }
        Ok(url)
    }

    fn failure(&self, f: Failed, limit: Limit) -> ClientError {
        match f {
            Failed::Transport(e) => transport(&self.endpoint, limit.duration(), e),
            Failed::NoHeaders(d) => ClientError::Timeout(d),
        }
    }
}

/// `req` with an empty body and `Content-Length: 0`, which reqwest leaves out on
/// its own and some HTTP front ends require on a POST (411 Length Required).
pub(crate) fn empty_body(req: RequestBuilder) -> RequestBuilder {
    req.header(reqwest::header::CONTENT_LENGTH, "0")
        .body(Vec::new())
}

/// One exchange up to the response headers.
async fn attempt(req: RequestBuilder, limit: Limit) -> Result<Response, Failed> {
    match limit {
        Limit::Whole(d) => req.timeout(d).send().await.map_err(Failed::Transport),
        Limit::Headers(d) => match tokio::time::timeout(d, req.send()).await {
            Ok(r) => r.map_err(Failed::Transport),
            Err(_) => Err(Failed::NoHeaders(d)),
        },
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(BACKOFF.delay(0), Duration::from_millis(250));
        assert_eq!(BACKOFF.delay(1), Duration::from_millis(500));
        assert_eq!(BACKOFF.delay(2), Duration::from_secs(1));
        assert_eq!(BACKOFF.delay(10), Duration::from_secs(4));
        assert_eq!(BACKOFF.delay(u32::MAX), Duration::from_secs(4));
    }

    #[test]
    fn retry_after_reads_seconds_dates_and_milliseconds() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn only_throttling_and_gateway_failures_are_transient() {
        for s in [429, 502, 503, 504] {
            assert!(transient(StatusCode::from_u16(s).unwrap()));
        }
        for s in [400, 401, 403, 404, 413, 500] {
            assert!(!transient(StatusCode::from_u16(s).unwrap()));
        }
    }
}
