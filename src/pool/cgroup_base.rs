//! Where a pool may create its cgroups: below the hierarchy's root when it runs
//! as root, and, when it runs as a user on cgroup v2, below the subtree systemd
//! delegates to that user.
//!
//! On current desktops (cgroup v2 only) `user@<uid>.service` has `Delegate=yes`:
//! its folder under `/sys/fs/cgroup` belongs to the user, who may create cgroups
//! below it, enable the controllers it was given (`memory` and `pids` always,
//! `cpu` on recent systemd) and move its own processes between them (the common
//! ancestor of source and destination is the user's). The pool's own cgroup is a
//! leaf with processes in it, where no controller may be enabled, so the pool
//! puts its cgroup beside it: directly below the highest folder of its path that
//! the user owns.
//!
//! This machine runs cgroup v1, so the v2 path is tested here on a folder tree
//! that stands in for `/sys/fs/cgroup`, not on a real delegation.

use std::path::{Path, PathBuf};

/// Where cgroup v2 is mounted.
pub const V2_MOUNT: &str = "/sys/fs/cgroup";

/// The pool's cgroup v2 path, from `/proc/self/cgroup` (`0::/user.slice/…`),
/// relative to the hierarchy's root (no leading `/`); `None` on a v1-only
/// machine.
fn own_v2_path(proc_self_cgroup: &str) -> Option<String> {
    proc_self_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| p.trim().trim_start_matches('/').to_string())
}

/// The highest folder of `own` (a path below `mount`, the cgroup v2 hierarchy)
/// that `owner` says belongs to `uid`, relative to `mount`, unless that is
/// `own` itself (a leaf with processes, where controllers cannot be enabled).
/// `owner` gives a folder's owning uid (`None` when it cannot be read).
fn delegated(
    mount: &Path,
    own: &str,
    uid: u32,
    owner: impl Fn(&Path) -> Option<u32>,
) -> Option<String> {
    let parts: Vec<&str> = own.split('/').filter(|p| !p.is_empty()).collect();
    let mut dir = PathBuf::from(mount);
    for (i, part) in parts.iter().enumerate() {
        dir.push(part);
        if owner(&dir) == Some(uid) {
            return (i + 1 < parts.len()).then(|| parts[..=i].join("/"));
        }
    }
    None
}

/// Where this pool creates its cgroup, relative to the root of the cgroup
/// hierarchy (`""` for the root itself): the root as root (and, on v1, for
/// anyone, who then fails to create it and uses rlimits), the user's delegated
/// subtree as a user on cgroup v2 (see the module doc). `None` when a user on
/// cgroup v2 has no delegated subtree.
pub fn base(v2: bool) -> Option<String> {
    let uid = rustix::process::geteuid().as_raw();
    if uid == 0 || !v2 {
        return Some(String::new());
    }
    let own = own_v2_path(&std::fs::read_to_string("/proc/self/cgroup").ok()?)?;
    delegated(Path::new(V2_MOUNT), &own, uid, |p| {
        std::fs::metadata(p)
            .ok()
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
    })
}

/// `name` placed below `base` (`base/name`, or `name` at the root).
pub fn join(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else {
        format!("{base}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_v2_line_of_proc_self_cgroup_is_the_pools_path() {
        let hybrid = "12:pids:/user.slice\n1:name=systemd:/user.slice/x.scope\n0::/user.slice/user-1000.slice/user@1000.service/app.slice/vte-1.scope\n";
        assert_eq!(
            own_v2_path(hybrid).as_deref(),
            Some("user.slice/user-1000.slice/user@1000.service/app.slice/vte-1.scope")
        );
        assert_eq!(own_v2_path("4:memory:/\n3:pids:/\n"), None);
        assert_eq!(own_v2_path("0::/\n").as_deref(), Some(""));
    }

    /// A stand-in for `/sys/fs/cgroup`: the owner of each folder.
    fn tree(owned_by_1000: &[&str]) -> impl Fn(&Path) -> Option<u32> {
        let owners: HashMap<PathBuf, u32> = owned_by_1000
            .iter()
            .map(|p| (Path::new("/cg").join(p), 1000))
            .collect();
        move |p| Some(owners.get(p).copied().unwrap_or(0))
    }

    #[test]
    fn the_pool_cgroup_goes_below_the_highest_folder_the_user_owns() {
        let own = "user.slice/user-1000.slice/user@1000.service/app.slice/vte-1.scope";
        let owner = tree(&[
            "user.slice/user-1000.slice/user@1000.service",
            "user.slice/user-1000.slice/user@1000.service/app.slice",
            "user.slice/user-1000.slice/user@1000.service/app.slice/vte-1.scope",
        ]);
        assert_eq!(
            delegated(Path::new("/cg"), own, 1000, &owner).as_deref(),
            Some("user.slice/user-1000.slice/user@1000.service")
        );
        // Someone else's delegation is not ours.
        assert_eq!(delegated(Path::new("/cg"), own, 1001, &owner), None);
    }

    #[test]
    fn no_delegation_when_only_the_pools_own_leaf_is_the_users() {
        // A session scope given to the user (logind) but nothing above it: its
        // processes forbid enabling controllers there.
        let own = "user.slice/user-1000.slice/session-3.scope";
        let owner = tree(&["user.slice/user-1000.slice/session-3.scope"]);
        assert_eq!(delegated(Path::new("/cg"), own, 1000, &owner), None);
        assert_eq!(delegated(Path::new("/cg"), "", 1000, &owner), None);
    }

    #[test]
    fn names_join_below_a_base() {
        assert_eq!(join("", "sessionpad-1-a"), "sessionpad-1-a");
        assert_eq!(join("u/s", "sessionpad-1-a"), "u/s/sessionpad-1-a");
    }
}
