//! A profile's own egress policy (issue 29), from the real binary: a profile
//! without an endpoint that says `egress = "audit"` starts the background
//! local pool under that policy (its `pool info --json` and its discovery file
//! say so, and its sessions get the proxy variables); a command of another
//! profile, whose policy is `[pool] egress`, does not use that pool but says
//! both policies and how to end it; after `pool stop` it gets a pool of its
//! own policy. No traffic leaves the session: the cell only reads its
//! environment.
//!
//! The config file, the data directory, `HOME` and the XDG folders are
//! temporary, so no user's config or pool is touched; the Python environment
//! is the shared cache's (`SESSIONPAD_CACHE_DIR`, as this process sees it).
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::path::Path;
use std::process::Command;

const CONFIG: &str = "\
[pool]
egress = \"allow=127.0.0.1:9\"

[profiles.demo]                # no endpoint: the local pool, audited
egress = \"audit\"

[profiles.plain]               # no endpoint, no egress of its own: [pool] egress
";

/// Temporary folders for one run; drop ends the background pool started in them.
struct Place {
    data: tempfile::TempDir,
    home: tempfile::TempDir,
    cwd: tempfile::TempDir,
}

impl Place {
    fn new() -> Self {
        let place = Self {
            data: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            cwd: tempfile::tempdir().unwrap(),
        };
        std::fs::write(place.config(), CONFIG).unwrap();
        place
    }

    fn config(&self) -> std::path::PathBuf {
        self.home.path().join("config.toml")
    }

    /// `sessionpad ARGS` in these folders only.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = common::sessionpad_command(self.data.path());
        let home = self.home.path();
        cmd.args(args)
            .current_dir(self.cwd.path())
            .env("SESSIONPAD_CONFIG", self.config())
            .env("SESSIONPAD_CACHE_DIR", sessionpad::dirs::cache_dir())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CACHE_HOME", home.join("cache"));
        cmd
    }

    /// The isolation notes `pool info --json` of `profile` shows.
    fn notes(&self, profile: &str) -> Vec<String> {
        let out =
            common::stdout_ok(&mut self.command(&["--profile", profile, "pool", "info", "--json"]));
        let info: serde_json::Value = serde_json::from_str(&out).unwrap();
        info["isolation"]["notes"]
            .as_array()
            .unwrap_or_else(|| panic!("no isolation notes: {info}"))
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    }

    /// The discovery file of the Python pool, as JSON.
    fn discovery(&self) -> serde_json::Value {
        let bytes = std::fs::read(self.data.path().join("local-pool.json")).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = self.command(&["pool", "stop"]).output();
    }
}

fn has_note(notes: &[String], start: &str) -> bool {
    notes.iter().any(|n| n.starts_with(start))
}

#[test]
fn a_profile_with_egress_audit_gets_an_audited_pool_and_another_policy_is_not_run_there() {
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        common::sandbox_tests_skipped("the sandbox cannot be built here");
        return;
    }
    let place = Place::new();
    let notes = place.notes("demo");
    assert!(has_note(&notes, "network: audit"), "{notes:?}");
    assert_eq!(place.discovery()["egress"], "audit");
    let pid = place.discovery()["pid"].clone();
    // The sessions of that pool are behind its proxy.
    let out = common::stdout_ok(&mut place.command(&[
        "--profile",
        "demo",
        "exec",
        "-c",
        "import os; print(os.environ.get('HTTPS_PROXY'))",
    ]));
    assert!(out.trim().starts_with("http://127.0.0.1:"), "{out}");

    // A config that asks for no policy at all uses the running pool as it is.
    let bare = place.home.path().join("bare.toml");
    std::fs::write(&bare, "").unwrap();
    let out = common::stdout_ok(
        place
            .command(&[
                "exec",
                "-c",
                "import os; print(os.environ.get('HTTPS_PROXY'))",
            ])
            .env("SESSIONPAD_CONFIG", &bare),
    );
    assert!(out.trim().starts_with("http://127.0.0.1:"), "{out}");
    assert_eq!(place.discovery()["pid"], pid, "the same pool");

    // Another profile asks for [pool] egress: the audited pool is not used.
    let refused = place
        .command(&["--profile", "plain", "exec", "-c", "print('ran')"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(!String::from_utf8_lossy(&refused.stdout).contains("ran"));
    assert!(
        stderr.contains(&format!(
            "the running background local pool, pid {pid}, has egress audit, but egress \
             allow=127.0.0.1:9 is asked for"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("`sessionpad pool stop`"), "{stderr}");
    assert_eq!(
        place.discovery()["pid"],
        pid,
        "the running pool was left alone"
    );

    // Once it is stopped, that profile gets a pool of its own policy.
    common::stdout_ok(&mut place.command(&["pool", "stop"]));
    let notes = place.notes("plain");
    assert!(
        has_note(&notes, "network: allow-list through the pool's proxy")
            && notes.iter().any(|n| n.ends_with(": 127.0.0.1:9")),
        "{notes:?}"
    );
    assert_eq!(place.discovery()["egress"], "allow=127.0.0.1:9");
}

#[test]
fn a_profile_with_an_endpoint_and_egress_is_refused_before_anything_runs() {
    let place = Place::new();
    std::fs::write(
        place.config(),
        "[profiles.azure]\nendpoint = \"http://127.0.0.1:9\"\negress = \"audit\"\n",
    )
    .unwrap();
    let out = place
        .command(&["--profile", "azure", "pool", "info"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("[profiles.azure] egress (line 3, column 10): a profile with an endpoint cannot set egress"),
        "{stderr}"
    );
    assert!(!Path::new(&place.data.path().join("local-pool.json")).exists());
}
