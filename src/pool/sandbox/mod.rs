//! Isolation of local-pool kernels with bubblewrap (`bwrap`), so that a session
//! sees a small Linux system and nothing else of the host, as Azure's sandboxes
//! promise (`design.md`, the local pool):
//!
//! - **Files:** an empty root on which only an allow-list is bound read-only: the
//!   system folders (`/usr` and its merged-`/usr` links, a few files of `/etc`; see
//!   [`binds`]), the Python environment's own folders (nothing else of the cache,
//!   home or data folders), a private `/tmp` of limited size, the session's folder at
//!   `/mnt/data`, the kernel's runtime folder (its IPC sockets), and `/etc/passwd`
//!   and `/etc/group` naming the session user.
//! - **Privileges:** no capabilities in the host's user namespace, `no_new_privs`
//!   (bubblewrap sets it), and the seccomp filter of [`seccomp`]. When the pool runs
//!   as root, bubblewrap builds the sandbox as root (so it can bind the Python
//!   environment from below `/root`) without a user namespace, and `setpriv`
//!   (util-linux) drops to the session's own unprivileged uid, with every
//!   capability and the bounding set cleared, before the kernel starts. Otherwise
//!   bubblewrap runs as the user in a new user namespace, as uid 1000 inside.
//! - **Namespaces:** pid, IPC, UTS, cgroup, mount, and network unless egress is
//!   allowed (Azure's default is egress disabled).
//!
//! Without a usable bubblewrap kernels run unisolated ([`NoSandbox`]), and
//! `/mnt/data/...` paths are mapped to the session folder by the kernel start-up
//! script.

pub mod binds;
pub mod env;
pub mod seccomp;

use std::io::{Seek, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use tokio::process::Command;

use self::binds::Bind;
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

/// A usable bubblewrap and everything a sandboxed kernel's command needs.
#[derive(Debug, Clone)]
pub struct Sandbox {
    bwrap: PathBuf,
    egress: bool,
    /// `setpriv`, when the pool runs as root (see the module doc).
    setpriv: Option<PathBuf>,
    /// The two seccomp programs ([`seccomp::programs`]).
    seccomp: Arc<[Vec<u8>; 2]>,
    /// The system part of the allow-list, as found on this machine.
    system: Arc<Vec<Bind>>,
}

/// Why kernels are not sandboxed, for the pool's warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoSandbox {
    /// Turned off by the user.
    Disabled,
    /// `bwrap` is not on PATH.
    NotInstalled,
    /// `bwrap` is there but cannot create the sandbox here; the text says why.
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

/// What one sandboxed kernel is given.
#[derive(Debug, Clone, Copy)]
pub struct Jail<'a> {
    /// The program to run (the Python interpreter), by its path on the host.
    pub program: &'a Path,
    /// The session's folder, mounted read-write at `/mnt/data` (also the working
    /// directory).
    pub folder: &'a Path,
    /// The kernel's runtime folder (connection file, IPC sockets), mounted
    /// read-write at its own path.
    pub runtime_dir: &'a Path,
    /// Folders of the Python environment, bound read-only at their own paths.
    pub python_dirs: &'a [PathBuf],
    /// The session's host uid (and gid) when the pool runs as root; unused
    /// otherwise.
    pub uid: u32,
    /// The size of the private `/tmp`, in bytes.
    pub tmp_bytes: u64,
    /// Arguments of `prlimit` (util-linux) run inside the sandbox just before the
    /// program, e.g. `["--nproc=512"]` (limits that must count inside the
    /// sandbox's user namespace); none runs it when empty.
    pub prlimit: &'a [String],
}

/// A kernel's command and the files it must inherit: keep both until the command
/// is spawned.
pub struct SandboxCommand {
    /// `bwrap … -- [setpriv …] program`; the caller adds the program's arguments.
    pub command: Command,
    /// The seccomp programs, inherited by bubblewrap as file descriptors.
    pub inherited: Vec<OwnedFd>,
}

impl Sandbox {
    /// Finds bubblewrap (and `setpriv` when running as root), compiles the seccomp
    /// filter, lists the system folders to bind, and checks all of it works on
    /// this machine with one short sandboxed `true` (a few milliseconds). `egress`
    /// keeps the network namespace shared.
    ///
    /// # Errors
    ///
    /// The reason kernels will run unsandboxed.
    pub fn detect(enabled: bool, egress: bool) -> Result<Self, NoSandbox> {
        if !enabled {
            return Err(NoSandbox::Disabled);
        }
        let bwrap = find_on_path("bwrap").ok_or(NoSandbox::NotInstalled)?;
        let setpriv = if is_root() {
            Some(find_on_path("setpriv").ok_or_else(|| {
                NoSandbox::Unusable(
                    "the pool runs as root and `setpriv` (util-linux) is not installed to \
                     drop sessions to an unprivileged user"
                        .into(),
                )
            })?)
        } else {
            None
        };
        let seccomp = seccomp::programs().map_err(|e| NoSandbox::Unusable(e.to_string()))?;
        let sandbox = Self {
            bwrap,
            egress,
            setpriv,
            seccomp: Arc::new(seccomp),
            system: Arc::new(binds::system(egress)),
        };
        sandbox.probe(None)?;
        Ok(sandbox)
    }

    /// Whether kernels can start in `holder`'s namespaces (a bubblewrap of
    /// their own inside, binding a tmpfs mounted there): runs `true` so.
    ///
    /// # Errors
    ///
    /// Why they cannot (e.g. nested user namespaces are refused).
    pub fn works_in(&self, holder: &Arc<Holder>) -> Result<(), NoSandbox> {
        self.probe(Some(holder))
    }

    /// Runs `true` in a sandbox built like a kernel's (without the Python
    /// environment), to find out whether this machine lets bubblewrap do it;
    /// inside `holder`'s namespaces with its data folder a tmpfs there, if given.
    fn probe(&self, holder: Option<&Arc<Holder>>) -> Result<(), NoSandbox> {
        let dir = tempfile::tempdir().map_err(|e| NoSandbox::Unusable(e.to_string()))?;
        let folder = dir.path().join("data");
        let runtime = dir.path().join("run");
        for d in [&folder, &runtime] {
            std::fs::create_dir(d).map_err(|e| NoSandbox::Unusable(e.to_string()))?;
        }
        if let Some(holder) = holder {
            holder
                .mount(&folder, 1 << 20)
                .map_err(|e| NoSandbox::Unusable(format!("tmpfs in a user namespace: {e}")))?;
        }
        let uid = SESSION_UID_BASE;
        if self.setpriv.is_some() {
            for d in [&folder, &runtime] {
                std::os::unix::fs::chown(d, Some(uid), Some(uid))
                    .map_err(|e| NoSandbox::Unusable(e.to_string()))?;
            }
        }
        let jail = Jail {
            program: Path::new("/bin/true"),
            folder: &folder,
            runtime_dir: &runtime,
            python_dirs: &[],
            uid,
            tmp_bytes: 1 << 20,
            prlimit: &["--nproc=64".to_string()],
        };
        let built = self
            .command(&jail)
            .map_err(|e| NoSandbox::Unusable(e.to_string()))?;
        let mut cmd = built.command;
        if let Some(holder) = holder {
            holder.enter(&mut cmd);
        }
        let out = cmd
            .into_std()
            .stdin(Stdio::null())
            .output()
            .map_err(|e| NoSandbox::Unusable(e.to_string()));
        drop(built.inherited);
        if let Some(holder) = holder {
            holder.unmount(&folder);
        }
        let out = out?;
        if !out.status.success() {
            let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(NoSandbox::Unusable(if msg.is_empty() {
                out.status.to_string()
            } else {
                msg
            }));
        }
        Ok(())
    }

    /// Whether sandboxed kernels may reach the network.
    pub fn egress(&self) -> bool {
        self.egress
    }

    /// Whether sessions run as their own host uids (the pool runs as root), rather
    /// than as the pool's uid in a user namespace.
    pub fn drops_root(&self) -> bool {
        self.setpriv.is_some()
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
                "seccomp: {} system calls denied, clone without new namespaces",
                seccomp::denied_count()
            ),
            "files: system folders and the Python environment read-only, a private /tmp, \
             the session's own /mnt/data"
                .to_string(),
        ];
        notes.push(if self.egress {
            "network: allowed (--egress)".to_string()
        } else {
            "network: none".to_string()
        });
        notes
    }

    /// The command that runs `jail.program` inside the sandbox (see the module doc).
    /// Its environment is left to the caller, who should clear it and set the
    /// allow-list of [`env::kernel_env`]; bubblewrap passes it on.
    ///
    /// # Errors
    ///
    /// The seccomp programs cannot be written to a temporary file.
    pub fn command(&self, jail: &Jail<'_>) -> std::io::Result<SandboxCommand> {
        let mut cmd = Command::new(&self.bwrap);
        let mut inherited = Vec::new();
        if self.drops_root() {
            // Root builds the sandbox without a user namespace; setpriv drops to
            // the session's uid below.
            cmd.args(["--unshare-ipc", "--unshare-pid", "--unshare-uts"])
                .arg("--unshare-cgroup-try");
            if !self.egress {
                cmd.arg("--unshare-net");
            }
        } else {
            cmd.args(["--unshare-all", "--unshare-user", "--disable-userns"])
                .args(["--uid", &INNER_UID.to_string()])
                .args(["--gid", &INNER_UID.to_string()])
                .args(["--cap-drop", "ALL"]);
            if self.egress {
                cmd.arg("--share-net");
            }
        }
        // --die-with-parent covers the sandbox's init only once its setup is
        // done; `process.rs` kills the whole tree for the moments before.
        cmd.args(["--die-with-parent", "--new-session"]);
        // The private /tmp first: binds below it (a Python environment or the
        // runtime folder under the host's /tmp) must go on top of it, not under.
        let mut made = std::collections::HashSet::new();
        for mounted in ["/proc", "/dev", "/tmp"] {
            made.insert(PathBuf::from(mounted));
        }
        cmd.args(["--proc", "/proc", "--dev", "/dev"])
            .args(["--perms", "1777", "--size"])
            .arg(jail.tmp_bytes.to_string())
            .args(["--tmpfs", "/tmp"]);
        for bind in self.system.iter() {
            bind.add_to(&mut cmd, &mut made);
        }
        for dir in jail.python_dirs {
            Bind::ReadOnly(dir.clone()).add_to(&mut cmd, &mut made);
        }
        binds::parents(&mut cmd, Path::new("/mnt/data"), &mut made);
        cmd.arg("--bind").arg(jail.folder).arg("/mnt/data");
        binds::parents(&mut cmd, jail.runtime_dir, &mut made);
        cmd.arg("--bind")
            .arg(jail.runtime_dir)
            .arg(jail.runtime_dir);
        let (uid, name) = if self.drops_root() {
            (jail.uid, "session")
        } else {
            (INNER_UID, "session")
        };
        let etc = jail.runtime_dir.join("etc");
        std::fs::create_dir_all(&etc)?;
        std::fs::write(
            etc.join("passwd"),
            format!(
                "root:x:0:0:root:/root:/usr/sbin/nologin\n{name}:x:{uid}:{uid}:session:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            ),
        )?;
        std::fs::write(
            etc.join("group"),
            format!("root:x:0:\n{name}:x:{uid}:\nnogroup:x:65534:\n"),
        )?;
        cmd.arg("--ro-bind")
            .arg(etc.join("passwd"))
            .arg("/etc/passwd");
        cmd.arg("--ro-bind")
            .arg(etc.join("group"))
            .arg("/etc/group");
        cmd.args(["--chdir", "/mnt/data"]);
        for program in self.seccomp.iter() {
            let mut file = tempfile::tempfile()?;
            file.write_all(program)?;
            file.rewind()?;
            let fd = OwnedFd::from(file);
            cmd.arg("--add-seccomp-fd").arg(fd.as_raw_fd().to_string());
            inherited.push(fd);
        }
        let raw: Vec<i32> = inherited.iter().map(AsRawFd::as_raw_fd).collect();
        // SAFETY: fcntl(2) is async-signal-safe and touches only the fds we own
        // and keep open until the spawn returns.
        unsafe {
            cmd.pre_exec(move || {
                for &fd in &raw {
                    if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        cmd.arg("--");
        if let Some(setpriv) = &self.setpriv {
            let id = jail.uid.to_string();
            cmd.arg(setpriv)
                .arg(format!("--reuid={id}"))
                .arg(format!("--regid={id}"))
                .args(["--clear-groups", "--inh-caps=-all", "--bounding-set=-all"])
                .args(["--no-new-privs", "--"]);
        }
        if !jail.prlimit.is_empty() {
            cmd.arg("/usr/bin/prlimit").args(jail.prlimit).arg("--");
        }
        cmd.arg(jail.program);
        Ok(SandboxCommand {
            command: cmd,
            inherited,
        })
    }
}

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail and has no memory effects.
    unsafe { libc::geteuid() == 0 }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}
