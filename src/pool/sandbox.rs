//! Isolation of local-pool kernels with bubblewrap (`bwrap`), like a session pool's
//! sandbox: read-only root, private `/tmp`, the session folder at `/mnt/data`, and no
//! network unless egress is enabled (Azure's default is egress disabled).
//! Without bubblewrap kernels run unisolated, and `/mnt/data/...` paths are mapped to
//! the session folder by the kernel start-up script.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::Command;

/// A usable bubblewrap.
#[derive(Debug, Clone)]
pub struct Sandbox {
    bwrap: PathBuf,
    egress: bool,
}

/// Why kernels are not sandboxed, for the pool's warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoSandbox {
    /// Turned off by the user.
    Disabled,
    /// `bwrap` is not on PATH.
    NotInstalled,
    /// `bwrap` is there but cannot create namespaces here; the text says why.
    Unusable(String),
}

impl std::fmt::Display for NoSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Disabled => write!(
                f,
                "sandbox disabled: sessions are NOT isolated from this machine"
            ),
            Self::NotInstalled => write!(
                f,
                "bubblewrap (bwrap) is not installed: sessions are NOT isolated from this machine \
                 and have network access (install the `bubblewrap` package to sandbox them)"
            ),
            Self::Unusable(why) => write!(
                f,
                "bubblewrap cannot create a sandbox here ({why}): sessions are NOT isolated"
            ),
        }
    }
}

impl Sandbox {
    /// Finds bubblewrap and checks that it can create namespaces on this machine
    /// (one short `bwrap … true` run, a few milliseconds). `egress` keeps the
    /// network namespace shared.
    ///
    /// Errors: the reason kernels will run unsandboxed.
    pub fn detect(enabled: bool, egress: bool) -> Result<Self, NoSandbox> {
        if !enabled {
            return Err(NoSandbox::Disabled);
        }
        let bwrap = find_on_path("bwrap").ok_or(NoSandbox::NotInstalled)?;
        let out = std::process::Command::new(&bwrap)
            .args(["--unshare-all", "--die-with-parent", "--ro-bind", "/", "/"])
            .args(["--proc", "/proc", "--dev", "/dev", "true"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| NoSandbox::Unusable(e.to_string()))?;
        if !out.status.success() {
            let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(NoSandbox::Unusable(msg));
        }
        Ok(Self { bwrap, egress })
    }

    /// Whether sandboxed kernels may reach the network.
    pub fn egress(&self) -> bool {
        self.egress
    }

    /// A command that runs `program args…` inside the sandbox with `folder` mounted
    /// read-write at `/mnt/data` (also the working directory), `runtime_dir` (the
    /// IPC sockets and connection file) mounted at its own path, and `keep` (e.g. a
    /// Python environment under a folder the sandbox hides) bound read-only.
    pub fn command(
        &self,
        program: &Path,
        folder: &Path,
        runtime_dir: &Path,
        keep: &[&Path],
    ) -> Command {
        let mut cmd = Command::new(&self.bwrap);
        cmd.arg("--unshare-all");
        if self.egress {
            cmd.arg("--share-net");
        }
        // --die-with-parent covers the sandbox's init only once its setup is
        // done; `process.rs` kills the whole tree for the moments before.
        cmd.args(["--die-with-parent", "--new-session"])
            .args(["--ro-bind", "/", "/"])
            .args(["--tmpfs", "/tmp", "--tmpfs", "/mnt"])
            .args(["--proc", "/proc", "--dev", "/dev"]);
        // Folders a tmpfs above hid are bound back read-only.
        for path in keep {
            if path.starts_with("/tmp") || path.starts_with("/mnt") {
                cmd.arg("--ro-bind").arg(path).arg(path);
            }
        }
        cmd.arg("--bind").arg(runtime_dir).arg(runtime_dir);
        cmd.arg("--bind").arg(folder).arg("/mnt/data");
        cmd.args(["--chdir", "/mnt/data", "--setenv", "HOME", "/tmp"])
            .arg("--")
            .arg(program);
        cmd
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}
