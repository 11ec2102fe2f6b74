//! How a kernel is launched: its command, inside the sandbox (and the holder's
//! namespace of sized `/mnt/data` folders) or not, with its limits.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::process::Command;

use super::KernelError;
use crate::pool::data_fs::DataFs;
use crate::pool::image::PythonEnv;
use crate::pool::limits::{Enforcer, KernelLimits};
use crate::pool::node::{NodeInstall, put_first_on_path};
use crate::pool::process::Processes;
use crate::pool::sandbox::env::kernel_env;
use crate::pool::sandbox::python_view::PythonView;
use crate::pool::sandbox::{Jail, Sandbox};
use crate::protocol::ContainerType;

/// How a kernel is launched: the interpreter, the working folder, where its IPC
/// sockets go, and the sandbox and limits it runs under.
#[derive(Debug, Clone)]
pub struct KernelLaunch {
    /// The Python environment to run `-m ipykernel_launcher` with.
    pub env: PythonEnv,
    /// How a sandboxed kernel sees that environment (its folders at neutral
    /// paths, [`PythonView`]).
    pub python_view: Arc<PythonView>,
    /// The session's `/mnt/data` folder on this machine; the kernel's working
    /// directory.
    pub workdir: PathBuf,
    /// A short folder for the connection file and IPC sockets (socket paths must
    /// stay under about 100 bytes).
    pub runtime_dir: PathBuf,
    /// Run in the sandbox when `Some`; otherwise unisolated with `/mnt/data`
    /// mapped to `workdir` by the start-up script.
    pub sandbox: Option<Sandbox>,
    /// The session's host uid (and gid) when the sandbox drops root
    /// ([`Sandbox::drops_root`]); the runtime folder is given to it.
    pub uid: u32,
    /// The per-session limits and how they are enforced here.
    pub enforcer: Arc<Enforcer>,
    /// How the pool gives folders a size: the session folders' tmpfs and the
    /// runtime folder's small one, mounted on the host (a root pool) or in the
    /// holder's namespace, which a sandboxed kernel then starts in (see
    /// [`crate::pool::data_fs`]).
    pub data_fs: DataFs,
    /// The pool's kernel processes, which the new one joins as soon as it exists.
    pub processes: Arc<Processes>,
    /// What the pool's sessions run: a Shell pool's kernel also loads the shell
    /// runner (`assets/python/shell_session.py`), a NodeLTS pool's starts the
    /// session's Node.js process (`assets/python/node_session.py`); the pool
    /// calls them once per command or cell.
    pub container_type: ContainerType,
}

/// A kernel's command and what must live until it is spawned (inherited fds) or
/// as long as it runs (its limits).
pub(super) struct Launched {
    pub(super) command: Command,
    pub(super) _inherited: Vec<std::os::fd::OwnedFd>,
    pub(super) limits: KernelLimits,
    /// The pool's end of the sandbox's connect-notifier socket
    /// ([`crate::pool::sandbox::SandboxCommand::notify`]).
    pub(super) notify: Option<std::os::fd::OwnedFd>,
}

impl KernelLaunch {
    /// The Node.js a NodeLTS session runs when it is not a system one
    /// ([`NodeInstall`]); `None` for other container types.
    fn node(&self) -> Option<&'static NodeInstall> {
        (self.container_type == ContainerType::NodeLts)
            .then(NodeInstall::of_this_process)
            .flatten()
    }

    /// The kernel's command with `args` after the interpreter.
    pub(super) fn command(&self, args: &[String]) -> Result<Launched, KernelError> {
        let io = |path: &Path, source| KernelError::Io {
            path: path.to_path_buf(),
            source,
        };
        let limits = self.enforcer.prepare().map_err(KernelError::Limits)?;
        let (mut command, inherited, notify) = match &self.sandbox {
            Some(sandbox) => {
                let view = &self.python_view;
                let mut env = kernel_env(Some(&view.bin), None);
                if let Some(lib) = &view.ld_library_path {
                    env.push(("LD_LIBRARY_PATH".into(), lib.to_string_lossy().into_owned()));
                }
                if sandbox.egress_policy().proxied() {
                    // The relay in the session's namespace (no route out):
                    // HTTP and HTTPS go through the pool's egress proxy.
                    let url = crate::pool::egress::proxy_url();
                    for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
                        env.push((name.into(), url.clone()));
                    }
                    env.push(("NO_PROXY".into(), String::new()));
                    env.push(("no_proxy".into(), String::new()));
                }
                let mut mounts = view.mounts.clone();
                if let Some(node) = self.node() {
                    mounts.push(node.mount());
                    put_first_on_path(&mut env, &node.bin(true));
                }
                let jail = Jail {
                    program: &view.program,
                    args,
                    env: &env,
                    folder: &self.workdir,
                    runtime_dir: &self.runtime_dir,
                    python_mounts: &mounts,
                    uid: self.uid,
                    tmp_bytes: self.enforcer.limits().tmp_bytes,
                    nproc: limits.nproc(),
                };
                let built = sandbox
                    .command(&jail)
                    .map_err(|e| io(&self.runtime_dir, e))?;
                (built.command, built.inherited, built.notify)
            }
            None => {
                let mut env = kernel_env(self.env.python.parent(), Some(&self.workdir));
                if let Some(node) = self.node() {
                    put_first_on_path(&mut env, &node.bin(false));
                }
                let mut cmd = Command::new(&self.env.python);
                cmd.args(args)
                    .current_dir(&self.workdir)
                    .env_clear()
                    .envs(env);
                (cmd, Vec::new(), None)
            }
        };
        limits.apply_to(&mut command);
        // Last: the cgroup is joined with the pool's own credentials first.
        if let (Some(_), Some(holder)) = (&self.sandbox, self.data_fs.holder()) {
            holder.enter(&mut command);
        }
        Ok(Launched {
            command,
            _inherited: inherited,
            limits,
            notify,
        })
    }
}
