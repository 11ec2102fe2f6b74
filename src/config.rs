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
//! [profiles.local]                   # no endpoint: the local pool
//! egress = "audit"                   # its sessions' egress policy (over [pool] egress)
//!
//! [background_pool]                  # the local pool commands start by themselves
//! idle_exit = 900                    # seconds without a request before it ends
//!
//! [ledger]                           # the flight recorder (`sessionpad log`)
//! enabled = true                     # the local pool records its clients' calls
//! days = 30                          # calls older than this are pruned
//! max_size = "1 GiB"                 # the oldest calls are pruned past this
//!
//! theme = "light"                    # dark (default) | light; NO_COLOR drops colours
//! image_protocol = "halfblocks"      # auto (default) | kitty | sixel | iterm2 | halfblocks
//!
//! [keys.editor]                      # per mode: editor, outputs, files, sessions, help;
//! "<C-r>" = "run_cell"               # merged key by key over assets/keymap.toml
//! "<C-e>" = { run = "external_editor", desc = "Edit in vim", hint = true }
//! "<F5>" = "none"                    # take a default binding away
//! ```
//!
//! Errors name the file, the line and the key, for the TOML syntax and types.
//! The notebook's own sections (`theme`, `[keys.*]`) are kept here as written
//! and checked by the notebook (`tui::ui_config`, with the same line and key
//! in its errors), so this module knows nothing of the terminal UI.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

/// The whole configuration file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The profile used when `--profile` is not given.
    pub default_profile: Option<String>,
    /// Execution limit per cell, in seconds.
    pub timeout: Option<u64>,
    /// Named pools.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    /// The theme by name: `dark` (the default) or `light`.
    pub theme: Option<Spanned<String>>,
    /// How images are drawn; `auto` asks the terminal.
    pub image_protocol: Option<ImageProtocol>,
    /// Key bindings per mode (`[keys.editor]`, …), over the embedded defaults:
    /// any table here; the notebook reads and checks it (`tui::ui_config`).
    pub keys: Option<toml::Table>,
    /// `[pool]`: the local pool's per-session limits.
    #[serde(default)]
    pub pool: PoolLimits,
    /// `[background_pool]`: the local pool that commands without an endpoint
    /// start in the background.
    #[serde(default)]
    pub background_pool: BackgroundPool,
    /// `[ledger]`: the flight recorder's ledger (recording on or off,
    /// retention days, most size).
    #[serde(default)]
    pub ledger: crate::ledger::LedgerConfig,
    /// The text the file was read from (empty for the defaults), for sections
    /// that other modules read with their own types and report by line.
    #[serde(skip)]
    pub source: String,
}

/// `[background_pool]`: how the background local pool (started by `exec`,
/// `files`, `sessions` and `pool` without an endpoint) behaves.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BackgroundPool {
    /// Seconds without a request after which it ends (and its sessions'
    /// cooldown); 900 (15 minutes) when absent.
    pub idle_exit: Option<u64>,
}

impl BackgroundPool {
    /// The idle period when none is configured: 15 minutes.
    pub const DEFAULT_IDLE_EXIT: std::time::Duration = std::time::Duration::from_secs(900);

    /// The idle period in force, at least one second.
    pub fn idle_exit(&self) -> std::time::Duration {
        self.idle_exit.map_or(Self::DEFAULT_IDLE_EXIT, |s| {
            std::time::Duration::from_secs(s.max(1))
        })
    }
}

/// `[pool]`: per-session limits of the local pool (embedded or `serve`; serve's
/// flags override them). Sizes are written like `"2 GiB"`, `"512MiB"` or a
/// number of bytes.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PoolLimits {
    /// Memory of a session's processes.
    pub memory: Option<bytesize::ByteSize>,
    /// Processes and threads of a session.
    pub processes: Option<u64>,
    /// Size of a session's private `/tmp`.
    pub tmp_size: Option<bytesize::ByteSize>,
    /// Largest file a session may write.
    pub file_size: Option<bytesize::ByteSize>,
    /// Size of a session's `/mnt/data` (a tmpfs of its own, where the sandbox runs).
    pub data_size: Option<bytesize::ByteSize>,
    /// CPU weight against other sessions, 1–10000 (100 is an equal share).
    pub cpu_weight: Option<u64>,
    /// Bytes of stdout, and separately of stderr, one execution keeps (1 KiB
    /// to 1 GiB, checked when the file is read); a longer stream keeps its
    /// first and last halves.
    pub max_stream_bytes: Option<crate::protocol::limits::StreamBytes>,
    /// `false` is the opt-in to sessions NOT isolated where the sandbox cannot
    /// be built (as `serve --no-sandbox`): the notebook's background pool,
    /// `exec`, `files` and `mcp` refuse otherwise. Unset or `true`: sandboxed.
    pub sandbox: Option<bool>,
    /// `true` emulates the service's limits (as `serve --azure-limits`, see
    /// [`crate::protocol::service_limits`]) in the embedded and background
    /// pools and `serve`. Unset or `false`: off.
    pub azure_limits: Option<bool>,
    /// The packages of the built Python environment: `"pythonlts"` (unset: like
    /// the service's image) or `"minimal"` (as `serve --image`).
    pub image: Option<crate::protocol::image::Image>,
    /// Where sessions of the embedded, background and `serve` pools may
    /// connect: `"off"` (unset), `"on"`, `"audit"` or
    /// `"allow=HOST[:PORT][,HOST…]"` (as `serve --egress`).
    pub egress: Option<crate::protocol::egress::Egress>,
}

impl PoolLimits {
    /// The limits given here over `base`.
    pub fn over(&self, base: crate::protocol::limits::Limits) -> crate::protocol::limits::Limits {
        crate::protocol::limits::Limits {
            memory_bytes: self.memory.map_or(base.memory_bytes, |b| b.as_u64()),
            processes: self.processes.unwrap_or(base.processes),
            tmp_bytes: self.tmp_size.map_or(base.tmp_bytes, |b| b.as_u64()),
            file_bytes: self.file_size.map_or(base.file_bytes, |b| b.as_u64()),
            data_bytes: self.data_size.map_or(base.data_bytes, |b| b.as_u64()),
            cpu_weight: self.cpu_weight.unwrap_or(base.cpu_weight).clamp(1, 10_000),
            stream_bytes: self.max_stream_bytes.map_or(base.stream_bytes, |b| b.0),
        }
    }
}

/// How the terminal is asked to draw images.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ImageProtocol {
    /// Ask the terminal what it supports, once at start.
    #[default]
    Auto,
    /// The kitty graphics protocol.
    Kitty,
    /// Sixel graphics.
    Sixel,
    /// iTerm2's inline images.
    Iterm2,
    /// Unicode half blocks: works everywhere, low resolution.
    Halfblocks,
}

/// One named pool.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
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
    /// `code-interpreter` (default) or `custom-container`: how sessions are
    /// listed and ended (`DELETE session` or `.management/stopSession`).
    pub pool_type: Option<crate::protocol::PoolType>,
    /// The pool's container type (`PythonLTS` default, `Shell`, `NodeLTS`,
    /// `CustomContainer`, `GpuBase`, or a short name: `shell`, `node`…): what
    /// executions send; for a profile without an endpoint, what the embedded
    /// local pool runs.
    pub container_type: Option<crate::protocol::ContainerType>,
    /// Ask for a kernel without preloaded libraries (`useEmptyKernel`,
    /// 2025-10-02-preview; default false).
    pub use_empty_kernel: Option<bool>,
    /// Where the sessions of the local pool this profile runs on may connect
    /// (a profile without an endpoint only): as `[pool] egress`, which it
    /// overrides. Read from `egress` by [`Config::parse`]; `None` when the
    /// profile sets none.
    #[serde(skip)]
    pub egress: Option<crate::protocol::egress::Egress>,
    /// `egress` as written (a string or a bool, as `[pool] egress`), with
    /// where it is, so that [`Config::parse`] names the profile in its errors.
    #[serde(rename = "egress")]
    egress_as_written: Option<Spanned<toml::Value>>,
}

impl Profile {
    /// Reads `egress` as written into [`Profile::egress`], with the parser of
    /// `[pool] egress`.
    ///
    /// # Errors
    ///
    /// A value that is not a policy, or a profile with an endpoint (Azure's
    /// session pools have egress on or off, set on the pool's ARM resource,
    /// not by a client): the message names the profile, the line and column.
    fn read_egress(&mut self, name: &str, text: &str) -> Result<(), String> {
        let Some(written) = &self.egress_as_written else {
            return Ok(());
        };
        let at = locate(text, written.span());
        if self.endpoint.is_some() {
            return Err(format!(
                "[profiles.{name}] egress ({at}): a profile with an endpoint cannot set \
                 egress; Azure session pools have egress on or off, set on the pool's \
                 resource (sessionNetworkConfiguration), not by a client. egress is for \
                 a profile without an endpoint (the local pool)"
            ));
        }
        let value = written.get_ref();
        if !(value.is_str() || value.is_bool()) {
            return Err(format!(
                "[profiles.{name}] egress ({at}): an egress policy is a string (off, on, \
                 audit or allow=HOST[:PORT][,HOST…]) or a bool, not the {} {value}",
                value.type_str()
            ));
        }
        // The deserializer of `[pool] egress`: one parser for both.
        let egress = value
            .clone()
            .try_into::<crate::protocol::egress::Egress>()
            .map_err(|e| format!("[profiles.{name}] egress ({at}): {}", e.message().trim()))?;
        self.egress = Some(egress);
        Ok(())
    }
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
    #[allow(clippy::doc_markdown)] // this doc is the --auth value's help text
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
    directories::ProjectDirs::from("", "", "sessionpad").map_or_else(
        || PathBuf::from("sessionpad.toml"),
        |d| d.config_dir().join("config.toml"),
    )
}

impl Config {
    /// Reads `path`; a missing file gives the defaults when `required` is false.
    ///
    /// # Errors
    ///
    /// The file exists but cannot be read or parsed ([`ConfigError`] with
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

    /// Parses TOML text.
    ///
    /// # Errors
    ///
    /// The text is not TOML or not the config's shape (the message names the
    /// line, column and key), `default_profile` names no profile, or a
    /// profile's `egress` is not a policy or is set with an endpoint (the
    /// message names the profile).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut config: Self =
            toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
        for (name, profile) in &mut config.profiles {
            profile.read_egress(name, text)?;
        }
        if let Some(name) = &config.default_profile
            && !config.profiles.contains_key(name)
        {
            return Err(format!(
                "default_profile = {name:?} names no [profiles.{name}] table"
            ));
        }
        Ok(Self {
            source: text.to_string(),
            ..config
        })
    }

    /// The profile `name`, or the default profile when `name` is `None`.
    ///
    /// # Errors
    ///
    /// A named profile that does not exist (the message lists the known ones).
    pub fn profile(&self, name: Option<&str>) -> Result<Option<&Profile>, String> {
        match name.or(self.default_profile.as_deref()) {
            None => Ok(None),
            Some(n) => self.profiles.get(n).map(Some).ok_or_else(|| {
                let known: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
                format!(
                    "no profile {n:?} in the config file (known: {})",
                    known.join(", ")
                )
            }),
        }
    }
}

/// `line L, column C` of the byte range `span` in `text`.
pub fn locate(text: &str, span: Range<usize>) -> String {
    let before = text.get(..span.start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {column}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_limits_read_sizes_as_written() {
        let c = Config::parse(
            "[pool]\nmemory = \"1 GiB\"\nprocesses = 64\ntmp_size = \"64MiB\"\nfile_size = 1048576\n",
        )
        .unwrap();
        let l = c.pool.over(crate::protocol::limits::Limits::default());
        assert_eq!(l.memory_bytes, 1 << 30);
        assert_eq!(l.processes, 64);
        assert_eq!(l.tmp_bytes, 64 << 20);
        assert_eq!(l.file_bytes, 1 << 20);
        assert_eq!(l.cpu_weight, 100);
        assert!(Config::parse("[pool]\nmemory = \"lots\"\n").is_err());
        assert_eq!(l.stream_bytes, 8 << 20);
    }

    #[test]
    fn the_stream_limit_is_read_and_checked() {
        let c = Config::parse("[pool]\nmax_stream_bytes = \"64 KiB\"\n").unwrap();
        let l = c.pool.over(crate::protocol::limits::Limits::default());
        assert_eq!(l.stream_bytes, 64 << 10);
        for bad in ["0", "\"100 B\"", "\"2 GiB\""] {
            let e = Config::parse(&format!("[pool]\nmax_stream_bytes = {bad}\n")).unwrap_err();
            assert!(e.contains("the stream limit must be 1 KiB to 1 GiB"), "{e}");
        }
    }

    #[test]
    fn profiles_parse() {
        let c = Config::parse(
            "default_profile = \"dev\"\n[profiles.dev]\nendpoint = \"https://x\"\nauth = \"managed-identity\"\nclient_id = \"abc\"\n[profiles.local]\n",
        )
        .unwrap();
        let dev = c.profile(None).unwrap().unwrap();
        assert_eq!(dev.auth, Some(AuthKind::ManagedIdentity));
        assert_eq!(c.profile(Some("local")).unwrap().unwrap().endpoint, None);
        assert!(
            c.profile(Some("nope"))
                .unwrap_err()
                .contains("known: dev, local")
        );
    }

    #[test]
    fn a_local_profile_sets_its_own_egress_over_the_pools() {
        let c = Config::parse(
            "[pool]\negress = \"audit\"\n[profiles.local]\negress = \"allow=pypi.org:443,*.github.com\"\n[profiles.open]\negress = true\n[profiles.plain]\n",
        )
        .unwrap();
        let local = c.profile(Some("local")).unwrap().unwrap();
        let egress = local.egress.as_ref().unwrap();
        assert_eq!(egress.to_string(), "allow=pypi.org:443,*.github.com");
        assert!(egress.allows("api.github.com", 80) && !egress.allows("pypi.org", 80));
        let open = c.profile(Some("open")).unwrap().unwrap();
        assert_eq!(open.egress, Some(crate::protocol::egress::Egress::On));
        assert_eq!(c.profile(Some("plain")).unwrap().unwrap().egress, None);
    }

    #[test]
    fn a_bad_profile_egress_names_the_profile_and_the_line() {
        for (bad, says) in [
            ("\"allow=\"", "at least one host"),
            ("\"sometimes\"", "not a policy"),
            ("\"allow=a:b\"", "a:b"),
            ("3", "not the integer 3"),
        ] {
            let e = Config::parse(&format!("[profiles.x]\n[profiles.demo]\negress = {bad}\n"))
                .unwrap_err();
            assert!(
                e.contains("[profiles.demo] egress (line 3, column 10)"),
                "{e}"
            );
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_profile_with_an_endpoint_cannot_set_egress() {
        let e = Config::parse(
            "[profiles.dev]\nendpoint = \"https://x\"\negress = \"allow=pypi.org\"\n",
        )
        .unwrap_err();
        assert!(e.contains("[profiles.dev] egress (line 3"), "{e}");
        assert!(e.contains("cannot set egress"), "{e}");
        assert!(e.contains("sessionNetworkConfiguration"), "{e}");
    }

    #[test]
    fn errors_name_the_line_and_key() {
        let e =
            Config::parse("[profiles.dev]\nendpoint = \"https://x\"\nauht = \"az\"\n").unwrap_err();
        assert!(e.contains("line 3"), "{e}");
        assert!(e.contains("auht"), "{e}");
        let e = Config::parse("[profiles.dev]\nauth = \"kerberos\"\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("kerberos"), "{e}");
        let e = Config::parse("default_profile = \"x\"\n").unwrap_err();
        assert!(e.contains("[profiles.x]"), "{e}");
    }

    #[test]
    fn the_image_protocol_is_checked_here() {
        let c = Config::parse("image_protocol = \"halfblocks\"\n").unwrap();
        assert_eq!(c.image_protocol, Some(ImageProtocol::Halfblocks));
        let e = Config::parse("image_protocol = \"braille\"\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("braille"), "{e}");
    }

    #[test]
    fn a_missing_file_is_the_default_unless_required() {
        let p = Path::new("/nonexistent/sessionpad.toml");
        assert_eq!(Config::load(p, false).unwrap(), Config::default());
        assert!(
            Config::load(p, true)
                .unwrap_err()
                .to_string()
                .contains("/nonexistent")
        );
    }

    #[test]
    fn the_documented_example_parses() {
        let page = include_str!("../docs/configuration.md");
        let start = page
            .find("```toml\n")
            .expect("a toml block in docs/configuration.md")
            + 8;
        let end = start + page[start..].find("```").expect("the block ends");
        let config =
            Config::parse(&page[start..end]).expect("docs/configuration.md's example parses");
        assert!(config.profiles.contains_key("dev"));
        let egress = config
            .pool
            .egress
            .as_ref()
            .expect("[pool] egress in the example");
        assert!(egress.allows("pypi.org", 443) && !egress.allows("pypi.org", 80));
        let local = config.profile(Some("local")).unwrap().unwrap();
        let egress = local
            .egress
            .as_ref()
            .expect("a profile's egress in the example");
        assert!(egress.allows("api.github.com", 443) && !egress.allows("example.com", 443));
    }
}
