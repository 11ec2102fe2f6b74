//! The sandbox's file view, built by its init (see [`super::helper`]) in a new
//! mount namespace, the way bubblewrap builds one:
//!
//! 1. mounts stop propagating (`/` private, recursively), so nothing done here
//!    reaches the host (or the holder's namespace of sized folders);
//! 2. a small tmpfs on `/tmp` becomes the root with `pivot_root`; the host's root
//!    is then at `/oldroot`, the view being built at `/newroot`;
//! 3. each [`Mount`] of the plan, in order, below `/newroot`: binds from
//!    `/oldroot`, read-only ones remounted read-only (with every mount below
//!    them), all without set-uid programs or device files;
//! 4. the host's root is detached, `/newroot` becomes `/` and is made read-only.
//!
//! Only what the plan lists is there.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::StatVfsMountFlags;
use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};

use super::helper::{Step, StepError};
use super::plan::{Mount, Plan};

const NEW: &str = "/newroot";
const OLD: &str = "/oldroot";

/// The device files bound from the host into `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// Builds the view of `plan` and enters it (see the module doc).
///
/// # Errors
///
/// The first step that failed, with the OS's error.
pub fn build(plan: &Plan) -> Result<(), StepError> {
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .step(|| "make / private".into())?;
    let base = "/tmp";
    tmpfs(Path::new(base), 4 << 20, 4096, 0o755).step(|| "tmpfs for the new root".into())?;
    rustix::process::chdir(base).step(|| "enter the new root".into())?;
    mkdir("newroot").step(|| "newroot".into())?;
    rustix::mount::mount_bind_recursive("newroot", "newroot").step(|| "bind newroot".into())?;
    mkdir("oldroot").step(|| "oldroot".into())?;
    rustix::process::pivot_root(".", "oldroot").step(|| "pivot_root".into())?;
    rustix::process::chdir("/").step(|| "chdir /".into())?;
    for mount in &plan.mounts {
        apply(mount)?;
    }
    rustix::mount::unmount(OLD, UnmountFlags::DETACH).step(|| "detach the host's root".into())?;
    rustix::process::chdir(NEW).step(|| "chdir /newroot".into())?;
    rustix::process::pivot_root(".", ".").step(|| "pivot_root to the view".into())?;
    rustix::mount::unmount(".", UnmountFlags::DETACH).step(|| "detach the base".into())?;
    rustix::process::chdir("/").step(|| "chdir /".into())?;
    remount(Path::new("/"), true).step(|| "make / read-only".into())?;
    Ok(())
}

/// `path` inside the sandbox as seen from the base root (`/newroot/...`).
fn new(path: &Path) -> PathBuf {
    Path::new(NEW).join(path.strip_prefix("/").unwrap_or(path))
}

/// `path` of the host as seen from the base root (`/oldroot/...`).
fn old(path: &Path) -> PathBuf {
    Path::new(OLD).join(path.strip_prefix("/").unwrap_or(path))
}

fn mkdir(path: impl AsRef<Path>) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(path)
}

/// Makes an empty file or folder at `at` to mount a host's `source` on.
fn mount_point(source: &Path, at: &Path) -> std::io::Result<()> {
    if std::fs::metadata(source)?.is_dir() {
        mkdir(at)
    } else {
        if let Some(parent) = at.parent() {
            mkdir(parent)?;
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(at)
            .map(drop)
    }
}

fn tmpfs(at: &Path, bytes: u64, inodes: u64, mode: u32) -> std::io::Result<()> {
    mkdir(at)?;
    let options = CString::new(format!("size={bytes},nr_inodes={inodes},mode={mode:o}"))
        .map_err(std::io::Error::other)?;
    rustix::mount::mount(
        c"tmpfs",
        at,
        c"tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        Some(options.as_c_str()),
    )?;
    Ok(())
}

/// Remounts the mount at `at` (a bind or a tmpfs) without set-uid programs and
/// device files, read-only if asked, keeping the flags it has that may not be
/// cleared (in a user namespace, those the host set are locked).
fn remount(at: &Path, read_only: bool) -> std::io::Result<()> {
    let have = rustix::fs::statvfs(at)?.f_flag;
    let mut flags = MountFlags::BIND | MountFlags::NOSUID | MountFlags::NODEV;
    for (st, ms) in [
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
        (StatVfsMountFlags::RDONLY, MountFlags::RDONLY),
    ] {
        if have.contains(st) {
            flags |= ms;
        }
    }
    if read_only {
        flags |= MountFlags::RDONLY;
    }
    rustix::mount::mount_remount(at, flags, c"")?;
    Ok(())
}

/// The mount points strictly below `at`, as `/proc/self/mountinfo` of the
/// host's proc lists them (relative to the current root), outermost first.
fn mounts_below(at: &Path) -> std::io::Result<Vec<PathBuf>> {
    let info = std::fs::read(old(Path::new("/proc/self/mountinfo")))?;
    let mut out: Vec<PathBuf> = info
        .split(|&b| b == b'\n')
        .filter_map(|line| line.split(|&b| b == b' ').nth(4))
        .map(|field| PathBuf::from(std::ffi::OsStr::from_bytes(&unescape(field))))
        .filter(|p| p != at && p.starts_with(at))
        .collect();
    out.sort_by_key(|p| p.components().count());
    Ok(out)
}

/// Undoes mountinfo's octal escapes (`\040` for a space, and so on).
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] == b'\\'
            && i + 3 < field.len()
            && field[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = field[i + 1..i + 4]
                .iter()
                .fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
            out.push(u8::try_from(v).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(field[i]);
            i += 1;
        }
    }
    out
}

/// Binds the host's `source` at `path` inside, with every mount below it,
/// read-only if asked.
fn bind(source: &Path, path: &Path, read_only: bool) -> Result<(), StepError> {
    let from = old(source);
    let at = new(path);
    mount_point(&from, &at).step(|| format!("make {}", path.display()))?;
    rustix::mount::mount_bind_recursive(&from, &at)
        .step(|| format!("bind {} at {}", source.display(), path.display()))?;
    remount(&at, read_only).step(|| format!("remount {}", path.display()))?;
    for below in mounts_below(&at).step(|| "read mountinfo".into())? {
        remount(&below, read_only).step(|| format!("remount {}", below.display()))?;
    }
    Ok(())
}

fn apply(mount: &Mount) -> Result<(), StepError> {
    match mount {
        Mount::ReadOnly { source, path } => bind(source, path, true),
        Mount::ReadWrite { source, path } => bind(source, path, false),
        Mount::Symlink { target, link } => {
            let at = new(link);
            if let Some(parent) = at.parent() {
                mkdir(parent).step(|| format!("make {}", parent.display()))?;
            }
            std::os::unix::fs::symlink(target, &at).step(|| format!("link {}", link.display()))
        }
        Mount::Tmpfs {
            path,
            bytes,
            inodes,
            mode,
        } => tmpfs(&new(path), *bytes, *inodes, *mode)
            .step(|| format!("tmpfs on {}", path.display())),
        Mount::Proc { path } => proc(path),
        Mount::Dev {
            path,
            shm_bytes,
            shm_inodes,
        } => dev(path, *shm_bytes, *shm_inodes),
        Mount::File { path, contents } => {
            let at = new(path);
            if let Some(parent) = at.parent() {
                mkdir(parent).step(|| format!("make {}", parent.display()))?;
            }
            std::fs::write(&at, contents).step(|| format!("write {}", path.display()))
        }
    }
}

fn proc(path: &Path) -> Result<(), StepError> {
    let at = new(path);
    mkdir(&at).step(|| format!("make {}", path.display()))?;
    rustix::mount::mount(
        c"proc",
        &at,
        c"proc",
        MountFlags::NOSUID | MountFlags::NOEXEC | MountFlags::NODEV,
        None,
    )
    .step(|| format!("proc on {}", path.display()))?;
    for sub in ["sys", "sysrq-trigger", "irq", "bus"] {
        let p = at.join(sub);
        if p.exists() {
            rustix::mount::mount_bind_recursive(&p, &p).step(|| format!("bind /proc/{sub}"))?;
            remount(&p, true).step(|| format!("remount /proc/{sub}"))?;
        }
    }
    Ok(())
}

fn dev(path: &Path, shm_bytes: u64, shm_inodes: u64) -> Result<(), StepError> {
    let at = new(path);
    tmpfs(&at, 64 << 10, 64, 0o755).step(|| format!("tmpfs on {}", path.display()))?;
    for name in DEVICES {
        let host = Path::new("/dev").join(name);
        let from = old(&host);
        if !from.exists() {
            continue;
        }
        let to = at.join(name);
        mount_point(&from, &to).step(|| format!("make /dev/{name}"))?;
        rustix::mount::mount_bind(&from, &to).step(|| format!("bind /dev/{name}"))?;
    }
    for (link, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
        ("ptmx", "pts/ptmx"),
    ] {
        std::os::unix::fs::symlink(target, at.join(link)).step(|| format!("link /dev/{link}"))?;
    }
    let pts = at.join("pts");
    mkdir(&pts).step(|| "make /dev/pts".into())?;
    // A terminal of its own is a nicety: a machine that refuses a private devpts
    // (some user namespaces) still gets a sandbox, without one.
    let _ = rustix::mount::mount(
        c"devpts",
        &pts,
        c"devpts",
        MountFlags::NOSUID | MountFlags::NOEXEC,
        Some(c"newinstance,ptmxmode=0666,mode=620"),
    );
    tmpfs(&at.join("shm"), shm_bytes, shm_inodes, 0o1777).step(|| "tmpfs on /dev/shm".into())?;
    remount(&at, true).step(|| "make /dev read-only".into())?;
    Ok(())
}

/// Brings up the loopback interface of the sandbox's own network namespace
/// (`SIOCSIFFLAGS` with `IFF_UP`), as bubblewrap does.
///
/// # Errors
///
/// The OS's.
pub fn loopback_up() -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let sock = rustix::net::socket(
        rustix::net::AddressFamily::INET,
        rustix::net::SocketType::DGRAM,
        None,
    )?;
    // SAFETY: ifreq is plain data; zeroed is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo") {
        *dst = libc::c_char::from_ne_bytes([*src]);
    }
    // SAFETY: `req` is a valid ifreq for these two requests.
    unsafe {
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &raw mut req) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let up = libc::c_short::try_from(libc::IFF_UP | libc::IFF_RUNNING).unwrap_or(1);
        req.ifr_ifru.ifru_flags |= up;
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &raw mut req) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape(br"/a\040b\134c"), b"/a b\\c");
        assert_eq!(unescape(br"/plain"), b"/plain");
        assert_eq!(unescape(br"/short\04"), br"/short\04");
    }
}
