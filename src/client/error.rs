//! The one error type of the session client: each variant says what went wrong in
//! terms a person can act on (`aca-api.md` §2, §6).

use std::time::Duration;

use crate::protocol::reply::MalformedReply;

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
    /// (it must be for `https://dynamicsessions.io`); from a sessionpad pool
    /// (`sessionpad serve`, its recording proxy), missing or not the one it
    /// printed.
    #[error("{}", unauthorized(.message.as_deref(), *.sessionpad))]
    Unauthorized {
        /// The service's message, if any.
        message: Option<String>,
        /// The answer came from a sessionpad pool (its `Server` header names
        /// [`crate::protocol::api::SERVER_PRODUCT`]), whose token is the one
        /// `sessionpad serve` printed, not an Entra token.
        sessionpad: bool,
    },
    /// HTTP 403: the caller lacks the "Azure ContainerApps Session Executor" role on
    /// the session pool (or the assignment has not propagated yet).
    #[error(
        "403 Forbidden: your identity needs the \"Azure ContainerApps Session Executor\" role \
         on this session pool (new assignments take a minute to apply){}", detail(.message.as_deref())
    )]
    Forbidden {
        /// The service's message, if any.
        message: Option<String>,
    },
    /// HTTP 404: wrong endpoint or path, or the pool reached its maximum sessions;
    /// on a file call that names a file or folder, that it is not there.
    #[error("{}", not_found(.message.as_deref(), .code.as_deref(), .missing.as_deref()))]
    NotFound {
        /// The service's message, if any.
        message: Option<String>,
        /// The service's error code (`{"error":{"code"}}` or `x-ms-error-code`,
        /// `aca-api.md` §6.1), if any: the local pool says `FileNotFound` or
        /// `DirectoryNotFound`.
        code: Option<String>,
        /// What a file call looked for, when it named something: `file NAME` or
        /// `folder NAME`, relative to `/mnt/data`.
        missing: Option<String>,
    },
    /// HTTP 413: an upload over the 128 MB limit (`aca-api.md` §6.2), or, from
    /// the local pool, one the session's `/mnt/data` has no room for (its
    /// message says which).
    #[error("413: {}", .message.as_deref().unwrap_or("the file is larger than the pool accepts (128 MB)"))]
    TooLarge {
        /// The service's message, if any.
        message: Option<String>,
    },
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
    /// The pool has no Tab completion: the service (404, its data-plane API
    /// has no completion call) or a local pool whose container type has none
    /// (400 `CompletionNotSupported`).
    #[error("this pool has no completion")]
    NoCompletion,
    /// An argument cannot be sent as asked (an empty file name, a name made only
    /// of `/`).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl From<MalformedReply> for ClientError {
    /// A body the readers of [`crate::protocol::reply`] could not read is
    /// [`ClientError::Malformed`] with the reader's words, shown as
    /// `malformed response from the session pool: executions answer has no
    /// status`.
    fn from(e: MalformedReply) -> Self {
        Self::Malformed(e.0)
    }
}

impl ClientError {
    /// This error as the answer to a call that looked for `what` (`file NAME`
    /// or `folder NAME`): a [`ClientError::NotFound`] then says that `what` is
    /// not in the session's `/mnt/data`; other errors are returned unchanged.
    #[must_use]
    pub(crate) fn looking_for(self, what: impl FnOnce() -> String) -> Self {
        match self {
            Self::NotFound {
                message,
                code,
                missing: None,
            } => Self::NotFound {
                message,
                code,
                missing: Some(what()),
            },
            other => other,
        }
    }
}

/// The text of [`ClientError::NotFound`]: a missing file or folder by name
/// (with the service's words unless its code already says just that), else what
/// a 404 can mean on any call.
fn not_found(message: Option<&str>, code: Option<&str>, missing: Option<&str>) -> String {
    let message = message.filter(|m| !m.is_empty());
    match missing {
        Some(what) => {
            let plain = matches!(code, Some("FileNotFound" | "DirectoryNotFound"));
            match message.filter(|_| !plain) {
                Some(m) => format!("no {what} in the session's /mnt/data (404 Not Found: {m})"),
                None => format!("no {what} in the session's /mnt/data"),
            }
        }
        None => format!(
            "404 Not Found: check the pool management endpoint, or the pool may be at its \
             maximum number of sessions{}",
            message.map(|m| format!(" ({m})")).unwrap_or_default()
        ),
    }
}

/// The text of [`ClientError::Unauthorized`]: from a sessionpad pool, which
/// token it wants and how to pass it; else what Azure's pools want.
fn unauthorized(message: Option<&str>, sessionpad: bool) -> String {
    if sessionpad {
        format!(
            "401 Unauthorized: this sessionpad pool wants the token `sessionpad serve` printed \
             (its `bearer token:` line): pass it with --token, the SESSIONPAD_TOKEN variable, or \
             a profile's `auth = \"token-env\"` and `token_env`{}",
            detail(message)
        )
    } else {
        format!(
            "401 Unauthorized: the bearer token was missing, expired or for the wrong audience \
             (it must be issued for https://dynamicsessions.io){}",
            detail(message)
        )
    }
}

fn detail(message: Option<&str>) -> String {
    message
        .filter(|m| !m.is_empty())
        .map(|m| format!(" ({m})"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27 item 18: Azure's 401 names the audience; a sessionpad pool's
    /// names the token serve printed and how to pass it.
    #[test]
    fn a_401_says_which_token_the_pool_wants() {
        let azure = ClientError::Unauthorized {
            message: None,
            sessionpad: false,
        }
        .to_string();
        assert!(azure.contains("https://dynamicsessions.io"), "{azure}");
        let local = ClientError::Unauthorized {
            message: Some("the bearer token is not valid for this pool".into()),
            sessionpad: true,
        }
        .to_string();
        assert!(
            local.contains("the token `sessionpad serve` printed")
                && local.contains("--token")
                && local.contains("SESSIONPAD_TOKEN")
                && local.ends_with("(the bearer token is not valid for this pool)"),
            "{local}"
        );
        assert!(!local.contains("audience"), "{local}");
    }

    #[test]
    fn a_missing_file_is_named_and_other_404s_keep_their_hint() {
        let local = ClientError::NotFound {
            message: Some("file a.txt was not found".into()),
            code: Some("FileNotFound".into()),
            missing: None,
        }
        .looking_for(|| "file a.txt".into());
        assert_eq!(
            local.to_string(),
            "no file a.txt in the session's /mnt/data"
        );
        let other = ClientError::NotFound {
            message: Some("no such pool".into()),
            code: None,
            missing: None,
        };
        assert!(
            other
                .to_string()
                .contains("check the pool management endpoint")
        );
        let named = other.looking_for(|| "folder sub".into());
        assert_eq!(
            named.to_string(),
            "no folder sub in the session's /mnt/data (404 Not Found: no such pool)"
        );
    }
}
