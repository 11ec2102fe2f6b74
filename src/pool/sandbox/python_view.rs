//! How a sandboxed session sees the Python environment: at neutral paths
//! (`/opt/python/env` for the folder of the interpreter the kernel runs, a
//! virtual environment as a rule, and `/opt/python/base`, `/opt/python/base-2`,
//! … for the other folders Python names), never at the host's, which lie in the
//! user's cache or home folder and would tell a session the host's user name and
//! where it keeps its files (`sys.prefix`, a listing of `/home`).
//!
//! A folder is bound whole where nothing in it names another moved folder.
//! Otherwise (a virtual environment whose base interpreter is outside the
//! system folders: pyenv, uv's own Pythons) it is mirrored one level deep:
//! its entries are bound one by one, `pyvenv.cfg` is written again with `home`
//! at the base's new path, and the symbolic links of its top and its `bin`
//! that point into a moved folder are made again pointing at the new path.
//! `LD_LIBRARY_PATH` names a moved base's `lib` when it holds `libpython`
//! (pyenv builds link it by its host path).

use std::path::{Path, PathBuf};

use super::plan::Mount;

/// Where the folder of the interpreter the kernel runs is seen.
pub const ENV_DIR: &str = "/opt/python/env";

/// Where the other folders are seen (`/opt/python/base`, then `-2`, `-3`, …).
const BASE_DIR: &str = "/opt/python/base";

/// The Python environment as a session sees it: what to mount, the program to
/// run and what its environment needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PythonView {
    /// The mounts, in order (after the system folders').
    pub mounts: Vec<Mount>,
    /// Each host folder and where it is seen (for the pool's own reports).
    pub moved: Vec<(PathBuf, PathBuf)>,
    /// The interpreter's path inside.
    pub program: PathBuf,
    /// Its folder inside (first on the kernel's `PATH`).
    pub bin: PathBuf,
    /// `LD_LIBRARY_PATH` for the kernel, when a moved base holds `libpython`.
    pub ld_library_path: Option<PathBuf>,
}

impl PythonView {
    /// The view of the folders `dirs` (real paths, as
    /// [`super::binds::python_dirs`] gives them) for the interpreter `program`
    /// (its host path, e.g. `<cache>/python/env-…/bin/python`). A program in
    /// none of them (a system interpreter) keeps its path.
    pub fn new(dirs: &[PathBuf], program: &Path) -> Self {
        let program_host = real_parent(program);
        let home = dirs
            .iter()
            .position(|d| program_host.starts_with(d))
            .unwrap_or(usize::MAX);
        let mut moved = Vec::new();
        let mut bases = 0;
        for (i, d) in dirs.iter().enumerate() {
            let to = if i == home {
                PathBuf::from(ENV_DIR)
            } else {
                bases += 1;
                match bases {
                    1 => PathBuf::from(BASE_DIR),
                    n => PathBuf::from(format!("{BASE_DIR}-{n}")),
                }
            };
            moved.push((d.clone(), to));
        }
        let mounts = moved
            .iter()
            .flat_map(|(from, to)| mounts_for(from, to, &moved))
            .collect();
        let program_inside = translate(&program_host, &moved).unwrap_or(program_host);
        let bin = program_inside
            .parent()
            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
        let ld_library_path = moved
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != home)
            .find(|(_, (from, _))| holds_libpython(&from.join("lib")))
            .map(|(_, (_, to))| to.join("lib"));
        Self {
            mounts,
            moved,
            program: program_inside,
            bin,
            ld_library_path,
        }
    }
}

/// `path` with its folder resolved (`~/.cache` may be a link) and its own
/// name kept (a virtual environment's `bin/python` is a link to the base,
/// and Python finds `pyvenv.cfg` from the name it was started by).
fn real_parent(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .unwrap_or_else(|_| parent.to_path_buf())
            .join(name),
        _ => path.to_path_buf(),
    }
}

/// `path` (on the host) as seen inside, when it lies in a moved folder.
fn translate(path: &Path, moved: &[(PathBuf, PathBuf)]) -> Option<PathBuf> {
    moved.iter().find_map(|(from, to)| {
        path.strip_prefix(from).ok().map(|rest| {
            if rest.as_os_str().is_empty() {
                to.clone()
            } else {
                to.join(rest)
            }
        })
    })
}

/// Whether `lib` holds a shared `libpython`.
fn holds_libpython(lib: &Path) -> bool {
    std::fs::read_dir(lib).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libpython") && name.contains(".so")
        })
    })
}

/// A link's target as seen inside, when it must change (an absolute target in
/// a moved folder); `None` keeps the link as it is.
fn moved_target(link: &Path, moved: &[(PathBuf, PathBuf)]) -> Option<PathBuf> {
    let target = std::fs::read_link(link).ok()?;
    if target.is_absolute() {
        translate(&target, moved)
    } else {
        None
    }
}

/// `pyvenv.cfg` of `dir` with `home` at its new path, when it names a moved
/// folder.
fn moved_pyvenv_cfg(dir: &Path, moved: &[(PathBuf, PathBuf)]) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("pyvenv.cfg")).ok()?;
    let mut changed = false;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let Some((key, value)) = line.split_once('=') else {
                return line.to_string();
            };
            if key.trim() != "home" {
                return line.to_string();
            }
            match translate(Path::new(value.trim()), moved) {
                Some(inside) => {
                    changed = true;
                    format!("home = {}", inside.display())
                }
                None => line.to_string(),
            }
        })
        .collect();
    changed.then(|| lines.join("\n") + "\n")
}

/// Whether a folder must be mirrored rather than bound whole: its
/// `pyvenv.cfg` or a link at its top or in its `bin` names a moved folder.
fn needs_mirror(dir: &Path, moved: &[(PathBuf, PathBuf)]) -> bool {
    moved_pyvenv_cfg(dir, moved).is_some()
        || [dir.to_path_buf(), dir.join("bin")].iter().any(|d| {
            std::fs::read_dir(d).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| moved_target(&e.path(), moved).is_some())
            })
        })
}

/// The mounts that show the host folder `from` at `to`.
fn mounts_for(from: &Path, to: &Path, moved: &[(PathBuf, PathBuf)]) -> Vec<Mount> {
    if !needs_mirror(from, moved) {
        return vec![Mount::ReadOnly {
            source: from.to_path_buf(),
            path: to.to_path_buf(),
        }];
    }
    let mut out = Vec::new();
    mirror(from, to, moved, true, &mut out);
    out
}

/// Mounts each entry of `from` at `to/<name>`: links made again (pointing at
/// the new path where they named a moved folder), `pyvenv.cfg` written again,
/// `bin` (when `top`) mirrored in turn, the rest bound.
fn mirror(from: &Path, to: &Path, moved: &[(PathBuf, PathBuf)], top: bool, out: &mut Vec<Mount>) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let (host, inside) = (e.path(), to.join(e.file_name()));
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_symlink() {
            let target = moved_target(&host, moved).or_else(|| std::fs::read_link(&host).ok());
            if let Some(target) = target {
                out.push(Mount::Symlink {
                    target,
                    link: inside,
                });
            }
        } else if top && e.file_name() == "pyvenv.cfg" {
            match moved_pyvenv_cfg(from, moved) {
                Some(contents) => out.push(Mount::File {
                    path: inside,
                    contents,
                }),
                None => out.push(Mount::ReadOnly {
                    source: host,
                    path: inside,
                }),
            }
        } else if top && kind.is_dir() && e.file_name() == "bin" {
            mirror(&host, &inside, moved, false, out);
        } else {
            out.push(Mount::ReadOnly {
                source: host,
                path: inside,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A virtual environment in `root/cache/env` over a base in
    /// `root/pyenv/3.11` (outside the system folders), as pyenv gives.
    fn venv_over_private_base(root: &Path) -> (PathBuf, PathBuf) {
        let base = root.join("pyenv/3.11");
        std::fs::create_dir_all(base.join("bin")).unwrap();
        std::fs::create_dir_all(base.join("lib/python3.11")).unwrap();
        std::fs::write(base.join("bin/python3.11"), "").unwrap();
        symlink("python3.11", base.join("bin/python3")).unwrap();
        std::fs::write(base.join("lib/libpython3.11.so.1.0"), "").unwrap();
        let env = root.join("cache/env");
        std::fs::create_dir_all(env.join("bin")).unwrap();
        std::fs::create_dir_all(env.join("lib/python3.11/site-packages")).unwrap();
        symlink(base.join("bin/python3"), env.join("bin/python")).unwrap();
        symlink("python", env.join("bin/python3")).unwrap();
        std::fs::write(env.join("bin/ipython"), "#!/x\n").unwrap();
        std::fs::write(
            env.join("pyvenv.cfg"),
            format!(
                "home = {}\nversion_info = 3.11.7\n",
                base.join("bin").display()
            ),
        )
        .unwrap();
        (
            std::fs::canonicalize(env).unwrap(),
            std::fs::canonicalize(base).unwrap(),
        )
    }

    #[test]
    fn a_venv_over_a_system_python_is_bound_whole_at_the_neutral_path() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join("env");
        std::fs::create_dir_all(env.join("bin")).unwrap();
        symlink("/usr/bin/python3", env.join("bin/python")).unwrap();
        std::fs::write(env.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let env = std::fs::canonicalize(env).unwrap();
        let view = PythonView::new(std::slice::from_ref(&env), &env.join("bin/python"));
        assert_eq!(
            view.mounts,
            vec![Mount::ReadOnly {
                source: env.clone(),
                path: ENV_DIR.into()
            }]
        );
        assert_eq!(view.program, Path::new("/opt/python/env/bin/python"));
        assert_eq!(view.bin, Path::new("/opt/python/env/bin"));
        assert_eq!(view.ld_library_path, None);
    }

    #[test]
    fn a_venv_over_a_private_base_is_mirrored_with_its_links_and_home_moved() {
        let dir = tempfile::tempdir().unwrap();
        let (env, base) = venv_over_private_base(dir.path());
        let view = PythonView::new(&[env.clone(), base.clone()], &env.join("bin/python"));
        let m = &view.mounts;
        assert!(m.contains(&Mount::Symlink {
            target: "/opt/python/base/bin/python3".into(),
            link: "/opt/python/env/bin/python".into()
        }));
        assert!(m.contains(&Mount::Symlink {
            target: "python".into(),
            link: "/opt/python/env/bin/python3".into()
        }));
        assert!(m.contains(&Mount::ReadOnly {
            source: env.join("bin/ipython"),
            path: "/opt/python/env/bin/ipython".into()
        }));
        assert!(m.contains(&Mount::ReadOnly {
            source: env.join("lib"),
            path: "/opt/python/env/lib".into()
        }));
        assert!(m.contains(&Mount::File {
            path: "/opt/python/env/pyvenv.cfg".into(),
            contents: "home = /opt/python/base/bin\nversion_info = 3.11.7\n".into()
        }));
        assert!(m.contains(&Mount::ReadOnly {
            source: base.clone(),
            path: "/opt/python/base".into()
        }));
        assert_eq!(view.program, Path::new("/opt/python/env/bin/python"));
        assert_eq!(
            view.ld_library_path.as_deref(),
            Some(Path::new("/opt/python/base/lib"))
        );
        // Nothing inside names the host's folders.
        let seen = format!("{m:?}").replace(&format!("source: {env:?}"), "");
        for mount in m {
            if let Mount::Symlink { target, .. } | Mount::File { path: target, .. } = mount {
                assert!(!target.starts_with(dir.path()), "{target:?} in {seen}");
            }
        }
    }

    #[test]
    fn an_interpreter_outside_the_folders_keeps_its_path() {
        let view = PythonView::new(&[], Path::new("/usr/bin/python3"));
        assert!(view.mounts.is_empty());
        assert_eq!(view.program, Path::new("/usr/bin/python3"));
        assert_eq!(view.bin, Path::new("/usr/bin"));
    }
}
