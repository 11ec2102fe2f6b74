//! Which pool and session a command talks to, shared by every command and the TUI.
//!
//! Order: `--endpoint` (or `POOL_MANAGEMENT_ENDPOINT`), then the profile (`--profile`
//! or the config file's `default_profile`), then a `sessionpad serve` running on
//! this machine (it publishes its endpoint in the data directory), then the
//! embedded local pool started for this one command.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::client::auth::{AuthConfig, TokenSource};
use crate::client::{ApiVersion, PoolType, SessionClient, Target};
use crate::config::{AuthKind, Config, Profile};
use crate::pool::{Isolation, LocalPool, PoolOptions};

/// Options that choose the session pool, the session and how to authenticate.
#[derive(Debug, Args, Clone, Default)]
pub struct TargetOpt {
    /// Pool management endpoint; without one, the embedded local pool.
    #[arg(long, env = "POOL_MANAGEMENT_ENDPOINT")]
    pub endpoint: Option<String>,
    /// A pool profile from the config file.
    #[arg(long)]
    pub profile: Option<String>,
    /// Config file (default: ~/.config/sessionpad/config.toml or $SESSIONPAD_CONFIG).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Static bearer token for the pool.
    #[arg(long, env = "SESSIONPAD_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// How to get a token: az, managed-identity, workload-identity, client-secret, none.
    #[arg(long, value_enum)]
    pub auth: Option<AuthKind>,
    /// Client id of a user-assigned managed identity.
    #[arg(long)]
    pub client_id: Option<String>,
    /// Api-version to speak (default 2025-10-02-preview; 2024-02-02-preview speaks code/execute).
    #[arg(long)]
    pub api_version: Option<ApiVersion>,
    /// Session identifier (default: a stable one for the current directory).
    #[arg(long)]
    pub identifier: Option<String>,
    /// Pool type: code-interpreter (default) or custom-container, which lists,
    /// reads and ends sessions through `.management/*` (stopSession).
    #[arg(long)]
    pub pool_type: Option<PoolType>,
    /// Execution limit per cell, in seconds (default 220).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Machine-readable JSON output.
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
    /// What the terminal UI takes from the config file (theme, keys, images).
    pub ui: crate::config::UiConfig,
    /// Per-session limits of an embedded local pool (`[pool]`).
    pub pool_limits: crate::pool::limits::Limits,
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
    /// Errors: a broken config file (file, line, key), an unknown profile, an
    /// api-version string that does not parse, or a `token-env` variable not set.
    pub fn settings(&self) -> anyhow::Result<Settings> {
        let (path, config) = self.load_config()?;
        self.settings_with(&config, &path)
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
        let token = self.token.clone().or(profile_token(&profile)?);
        let (identifier, derived_identifier) =
            match self.identifier.clone().or(profile.identifier.clone()) {
                Some(id) => (id, false),
                None => (identifier_for_cwd(), true),
            };
        let timeout = Duration::from_secs(self.timeout.or(config.timeout).unwrap_or(220).max(1));
        let auth = auth_config(
            self.auth.or(profile.auth),
            self.client_id.clone().or(profile.client_id.clone()),
            token.is_some(),
            endpoint.is_some(),
        )?;
        Ok(Settings {
            endpoint,
            token,
            auth,
            api_version,
            identifier,
            derived_identifier,
            timeout,
            pool_type: self.pool_type.or(profile.pool_type).unwrap_or_default(),
            ui: config.ui(),
            pool_limits: config.pool.over(crate::pool::limits::Limits::default()),
        })
    }
}

/// The credential for a remote endpoint: the kind asked for, else a static token
/// when one is given, else the Azure CLI / Developer CLI login.
fn auth_config(
    kind: Option<AuthKind>,
    client_id: Option<String>,
    have_token: bool,
    remote: bool,
) -> anyhow::Result<Option<AuthConfig>> {
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
        None if remote && !have_token => Some(AuthConfig::DeveloperTools),
        None => None,
    })
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

/// A connected client: the session client, and the embedded pool when one was
/// started for this command (it stops when this is dropped).
pub struct Connection {
    /// The client.
    pub client: SessionClient,
    /// What the command talks to, for messages: `local`, `local (serve)` or the host.
    pub label: String,
    /// The isolation of a local pool's sessions when known without asking:
    /// the embedded pool's, or the one a serve wrote into its discovery file.
    isolation: Option<Isolation>,
    _embedded: Option<LocalPool>,
}

impl Connection {
    /// The isolation of the pool's sessions when it is a sessionpad local pool
    /// (embedded, discovered, or an endpoint served over plain http, which is
    /// asked through `GET metadata` for at most `wait`); `None` for Azure's
    /// pools, and when asking failed or took longer.
    pub async fn local_isolation(&self, wait: Duration) -> Option<Isolation> {
        if let Some(known) = &self.isolation {
            return Some(known.clone());
        }
        if !crate::pool::isolation::may_report(self.client.endpoint()) {
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

/// Connects to the pool the settings name, starting the embedded local pool when
/// there is no endpoint and no `sessionpad serve` running. Progress of a first
/// Python environment build goes to standard error.
///
/// Errors: an invalid endpoint, or a local pool that cannot start.
pub async fn connect(settings: &Settings) -> anyhow::Result<Connection> {
    let mut conn = connect_client(settings).await?;
    conn.client = conn.client.with_pool_type(settings.pool_type);
    Ok(conn)
}

async fn connect_client(settings: &Settings) -> anyhow::Result<Connection> {
    if let Some(endpoint) = &settings.endpoint {
        let mut client = SessionClient::new(Target {
            endpoint: endpoint.clone(),
            api_version: settings.api_version,
            token: settings.token.clone(),
        })?;
        if let Some(auth) = &settings.auth {
            client = client.with_auth(TokenSource::new(auth.clone())?);
        }
        let label = url::Url::parse(endpoint)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_else(|| endpoint.clone());
        return Ok(Connection {
            client,
            label,
            isolation: None,
            _embedded: None,
        });
    }
    if let Some(found) = Discovery::find() {
        let client = SessionClient::new(Target {
            endpoint: found.endpoint,
            api_version: settings.api_version,
            token: found.token,
        })?;
        return Ok(Connection {
            client,
            label: "local (serve)".into(),
            isolation: found.isolation,
            _embedded: None,
        });
    }
    let mut opts = PoolOptions::embedded();
    opts.ready_sessions = 0;
    opts.limits = settings.pool_limits;
    let pool = LocalPool::start(opts, &|line| eprintln!("{line}"))
        .await
        .context("starting the embedded local pool")?;
    let client = SessionClient::new(Target {
        endpoint: pool.endpoint(),
        api_version: settings.api_version,
        token: pool.token().map(str::to_string),
    })?;
    Ok(Connection {
        client,
        label: "local (embedded, this command only)".into(),
        isolation: Some(pool.isolation().clone()),
        _embedded: Some(pool),
    })
}

/// The file in which `sessionpad serve` publishes its endpoint and token for other
/// sessionpad commands on this machine (readable by this user only). It belongs
/// to the serve that wrote it: a second serve leaves it alone, and a serve
/// removes it on exit only while it is still its own (its `nonce`).
#[derive(Debug, Serialize, Deserialize)]
pub struct Discovery {
    endpoint: String,
    token: Option<String>,
    pid: u32,
    /// A random value of the serve that wrote the file, so that it removes only
    /// its own file (a pid alone can be reused).
    #[serde(default)]
    nonce: String,
    /// The serve's isolation (absent in files of older versions), so commands
    /// can warn without asking the pool.
    #[serde(default)]
    isolation: Option<Isolation>,
}

/// Why [`Discovery::publish`] did not publish.
#[derive(Debug)]
pub enum NotPublished {
    /// Another serve, still running, published the file first.
    Taken {
        /// That serve's process id.
        pid: u32,
        /// The discovery file.
        path: PathBuf,
    },
    /// The file could not be written (the text says why).
    Io(String),
}

impl Discovery {
    fn path() -> PathBuf {
        crate::dirs::data_dir().join("local-pool.json")
    }

    /// Writes the discovery file for `pool` (atomically, mode 0600: it holds the
    /// bearer token) unless another serve that is still running owns it; a file
    /// whose serve is gone is replaced. The file is removed when the returned
    /// guard drops, if it is still this serve's.
    ///
    /// # Errors
    ///
    /// [`NotPublished::Taken`] when a live serve owns the file,
    /// [`NotPublished::Io`] when it cannot be written.
    pub fn publish(pool: &LocalPool) -> Result<DiscoveryGuard, NotPublished> {
        let me = Self {
            endpoint: pool.endpoint(),
            token: pool.token().map(str::to_string),
            pid: std::process::id(),
            nonce: crate::pool::random_token(),
            isolation: Some(pool.isolation().clone()),
        };
        let path = Self::path();
        let io = |e: std::io::Error| NotPublished::Io(e.to_string());
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let json = serde_json::to_vec(&me).map_err(|e| NotPublished::Io(e.to_string()))?;
        let tmp = path.with_extension(format!("json.{}.tmp", me.pid));
        write_private(&tmp, &json).map_err(io)?;
        // A hard link appears whole and fails if the file exists: two serves
        // starting together cannot both win.
        let linked = std::fs::hard_link(&tmp, &path);
        let result = match linked {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match Self::read() {
                Some(other) if other.alive() && other.pid != me.pid => Err(NotPublished::Taken {
                    pid: other.pid,
                    path: path.clone(),
                }),
                // Stale (its serve is gone) or unreadable: ours now.
                _ => std::fs::rename(&tmp, &path).map_err(io),
            },
            Err(e) => Err(io(e)),
        };
        let _ = std::fs::remove_file(&tmp);
        result.map(|()| DiscoveryGuard {
            path,
            nonce: me.nonce,
        })
    }

    fn read() -> Option<Self> {
        let bytes = std::fs::read(Self::path()).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Whether the serve that wrote this is still running: its pid is a live
    /// process whose arguments include `serve` (so a pid reused by another
    /// program does not keep a stale file alive).
    fn alive(&self) -> bool {
        std::fs::read(format!("/proc/{}/cmdline", self.pid))
            .is_ok_and(|cmdline| cmdline.split(|&b| b == 0).any(|arg| arg == b"serve"))
    }

    /// The running `serve` on this machine, if its process is still alive.
    fn find() -> Option<Self> {
        Self::read().filter(Self::alive)
    }
}

fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Removes the discovery file when dropped, if it is still the one this serve
/// wrote.
#[derive(Debug)]
pub struct DiscoveryGuard {
    path: PathBuf,
    nonce: String,
}

impl Drop for DiscoveryGuard {
    fn drop(&mut self) {
        let ours = std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Discovery>(&b).ok())
            .is_some_and(|d| d.nonce == self.nonce);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Settings {
    /// The pool these settings reach, as the TUI's pools chooser holds it.
    pub fn pool_target(&self) -> crate::tui::pools::PoolTarget {
        crate::tui::pools::PoolTarget {
            endpoint: self.endpoint.clone(),
            token: self.token.clone(),
            auth: self.auth.clone(),
            api_version: self.api_version,
            identifier: self.identifier.clone(),
            timeout: self.timeout,
            pool_type: self.pool_type,
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
            pool_limits: self.pool_limits,
        }
    }
}

/// The pools the TUI can switch to, and the name of the one `settings` reach:
/// the pool named on the command line (`--endpoint`, first, named by its host),
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
        (Some(endpoint), Some(_)) => crate::tui::host_of(endpoint),
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
            crate::tui::pools::PoolTarget {
                endpoint: None,
                token: None,
                auth: None,
                api_version: ApiVersion::V2025_10_02,
                identifier: identifier_for_cwd(),
                timeout: settings.timeout,
                pool_type: PoolType::default(),
            }
        };
        choices.push(PoolChoice {
            name: "local".into(),
            target: Ok(local),
        });
    }
    (choices, current)
}
