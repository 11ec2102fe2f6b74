//! Where a NodeLTS session finds Node.js. Sessions search
//! `/usr/local/bin:/usr/bin:/bin` ([`super::sandbox::env::kernel_env`]), which a
//! sandboxed session sees read-only; a Node.js installed elsewhere (nvm's
//! `~/.nvm/versions/node/vX/bin`, a tarball unpacked in `/opt` or a home
//! folder) is found on the pool's own `PATH` instead, as a shell would, and
//! given to the session: its `node` executable alone is bound read-only at
//! [`NODE_BIN`]`/node` in a sandboxed session (never its host path, which
//! names the user's home, nor the folder around it), and its folder is put
//! first on an unsandboxed session's `PATH`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::sandbox::plan::Mount;

/// The folder a sandboxed session finds a non-system `node` in.
pub const NODE_BIN: &str = "/opt/node/bin";

/// A `node` executable found outside the system folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInstall {
    /// Its real path on the host (links resolved).
    pub program: PathBuf,
}

impl NodeInstall {
    /// The `node` found first on `path` (a `PATH` value), when its real path
    /// lies outside the system folders a session sees anyway; `None` when
    /// there is none or it is a system one.
    pub fn find_in(path: &std::ffi::OsStr) -> Option<Self> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let found = which::which_in("node", Some(path), cwd).ok()?;
        let program = std::fs::canonicalize(found).ok()?;
        if super::sandbox::binds::in_system_dirs(&program) {
            return None;
        }
        Some(Self { program })
    }

    /// The `node` on this process' `PATH` ([`NodeInstall::find_in`]), looked
    /// up once per process (the pool's `PATH` does not change).
    pub fn of_this_process() -> Option<&'static Self> {
        static FOUND: OnceLock<Option<NodeInstall>> = OnceLock::new();
        FOUND
            .get_or_init(|| {
                let found = std::env::var_os("PATH").and_then(|p| Self::find_in(&p));
                if let Some(n) = &found {
                    tracing::info!(node = %n.program.display(), "NodeLTS sessions run the node found on the pool's PATH");
                }
                found
            })
            .as_ref()
    }

    /// The folder to put first on a session's `PATH`: [`NODE_BIN`] in a
    /// sandbox, the executable's own folder on the host without one.
    pub fn bin(&self, sandboxed: bool) -> PathBuf {
        if sandboxed {
            PathBuf::from(NODE_BIN)
        } else {
            self.program
                .parent()
                .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
        }
    }

    /// The read-only bind of the executable at [`NODE_BIN`]`/node`.
    pub fn mount(&self) -> Mount {
        Mount::ReadOnly {
            source: self.program.clone(),
            path: Path::new(NODE_BIN).join("node"),
        }
    }
}

/// `env`'s `PATH` with `dir` put first (added when there is none).
pub fn put_first_on_path(env: &mut Vec<(String, String)>, dir: &Path) {
    let dir = dir.to_string_lossy();
    match env.iter_mut().find(|(k, _)| k == "PATH") {
        Some((_, v)) => *v = format!("{dir}:{v}"),
        None => env.push(("PATH".into(), dir.into_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_in_a_system_folder_needs_nothing_and_one_elsewhere_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("v0/bin");
        std::fs::create_dir_all(&bin).unwrap();
        assert_eq!(NodeInstall::find_in(bin.as_os_str()), None, "no node there");
        let node = bin.join("node");
        std::fs::write(&node, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&node, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let path = format!("{}:/usr/bin:/bin", bin.display());
        let found = NodeInstall::find_in(path.as_ref()).expect("found");
        assert_eq!(found.program, std::fs::canonicalize(&node).unwrap());
        assert_eq!(found.bin(true), PathBuf::from("/opt/node/bin"));
        assert_eq!(found.bin(false), std::fs::canonicalize(&bin).unwrap());
        // Only the executable is bound, never the folders around it.
        assert_eq!(
            found.mount(),
            Mount::ReadOnly {
                source: found.program.clone(),
                path: PathBuf::from("/opt/node/bin/node")
            }
        );
        // A system node (here, a link to one) is left as it is.
        let link = dir.path().join("link");
        std::fs::create_dir_all(&link).unwrap();
        std::os::unix::fs::symlink("/bin/sh", link.join("node")).unwrap();
        assert_eq!(NodeInstall::find_in(link.as_os_str()), None);
    }

    #[test]
    fn the_nodes_folder_goes_first_on_path() {
        let mut env = vec![(
            "PATH".to_string(),
            "/opt/python/env/bin:/usr/bin".to_string(),
        )];
        put_first_on_path(&mut env, Path::new("/opt/node/bin"));
        assert_eq!(env[0].1, "/opt/node/bin:/opt/python/env/bin:/usr/bin");
    }
}
