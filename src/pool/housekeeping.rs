//! What a pool leaves on the machine, named so that the next pool can tell whose
//! it is: `<sessions_dir>/pool-<pid>-<tag>/` (session folders),
//! `<tmp>/sp-<pid>-<tag>/` (kernel runtime folders) and the cgroup
//! `sessionpad-<pid>-<tag>`. A pool killed before it could clean up leaves them
//! behind; [`sweep`] removes those whose pool process is gone at the next start.

use std::path::Path;

use super::cgroup::{Cgroup, Hierarchy};

/// A name unique among the pools alive on this machine: `<pid>-<8 hex>`.
pub fn pool_tag() -> String {
    let tag = uuid::Uuid::new_v4().simple().to_string();
    format!("{}-{}", std::process::id(), &tag[..8])
}

/// Whether process `pid` exists (a zombie counts).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The pool pid in a name `<prefix><pid>-<tag>`, if it is one.
fn owner(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let (pid, tag) = rest.split_once('-')?;
    (!tag.is_empty() && tag.len() <= 16).then_some(())?;
    pid.parse().ok()
}

/// Whether this process may clean up `path`: it runs as root, or `path` is its
/// user's.
fn ours(path: &Path) -> bool {
    may_clean(path, rustix::process::geteuid().as_raw())
}

/// Whether a process of effective uid `uid` may clean up `path` (see [`ours`]).
fn may_clean(path: &Path, uid: u32) -> bool {
    uid == 0
        || std::fs::symlink_metadata(path)
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == uid)
}

/// The names in `dir` of the form `<prefix><pid>-<tag>` whose pid is gone.
fn stale(dir: &Path, prefix: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| owner(n, prefix).is_some_and(|pid| !alive(pid)))
        .collect()
}

/// Removes what pools that are gone left behind: session folders under
/// `sessions_dir`, runtime folders under `runtime_parent`, and cgroups. Returns
/// how many were removed; failures are logged, never fatal.
pub fn sweep(sessions_dir: &Path, runtime_parent: &Path) -> usize {
    let mut n = 0;
    for (dir, prefix) in [(sessions_dir, "pool-"), (runtime_parent, "sp-")] {
        for name in stale(dir, prefix) {
            let path = dir.join(&name);
            if !ours(&path) {
                // Another user's pool (root's, in a shared /tmp): not ours to
                // remove, and not worth a warning at every start.
                tracing::debug!("left alone: {} (another user's)", path.display());
                continue;
            }
            // Session folders may be tmpfs mount points (root pools).
            match super::data_fs::host::remove_pool_folder(&path) {
                Ok(()) => n += 1,
                Err(e) => tracing::warn!("cannot remove {}: {e}", path.display()),
            }
        }
    }
    n + sweep_mounts() + sweep_cgroups()
}

/// Unmounts the session-folder tmpfs mounts (`…/pool-<pid>-<tag>/<32 hex>`) of
/// pools that are gone, wherever their data directory was (a killed process
/// leaves them behind, and a removed temporary folder cannot take them along).
/// Reads `/proc/self/mountinfo`.
fn sweep_mounts() -> usize {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return 0;
    };
    let mut n = 0;
    for line in info.lines() {
        let Some((fields, fs)) = line.split_once(" - ") else {
            continue;
        };
        if !fs.starts_with("tmpfs ") {
            continue;
        }
        let Some(point) = fields.split(' ').nth(4) else {
            continue;
        };
        let point = unescape_mount_path(point);
        let path = Path::new(&point);
        let (Some(leaf), Some(parent)) = (
            path.file_name().and_then(|n| n.to_str()),
            path.parent()
                .and_then(Path::file_name)
                .and_then(|n| n.to_str()),
        ) else {
            continue;
        };
        let is_session = leaf.len() == 32 && leaf.bytes().all(|b| b.is_ascii_hexdigit());
        if is_session && owner(parent, "pool-").is_some_and(|pid| !alive(pid)) {
            super::data_fs::host::unmount(path);
            n += 1;
        }
    }
    n
}

/// A mount point as `/proc/self/mountinfo` writes it, with `\ooo` octal escapes
/// (space, tab, newline, backslash) decoded.
pub(super) fn unescape_mount_path(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && let Ok(v) = u8::from_str_radix(&raw[i + 1..i + 4], 8)
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Removes the cgroups `sessionpad-<pid>-<tag>` (and their kernels' cgroups) of
/// pools that are gone, killing any process left in them.
fn sweep_cgroups() -> usize {
    let hier = Hierarchy::detect();
    // A user's pools on cgroup v2 put theirs in the user's delegated subtree.
    let base = super::cgroup_base::base(hier.is_v2()).filter(|b| !b.is_empty());
    let mut names: Vec<String> = Vec::new();
    for root in hier.roots() {
        for name in stale(&root, "sessionpad-") {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if let Some(base) = &base {
            for name in stale(&root.join(base), "sessionpad-") {
                names.push(super::cgroup_base::join(base, &name));
            }
        }
    }
    names
        .into_iter()
        .filter(|name| remove_cgroup_tree(&hier, name))
        .count()
}

/// Removes the pool cgroup `name` of `hier` (e.g. `sessionpad-<pid>-<tag>`, a
/// path relative to the hierarchy's root) and its kernels' cgroups, killing any
/// process left in them; true when it is gone. One try: a cgroup whose
/// processes are not reaped yet stays (call again).
pub(super) fn remove_cgroup_tree(hier: &Hierarchy, name: &str) -> bool {
    let pool = Cgroup::open(hier, name);
    for kernel in pool.children() {
        kernel.kill_all();
        let _ = kernel.remove();
    }
    let _ = pool.remove();
    !pool.exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_cleans_up_only_what_is_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let me = rustix::process::geteuid().as_raw();
        assert!(may_clean(dir.path(), me));
        assert!(may_clean(dir.path(), 0), "root cleans up anything");
        let other = if me == 65534 { 65533 } else { 65534 };
        assert!(!may_clean(dir.path(), other));
        assert!(!may_clean(&dir.path().join("gone"), other));
    }

    #[test]
    fn mount_paths_are_unescaped() {
        assert_eq!(unescape_mount_path("/a\\040b/c"), "/a b/c");
        assert_eq!(unescape_mount_path("/plain"), "/plain");
    }

    #[test]
    fn only_folders_of_dead_pools_are_swept() {
        let sessions = tempfile::tempdir().unwrap();
        let runtime = tempfile::tempdir().unwrap();
        let mine = format!("pool-{}", pool_tag());
        // A pid that cannot exist (above the kernel's pid_max limit of 2^22).
        let dead = "pool-4194999-deadbeef";
        let unrelated = "notes";
        for n in [mine.as_str(), dead, unrelated] {
            std::fs::create_dir_all(sessions.path().join(n).join("abc")).unwrap();
        }
        std::fs::create_dir(runtime.path().join("sp-4194999-0badf00d")).unwrap();
        let removed = sweep(sessions.path(), runtime.path());
        assert!(removed >= 2, "{removed}");
        assert!(sessions.path().join(&mine).exists());
        assert!(sessions.path().join(unrelated).exists());
        assert!(!sessions.path().join(dead).exists());
        assert!(!runtime.path().join("sp-4194999-0badf00d").exists());
    }
}
