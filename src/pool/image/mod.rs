//! The local pool's Python environment (its "image"): the interpreter every session
//! kernel runs in, like the container image of an Azure session pool.
//!
//! Two ways to get one ([`ensure`]):
//!
//! - `--python PATH`: a user-given interpreter, used as is once it is known to
//!   import ipykernel.
//! - Otherwise sessionpad builds a virtual environment on first use below the cache
//!   directory, at `<cache>/python/env-<key>`, from the embedded requirements of
//!   the [`Image`] asked for: `assets/python/requirements.txt` (the service's
//!   PythonLTS packages, the default) or `assets/python/requirements-minimal.txt`
//!   (`--image minimal`). Both live side by side. The key is the first 12 hex digits of
//!   SHA-256 over the requirements text and the base interpreter's version string, so
//!   a change of either gives a fresh environment. A finished environment holds a
//!   marker file `.sessionpad-ready` (first line: the requirements hash); a folder
//!   without it is a half-built leftover and is rebuilt. Builds are serialised across
//!   processes by an exclusive lock on `<cache>/python/env-<key>.lock`.
//!
//! Reusing a ready environment starts no process: the base interpreter's version
//! string is remembered in `<cache>/python/base-<hash of its path>.txt` together
//! with a fingerprint of the interpreter file (resolved path, size, modification
//! time), and Python is only asked again when that fingerprint changes. (Once per
//! environment not yet marked compiled, a background bytecode compile starts:
//! [`uv`] module doc.)
//!
//! Which base interpreter builds it is chosen, and remembered, the same way
//! whatever `PATH` says (`base` module doc); a build is done with uv when it can
//! be had, else with pip, saying so (`build`, `uv`).

mod base;
mod build;
mod error;
mod process;
mod uv;

use self::process::{last_line, ok_stdout, parse_package_list, run_quiet};

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

/// The packages of the environment sessionpad builds by default ([`Image::PythonLts`]),
/// embedded at compile time.
pub const REQUIREMENTS: &str = include_str!("../../../assets/python/requirements.txt");

/// The packages of the small environment ([`Image::Minimal`]), embedded at
/// compile time.
pub const REQUIREMENTS_MINIMAL: &str =
    include_str!("../../../assets/python/requirements-minimal.txt");

pub use crate::protocol::image::Image;

/// The requirements text the environment of `image` is built from.
pub fn requirements(image: Image) -> &'static str {
    match image {
        Image::PythonLts => REQUIREMENTS,
        Image::Minimal => REQUIREMENTS_MINIMAL,
    }
}

/// Name of the marker file that says an environment folder is complete.
pub const READY_MARKER: &str = ".sessionpad-ready";

/// Environment variable naming the base interpreter to build the environment with
/// (a path, or a command name looked up on `PATH`).
pub const BASE_PYTHON_VAR: &str = "SESSIONPAD_BASE_PYTHON";

/// Oldest base interpreter the embedded requirements install on (IPython 9 needs
/// Python 3.11).
pub const MIN_PYTHON: (u32, u32) = (3, 11);

/// How many lines of a failed command's output an error shows.
const TAIL_LINES: usize = 20;

/// Name of the requirements file kept in a built environment folder.
const REQUIREMENTS_FILE: &str = "sessionpad-requirements.txt";

/// A Python interpreter that can run `python -m ipykernel_launcher`.
#[derive(Debug, Clone)]
pub struct PythonEnv {
    /// The interpreter to launch kernels with (e.g. `<venv>/bin/python`); always an
    /// absolute path (symbolic links are kept, since a venv's interpreter is one).
    pub python: PathBuf,
    /// The venv root when sessionpad built it, `None` for a user-given interpreter.
    pub root: Option<PathBuf>,
    /// Which set of packages sessionpad built it with (`--image`); `None` for
    /// a user-given interpreter (`--python`).
    pub image: Option<Image>,
}

pub use self::error::ImageError;

/// Finds or builds the Python environment sessions run in.
///
/// - `cache_dir`: sessionpad's cache directory; a built environment lives in its
///   `python/` folder (created when missing).
/// - `explicit_python`: the `--python` interpreter. When given, it is only checked
///   (it must import ipykernel) and returned with `root: None`; a bare command name
///   is looked up on `PATH`, a relative path made absolute; `image` is then unused.
/// - `image`: which packages a built environment holds; each image has its own
///   folder (the key hashes the requirements), so both can be ready at once.
/// - `progress`: receives one line of text per step of a first build, and each line
///   pip prints, so the caller can show something better than a blank screen. It is
///   not called when a ready environment is reused.
///
/// Reusing a ready environment starts no process and takes well under a
/// millisecond; a first build takes a minute or two (it downloads the packages).
///
/// # Errors
///
/// [`ImageError::NoPython`] / [`ImageError::PythonTooOld`] when there is no
/// suitable base interpreter, [`ImageError::Venv`] / [`ImageError::Pip`] when a build
/// step fails, [`ImageError::MissingIpykernel`] for an explicit interpreter without
/// ipykernel, [`ImageError::Spawn`], [`ImageError::Query`] and [`ImageError::Io`].
pub async fn ensure(
    cache_dir: &Path,
    explicit_python: Option<&Path>,
    image: Image,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<PythonEnv, ImageError> {
    if let Some(python) = explicit_python {
        return check_explicit(python).await;
    }
    let cache_dir = std::path::absolute(cache_dir).map_err(ImageError::io(cache_dir))?;
    let python_dir = cache_dir.join("python");
    let base = base::choose(
        &python_dir,
        std::env::var_os(BASE_PYTHON_VAR).as_deref(),
        std::env::var_os("PATH").as_deref(),
    )?;
    let requirements = requirements(image);
    let req_hash = sha256_hex(requirements.as_bytes());

    if let Some(env) = lookup_ready(&python_dir, &base.path, requirements, &req_hash) {
        tracing::debug!(python = %env.python.display(), "reusing Python environment");
        base.remember(&python_dir);
        compile_in_background(&env);
        return Ok(PythonEnv {
            image: Some(image),
            ..env
        });
    }

    let version = base::version(&base.path).await?;
    remember_base_version(&python_dir, &base.path, &version);
    let key = env_key(requirements, &version);
    let note = base.build_note(&version);
    let base_path = &base.path;
    let env = ensure_env(&python_dir, &key, &req_hash, progress, |dir| async move {
        progress(&note);
        build::build(base_path, &dir, requirements, progress).await
    })
    .await?;
    base.remember(&python_dir);
    compile_in_background(&env);
    Ok(PythonEnv {
        image: Some(image),
        ..env
    })
}

/// Starts the background bytecode compile of a built environment that is not
/// marked compiled yet (`uv` module doc).
fn compile_in_background(env: &PythonEnv) {
    if let Some(root) = &env.root {
        uv::spawn_compile(root);
    }
}

/// Checks a `--python` interpreter: it must import ipykernel.
async fn check_explicit(given: &Path) -> Result<PythonEnv, ImageError> {
    let python = base::resolve_command(given, std::env::var_os("PATH").as_deref())?;
    let out = run_quiet(&python, &["-c", "import ipykernel"]).await?;
    if !out.status.success() {
        let detail = last_line(&out.stderr).unwrap_or_else(|| out.status.to_string());
        return Err(ImageError::MissingIpykernel { python, detail });
    }
    Ok(PythonEnv {
        python,
        root: None,
        image: None,
    })
}

impl PythonEnv {
    /// The language runtime of this environment, for the pool's `metadata`: the name
    /// `"python"` and the interpreter's version, e.g. `("python", "3.11.7")`.
    ///
    /// Runs the interpreter once (tens of milliseconds).
    ///
    /// # Errors
    ///
    /// [`ImageError::Spawn`] when it cannot be started, [`ImageError::Query`] when it
    /// fails or prints something unexpected.
    pub async fn runtime(&self) -> Result<(String, String), ImageError> {
        const WHAT: &str = "its version";
        let out = run_quiet(
            &self.python,
            &["-c", "import platform; print(platform.python_version())"],
        )
        .await?;
        let version = ok_stdout(&self.python, WHAT, &out)?.trim().to_string();
        if version.is_empty() {
            return Err(ImageError::Query {
                python: self.python.clone(),
                what: WHAT,
                detail: "it printed nothing".into(),
            });
        }
        Ok(("python".to_string(), version))
    }

    /// The folders the interpreter runs from, as it reports them: `sys.prefix`,
    /// `sys.base_prefix`, `sys.exec_prefix`, `sys.base_exec_prefix` (a venv and the
    /// installation it was made from), for the sandbox to bind read-only. Runs the
    /// interpreter once (tens of milliseconds).
    ///
    /// # Errors
    ///
    /// [`ImageError::Spawn`], [`ImageError::Query`] when it fails or prints
    /// nothing.
    pub async fn prefixes(&self) -> Result<Vec<PathBuf>, ImageError> {
        const WHAT: &str = "its prefixes";
        let out = run_quiet(
            &self.python,
            &[
                "-c",
                "import sys; print(sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, sep='\\n')",
            ],
        )
        .await?;
        let text = ok_stdout(&self.python, WHAT, &out)?;
        let dirs: Vec<PathBuf> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(PathBuf::from)
            .collect();
        if dirs.is_empty() {
            return Err(ImageError::Query {
                python: self.python.clone(),
                what: WHAT,
                detail: "it printed nothing".into(),
            });
        }
        Ok(dirs)
    }

    /// The distributions installed in this environment as `(name, version)` pairs,
    /// sorted by name (case-insensitively), for the pool's `metadata`.
    ///
    /// Asks `python -m pip list --format json`; an interpreter without pip (possible
    /// with `--python`) is asked through `importlib.metadata` instead. Takes up to
    /// about half a second.
    ///
    /// # Errors
    ///
    /// [`ImageError::Spawn`], [`ImageError::Query`] when both ways fail or their
    /// output is not understood.
    pub async fn installed_packages(&self) -> Result<Vec<(String, String)>, ImageError> {
        let pip = run_quiet(
            &self.python,
            &[
                "-m",
                "pip",
                "list",
                "--format",
                "json",
                "--disable-pip-version-check",
                "--no-input",
            ],
        )
        .await?;
        let mut packages = if pip.status.success() {
            parse_package_list(&self.python, &pip.stdout)?
        } else {
            tracing::debug!(
                python = %self.python.display(),
                "pip list failed, asking importlib.metadata"
            );
            self.packages_via_importlib().await?
        };
        packages.sort_by(|a, b| {
            a.0.to_lowercase()
                .cmp(&b.0.to_lowercase())
                .then_with(|| a.1.cmp(&b.1))
        });
        packages.dedup_by(|a, b| a.0.eq_ignore_ascii_case(&b.0));
        Ok(packages)
    }

    async fn packages_via_importlib(&self) -> Result<Vec<(String, String)>, ImageError> {
        const SCRIPT: &str = "import json, importlib.metadata as m; \
            print(json.dumps([{'name': d.metadata['Name'], 'version': d.version} \
            for d in m.distributions() if d.metadata['Name']]))";
        let out = run_quiet(&self.python, &["-c", SCRIPT]).await?;
        let stdout = ok_stdout(&self.python, "its installed packages", &out)?;
        parse_package_list(&self.python, stdout.as_bytes())
    }
}

/// The environment folder's key: the first 12 hex digits of SHA-256 over the
/// requirements text and the base interpreter's version string (`sys.version`).
pub fn env_key(requirements: &str, base_version: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(requirements.as_bytes());
    hasher.update([0u8]);
    hasher.update(base_version.as_bytes());
    let mut hex = hex(&hasher.finalize());
    hex.truncate(12);
    hex
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The interpreter inside a virtual environment folder.
fn venv_python(dir: &Path) -> PathBuf {
    if cfg!(windows) {
        dir.join("Scripts").join("python.exe")
    } else {
        dir.join("bin").join("python")
    }
}

/// An environment folder is ready when its marker names the requirements hash and
/// its interpreter still resolves (a venv's `bin/python` is a link to the base
/// interpreter, which may have been uninstalled since).
fn is_ready(dir: &Path, req_hash: &str) -> bool {
    let Ok(marker) = std::fs::read_to_string(dir.join(READY_MARKER)) else {
        return false;
    };
    marker.lines().next().map(str::trim) == Some(req_hash)
        && std::fs::metadata(venv_python(dir)).is_ok_and(|m| m.is_file())
}

fn ready_env(dir: &Path) -> PythonEnv {
    PythonEnv {
        python: venv_python(dir),
        root: Some(dir.to_path_buf()),
        image: None,
    }
}

// ---------------------------------------------------------------------------------
// The fast path: the remembered version of the base interpreter.

/// What identifies the base interpreter's file without running it: its resolved
/// path, size and modification time. `None` when it cannot be read.
fn fingerprint(base: &Path) -> Option<String> {
    let resolved = std::fs::canonicalize(base).ok()?;
    let meta = std::fs::metadata(&resolved).ok()?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some(format!(
        "{}\t{}\t{}.{:09}",
        resolved.display(),
        meta.len(),
        mtime.as_secs(),
        mtime.subsec_nanos()
    ))
}

fn base_cache_file(python_dir: &Path, base: &Path) -> PathBuf {
    let mut name = sha256_hex(base.as_os_str().as_encoded_bytes());
    name.truncate(12);
    python_dir.join(format!("base-{name}.txt"))
}

/// Finds a ready environment without starting any process, or `None` (then the
/// slow path asks the interpreter and builds if needed).
fn lookup_ready(
    python_dir: &Path,
    base: &Path,
    requirements: &str,
    req_hash: &str,
) -> Option<PythonEnv> {
    let current = fingerprint(base)?;
    let cached = std::fs::read_to_string(base_cache_file(python_dir, base)).ok()?;
    let mut lines = cached.lines();
    if lines.next()? != current {
        return None;
    }
    let version = lines.next()?;
    let dir = python_dir.join(format!("env-{}", env_key(requirements, version)));
    is_ready(&dir, req_hash).then(|| ready_env(&dir))
}

/// Remembers the base interpreter's version for [`lookup_ready`]. Best effort: a
/// failure only costs one interpreter start next time.
fn remember_base_version(python_dir: &Path, base: &Path, version: &str) {
    let Some(fp) = fingerprint(base) else { return };
    let file = base_cache_file(python_dir, base);
    let result = std::fs::create_dir_all(python_dir)
        .and_then(|()| write_atomically(&file, format!("{fp}\n{version}\n").as_bytes()));
    if let Err(e) = result {
        tracing::warn!("cannot write {}: {e}", file.display());
    }
}

/// Writes through a temporary file in the same folder and renames it over `path`,
/// so a reader never sees half a file.
fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, contents)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

// ---------------------------------------------------------------------------------
// The slow path: lock, re-check, build.

/// Returns the ready environment `python_dir/env-<key>`, building it with `build`
/// under the exclusive lock `python_dir/env-<key>.lock` when it is missing or
/// half-built. `build` gets the (absent) folder to create and must leave a working
/// interpreter in it; the marker is written here afterwards.
async fn ensure_env<B, Fut>(
    python_dir: &Path,
    key: &str,
    req_hash: &str,
    progress: &(dyn Fn(&str) + Send + Sync),
    build: B,
) -> Result<PythonEnv, ImageError>
where
    B: FnOnce(PathBuf) -> Fut,
    Fut: Future<Output = Result<(), ImageError>>,
{
    let dir = python_dir.join(format!("env-{key}"));
    if is_ready(&dir, req_hash) {
        return Ok(ready_env(&dir));
    }
    std::fs::create_dir_all(python_dir).map_err(ImageError::io(python_dir))?;
    let lock_path = python_dir.join(format!("env-{key}.lock"));
    let _lock = lock_exclusive(&lock_path, progress).await?;

    // Another process (or task) may have built it while we waited.
    if is_ready(&dir, req_hash) {
        return Ok(ready_env(&dir));
    }
    if std::fs::symlink_metadata(&dir).is_ok() {
        tracing::info!("removing half-built Python environment {}", dir.display());
        remove_any(&dir).map_err(ImageError::io(&dir))?;
    }

    if let Err(e) = build(dir.clone()).await {
        // Leave no half-built folder behind if it can be helped; the next run would
        // remove it anyway.
        let _ = remove_any(&dir);
        return Err(e);
    }
    let python = venv_python(&dir);
    if let Err(source) = std::fs::metadata(&python) {
        return Err(ImageError::Io {
            path: python,
            source,
        });
    }
    let marker = dir.join(READY_MARKER);
    write_atomically(&marker, format!("{req_hash}\n").as_bytes())
        .map_err(ImageError::io(&marker))?;
    progress("Python environment ready");
    Ok(ready_env(&dir))
}

fn remove_any(path: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path)?.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    }
}

/// Takes an exclusive lock on `path` (created if missing), waiting on a blocking
/// thread if another process holds it. The lock lasts as long as the returned file.
async fn lock_exclusive(
    path: &Path,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<std::fs::File, ImageError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(ImageError::io(path))?;
    match file.try_lock() {
        Ok(()) => return Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {}
        Err(std::fs::TryLockError::Error(e)) => return Err(ImageError::io(path)(e)),
    }
    progress("waiting for another sessionpad process to finish building the Python environment…");
    tokio::task::spawn_blocking(move || file.lock().map(|()| file))
        .await
        .map_err(|e| ImageError::io(path)(io::Error::other(e)))?
        .map_err(ImageError::io(path))
}

#[cfg(test)]
mod tests;
