//! Which pool and session a command talks to, shared by every command and the TUI.
//!
//! Order: `--endpoint` (or `POOL_MANAGEMENT_ENDPOINT`), then the profile (`--profile`
//! or the config file's `default_profile`), then the local pool: a `sessionpad
//! serve` running on this machine (it publishes its endpoint in the data
//! directory), else the background local pool, started for the purpose and kept
//! for the next commands ([`crate::background`]).

use crate::client::recording::CallSink;
use crate::ledger::ProcessSink;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use sha2::{Digest, Sha256};

use crate::client::SessionClient;
use crate::client::auth::AuthConfig;
use crate::config::{AuthKind, Config, Profile};
use crate::protocol::Isolation;
use crate::protocol::{ApiVersion, ContainerType, PoolType};

/// Options that choose the session pool, the session and how to authenticate.
/// Each is global: accepted before or after the subcommand, as az and kubectl
/// accept theirs.
#[derive(Debug, Args, Clone, Default)]
pub struct TargetOpt {
    /// Pool management endpoint; without one, the local pool of the container
    /// type: a running serve, else the background pool (started if none runs).
    #[arg(long, global = true, env = "POOL_MANAGEMENT_ENDPOINT")]
    pub endpoint: Option<String>,
    /// A pool profile from the config file.
    #[arg(long, global = true)]
    pub profile: Option<String>,
    /// Config file (default: ~/.config/sessionpad/config.toml or $SESSIONPAD_CONFIG).
    #[allow(clippy::doc_markdown)] // this doc is the --help text: no backticks there
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Static bearer token for the pool.
    #[arg(long, global = true, env = "SESSIONPAD_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// How to get a token: az, managed-identity, workload-identity, client-secret, none.
    #[arg(long, global = true, value_enum)]
    pub auth: Option<AuthKind>,
    /// Client id of a user-assigned managed identity.
    #[arg(long, global = true)]
    pub client_id: Option<String>,
    /// Api-version to speak (default 2025-10-02-preview; 2024-02-02-preview speaks code/execute).
    #[arg(long, global = true)]
    pub api_version: Option<ApiVersion>,
    /// Session identifier (default: a stable one for the current directory).
    #[arg(long, global = true)]
    pub identifier: Option<String>,
    /// Pool type: code-interpreter (default) or custom-container, which lists,
    /// reads and ends sessions through `.management/*` (stopSession).
    #[arg(long, global = true)]
    pub pool_type: Option<PoolType>,
    /// The pool's container type: python (PythonLTS, default), shell (Shell),
    /// node (NodeLTS), custom-container or gpu; a shell pool runs shell
    /// commands. For serve, what its sessions run.
    #[arg(long, global = true, value_name = "TYPE")]
    pub container_type: Option<ContainerType>,
    /// Execution limit per cell, in seconds (default 220).
    #[arg(long, global = true)]
    pub timeout: Option<u64>,
    /// Ask for a kernel without preloaded libraries (useEmptyKernel,
    /// api-version 2025-10-02-preview; the service says it starts faster).
    #[allow(clippy::doc_markdown)] // this doc is the --help text: no backticks there
    #[arg(long, global = true)]
    pub empty_kernel: bool,
    /// Machine-readable JSON output (sessionpad's own keys in snake_case;
    /// shapes the service defines keep their own).
    #[allow(clippy::doc_markdown)] // this doc is the --help text: no backticks there
    #[arg(long, global = true)]
    pub json: bool,
}

/// The settings a command resolved, before anything is started or contacted.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The endpoint, or `None` for a local pool.
    pub endpoint: Option<String>,
    /// Bearer token to send (static), if any.
    pub token: Option<String>,
    /// How to authenticate to a remote endpoint (`None`: the static token above,
    /// or no header).
    pub auth: Option<AuthConfig>,
    /// The api-version.
    pub api_version: ApiVersion,
    /// The session identifier, and whether it was derived (not given).
    pub identifier: String,
    /// True when the identifier was derived from the working directory.
    pub derived_identifier: bool,
    /// Execution limit per cell.
    pub timeout: Duration,
    /// How the pool's sessions are listed, read and ended.
    pub pool_type: PoolType,
    /// What the pool runs, which decides what executions send.
    pub container_type: ContainerType,
    /// The container type was given (`--container-type`, a profile's
    /// `container_type`); else a sessionpad local pool is asked
    /// ([`Settings::learn_container_type`]).
    pub container_type_given: bool,
    /// Executions ask for a kernel without preloaded libraries
    /// (`--empty-kernel`, a profile's `use_empty_kernel`; `useEmptyKernel`,
    /// 2025-10-02-preview).
    pub empty_kernel: bool,
    /// What the terminal UI takes from the config file (theme, keys, images).
    pub ui: crate::tui::UiConfig,
    /// Per-session limits of an embedded local pool (`[pool]`).
    pub pool_limits: crate::protocol::limits::Limits,
    /// Whether an embedded local pool emulates the service's limits (`[pool]
    /// azure_limits`).
    pub azure_limits: bool,
    /// Where the local pool's sessions may connect: the profile's `egress`
    /// (a profile without an endpoint), else `[pool] egress`, else off. The
    /// background pool is started with it, and one running with another is
    /// not used ([`crate::background::StartOptions::egress`]).
    pub egress: crate::protocol::egress::Egress,
    /// Where an embedded local pool records its calls (`[ledger]`); `None`
    /// when recording is off.
    pub ledger: Option<crate::ledger::LedgerOptions>,
    /// How the background local pool is started when there is no endpoint
    /// and none runs (`[background_pool]`, the config file it reads).
    pub background: crate::background::StartOptions,
}

/// A stable identifier for the current working directory: `sp-` and 16 hex
/// characters of its SHA-256, so each project folder has its own session.
pub fn identifier_for_cwd() -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let digest = Sha256::digest(cwd.to_string_lossy().as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("sp-{hex}")
}

impl TargetOpt {
    /// Reads the config file and merges flags, environment and profile.
    ///
    /// # Errors
    ///
    /// A broken config file (file, line, key), an unknown profile, an
    /// api-version string that does not parse, or a `token-env` variable not set.
    pub fn settings(&self) -> anyhow::Result<Settings> {
        let (path, config) = self.load_config()?;
        let settings = self.settings_with(&config, &path)?;
        // This process's own calls to pools that do not record are recorded
        // (see `client::recording`).
        record_own_calls(settings.ledger.clone());
        Ok(settings)
    }

    /// The config file (`--config`, else the default path, which may be
    /// missing) and where it was read from. Errors: as [`TargetOpt::settings`].
    pub(crate) fn load_config(&self) -> anyhow::Result<(PathBuf, Config)> {
        let (path, required) = match &self.config {
            Some(p) => (p.clone(), true),
            None => (crate::config::default_path(), false),
        };
        let config = Config::load(&path, required)?;
        Ok((path, config))
    }

    /// As [`TargetOpt::settings`], with the config file already read from `path`.
    fn settings_with(&self, config: &Config, path: &std::path::Path) -> anyhow::Result<Settings> {
        let profile = config
            .profile(self.profile.as_deref())
            .map_err(anyhow::Error::msg)?
            .cloned()
            .unwrap_or_default();
        let api_version = match (&self.api_version, &profile.api_version) {
            (Some(v), _) => *v,
            (None, Some(v)) => v
                .parse()
                .with_context(|| format!("in {}", path.display()))?,
            (None, None) => ApiVersion::V2025_10_02,
        };
        let endpoint = self.endpoint.clone().or(profile.endpoint.clone());
        let egress = local_egress(&profile, self.profile_name(config), endpoint.as_deref())?
            .or_else(|| config.pool.egress.clone());
        let token = self.token.clone().or(profile_token(&profile)?);
        let (identifier, derived_identifier) =
            match self.identifier.clone().or(profile.identifier.clone()) {
                Some(id) => (id, false),
                None => (identifier_for_cwd(), true),
            };
        let given_type = self.container_type.or(profile.container_type);
        let container_type = given_type.unwrap_or_default();
        let timeout = Duration::from_secs(self.timeout.or(config.timeout).unwrap_or(220).max(1));
        let auth = auth_config(
            self.auth.or(profile.auth),
            self.client_id.clone().or(profile.client_id.clone()),
            token.is_some(),
            endpoint.as_deref(),
        )?;
        Ok(Settings {
            endpoint,
            token,
            auth,
            api_version,
            identifier,
            derived_identifier,
            timeout,
            pool_type: self
                .pool_type
                .or(profile.pool_type)
                .unwrap_or_else(|| container_type.pool_type()),
            container_type,
            container_type_given: given_type.is_some(),
            empty_kernel: self.empty_kernel || profile.use_empty_kernel.unwrap_or(false),
            ui: crate::tui::UiConfig::from_config(config).map_err(|message| {
                crate::config::ConfigError {
                    path: path.to_path_buf(),
                    message,
                }
            })?,
            pool_limits: config.pool.over(crate::protocol::limits::Limits::default()),
            azure_limits: config.pool.azure_limits == Some(true),
            ledger: crate::ledger::LedgerOptions::from_config(&config.ledger),
            background: crate::background::StartOptions {
                config: self.config.clone(),
                idle_exit: config.background_pool.idle_exit(),
                image: config.pool.image.unwrap_or_default(),
                egress: egress.clone(),
            },
            egress: egress.unwrap_or_default(),
        })
    }
}

impl TargetOpt {
    /// The name of the profile these options use (`--profile`, else the
    /// config file's `default_profile`), for messages; empty when none.
    fn profile_name<'a>(&'a self, config: &'a Config) -> &'a str {
        self.profile
            .as_deref()
            .or(config.default_profile.as_deref())
            .unwrap_or_default()
    }
}

/// The profile's own egress policy, for the local pool it runs on.
///
/// # Errors
///
/// The profile sets one but an endpoint is given (`--endpoint`,
/// `POOL_MANAGEMENT_ENDPOINT`): that pool's egress is not this client's to
/// set, and running there would drop the policy without a word. (A profile
/// with an endpoint of its own and `egress` is refused when the config file
/// is read.)
fn local_egress(
    profile: &Profile,
    name: &str,
    endpoint: Option<&str>,
) -> anyhow::Result<Option<crate::protocol::egress::Egress>> {
    match (&profile.egress, endpoint) {
        (Some(egress), Some(endpoint)) => bail!(
            "profile {name:?} sets egress = \"{egress}\" for the local pool, but the endpoint \
             {endpoint} is given (--endpoint or POOL_MANAGEMENT_ENDPOINT), whose egress this \
             client cannot set: drop the endpoint to run on the local pool under that policy, \
             or use a profile without egress"
        ),
        (egress, _) => Ok(egress.clone()),
    }
}

/// The credential for a remote endpoint: the kind asked for, else a static token
/// when one is given, else, for a plain-http loopback endpoint (a `sessionpad
/// serve`, whose token is the one it printed; one run with `--no-auth` wants
/// none), no header, else the Azure CLI / Developer CLI login.
fn auth_config(
    kind: Option<AuthKind>,
    client_id: Option<String>,
    have_token: bool,
    endpoint: Option<&str>,
) -> anyhow::Result<Option<AuthConfig>> {
    let entra_by_default = endpoint.is_some_and(|e| !loopback_http(e)) && !have_token;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    Ok(match kind {
        Some(AuthKind::Az) => Some(AuthConfig::DeveloperTools),
        Some(AuthKind::ManagedIdentity) => Some(AuthConfig::ManagedIdentity { client_id }),
        Some(AuthKind::WorkloadIdentity) => Some(AuthConfig::WorkloadIdentity),
        Some(AuthKind::ClientSecret) => {
            let (Some(tenant_id), Some(client_id), Some(secret)) = (
                env("AZURE_TENANT_ID"),
                client_id.or_else(|| env("AZURE_CLIENT_ID")),
                env("AZURE_CLIENT_SECRET"),
            ) else {
                bail!(
                    "auth client-secret needs AZURE_TENANT_ID, AZURE_CLIENT_ID (or --client-id) and AZURE_CLIENT_SECRET"
                );
            };
            Some(AuthConfig::ClientSecret {
                tenant_id,
                client_id,
                secret,
            })
        }
        Some(AuthKind::None) => Some(AuthConfig::None),
        Some(AuthKind::TokenEnv) => None,
        None if entra_by_default => Some(AuthConfig::DeveloperTools),
        None => None,
    })
}

/// Whether `endpoint` is plain http on this machine (`localhost`, a loopback
/// address): a sessionpad pool, never one of Azure's (https), so no Entra
/// token is fetched for it by default.
fn loopback_http(endpoint: &str) -> bool {
    let Ok(url) = url::Url::parse(endpoint.trim()) else {
        return false;
    };
    url.scheme() == "http"
        && match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
}

fn profile_token(profile: &Profile) -> anyhow::Result<Option<String>> {
    if profile.auth != Some(AuthKind::TokenEnv) {
        return Ok(None);
    }
    let Some(var) = &profile.token_env else {
        bail!("auth = \"token-env\" needs token_env = \"VARIABLE\" in the profile");
    };
    match std::env::var(var) {
        Ok(t) if !t.is_empty() => Ok(Some(t)),
        _ => bail!("the profile's token variable {var} is not set"),
    }
}

/// A connected client: the session client, with what is known of the pool.
pub struct Connection {
    /// The client.
    pub client: SessionClient,
    /// What the command talks to, for messages: `local (background, pid N)`,
    /// `local (serve, pid N)` or the endpoint's host and non-default port
    /// ([`crate::target::endpoint_label`]).
    pub label: String,
    /// Whether the pool is the background local pool, whose sessions'
    /// cooldown is its idle period (`[background_pool] idle_exit`).
    pub background: bool,
    /// The isolation of a local pool's sessions when known without asking:
    /// the one a serve (foreground or background) wrote into its discovery file.
    isolation: Option<Isolation>,
}

impl Connection {
    /// The isolation of the pool's sessions when it is a sessionpad local pool
    /// (discovered, or an endpoint served over plain http, which is
    /// asked through `GET metadata` for at most `wait`); `None` for Azure's
    /// pools, and when asking failed or took longer.
    pub async fn local_isolation(&self, wait: Duration) -> Option<Isolation> {
        if let Some(known) = &self.isolation {
            return Some(known.clone());
        }
        if !crate::protocol::isolation::may_report(self.client.endpoint()) {
            return None;
        }
        match tokio::time::timeout(wait, self.client.local_pool_isolation()).await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                tracing::debug!("no isolation from the pool's metadata: {e}");
                None
            }
            Err(_) => None,
        }
    }
}

/// Connects to the pool the settings name; without an endpoint, the running
/// local pool, else the background local pool started now (it outlives this
/// command). Progress of a first Python environment build and of the start goes
/// to standard error.
///
/// # Errors
///
/// An invalid endpoint, or a local pool that cannot start.
pub async fn connect(settings: &Settings) -> anyhow::Result<Connection> {
    let mut conn = connect_client(settings).await?;
    let may_say = settings
        .endpoint
        .as_deref()
        .is_none_or(crate::protocol::isolation::may_report);
    let container_type = match (settings.container_type_given, may_say) {
        (false, true) => learned_container_type(&conn.client)
            .await
            .unwrap_or(settings.container_type),
        _ => settings.container_type,
    };
    conn.client = conn
        .client
        .with_pool_type(settings.pool_type)
        .with_container_type(container_type)
        .with_empty_kernel(settings.empty_kernel);
    Ok(conn)
}

/// How long a local pool gets to say its container type.
const LEARN_WAIT: Duration = Duration::from_secs(5);

/// What a sessionpad local pool says it runs (its brief metadata), if it
/// answers within [`LEARN_WAIT`]; `None` from any other pool, or on error.
async fn learned_container_type(client: &SessionClient) -> Option<ContainerType> {
    let facts = tokio::time::timeout(LEARN_WAIT, client.local_pool_facts()).await;
    match facts {
        Ok(Ok(facts)) => facts.container_type,
        Ok(Err(e)) => {
            tracing::debug!("no container type from the pool: {e}");
            None
        }
        Err(_) => None,
    }
}

impl Settings {
    /// The session client for `endpoint` with these settings' api-version,
    /// token or credential and pool type (see [`crate::target::remote_client`]).
    ///
    /// # Errors
    ///
    /// As [`crate::target::remote_client`]: an invalid endpoint or credential.
    fn endpoint_client(&self, endpoint: &str) -> Result<SessionClient, crate::client::ClientError> {
        crate::target::remote_client(
            endpoint,
            self.api_version,
            self.token.clone(),
            self.auth.as_ref(),
            self.pool_type,
        )
    }

    /// When the container type was not given and the endpoint may be a
    /// sessionpad local pool (loopback), asks the pool what it runs and takes
    /// that (the notebook decides its language before it starts). Nothing
    /// changes for other endpoints, with no endpoint (the embedded pool runs
    /// what it is told), or when the pool does not say.
    pub async fn learn_container_type(&mut self) {
        let Some(endpoint) = self.endpoint.as_deref() else {
            return;
        };
        if self.container_type_given || !crate::protocol::isolation::may_report(endpoint) {
            return;
        }
        if let Ok(client) = self.endpoint_client(endpoint)
            && let Some(learned) = learned_container_type(&client).await
        {
            self.container_type = learned;
        }
    }
}

/// Reaches the pool through the one connect path ([`crate::session::connect::reach`]):
/// the endpoint's client, or the background local pool found or started, its
/// progress and its start said on standard error.
async fn connect_client(settings: &Settings) -> anyhow::Result<Connection> {
    let how = match &settings.endpoint {
        Some(endpoint) => crate::session::Connection::Remote {
            endpoint: endpoint.clone(),
            token: settings.token.clone(),
            auth: settings.auth.clone(),
        },
        None => crate::session::Connection::Background(settings.background.clone()),
    };
    let dial = crate::session::connect::Dial {
        api_version: settings.api_version,
        pool_type: settings.pool_type,
        container_type: settings.container_type,
        empty_kernel: settings.empty_kernel,
        pool_limits: settings.pool_limits,
        azure_limits: settings.azure_limits,
        egress: &settings.egress,
        ledger: None,
    };
    let progress = |line: &str| eprintln!("{line}");
    let reached = match crate::session::connect::reach(&how, None, dial, &progress).await {
        Ok(reached) => reached,
        Err(crate::session::connect::ReachError::Client(e)) => return Err(e.into()),
        Err(e) => return Err(anyhow::Error::new(e).context("reaching the local pool")),
    };
    if let Some(found) = reached.found.as_ref().filter(|f| f.started) {
        eprintln!("{}", found.reached_line(settings.background.idle_exit));
    }
    Ok(Connection {
        background: reached.background(),
        isolation: reached.isolation(),
        label: reached.label,
        client: reached.client,
    })
}

impl Settings {
    /// The pool these settings reach, as the TUI's pools chooser holds it.
    pub fn pool_target(&self) -> crate::target::PoolTarget {
        crate::target::PoolTarget {
            endpoint: self.endpoint.clone(),
            token: self.token.clone(),
            auth: self.auth.clone(),
            api_version: self.api_version,
            identifier: self.identifier.clone(),
            timeout: self.timeout,
            pool_type: self.pool_type,
            container_type: self.container_type,
            empty_kernel: self.empty_kernel,
            egress: self.background.egress.clone(),
        }
    }

    /// The TUI's options for these settings, with the pools it can switch to
    /// (see [`pool_choices`]).
    pub fn tui_options(self, target: &TargetOpt) -> crate::tui::TuiOptions {
        let (pools, pool_name) = pool_choices(target, &self);
        crate::tui::TuiOptions {
            target: self.pool_target(),
            ui: self.ui,
            pools,
            pool_name,
            background: self.background,
            follow: false,
        }
    }
}

/// The pools the TUI can switch to, and the name of the one `settings` reach:
/// the pool named on the command line (`--endpoint`, first, named by its host
/// and non-default port, [`crate::target::endpoint_label`]),
/// every profile of the config file (each resolved as `--profile NAME` would
/// be; one that cannot be resolved is listed with the reason), and the local
/// pool when no profile is one. The current pool's entry is `settings` itself,
/// flags included.
pub fn pool_choices(
    target: &TargetOpt,
    settings: &Settings,
) -> (Vec<crate::tui::pools::PoolChoice>, String) {
    use crate::tui::pools::PoolChoice;
    // Read once; every profile is resolved from this copy.
    let (path, config) = target
        .load_config()
        .unwrap_or_else(|_| (PathBuf::new(), Config::default()));
    let current = match (&settings.endpoint, &target.endpoint) {
        (Some(endpoint), Some(_)) => crate::target::endpoint_label(endpoint),
        _ => target
            .profile
            .clone()
            .or(config.default_profile.clone())
            .unwrap_or_else(|| "local".into()),
    };
    let mut choices = Vec::new();
    if target.endpoint.is_some() {
        choices.push(PoolChoice {
            name: current.clone(),
            target: Ok(settings.pool_target()),
        });
    }
    for name in config.profiles.keys() {
        let resolved = if *name == current {
            Ok(settings.pool_target())
        } else {
            TargetOpt {
                profile: Some(name.clone()),
                ..TargetOpt::default()
            }
            .settings_with(&config, &path)
            .map(|s| s.pool_target())
            .map_err(|e| format!("{e:#}"))
        };
        choices.push(PoolChoice {
            name: name.clone(),
            target: resolved,
        });
    }
    let has_local = choices
        .iter()
        .any(|c| c.target.as_ref().is_ok_and(|t| t.endpoint.is_none()));
    if !has_local {
        let local = if current == "local" && settings.endpoint.is_none() {
            settings.pool_target()
        } else {
            crate::target::PoolTarget {
                endpoint: None,
                token: None,
                auth: None,
                api_version: ApiVersion::V2025_10_02,
                identifier: identifier_for_cwd(),
                timeout: settings.timeout,
                pool_type: PoolType::default(),
                container_type: ContainerType::default(),
                empty_kernel: false,
                egress: config.pool.egress.clone(),
            }
        };
        choices.push(PoolChoice {
            name: "local".into(),
            target: Ok(local),
        });
    }
    (choices, current)
}

/// Turns on the recording of this process's own calls into the ledger
/// `options` names (`None`: recording is off): the ledger's [`ProcessSink`]
/// installed as the client's [`CallSink`]. Joined here, above both, so that the
/// client never imports the ledger nor the ledger the client.
pub fn record_own_calls(options: Option<crate::ledger::LedgerOptions>) {
    crate::client::recording::install(
        options.map(|o| Box::new(ProcessSink::new(o)) as Box<dyn CallSink>),
    );
}

impl CallSink for ProcessSink {
    fn record(&self, call: crate::protocol::record::Call) {
        ProcessSink::record(self, call);
    }

    fn flush(&self) {
        ProcessSink::flush(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::egress::Egress;

    const CONFIG: &str = "[pool]\negress = \"allow=pypi.org:443\"\n\
        [profiles.demo]\negress = \"audit\"\n[profiles.plain]\n";

    fn settings(opt: &TargetOpt) -> anyhow::Result<Settings> {
        let config = Config::parse(CONFIG).unwrap();
        opt.settings_with(&config, std::path::Path::new("config.toml"))
    }

    fn profile(name: &str) -> TargetOpt {
        TargetOpt {
            profile: Some(name.into()),
            ..TargetOpt::default()
        }
    }

    #[test]
    fn a_profiles_egress_overrides_the_pools_and_reaches_the_background_pool() {
        let demo = settings(&profile("demo")).unwrap();
        assert_eq!(demo.egress, Egress::Audit);
        assert_eq!(demo.background.egress, Some(Egress::Audit));
        assert_eq!(demo.pool_target().egress, Some(Egress::Audit));
        let allow: Egress = "allow=pypi.org:443".parse().unwrap();
        let plain = settings(&profile("plain")).unwrap();
        assert_eq!(
            (plain.egress, plain.background.egress),
            (allow.clone(), Some(allow))
        );
        let none = TargetOpt::default()
            .settings_with(&Config::default(), std::path::Path::new("x"))
            .unwrap();
        assert_eq!(
            (none.egress, none.background.egress),
            (Egress::Off, None),
            "nothing asked: off for an embedded pool, any running pool used"
        );
    }

    #[test]
    fn an_endpoint_given_with_a_profile_that_sets_egress_is_refused() {
        let e = settings(&TargetOpt {
            endpoint: Some("http://127.0.0.1:9".into()),
            ..profile("demo")
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("profile \"demo\" sets egress = \"audit\""),
            "{e}"
        );
        assert!(e.contains("http://127.0.0.1:9"), "{e}");
        // `[pool] egress` is for the local pool only: an endpoint just does
        // not use it, as before.
        let plain = settings(&TargetOpt {
            endpoint: Some("http://127.0.0.1:9".into()),
            ..profile("plain")
        });
        assert!(plain.is_ok());
    }
}
