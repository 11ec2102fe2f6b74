//! The session pool's Azure Resource Manager resource: what the data plane does
//! not say of a pool (egress, lifecycle, scale, container type and image, its
//! MCP server, its health), read once with `GET
//! https://management.azure.com/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.App/sessionPools/{name}?api-version=…`
//! (operation `ContainerAppsSessionPools_Get` of the ARM spec,
//! `specification/app/resource-manager/Microsoft.App/ContainerApps/…/SessionPools.json`
//! in Azure/azure-rest-api-specs) with a token for `https://management.azure.com`
//! from the same credential the data plane uses. Nothing here knows the terminal:
//! [`SessionPoolResource::card`] gives labelled lines, the caller prints them.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use super::ClientError;
use super::auth::{AuthConfig, TokenSource};

/// Azure Resource Manager's base URL.
pub const ARM_BASE: &str = "https://management.azure.com";
/// The environment variable that points ARM requests elsewhere (a stand-in on
/// loopback in tests, a sovereign cloud's `https://management.usgovcloudapi.net`).
pub const ARM_ENDPOINT_ENV: &str = "SESSIONPAD_ARM_ENDPOINT";
/// The environment variable naming the ARM api-version to read with (one of
/// [`ArmApiVersion::ALL`]; default [`ArmApiVersion::default`]).
pub const ARM_API_VERSION_ENV: &str = "SESSIONPAD_ARM_API_VERSION";
/// The environment variable holding a bearer token for ARM to send as is
/// (`az account get-access-token --resource https://management.azure.com`),
/// instead of asking the credential.
pub const ARM_TOKEN_ENV: &str = "SESSIONPAD_ARM_TOKEN";

/// How long the one ARM request may take, token aside.
const ARM_TIMEOUT: Duration = Duration::from_secs(30);

/// The api-versions of `Microsoft.App/sessionPools` in the ARM spec
/// (azure-rest-api-specs, `specification/app/resource-manager/Microsoft.App/ContainerApps/{preview,stable}/<version>/SessionPools.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArmApiVersion {
    /// `2024-02-02-preview`, the first with session pools.
    V2024_02_02Preview,
    /// `2024-08-02-preview`.
    V2024_08_02Preview,
    /// `2024-10-02-preview`.
    V2024_10_02Preview,
    /// `2025-01-01`, stable.
    V2025_01_01,
    /// `2025-02-02-preview`.
    V2025_02_02Preview,
    /// `2025-07-01`, stable.
    V2025_07_01,
    /// `2025-10-02-preview`: adds `templateUpdateStatus` (health: crash and
    /// image-pull failure counts) and `mcpServerSettings`. The default: the most
    /// the card can show.
    #[default]
    V2025_10_02Preview,
    /// `2026-01-01`, stable (no `templateUpdateStatus`, no `mcpServerSettings`).
    V2026_01_01,
}

impl ArmApiVersion {
    /// Every version, oldest first.
    pub const ALL: [ArmApiVersion; 8] = [
        Self::V2024_02_02Preview,
        Self::V2024_08_02Preview,
        Self::V2024_10_02Preview,
        Self::V2025_01_01,
        Self::V2025_02_02Preview,
        Self::V2025_07_01,
        Self::V2025_10_02Preview,
        Self::V2026_01_01,
    ];

    /// The `api-version` query value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2024_02_02Preview => "2024-02-02-preview",
            Self::V2024_08_02Preview => "2024-08-02-preview",
            Self::V2024_10_02Preview => "2024-10-02-preview",
            Self::V2025_01_01 => "2025-01-01",
            Self::V2025_02_02Preview => "2025-02-02-preview",
            Self::V2025_07_01 => "2025-07-01",
            Self::V2025_10_02Preview => "2025-10-02-preview",
            Self::V2026_01_01 => "2026-01-01",
        }
    }
}

impl fmt::Display for ArmApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ArmApiVersion {
    type Err = String;

    /// One of [`ArmApiVersion::ALL`] by its `api-version` string; an error naming them.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str() == s.trim())
            .ok_or_else(|| {
                let known: Vec<_> = Self::ALL.iter().map(|v| v.as_str()).collect();
                format!(
                    "unknown ARM api-version {s:?} for session pools (known: {})",
                    known.join(", ")
                )
            })
    }
}

/// Which session pool a data-plane endpoint names: its subscription, resource
/// group and name, from the path
/// `/subscriptions/<sub>/resourceGroups/<rg>/sessionPools/<name>` (`aca-api.md`
/// §1.1; the host, Azure's `<region>.dynamicsessions.io` or any other, does not
/// matter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolResourceId {
    /// The subscription id.
    pub subscription: String,
    /// The resource group.
    pub resource_group: String,
    /// The session pool's name.
    pub name: String,
}

impl PoolResourceId {
    /// The pool `endpoint` names, or `None` when its path is not
    /// `/subscriptions/<sub>/resourceGroups/<rg>/sessionPools/<name>` (a local
    /// pool, `http://127.0.0.1:8341`). The segment names are matched without
    /// regard to case, as ARM matches them; a trailing `/` is allowed.
    pub fn from_endpoint(endpoint: &str) -> Option<Self> {
        let url = Url::parse(endpoint.trim()).ok()?;
        let segments: Vec<String> = url
            .path_segments()?
            .filter(|s| !s.is_empty())
            .map(|s| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            })
            .collect();
        let [subs, subscription, groups, resource_group, pools, name] = segments.as_slice() else {
            return None;
        };
        let matches = subs.eq_ignore_ascii_case("subscriptions")
            && groups.eq_ignore_ascii_case("resourceGroups")
            && pools.eq_ignore_ascii_case("sessionPools");
        matches.then(|| Self {
            subscription: subscription.clone(),
            resource_group: resource_group.clone(),
            name: name.clone(),
        })
    }

    /// The resource's ARM id,
    /// `/subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.App/sessionPools/<name>`.
    pub fn arm_id(&self) -> String {
        format!(
            "/subscriptions/{}/resourceGroups/{}/providers/Microsoft.App/sessionPools/{}",
            self.subscription, self.resource_group, self.name
        )
    }
}

/// What can go wrong reading the pool's ARM resource.
#[derive(Debug, thiserror::Error)]
pub enum ArmError {
    /// HTTP 403 from ARM: the identity may not read the resource. The text
    /// names the role first (it is what a narrow pane has room for).
    #[error(
        "ARM refused (403{}): reading session pool {name} needs the \"Reader\" role on it (or on \
         its resource group or subscription), or any role with \
         Microsoft.App/sessionPools/read; the \"Azure ContainerApps Session Executor\" role of \
         the data plane does not include it{}",
        code.as_deref().map(|c| format!(" {c}")).unwrap_or_default(),
        message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default()
    )]
    Forbidden {
        /// The pool's name.
        name: String,
        /// ARM's error code (`AuthorizationFailed`), if any.
        code: Option<String>,
        /// ARM's message, if any.
        message: Option<String>,
    },
    /// HTTP 404 from ARM: no such pool under that subscription and resource group.
    #[error(
        "ARM has no session pool {name} in resource group {resource_group} of subscription \
         {subscription} (404{}){}",
        code.as_deref().map(|c| format!(" {c}")).unwrap_or_default(),
        message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
    )]
    NotFound {
        /// The pool's name.
        name: String,
        /// The resource group looked in.
        resource_group: String,
        /// The subscription looked in.
        subscription: String,
        /// ARM's error code (`ResourceNotFound`, `ResourceGroupNotFound`,
        /// `SubscriptionNotFound`), if any.
        code: Option<String>,
        /// ARM's message, if any.
        message: Option<String>,
    },
    /// Any other failure, as the session client reports it (token, transport,
    /// other statuses, a body that is not a session pool).
    #[error("reading the session pool from ARM: {0}")]
    Client(#[from] ClientError),
}

/// A client of Azure Resource Manager for session pools' resources. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ArmClient {
    http: reqwest::Client,
    base: Url,
    api_version: ArmApiVersion,
    auth: ArmAuth,
}

/// Where the ARM bearer token comes from.
#[derive(Clone)]
enum ArmAuth {
    /// A token given as is ([`ARM_TOKEN_ENV`]).
    Token(String),
    /// A credential asked for [`super::auth::ARM_SCOPE`].
    Source(TokenSource),
}

impl fmt::Debug for ArmAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArmAuth::Token(_) => f.write_str("Token(<redacted>)"),
            ArmAuth::Source(s) => s.fmt(f),
        }
    }
}

impl ArmClient {
    /// A client of ARM at `base` (e.g. [`ARM_BASE`]) reading with `api_version`,
    /// authenticated by `token` when given (sent as is), else by the credential
    /// `auth` (asked for `https://management.azure.com/.default`).
    ///
    /// # Errors
    ///
    /// [`ClientError::InvalidEndpoint`] for a base that is not an http(s) URL;
    /// [`ClientError::Auth`] when the credential cannot be set up.
    pub fn new(
        base: &str,
        api_version: ArmApiVersion,
        token: Option<String>,
        auth: &AuthConfig,
    ) -> Result<Self, ClientError> {
        let invalid = |reason: String| ClientError::InvalidEndpoint {
            endpoint: base.to_string(),
            reason,
        };
        let base = Url::parse(base.trim()).map_err(|e| invalid(e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(invalid("the ARM endpoint must be an http(s) URL".into()));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(ARM_TIMEOUT)
            .user_agent(super::user_agent())
            .build()
            .map_err(|e| invalid(e.to_string()))?;
        let auth = match token.filter(|t| !t.trim().is_empty()) {
            Some(t) => ArmAuth::Token(t.trim().trim_start_matches("Bearer ").to_string()),
            None => ArmAuth::Source(TokenSource::for_arm(auth)?),
        };
        Ok(Self {
            http,
            base,
            api_version,
            auth,
        })
    }

    /// The client for a pool whose data plane authenticates with `pool_auth`
    /// (`None`: a static token or none), from the environment: the base from
    /// [`ARM_ENDPOINT_ENV`] (default [`ARM_BASE`]), the api-version from
    /// [`ARM_API_VERSION_ENV`], a token from [`ARM_TOKEN_ENV`]; else the pool's
    /// Entra credential, or, when the pool has none (a static data-plane token
    /// is for another audience), the Azure CLI / Developer CLI login.
    ///
    /// # Errors
    ///
    /// An api-version that is not one of [`ArmApiVersion::ALL`]; as [`ArmClient::new`].
    pub fn from_env(pool_auth: Option<&AuthConfig>) -> Result<Self, ClientError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let api_version = match env(ARM_API_VERSION_ENV) {
            Some(v) => v
                .parse()
                .map_err(|e: String| ClientError::InvalidArgument(e))?,
            None => ArmApiVersion::default(),
        };
        let credential = match pool_auth {
            Some(
                c @ (AuthConfig::DeveloperTools
                | AuthConfig::ManagedIdentity { .. }
                | AuthConfig::WorkloadIdentity
                | AuthConfig::ClientSecret { .. }),
            ) => c.clone(),
            _ => AuthConfig::DeveloperTools,
        };
        Self::new(
            &env(ARM_ENDPOINT_ENV).unwrap_or_else(|| ARM_BASE.to_string()),
            api_version,
            env(ARM_TOKEN_ENV),
            &credential,
        )
    }

    /// The api-version this client reads with.
    pub fn api_version(&self) -> ArmApiVersion {
        self.api_version
    }

    /// The URL of the pool's resource with the api-version.
    fn url(&self, id: &PoolResourceId) -> Result<Url, ClientError> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| ClientError::InvalidEndpoint {
                endpoint: self.base.to_string(),
                reason: "the ARM endpoint cannot take a path".into(),
            })?
            .pop_if_empty()
            .extend([
                "subscriptions",
                &id.subscription,
                "resourceGroups",
                &id.resource_group,
                "providers",
                "Microsoft.App",
                "sessionPools",
                &id.name,
            ]);
        url.query_pairs_mut()
            .append_pair("api-version", self.api_version.as_str());
        Ok(url)
    }

    /// Reads the session pool `id` (`ContainerAppsSessionPools_Get`).
    ///
    /// # Errors
    ///
    /// [`ArmError::Forbidden`] (403, naming the role), [`ArmError::NotFound`]
    /// (404), else [`ArmError::Client`]: no token, ARM unreachable or slow,
    /// another status with ARM's `{"error":{"code","message"}}`, or a body that
    /// is not a JSON object.
    pub async fn session_pool(&self, id: &PoolResourceId) -> Result<SessionPoolResource, ArmError> {
        let url = self.url(id)?;
        let header = match &self.auth {
            ArmAuth::Token(t) => Some(format!("Bearer {t}")),
            ArmAuth::Source(s) => s.bearer().await?,
        };
        let mut req = self.http.get(url);
        if let Some(h) = header {
            req = req.header(reqwest::header::AUTHORIZATION, h);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| super::response::transport(self.base.as_str(), ARM_TIMEOUT, e))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(self.refusal(id, resp).await);
        }
        let body = resp
            .bytes()
            .await
            .map_err(|e| super::response::transport(self.base.as_str(), ARM_TIMEOUT, e))?;
        serde_json::from_slice(&body).map_err(|e| {
            ArmError::Client(ClientError::Malformed(format!(
                "ARM's session pool is not the expected JSON: {e}"
            )))
        })
    }

    /// The error of ARM's answer `resp` (not 2xx) about the pool `id`: its
    /// `{"error":{"code","message"}}` body (or `x-ms-error-code` header) read
    /// into [`ArmError::Forbidden`], [`ArmError::NotFound`], a 401 into
    /// [`ClientError::Auth`] (the cached token is dropped), a 429 into
    /// [`ClientError::TooManyRequests`], anything else [`ClientError::Service`].
    async fn refusal(&self, id: &PoolResourceId, resp: reqwest::Response) -> ArmError {
        let status = resp.status();
        let header_code = resp
            .headers()
            .get("x-ms-error-code")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let retry_after = super::retry::retry_after(resp.headers());
        let body = resp.text().await.unwrap_or_default();
        let (body_code, body_message) = super::response::parse_error_body(&body);
        let code = body_code.or(header_code);
        let message = body_message.or_else(|| {
            let t = body.trim();
            (!t.is_empty()).then(|| t.chars().take(300).collect())
        });
        match status.as_u16() {
            403 => ArmError::Forbidden {
                name: id.name.clone(),
                code,
                message,
            },
            404 => ArmError::NotFound {
                name: id.name.clone(),
                resource_group: id.resource_group.clone(),
                subscription: id.subscription.clone(),
                code,
                message,
            },
            401 => {
                if let ArmAuth::Source(s) = &self.auth {
                    s.invalidate();
                }
                ArmError::Client(ClientError::Auth {
                    message: format!(
                        "ARM answered 401: the token was missing, expired or not for \
                         https://management.azure.com{}",
                        message.map(|m| format!(" ({m})")).unwrap_or_default()
                    ),
                })
            }
            429 => ArmError::Client(ClientError::TooManyRequests { retry_after }),
            _ => ArmError::Client(ClientError::Service {
                status: status.as_u16(),
                code: code.unwrap_or_else(|| "-".into()),
                message: message.unwrap_or_else(|| status.canonical_reason().unwrap_or("").into()),
            }),
        }
    }
}

/// A `Microsoft.App/sessionPools` resource as ARM answers `GET` (the spec's
/// `SessionPool`, a `TrackedResource`). Every member is optional and unknown
/// members are ignored, so that every api-version of [`ArmApiVersion::ALL`]
/// reads; serialised back with ARM's own camelCase names (`--json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPoolResource {
    /// The ARM id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The pool's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `Microsoft.App/sessionPools`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    /// The Azure region, e.g. `East US`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The pool's managed identity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<ManagedServiceIdentity>,
    /// The resource's properties.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<SessionPoolProperties>,
}

/// `identity` of a tracked resource (`ManagedServiceIdentity`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedServiceIdentity {
    /// `SystemAssigned`, `UserAssigned`, `SystemAssigned,UserAssigned` or `None`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub identity_type: Option<String>,
    /// The system-assigned identity's principal id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal_id: Option<String>,
    /// The system-assigned identity's tenant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
}

/// `properties` of a session pool (`SessionPool.properties`; `secrets` are not
/// read: ARM never returns their values).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPoolProperties {
    /// The managed environment's ARM id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment_id: Option<String>,
    /// `PythonLTS`, `Shell`, `NodeLTS`, `GpuBase` or `CustomContainer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container_type: Option<String>,
    /// `Dynamic` or `Manual`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_management_type: Option<String>,
    /// The nodes the pool is using (read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_count: Option<i64>,
    /// Maximum concurrent and ready sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_configuration: Option<ScaleConfiguration>,
    /// The sessions' lifecycle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic_pool_configuration: Option<DynamicPoolConfiguration>,
    /// The containers of a `CustomContainer` pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_container_template: Option<CustomContainerTemplate>,
    /// Egress on or off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_network_configuration: Option<SessionNetworkConfiguration>,
    /// The health of the active template, and of the desired one during an
    /// update (2025-10-02-preview; custom-container pools).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_update_status: Option<TemplateUpdateStatus>,
    /// The data-plane endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_management_endpoint: Option<String>,
    /// `InProgress`, `Succeeded`, `Failed`, `Canceled` or `Deleting`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioning_state: Option<String>,
    /// Which managed identities the sessions get, and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managed_identity_settings: Option<Vec<ManagedIdentitySetting>>,
    /// The pool's MCP server (2025-10-02-preview).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_server_settings: Option<McpServerSettings>,
}

/// `scaleConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleConfiguration {
    /// The most sessions alive at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrent_sessions: Option<i64>,
    /// Sessions kept ready (pre-warmed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_session_instances: Option<i64>,
}

/// `dynamicPoolConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DynamicPoolConfiguration {
    /// The lifecycle of a session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle_configuration: Option<LifecycleConfiguration>,
    /// The cooldown of api-versions before the lifecycle object (seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown_period_in_seconds: Option<i64>,
    /// `Timed`, in api-versions before the lifecycle object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_type: Option<String>,
}

/// `lifecycleConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleConfiguration {
    /// `Timed` (ended after the cooldown without use) or `OnContainerExit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle_type: Option<String>,
    /// Seconds without use before a `Timed` session ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown_period_in_seconds: Option<i64>,
    /// The longest an `OnContainerExit` session lives, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_alive_period_in_seconds: Option<i64>,
}

/// `customContainerTemplate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomContainerTemplate {
    /// Where the images come from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_credentials: Option<RegistryCredentials>,
    /// The containers of each session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub containers: Option<Vec<SessionContainer>>,
    /// The port sessions are reached on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ingress: Option<SessionIngress>,
}

/// `registryCredentials` (the password is a secret's name, never its value).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryCredentials {
    /// The registry, e.g. `test.azurecr.io`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// A user name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The name of the secret holding the password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_secret_ref: Option<String>,
    /// The managed identity that pulls (`system` or a user-assigned id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
}

/// `SessionContainer`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContainer {
    /// The image, e.g. `repo/testcontainer:v4`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The container's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The start command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Its arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// CPU and memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<ContainerResources>,
}

/// `SessionContainerResources`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResources {
    /// Cores, e.g. 0.25.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<f64>,
    /// Memory as ARM writes it, e.g. `0.5Gi`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

/// `SessionIngress`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionIngress {
    /// The container port traffic goes to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_port: Option<i64>,
}

/// `sessionNetworkConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNetworkConfiguration {
    /// `EgressEnabled` or `EgressDisabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// `ManagedIdentitySetting`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedIdentitySetting {
    /// `system` or a user-assigned identity's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// `Main` (the sessions have it) or `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<String>,
}

/// `McpServerSettings` (2025-10-02-preview).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerSettings {
    /// Whether the pool's MCP server is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_mcp_server_enabled: Option<bool>,
    /// Whether it takes requests without its API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_mcp_server_api_key_disabled: Option<bool>,
    /// Its endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_server_endpoint: Option<String>,
}

/// `TemplateUpdateStatus` (2025-10-02-preview).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateUpdateStatus {
    /// The template sessions run now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_template: Option<TemplateStatus>,
    /// The template being rolled out, during an update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired_template: Option<TemplateStatus>,
}

/// `TemplateStatus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateStatus {
    /// `Running`, `Updating`, …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    /// When the template was made, as ARM wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_time: Option<String>,
    /// Its pods' counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<TemplatePoolStatus>,
    /// Its containers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub containers: Option<Vec<SessionContainer>>,
    /// Its ingress.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ingress: Option<SessionIngress>,
}

/// `TemplatePoolStatus`: counts of the template's pods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplatePoolStatus {
    /// Pods wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_count: Option<i64>,
    /// Pods ready.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ready_count: Option<i64>,
    /// Pods starting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_count: Option<i64>,
    /// Pods whose image could not be pulled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_pull_fail_count: Option<i64>,
    /// Pods that crashed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_count: Option<i64>,
    /// Pods allocated to sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocated_count: Option<i64>,
}

#[cfg(test)]
#[path = "arm_tests.rs"]
mod tests;
