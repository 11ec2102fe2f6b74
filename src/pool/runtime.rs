//! What the local pool's `GET metadata` (`aca-api.md` §4.4, 2025-02-02-preview
//! and later) says its sessions run, by container type: the runtimes (name and
//! version), the pre-installed packages and the Jupyter kernel.
//!
//! Each version is asked of the very program a session runs, with the
//! session's `PATH` ([`super::sandbox::env::kernel_env`]): the sandbox binds
//! the system folders read-only, so the files are the same inside and out.
//!
//! - **PythonLTS**: the interpreter's version, the environment's packages and
//!   ipykernel (with the IPython version it runs).
//! - **Shell**: `bash` (what each command runs in, `/bin/bash -c`) and the
//!   Python environment that is first on a session's `PATH`, with its
//!   packages; no Jupyter kernel (a shell session runs none that a client sees).
//! - **NodeLTS**: `node` alone, no packages (only Node's built-in modules can
//!   be required) and no Jupyter kernel.
//!
//! Azure documents the fields, not what a Shell or Node.js pool puts in them;
//! this is sessionpad's own choice, said in docs/local-pool.md ("What clients learn").

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::process::Command;

use super::image::{ImageError, PythonEnv};
use crate::protocol::ContainerType;

/// Why a runtime's version could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The Python environment could not be asked (see [`ImageError`]).
    #[error(transparent)]
    Python(#[from] ImageError),
    /// `program` could not be started, failed, or printed no version.
    #[error("cannot ask {program} its version: {detail}")]
    Query {
        /// The program asked (`/bin/bash`, `node`).
        program: String,
        /// What went wrong, from the operating system or the program's stderr.
        detail: String,
    },
}

/// The `metadata` document for a pool of `container_type` whose sessions use
/// the Python environment `env`: `runtimes`, `preInstalledPackages` and, for
/// Python, `jupyterKernel`; the caller adds the times and sessionpad's own
/// fields. Runs each runtime once (tens of milliseconds; the package list up
/// to half a second).
///
/// # Errors
///
/// [`RuntimeError`] when a runtime cannot be asked its version.
pub async fn describe(
    container_type: ContainerType,
    env: &PythonEnv,
) -> Result<Value, RuntimeError> {
    let python = || async {
        let (name, version) = env.runtime().await?;
        let packages = env.installed_packages().await?;
        Ok::<_, RuntimeError>((json!({"name": name, "version": version}), packages))
    };
    let listed = |packages: &[(String, String)]| -> Vec<Value> {
        packages
            .iter()
            .map(|(n, v)| json!({"name": n, "version": v}))
            .collect()
    };
    match container_type {
        ContainerType::Shell => {
            let bash = version_of(
                env,
                "/bin/bash",
                &[
                    "-c",
                    "echo \"${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}.${BASH_VERSINFO[2]}\"",
                ],
            )
            .await?;
            let (python, packages) = python().await?;
            Ok(json!({
                "runtimes": [{"name": "bash", "version": bash}, python],
                "preInstalledPackages": listed(&packages),
            }))
        }
        ContainerType::NodeLts => {
            let node = version_of(env, "node", &["-p", "process.versions.node"]).await?;
            Ok(json!({
                "runtimes": [{"name": "node", "version": node}],
                "preInstalledPackages": [],
            }))
        }
        _ => {
            let (python, packages) = python().await?;
            let version_of = |name: &str| {
                packages
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            // The kernel is ipykernel, with its own version; IPython (the
            // shell it runs) has another, named in the description.
            let ipython = version_of("ipython");
            Ok(json!({
                "runtimes": [python],
                "preInstalledPackages": listed(&packages),
                "jupyterKernel": {
                    "name": "ipykernel",
                    "version": version_of("ipykernel"),
                    "projectUrl": "https://github.com/ipython/ipykernel",
                    "description": format!("the IPython kernel for Jupyter, running IPython {ipython}, no libraries preloaded, so useEmptyKernel is how every session starts (sessionpad local pool)"),
                },
            }))
        }
    }
}

/// Runs `program args` with a session's environment (its `PATH` finds what a
/// session finds) and returns its first line of output, trimmed.
async fn version_of(env: &PythonEnv, program: &str, args: &[&str]) -> Result<String, RuntimeError> {
    let failed = |detail: String| RuntimeError::Query {
        program: program.to_string(),
        detail,
    };
    let mut session_env = super::sandbox::env::kernel_env(env.python.parent().map(Path::new), None);
    if program == "node"
        && let Some(node) = super::node::NodeInstall::of_this_process()
    {
        super::node::put_first_on_path(&mut session_env, &node.bin(false));
    }
    let out = Command::new(program)
        .args(args)
        .env_clear()
        .envs(session_env)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| failed(e.to_string()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let version = stdout.lines().next().unwrap_or_default().trim();
    if !out.status.success() || version.is_empty() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(failed(format!("{} {}", out.status, stderr.trim())));
    }
    Ok(version.to_string())
}
