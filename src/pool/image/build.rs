//! Building a new environment folder: with uv when it can be had ([`super::uv`]),
//! else with the base interpreter's `venv` module and pip, saying so.

use std::path::Path;

use tokio::process::Command;

use super::process::{pip_install, run_streaming};
use super::uv::COMPILED_MARKER;
use super::{ImageError, REQUIREMENTS_FILE, venv_python, write_atomically};

/// Builds the environment in `dir` (absent; its parent is `<cache>/python`) from
/// `base` and `requirements`, sending each step and each line the tools print to
/// `progress`.
///
/// # Errors
///
/// [`ImageError::Uv`] when uv fails; [`ImageError::Venv`] / [`ImageError::Pip`]
/// when the pip fallback fails; [`ImageError::Spawn`] / [`ImageError::Io`].
pub(super) async fn build(
    base: &Path,
    dir: &Path,
    requirements: &str,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), ImageError> {
    let python_dir = dir.parent().unwrap_or(dir);
    let uv = super::uv::find_or_install(python_dir, base, progress).await;
    // Beside the environment, not in it: uv creates the folder itself.
    let req_file = python_dir.join(format!(
        "{}-{REQUIREMENTS_FILE}",
        dir.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    ));
    std::fs::write(&req_file, requirements).map_err(ImageError::io(&req_file))?;
    let result = match uv {
        Ok(uv) => {
            progress(&format!(
                "creating Python environment in {} with uv…",
                dir.display()
            ));
            super::uv::build(&uv, base, dir, &req_file, progress).await
        }
        Err(why) => {
            progress(&format!(
                "uv cannot be had ({why}); building with pip instead (slower, about half \
                 a minute)"
            ));
            build_with_pip(base, dir, &req_file, progress).await
        }
    };
    if result.is_ok() {
        // Kept in the environment, for whoever wonders what it was built from.
        let kept = dir.join(REQUIREMENTS_FILE);
        std::fs::rename(&req_file, &kept).map_err(ImageError::io(&kept))?;
    } else {
        let _ = std::fs::remove_file(&req_file);
    }
    result
}

/// `<base> -m venv <dir>`, then pip installs the requirements (pip compiles the
/// bytecode as it installs, so the folder is marked compiled).
async fn build_with_pip(
    base: &Path,
    dir: &Path,
    req_file: &Path,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), ImageError> {
    progress(&format!(
        "creating Python environment in {}…",
        dir.display()
    ));
    let mut venv = Command::new(base);
    venv.arg("-m").arg("venv").arg(dir);
    let (status, tail) = run_streaming(venv, base, progress).await?;
    if !status.success() {
        return Err(ImageError::Venv {
            python: base.to_path_buf(),
            dir: dir.to_path_buf(),
            status: status.to_string(),
            tail,
        });
    }

    progress("installing packages with pip (first run only, about half a minute)…");
    let python = venv_python(dir);
    let mut pip = pip_install(&python);
    pip.arg("-r").arg(req_file);
    let (status, tail) = run_streaming(pip, &python, progress).await?;
    if !status.success() {
        return Err(ImageError::Pip {
            dir: dir.to_path_buf(),
            status: status.to_string(),
            tail,
        });
    }
    let marker = dir.join(COMPILED_MARKER);
    write_atomically(&marker, b"compiled by pip\n").map_err(ImageError::io(&marker))
}
