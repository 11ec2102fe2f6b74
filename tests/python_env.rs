//! The local pool's Python environment from the real binary: found the same
//! way whatever `PATH` the user has. A command run with a bare `PATH`
//! (`env PATH=/usr/bin:/bin sessionpad exec …`), where another interpreter
//! comes first, runs its kernels in the same environment as one
//! run with the user's own `PATH`, without building anything.
//!
//! Uses the user's cache directory (the environment the other tests build or
//! reuse) and a data directory of its own, so each command starts its own
//! background pool; every pool it starts is stopped, also when it fails.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::process::{Command, Output};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A private data directory and config; drop stops its background pool.
struct Data(tempfile::TempDir);

impl Data {
    fn run(&self, path: Option<&str>, args: &[&str]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sessionpad"));
        cmd.args(args)
            .current_dir(self.0.path())
            .env("SESSIONPAD_DATA_DIR", self.0.path())
            .env("SESSIONPAD_CONFIG", self.0.path().join("config.toml"))
            .env_remove("SESSIONPAD_BASE_PYTHON")
            .env_remove("POOL_MANAGEMENT_ENDPOINT")
            .env_remove("SESSIONPAD_TOKEN");
        if let Some(path) = path {
            cmd.env("PATH", path);
        }
        cmd.output().unwrap()
    }
}

impl Drop for Data {
    fn drop(&mut self) {
        let _ = self.run(None, &["pool", "stop"]);
    }
}

/// Runs `print(sys.prefix, sys.version)` in a new background pool started with `path` (the
/// user's own when `None`) and stops the pool; returns the prefix and all that
/// was said about the environment (the command's stderr and the pool's log).
fn prefix_with(path: Option<&str>) -> (String, String) {
    let data = Data(tempfile::tempdir().unwrap());
    std::fs::write(data.0.path().join("config.toml"), "").unwrap();
    // A sandboxed session sees its environment at `/opt/python/env`: the
    // interpreter's version tells the base interpreter apart.
    let out = data.run(
        path,
        &["exec", "-c", "import sys; print(sys.prefix, sys.version)"],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "PATH {path:?}: {stderr}");
    let stop = data.run(None, &["pool", "stop"]);
    assert!(stop.status.success(), "{}", text(&stop.stderr));
    let log =
        std::fs::read_to_string(data.0.path().join("logs/local-pool.log")).unwrap_or_default();
    (
        text(&out.stdout).trim().to_string(),
        format!("{stderr}\n{log}"),
    )
}

#[test]
fn a_bare_path_finds_the_same_environment_and_builds_nothing() {
    // With the user's PATH: builds the environment if this machine has none.
    let (own, _) = prefix_with(None);
    assert!(
        own.contains("/python/env-") || own.starts_with("/opt/python/env "),
        "kernels run in sessionpad's environment: {own}"
    );
    // A bare PATH, where the system's python3 comes first (on this machine
    // another interpreter than the user's): the same environment, nothing built.
    let bare = "/usr/bin:/bin";
    let (prefix, said) = prefix_with(Some(bare));
    assert_eq!(prefix, own, "PATH={bare}: {said}");
    assert!(
        !said.contains("building the Python environment"),
        "PATH={bare} built an environment: {said}"
    );
}
