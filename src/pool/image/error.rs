//! Errors of the Python environment builder, each with what to do about it.

use std::io;
use std::path::{Path, PathBuf};

use super::{BASE_PYTHON_VAR, MIN_PYTHON};

/// Why no usable Python environment could be found or built. Every message says
/// what went wrong and what the user can do about it.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// No base interpreter to build the environment with.
    #[error(
        "no Python 3 interpreter found ({looked_for}); install Python {}.{} or newer \
         with its venv module, set {BASE_PYTHON_VAR} to one, or pass --python PATH \
         to an interpreter that has ipykernel",
        MIN_PYTHON.0, MIN_PYTHON.1
    )]
    NoPython {
        /// What was searched, e.g. "python3 and python on PATH".
        looked_for: String,
    },
    /// The base interpreter is older than the requirements need.
    #[error(
        "{python} is Python {version}, but the local pool needs Python {}.{} or newer; \
         set {BASE_PYTHON_VAR} to a newer interpreter or pass --python PATH",
        MIN_PYTHON.0, MIN_PYTHON.1
    )]
    PythonTooOld {
        /// The interpreter that was asked.
        python: PathBuf,
        /// The version it reported (e.g. "3.9").
        version: String,
    },
    /// A program could not be started at all (missing, not executable, …).
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program that was started.
        program: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// An interpreter ran but did not answer a question the way expected (its
    /// version, its installed packages).
    #[error("{python} could not report {what}: {detail}")]
    Query {
        /// The interpreter that was asked.
        python: PathBuf,
        /// What was asked, e.g. "its version".
        what: &'static str,
        /// Exit status and the last lines of its output, or the parse error.
        detail: String,
    },
    /// `python -m venv` failed.
    #[error(
        "creating the Python environment in {dir} with `{python} -m venv` failed \
         ({status}); last output:\n{tail}\n(on Debian and Ubuntu the venv module is in \
         the python3-venv package; or pass --python PATH to an interpreter that has \
         ipykernel)"
    )]
    Venv {
        /// The base interpreter.
        python: PathBuf,
        /// The environment folder that was being created.
        dir: PathBuf,
        /// How the command ended.
        status: String,
        /// The last lines of its output.
        tail: String,
    },
    /// `pip install` into the new environment failed.
    #[error(
        "installing the Python packages into {dir} failed ({status}); last lines of \
         pip output:\n{tail}\nCheck that PyPI is reachable (or set PIP_INDEX_URL / \
         HTTPS_PROXY) and start again, or pass --python PATH to an interpreter that \
         has ipykernel"
    )]
    Pip {
        /// The environment folder.
        dir: PathBuf,
        /// How pip ended.
        status: String,
        /// The last lines of pip's output.
        tail: String,
    },
    /// A step of the build with uv failed (uv's own message is in `tail`).
    #[error(
        "{step} in {dir} with uv failed ({status}); last lines of uv output:\n{tail}\n\
         Check that PyPI is reachable (or set UV_INDEX_URL or PIP_INDEX_URL, \
         HTTPS_PROXY) and start again, or pass --python PATH to an interpreter that \
         has ipykernel"
    )]
    Uv {
        /// What was being done, e.g. "installing the packages".
        step: &'static str,
        /// The environment folder.
        dir: PathBuf,
        /// How uv ended.
        status: String,
        /// The last lines of uv's output.
        tail: String,
    },
    /// The interpreter given with `--python` cannot import ipykernel.
    #[error(
        "{python} cannot import ipykernel ({detail}); install it with \
         `{python} -m pip install ipykernel`, or leave out --python so that sessionpad \
         builds its own Python environment"
    )]
    MissingIpykernel {
        /// The interpreter given.
        python: PathBuf,
        /// Its last line of error output, or its exit status.
        detail: String,
    },
    /// A file or folder of the environment could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder concerned.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

impl ImageError {
    pub(super) fn io(path: &Path) -> impl FnOnce(io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(super) fn spawn(program: &Path) -> impl FnOnce(io::Error) -> Self + '_ {
        move |source| Self::Spawn {
            program: program.to_path_buf(),
            source,
        }
    }
}
