//! Isolation of local-pool kernels by a sandbox built into the sessionpad binary
//! (the [`helper`]; no system package is needed), so that a session sees a small
//! Linux system and nothing else of the host, as Azure's sandboxes promise
//! (`design.md`, the local pool):
//!
//! - **Files:** an empty, read-only root on which only an allow-list is bound
//!   read-only: the system folders (`/usr` and its merged-`/usr` links, a few
//!   files of `/etc`; see [`binds`]), the Python environment's own folders at
//!   neutral paths (nothing else of the cache, home or data folders, not even
//!   their names; see [`python_view`]), a private `/tmp`, a
//!   private `/dev` with a private `/dev/shm`, each tmpfs of limited size and
//!   number of files, the session's folder at `/mnt/data`, the kernel's runtime
//!   folder (its IPC sockets), and `/etc/passwd` and `/etc/group` naming the
//!   session user ([`mounts`]).
//! - **Privileges:** no capabilities (bounding and ambient sets cleared),
//!   `no_new_privs`, and the seccomp filter of [`seccomp`]. When the pool runs as
//!   root, sessions run as their own unprivileged host uids (no user namespace);
//!   otherwise as uid 1000 in a user namespace that maps it to the pool's uid.
//! - **Namespaces:** user (a pool that is not root), pid (the sandbox's pid 1 is
//!   a short, non-dumpable init), IPC, UTS, cgroup, mount, and network unless
//!   egress is allowed (Azure's default is egress disabled).
//!
//! Without a working sandbox kernels run unisolated ([`NoSandbox`]) only when
//! the user allowed it, and `/mnt/data/...` paths are mapped to the session
//! folder by the kernel start-up script.

pub mod binds;
pub mod diagnose;
pub mod env;
pub mod helper;
pub mod mounts;
pub mod plan;
pub mod python_view;
pub mod relay;
pub mod seccomp;

use std::io::{Seek, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use tokio::process::Command;

use self::binds::Bind;
use self::plan::{Mount, Plan, User};
use super::data_fs::Holder;

/// The uid and gid sessions have inside the sandbox when the pool does not run as
/// root (a user namespace maps it to the pool's own uid).
pub const INNER_UID: u32 = 1000;

/// The first host uid (and gid) given to sessions when the pool runs as root; each
/// session gets the next one, modulo [`SESSION_UIDS`]. The range lies in what
/// systemd leaves unused (above the container ranges, below 2³¹), so no file of
/// the host belongs to it.
pub const SESSION_UID_BASE: u32 = 1_900_000_000;

/// How many distinct session uids the pool hands out before reusing one.
pub const SESSION_UIDS: u32 = 1_000_000;

/// The size of each session's private `/dev/shm`, bytes (Docker's default).
pub const SHM_BYTES: u64 = 64 << 20;

/// How many files (inodes) a tmpfs of `bytes` may hold: one per 16 KiB, at
/// least 256. Each costs about a kilobyte of kernel memory that no limit counts,
/// so a session cannot pin gigabytes with empty files.
pub fn inodes_for(bytes: u64) -> u64 {
    (bytes / (16 << 10)).max(256)
}

/// A working sandbox and everything a sandboxed kernel's command needs.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// The sessionpad binary, started as the sandbox helper.
    helper: PathBuf,
    /// Where sessions may connect; only `on` keeps the host's network.
    egress: crate::protocol::egress::Egress,
    /// Whether the pool runs as root (sessions get host uids of their own).
    drops_root: bool,
    /// The system part of the allow-list, as found on this machine.
    system: Arc<Vec<Bind>>,
    /// The pool's own TCP port, which the egress proxy never connects a
    /// session to on this machine, whatever the policy.
    pool_port: Option<u16>,
}

/// Why kernels are not sandboxed, for the pool's warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoSandbox {
    /// Turned off by the user.
    Disabled,
    /// The machine refuses what the sandbox needs: the step that failed with
    /// the OS's error, and the cause with its fix where one is known
    /// ([`diagnose`]).
    Unusable {
        /// The failed step, e.g. `new user namespace: No space left on device`.
        error: String,
        /// What in the machine is in the way, and how to fix it.
        cause: Option<diagnose::Cause>,
    },
}

impl NoSandbox {
    /// An unusable sandbox for `error`, with its cause named from this
    /// machine's `/proc`.
    pub fn unusable(error: impl Into<String>) -> Self {
        let program = helper::program()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .unwrap_or_else(|| PathBuf::from("/usr/local/bin/sessionpad"));
        let euid = rustix::process::geteuid().as_raw();
        Self::Unusable {
            error: error.into(),
            cause: diagnose::diagnose(Path::new("/proc"), euid, &program),
        }
    }

    /// How to fix it, possibly several lines (commands, a profile); `None` when
    /// disabled or the cause is not known.
    pub fn fix(&self) -> Option<&str> {
        match self {
            Self::Unusable {
                cause: Some(cause), ..
            } => Some(&cause.fix),
            _ => None,
        }
    }
}

impl std::fmt::Display for NoSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Disabled => write!(
                f,
                "sandbox disabled: sessions are NOT isolated from this machine"
            ),
            Self::Unusable {
                error,
                cause: Some(cause),
            } => write!(
                f,
                "the sandbox cannot be built here: {} ({error}): sessions are NOT isolated",
                cause.what
            ),
            Self::Unusable { error, cause: None } => write!(
                f,
                "the sandbox cannot be built here ({error}): sessions are NOT isolated"
            ),
        }
    }
}

/// What one sandboxed kernel is given.
#[derive(Debug, Clone, Copy)]
pub struct Jail<'a> {
    /// The program to run (the Python interpreter), by its path inside
    /// ([`python_view::PythonView::program`]).
    pub program: &'a Path,
    /// Its arguments, after its name.
    pub args: &'a [String],
    /// Its whole environment (see [`env::kernel_env`]).
    pub env: &'a [(String, String)],
    /// The session's folder, mounted read-write at `/mnt/data` (also the working
    /// directory).
    pub folder: &'a Path,
    /// The kernel's runtime folder (connection file, IPC sockets), mounted
    /// read-write at its own path.
    pub runtime_dir: &'a Path,
    /// How the Python environment is seen: its folders bound read-only at
    /// neutral paths ([`python_view::PythonView::mounts`]).
    pub python_mounts: &'a [Mount],
    /// The session's host uid (and gid) when the pool runs as root; unused
    /// otherwise.
    pub uid: u32,
    /// The size of the private `/tmp`, in bytes.
    pub tmp_bytes: u64,
    /// `RLIMIT_NPROC` set inside the sandbox (so it counts that session's
    /// processes only), where no cgroup limits processes.
    pub nproc: Option<u64>,
}

impl<'a> Jail<'a> {
    /// A jail that runs `/bin/true` (no arguments, environment or Python
    /// environment; a 1 MiB `/tmp`, 64 processes) with `folder` as `/mnt/data`
    /// and `runtime_dir`, as `uid` where the pool runs as root: what checks that
    /// the sandbox can be built here, and what its benchmark times.
    pub fn true_in(folder: &'a Path, runtime_dir: &'a Path, uid: u32) -> Self {
        Self {
            program: Path::new("/bin/true"),
            args: &[],
            env: &[],
            folder,
            runtime_dir,
            python_mounts: &[],
            uid,
            tmp_bytes: 1 << 20,
            nproc: Some(64),
        }
    }
}

/// A kernel's command and the files it must inherit: keep both until the command
/// is spawned.
pub struct SandboxCommand {
    /// The helper, to be spawned as is (its plan holds the program's arguments
    /// and environment).
    pub command: Command,
    /// The plan's file and the notifier's socket, inherited by the helper.
    pub inherited: Vec<OwnedFd>,
    /// The pool's end of the socket the sandboxed program sends its connect
    /// notifier's listener on (a network namespace of its own; `None` under
    /// `--egress`), for [`crate::pool::egress::direct::DirectWatch::start`].
    pub notify: Option<OwnedFd>,
}

impl Sandbox {
    /// Finds the helper (the sessionpad binary), lists the system folders to
    /// bind, and checks all of it works on this machine with one short sandboxed
    /// `true` (a few milliseconds). `egress` keeps the host's network.
    ///
    /// # Errors
    ///
    /// The reason kernels cannot be sandboxed.
    pub fn detect(enabled: bool, egress: bool) -> Result<Self, NoSandbox> {
        use crate::protocol::egress::Egress;
        Self::detect_with(enabled, if egress { Egress::On } else { Egress::Off })
    }

    /// As [`Sandbox::detect`], for sessions under the egress policy `egress`
    /// (only [`crate::protocol::egress::Egress::On`] keeps the host's network;
    /// the others give each session a network namespace with only `lo`).
    ///
    /// # Errors
    ///
    /// The reason kernels cannot be sandboxed.
    pub fn detect_with(
        enabled: bool,
        egress: crate::protocol::egress::Egress,
    ) -> Result<Self, NoSandbox> {
        if !enabled {
            return Err(NoSandbox::Disabled);
        }
        let helper = helper::program().ok_or_else(|| {
            NoSandbox::unusable(
                "the sandbox helper, the sessionpad binary, was not found beside this program",
            )
        })?;
        seccomp::filters().map_err(|e| NoSandbox::unusable(e.to_string()))?;
        let sandbox = Self {
            helper,
            drops_root: is_root(),
            system: Arc::new(binds::system(egress.host_network())),
            egress,
            pool_port: None,
        };
        sandbox.probe(None)?;
        Ok(sandbox)
    }

    /// Whether kernels can start in `holder`'s namespaces (a sandbox of their
    /// own inside, binding a tmpfs mounted there): runs `true` so.
    ///
    /// # Errors
    ///
    /// Why they cannot (e.g. nested user namespaces are refused).
    pub fn works_in(&self, holder: &Arc<Holder>) -> Result<(), NoSandbox> {
        self.probe(Some(holder))
    }

    /// Runs `true` in a sandbox built like a kernel's (without the Python
    /// environment), to find out whether this machine lets us build it; inside
    /// `holder`'s namespaces with its data folder a tmpfs there, if given.
    fn probe(&self, holder: Option<&Arc<Holder>>) -> Result<(), NoSandbox> {
        let unusable = |e: std::io::Error| NoSandbox::unusable(e.to_string());
        let dir = tempfile::tempdir().map_err(unusable)?;
        let folder = dir.path().join("data");
        let runtime = dir.path().join("run");
        for d in [&folder, &runtime] {
            std::fs::create_dir(d).map_err(unusable)?;
        }
        if let Some(holder) = holder {
            holder
                .mount(&folder, 1 << 20)
                .map_err(|e| NoSandbox::unusable(format!("tmpfs in a user namespace: {e}")))?;
        }
        let uid = SESSION_UID_BASE;
        if self.drops_root {
            for d in [&folder, &runtime] {
                std::os::unix::fs::chown(d, Some(uid), Some(uid)).map_err(unusable)?;
            }
        }
        let built = self
            .command(&Jail::true_in(&folder, &runtime, uid))
            .map_err(unusable)?;
        let mut cmd = built.command;
        if let Some(holder) = holder {
            holder.enter(&mut cmd);
        }
        let out = cmd
            .into_std()
            .stdin(Stdio::null())
            .output()
            .map_err(unusable);
        drop(built.inherited);
        if let Some(holder) = holder {
            holder.unmount(&folder);
        }
        let out = out?;
        if !out.status.success() {
            let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
            let msg = msg.strip_prefix("sessionpad sandbox: ").unwrap_or(&msg);
            return Err(NoSandbox::unusable(if msg.is_empty() {
                out.status.to_string()
            } else {
                msg.to_string()
            }));
        }
        Ok(())
    }

    /// Whether sandboxed kernels keep the host's network (egress `on`).
    pub fn egress(&self) -> bool {
        self.egress.host_network()
    }

    /// The egress policy of the sandboxed sessions.
    pub fn egress_policy(&self) -> &crate::protocol::egress::Egress {
        &self.egress
    }

    /// This sandbox for a pool listening on TCP `port`: its sessions' egress
    /// proxy refuses that port on this machine under every policy, so that
    /// `audit` or an allow-list naming `127.0.0.1` never reaches the pool's
    /// own API (another session's files, with `--no-auth`).
    #[must_use]
    pub fn with_pool_port(mut self, port: u16) -> Self {
        self.pool_port = Some(port);
        self
    }

    /// The pool's own port ([`Sandbox::with_pool_port`]), when set.
    pub fn pool_port(&self) -> Option<u16> {
        self.pool_port
    }

    /// Whether sessions run as their own host uids (the pool runs as root), rather
    /// than as the pool's uid in a user namespace.
    pub fn drops_root(&self) -> bool {
        self.drops_root
    }

    /// Facts of this sandbox for the pool's info, one short sentence each.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = vec![
            if self.drops_root() {
                format!(
                    "sessions run as host uids {SESSION_UID_BASE}+n, one per session, with no capabilities"
                )
            } else {
                format!(
                    "sessions run as uid {INNER_UID} in a user namespace of the pool's user, with no capabilities"
                )
            },
            format!(
                "seccomp: {} system calls denied, clone without new namespaces, sockets of \
                 unix, inet, inet6 and netlink (route) only",
                seccomp::denied_count()
            ),
            "namespaces: user (unless root), mount, pid, IPC, UTS, cgroup, network (unless egress)"
                .to_string(),
            "files: a read-only root with system folders and the Python environment, a private \
             /tmp and /dev/shm, the session's own /mnt/data"
                .to_string(),
        ];
        notes.push(self.egress.note());
        notes
    }

    /// The plan of `jail`'s sandbox (see [`plan`]).
    fn plan(&self, jail: &Jail<'_>, notify_fd: Option<i32>) -> Plan {
        let mut mounts = vec![
            Mount::Tmpfs {
                path: "/tmp".into(),
                bytes: jail.tmp_bytes,
                inodes: inodes_for(jail.tmp_bytes),
                mode: 0o1777,
            },
            Mount::Proc {
                path: "/proc".into(),
            },
            Mount::Dev {
                path: "/dev".into(),
                shm_bytes: SHM_BYTES,
                shm_inodes: inodes_for(SHM_BYTES),
            },
        ];
        mounts.extend(self.system.iter().cloned().map(|b| match b {
            Bind::ReadOnly(p) => Mount::ReadOnly {
                source: p.clone(),
                path: p,
            },
            Bind::Symlink { target, link } => Mount::Symlink { target, link },
        }));
        mounts.extend(jail.python_mounts.iter().cloned());
        mounts.push(Mount::ReadWrite {
            source: jail.folder.to_path_buf(),
            path: "/mnt/data".into(),
        });
        mounts.push(Mount::ReadWrite {
            source: jail.runtime_dir.to_path_buf(),
            path: jail.runtime_dir.to_path_buf(),
        });
        let (user, uid) = if self.drops_root {
            (User::Host { uid: jail.uid }, jail.uid)
        } else {
            (
                User::Namespace {
                    inner: INNER_UID,
                    outer_uid: rustix::process::geteuid().as_raw(),
                    outer_gid: rustix::process::getegid().as_raw(),
                },
                INNER_UID,
            )
        };
        mounts.push(Mount::File {
            path: "/etc/passwd".into(),
            contents: format!(
                "root:x:0:0:root:/root:/usr/sbin/nologin\nsession:x:{uid}:{uid}:session:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            ),
        });
        mounts.push(Mount::File {
            path: "/etc/group".into(),
            contents: format!("root:x:0:\nsession:x:{uid}:\nnogroup:x:65534:\n"),
        });
        Plan {
            user,
            egress: self.egress.host_network(),
            mounts,
            hostname: "sandbox".into(),
            workdir: "/mnt/data".into(),
            nproc: jail.nproc,
            program: jail.program.to_path_buf(),
            args: jail.args.to_vec(),
            env: jail.env.to_vec(),
            relay: self
                .egress
                .proxied()
                .then(|| jail.runtime_dir.join(crate::pool::egress::SOCKET_NAME)),
            notify_fd,
        }
    }

    /// The command that runs `jail.program` inside the sandbox (see the module
    /// doc): the helper, with the plan in a file it inherits. Its environment
    /// holds only the plan's descriptor; the program's is in the plan.
    ///
    /// # Errors
    ///
    /// The plan cannot be written to a temporary file.
    pub fn command(&self, jail: &Jail<'_>) -> std::io::Result<SandboxCommand> {
        // The connect notifier's socket, where the session has a network
        // namespace of its own (issue 29): one end for the helper, one for us.
        let (notify, notify_child) = if self.egress.host_network() {
            (None, None)
        } else {
            let (ours, theirs) = rustix::net::socketpair(
                rustix::net::AddressFamily::UNIX,
                rustix::net::SocketType::SEQPACKET,
                rustix::net::SocketFlags::CLOEXEC,
                None,
            )?;
            (Some(ours), Some(theirs))
        };
        let notify_raw = notify_child.as_ref().map(AsRawFd::as_raw_fd);
        let plan =
            serde_json::to_vec(&self.plan(jail, notify_raw)).map_err(std::io::Error::other)?;
        let mut file = tempfile::tempfile()?;
        file.write_all(&plan)?;
        file.rewind()?;
        let fd = OwnedFd::from(file);
        let raw = fd.as_raw_fd();
        let mut cmd = Command::new(&self.helper);
        cmd.arg0(helper::ARG0)
            .env_clear()
            .env(helper::PLAN_FD_VAR, raw.to_string())
            .current_dir("/");
        let keep: Vec<i32> = std::iter::once(raw).chain(notify_raw).collect();
        // SAFETY: fcntl(2) is async-signal-safe and touches only the fds we
        // own and keep open until the spawn returns.
        unsafe {
            cmd.pre_exec(move || {
                for &fd in &keep {
                    if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        Ok(SandboxCommand {
            command: cmd,
            inherited: std::iter::once(fd).chain(notify_child).collect(),
            notify,
        })
    }
}

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail and has no memory effects.
    unsafe { libc::geteuid() == 0 }
}
