//! The one error type of the session client: each variant says what went wrong in
//! terms a person can act on (`aca-api.md` §2, §6).

use std::time::Duration;

/// What can go wrong talking to a session pool.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The pool management endpoint is not a usable URL.
    #[error("invalid pool management endpoint {endpoint:?}: {reason}")]
    InvalidEndpoint {
        /// The endpoint as configured.
        endpoint: String,
        /// Why it was rejected.
        reason: String,
    },
    /// Nothing answered at the endpoint (DNS, refused connection, reset, timeout).
    #[error("cannot reach the session pool at {endpoint}: {source}")]
    Unreachable {
        /// The endpoint that was tried.
        endpoint: String,
        /// The transport error.
        #[source]
        source: reqwest::Error,
    },
    /// The request took longer than the client's limit.
    #[error("the session pool did not answer within {0:?}")]
    Timeout(Duration),
    /// No usable bearer token: the credential gave none (not signed in, no managed
    /// identity endpoint, …) or a static token is expired or for another audience. The
    /// message says what to do; it never contains a token.
    #[error("authentication failed: {message}")]
    Auth {
        /// What went wrong and what to do about it.
        message: String,
    },
    /// HTTP 401: the bearer token is missing, expired or for the wrong audience
    /// (it must be for `https://dynamicsessions.io`).
    #[error(
        "401 Unauthorized: the bearer token was missing, expired or for the wrong audience \
         (it must be issued for https://dynamicsessions.io){}", detail(.message)
    )]
    Unauthorized {
        /// The service's message, if any.
        message: Option<String>,
    },
    /// HTTP 403: the caller lacks the "Azure ContainerApps Session Executor" role on
    /// the session pool (or the assignment has not propagated yet).
    #[error(
        "403 Forbidden: your identity needs the \"Azure ContainerApps Session Executor\" role \
         on this session pool (new assignments take a minute to apply){}", detail(.message)
    )]
    Forbidden {
        /// The service's message, if any.
        message: Option<String>,
    },
    /// HTTP 404: wrong endpoint or path, or the pool reached its maximum sessions.
    #[error(
        "404 Not Found: check the pool management endpoint, or the pool may be at its \
         maximum number of sessions{}", detail(.message)
    )]
    NotFound {
        /// The service's message, if any.
        message: Option<String>,
    },
    /// HTTP 413: an upload over the 128 MB limit.
    #[error("413: the file is larger than the pool accepts (128 MB)")]
    TooLarge,
    /// HTTP 429: too many requests or sessions; retry after the given delay.
    #[error("429 Too Many Requests{}", retry_after.map(|d| format!(": retry after {} s", d.as_secs())).unwrap_or_default())]
    TooManyRequests {
        /// The `Retry-After` delay, when the service sent one.
        retry_after: Option<Duration>,
    },
    /// Any other 4xx/5xx answer, with the service's error code and message
    /// (`{"error":{"code","message"}}` and `x-ms-error-code`, `aca-api.md` §6.1).
    #[error("{status} {code}: {message}")]
    Service {
        /// HTTP status code.
        status: u16,
        /// The service's error code, or `"-"` when it sent none.
        code: String,
        /// The service's message, or the start of the body.
        message: String,
    },
    /// The service answered 2xx with a body this client cannot read.
    #[error("malformed response from the session pool: {0}")]
    Malformed(String),
    /// The operation does not exist in the chosen api-version.
    #[error("{operation} is not supported by api-version {api_version}")]
    NotSupported {
        /// What was asked for.
        operation: &'static str,
        /// The api-version in use.
        api_version: String,
    },
    /// The caller stopped waiting (an asynchronous execution's cancellation
    /// token fired). The work may still finish on the service.
    #[error("cancelled: stopped waiting for the session pool")]
    Cancelled,
    /// A local file could not be read or written (upload source, download
    /// destination).
    #[error("cannot {action}: {source}")]
    Local {
        /// What was being done, e.g. `read /tmp/data.csv`.
        action: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An argument cannot be sent as asked (an empty file name, a name made only
    /// of `/`).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

fn detail(message: &Option<String>) -> String {
    message
        .as_deref()
        .filter(|m| !m.is_empty())
        .map(|m| format!(" ({m})"))
        .unwrap_or_default()
}
