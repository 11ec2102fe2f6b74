//! The session client: a typed async client of the dynamic-sessions data plane
//! (`aca-api.md`). It talks to Azure session pools and to sessionpad's local pool
//! with the same code. It knows nothing of the terminal.

pub mod api;
pub mod auth;
pub mod error;
mod executions;
mod response;
pub mod model;

use std::time::Duration;

pub use api::{ApiVersion, Family};
pub use error::ClientError;
pub use model::{Execution, ExecutionImage, ExecutionStatus};
use url::Url;

/// Where and how to reach a session pool.
#[derive(Debug, Clone)]
pub struct Target {
    /// The pool management endpoint, e.g.
    /// `https://eastus.dynamicsessions.io/subscriptions/…/sessionPools/pool` or
    /// `http://127.0.0.1:PORT` for the local pool (`aca-api.md` §1.1).
    pub endpoint: String,
    /// The api-version every request names.
    pub api_version: ApiVersion,
    /// A static bearer token, or `None` to send no `Authorization` header.
    pub token: Option<String>,
}

/// A client of one session pool. Cheap to clone: clones share one connection pool.
#[derive(Debug, Clone)]
pub struct SessionClient {
    http: reqwest::Client,
    base: Url,
    endpoint: String,
    api_version: ApiVersion,
    token: Option<String>,
}

impl SessionClient {
    /// Builds a client for `target`.
    ///
    /// Errors: [`ClientError::InvalidEndpoint`] when the endpoint is not an http(s) URL.
    pub fn new(target: Target) -> Result<Self, ClientError> {
        let invalid = |reason: String| ClientError::InvalidEndpoint {
            endpoint: target.endpoint.clone(),
            reason,
        };
        let mut base = Url::parse(target.endpoint.trim()).map_err(|e| invalid(e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(invalid("the scheme must be https (or http for a local pool)".into()));
        }
        // Every operation path is joined below the endpoint, so it must end in '/'
        // (clients normalise a trailing slash, `aca-api.md` §1.1).
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        Ok(Self {
            http,
            base,
            endpoint: target.endpoint,
            api_version: target.api_version,
            token: target.token,
        })
    }

    /// The api-version this client sends.
    pub fn api_version(&self) -> ApiVersion {
        self.api_version
    }

    /// The pool management endpoint as configured.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The URL of `path` (relative, no leading slash) with `api-version`, and
    /// `identifier` when given, in the query.
    fn url(&self, path: &str, identifier: Option<&str>) -> Result<Url, ClientError> {
        let mut url = self
            .base
            .join(path)
            .map_err(|e| ClientError::InvalidEndpoint {
                endpoint: self.endpoint.clone(),
                reason: e.to_string(),
            })?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("api-version", self.api_version.as_str());
            if let Some(id) = identifier {
                q.append_pair("identifier", id);
            }
        }
        Ok(url)
    }

    fn authorize(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }
}
