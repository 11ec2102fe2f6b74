//! Sized `/mnt/data` folders for a pool that runs as root: a tmpfs mounted on the
//! host, on the session folder.

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
