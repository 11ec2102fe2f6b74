//! The session client: a typed async client of the dynamic-sessions data plane
//! (`aca-api.md`). It talks to Azure session pools and to sessionpad's local pool
//! with the same code. It knows nothing of the terminal.

pub mod arm;
mod arm_card;
pub mod auth;
pub mod error;
mod events;
mod executions;
mod file_wire;
mod files;
mod json_stream;
mod local_pool;
pub mod recording;
mod response;
mod retry;
mod sessions;
pub mod shell;

use std::time::Duration;

use crate::protocol::ApiVersion;
use crate::protocol::ContainerType;
use crate::protocol::PoolType;
pub use error::ClientError;
pub use files::MAX_UPLOAD;
pub use shell::ShellRequest;
use url::Url;

/// The `User-Agent` every request of this process sends:
/// `sessionpad/<version> (pid <n>)`. A pool that records its clients (the
/// flight recorder) names sessionpad's calls by it, and a notebook following a
/// session tells its own calls from other clients' by it (the pid makes it
/// this process's).
pub fn user_agent() -> &'static str {
    static AGENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    AGENT.get_or_init(|| {
        format!(
            "sessionpad/{} (pid {})",
            env!("CARGO_PKG_VERSION"),
            std::process::id()
        )
    })
}

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
    auth: auth::TokenSource,
    pool_type: PoolType,
    container_type: ContainerType,
    recording: Option<recording::CallRecording>,
    /// The `User-Agent` of this client's requests where it is not the
    /// process's ([`SessionClient::with_user_agent`]).
    user_agent: Option<reqwest::header::HeaderValue>,
    /// The pool's ARM resource and the client to read it with, when the
    /// endpoint names an Azure session pool ([`SessionClient::with_arm`]), or
    /// why there is no such client.
    arm: Option<std::sync::Arc<Result<(arm::ArmClient, arm::PoolResourceId), String>>>,
    /// Whether executions ask for a kernel without preloaded libraries
    /// ([`SessionClient::with_empty_kernel`]).
    empty_kernel: bool,
}

impl SessionClient {
    /// Builds a client for `target`.
    ///
    /// # Errors
    ///
    /// [`ClientError::InvalidEndpoint`] when the endpoint is not an http(s) URL.
    pub fn new(target: Target) -> Result<Self, ClientError> {
        let invalid = |reason: String| ClientError::InvalidEndpoint {
            endpoint: target.endpoint.clone(),
            reason,
        };
        let mut base = Url::parse(target.endpoint.trim()).map_err(|e| invalid(e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(invalid(
                "the scheme must be https (or http for a local pool)".into(),
            ));
        }
        // Every operation path is joined below the endpoint, so it must end in '/'
        // (clients normalise a trailing slash, `aca-api.md` §1.1).
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .user_agent(user_agent())
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        let auth = auth::TokenSource::new(&match target.token {
            Some(t) => auth::AuthConfig::StaticToken(t),
            None => auth::AuthConfig::None,
        })?;
        let recording = recording::CallRecording::for_endpoint(&target.endpoint);
        Ok(Self {
            http,
            base,
            endpoint: target.endpoint,
            api_version: target.api_version,
            auth,
            pool_type: PoolType::default(),
            container_type: ContainerType::default(),
            recording,
            user_agent: None,
            arm: None,
            empty_kernel: false,
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

    /// Records this client's own calls in the process's ledger (`on`), or not,
    /// whatever its endpoint's scheme says (by default only clients of
    /// `https` endpoints record, see [`recording`]): for an `http` endpoint
    /// that does not record itself (a tunnel to a remote pool). Nothing is
    /// recorded unless the process [`recording::install`]ed a ledger.
    #[must_use]
    pub fn recording_own_calls(mut self, on: bool) -> Self {
        self.recording = if on {
            recording::CallRecording::always(&self.endpoint)
        } else {
            None
        };
        // A User-Agent given before stays the recorded client.
        if let (Some(r), Some(agent)) = (&mut self.recording, &self.user_agent) {
            r.set_client(String::from_utf8_lossy(agent.as_bytes()).into_owned());
        }
        self
    }

    /// Sends `agent` as the `User-Agent` of every request instead of the
    /// process's own ([`user_agent`]), and records this client's own calls
    /// ([`recording`]) under it: for requests made on someone else's behalf
    /// (`sessionpad mcp` names the MCP host, `mcp::Caller`). Cheap: the
    /// connection pool stays shared with the clones.
    #[must_use]
    pub fn with_user_agent(mut self, agent: reqwest::header::HeaderValue) -> Self {
        if let Some(r) = &mut self.recording {
            r.set_client(String::from_utf8_lossy(agent.as_bytes()).into_owned());
        }
        self.user_agent = Some(agent);
        self
    }

    /// Uses `auth` for every request instead of the target's static token (Entra
    /// credentials: az login, managed identity, workload identity, client secret).
    #[must_use]
    pub fn with_auth(mut self, auth: auth::TokenSource) -> Self {
        self.auth = auth;
        self
    }

    /// Reads the pool's ARM resource, in [`SessionClient::pool_resource`], with
    /// `arm` (the client and the resource the endpoint names), or says why not
    /// (its error).
    #[must_use]
    pub fn with_arm(
        mut self,
        arm: Result<(arm::ArmClient, arm::PoolResourceId), ClientError>,
    ) -> Self {
        self.arm = Some(std::sync::Arc::new(arm.map_err(|e| e.to_string())));
        self
    }

    /// The pool's ARM resource (`Microsoft.App/sessionPools` GET,
    /// [`arm::ArmClient::session_pool`]): `None` for a pool that is not an
    /// Azure session pool ([`SessionClient::with_arm`] was not called), else
    /// the resource or the error's words (a 403 names the missing role).
    pub async fn pool_resource(&self) -> Option<Result<arm::SessionPoolResource, String>> {
        let arm = self.arm.as_ref()?;
        Some(match arm.as_ref() {
            Ok((client, id)) => client.session_pool(id).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.clone()),
        })
    }

    /// Treats the pool as `pool_type` in [`SessionClient::pool_sessions`],
    /// [`SessionClient::pool_session`] and [`SessionClient::end_session`]
    /// (default: a code-interpreter pool).
    #[must_use]
    pub fn with_pool_type(mut self, pool_type: PoolType) -> Self {
        self.pool_type = pool_type;
        self
    }

    /// The kind of pool this client manages sessions of.
    pub fn pool_type(&self) -> PoolType {
        self.pool_type
    }

    /// Treats the pool as running `container_type` (from configuration; the
    /// data plane does not say): a `Shell` pool is sent shell commands
    /// ([`SessionClient::execute_shell`]). Default: `PythonLTS`.
    #[must_use]
    pub fn with_container_type(mut self, container_type: ContainerType) -> Self {
        self.container_type = container_type;
        self
    }

    /// Asks every execution for a kernel without preloaded libraries
    /// (`useEmptyKernel: true`, 2025-10-02-preview, `aca-api.md` §13; the
    /// spec says it starts faster). On an earlier api-version an execution
    /// asked so is refused before anything is sent
    /// ([`ClientError::InvalidArgument`]). Default: not asked (the field is
    /// not sent).
    #[must_use]
    pub fn with_empty_kernel(mut self, empty_kernel: bool) -> Self {
        self.empty_kernel = empty_kernel;
        self
    }

    /// Whether executions ask for a kernel without preloaded libraries.
    pub fn empty_kernel(&self) -> bool {
        self.empty_kernel
    }

    /// The container type the pool is known to run.
    pub fn container_type(&self) -> ContainerType {
        self.container_type
    }

    /// `req` with the `Authorization` header from the token source (cached,
    /// refreshed before expiry), and this client's own `User-Agent` where it
    /// has one ([`SessionClient::with_user_agent`]; every request passes
    /// here). Errors: [`ClientError::Auth`] when no token can be had.
    async fn authorize(
        &self,
        req: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, ClientError> {
        let req = match &self.user_agent {
            Some(agent) => req.header(reqwest::header::USER_AGENT, agent.clone()),
            None => req,
        };
        Ok(match self.auth.bearer().await? {
            Some(header) => req.header(reqwest::header::AUTHORIZATION, header),
            None => req,
        })
    }

    /// Forgets a cached token after the pool answered 401, so the next request
    /// fetches a new one.
    pub(crate) fn on_unauthorized(&self) {
        self.auth.invalidate();
    }
}
