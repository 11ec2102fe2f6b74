//! Sized `/mnt/data` folders for a pool that does not run as root.
//!
//! Only root may mount a tmpfs on the host. But any user may create a user
//! namespace with a mount namespace of its own, and mount a tmpfs there. So the
//! pool starts one **holder** process in a new user and mount namespace (its own
//! uid and gid mapped to themselves, mounts private), and mounts each session's
//! tmpfs, of the session's data size, on the session's folder *inside* that
//! namespace. Then:
//!
//! - kernels start inside it ([`Holder::enter`]: `setns` into its user and mount
//!   namespaces just before the sandbox helper runs), so the sandbox's bind of the
//!   folder binds the tmpfs. It cannot be bound from outside: the kernel refuses a
//!   bind of another mount namespace's mount;
//! - the file routes reach the same files through the holder's root (a handle on
//!   `/proc/<holder>/root` taken at its start; [`Holder::view`]), and resolve every
//!   name beneath that folder as they do for any session folder;
//! - the mounts die with the namespace: the holder is `cat` reading a pipe of the
//!   pool's, so when the pool ends (even by `SIGKILL`) the holder sees end of file
//!   and exits, and once its kernels are gone too, so are the tmpfs and their pages.
//!
//! What the tmpfs holds is memory (or swap), as on Azure, where `/mnt/data` is part
//! of the session's sandbox. Without cgroups it is not counted against the
//! session's memory limit; the pool's info says so.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};
use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};
use rustix::thread::{LinkNameSpaceType, UnshareFlags};

/// The holder process and handles on its namespaces (see the module doc).
#[derive(Debug)]
pub struct Holder {
    /// `cat`, reading a pipe of the pool's: it exits when the pool does.
    child: Child,
    /// `/proc/<holder>/ns/user`, open.
    user_ns: OwnedFd,
    /// `/proc/<holder>/ns/mnt`, open.
    mount_ns: OwnedFd,
    /// `/proc/<holder>/root`, open (`O_PATH`): the root of its mount namespace,
    /// whatever later becomes of the holder's pid.
    root: OwnedFd,
    /// The pool's uid and gid, which own the tmpfs.
    uid: u32,
    gid: u32,
    /// `true`, the program of the short-lived processes that mount and unmount.
    true_program: PathBuf,
}

fn c_path(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in a path"))
}

/// Writes `data` to the file `path` (in a child between fork and exec: no
/// allocation).
fn write_file(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    let n = rustix::io::write(&fd, data)?;
    if n == data.len() {
        Ok(())
    } else {
        Err(std::io::Error::other("short write"))
    }
}

/// Finds `name` on PATH, or in `/usr/bin` and `/bin`.
fn program(name: &str) -> std::io::Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/bin")])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, format!("`{name}` not found"))
        })
}

/// `program` with no input, output or environment, started in `/`.
fn quiet(program: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/")
        .env_clear();
    cmd
}

impl Holder {
    /// Starts the holder: `cat` in a new user namespace (the pool's uid and gid
    /// mapped to themselves, no supplementary groups) and a new mount namespace
    /// whose mounts do not propagate to or from the host's.
    ///
    /// # Errors
    ///
    /// The OS's: typically `EPERM` or `ENOSPC` where user namespaces are turned
    /// off or exhausted (`/proc/sys/user/max_user_namespaces`), `ENOENT` without
    /// `cat` or `true`.
    pub fn start() -> std::io::Result<Self> {
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        let uid_map = format!("{uid} {uid} 1\n").into_bytes();
        let gid_map = format!("{gid} {gid} 1\n").into_bytes();
        let true_program = program("true")?;
        let mut cmd = quiet(&program("cat")?);
        cmd.stdin(Stdio::piped());
        // SAFETY: the closure makes system calls only (unshare, open, write,
        // mount), on data prepared before the fork; nothing allocates or locks.
        unsafe {
            cmd.pre_exec(move || {
                rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNS)?;
                write_file(c"/proc/self/setgroups", b"deny")?;
                write_file(c"/proc/self/uid_map", &uid_map)?;
                write_file(c"/proc/self/gid_map", &gid_map)?;
                rustix::mount::mount_change(
                    c"/",
                    MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
                )?;
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        let ns = |kind: &str| {
            rustix::fs::open(
                format!("/proc/{}/ns/{kind}", child.id()),
                OFlags::RDONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(std::io::Error::from)
        };
        let root = || {
            rustix::fs::open(
                format!("/proc/{}/root", child.id()),
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(std::io::Error::from)
        };
        let opened = ns("user").and_then(|user| Ok((user, ns("mnt")?, root()?)));
        match opened {
            Ok((user_ns, mount_ns, root)) => Ok(Self {
                child,
                user_ns,
                mount_ns,
                root,
                uid,
                gid,
                true_program,
            }),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(e)
            }
        }
    }

    /// Joins the holder's user and mount namespaces (in a child between fork and
    /// exec: system calls only).
    fn join(&self) -> std::io::Result<()> {
        rustix::thread::move_into_link_name_space(
            self.user_ns.as_fd(),
            Some(LinkNameSpaceType::User),
        )?;
        rustix::thread::move_into_link_name_space(
            self.mount_ns.as_fd(),
            Some(LinkNameSpaceType::Mount),
        )?;
        Ok(())
    }

    /// Runs `op` inside the holder's namespaces, in a short-lived child process
    /// (`true`, which does nothing once `op` is done), and waits for it: about a
    /// millisecond.
    fn run_inside(
        self: &Arc<Self>,
        op: impl Fn() -> std::io::Result<()> + Send + Sync + 'static,
    ) -> std::io::Result<()> {
        let me = self.clone();
        let mut cmd = quiet(&self.true_program);
        // SAFETY: `join` and `op` make system calls only, on data prepared before
        // the fork.
        unsafe {
            cmd.pre_exec(move || {
                me.join()?;
                op()
            });
        }
        let status = cmd.status()?;
        if status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("`true` failed: {status}")))
        }
    }

    /// Mounts a tmpfs of `bytes` on `folder` (an empty folder the pool made)
    /// inside the holder's namespace, owned by the pool's uid and gid, mode 0700,
    /// without set-uid programs or devices, holding at most
    /// [`crate::pool::sandbox::inodes_for`]`(bytes)` files.
    ///
    /// # Errors
    ///
    /// The OS's; the holder is gone (`ESRCH`-like failures of `setns`).
    pub fn mount(self: &Arc<Self>, folder: &Path, bytes: u64) -> std::io::Result<()> {
        let target = c_path(folder)?;
        let options = CString::new(format!(
            "size={bytes},nr_inodes={},mode=0700,uid={},gid={}",
            crate::pool::sandbox::inodes_for(bytes),
            self.uid,
            self.gid
        ))
        .map_err(|_| std::io::Error::other("bad tmpfs options"))?;
        self.run_inside(move || {
            rustix::mount::mount(
                c"tmpfs",
                target.as_c_str(),
                c"tmpfs",
                MountFlags::NOSUID | MountFlags::NODEV,
                Some(options.as_c_str()),
            )?;
            Ok(())
        })
    }

    /// Detaches the tmpfs on `folder` inside the holder's namespace (its pages are
    /// freed once no process uses it). Not a mount point is not an error.
    pub fn unmount(self: &Arc<Self>, folder: &Path) {
        let Ok(target) = c_path(folder) else { return };
        let r = self.run_inside(move || {
            match rustix::mount::unmount(target.as_c_str(), UnmountFlags::DETACH) {
                Ok(()) | Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOENT) => Ok(()),
                Err(e) => Err(e.into()),
            }
        });
        if let Err(e) = r {
            tracing::warn!(
                "cannot unmount {} in the pool's namespace: {e}",
                folder.display()
            );
        }
    }

    /// Where this process reaches `folder` as the holder's namespace sees it (its
    /// tmpfs): `/proc/self/fd/<root>/<folder>`, through the handle of the
    /// holder's root taken at its start, so a pid reused after the holder's end
    /// never leads elsewhere. Valid in this process only.
    pub fn view(&self, folder: &Path) -> PathBuf {
        let inside = folder.strip_prefix("/").unwrap_or(folder);
        PathBuf::from(format!("/proc/self/fd/{}", self.root.as_raw_fd())).join(inside)
    }

    /// Makes `cmd` start inside the holder's namespaces (its pre-exec step, after
    /// those added before). The program runs as the pool's uid there, with no
    /// capabilities once it is executed; the sandbox helper then builds the sandbox as it
    /// would on the host, and its bind of a session folder binds its tmpfs.
    pub fn enter(self: &Arc<Self>, cmd: &mut tokio::process::Command) {
        let me = self.clone();
        // SAFETY: `join` makes system calls only.
        unsafe {
            cmd.pre_exec(move || me.join());
        }
    }

    /// The holder's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usable() -> Option<Arc<Holder>> {
        match Holder::start() {
            Ok(h) => Some(Arc::new(h)),
            Err(e) => {
                eprintln!("skipped: no user namespaces here ({e})");
                None
            }
        }
    }

    #[test]
    fn a_folder_mounted_inside_has_its_size_and_the_host_sees_none_of_it() {
        let Some(holder) = usable() else { return };
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("s");
        std::fs::create_dir(&folder).unwrap();
        holder.mount(&folder, 1 << 20).unwrap();
        let view = holder.view(&folder);
        std::fs::write(view.join("a"), vec![7u8; 512 * 1024]).unwrap();
        // The host's folder stays empty: the file is on the tmpfs inside.
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
        assert_eq!(std::fs::read(view.join("a")).unwrap().len(), 512 * 1024);
        // The tmpfs is full at its size.
        let err = std::fs::write(view.join("b"), vec![7u8; 1 << 20]).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC), "{err}");
        holder.unmount(&folder);
        assert!(!view.join("a").exists());
        // Unmounting what is not mounted is fine.
        holder.unmount(&folder);
    }

    #[test]
    fn the_holder_ends_when_the_pools_end_of_its_pipe_closes() {
        // What happens when the pool is killed: the kernel closes its end.
        let Some(holder) = usable() else { return };
        let mut holder = Arc::into_inner(holder).unwrap();
        drop(holder.child.stdin.take());
        let mut status = None;
        for _ in 0..1000 {
            status = holder.child.try_wait().unwrap();
            if status.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(status.is_some_and(|s| s.success()), "{status:?}");
    }

    #[test]
    fn the_mounts_go_with_the_holder() {
        let Some(holder) = usable() else { return };
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("s");
        std::fs::create_dir(&folder).unwrap();
        holder.mount(&folder, 1 << 20).unwrap();
        let pid = holder.pid();
        assert!(holder.view(&folder).read_dir().is_ok());
        drop(holder);
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
    }
}
