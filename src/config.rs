//! The configuration file (TOML): pool profiles and defaults. Read from `--config`,
//! `$SESSIONPAD_CONFIG`, or `config.toml` in the config directory
//! (`~/.config/sessionpad/config.toml` on Linux); a missing file means defaults.
//!
//! ```toml
//! default_profile = "dev"
//! timeout = 120                      # execution limit per cell, seconds
//!
//! [profiles.dev]
//! endpoint = "https://eastus.dynamicsessions.io/subscriptions/…/sessionPools/dev"
//! api_version = "2025-10-02-preview"
//! auth = "az"                        # az | managed-identity | workload-identity
//!                                    # | client-secret | token-env | none
//! client_id = "…"                    # managed-identity (user-assigned)
//! token_env = "DEV_POOL_TOKEN"       # token-env: a static token from this variable
//!
//! [profiles.local]                   # no endpoint: the embedded local pool
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The whole configuration file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The profile used when `--profile` is not given.
    pub default_profile: Option<String>,
    /// Execution limit per cell, in seconds.
    pub timeout: Option<u64>,
    /// Named pools.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// One named pool.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Pool management endpoint; none means the embedded local pool.
    pub endpoint: Option<String>,
    /// Api-version, e.g. `2025-10-02-preview`.
    pub api_version: Option<String>,
    /// How to authenticate (see the module docs for the names).
    pub auth: Option<AuthKind>,
    /// Client id of a user-assigned managed identity (`auth = "managed-identity"`).
    pub client_id: Option<String>,
    /// Environment variable holding a static bearer token (`auth = "token-env"`).
    pub token_env: Option<String>,
    /// Session identifier to use with this pool.
    pub identifier: Option<String>,
}

/// The authentication methods a profile can name.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum AuthKind {
    /// Azure CLI / Azure Developer CLI login (`az login`, `azd auth login`).
    Az,
    /// The managed identity of the machine or container.
    ManagedIdentity,
    /// Workload identity (federated token file, e.g. on AKS).
    WorkloadIdentity,
    /// A service principal from AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET.
    ClientSecret,
    /// A static token read from the variable named by `token_env`.
    TokenEnv,
    /// No Authorization header.
    None,
}

/// A configuration file that could not be read, naming the file and, from the
/// TOML parser, the line, column and key.
#[derive(Debug, thiserror::Error)]
#[error("config file {path}: {message}")]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong and where.
    pub message: String,
}

/// Where the config file is looked for when `--config` is not given.
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("SESSIONPAD_CONFIG").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    directories::ProjectDirs::from("", "", "sessionpad")
        .map(|d| d.config_dir().join("config.toml"))
        .unwrap_or_else(|| PathBuf::from("sessionpad.toml"))
}

impl Config {
    /// Reads `path`; a missing file gives the defaults when `required` is false.
    ///
    /// Errors: the file exists but cannot be read or parsed ([`ConfigError`] with
    /// the line and key), or it is missing and `required`.
    pub fn load(path: &Path, required: bool) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                return Ok(Self::default());
            }
            Err(e) => {
                return Err(ConfigError {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                });
            }
        };
        Self::parse(&text).map_err(|message| ConfigError {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses TOML text; the error text names the line, column and key.
    pub fn parse(text: &str) -> Result<Self, String> {
        let config: Self = toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
        if let Some(name) = &config.default_profile {
            if !config.profiles.contains_key(name) {
                return Err(format!(
                    "default_profile = {name:?} names no [profiles.{name}] table"
                ));
            }
        }
        Ok(config)
    }

    /// The profile `name`, or the default profile when `name` is `None`.
    ///
    /// Errors: a named profile that does not exist (the message lists the known ones).
    pub fn profile(&self, name: Option<&str>) -> Result<Option<&Profile>, String> {
        match name.or(self.default_profile.as_deref()) {
            None => Ok(None),
            Some(n) => self.profiles.get(n).map(Some).ok_or_else(|| {
                let known: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
                format!("no profile {n:?} in the config file (known: {})", known.join(", "))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse() {
        let c = Config::parse(
            "default_profile = \"dev\"\n[profiles.dev]\nendpoint = \"https://x\"\nauth = \"managed-identity\"\nclient_id = \"abc\"\n[profiles.local]\n",
        )
        .unwrap();
        let dev = c.profile(None).unwrap().unwrap();
        assert_eq!(dev.auth, Some(AuthKind::ManagedIdentity));
        assert_eq!(c.profile(Some("local")).unwrap().unwrap().endpoint, None);
        assert!(c.profile(Some("nope")).unwrap_err().contains("known: dev, local"));
    }

    #[test]
    fn errors_name_the_line_and_key() {
        let e = Config::parse("[profiles.dev]\nendpoint = \"https://x\"\nauht = \"az\"\n").unwrap_err();
        assert!(e.contains("line 3"), "{e}");
        assert!(e.contains("auht"), "{e}");
        let e = Config::parse("[profiles.dev]\nauth = \"kerberos\"\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("kerberos"), "{e}");
        let e = Config::parse("default_profile = \"x\"\n").unwrap_err();
        assert!(e.contains("[profiles.x]"), "{e}");
    }

    #[test]
    fn a_missing_file_is_the_default_unless_required() {
        let p = Path::new("/nonexistent/sessionpad.toml");
        assert_eq!(Config::load(p, false).unwrap(), Config::default());
        assert!(Config::load(p, true).unwrap_err().to_string().contains("/nonexistent"));
    }
}
