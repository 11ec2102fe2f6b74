//! Authentication to a session pool (`aca-api.md` §2): Entra tokens for the audience
//! `https://dynamicsessions.io` from `azure_identity` credentials, a static bearer
//! token, or nothing (the local pool).
//!
//! A [`TokenSource`] caches the token with its expiry and fetches a new one five
//! minutes before it expires. One fetch at a time: concurrent [`TokenSource::bearer`]
//! calls while a fetch is in flight wait for that fetch and share its result, error
//! included; the next call after a failure tries again. Tokens are never logged.

mod credential;
mod static_token;

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use azure_core::credentials::TokenCredential;
use azure_core::http::Transport;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};

use super::ClientError;
use credential::EnvLookup;

/// The scope requested: `https://dynamicsessions.io/.default` (`aca-api.md` §2).
pub const SCOPE: &str = "https://dynamicsessions.io/.default";

/// The scope of Azure Resource Manager tokens, `https://management.azure.com/.default`:
/// what [`TokenSource::for_arm`] asks for, to read the session pool's resource
/// (`client::arm`).
pub const ARM_SCOPE: &str = "https://management.azure.com/.default";

/// A token is fetched anew this long before it expires.
const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);
/// The longest one fetch may take (IMDS retries alone may take 72 s).
const FETCH_TIMEOUT: Duration = Duration::from_secs(45);

/// How to authenticate, chosen by config/flags.
#[derive(Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum AuthConfig {
    /// No `Authorization` header (the local pool, `--no-auth`).
    None,
    /// A bearer token given as is (`--token`, `SESSIONPAD_TOKEN`). Never printed by `Debug`.
    StaticToken(String),
    /// The identity signed in to the Azure CLI (`az login`) or, failing that, the Azure
    /// Developer CLI (`azd auth login`).
    DeveloperTools,
    /// A managed identity: system-assigned, or user-assigned with this client id.
    ManagedIdentity {
        /// The client id of a user-assigned identity.
        client_id: Option<String>,
    },
    /// Workload identity federation: `AZURE_TENANT_ID`, `AZURE_CLIENT_ID` and
    /// `AZURE_FEDERATED_TOKEN_FILE` from the environment.
    WorkloadIdentity,
    /// A service principal with a client secret. The secret is never printed by `Debug`.
    ClientSecret {
        /// The Entra tenant id.
        tenant_id: String,
        /// The application (client) id.
        client_id: String,
        /// The client secret.
        secret: String,
    },
}

impl fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const REDACTED: &str = "<redacted>";
        match self {
            AuthConfig::None => f.write_str("None"),
            AuthConfig::StaticToken(_) => f.debug_tuple("StaticToken").field(&REDACTED).finish(),
            AuthConfig::DeveloperTools => f.write_str("DeveloperTools"),
            AuthConfig::ManagedIdentity { client_id } => f
                .debug_struct("ManagedIdentity")
                .field("client_id", client_id)
                .finish(),
            AuthConfig::WorkloadIdentity => f.write_str("WorkloadIdentity"),
            AuthConfig::ClientSecret {
                tenant_id,
                client_id,
                secret: _,
            } => f
                .debug_struct("ClientSecret")
                .field("tenant_id", tenant_id)
                .field("client_id", client_id)
                .field("secret", &REDACTED)
                .finish(),
        }
    }
}

impl AuthConfig {
    fn describe(&self) -> String {
        match self {
            AuthConfig::None => "none".into(),
            AuthConfig::StaticToken(_) => "static token".into(),
            AuthConfig::DeveloperTools => "az login".into(),
            AuthConfig::ManagedIdentity { client_id: None } => "managed identity".into(),
            AuthConfig::ManagedIdentity {
                client_id: Some(id),
            } => format!("managed identity (client id {id})"),
            AuthConfig::WorkloadIdentity => "workload identity".into(),
            AuthConfig::ClientSecret { client_id, .. } => {
                format!("client secret (client id {client_id})")
            }
        }
    }
}

/// A cached, refreshed source of bearer tokens. Cheap to clone (clones share the cache).
#[derive(Clone)]
pub struct TokenSource {
    inner: Arc<Inner>,
}

struct Inner {
    description: String,
    mode: Mode,
}

enum Mode {
    None,
    Static { header: String, exp: Option<i64> },
    Credential(Refresher),
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSource")
            .field("auth", &self.inner.description)
            .finish_non_exhaustive()
    }
}

impl TokenSource {
    /// Builds the source for `config`: checks a static token (an expired JWT or one for
    /// another audience is an error), or builds the credential (missing settings are an
    /// error). No token is fetched yet.
    ///
    /// # Errors
    ///
    /// [`ClientError::Auth`] saying why: the static token is expired, for another
    /// audience or unusable, or the credential's settings are missing or invalid.
    pub fn new(config: &AuthConfig) -> Result<Self, ClientError> {
        let provider = match config {
            AuthConfig::None | AuthConfig::StaticToken(_) => None,
            _ => Some(Provider::Azure {
                config: config.clone(),
                transport: credential::transport().map_err(auth_error)?,
                env: Arc::new(credential::process_env),
            }),
        };
        Self::with_provider(config, provider)
    }

    /// As [`TokenSource::new`], for Azure Resource Manager: an Entra credential asks
    /// for [`ARM_SCOPE`] instead of the data plane's [`SCOPE`] (the same sign-in,
    /// another audience). A static token or none is as [`TokenSource::new`] makes it.
    ///
    /// # Errors
    ///
    /// As [`TokenSource::new`].
    pub fn for_arm(config: &AuthConfig) -> Result<Self, ClientError> {
        let mut source = Self::new(config)?;
        // Just built: this is the only handle on `inner`.
        if let Some(inner) = Arc::get_mut(&mut source.inner)
            && let Mode::Credential(refresher) = &mut inner.mode
        {
            refresher.scope = ARM_SCOPE;
        }
        Ok(source)
    }

    fn with_provider(config: &AuthConfig, provider: Option<Provider>) -> Result<Self, ClientError> {
        let description = config.describe();
        let mode = match (config, provider) {
            (AuthConfig::None, _) => Mode::None,
            (AuthConfig::StaticToken(raw), _) => {
                let token = static_token::check(raw, SystemTime::now()).map_err(auth_error)?;
                if let Some(warning) = token.warning {
                    tracing::warn!("{warning}");
                }
                Mode::Static {
                    header: token.header,
                    exp: token.exp,
                }
            }
            (_, Some(provider)) => Mode::Credential(Refresher::new(provider)?),
            (_, None) => unreachable!("a credential config without a provider"),
        };
        Ok(Self {
            inner: Arc::new(Inner { description, mode }),
        })
    }

    /// The header value to send (`Bearer …`), or `None` for [`AuthConfig::None`].
    /// A cached token is returned while it has more than five minutes left; otherwise
    /// one fetch runs and every concurrent caller waits for it.
    ///
    /// # Errors
    ///
    /// [`ClientError::Auth`]: the static token has expired since, or the
    /// credential could not get a token (the message says why; every caller
    /// waiting on that fetch gets it).
    pub async fn bearer(&self) -> Result<Option<String>, ClientError> {
        match &self.inner.mode {
            Mode::None => Ok(None),
            Mode::Static { header, exp } => {
                static_token::check_expiry(*exp, SystemTime::now()).map_err(auth_error)?;
                Ok(Some(header.clone()))
            }
            Mode::Credential(refresher) => refresher.bearer().await.map(Some),
        }
    }

    /// Forgets the cached token (after a 401), so the next [`bearer`](Self::bearer)
    /// fetches a new one. No effect for a static token or none.
    pub fn invalidate(&self) {
        if let Mode::Credential(refresher) = &self.inner.mode {
            refresher.invalidate();
        }
    }

    /// A short description for the status line: "az login", "managed identity",
    /// "static token", "none", …
    pub fn describe(&self) -> String {
        self.inner.description.clone()
    }
}

fn auth_error(message: String) -> ClientError {
    ClientError::Auth { message }
}

/// Where credentials come from.
enum Provider {
    /// `azure_identity`, configured by `config`.
    Azure {
        config: AuthConfig,
        transport: Transport,
        env: Arc<EnvLookup>,
    },
    /// A given credential (unit tests).
    #[cfg(test)]
    Fixed(Arc<dyn TokenCredential>),
}

impl Provider {
    fn credential(&self) -> Result<Arc<dyn TokenCredential>, String> {
        match self {
            Provider::Azure {
                config,
                transport,
                env,
            } => credential::build(config, transport, env.as_ref()),
            #[cfg(test)]
            Provider::Fixed(c) => Ok(c.clone()),
        }
    }

    fn explain(&self, err: &azure_core::Error) -> String {
        match self {
            Provider::Azure { config, env, .. } => credential::explain(config, err, env.as_ref()),
            #[cfg(test)]
            Provider::Fixed(_) => err.to_string(),
        }
    }

    fn timeout_message(&self) -> String {
        match self {
            Provider::Azure { config, env, .. } => {
                credential::timeout_message(config, env.as_ref(), FETCH_TIMEOUT.as_secs())
            }
            #[cfg(test)]
            Provider::Fixed(_) => "timed out".into(),
        }
    }

    fn name(&self) -> String {
        match self {
            Provider::Azure { config, .. } => config.describe(),
            #[cfg(test)]
            Provider::Fixed(_) => "test credential".into(),
        }
    }
}

/// A token with its expiry. Not `Debug`: it holds the token.
#[derive(Clone)]
struct Cached {
    header: Arc<str>,
    expires_at: SystemTime,
}

impl Cached {
    fn fresh(&self, now: SystemTime) -> bool {
        now + REFRESH_MARGIN < self.expires_at
    }
}

type Fetch = Shared<BoxFuture<'static, Result<Cached, String>>>;

/// The cache and the single refresher of a credential-backed [`TokenSource`].
struct Refresher {
    provider: Arc<Provider>,
    state: Mutex<State>,
    /// The scope asked for: [`SCOPE`], or [`ARM_SCOPE`] ([`TokenSource::for_arm`]).
    scope: &'static str,
}

#[derive(Default)]
struct State {
    cached: Option<Cached>,
    /// The fetch in flight, with its number.
    in_flight: Option<(u64, Fetch)>,
    fetches: u64,
    /// The credential built by `new` (which checks the settings), used by the first
    /// fetch. Later fetches build a fresh credential, so that a credential's own cache
    /// never hands back a token this cache dropped (after a 401).
    first: Option<Arc<dyn TokenCredential>>,
}

impl Refresher {
    fn new(provider: Provider) -> Result<Self, ClientError> {
        let first = provider.credential().map_err(auth_error)?;
        Ok(Self {
            provider: Arc::new(provider),
            state: Mutex::new(State {
                first: Some(first),
                ..State::default()
            }),
            scope: SCOPE,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn bearer(&self) -> Result<String, ClientError> {
        let (id, fetch) = {
            let mut state = self.lock();
            if let Some(cached) = &state.cached
                && cached.fresh(SystemTime::now())
            {
                return Ok(cached.header.to_string());
            }
            match &state.in_flight {
                Some((id, fetch)) => (*id, fetch.clone()),
                None => {
                    state.fetches += 1;
                    let id = state.fetches;
                    let fetch = self.fetch(state.first.take()).boxed().shared();
                    state.in_flight = Some((id, fetch.clone()));
                    (id, fetch)
                }
            }
        };
        let result = fetch.await;
        {
            let mut state = self.lock();
            if matches!(&state.in_flight, Some((current, _)) if *current == id) {
                state.in_flight = None;
                if let Ok(cached) = &result {
                    state.cached = Some(cached.clone());
                }
            }
        }
        result
            .map(|cached| cached.header.to_string())
            .map_err(auth_error)
    }

    fn invalidate(&self) {
        let mut state = self.lock();
        state.cached = None;
        // A fetch in flight may bring back the token being forgotten: let its waiters
        // have it, but neither cache it nor hand it to later callers.
        state.in_flight = None;
    }

    /// One fetch: with `first` if given, else with a freshly built credential.
    fn fetch(
        &self,
        first: Option<Arc<dyn TokenCredential>>,
    ) -> impl Future<Output = Result<Cached, String>> + Send + 'static {
        let provider = self.provider.clone();
        let scope = self.scope;
        async move {
            let credential = match first {
                Some(c) => c,
                None => provider.credential()?,
            };
            tracing::debug!(auth = %provider.name(), scope, "fetching a token");
            let scopes = [scope];
            let token = tokio::time::timeout(FETCH_TIMEOUT, credential.get_token(&scopes, None))
                .await
                .map_err(|_| provider.timeout_message())?
                .map_err(|e| provider.explain(&e))?;
            let expires_at = UNIX_EPOCH
                + Duration::from_secs(
                    u64::try_from(token.expires_on.unix_timestamp()).unwrap_or(0),
                );
            tracing::debug!(
                auth = %provider.name(),
                expires_in_s = expires_at
                    .duration_since(SystemTime::now())
                    .map_or(0, |d| d.as_secs()),
                "got a token"
            );
            Ok(Cached {
                header: format!("Bearer {}", token.token.secret()).into(),
                expires_at,
            })
        }
    }
}

#[cfg(test)]
mod tests;
