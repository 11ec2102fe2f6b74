//! Why a piece of session work failed, as the session worker reports it: a kind
//! the UI can act on (an expired sign-in, a session that is gone, a pool that is
//! not there) and the message a person reads. Built from a [`ClientError`]
//! (whose text already says what to do, `aca-api.md` §2 and §6) or from the
//! worker's own trouble (the pool would not start, a local file).

use std::fmt;

use crate::client::ClientError;

/// What kind of failure a [`Failure`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The pool could not be started or reached (a wrong endpoint, nothing
    /// listening, a reset connection).
    Unreachable,
    /// The pool did not answer in time.
    Timeout,
    /// No usable credential, or HTTP 401 (sign in again, or a token for the
    /// wrong audience).
    Unauthenticated,
    /// HTTP 403: the identity lacks the Session Executor role.
    Forbidden,
    /// HTTP 404: the session, file or folder is not there (or the pool is
    /// full); also the service's 400 `SessionWithIdentifierNotFound` for a
    /// session it does not have.
    NotFound,
    /// The pool refused the request as asked (413, 429, other 4xx, an
    /// operation the api-version lacks, an invalid argument).
    Refused,
    /// The pool failed (5xx) or answered with something unreadable.
    Service,
    /// A file on this machine could not be read or written.
    Local,
    /// The work was cancelled.
    Cancelled,
}

/// A failure of session work: its kind and what to tell the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What kind of failure.
    pub kind: FailureKind,
    /// What went wrong, in words a person can act on; never holds a token.
    pub message: String,
}

impl Failure {
    /// A failure of `kind` saying `message`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The pool (embedded or remote) could not be started or connected to.
    pub fn unreachable(message: impl Into<String>) -> Self {
        Self::new(FailureKind::Unreachable, message)
    }

    /// This failure with `context` before its message (`cannot end s-1: …`).
    #[must_use]
    pub fn context(self, context: &str) -> Self {
        Self {
            kind: self.kind,
            message: format!("{context}: {}", self.message),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<&ClientError> for Failure {
    fn from(error: &ClientError) -> Self {
        let kind = match error {
            ClientError::InvalidEndpoint { .. } | ClientError::Unreachable { .. } => {
                FailureKind::Unreachable
            }
            ClientError::Timeout(_) => FailureKind::Timeout,
            ClientError::Auth { .. } | ClientError::Unauthorized { .. } => {
                FailureKind::Unauthenticated
            }
            ClientError::Forbidden { .. } => FailureKind::Forbidden,
            ClientError::NotFound { .. } => FailureKind::NotFound,
            ClientError::TooLarge { .. }
            | ClientError::TooManyRequests { .. }
            | ClientError::NotSupported { .. }
            | ClientError::NoCompletion
            | ClientError::InvalidArgument(_) => FailureKind::Refused,
            // The service's answer for a session it does not have (§4.4, §6.2).
            ClientError::Service { code, .. } if code == "SessionWithIdentifierNotFound" => {
                FailureKind::NotFound
            }
            ClientError::Service { status, .. } if *status < 500 => FailureKind::Refused,
            ClientError::Service { .. } | ClientError::Malformed(_) => FailureKind::Service,
            ClientError::Local { .. } => FailureKind::Local,
            ClientError::Cancelled => FailureKind::Cancelled,
        };
        Self::new(kind, error.to_string())
    }
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Self {
        Self::from(&error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_errors_keep_their_words_and_gain_a_kind() {
        let forbidden = Failure::from(ClientError::Forbidden { message: None });
        assert_eq!(forbidden.kind, FailureKind::Forbidden);
        assert!(
            forbidden.message.contains("Session Executor"),
            "{forbidden}"
        );
        let gone = Failure::from(ClientError::NotFound {
            message: None,
            code: None,
            missing: Some("file a.txt".into()),
        });
        assert_eq!(gone.kind, FailureKind::NotFound);
        assert_eq!(gone.to_string(), "no file a.txt in the session's /mnt/data");
        let busy = Failure::from(ClientError::Service {
            status: 409,
            code: "Conflict".into(),
            message: "busy".into(),
        });
        assert_eq!(busy.kind, FailureKind::Refused);
        let no_session = Failure::from(ClientError::Service {
            status: 400,
            code: "SessionWithIdentifierNotFound".into(),
            message: "session with identifier s-1 was not found".into(),
        });
        assert_eq!(no_session.kind, FailureKind::NotFound);
        let down = Failure::from(ClientError::Service {
            status: 503,
            code: "-".into(),
            message: "down".into(),
        });
        assert_eq!(down.kind, FailureKind::Service);
        assert_eq!(
            down.context("cannot end s-1").to_string(),
            "cannot end s-1: 503 -: down"
        );
    }
}
