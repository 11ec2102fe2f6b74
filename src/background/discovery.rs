//! The discovery file: where a running `sessionpad serve` (in the foreground, or
//! the background local pool) publishes its endpoint and token for the other
//! sessionpad commands of this user. There is one per container type the local
//! pool runs, so a Python, a Shell and a Node.js pool can run side by side:
//! `<data dir>/local-pool.json` for Python (the name it always had),
//! `local-pool-shell.json` and `local-pool-node.json` (see [`file_stem`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::pool::LocalPool;
use crate::protocol::ContainerType;
use crate::protocol::Isolation;
use crate::protocol::egress::Egress;

/// The stem of the local pool's files for `container_type` (its discovery
/// file, lock and log): `local-pool` for Python, else `local-pool-` and the
/// short name (`shell`, `node`, `custom-container`, `gpu`).
pub fn file_stem(container_type: ContainerType) -> String {
    let short = match container_type {
        ContainerType::PythonLts => return "local-pool".to_string(),
        ContainerType::Shell => "shell",
        ContainerType::NodeLts => "node",
        ContainerType::CustomContainer => "custom-container",
        ContainerType::GpuBase => "gpu",
    };
    format!("local-pool-{short}")
}

/// The file in which `sessionpad serve` publishes its endpoint and token for other
/// sessionpad commands on this machine (readable by this user only). It belongs
/// to the serve that wrote it: a second serve leaves it alone, and a serve
/// removes it on exit only while it is still its own (its `nonce`).
#[derive(Debug, Serialize, Deserialize)]
pub struct Discovery {
    /// The pool management endpoint, `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The bearer token the pool wants, if any.
    pub token: Option<String>,
    /// The pool's MCP endpoint (`<endpoint>/mcp`; absent in files of older
    /// versions).
    #[serde(default)]
    pub mcp_endpoint: Option<String>,
    /// The API key of the pool's MCP endpoint (`x-ms-apikey`), if it wants one
    /// (absent in files of older versions).
    #[serde(default)]
    pub mcp_key: Option<String>,
    /// The serve's process id.
    pub pid: u32,
    /// A random value of the serve that wrote the file, so that it removes only
    /// its own file (a pid alone can be reused).
    #[serde(default)]
    nonce: String,
    /// The serve's isolation (absent in files of older versions), so commands
    /// can warn without asking the pool.
    #[serde(default)]
    pub isolation: Option<Isolation>,
    /// Whether the serve is the background local pool (it ends by itself when
    /// idle, and `sessionpad pool stop` ends it), not a serve someone runs in
    /// the foreground (absent in files of older versions: false).
    #[serde(default)]
    pub background: bool,
    /// What the serve's sessions run (absent in files of older versions,
    /// which only Python pools wrote).
    #[serde(default)]
    pub container_type: ContainerType,
    /// The egress policy the serve was started with (`--egress`, `[pool]
    /// egress`; its text, e.g. `"allow=pypi.org:443"`), so that a command
    /// asking for another does not use it (absent in files of older
    /// versions: not known).
    #[serde(default)]
    pub egress: Option<Egress>,
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
    /// The discovery file of local pools running `container_type`:
    /// `<data dir>/local-pool.json` for Python, `local-pool-shell.json`, … (see
    /// [`file_stem`]).
    pub fn path(container_type: ContainerType) -> PathBuf {
        crate::dirs::data_dir().join(format!("{}.json", file_stem(container_type)))
    }

    /// Writes the discovery file for `pool` (atomically, mode 0600: it holds the
    /// bearer token), the one of the container type its sessions run, unless
    /// another serve that is still running owns it; a file whose serve is gone
    /// is replaced. `background` marks the serve as the background local pool;
    /// `egress` is the policy it was started with. The file is removed when
    /// the returned guard drops, if it is still this serve's.
    ///
    /// # Errors
    ///
    /// [`NotPublished::Taken`] when a live serve owns the file,
    /// [`NotPublished::Io`] when it cannot be written.
    pub fn publish(
        pool: &LocalPool,
        background: bool,
        egress: &Egress,
    ) -> Result<DiscoveryGuard, NotPublished> {
        let me = Self {
            endpoint: pool.endpoint(),
            token: pool.token().map(str::to_string),
            mcp_endpoint: Some(pool.mcp_endpoint()),
            mcp_key: pool.mcp_key().map(str::to_string),
            pid: std::process::id(),
            nonce: crate::pool::random_token(),
            isolation: Some(pool.isolation().clone()),
            background,
            container_type: pool.registry().container_type(),
            egress: Some(egress.clone()),
        };
        let path = Self::path(me.container_type);
        let io = |e: std::io::Error| NotPublished::Io(e.to_string());
        if let Some(parent) = path.parent() {
            crate::dirs::create_private(parent).map_err(io)?;
        }
        let json = serde_json::to_vec(&me).map_err(|e| NotPublished::Io(e.to_string()))?;
        let tmp = path.with_extension(format!("json.{}.tmp", me.pid));
        write_private(&tmp, &json).map_err(io)?;
        // A hard link appears whole and fails if the file exists: two serves
        // starting together cannot both win.
        let linked = std::fs::hard_link(&tmp, &path);
        let result = match linked {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match Self::read(&path) {
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

    fn read(path: &std::path::Path) -> Option<Self> {
        let bytes = std::fs::read(path).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Whether the serve that wrote this is still running: its pid is a live
    /// process whose arguments include `serve` (so a pid reused by another
    /// program does not keep a stale file alive).
    fn alive(&self) -> bool {
        std::fs::read(format!("/proc/{}/cmdline", self.pid))
            .is_ok_and(|cmdline| cmdline.split(|&b| b == 0).any(|arg| arg == b"serve"))
    }

    /// The running `serve` of `container_type` on this machine, if its process
    /// is still alive.
    pub fn find(container_type: ContainerType) -> Option<Self> {
        Self::read(&Self::path(container_type)).filter(Self::alive)
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
