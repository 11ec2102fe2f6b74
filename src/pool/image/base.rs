//! The base interpreter a built environment is made from, chosen the same way
//! whatever `PATH` says:
//!
//! 1. `$SESSIONPAD_BASE_PYTHON` when set (a path, or a command name looked up on
//!    `PATH`);
//! 2. else the interpreter sessionpad used last time, remembered in
//!    `<cache>/python/base-python` (one line: its path), while it is still an
//!    executable file;
//! 3. else the first `python3` (then `python`) on `PATH`.
//!
//! Whichever it is, it is remembered once an environment is ready, so a later
//! run with another `PATH` (`env PATH=/usr/bin sessionpad …`, a cron job, an
//! editor's terminal) finds the same environment instead of building a second
//! one for another interpreter. A build always says which interpreter it uses
//! and why ([`Base::build_note`]).

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use super::process::{ok_stdout, run_quiet};
use super::{BASE_PYTHON_VAR, ImageError, MIN_PYTHON};

/// Name of the file in `<cache>/python/` remembering the base interpreter.
pub(super) const REMEMBERED_FILE: &str = "base-python";

/// How the base interpreter was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Chosen {
    /// From `$SESSIONPAD_BASE_PYTHON`.
    Variable,
    /// The one remembered from an earlier run.
    Remembered,
    /// Found on `PATH`; `forgot` is the remembered one that is no longer there.
    OnPath {
        /// The remembered interpreter that is gone, if there was one.
        forgot: Option<PathBuf>,
    },
}

/// The chosen base interpreter.
#[derive(Debug, Clone)]
pub(super) struct Base {
    /// Absolute path of the interpreter (links kept, as found).
    pub path: PathBuf,
    /// Why this one.
    pub how: Chosen,
    /// What `base-python` said before this run (to write it only on change).
    remembered: Option<PathBuf>,
}

/// Chooses the base interpreter (see the module doc). `var` is the value of
/// `$SESSIONPAD_BASE_PYTHON` and `path` that of `$PATH` (parameters so tests do
/// not touch the process environment). Only looks at files; starts nothing.
///
/// # Errors
///
/// [`ImageError::NoPython`] when the variable names no executable file, or when
/// nothing is remembered and neither `python3` nor `python` is on `PATH`.
pub(super) fn choose(
    python_dir: &Path,
    var: Option<&OsStr>,
    path: Option<&OsStr>,
) -> Result<Base, ImageError> {
    let remembered = read_remembered(python_dir);
    if let Some(var) = var.filter(|v| !v.is_empty()) {
        let given = PathBuf::from(var);
        let found = resolve_command(&given, path)
            .ok()
            .filter(|p| is_executable(p));
        return match found {
            Some(p) => Ok(Base {
                path: p,
                how: Chosen::Variable,
                remembered,
            }),
            None => Err(ImageError::NoPython {
                looked_for: format!(
                    "{BASE_PYTHON_VAR}={} is not an executable file",
                    given.display()
                ),
            }),
        };
    }
    if let Some(r) = remembered.as_ref().filter(|r| is_executable(r)) {
        return Ok(Base {
            path: r.clone(),
            how: Chosen::Remembered,
            remembered,
        });
    }
    let found = ["python3", "python"]
        .iter()
        .find_map(|name| find_on_path(name.as_ref(), path));
    match found {
        Some(p) => Ok(Base {
            path: p,
            how: Chosen::OnPath {
                forgot: remembered.clone(),
            },
            remembered,
        }),
        None => Err(ImageError::NoPython {
            looked_for: match remembered {
                Some(r) => format!(
                    "{} (used before) is gone, and neither python3 nor python is on PATH",
                    r.display()
                ),
                None => "neither python3 nor python is on PATH".into(),
            },
        }),
    }
}

impl Base {
    /// The line shown before a build: which interpreter, which version (`version`
    /// is its `sys.version`; the first word is shown) and why this one.
    pub fn build_note(&self, version: &str) -> String {
        let short = version.split_whitespace().next().unwrap_or(version);
        let who = format!("{} (Python {short})", self.path.display());
        match &self.how {
            Chosen::Variable => {
                format!("building the Python environment with {who}, from {BASE_PYTHON_VAR}")
            }
            Chosen::Remembered => format!(
                "building the Python environment with {who}, the interpreter sessionpad \
                 used before (set {BASE_PYTHON_VAR} to choose another)"
            ),
            Chosen::OnPath { forgot } => {
                let gone = forgot.as_ref().map_or(String::new(), |f| {
                    format!(
                        "{}, the interpreter sessionpad used before, is gone; ",
                        f.display()
                    )
                });
                format!(
                    "{gone}building the Python environment with {who}, the first python3 \
                     on PATH; sessionpad keeps using it whatever PATH says later (set \
                     {BASE_PYTHON_VAR} to choose another)"
                )
            }
        }
    }

    /// Remembers this interpreter for the next runs, when it is not already the
    /// remembered one. Best effort: a failure is logged and only means the next
    /// run chooses again.
    pub fn remember(&self, python_dir: &Path) {
        if self.remembered.as_deref() == Some(self.path.as_path()) {
            return;
        }
        let file = python_dir.join(REMEMBERED_FILE);
        let mut line = self.path.as_os_str().as_encoded_bytes().to_vec();
        line.push(b'\n');
        let result = std::fs::create_dir_all(python_dir)
            .and_then(|()| super::write_atomically(&file, &line));
        if let Err(e) = result {
            tracing::warn!("cannot write {}: {e}", file.display());
        }
    }
}

/// The remembered interpreter, if the file exists and names an absolute path.
fn read_remembered(python_dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(python_dir.join(REMEMBERED_FILE)).ok()?;
    let line = text.lines().next()?.trim_end();
    let p = PathBuf::from(line);
    p.is_absolute().then_some(p)
}

/// A bare command name (`python3`) is looked up on `path` (the value of `PATH`);
/// anything with a folder part is made absolute (without resolving links), so
/// kernels started in another working directory still find it.
///
/// # Errors
///
/// [`ImageError::Spawn`] (not found) for a bare name not on `path`,
/// [`ImageError::Io`] when the working directory cannot be read.
pub(super) fn resolve_command(given: &Path, path: Option<&OsStr>) -> Result<PathBuf, ImageError> {
    let bare =
        given.components().count() == 1 && given.parent().is_some_and(|p| p.as_os_str().is_empty());
    if bare {
        find_on_path(given.as_os_str(), path).ok_or_else(|| ImageError::Spawn {
            program: given.to_path_buf(),
            source: io::Error::new(io::ErrorKind::NotFound, "not found on PATH"),
        })
    } else {
        std::path::absolute(given).map_err(ImageError::io(given))
    }
}

/// The first executable file `name` in the folders of `path` (a `PATH` value),
/// made absolute.
pub(super) fn find_on_path(name: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?).find_map(|dir| {
        let candidates = if cfg!(windows) {
            vec![dir.join(name), dir.join(name).with_extension("exe")]
        } else {
            vec![dir.join(name)]
        };
        candidates.into_iter().find(|c| is_executable(c)).map(|c| {
            // A relative PATH entry would break once kernels change directory.
            std::path::absolute(&c).unwrap_or(c)
        })
    })
}

/// Whether `path` is a file (after links) with an execute bit.
pub(super) fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// Asks the base interpreter for its version string (`sys.version` on one line) and
/// checks it is new enough. The script also runs on Python 2, to say so clearly.
///
/// # Errors
///
/// [`ImageError::Spawn`], [`ImageError::Query`] when its answer is not
/// understood, [`ImageError::PythonTooOld`] below [`MIN_PYTHON`].
pub(super) async fn version(base: &Path) -> Result<String, ImageError> {
    const WHAT: &str = "its version";
    const SCRIPT: &str = "import sys; sys.stdout.write('%d.%d\\n%s\\n' % \
        (sys.version_info[0], sys.version_info[1], sys.version.replace(chr(10), ' ')))";
    let out = run_quiet(base, &["-c", SCRIPT]).await?;
    let stdout = ok_stdout(base, WHAT, &out)?;
    let mut lines = stdout.lines();
    let short = lines.next().unwrap_or_default().trim().to_string();
    let full = lines.next().unwrap_or_default().trim().to_string();
    let parsed = short
        .split_once('.')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)));
    let Some(major_minor) = parsed.filter(|_| !full.is_empty()) else {
        return Err(ImageError::Query {
            python: base.to_path_buf(),
            what: WHAT,
            detail: format!("unexpected output {stdout:?}"),
        });
    };
    if major_minor < MIN_PYTHON {
        return Err(ImageError::PythonTooOld {
            python: base.to_path_buf(),
            version: short,
        });
    }
    Ok(full)
}
