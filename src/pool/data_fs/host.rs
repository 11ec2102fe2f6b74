//! Sized `/mnt/data` folders for a pool that runs as root: a tmpfs mounted on the
//! host, on the session folder.

use std::ffi::CString;
use std::path::Path;

use rustix::mount::{MountFlags, UnmountFlags};

use crate::pool::sandbox::inodes_for;

/// Mounts a tmpfs of `bytes` on `folder` (an empty folder), owned by `uid`:`uid`
/// with mode 0700, without set-uid programs or devices, holding at most
/// [`inodes_for`]`(bytes)` files.
///
/// # Errors
///
/// The OS's (`EPERM` without root).
pub fn mount(folder: &Path, bytes: u64, uid: u32) -> std::io::Result<()> {
    let inodes = inodes_for(bytes);
    let options = CString::new(format!(
        "size={bytes},nr_inodes={inodes},mode=0700,uid={uid},gid={uid}"
    ))
    .map_err(|_| std::io::Error::other("bad tmpfs options"))?;
    rustix::mount::mount(
        c"tmpfs",
        folder,
        c"tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        Some(options.as_c_str()),
    )?;
    Ok(())
}

/// Detaches whatever is mounted on `folder`, if anything (not a mount point, or
/// no such folder, is not an error), so the folder can be removed.
pub fn unmount(folder: &Path) {
    let _ = rustix::mount::unmount(folder, UnmountFlags::DETACH);
}

/// Removes `dir`, a pool's folder of session folders, with everything in it:
/// first detaches whatever is mounted on each session folder (root pools'
/// tmpfs; nothing for others).
///
/// # Errors
///
/// Those of removing the folder.
pub fn remove_pool_folder(dir: &Path) -> std::io::Result<()> {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            unmount(&e.path());
        }
    }
    std::fs::remove_dir_all(dir)
}
