//! One IPython kernel, reached over the Jupyter messaging protocol on IPC sockets
//! (jupyter-zmq-client + jupyter-protocol). There is no kernel manager in those
//! crates, so this module starts the process, watches it, applies the execution
//! timeout (interrupt, then kill) and notices a kernel that died.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use jupyter_protocol::connection_info::{ConnectionInfo, Transport};
use jupyter_protocol::{
    ExecuteRequest, ExecutionState, InterruptRequest, JupyterMessage, JupyterMessageContent,
    KernelInfoRequest, MediaType, Stdio as StreamName,
};
use jupyter_zmq_client::{
    ClientControlConnection, ClientIoPubConnection, ClientShellConnection,
    create_client_control_connection, create_client_iopub_connection,
    create_client_shell_connection_with_identity, peer_identity_for_session,
};
use tokio::process::Command;
use tokio::sync::Mutex;

use super::image::PythonEnv;
use super::limits::{Enforcer, KernelLimits};
use super::process::{KernelProcess, Processes};
use super::sandbox::env::kernel_env;
use super::sandbox::{Jail, Sandbox};
use crate::client::{Execution, ExecutionImage, ExecutionStatus};

/// The private MIME type under which the kernel start-up script publishes the
/// JSON-typed value of a cell's last expression (`assets/python/kernel_startup.py`).
const VALUE_MIME: &str = "application/vnd.sessionpad.value+json";
const STARTUP_PY: &str = include_str!("../../assets/python/kernel_startup.py");
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

/// How a kernel is launched: the interpreter, the working folder, where its IPC
/// sockets go, and the sandbox and limits it runs under.
#[derive(Debug, Clone)]
pub struct KernelLaunch {
    /// The Python environment to run `-m ipykernel_launcher` with.
    pub env: PythonEnv,
    /// The folders of that environment a sandbox binds read-only
    /// ([`super::sandbox::binds::python_dirs`]).
    pub python_dirs: Arc<Vec<PathBuf>>,
    /// The session's `/mnt/data` folder on this machine; the kernel's working
    /// directory.
    pub workdir: PathBuf,
    /// A short folder for the connection file and IPC sockets (socket paths must
    /// stay under about 100 bytes).
    pub runtime_dir: PathBuf,
    /// Run under bubblewrap when `Some`; otherwise unisolated with `/mnt/data`
    /// mapped to `workdir` by the start-up script.
    pub sandbox: Option<Sandbox>,
    /// The session's host uid (and gid) when the sandbox drops root
    /// ([`Sandbox::drops_root`]); the runtime folder is given to it.
    pub uid: u32,
    /// The per-session limits and how they are enforced here.
    pub enforcer: Arc<Enforcer>,
    /// The pool's kernel processes, which the new one joins as soon as it exists.
    pub processes: Arc<Processes>,
}

/// A kernel's command and what must live until it is spawned (inherited fds) or
/// as long as it runs (its limits).
struct Launched {
    command: Command,
    _inherited: Vec<std::os::fd::OwnedFd>,
    limits: KernelLimits,
}

impl KernelLaunch {
    fn command(&self) -> Result<Launched, KernelError> {
        let io = |path: &Path, source| KernelError::Io {
            path: path.to_path_buf(),
            source,
        };
        let limits = self.enforcer.prepare().map_err(KernelError::Limits)?;
        let python_bin = self.env.python.parent();
        let (mut command, inherited) = match &self.sandbox {
            Some(sandbox) => {
                let jail = Jail {
                    program: &self.env.python,
                    folder: &self.workdir,
                    runtime_dir: &self.runtime_dir,
                    python_dirs: &self.python_dirs,
                    uid: self.uid,
                    tmp_bytes: self.enforcer.limits().tmp_bytes,
                    prlimit: &limits.prlimit_args(),
                };
                let built = sandbox
                    .command(&jail)
                    .map_err(|e| io(&self.runtime_dir, e))?;
                let mut cmd = built.command;
                cmd.env_clear().envs(kernel_env(python_bin, None));
                (cmd, built.inherited)
            }
            None => {
                let mut cmd = Command::new(&self.env.python);
                cmd.current_dir(&self.workdir)
                    .env_clear()
                    .envs(kernel_env(python_bin, Some(&self.workdir)));
                (cmd, Vec::new())
            }
        };
        limits.apply_to(&mut command);
        Ok(Launched {
            command,
            _inherited: inherited,
            limits,
        })
    }
}

/// A running IPython kernel.
pub struct Kernel {
    process: KernelProcess,
    shell: ClientShellConnection,
    iopub: ClientIoPubConnection,
    /// Shared with [`Interrupter`]s, which reach it while an execution holds the
    /// kernel itself.
    control: Arc<Mutex<ClientControlConnection>>,
    runtime_dir: PathBuf,
    dead: bool,
    /// The kernel's cgroup and rlimits (the cgroup goes when the kernel does).
    limits: KernelLimits,
}

impl Kernel {
    /// Starts a kernel and waits until it answers `kernel_info_request` and its
    /// IOPub channel delivers messages (so no output of the first execution is lost).
    ///
    /// Errors: [`KernelError::Io`] for the runtime folder, [`KernelError::Spawn`]
    /// when the interpreter cannot start (or the pool is closing),
    /// [`KernelError::NotReady`] when it exits or stays silent for 60 s.
    ///
    /// Cancelling it (dropping the future) kills the process tree started so far.
    pub async fn start(launch: &KernelLaunch) -> Result<Self, KernelError> {
        let dir = &launch.runtime_dir;
        let io = |path: &Path, source| KernelError::Io {
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        if launch.sandbox.as_ref().is_some_and(Sandbox::drops_root) {
            // Only the session's uid (and the pool) may enter: the connection
            // file holds the kernel's key.
            use std::os::unix::fs::PermissionsExt;
            std::os::unix::fs::chown(dir, Some(launch.uid), Some(launch.uid))
                .map_err(|e| io(dir, e))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| io(dir, e))?;
        }
        let info = ConnectionInfo {
            ip: dir.join("k").to_string_lossy().into_owned(),
            transport: Transport::IPC,
            shell_port: 1,
            iopub_port: 2,
            stdin_port: 3,
            control_port: 4,
            hb_port: 5,
            key: uuid::Uuid::new_v4().simple().to_string(),
            signature_scheme: "hmac-sha256".into(),
            kernel_name: Some("python3".into()),
        };
        let conn_file = dir.join("connection.json");
        let json = serde_json::to_vec(&info).map_err(|e| io(&conn_file, e.into()))?;
        std::fs::write(&conn_file, json).map_err(|e| io(&conn_file, e))?;
        let startup = dir.join("startup.py");
        std::fs::write(&startup, STARTUP_PY).map_err(|e| io(&startup, e))?;

        let Launched {
            command: mut cmd,
            _inherited,
            limits,
        } = launch.command()?;
        cmd.arg("-m")
            .arg("ipykernel_launcher")
            .arg("-f")
            .arg(&conn_file)
            .arg("--InteractiveShell.colors=nocolor")
            .arg("--InteractiveShell.xmode=Plain")
            .arg(format!("--IPKernelApp.exec_files={}", py_list(&startup)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let process = launch
            .processes
            .spawn(&mut cmd)
            .map_err(|source| KernelError::Spawn {
                python: launch.env.python.clone(),
                source,
            })?;
        drop(_inherited);
        let mut kernel = Self::connect(process, limits, &info, dir.clone()).await?;
        kernel.wait_ready().await?;
        Ok(kernel)
    }

    async fn connect(
        mut process: KernelProcess,
        limits: KernelLimits,
        info: &ConnectionInfo,
        runtime_dir: PathBuf,
    ) -> Result<Self, KernelError> {
        let session_id = uuid::Uuid::new_v4().to_string();
        let not_ready = |e: jupyter_zmq_client::RuntimeError| KernelError::NotReady(e.to_string());
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
            runtime_dir,
            dead: false,
            limits,
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

    /// True once the kernel process has exited or been killed.
    pub fn is_dead(&mut self) -> bool {
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
    /// [`MAX_STREAM_BYTES`] each (then a marker says how much was printed), images
    /// [`MAX_IMAGE_BYTES`], the value [`MAX_RESULT_BYTES`], and less under the
    /// [`OutputLimits`] of an enclosing [`OutputLimits::scope`]. A cut execution
    /// keeps the status of its code.
    pub async fn execute(&mut self, code: &str, timeout: Duration) -> Execution {
        let started = Instant::now();
        let mut run = Run::new(OutputLimits::current());
        if self.is_dead() {
            run.died();
            return run.finish(started);
        }
        let request: JupyterMessage = ExecuteRequest::new(code.to_string()).into();
        let msg_id = request.header.msg_id.clone();
        if let Err(e) = self.shell.send(request).await {
            run.stderr
                .notice(&format!("cannot send the code to the kernel: {e}\n"));
            run.failed = true;
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
            Collect::TimedOut => {
                run.timed_out();
                self.interrupt().await;
                let grace = tokio::time::Instant::now() + INTERRUPT_GRACE;
                let mut ignored = Run::discarding();
                if !matches!(
                    self.collect(&msg_id, &mut ignored, Some(grace)).await,
                    Collect::Idle
                ) {
                    self.kill();
                }
            }
        }
        // The execute_reply on shell belongs to this request; drain it so the next
        // execution does not read a stale reply.
        if !self.is_dead() {
            let _ = tokio::time::timeout(Duration::from_millis(200), self.shell.read()).await;
        }
        run.finish(started)
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
                        if self.is_dead() {
                            return Collect::Died;
                        }
                    }
                },
                () = self.process.wait() => {
                    self.dead = true;
                    return Collect::Died;
                }
                _ = tokio::time::sleep_until(deadline) => return Collect::TimedOut,
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

    /// Kills the kernel's processes (under bubblewrap, the sandbox too) at once.
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
        let _ = std::fs::remove_dir_all(&self.runtime_dir);
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
}

fn parent_id(msg: &JupyterMessage) -> Option<&str> {
    msg.parent_header.as_ref().map(|h| h.msg_id.as_str())
}

/// A Python list literal of one path, for a traitlets command-line value.
fn py_list(path: &Path) -> String {
    let escaped = path
        .to_string_lossy()
        .replace('\\', "\\\\")
        .replace('\'', "\\'");
    format!("['{escaped}']")
}

/// Most bytes of stdout, and separately of stderr, that one execution keeps: 8 MiB.
///
/// Applies to every api-version (the service's own cap is only known for
/// 2025-10-02-preview, `outputStreamsMaxLength`, `aca-api.md` §4.2, §7). 8 MiB
/// rather than more because an answer is held about four times while it is
/// recorded and written as JSON: 200 MB printed grow `sessionpad serve` by about
/// 37 MB at its peak (`tests/pool_output.rs`). A stream cut here ends with the marker of
/// `Stream::finish` saying how much was printed. A 2025-10-02-preview request's
/// `outputStreamsMaxLength` ([`OutputLimits::stream_chars`]) may keep less, never
/// more. Output past the cap is counted and dropped as it arrives, so a cell that
/// prints without end costs the pool at most this much per stream (plus the one
/// IOPub message being read).
pub const MAX_STREAM_BYTES: usize = 8 * 1024 * 1024;

/// Most bytes of decoded images (PNG, JPEG, GIF from `display_data`,
/// `update_display_data` and `execute_result`) one execution keeps: 16 MiB.
/// Images past it are left out and a notice says so in stderr.
pub const MAX_IMAGE_BYTES: usize = 16 * 1024 * 1024;

/// Most bytes of the value of a cell's last expression (its JSON text, or its
/// `text/plain` form) one execution keeps: 4 MiB. A larger value becomes its
/// `text/plain` form cut to this size, ending with a marker, as a string.
pub const MAX_RESULT_BYTES: usize = 4 * 1024 * 1024;

tokio::task_local! {
    /// The limits of the request an execution serves; see [`OutputLimits::scope`].
    static LIMITS: OutputLimits;
}

/// What one execution may keep of its output, beyond the pool's own caps
/// ([`MAX_STREAM_BYTES`], [`MAX_IMAGE_BYTES`], [`MAX_RESULT_BYTES`]).
///
/// The HTTP route sets it for the executions it starts with [`OutputLimits::scope`]
/// (a task-local value, so it reaches [`Kernel::execute`] through the session
/// registry without a parameter); outside a scope the default applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputLimits {
    /// `outputStreamsMaxLength` of a 2025-10-02-preview execution request
    /// (`aca-api.md` §4.2): stdout and stderr each keep at most this many
    /// characters. `None`: the client did not send it, and only
    /// [`MAX_STREAM_BYTES`] applies.
    ///
    /// Characters, not bytes: the service's spec
    /// (`specification/app/data-plane/DynamicSessions/preview/2025-10-02-preview/DynamicSessions.json`,
    /// `SessionCodeExecutionRequest.outputStreamsMaxLength`, int32, "The maximum
    /// length of the output streams. Default value is 4096.") speaks of the
    /// *length* of the JSON strings `stdout` and `stderr`, which we take as the
    /// number of Unicode scalar values (Python's `len`). It does not say how the
    /// cut is shown, so a stream cut by this limit is its first `n` characters
    /// with no marker (a marker would make it longer than asked). The pool's byte
    /// cap still applies when it is smaller, and then its marker is left out too.
    ///
    /// The spec's default of 4096 is not applied to requests without the field:
    /// they keep up to [`MAX_STREAM_BYTES`] with the pool's marker, as every
    /// earlier api-version does (sessionpad's own client and other clients that
    /// never send the field would otherwise lose all but 4096 characters).
    pub stream_chars: Option<usize>,
}

impl OutputLimits {
    /// Runs `fut` with these limits applying to every [`Kernel::execute`] awaited
    /// inside it (in the same task).
    pub async fn scope<F: std::future::Future>(self, fut: F) -> F::Output {
        LIMITS.scope(self, fut).await
    }

    /// The limits of the enclosing [`OutputLimits::scope`], or the default.
    fn current() -> Self {
        LIMITS.try_with(|l| *l).unwrap_or_default()
    }
}

/// The largest index at most `i` that is a char boundary of `s`.
fn floor_char_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    (0..=i).rev().find(|&j| s.is_char_boundary(j)).unwrap_or(0)
}

/// One output stream of an execution (stdout or stderr), capped while it is
/// collected: text past [`MAX_STREAM_BYTES`] (or the client's character limit)
/// is counted, not kept.
#[derive(Default)]
struct Stream {
    /// What is kept, at most [`MAX_STREAM_BYTES`] bytes.
    text: String,
    /// Characters in `text`; counted only under a client limit.
    chars: usize,
    /// The client's limit in characters ([`OutputLimits::stream_chars`]).
    max_chars: Option<usize>,
    /// Bytes (UTF-8) received and dropped.
    dropped: u64,
    /// The pool's own messages (timeout, dead kernel, images left out), kept
    /// whole after the text; each is short.
    notices: String,
}

impl Stream {
    /// A stream limited to `max_chars` characters when given.
    fn new(max_chars: Option<usize>) -> Self {
        Self {
            max_chars,
            ..Self::default()
        }
    }

    /// Appends as much of `s` as the caps leave room for and counts the rest.
    fn push(&mut self, s: &str) {
        let room = MAX_STREAM_BYTES.saturating_sub(self.text.len());
        let mut cut = floor_char_boundary(s, room);
        if let Some(max) = self.max_chars {
            let room = max.saturating_sub(self.chars);
            if let Some((i, _)) = s[..cut].char_indices().nth(room) {
                cut = i;
            }
            self.chars += s[..cut].chars().count();
        }
        self.text.push_str(&s[..cut]);
        self.dropped += (s.len() - cut) as u64;
    }

    /// True when the last text received ends a line (or there is none).
    fn at_line_start(&self) -> bool {
        self.dropped == 0 && (self.text.is_empty() || self.text.ends_with('\n'))
    }

    /// Appends a message of the pool, kept whole whatever the caps.
    fn notice(&mut self, s: &str) {
        self.notices.push_str(s);
    }

    /// The stream as answered: the text kept; when the pool's cap cut it (and no
    /// client limit applies), the marker
    /// `\n[output truncated by the local pool: 200.0 MB printed, the first 8 MiB kept]\n`
    /// (MB: 10^6 bytes of UTF-8 received in all); then the notices.
    fn finish(self) -> String {
        let mut out = self.text;
        if self.dropped > 0 && self.max_chars.is_none() {
            let printed = out.len() as u64 + self.dropped;
            out.push_str(&format!(
                "\n[output truncated by the local pool: {:.1} MB printed, the first {} MiB kept]\n",
                printed as f64 / 1e6,
                MAX_STREAM_BYTES >> 20
            ));
        }
        out.push_str(&self.notices);
        out
    }
}

/// True when `value` as JSON text is longer than `limit` bytes; stops writing at
/// the limit, so a huge value costs no copy.
fn json_longer_than(value: &serde_json::Value, limit: usize) -> bool {
    struct Counter {
        n: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.n += buf.len();
            if self.n > self.limit {
                Err(std::io::Error::other("over the limit"))
            } else {
                Ok(buf.len())
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(&mut Counter { n: 0, limit }, value).is_err()
}

/// Outputs of one execution as they arrive, each bounded ([`MAX_STREAM_BYTES`],
/// [`MAX_IMAGE_BYTES`], [`MAX_RESULT_BYTES`], [`OutputLimits`]).
#[derive(Default)]
struct Run {
    stdout: Stream,
    stderr: Stream,
    result: Option<serde_json::Value>,
    images: Vec<ExecutionImage>,
    /// Decoded bytes in `images`.
    image_bytes: usize,
    /// Images left out for [`MAX_IMAGE_BYTES`].
    images_dropped: usize,
    failed: bool,
}

impl Run {
    /// An empty run whose streams keep what `limits` allow.
    fn new(limits: OutputLimits) -> Self {
        Self {
            stdout: Stream::new(limits.stream_chars),
            stderr: Stream::new(limits.stream_chars),
            ..Self::default()
        }
    }

    /// A run that keeps nothing: the output after an interrupt, which is never
    /// answered.
    fn discarding() -> Self {
        Self {
            image_bytes: MAX_IMAGE_BYTES,
            ..Self::new(OutputLimits {
                stream_chars: Some(0),
            })
        }
    }

    /// Takes one IOPub message; returns true when the kernel went idle.
    fn take(&mut self, content: JupyterMessageContent) -> bool {
        match content {
            JupyterMessageContent::StreamContent(s) => match s.name {
                StreamName::Stdout => self.stdout.push(&s.text),
                StreamName::Stderr => self.stderr.push(&s.text),
            },
            JupyterMessageContent::ExecuteResult(r) => self.take_result(r.data.content),
            JupyterMessageContent::DisplayData(d) => self.take_images(&d.data.content),
            JupyterMessageContent::UpdateDisplayData(d) => self.take_images(&d.data.content),
            JupyterMessageContent::ErrorOutput(e) => {
                self.failed = true;
                let tb = e.traceback.join("\n");
                if !self.stderr.at_line_start() {
                    self.stderr.push("\n");
                }
                if tb.trim().is_empty() {
                    self.stderr.push(&format!("{}: {}\n", e.ename, e.evalue));
                } else {
                    self.stderr.push(&tb);
                    self.stderr.push("\n");
                }
            }
            JupyterMessageContent::Status(s) => return s.execution_state == ExecutionState::Idle,
            _ => {}
        }
        false
    }

    fn take_result(&mut self, media: Vec<MediaType>) {
        let mut typed = None;
        let mut plain = None;
        for m in &media {
            match m {
                MediaType::Other((mime, value)) if mime == VALUE_MIME && !value.is_null() => {
                    typed = Some(value);
                }
                MediaType::Plain(text) => plain = Some(text.as_str()),
                _ => {}
            }
        }
        self.take_images(&media);
        self.result = match (typed, plain) {
            (Some(v), _) if !json_longer_than(v, MAX_RESULT_BYTES) => Some(v.clone()),
            (_, Some(text)) if text.len() <= MAX_RESULT_BYTES => {
                Some(serde_json::Value::String(text.to_string()))
            }
            (_, Some(text)) => {
                let cut = floor_char_boundary(text, MAX_RESULT_BYTES);
                Some(serde_json::Value::String(format!(
                    "{}\n[result truncated by the local pool: {:.1} MB, the first {} MiB kept]",
                    &text[..cut],
                    text.len() as f64 / 1e6,
                    MAX_RESULT_BYTES >> 20
                )))
            }
            (Some(_), None) => Some(serde_json::Value::String(format!(
                "[result left out by the local pool: its JSON is over {} MiB]",
                MAX_RESULT_BYTES >> 20
            ))),
            (None, None) => None,
        };
    }

    fn take_images(&mut self, media: &[MediaType]) {
        let engine = base64::engine::general_purpose::STANDARD;
        for m in media {
            let (format, b64) = match m {
                MediaType::Png(b) => ("png", b),
                MediaType::Jpeg(b) => ("jpeg", b),
                MediaType::Gif(b) => ("gif", b),
                _ => continue,
            };
            // Decoded size is at most 3/4 of the base64 text: check before copying.
            let estimate = b64.len() / 4 * 3;
            if self.image_bytes.saturating_add(estimate) > MAX_IMAGE_BYTES {
                self.images_dropped += 1;
                continue;
            }
            let cleaned: String = b64.chars().filter(|c| !c.is_whitespace()).collect();
            if let Ok(data) = engine.decode(cleaned) {
                self.image_bytes += data.len();
                self.images.push(ExecutionImage {
                    format: format.into(),
                    data,
                });
            }
        }
    }

    fn died(&mut self) {
        self.failed = true;
        self.stderr.notice(
            "Execution aborted: the kernel died (it exited, crashed or ran out of memory); \
             the next execution starts a fresh session state.\n",
        );
    }

    /// The kernel was killed for going over the session's memory limit: Azure's
    /// "Execution aborted" (`aca-api.md` §6, execution failures).
    fn out_of_memory(&mut self, limit: u64) {
        self.failed = true;
        self.stderr.notice(&format!(
            "Execution aborted: the session went over its memory limit of {}; \
             the next execution starts a fresh session state.\n",
            super::limits::human_bytes(limit)
        ));
    }

    /// The session reached its process limit; the kernel is killed with every
    /// process it started.
    fn too_many_processes(&mut self, limit: u64) {
        self.failed = true;
        self.stderr.notice(&format!(
            "Execution aborted: the session reached its limit of {limit} processes; \
             its processes were ended and the next execution starts a fresh session state.\n"
        ));
    }

    fn timed_out(&mut self) {
        self.failed = true;
        self.stderr
            .notice("Request timed out waiting for code execution to complete\n");
    }

    fn finish(mut self, started: Instant) -> Execution {
        if self.images_dropped > 0 {
            self.stderr.notice(&format!(
                "[{} image(s) left out by the local pool: one execution keeps at most {} MiB of images]\n",
                self.images_dropped,
                MAX_IMAGE_BYTES >> 20
            ));
        }
        Execution {
            id: None,
            status: if self.failed {
                ExecutionStatus::Failed
            } else {
                ExecutionStatus::Succeeded
            },
            stdout: self.stdout.finish(),
            stderr: self.stderr.finish(),
            result: self.result,
            images: self.images,
            duration: started.elapsed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_keeps_its_cap_counts_the_rest_and_says_so() {
        let mut s = Stream::new(None);
        let mb = "x".repeat(1_000_000);
        for _ in 0..20 {
            s.push(&mb);
        }
        s.notice("Request timed out\n");
        let out = s.finish();
        let marker = "\n[output truncated by the local pool: 20.0 MB printed, the first 8 MiB kept]\nRequest timed out\n";
        assert!(out.ends_with(marker), "{:?}", &out[out.len() - 200..]);
        assert_eq!(out.len(), MAX_STREAM_BYTES + marker.len());
    }

    #[test]
    fn a_stream_is_cut_on_a_character_boundary() {
        let mut s = Stream::new(None);
        s.push(&"x".repeat(MAX_STREAM_BYTES - 1));
        s.push("éé");
        let out = s.finish();
        assert!(out.starts_with(&"x".repeat(MAX_STREAM_BYTES - 1)));
        assert!(
            out.contains("8.4 MB printed"),
            "{}",
            &out[out.len() - 100..]
        );
    }

    #[test]
    fn a_client_limit_counts_characters_and_adds_no_marker() {
        let mut s = Stream::new(Some(3));
        s.push("é");
        s.push("ü😀ab");
        assert_eq!(s.finish(), "éü😀");
        let mut s = Stream::new(Some(0));
        s.push("abc");
        s.notice("Request timed out\n");
        assert_eq!(s.finish(), "Request timed out\n");
        let mut s = Stream::new(Some(100));
        s.push("short");
        assert_eq!(s.finish(), "short");
    }

    #[test]
    fn images_past_the_budget_are_left_out_with_a_notice() {
        let engine = base64::engine::general_purpose::STANDARD;
        let five_mib = engine.encode(vec![7u8; 5 * 1024 * 1024]);
        let mut run = Run::new(OutputLimits::default());
        for _ in 0..5 {
            run.take_images(&[MediaType::Png(five_mib.clone())]);
        }
        assert_eq!(run.images.len(), 3);
        assert!(run.image_bytes <= MAX_IMAGE_BYTES);
        let exec = run.finish(Instant::now());
        assert_eq!(exec.status, ExecutionStatus::Succeeded);
        assert!(
            exec.stderr
                .contains("[2 image(s) left out by the local pool"),
            "{}",
            exec.stderr
        );
        let mut run = Run::discarding();
        run.take_images(&[MediaType::Png(engine.encode([1u8, 2, 3]))]);
        assert!(run.images.is_empty());
    }

    #[test]
    fn a_huge_value_becomes_its_cut_text() {
        let big = "y".repeat(MAX_RESULT_BYTES + 10);
        let mut run = Run::new(OutputLimits::default());
        run.take_result(vec![
            MediaType::Other((VALUE_MIME.into(), serde_json::Value::String(big.clone()))),
            MediaType::Plain(format!("'{big}'")),
        ]);
        let value = run.result.as_ref().and_then(|v| v.as_str()).unwrap();
        assert!(value.len() < MAX_RESULT_BYTES + 200);
        assert!(
            value.ends_with("[result truncated by the local pool: 4.2 MB, the first 4 MiB kept]")
        );
        let mut run = Run::new(OutputLimits::default());
        run.take_result(vec![
            MediaType::Other((VALUE_MIME.into(), serde_json::json!([1, 2]))),
            MediaType::Plain("[1, 2]".into()),
        ]);
        assert_eq!(run.result, Some(serde_json::json!([1, 2])));
    }

    #[tokio::test]
    async fn limits_reach_the_execution_through_a_scope() {
        assert_eq!(OutputLimits::current(), OutputLimits::default());
        let limits = OutputLimits {
            stream_chars: Some(5),
        };
        let seen = limits.scope(async { OutputLimits::current() }).await;
        assert_eq!(seen, limits);
    }
}
