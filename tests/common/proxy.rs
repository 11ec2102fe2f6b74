//! Helpers of the recording proxy's tests: an upstream `sessionpad serve`
//! standing in for Azure, a `sessionpad serve --upstream` in front of it that
//! gets the upstream's token from a profile's `token-env`, and the proxy's
//! ledger read back with `sessionpad log --json` ([`super::common::log_json`]). Included by the test files
//! that need it with `#[path = "common/proxy.rs"] mod proxy_support;`, next
//! to `mod common;`.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command};

/// The upstream's bearer token (what Azure would check).
pub const UPSTREAM_TOKEN: &str = "upstream-entra-stand-in-7d1e0b";
/// The proxy's own bearer token, the one agents send.
pub const PROXY_TOKEN: &str = "proxy-agent-token-55c2a9";
/// The variable the proxy's profile reads the upstream's token from.
pub const TOKEN_VAR: &str = "SESSIONPAD_PROXY_TEST_UPSTREAM_TOKEN";

/// A running process, killed and reaped when dropped (also when a test fails).
pub struct Running(pub Child);

impl Running {
    /// Ends the process with SIGTERM (an orderly end: the ledger is flushed)
    /// and asserts it exited cleanly.
    pub fn terminate(mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(i32::try_from(self.0.id()).unwrap(), libc::SIGTERM);
        }
        assert!(self.0.wait().unwrap().success());
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        super::common::end_gracefully(&mut self.0);
    }
}

/// The stand-in for Azure: a `sessionpad serve` (`extra` arguments, e.g.
/// `--container-type shell`) with [`UPSTREAM_TOKEN`], its ledger in `data`.
pub fn upstream(data: &Path, extra: &[&str]) -> (Running, String) {
    let mut cmd = super::common::serve_command(data, UPSTREAM_TOKEN, 1);
    cmd.args(extra).stderr(std::process::Stdio::null());
    let (child, endpoint) = super::common::spawn_serve(cmd);
    (Running(child), endpoint)
}

/// An upstream (with `extra` arguments) and a proxy in front of it, each with
/// a data folder of its own: (the upstream's folder, the proxy's folder, (the
/// upstream, its endpoint), (the proxy, its endpoint)). Bound in that order,
/// the processes end before their folders go.
pub fn proxied(
    extra: &[&str],
) -> (
    tempfile::TempDir,
    tempfile::TempDir,
    (Running, String),
    (Running, String),
) {
    let up_data = tempfile::tempdir().unwrap();
    let proxy_data = tempfile::tempdir().unwrap();
    let up = upstream(up_data.path(), extra);
    let px = proxy(proxy_data.path(), &up.1, UPSTREAM_TOKEN);
    (up_data, proxy_data, up, px)
}

/// `sessionpad serve --upstream ENDPOINT` with [`PROXY_TOKEN`], its ledger in
/// `data`, the upstream's token `upstream_token` read from [`TOKEN_VAR`]
/// through a profile `auth = "token-env"` of a config file in `data`.
pub fn proxy(data: &Path, upstream: &str, upstream_token: &str) -> (Running, String) {
    proxy_with(data, upstream, upstream_token, "", &[])
}

/// [`proxy`] with `config` added to its config file (e.g. a `[ledger]`
/// table) and `extra` arguments to `serve`.
pub fn proxy_with(
    data: &Path,
    upstream: &str,
    upstream_token: &str,
    config: &str,
    extra: &[&str],
) -> (Running, String) {
    let file = data.join("config.toml");
    std::fs::write(
        &file,
        format!(
            "default_profile = \"azure\"\n\n[profiles.azure]\nauth = \"token-env\"\ntoken_env = \"{TOKEN_VAR}\"\n\n{config}"
        ),
    )
    .unwrap();
    let config = file;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sessionpad"));
    cmd.args(["serve", "--port", "0", "--token", PROXY_TOKEN])
        .args(extra)
        .arg("--upstream")
        .arg(upstream)
        .env("SESSIONPAD_CONFIG", &config)
        .env("SESSIONPAD_DATA_DIR", data)
        .env(TOKEN_VAR, upstream_token)
        .env_remove("SESSIONPAD_TOKEN")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let (child, endpoint) = super::common::spawn_serve(cmd);
    (Running(child), endpoint)
}

/// Whether `needle` occurs in `hay`.
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
