//! One IPython kernel, reached over the Jupyter messaging protocol on IPC sockets
//! (jupyter-zmq-client + jupyter-protocol). There is no kernel manager in those
//! crates, so this module starts the process, watches it, applies the execution
//! timeout (interrupt, then kill) and notices a kernel that died.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jupyter_protocol::connection_info::{ConnectionInfo, Transport};
use jupyter_protocol::{
    CompleteRequest, ExecuteRequest, InterruptRequest, JupyterMessage, JupyterMessageContent,
    KernelInfoRequest,
};
use jupyter_zmq_client::{
    ClientControlConnection, ClientIoPubConnection, ClientShellConnection,
    create_client_control_connection, create_client_iopub_connection,
    create_client_shell_connection_with_identity, peer_identity_for_session,
};
use tokio::sync::Mutex;

use super::data_fs::DataFs;
use super::limits::KernelLimits;
use super::process::{KernelProcess, Processes};
use super::sandbox::Sandbox;
use crate::protocol::{ContainerType, Execution};
mod complete;
mod launch;
mod outputs;
mod relay;
mod warm;
mod zmtp;
pub use complete::Completion;
pub use launch::KernelLaunch;
use launch::Launched;
use outputs::Run;
pub use outputs::{MAX_IMAGE_BYTES, MAX_RESULT_BYTES, MAX_STREAM_BYTES, OutputLimits};
pub use relay::MAX_KERNEL_MESSAGE_BYTES;
use relay::{Relay, Tripped};

/// The private MIME type under which the kernel start-up script publishes the
/// JSON-typed value of a cell's last expression (`assets/python/kernel_startup.py`).
const VALUE_MIME: &str = "application/vnd.sessionpad.value+json";
const STARTUP_PY: &str = include_str!("../../../assets/python/kernel_startup.py");
/// Run after [`STARTUP_PY`] in the kernels of a Shell pool: the function that
/// runs one shell command per call (`assets/python/shell_session.py`).
const SHELL_PY: &str = include_str!("../../../assets/python/shell_session.py");
/// Run after [`STARTUP_PY`] in the kernels of a NodeLTS pool: starts the
/// session's Node.js process and defines the call that runs one cell of
/// JavaScript in it (`assets/python/node_session.py`).
const NODE_PY: &str = include_str!("../../../assets/python/node_session.py");
/// The Node.js program of a NodeLTS session: one persistent `vm` context
/// (`assets/node/session.js`).
const NODE_JS: &str = include_str!("../../../assets/node/session.js");
/// How long a kernel may take from spawn to answering `kernel_info_request`.
const START_LIMIT: Duration = Duration::from_secs(60);
/// How long an interrupted kernel gets to become idle before it is killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(3);
/// How long sending `interrupt_request` and reading its reply may take each.
const INTERRUPT_WAIT: Duration = Duration::from_secs(1);

/// Errors starting a kernel.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// The runtime folder or connection file could not be written.
    #[error("kernel runtime folder {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The interpreter could not be started.
    #[error("cannot start the kernel ({python}): {source}")]
    Spawn {
        /// The interpreter.
        python: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The process started but never answered on its sockets.
    #[error("the kernel did not become ready: {0}")]
    NotReady(String),
    /// The kernel's limits could not be set up (its cgroup); the text says why.
    #[error("cannot limit the kernel: {0}")]
    Limits(String),
}

/// A running IPython kernel.
pub struct Kernel {
    process: KernelProcess,
    shell: ClientShellConnection,
    iopub: ClientIoPubConnection,
    /// Shared with [`Interrupter`]s, which reach it while an execution holds the
    /// kernel itself.
    control: Arc<Mutex<ClientControlConnection>>,
    /// Unmounted and removed when the kernel goes (held for its `Drop`).
    _runtime: RuntimeFolder,
    dead: bool,
    /// The kernel's cgroup and rlimits (the cgroup goes when the kernel does).
    limits: KernelLimits,
    /// Between the pool's sockets and the kernel's: stops a message over
    /// [`MAX_KERNEL_MESSAGE_BYTES`].
    relay: Relay,
    /// What records the session's network attempts (issue 29).
    network: SessionNetwork,
}

/// What records a session's network attempts (issue 29), where it has a
/// network namespace of its own (a sandbox without `--egress`): the log, the
/// egress proxy (an allow-list or audit) and the connect watch; all `None`
/// otherwise.
#[derive(Debug, Default)]
struct SessionNetwork {
    log: Option<Arc<crate::pool::egress::NetworkLog>>,
    proxy: Option<crate::pool::egress::EgressProxy>,
    direct: Option<crate::pool::egress::direct::DirectWatch>,
}

impl SessionNetwork {
    /// The log, and the proxy listening before the kernel starts in the
    /// runtime folder the sandbox binds (`pool_dir` is the pool's view of
    /// it), where the sandbox's relay reaches it.
    ///
    /// # Errors
    ///
    /// [`KernelError::Io`] when the proxy's socket cannot be bound.
    fn before_spawn(launch: &KernelLaunch, pool_dir: &Path) -> Result<Self, KernelError> {
        use crate::pool::egress::{EgressProxy, NetworkLog, SOCKET_NAME};
        let Some(policy) = launch
            .sandbox
            .as_ref()
            .map(Sandbox::egress_policy)
            .filter(|p| !p.host_network())
        else {
            return Ok(Self::default());
        };
        let log = Arc::new(NetworkLog::default());
        let proxy = if policy.proxied() {
            let socket = pool_dir.join(SOCKET_NAME);
            let pool_port = launch.sandbox.as_ref().and_then(Sandbox::pool_port);
            let proxy = EgressProxy::start(policy.clone(), &socket, Arc::clone(&log), pool_port)
                .map_err(|source| KernelError::Io {
                    path: launch.runtime_dir.join(SOCKET_NAME),
                    source,
                })?;
            Some(proxy)
        } else {
            None
        };
        Ok(Self {
            log: Some(log),
            proxy,
            direct: None,
        })
    }

    /// Starts the connect watch on the pool's end of the sandbox's notifier
    /// socket ([`Launched::notify`]).
    ///
    /// # Errors
    ///
    /// The socket cannot be registered with the runtime.
    fn watch(&mut self, notify: Option<std::os::fd::OwnedFd>) -> std::io::Result<()> {
        if let (Some(socket), Some(log)) = (notify, &self.log) {
            self.direct = Some(crate::pool::egress::direct::DirectWatch::start(
                socket,
                Arc::clone(log),
                self.proxy.is_some(),
            )?);
        }
        Ok(())
    }
}

impl Kernel {
    /// Starts a kernel and waits until it answers `kernel_info_request` and its
    /// IOPub channel delivers messages (so no output of the first execution is lost).
    ///
    /// Cancelling it (dropping the future) kills the process tree started so far.
    ///
    /// # Errors
    ///
    /// [`KernelError::Io`] for the runtime folder, [`KernelError::Spawn`]
    /// when the interpreter cannot start (or the pool is closing),
    /// [`KernelError::NotReady`] when it exits or stays silent for 60 s.
    pub async fn start(launch: &KernelLaunch) -> Result<Self, KernelError> {
        let dir = &launch.runtime_dir;
        let io = |path: &Path, source| KernelError::Io {
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let sandboxed = launch.sandbox.is_some();
        let runtime = RuntimeFolder {
            dir: dir.clone(),
            fs: if sandboxed {
                launch.data_fs.clone()
            } else {
                DataFs::Plain
            },
        };
        if launch.sandbox.as_ref().is_some_and(Sandbox::drops_root) {
            // Only the session's uid (and the pool) may enter: the connection
            // file holds the kernel's key.
            use std::os::unix::fs::PermissionsExt;
            std::os::unix::fs::chown(dir, Some(launch.uid), Some(launch.uid))
                .map_err(|e| io(dir, e))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| io(dir, e))?;
        }
        // A sandboxed kernel writes its sockets in a tmpfs of its own size, so
        // no session can fill the host's disk through it.
        runtime
            .fs
            .mount(dir, RUNTIME_BYTES, launch.uid)
            .map_err(|e| io(dir, e))?;
        // Where the pool reaches that folder (the holder's view, or itself).
        let pool_dir = runtime.fs.view(dir);
        let info = ipc_connection(
            dir.join("k").to_string_lossy().into_owned(),
            uuid::Uuid::new_v4().simple().to_string(),
        );
        let conn_file = dir.join("connection.json");
        let json = serde_json::to_vec(&info).map_err(|e| io(&conn_file, e.into()))?;
        std::fs::write(pool_dir.join("connection.json"), json).map_err(|e| io(&conn_file, e))?;
        let startup = dir.join("startup.py");
        std::fs::write(pool_dir.join("startup.py"), STARTUP_PY).map_err(|e| io(&startup, e))?;
        let mut exec_files = vec![startup];
        // (file name, text, whether the kernel runs it at start)
        let extra: &[(&str, &str, bool)] = match launch.container_type {
            ContainerType::Shell => &[("shell.py", SHELL_PY, true)],
            ContainerType::NodeLts => &[("session.js", NODE_JS, false), ("node.py", NODE_PY, true)],
            _ => &[],
        };
        for &(name, text, run) in extra {
            let path = dir.join(name);
            std::fs::write(pool_dir.join(name), text).map_err(|e| io(&path, e))?;
            if run {
                exec_files.push(path);
            }
        }

        let args = [
            "-m".to_string(),
            "ipykernel_launcher".to_string(),
            "-f".to_string(),
            conn_file.to_string_lossy().into_owned(),
            "--InteractiveShell.colors=nocolor".to_string(),
            "--InteractiveShell.xmode=Plain".to_string(),
            format!("--IPKernelApp.exec_files={}", py_list(&exec_files)),
        ];
        let mut network = SessionNetwork::before_spawn(launch, &pool_dir)?;
        let Launched {
            command: mut cmd,
            _inherited: inherited,
            limits,
            notify,
        } = launch.command(&args)?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let process = launch
            .processes
            .spawn(&mut cmd)
            .map_err(|source| KernelError::Spawn {
                python: launch.env.python.clone(),
                source,
            })?;
        drop(inherited);
        network.watch(notify).map_err(|e| io(dir, e))?;
        // The pool's side of the kernel's sockets: the same files, through the
        // pool's view of the runtime folder.
        let mut pool_info = info.clone();
        pool_info.ip = pool_dir.join("k").to_string_lossy().into_owned();
        let mut kernel = Self::connect(process, limits, &pool_info, runtime).await?;
        kernel.network = network;
        kernel.wait_ready().await?;
        Ok(kernel)
    }

    /// The network attempts the session made since the last call, through
    /// its egress proxy and directly ([`crate::pool::egress::NetworkLog::take`]);
    /// none when nothing records them (unsandboxed, or `--egress`).
    pub fn take_network(&self) -> Vec<crate::protocol::egress::NetworkAttempt> {
        self.network
            .log
            .as_deref()
            .map(crate::pool::egress::NetworkLog::take)
            .unwrap_or_default()
    }

    async fn connect(
        mut process: KernelProcess,
        limits: KernelLimits,
        info: &ConnectionInfo,
        runtime: RuntimeFolder,
    ) -> Result<Self, KernelError> {
        let session_id = uuid::Uuid::new_v4().to_string();
        let not_ready = |e: jupyter_zmq_client::RuntimeError| KernelError::NotReady(e.to_string());
        // The pool's sockets reach the kernel's through the relay, in a folder
        // beside the runtime folder (which the sandbox binds; this one it does not).
        let relay_dir = PathBuf::from(format!("{}.relay", runtime.dir.display()));
        let (relay, info) = Relay::start(info, &relay_dir).map_err(|source| KernelError::Io {
            path: relay_dir.clone(),
            source,
        })?;
        let info = &info;
        // The kernel binds its sockets a moment after it starts; connecting to an
        // IPC path that does not exist yet fails, so retry until the socket file
        // appears or the process exits.
        let shell_path = PathBuf::from(format!("{}-{}", info.ip, info.shell_port));
        let deadline = Instant::now() + START_LIMIT;
        while !shell_path.exists() {
            if let Some(status) = process.try_wait() {
                return Err(KernelError::NotReady(format!(
                    "the kernel exited ({status})"
                )));
            }
            if Instant::now() > deadline {
                return Err(KernelError::NotReady("no shell socket after 60 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let identity = peer_identity_for_session(&session_id).map_err(not_ready)?;
        let shell = create_client_shell_connection_with_identity(info, &session_id, identity)
            .await
            .map_err(not_ready)?;
        let iopub = create_client_iopub_connection(info, "", &session_id)
            .await
            .map_err(not_ready)?;
        let control = create_client_control_connection(info, &session_id)
            .await
            .map_err(not_ready)?;
        Ok(Self {
            process,
            shell,
            iopub,
            control: Arc::new(Mutex::new(control)),
            _runtime: runtime,
            dead: false,
            limits,
            relay,
            network: SessionNetwork::default(),
        })
    }

    /// Sends `kernel_info_request` until one is answered on shell and its status
    /// messages arrive on IOPub (the subscription is then established).
    async fn wait_ready(&mut self) -> Result<(), KernelError> {
        let deadline = Instant::now() + START_LIMIT;
        loop {
            if Instant::now() > deadline {
                return Err(KernelError::NotReady(
                    "no kernel_info_reply after 60 s".into(),
                ));
            }
            if let Some(status) = self.process.try_wait() {
                return Err(KernelError::NotReady(format!(
                    "the kernel exited ({status})"
                )));
            }
            let request: JupyterMessage = KernelInfoRequest {}.into();
            let msg_id = request.header.msg_id.clone();
            self.shell
                .send(request)
                .await
                .map_err(|e| KernelError::NotReady(e.to_string()))?;
            // Wait for the reply, then for an IOPub message of that request.
            let reply = tokio::time::timeout(Duration::from_secs(5), self.shell.read()).await;
            if !matches!(reply, Ok(Ok(_))) {
                continue;
            }
            let until = Instant::now() + Duration::from_millis(300);
            while let Ok(Ok(msg)) = tokio::time::timeout_at(until.into(), self.iopub.read()).await {
                if parent_id(&msg) == Some(msg_id.as_str()) {
                    return Ok(());
                }
            }
        }
    }

    /// Whether the session reached its process limit (a fork bomb): its tree is
    /// then killed, as the only way to clean it up.
    fn over_process_limit(&self) -> bool {
        let pid = self.process.pid();
        self.limits
            .hit_process_limit(|| super::process::tree_size(pid))
    }

    /// True once the kernel process has exited or been killed, or sent a
    /// message over [`MAX_KERNEL_MESSAGE_BYTES`] (it is then killed: its
    /// channel was cut).
    pub fn is_dead(&mut self) -> bool {
        if !self.dead && self.relay.tripped_now().is_some() {
            self.kill();
        }
        if !self.dead && self.process.try_wait().is_some() {
            self.dead = true;
        }
        self.dead
    }

    /// Runs `code` and collects its outputs until the kernel is idle again.
    ///
    /// Never fails and never hangs: a Python exception gives a `Failed` execution
    /// with the traceback in `stderr`; after `timeout` the kernel is interrupted
    /// (and killed if it does not yield within 3 s) and the execution fails with
    /// the service's timeout text; a kernel that dies gives a `Failed` execution
    /// and [`Kernel::is_dead`] turns true.
    ///
    /// Output is bounded while it is collected: stdout and stderr keep at most
    /// the pool's stream limit each ([`MAX_STREAM_BYTES`] by default; then a
    /// marker says how much was printed and dropped), images
    /// [`MAX_IMAGE_BYTES`], the value [`MAX_RESULT_BYTES`], and less under the
    /// [`OutputLimits`] of an enclosing [`OutputLimits::scope`]. A cut execution
    /// keeps the status of its code.
    pub async fn execute(&mut self, code: &str, timeout: Duration) -> Execution {
        let started = Instant::now();
        let mut run = Run::capped(OutputLimits::current(), self.limits.stream_bytes());
        if self.is_dead() {
            run.died();
            return run.finish(started);
        }
        let request: JupyterMessage = ExecuteRequest::new(code.to_string()).into();
        let msg_id = request.header.msg_id.clone();
        if let Err(e) = self.shell.send(request).await {
            run.not_sent(&e.to_string());
            self.kill();
            return run.finish(started);
        }
        let deadline = tokio::time::Instant::now() + timeout;
        match self.collect(&msg_id, &mut run, Some(deadline)).await {
            Collect::Idle | Collect::TimedOut if self.over_process_limit() => {
                run.too_many_processes(self.limits.processes());
                self.kill();
            }
            Collect::Idle => {}
            Collect::Died if self.limits.oom_killed() => {
                run.out_of_memory(self.limits.memory_bytes());
            }
            Collect::Died => run.died(),
            Collect::Refused(tripped) => self.refused(&mut run, tripped),
            Collect::TimedOut => {
                self.interrupt().await;
                let grace = tokio::time::Instant::now() + INTERRUPT_GRACE;
                let mut ignored = Run::discarding();
                let stopped = matches!(
                    self.collect(&msg_id, &mut ignored, Some(grace)).await,
                    Collect::Idle
                );
                if !stopped {
                    self.kill();
                }
                run.timed_out(timeout, !stopped);
            }
        }
        // The execute_reply on shell belongs to this request; drain it so the next
        // execution does not read a stale reply.
        if self.relay.tripped_now().is_none() && !self.is_dead() {
            let _ = tokio::time::timeout(Duration::from_millis(200), self.shell.read()).await;
        }
        // A message over the cap on another channel (shell, control) ends it too.
        if let (false, Some(tripped)) = (self.dead, self.relay.tripped_now()) {
            self.refused(&mut run, tripped);
        }
        run.finish(started)
    }

    /// The kernel sent a message over [`MAX_KERNEL_MESSAGE_BYTES`] (or broke
    /// the framing): the relay cut that channel, so the kernel is killed and
    /// the execution fails saying why.
    fn refused(&mut self, run: &mut Run, tripped: Tripped) {
        run.aborted(&tripped.explain());
        self.kill();
    }

    /// Reads IOPub until the kernel reports idle for `msg_id`, the deadline
    /// passes or the process exits.
    async fn collect(
        &mut self,
        msg_id: &str,
        run: &mut Run,
        deadline: Option<tokio::time::Instant>,
    ) -> Collect {
        let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
        let deadline = deadline.unwrap_or(far);
        loop {
            tokio::select! {
                msg = self.iopub.read() => match msg {
                    Ok(msg) if parent_id(&msg) == Some(msg_id) => {
                        if run.take(msg.content) {
                            return Collect::Idle;
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!("iopub read failed: {e}");
                        if let Some(tripped) = self.relay.tripped_now() {
                            return Collect::Refused(tripped);
                        }
                        if self.is_dead() {
                            return Collect::Died;
                        }
                    }
                },
                () = self.process.wait() => {
                    self.dead = true;
                    return Collect::Died;
                }
                tripped = self.relay.tripped() => return Collect::Refused(tripped),
                () = tokio::time::sleep_until(deadline) => return Collect::TimedOut,
            }
        }
    }

    /// Asks the kernel to interrupt the running code (`interrupt_request` on the
    /// control channel; a `KeyboardInterrupt` is raised in the cell).
    pub async fn interrupt(&mut self) {
        self.interrupter().interrupt().await;
    }

    /// A handle that interrupts (or kills) this kernel without the `&mut` an
    /// execution holds.
    pub fn interrupter(&self) -> Interrupter {
        Interrupter {
            control: self.control.clone(),
            group: self.process.pid(),
            processes: self.process.processes().clone(),
        }
    }

    /// Kills the kernel's processes (in the sandbox, its init too) at once.
    pub fn kill(&mut self) {
        self.process.kill();
        self.dead = true;
    }

    /// Kills the kernel's processes and waits for the kernel to be reaped.
    pub async fn shutdown(mut self) {
        self.process.kill();
        self.process.wait().await;
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.process.kill();
    }
}

/// The size of a sandboxed kernel's runtime folder (its connection file,
/// start-up scripts and IPC sockets), bytes.
pub const RUNTIME_BYTES: u64 = 1 << 20;

/// A kernel's runtime folder: on the host, a tmpfs of [`RUNTIME_BYTES`] on it
/// for a sandboxed kernel; unmounted and removed when dropped (a kernel that
/// ends, or one that failed to start).
struct RuntimeFolder {
    dir: PathBuf,
    fs: DataFs,
}

impl Drop for RuntimeFolder {
    fn drop(&mut self) {
        self.fs.unmount(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Interrupts one kernel's running code from outside its execution (the control
/// channel is separate from shell and IOPub, which the execution reads).
#[derive(Clone)]
pub struct Interrupter {
    control: Arc<Mutex<ClientControlConnection>>,
    /// The kernel's process group, for [`Interrupter::kill`].
    group: u32,
    processes: Arc<Processes>,
}

impl Interrupter {
    /// Kills the kernel's process tree now (a session ended while it executes);
    /// the execution then sees the kernel die. Nothing happens once the kernel
    /// was reaped.
    pub fn kill(&self) {
        self.processes.kill_group(self.group);
    }

    /// Sends `interrupt_request` on the control channel and waits (briefly) for
    /// the reply; true when the kernel acknowledged it. Bounded in time, so a dead
    /// kernel (no peer on the socket) cannot hang the caller.
    pub async fn interrupt(&self) -> bool {
        let mut control = self.control.lock().await;
        let request: JupyterMessage = InterruptRequest {}.into();
        match tokio::time::timeout(INTERRUPT_WAIT, control.send(request)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!("interrupt_request not sent: {e}");
                return false;
            }
            Err(_) => return false,
        }
        matches!(
            tokio::time::timeout(INTERRUPT_WAIT, control.read()).await,
            Ok(Ok(_))
        )
    }
}

enum Collect {
    Idle,
    Died,
    TimedOut,
    /// The relay stopped a channel ([`Relay::tripped`]).
    Refused(Tripped),
}

/// A kernel's connection over IPC: its sockets are `<ip>-1` (shell) to
/// `<ip>-5` (heartbeat), messages signed with HMAC-SHA256 and `key`.
fn ipc_connection(ip: String, key: String) -> ConnectionInfo {
    ConnectionInfo {
        ip,
        transport: Transport::IPC,
        shell_port: 1,
        iopub_port: 2,
        stdin_port: 3,
        control_port: 4,
        hb_port: 5,
        key,
        signature_scheme: "hmac-sha256".into(),
        kernel_name: Some("python3".into()),
    }
}

fn parent_id(msg: &JupyterMessage) -> Option<&str> {
    msg.parent_header.as_ref().map(|h| h.msg_id.as_str())
}

/// A Python list literal of paths, for a traitlets command-line value.
fn py_list(paths: &[PathBuf]) -> String {
    let items: Vec<String> = paths
        .iter()
        .map(|path| {
            let escaped = path
                .to_string_lossy()
                .replace('\\', "\\\\")
                .replace('\'', "\\'");
            format!("'{escaped}'")
        })
        .collect();
    format!("[{}]", items.join(", "))
}
