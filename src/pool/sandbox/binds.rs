//! The allow-list of what a sandboxed kernel sees of the host: the system
//! folders (read-only binds, or the symbolic links a merged-`/usr` system has at
//! the root) and a few files of `/etc` that programs need (the dynamic loader's
//! cache, certificates, time zone, fonts, name service and MIME tables). The
//! folders on the way to a bind are made mode 0755 by the sandbox's init, so an
//! unprivileged session can pass through, e.g., a bound `/root/…`. Nothing is
//! chosen by leaving it out: what is not listed is not there.

use std::path::{Path, PathBuf};

/// Top-level system folders bound read-only (or linked, where they are links).
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// Files and folders of `/etc` bound read-only where they exist. `/etc/passwd`
/// and `/etc/group` are not among them: the sandbox gets its own.
const ETC: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/pki",
    "/etc/crypto-policies",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/fonts",
    "/etc/mime.types",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/gai.conf",
    "/etc/protocols",
    "/etc/services",
    "/etc/os-release",
    "/etc/debian_version",
    "/etc/lsb-release",
    "/etc/matplotlibrc",
];

/// One entry of the allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bind {
    /// A host folder or file bound read-only at the same path.
    ReadOnly(PathBuf),
    /// A symbolic link made inside the sandbox (as on the host).
    Symlink {
        /// What the link points to, as on the host (e.g. `usr/bin`).
        target: PathBuf,
        /// Where the link is (e.g. `/bin`).
        link: PathBuf,
    },
}

impl Bind {
    /// The path inside the sandbox.
    pub fn path(&self) -> &Path {
        match self {
            Bind::ReadOnly(p) => p,
            Bind::Symlink { link, .. } => link,
        }
    }
}

/// What to bind for `path` as it is on this machine: a link for a symbolic link,
/// a read-only bind for a file or folder, nothing when it does not exist.
fn entry(path: &str) -> Option<Bind> {
    let path = PathBuf::from(path);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&path).ok()?;
        Some(Bind::Symlink { target, link: path })
    } else {
        Some(Bind::ReadOnly(path))
    }
}

/// The system part of the allow-list on this machine; `/etc/resolv.conf` only
/// when sessions may reach the network.
pub fn system(egress: bool) -> Vec<Bind> {
    let mut out: Vec<Bind> = SYSTEM_DIRS
        .iter()
        .chain(ETC)
        .filter_map(|p| entry(p))
        .collect();
    if egress && let Some(b) = entry("/etc/resolv.conf") {
        out.push(b);
    }
    out
}

/// Whether `path` (a real path) lies in a system folder every sandboxed
/// session sees read-only.
pub fn in_system_dirs(path: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|s| path.starts_with(s))
}

/// The folders of a Python environment to bind, given the interpreter's own
/// answer (its `sys.prefix`, `sys.base_prefix`, `sys.exec_prefix`,
/// `sys.base_exec_prefix`): their real paths, without those inside a system
/// folder already bound or inside another of them.
pub fn python_dirs(prefixes: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = prefixes
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| !in_system_dirs(p))
        .collect();
    dirs.sort();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|o| o != d && d.starts_with(o)));
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_home_or_secret_folder_is_on_the_system_list() {
        for b in system(true) {
            let p = b.path().to_string_lossy().into_owned();
            for bad in [
                "/home",
                "/root",
                "/etc/shadow",
                "/etc/passwd",
                "/var",
                "/run",
                "/tmp",
            ] {
                assert!(!p.starts_with(bad), "{p} is bound");
            }
        }
    }

    #[test]
    fn python_dirs_drop_system_and_nested_folders() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        let inner = venv.join("lib");
        std::fs::create_dir_all(&inner).unwrap();
        let got = python_dirs(&[venv.clone(), inner, PathBuf::from("/usr")]);
        assert_eq!(got, vec![std::fs::canonicalize(&venv).unwrap()]);
    }
}
