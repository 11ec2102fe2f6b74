//! The session worker: the one task that owns the [`SessionClient`] (and, with no
//! endpoint configured, the embedded [`LocalPool`]). A front end sends it commands
//! without waiting and hears back through an [`EventSender`].
//!
//! Executions run one at a time in the order they were asked for, as a session
//! does. A run whose transport fails is reported as a failed outcome, never
//! dropped, so the cell that asked for it always learns what happened, unless
//! the UI gave up on it: an abandoned run is skipped if it has not started, and
//! its request is dropped (the HTTP call aborted) if it has; nothing more is
//! reported about it. Interrupting is the local pool's alone: the worker reaches
//! the embedded pool's kernel directly, and the background local pool's through
//! its interrupt route (the service's API has no interrupt).
//!
//! On the background local pool ([`Connection::Background`]) a cell whose
//! connection is refused (the pool has ended since the last cell) starts or
//! finds the pool again and is sent there once more: nothing of it had run.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::event::{DecodedImage, EventSender, RunId};
use super::failure::Failure;
use super::files::FileCommand;
use super::queue::Queue;
use super::radar_listing;
use super::sessions::SessionsCommand;
use super::side::{Side, SideWork};
use crate::client::{SessionClient, ShellRequest};
use crate::pool::{LocalPool, SessionRegistry};
use crate::protocol::{ApiVersion, ContainerType, Execution, RemoteFile};

/// How long the embedded pool gets to stop its kernels before it is dropped
/// (dropping kills them).
const POOL_SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Which pool the worker talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Connection {
    /// Start the local pool in this process and talk to it over loopback HTTP.
    Embedded,
    /// The background local pool of the worker's container type, the one the
    /// command line uses: found through its discovery file, else started
    /// (`sessionpad serve --background`, with these options), and started
    /// again when it has ended between two cells ([`crate::background`]).
    Background(crate::background::StartOptions),
    /// A pool at this endpoint (Azure, or `sessionpad serve`).
    Remote {
        /// The pool management endpoint.
        endpoint: String,
        /// A static bearer token.
        token: Option<String>,
        /// An Entra credential to use instead (az login, managed identity, …).
        auth: Option<crate::client::auth::AuthConfig>,
    },
}

/// What the worker needs to know.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Which pool.
    pub connection: Connection,
    /// The api-version to speak.
    pub api_version: ApiVersion,
    /// The session identifier cells run in.
    pub identifier: String,
    /// Execution limit sent with each run.
    pub timeout: Duration,
    /// How the pool's sessions are listed, read and ended.
    pub pool_type: crate::protocol::PoolType,
    /// Per-session limits when the worker starts the embedded local pool.
    pub pool_limits: crate::protocol::limits::Limits,
    /// Whether an embedded local pool emulates the service's limits (`[pool]
    /// azure_limits`).
    pub azure_limits: bool,
    /// Where an embedded local pool's sessions may connect (`[pool] egress`).
    pub egress: crate::protocol::egress::Egress,
    /// Where the embedded local pool records its calls; `None` records nothing.
    pub ledger: Option<crate::ledger::LedgerOptions>,
    /// What the pool runs: cells are shell commands on a Shell pool (and the
    /// embedded pool is started as one), code elsewhere.
    pub container_type: ContainerType,
    /// Executions ask for a kernel without preloaded libraries
    /// (`useEmptyKernel`, 2025-10-02-preview).
    pub empty_kernel: bool,
}

/// A cell to execute: its source and, for a shell command, its standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// The code, or the shell command line.
    pub source: String,
    /// Text for the command's standard input (Shell pools); `None`: empty.
    pub stdin: Option<String>,
    /// If this cell fails (an error, a failed or canceled execution, or no
    /// answer at all), the runs queued after it are not run but reported
    /// [`super::SessionEvent::ExecutionNotRun`], as Jupyter's
    /// `stop_on_error` aborts its queue. A shell command's exit code is not
    /// a failure here: only a failed call is.
    pub stop_on_error: bool,
    /// The `outputStreamsMaxLength` to send (2025-10-02-preview, `aca-api.md`
    /// §13: the most characters of stdout and of stderr the answer carries);
    /// `None` sends nothing (the pool's default, the service's 4,096). On an
    /// older api-version the run fails with the client's clear refusal.
    pub output_streams_max_length: Option<u32>,
}

impl From<&str> for Cell {
    /// A cell of `source` with no standard input that stops the queue on
    /// error.
    fn from(source: &str) -> Self {
        Self {
            source: source.to_string(),
            stdin: None,
            stop_on_error: true,
            output_streams_max_length: None,
        }
    }
}

pub(super) enum Command {
    Execute {
        run: RunId,
        cell: Cell,
    },
    Uploads {
        run: RunId,
        before: Vec<super::replay::RecordedUpload>,
        after: Vec<super::replay::RecordedUpload>,
    },
    Interrupt {
        run: RunId,
    },
    Abandon {
        run: RunId,
    },
}

/// The UI task's handle on the worker.
#[derive(Debug)]
pub struct SessionWorker {
    commands: mpsc::UnboundedSender<Command>,
    /// The file work's commands (it starts once the pool answers).
    files: mpsc::UnboundedSender<FileCommand>,
    /// The sessions work's commands (it starts once the pool answers).
    sessions: mpsc::UnboundedSender<SessionsCommand>,
    /// The identifier cells run in from the next run on (sessions can switch).
    identifier: tokio::sync::watch::Sender<String>,
    /// Tells the task to stop; `true` keeps the embedded pool running.
    stop: Option<oneshot::Sender<bool>>,
    /// The task; it hands back the embedded pool when told to keep it.
    task: Option<JoinHandle<Option<LocalPool>>>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Execute { run, .. } => write!(f, "Execute({run:?})"),
            Self::Interrupt { run } => write!(f, "Interrupt({run:?})"),
            Self::Abandon { run } => write!(f, "Abandon({run:?})"),
            Self::Uploads { run, before, after } => {
                write!(f, "Uploads({run:?}, {}, {})", before.len(), after.len())
            }
        }
    }
}

impl SessionWorker {
    /// Starts the worker task. With [`Connection::Embedded`] it starts the local
    /// pool first, reporting progress through `events`.
    pub fn spawn(config: WorkerConfig, events: EventSender) -> Self {
        Self::spawn_with(config, None, events)
    }

    /// Starts the worker task like [`SessionWorker::spawn`]; with
    /// [`Connection::Embedded`] and `pool` given (an embedded pool kept from an
    /// earlier worker, see [`SessionWorker::stop_keeping_pool`]) it talks to that
    /// pool instead of starting one, so its sessions carry on.
    pub fn spawn_with(config: WorkerConfig, pool: Option<LocalPool>, events: EventSender) -> Self {
        // Unbounded: commands come from a person pressing F5, and the UI task must
        // never wait to hand one over.
        let (commands, rx) = mpsc::unbounded_channel();
        let (stop, stopped) = oneshot::channel();
        let (files, files_rx) = mpsc::unbounded_channel();
        let (sessions, sessions_rx) = mpsc::unbounded_channel();
        let (identifier, identifier_rx) = tokio::sync::watch::channel(config.identifier.clone());
        let task = tokio::spawn(run(
            config,
            pool,
            rx,
            Side {
                files: files_rx,
                sessions: sessions_rx,
            },
            identifier_rx,
            stopped,
            events,
        ));
        Self {
            commands,
            files,
            sessions,
            identifier,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Runs the next cells (and file work) in session `identifier`.
    pub fn switch(&self, identifier: String) {
        self.identifier.send_replace(identifier);
    }

    /// Hands file work (listing, head, transfer) to the file work.
    pub fn files(&self, command: FileCommand) {
        if self.files.send(command).is_err() {
            tracing::error!("file work is gone; command dropped");
        }
    }

    /// Hands work on the pool's sessions (listing, details, ending, metadata)
    /// to the sessions work.
    pub fn sessions(&self, command: SessionsCommand) {
        if self.sessions.send(command).is_err() {
            tracing::error!("sessions work is gone; command dropped");
        }
    }

    /// Queues an execution of `cell`; the outcome comes back as events naming
    /// `run`.
    pub fn execute(&self, run: RunId, cell: Cell) {
        if self.commands.send(Command::Execute { run, cell }).is_err() {
            tracing::error!(?run, "session worker is gone; run dropped");
        }
    }

    /// Redoes `before` (recorded uploads, a recorded session's, from the
    /// ledger's bytes) in the session just before `run` executes and `after`
    /// once it has (a replay's last cell: the uploads recorded after it),
    /// each set in order; how they went comes back as
    /// [`super::SessionEvent::UploadsRedone`] for `run` (those after it
    /// before its outcome). Send it before `run`'s
    /// [`SessionWorker::execute`].
    pub fn uploads_around(
        &self,
        run: RunId,
        before: Vec<super::replay::RecordedUpload>,
        after: Vec<super::replay::RecordedUpload>,
    ) {
        self.send(Command::Uploads { run, before, after });
    }

    /// Interrupts `run` if it is running on the embedded pool (its outcome then
    /// arrives as usual); on a remote pool, which has no interrupt, abandons it.
    pub fn interrupt(&self, run: RunId) {
        self.send(Command::Interrupt { run });
    }

    /// Gives up on `run`: skipped if it has not started, its request dropped if it
    /// has; no more events name it.
    pub fn abandon(&self, run: RunId) {
        self.send(Command::Abandon { run });
    }

    fn send(&self, command: Command) {
        if self.commands.send(command).is_err() {
            tracing::error!("session worker is gone; command dropped");
        }
    }

    /// Stops the worker: abandons a running execution, shuts the embedded pool
    /// down (its kernels end) and waits up to `wait` for all that. Returns
    /// whether the worker ended within `wait` (else it is left to end alone).
    pub async fn shutdown(self, wait: Duration) -> bool {
        let mut ended = false;
        self.stop_with(false, wait, &mut ended).await;
        ended
    }

    /// Stops the worker like [`SessionWorker::shutdown`] but keeps the embedded
    /// pool (if it started one) running and returns it, for a later worker
    /// ([`SessionWorker::spawn_with`]). `None` when there was no embedded pool or
    /// the worker did not stop within `wait`.
    pub async fn stop_keeping_pool(self, wait: Duration) -> Option<LocalPool> {
        self.stop_with(true, wait, &mut false).await
    }

    async fn stop_with(
        mut self,
        keep_pool: bool,
        wait: Duration,
        ended: &mut bool,
    ) -> Option<LocalPool> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(keep_pool);
        }
        let task = self.task.take()?;
        let outcome = tokio::time::timeout(wait, task).await;
        *ended = outcome.is_ok();
        match outcome {
            Ok(Ok(pool)) => pool,
            Ok(Err(e)) => {
                tracing::error!("session worker ended badly: {e}");
                None
            }
            Err(_) => {
                tracing::warn!("session worker did not stop within {wait:?}");
                None
            }
        }
    }
}

/// The worker task: connects, then runs executions until told to stop (or the
/// UI is gone). Returns the embedded pool when told to keep it, else shuts it
/// down.
async fn run(
    config: WorkerConfig,
    kept: Option<LocalPool>,
    commands: mpsc::UnboundedReceiver<Command>,
    side: Side,
    identifier: tokio::sync::watch::Receiver<String>,
    mut stopped: oneshot::Receiver<bool>,
    events: EventSender,
) -> Option<LocalPool> {
    let connected = tokio::select! {
        biased;
        _ = &mut stopped => return None,
        c = super::connect::connect(&config, kept, &events) => c,
    };
    let (client, pool) = match connected {
        Ok((client, pool)) => {
            events.pool_key(crate::protocol::record::pool_key_of(
                client.endpoint(),
                config.container_type,
            ));
            events.pool_ready();
            (Ok(client), pool)
        }
        Err(reason) => {
            tracing::error!("pool unavailable: {reason}");
            events.pool_failed(reason.clone());
            (Err(reason.context("the pool is not available")), None)
        }
    };
    let mut worker = Worker {
        config,
        client,
        registry: pool.as_ref().map(|p| p.registry().clone()),
        side: SideWork::new(side),
        identifier,
        events,
        commands,
        stopped,
        queue: Queue::default(),
        lists_promptly: true,
    };
    if let Ok(c) = &worker.client {
        worker.side.serve(c, &worker.identifier, &worker.events);
    }
    let keep_pool = loop {
        let Some((run, cell)) = worker.queue.next() else {
            let command = tokio::select! {
                biased;
                keep = &mut worker.stopped => break keep.unwrap_or(false),
                c = worker.commands.recv() => c,
            };
            let Some(command) = command else {
                break false;
            };
            worker.queue.accept(command);
            continue;
        };
        if let Err(keep) = worker.cell(run, cell).await {
            break keep;
        }
    };
    drop(worker.client);
    worker.side.abort();
    if keep_pool {
        return pool;
    }
    if let Some(pool) = pool
        && tokio::time::timeout(POOL_SHUTDOWN_GRACE, pool.shutdown())
            .await
            .is_err()
    {
        tracing::warn!("local pool did not shut down in time; its kernels are killed");
    }
    None
}

/// What the worker task holds between cells: the connection, the work beside
/// the cells, the commands and the cells queued.
struct Worker {
    /// The worker's configuration; its identifier follows the session switched
    /// to, cell by cell.
    config: WorkerConfig,
    /// The pool's client, or why there is none.
    client: Result<SessionClient, Failure>,
    /// The embedded pool's sessions, which can be interrupted.
    registry: Option<Arc<SessionRegistry>>,
    /// The file, sessions and follow work, served with each new client.
    side: SideWork,
    /// The identifier cells run in from the next run on.
    identifier: tokio::sync::watch::Receiver<String>,
    events: EventSender,
    commands: mpsc::UnboundedReceiver<Command>,
    /// Tells the worker to stop; `true` keeps the embedded pool.
    stopped: oneshot::Receiver<bool>,
    queue: Queue,
    /// Whether the pool's last listing answered in time (the radar's listing
    /// before a cell is only asked for then).
    lists_promptly: bool,
}

impl Worker {
    /// Runs `cell` as `run`: finds the background pool again if it is gone,
    /// takes the radar's listing before, executes and reports the outcome, then
    /// the radar's listing after. `Err` when the worker is told to stop (or the
    /// UI is gone) meanwhile, with whether to keep the embedded pool.
    async fn cell(&mut self, run: RunId, cell: Cell) -> Result<(), bool> {
        self.config.identifier.clone_from(&self.identifier.borrow());
        self.attach_again_if_gone().await?;
        let uploads = self.queue.take_uploads(run);
        self.redo_uploads(run, uploads).await;
        let before = self.listing_before().await?;
        self.events.execution_started(run);
        let (outcome, exit_code) = match self.execute(run, &cell).await {
            Step::Finished(outcome, exit_code) => (outcome, exit_code),
            Step::Gone(failure) => (Err(failure), None),
            Step::Abandoned => return Ok(()),
            Step::Stop(keep) => return Err(keep),
        };
        // A replay's uploads recorded after its last cell, told before the
        // cell's outcome (which ends the replay).
        let after = self.queue.take_uploads_after(run);
        self.redo_uploads(run, after).await;
        let images = match &outcome {
            Ok(exec) => decode_images(exec).await,
            Err(_) => Vec::new(),
        };
        let not_run = if cell.stop_on_error && ended_in_error(&outcome, exit_code) {
            self.skip_queued()
        } else {
            Vec::new()
        };
        self.events
            .execution_finished(run, outcome, exit_code, images);
        for skipped in not_run {
            self.events.execution_not_run(skipped);
        }
        self.after_cell(before).await
    }

    /// After a cell that failed and stops on error: every run asked for
    /// before its outcome is told (those still in the channel too) is taken
    /// off the queue, to be reported not run.
    fn skip_queued(&mut self) -> Vec<RunId> {
        while let Ok(command) = self.commands.try_recv() {
            self.queue.accept(command);
        }
        self.queue.skip_waiting()
    }

    /// Redoes `uploads`, recorded uploads a replay asked for before or after
    /// `run`, in order, and reports how they went (nothing when there are
    /// none).
    async fn redo_uploads(&mut self, run: RunId, uploads: Vec<super::replay::RecordedUpload>) {
        if uploads.is_empty() {
            return;
        }
        let ledger = crate::ledger::default_path();
        let mut outcomes = Vec::new();
        for upload in uploads {
            let outcome = match &self.client {
                Ok(client) => {
                    super::replay::redo_upload(client, &self.config.identifier, &ledger, &upload)
                        .await
                }
                Err(reason) => Err(reason.message.clone()),
            };
            outcomes.push((upload, outcome));
        }
        self.events.uploads_redone(run, outcomes);
    }

    /// Before a cell on the background local pool: the pool that could not be
    /// had is tried again; one that has ended since the last cell (its
    /// discovery entry gone, or another pool's) is found or started again, so
    /// the cell never goes down a connection kept alive to a pool that is gone.
    /// `Err` when told to stop meanwhile, with whether to keep the embedded
    /// pool.
    async fn attach_again_if_gone(&mut self) -> Result<(), bool> {
        let gone = match (&self.client, &self.config.connection) {
            (Ok(c), Connection::Background(_)) => {
                let running = crate::background::find(self.config.container_type);
                (running.is_none_or(|f| f.endpoint != c.endpoint()))
                    .then(|| Failure::unreachable("the background local pool is no longer running"))
            }
            _ => None,
        };
        if let Connection::Background(opts) = &self.config.connection
            && (self.client.is_err() || gone.is_some())
        {
            let attach = super::attach::again(&self.config, opts, gone.as_ref(), &self.events);
            match unless_stopped(&mut self.stopped, attach).await? {
                Ok(c) => {
                    self.side.serve(&c, &self.identifier, &self.events);
                    self.client = Ok(c);
                }
                Err(reason) => self.client = Err(reason.context("the pool is not available")),
            }
        }
        Ok(())
    }

    /// The data root before the cell, for the artifact radar; not asked for
    /// while the pool's listings are slow or failing (the listing after a
    /// cell says when they answer again), so a cell never waits on them twice.
    /// `Err` when told to stop meanwhile, with whether to keep the embedded
    /// pool.
    async fn listing_before(&mut self) -> Result<Option<Vec<RemoteFile>>, bool> {
        match &self.client {
            Ok(c) if self.lists_promptly => {
                let listing =
                    radar_listing::snapshot(c, &self.config.identifier, radar_listing::BEFORE_WAIT);
                let before = unless_stopped(&mut self.stopped, listing).await?;
                self.lists_promptly = before.is_some();
                Ok(before)
            }
            _ => Ok(None),
        }
    }

    /// Executes `cell` as `run` and waits for it (still taking commands). On
    /// the background local pool a cell whose pool has ended since the last
    /// cell goes, once, to the pool found or started again: nothing of it ran.
    async fn execute(&mut self, run: RunId, cell: &Cell) -> Step {
        let step = match &self.client {
            Err(reason) => Step::Finished(Err(reason.clone()), None),
            Ok(c) => {
                let running =
                    Running::new(c, &self.config, self.registry.as_ref(), &self.events, run);
                running
                    .wait(cell, &mut self.commands, &mut self.stopped, &mut self.queue)
                    .await
            }
        };
        match (step, &self.config.connection) {
            (Step::Gone(failure), Connection::Background(opts)) => {
                let attach = super::attach::again(&self.config, opts, Some(&failure), &self.events);
                match unless_stopped(&mut self.stopped, attach).await {
                    Ok(Ok(c)) => {
                        self.side.serve(&c, &self.identifier, &self.events);
                        let running = Running::new(
                            &c,
                            &self.config,
                            self.registry.as_ref(),
                            &self.events,
                            run,
                        );
                        let step = running
                            .wait(cell, &mut self.commands, &mut self.stopped, &mut self.queue)
                            .await;
                        self.client = Ok(c);
                        step
                    }
                    Ok(Err(reason)) => Step::Finished(Err(reason), None),
                    Err(keep) => Step::Stop(keep),
                }
            }
            (step, _) => step,
        }
    }

    /// After a cell: the radar's listing after it (compared with `before`) and
    /// the session's details; a slow pool's listing and session read must not
    /// hold up a stop (a pool switch, quitting). `Err` when told to stop
    /// meanwhile, with whether to keep the embedded pool.
    async fn after_cell(&mut self, before: Option<Vec<RemoteFile>>) -> Result<(), bool> {
        if let Ok(c) = &self.client {
            let radar = radar_listing::after_cell(c, &self.config.identifier, before, &self.events);
            self.lists_promptly = unless_stopped(&mut self.stopped, radar).await?;
        }
        Ok(())
    }
}

/// `work`, unless the worker is told to stop first: then `Err` with whether to
/// keep the embedded pool.
async fn unless_stopped<T>(
    stopped: &mut oneshot::Receiver<bool>,
    work: impl std::future::Future<Output = T>,
) -> Result<T, bool> {
    tokio::select! {
        biased;
        keep = stopped => Err(keep.unwrap_or(false)),
        out = work => Ok(out),
    }
}

/// How waiting for one execution ended.
enum Step {
    /// The pool answered (or the transport failed), with a shell command's
    /// exit code.
    Finished(Result<Execution, Failure>, Option<i32>),
    /// The pool refused the connection (it has ended): nothing of the cell
    /// ran, so it may be sent again elsewhere.
    Gone(Failure),
    /// The UI gave up on the run; its request was dropped.
    Abandoned,
    /// The worker is told to stop (`true`: keep the embedded pool), or the UI
    /// is gone.
    Stop(bool),
}

/// One execution in flight, and what the worker needs while it waits for it.
struct Running<'a> {
    client: &'a SessionClient,
    config: &'a WorkerConfig,
    /// The embedded pool's sessions, which can be interrupted.
    registry: Option<&'a Arc<SessionRegistry>>,
    events: &'a EventSender,
    run: RunId,
}

impl<'a> Running<'a> {
    /// Run `run` through `client`; `registry` is the embedded pool's, when the
    /// worker started one.
    fn new(
        client: &'a SessionClient,
        config: &'a WorkerConfig,
        registry: Option<&'a Arc<SessionRegistry>>,
        events: &'a EventSender,
        run: RunId,
    ) -> Self {
        Self {
            client,
            config,
            registry,
            events,
            run,
        }
    }

    /// Waits for the execution of `cell` (a shell command on a Shell pool,
    /// else code) while still taking commands: new runs queue, an interrupt of
    /// this run goes to the kernel (on the local pool), an abandon drops the
    /// request.
    async fn wait(
        &self,
        cell: &Cell,
        commands: &mut mpsc::UnboundedReceiver<Command>,
        stopped: &mut oneshot::Receiver<bool>,
        queue: &mut Queue,
    ) -> Step {
        let (identifier, timeout) = (&self.config.identifier, self.config.timeout);
        let request = async {
            if self.config.container_type.is_shell() {
                let request = ShellRequest {
                    stdin: cell.stdin.clone(),
                    output_streams_max_length: cell.output_streams_max_length,
                    ..ShellRequest::line(cell.source.clone(), timeout)
                };
                match self.client.execute_shell(identifier, &request).await {
                    Ok(shell) => Step::Finished(Ok(shell.to_execution()), shell.exit_code),
                    Err(e) => failed(&e),
                }
            } else {
                let capped = self.client.execute_capped(
                    identifier,
                    &cell.source,
                    timeout,
                    cell.output_streams_max_length,
                );
                match capped.await {
                    Ok(exec) => Step::Finished(Ok(exec), None),
                    Err(e) => failed(&e),
                }
            }
        };
        tokio::pin!(request);
        loop {
            tokio::select! {
                biased;
                keep = &mut *stopped => return Step::Stop(keep.unwrap_or(false)),
                step = &mut request => return step,
                c = commands.recv() => match c {
                    None => return Step::Stop(false),
                    Some(Command::Interrupt { run }) if run == self.run => {
                        match (self.registry, &self.config.connection) {
                            (Some(registry), _) => self.interrupt(registry.clone()),
                            (None, Connection::Background(_)) => super::attach::interrupt(
                                self.client.clone(),
                                self.config.identifier.clone(),
                                self.run,
                                self.events.clone(),
                            ),
                            // The service has no interrupt.
                            (None, _) => return Step::Abandoned,
                        }
                    }
                    Some(Command::Abandon { run }) if run == self.run => return Step::Abandoned,
                    Some(other) => queue.accept(other),
                },
            }
        }
    }

    /// Interrupts the session's kernel on a task of its own (the execution's
    /// reply keeps arriving meanwhile) and reports whether it was acknowledged.
    fn interrupt(&self, registry: Arc<SessionRegistry>) {
        let identifier = self.config.identifier.clone();
        let events = self.events.clone();
        let run = self.run;
        tokio::spawn(async move {
            let delivered = registry.interrupt(&identifier).await;
            events.interrupt_sent(run, delivered);
        });
    }
}

/// Whether a run ended in error, as Jupyter's `stop_on_error` means it: no
/// answer, or code that raised, failed or was canceled. A shell command
/// (`exit_code` given) fails only when the call did; its exit code is its
/// own business.
fn ended_in_error(outcome: &Result<Execution, Failure>, exit_code: Option<i32>) -> bool {
    match outcome {
        Err(_) => true,
        Ok(_) if exit_code.is_some() => false,
        Ok(exec) => !matches!(exec.status, crate::protocol::ExecutionStatus::Succeeded),
    }
}

/// The step of an execution that failed with `error`: [`Step::Gone`] when the
/// pool refused the connection (nothing ran), else a failed outcome.
/// An execution the pool did not answer in time ([`crate::client::ClientError::Timeout`])
/// is not known to have stopped: the failure says so (issue 27 item 6).
fn failed(error: &crate::client::ClientError) -> Step {
    if super::attach::refused(error) {
        Step::Gone(Failure::from(error))
    } else if matches!(error, crate::client::ClientError::Timeout(_)) {
        let failure = Failure::from(error);
        let message = format!(
            "{}: the code may still be running in the session, and what it prints is lost; \
             the session's next cell waits for it to end",
            failure.message
        );
        Step::Finished(Err(Failure::new(failure.kind, message)), None)
    } else {
        Step::Finished(Err(Failure::from(error)), None)
    }
}

/// Decodes the execution's images on a blocking thread, keeping their order.
async fn decode_images(exec: &Execution) -> Vec<DecodedImage> {
    if exec.images.is_empty() {
        return Vec::new();
    }
    let data: Vec<Vec<u8>> = exec.images.iter().map(|i| i.data.clone()).collect();
    let count = data.len();
    let decoded = tokio::task::spawn_blocking(move || {
        data.iter()
            .map(|bytes| image::load_from_memory(bytes).map_err(|e| format!("cannot decode: {e}")))
            .collect::<Vec<_>>()
    })
    .await;
    decoded.unwrap_or_else(|e| vec![Err(format!("decoder failed: {e}")); count])
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
