//! Where a pool is and how to reach it: the one description of a pool target
//! ([`PoolTarget`]), the one connect path to a pool at an endpoint
//! ([`remote_client`]) and the one name of an endpoint in messages
//! ([`endpoint_label`]), shared by the command line and the notebook. Nothing
//! here knows the terminal. (A target with no endpoint is sessionpad's own
//! local pool, which the notebook embeds and the command line finds or starts
//! in the background, see `background`.)

use std::time::Duration;

use crate::client::arm::{ArmClient, PoolResourceId};
use crate::client::auth::{AuthConfig, TokenSource};
use crate::client::{ClientError, SessionClient, Target};
use crate::protocol::{ApiVersion, ContainerType, PoolType};
/// How to reach one pool, resolved from a profile or the command line: what
/// the notebook's pool chooser holds and what both the notebook and the
/// command line connect with.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolTarget {
    /// Pool management endpoint; `None` for the embedded local pool.
    pub endpoint: Option<String>,
    /// Static bearer token.
    pub token: Option<String>,
    /// An Entra credential instead of the static token.
    pub auth: Option<AuthConfig>,
    /// The api-version to speak.
    pub api_version: ApiVersion,
    /// The session identifier cells run in (the profile's, else the one of the
    /// working directory).
    pub identifier: String,
    /// Execution limit of each cell.
    pub timeout: Duration,
    /// How the pool's sessions are listed, read and ended.
    pub pool_type: PoolType,
    /// What the pool runs (Python, shell, Node.js…), which decides what
    /// executions send.
    pub container_type: ContainerType,
    /// Executions ask for a kernel without preloaded libraries
    /// (`useEmptyKernel`, 2025-10-02-preview).
    pub empty_kernel: bool,
    /// Where the local pool's sessions may connect, when asked for (a
    /// profile's `egress`, else `[pool] egress`); only for a target without
    /// an endpoint, whose background pool must run with it. `None`: nothing
    /// asked, so a running local pool of any policy is used.
    pub egress: Option<crate::protocol::egress::Egress>,
}

impl PoolTarget {
    /// The session client of this target's pool when it has an endpoint (see
    /// [`remote_client`]); `None` for the local pool.
    ///
    /// # Errors
    ///
    /// As [`remote_client`].
    pub fn remote_client(&self) -> Result<Option<SessionClient>, ClientError> {
        let Some(endpoint) = &self.endpoint else {
            return Ok(None);
        };
        remote_client(
            endpoint,
            self.api_version,
            self.token.clone(),
            self.auth.as_ref(),
            self.pool_type,
        )
        .map(|c| {
            Some(
                c.with_container_type(self.container_type)
                    .with_empty_kernel(self.empty_kernel),
            )
        })
    }
}

impl PoolTarget {
    /// The ARM client and the resource of this target's pool when its endpoint
    /// names one (`/subscriptions/<sub>/resourceGroups/<rg>/sessionPools/<name>`,
    /// [`PoolResourceId::from_endpoint`]); `None` for the local pool and other
    /// endpoints. The client reads the environment ([`ArmClient::from_env`]:
    /// `SESSIONPAD_ARM_ENDPOINT`, `SESSIONPAD_ARM_API_VERSION`,
    /// `SESSIONPAD_ARM_TOKEN`) and otherwise authenticates with this target's
    /// Entra credential, or `az login` when it has none. No request is made here.
    ///
    /// # Errors
    ///
    /// As [`ArmClient::from_env`]: an unknown ARM api-version, a credential
    /// that cannot be set up.
    pub fn arm(&self) -> Option<Result<(ArmClient, PoolResourceId), ClientError>> {
        let id = PoolResourceId::from_endpoint(self.endpoint.as_deref()?)?;
        Some(ArmClient::from_env(self.auth.as_ref()).map(|c| (c, id)))
    }
}

/// The session client of the pool at `endpoint` (a pool management endpoint,
/// Azure's or a `sessionpad serve`'s), speaking `api_version`, authenticated
/// with the static bearer `token` or, when `auth` is given, Entra tokens from
/// that credential (audience `https://dynamicsessions.io`, refreshed before
/// they expire), and reading sessions as `pool_type` pools do. When the
/// endpoint names an Azure session pool, the client also reads its ARM
/// resource ([`SessionClient::pool_resource`], [`PoolTarget::arm`]). No request
/// is made here: a wrong endpoint or credential shows at the first call.
///
/// # Errors
///
/// [`ClientError`] when the endpoint is not a valid URL, the HTTP client
/// cannot be built, or the credential cannot be set up (e.g. a client secret
/// without its tenant).
pub fn remote_client(
    endpoint: &str,
    api_version: ApiVersion,
    token: Option<String>,
    auth: Option<&AuthConfig>,
    pool_type: PoolType,
) -> Result<SessionClient, ClientError> {
    let client = SessionClient::new(Target {
        endpoint: endpoint.to_string(),
        api_version,
        token,
    })?;
    let client = match auth {
        Some(a) => client.with_auth(TokenSource::new(a)?),
        None => client,
    };
    // An Azure session pool: its card is read from ARM when asked.
    let client = match PoolResourceId::from_endpoint(endpoint) {
        Some(id) => client.with_arm(ArmClient::from_env(auth).map(|c| (c, id))),
        None => client,
    };
    Ok(client.with_pool_type(pool_type))
}

/// How the command line and the notebook name the pool at `endpoint` (a pool
/// management endpoint URL) in messages, the status line and the pools
/// chooser: its host, with `:port` when the port is not the scheme's default,
/// so that two pools on one host are told apart (`127.0.0.1:8341`,
/// `eastus.dynamicsessions.io`; an IPv6 host keeps its brackets, `[::1]:8341`).
/// The endpoint itself, unchanged, when it is not a URL with a host.
pub fn endpoint_label(endpoint: &str) -> String {
    url::Url::parse(endpoint)
        .ok()
        .and_then(|u| {
            // `port()` is `None` for the scheme's default port, written or not.
            u.host_str().map(|h| match u.port() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_string(),
            })
        })
        .unwrap_or_else(|| endpoint.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(endpoint: Option<&str>) -> PoolTarget {
        PoolTarget {
            endpoint: endpoint.map(str::to_string),
            token: Some("t".into()),
            auth: None,
            api_version: ApiVersion::V2025_10_02,
            identifier: "sp-1".into(),
            timeout: Duration::from_secs(220),
            pool_type: PoolType::CodeInterpreter,
            container_type: ContainerType::PythonLts,
            empty_kernel: false,
            egress: None,
        }
    }

    #[test]
    fn only_a_target_with_an_endpoint_has_a_remote_client() {
        assert!(matches!(target(None).remote_client(), Ok(None)));
        let client = target(Some("http://127.0.0.1:9"))
            .remote_client()
            .expect("a valid endpoint");
        assert_eq!(
            client.map(|c| c.endpoint().to_string()).as_deref(),
            Some("http://127.0.0.1:9")
        );
        assert!(target(Some("not a url")).remote_client().is_err());
    }

    #[test]
    fn an_endpoint_is_labelled_by_its_host_and_a_port_that_is_not_the_default() {
        assert_eq!(
            endpoint_label("https://eastus.dynamicsessions.io/subscriptions/x/sessionPools/p"),
            "eastus.dynamicsessions.io"
        );
        // Two pools on one host are told apart by their ports.
        assert_eq!(endpoint_label("http://127.0.0.1:8341"), "127.0.0.1:8341");
        assert_eq!(endpoint_label("http://127.0.0.1:8342/"), "127.0.0.1:8342");
        // The scheme's default port is not written, whether the URL has it or not.
        assert_eq!(endpoint_label("https://example.com:443/p"), "example.com");
        assert_eq!(endpoint_label("http://example.com:80"), "example.com");
        assert_eq!(endpoint_label("http://example.com:443"), "example.com:443");
        assert_eq!(endpoint_label("http://[::1]:8341"), "[::1]:8341");
        assert_eq!(endpoint_label("nonsense"), "nonsense");
    }
}
