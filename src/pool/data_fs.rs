//! A session folder of its own size: when the pool runs as root with a sandbox,
//! each session's `/mnt/data` is a tmpfs mounted on its folder, limited to
//! [`super::limits::Limits::data_bytes`], owned by the session's uid. Its pages
//! live in memory, and what the session itself writes counts against its memory
//! limit too. Without root a pool cannot mount, and the folder is an ordinary
//! one (each file limited by `RLIMIT_FSIZE`; the total is not limited: the pool's
//! info says so).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn c_path(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in a path"))
}

/// Mounts a tmpfs of `bytes` on `folder` (an empty folder), owned by `uid`:`uid`
/// with mode 0700, without set-uid programs or devices.
///
/// # Errors
///
/// The OS's (`EPERM` without root).
pub fn mount(folder: &Path, bytes: u64, uid: u32) -> std::io::Result<()> {
    let target = c_path(folder)?;
    let options = CString::new(format!("size={bytes},mode=0700,uid={uid},gid={uid}"))
        .map_err(|_| std::io::Error::other("bad tmpfs options"))?;
    // SAFETY: every pointer is a valid NUL-terminated string that outlives the call.
    let r = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Detaches whatever is mounted on `folder`, if anything (`EINVAL`, not a mount
/// point, and `ENOENT` are not errors), so the folder can be removed.
pub fn unmount(folder: &Path) {
    let Ok(target) = c_path(folder) else { return };
    // SAFETY: `target` is a valid NUL-terminated string.
    unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
}

/// Removes a session folder: unmounts its tmpfs first, if it has one.
pub fn remove(folder: &Path) {
    unmount(folder);
    let _ = std::fs::remove_dir_all(folder);
}
