//! What one sandbox is made of: the plan the pool hands to the sandbox helper
//! ([`super::helper`]), as JSON in a file the helper inherits (never on its
//! command line, which every process of the sandbox could read).
//!
//! The plan is data only; building it is [`super::Sandbox::command`]'s job and
//! carrying it out the helper's.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Who the sandboxed program runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum User {
    /// The pool runs as root: no user namespace; the program drops to the
    /// session's own host uid and gid, with every capability cleared.
    Host {
        /// The session's uid and gid on the host.
        uid: u32,
    },
    /// The pool runs as a user: a new user namespace maps `inner` to the pool's
    /// own uid and gid (`outer_uid`, `outer_gid`), the only ids that exist there.
    Namespace {
        /// The uid and gid the program has inside.
        inner: u32,
        /// The pool's uid outside.
        outer_uid: u32,
        /// The pool's gid outside.
        outer_gid: u32,
    },
}

/// One step of the sandbox's file view, carried out in order on an empty,
/// read-only (once built) root. Paths are absolute, inside the sandbox; folders
/// on the way to each are made (mode 0755).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mount {
    /// A host file or folder bound read-only (no set-uid programs or device
    /// files) at `path`.
    ReadOnly {
        /// The host's path.
        source: PathBuf,
        /// The path inside.
        path: PathBuf,
    },
    /// A host folder bound read-write (no set-uid programs or device files).
    ReadWrite {
        /// The host's path.
        source: PathBuf,
        /// The path inside.
        path: PathBuf,
    },
    /// A symbolic link.
    Symlink {
        /// What it points to (e.g. `usr/bin`).
        target: PathBuf,
        /// Where it is (e.g. `/bin`).
        link: PathBuf,
    },
    /// A tmpfs of its own size and number of files (inodes).
    Tmpfs {
        /// Where it is mounted.
        path: PathBuf,
        /// Its size, bytes.
        bytes: u64,
        /// How many files and folders it may hold.
        inodes: u64,
        /// The mode of its root, e.g. `0o1777`.
        mode: u32,
    },
    /// A `/proc` of the sandbox's own process namespace, with `sys`,
    /// `sysrq-trigger`, `irq` and `bus` read-only.
    Proc {
        /// Where it is mounted (`/proc`).
        path: PathBuf,
    },
    /// A small `/dev`: `null`, `zero`, `full`, `random`, `urandom` and `tty`
    /// bound from the host, a private `pts`, the usual links, and `shm` a tmpfs
    /// of its own size; read-only except `shm` and `pts`.
    Dev {
        /// Where it is mounted (`/dev`).
        path: PathBuf,
        /// The size of `shm`, bytes.
        shm_bytes: u64,
        /// How many files `shm` may hold.
        shm_inodes: u64,
    },
    /// A file with these contents (mode 0644), read-only like the rest of the
    /// root.
    File {
        /// Where it is.
        path: PathBuf,
        /// What it holds.
        contents: String,
    },
}

/// Everything the helper needs to build one sandbox and start its program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Who the program runs as.
    pub user: User,
    /// Whether the sandbox keeps the host's network (`--egress`); otherwise it
    /// has a network namespace of its own with only `lo`.
    pub egress: bool,
    /// The file view, in order.
    pub mounts: Vec<Mount>,
    /// The sandbox's host name.
    pub hostname: String,
    /// The program's working folder, inside.
    pub workdir: PathBuf,
    /// `RLIMIT_NPROC` set inside the sandbox (counting only its processes), when
    /// no cgroup limits them.
    pub nproc: Option<u64>,
    /// The program, by its path inside (the same as on the host for the bound
    /// Python environment).
    pub program: PathBuf,
    /// Its arguments, after its name.
    pub args: Vec<String>,
    /// Its whole environment.
    pub env: Vec<(String, String)>,
    /// Under an egress allow-list or audit: the pool's egress proxy's socket
    /// (inside, in the runtime folder), which a relay of the init's joins
    /// `127.0.0.1:3128` to ([`super::relay`]); `None` otherwise.
    #[serde(default)]
    pub relay: Option<PathBuf>,
    /// In a sandbox with a network namespace of its own: the inherited Unix
    /// socket (a descriptor number) on which the program sends the pool the
    /// listener of its connect notifier ([`super::seccomp::notifier`]), or,
    /// when the kernel cannot make one, a line saying why; `None` otherwise.
    #[serde(default)]
    pub notify_fd: Option<i32>,
}
