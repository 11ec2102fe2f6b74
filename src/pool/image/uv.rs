//! Building the environment with uv (a fast Python package installer, from
//! PyPI): `uv venv`, then `uv pip install` of the requirements, in about a third
//! of pip's time. uv is installed once per cache directory into
//! `<cache>/python/uv/` (`<base> -m pip install --target`, about 18 MB), so the
//! only thing the machine needs is the base interpreter with pip; when that
//! cannot be done the caller falls back to pip and says so.
//!
//! uv's cache is its own (`$UV_CACHE_DIR`, else `~/.cache/uv`) and shared with
//! any other use of uv; packages are hard-linked from it (copied where that
//! cannot be done), never symbolically linked, so the environment holds only
//! its own folder and links to its base interpreter, which the sandbox binds.
//!
//! uv does not compile bytecode by default, and sandboxed kernels cannot write
//! it (the environment is bound read-only): without it every kernel start
//! compiles IPython from source, about twice the CPU. Compiling it in line
//! would double the build, so [`spawn_compile`] compiles it in the background
//! (niced, atomic writes: a kernel importing meanwhile reads a whole `.pyc` or
//! none) and marks the folder with [`COMPILED_MARKER`] when done.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::Command;

use super::process::{last_line, pip_install, run_quiet, run_streaming};
use super::{ImageError, READY_MARKER, venv_python, write_atomically};

/// The uv sessionpad installs: versions whose `uv venv` / `uv pip install`
/// flags it was tested with. Changing it reinstalls uv.
pub(super) const UV_REQUIREMENT: &str = "uv>=0.9,<0.14";

/// The folder below `<cache>/python/` holding the installed uv.
const UV_DIR: &str = "uv";

/// Environment variable that, set to anything but empty, makes sessionpad build
/// with pip instead of uv (to compare the two, or where uv misbehaves).
pub const NO_UV_VAR: &str = "SESSIONPAD_NO_UV";

/// Marker file in an environment folder once its bytecode is compiled.
pub const COMPILED_MARKER: &str = ".sessionpad-compiled";

/// pip's settings that have a uv counterpart, passed on when the uv one is not
/// set, so a machine set up for pip (a mirror, a proxy's certificate) works the
/// same with uv.
const PIP_TO_UV: &[(&str, &str)] = &[
    ("PIP_INDEX_URL", "UV_INDEX_URL"),
    ("PIP_EXTRA_INDEX_URL", "UV_EXTRA_INDEX_URL"),
    ("PIP_FIND_LINKS", "UV_FIND_LINKS"),
    ("PIP_CERT", "SSL_CERT_FILE"),
];

/// The uv program to build with: the one installed in `<python_dir>/uv/`,
/// installing it first with `base`'s pip when missing (one line per step to
/// `progress`, pip's lines too).
///
/// # Errors
///
/// A short reason, for the message saying that pip builds instead: the base
/// interpreter has no pip, PyPI cannot be reached, the lock or folder cannot be
/// made; [`NO_UV_VAR`] is set.
pub(super) async fn find_or_install(
    python_dir: &Path,
    base: &Path,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<PathBuf, String> {
    if std::env::var_os(NO_UV_VAR).is_some_and(|v| !v.is_empty()) {
        return Err(format!("{NO_UV_VAR} is set"));
    }
    let dir = python_dir.join(UV_DIR);
    let uv = dir.join("bin").join("uv");
    if installed(&dir) {
        return Ok(uv);
    }
    let lock_path = python_dir.join(format!("{UV_DIR}.lock"));
    let _lock = super::lock_exclusive(&lock_path, progress)
        .await
        .map_err(|e| e.to_string())?;
    if installed(&dir) {
        return Ok(uv);
    }
    progress(&format!(
        "installing uv (a fast Python package installer) from PyPI into {}…",
        dir.display()
    ));
    let tmp = python_dir.join(format!("{UV_DIR}.tmp-{}", std::process::id()));
    let _ = super::remove_any(&tmp);
    let result = pip_install_uv(base, &tmp, progress).await;
    if let Err(why) = result {
        let _ = super::remove_any(&tmp);
        return Err(why);
    }
    if std::fs::symlink_metadata(&dir).is_ok() {
        super::remove_any(&dir).map_err(|e| format!("removing {}: {e}", dir.display()))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| format!("renaming to {}: {e}", dir.display()))?;
    Ok(uv)
}

/// Whether `dir` holds a uv installed for [`UV_REQUIREMENT`].
fn installed(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(READY_MARKER))
        .is_ok_and(|m| m.lines().next() == Some(UV_REQUIREMENT))
        && super::base::is_executable(&dir.join("bin").join("uv"))
}

/// `<base> -m pip install --target <dir> uv`, then checks that the program
/// runs and writes the marker.
async fn pip_install_uv(
    base: &Path,
    dir: &Path,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), String> {
    let mut pip = pip_install(base);
    pip.args(["--no-deps", "--only-binary", ":all:", "--target"])
        .arg(dir)
        .arg(UV_REQUIREMENT)
        // `--target` installs outside any environment: a require-virtualenv
        // default would refuse it. Old pips ignore unknown variables, where they
        // would fail on an unknown flag.
        .env("PIP_REQUIRE_VIRTUALENV", "0")
        .env("PIP_ROOT_USER_ACTION", "ignore");
    let (status, tail) = run_streaming(pip, base, progress)
        .await
        .map_err(|e| e.to_string())?;
    if !status.success() {
        let last = tail.lines().last().map_or("", str::trim).to_string();
        return Err(format!(
            "`{} -m pip install {UV_REQUIREMENT}` failed ({status}): {last}",
            base.display()
        ));
    }
    let uv = dir.join("bin").join("uv");
    let out = run_quiet(&uv, &["--version"])
        .await
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let why = last_line(&out.stderr).unwrap_or_else(|| out.status.to_string());
        return Err(format!("{} does not run: {why}", uv.display()));
    }
    if let Some(version) = last_line(&out.stdout) {
        progress(&version);
    }
    let marker = dir.join(READY_MARKER);
    write_atomically(&marker, format!("{UV_REQUIREMENT}\n").as_bytes())
        .map_err(|e| format!("{}: {e}", marker.display()))
}

/// Builds the environment in `dir` (absent) with `uv`: a virtual environment of
/// `base` with pip seeded (as `python -m venv` makes one), then the
/// requirements. Each line uv prints goes to `progress`.
///
/// # Errors
///
/// [`ImageError::Uv`] with uv's last lines when a step fails,
/// [`ImageError::Spawn`] / [`ImageError::Io`].
pub(super) async fn build(
    uv: &Path,
    base: &Path,
    dir: &Path,
    req_file: &Path,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), ImageError> {
    let fail =
        |step: &'static str, status: std::process::ExitStatus, tail: String| ImageError::Uv {
            step,
            dir: dir.to_path_buf(),
            status: status.to_string(),
            tail,
        };
    let mut venv = command(uv, dir);
    venv.args(["venv", "--seed", "--link-mode", "hardlink", "--python"])
        .arg(base)
        .arg(dir);
    let (status, tail) = run_streaming(venv, uv, progress).await?;
    if !status.success() {
        return Err(fail("creating the virtual environment", status, tail));
    }
    progress("installing packages with uv (first run only, about ten seconds)…");
    let mut install = command(uv, dir);
    install
        .args(["pip", "install", "--link-mode", "hardlink", "--python"])
        .arg(venv_python(dir))
        .arg("-r")
        .arg(req_file);
    let (status, tail) = run_streaming(install, uv, progress).await?;
    if !status.success() {
        return Err(fail("installing the packages", status, tail));
    }
    Ok(())
}

/// A uv command run from the environment's parent folder (no project or
/// `uv.toml` of the user's working directory applies), without colours or a
/// download of another Python, with pip's index settings carried over.
fn command(uv: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(uv);
    if let Some(parent) = dir.parent() {
        cmd.current_dir(parent);
    }
    cmd.env("NO_COLOR", "1")
        .env("UV_PYTHON_DOWNLOADS", "never")
        .env_remove("VIRTUAL_ENV")
        .env_remove("UV_LINK_MODE");
    for (pip, uv) in PIP_TO_UV {
        if std::env::var_os(uv).is_none()
            && let Some(value) = std::env::var_os(pip).filter(|v| !v.is_empty())
        {
            cmd.env(uv, value);
        }
    }
    cmd
}

/// The script compiling an environment's bytecode: one at a time per folder (a
/// second exits at once on the lock), niced, writing [`COMPILED_MARKER`] at the
/// end whatever a file's result (a file that does not compile would not
/// compile next time either).
const COMPILE_SCRIPT: &str = "import compileall, fcntl, os, sys
root = sys.argv[1]
lock = open(os.path.join(root, '.sessionpad-compile.lock'), 'a')
try:
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(0)
marker = os.path.join(root, '.sessionpad-compiled')
if os.path.exists(marker):
    sys.exit(0)
os.nice(10)
compileall.compile_dir(os.path.join(root, 'lib'), quiet=2, workers=0)
with open(marker + '.tmp', 'w') as f:
    f.write('compiled\\n')
os.replace(marker + '.tmp', marker)
";

/// Starts compiling the bytecode of the environment at `dir` in the background
/// (see the module doc) when it is not yet marked compiled. Returns at once; the
/// compile goes on if this process ends, in a process group of its own. Best
/// effort: a failure to start is logged, and the next [`super::ensure`] tries
/// again.
pub(super) fn spawn_compile(dir: &Path) {
    if dir.join(COMPILED_MARKER).exists() {
        return;
    }
    let python = venv_python(dir);
    let mut cmd = Command::new(&python);
    cmd.args([
        OsStr::new("-c"),
        OsStr::new(COMPILE_SCRIPT),
        dir.as_os_str(),
    ])
    .env_remove("PYTHONDONTWRITEBYTECODE")
    .env_remove("PYTHONPYCACHEPREFIX")
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .process_group(0);
    match cmd.spawn() {
        Ok(mut child) => {
            tracing::debug!(
                "compiling the bytecode of {} in the background",
                dir.display()
            );
            // Reaped here while this process lives; reparented if it ends first.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
        }
        Err(e) => tracing::warn!("cannot start {}: {e}", python.display()),
    }
}
