//! One run of the UI for one pool, from start to finish: build the app for the
//! pool (its notebook, its sessions store entry, the UI settings), start the
//! session worker, and at the end stop the worker, apply its last news and wait
//! for the notebook's savers. `tui::run_with` strings runs together when the
//! user switches pools ([`super::pools`]).

use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedReceiver;

use super::app::{App, AppConfig, PoolState};
use super::event::{AppEvent, AppEventSender};
use super::persist;
use super::pools::{PoolChoice, PoolsUi};
use super::terminal::Tui;
use super::{TuiOptions, attach_sessions_store};
use crate::notebook::store::SaverThread;
use crate::session::{Connection, SessionWorker, WorkerConfig};
use crate::target::endpoint_label;
use crate::tui::app::view as ui;

/// What moves from one pool's run to the next.
#[derive(Debug, Default)]
pub struct Carry {
    /// Cell sources still to offer in the editor (an opened notebook's).
    pub queued: Vec<String>,
    /// The cell being typed.
    pub draft: Option<String>,
    /// A notice for the first frame.
    pub notice: Option<String>,
}

impl Carry {
    /// What `app` hands on when switching to `choice`.
    pub fn from_app(app: &mut App, choice: &PoolChoice) -> Self {
        Self {
            queued: app.take_queued(),
            draft: Some(app.notebook.editor.source()).filter(|d| !d.trim().is_empty()),
            notice: Some(format!("switched to pool {}", choice.name)),
        }
    }
}

/// One pool's app, its worker and their channel.
pub struct Run {
    /// The UI state.
    pub app: App,
    /// The worker talking to the pool.
    pub worker: SessionWorker,
    /// The worker's news, and the results of blocking work.
    pub events: UnboundedReceiver<AppEvent>,
    /// Sends to `events` (blocking work hands its results back through it).
    pub sender: AppEventSender,
    /// The notebook's saver.
    saver: Option<SaverThread>,
    /// Effects of the start that only the loop can carry out (it takes them
    /// first).
    pub pending: Vec<super::action::Effect>,
}

/// Builds the app for the pool `opts` names and starts its worker. Without an
/// endpoint the worker attaches to the background local pool of the target's
/// container type (the one the command line uses), starting it when none
/// runs; the app is built at once either way, so the editor takes keys from
/// the first frame while the pool is found or started.
///
/// # Errors
///
/// The config file's theme or keys are wrong (they were checked when it was
/// read, so this is a bug).
pub async fn start(opts: &TuiOptions, carry: Carry) -> anyhow::Result<Run> {
    let t = &opts.target;
    let identifier = t.identifier.clone();
    let (connection, pool_label, pool_state) = match &t.endpoint {
        // The target's own egress policy (its profile's): a pool chosen in
        // the pools pane carries its own.
        None => (
            Connection::Background(crate::background::StartOptions {
                egress: t.egress.clone(),
                ..opts.background.clone()
            }),
            "local".to_string(),
            PoolState::Starting,
        ),
        Some(endpoint) => (
            Connection::Remote {
                endpoint: endpoint.clone(),
                token: t.token.clone(),
                auth: t.auth.clone(),
            },
            endpoint_label(endpoint),
            PoolState::Ready,
        ),
    };
    let mut app = new_app(opts, &connection, pool_label, pool_state).await?;
    let place = persist::Place::new(
        t.endpoint.as_deref(),
        &identifier,
        t.api_version,
        app.config.language,
    );
    let saver = persist::attach(&mut app, place).await;
    attach_sessions_store(&mut app, t.endpoint.as_deref(), &identifier).await;
    app.queue_sources(carry.queued);
    if let Some(draft) = carry.draft {
        // This notebook's own draft, given back, waits behind the text
        // carried from the other pool.
        let own = app.notebook.editor.draft();
        app.notebook.editor.replace(&draft);
        if let Some(own) = own.filter(|own| *own != draft) {
            app.notebook.editor.restore_draft(&own);
        }
    }
    app.notice = carry.notice;
    // Following from the start: the calls an agent made before are read from
    // the flight recorder once the worker runs.
    let follow_effects = if opts.follow {
        app.set_following(true)
    } else {
        Vec::new()
    };
    let (sender, events) = AppEventSender::channel();
    app.views.images.connect(sender.clone());
    let worker = SessionWorker::spawn(
        WorkerConfig {
            connection,
            api_version: t.api_version,
            identifier,
            timeout: t.timeout,
            pool_type: t.pool_type,
            // The background local pool reads the config file's `[pool]` and
            // `[ledger]` itself when it starts (its egress policy is the
            // connection's).
            pool_limits: crate::protocol::limits::Limits::default(),
            azure_limits: false,
            egress: crate::protocol::egress::Egress::default(),
            ledger: None,
            container_type: t.container_type,
            empty_kernel: t.empty_kernel,
        },
        sender.session(),
    );
    // The cells that were running when the notebook was last quit are looked
    // for in the flight recorder.
    let lookups = app.look_up_quit_cells();
    // The effects of the start go where every effect goes: the worker's to
    // it now, the loop's to the loop's queue (`pending`).
    let pending = follow_effects
        .into_iter()
        .chain(lookups)
        .filter_map(|effect| super::runner::offload_to(&worker, &sender, effect))
        .collect();
    // Whether the reopened notebook's session still runs on the pool: the
    // answer says whether its boundary is certain.
    if app.notebook.loaded_cells > 0 && app.sessions.can_list {
        worker.sessions(crate::session::SessionsCommand::Info {
            identifier: app.config.identifier.clone(),
        });
    }
    Ok(Run {
        app,
        worker,
        events,
        sender,
        saver,
        pending,
    })
}

/// The app for `opts` before its notebook is attached: its pool's label and
/// state, the first frame's isolation, the execution limit, the UI config and
/// the pools chooser.
///
/// # Errors
///
/// The config file's theme or keys are wrong.
async fn new_app(
    opts: &TuiOptions,
    connection: &Connection,
    pool_label: String,
    pool_state: PoolState,
) -> anyhow::Result<App> {
    let t = &opts.target;
    let mut app = App::new(
        AppConfig {
            pool_label,
            identifier: t.identifier.clone(),
            api_version: t.api_version,
            language: t.container_type.into(),
        },
        pool_state,
    );
    // The first frame already warns when the local pool's sessions are not
    // isolated: a running pool published its isolation; for one about to be
    // started, this machine's sandbox is detected as the pool will (its own
    // report replaces this one). A serve says in its metadata, which the
    // worker asks for.
    if t.endpoint.is_none() {
        let (isolation, could_sandbox) = crate::background::isolation_for(t.container_type).await;
        app.isolation = isolation;
        app.notice = could_sandbox.then(|| RESTART_TO_SANDBOX.to_string());
    }
    app.notebook.execution_limit = Some(t.timeout);
    // Only the local pool's kernels can be interrupted; the service cannot.
    app.notebook.can_interrupt =
        matches!(connection, Connection::Embedded | Connection::Background(_));
    super::apply_ui(&mut app, &opts.ui)?;
    app.pools = PoolsUi::new(opts.pools.clone(), &opts.pool_name);
    Ok(app)
}

/// Said when the running background pool has no sandbox but this machine can
/// build one now (it was fixed, or the pool was started with `--no-sandbox`).
pub const RESTART_TO_SANDBOX: &str = "the background pool runs sessions NOT isolated, but this \
     machine can sandbox them now: drop `sandbox = false` from [pool] if set, `sessionpad pool \
     stop`, then start sessionpad again";

/// Ends `run`: stops its worker (the background local pool it talks to keeps
/// running, for the next run and the command line), applies the news that came
/// meanwhile (a cell that finished is still saved), keeps the cells still
/// running or queued (saved as such: the pool goes on running the one that
/// runs, and records it) and, with `keep_draft` (quitting, not switching
/// pools: the text then goes along), the editor's typed text as the
/// notebook's draft; then waits up to `wait` for the notebook's savers.
pub async fn finish(mut run: Run, wait: Duration, keep_draft: bool) {
    run.worker.shutdown(wait).await;
    while let Ok(event) = run.events.try_recv() {
        run.app.handle_event(event, Instant::now());
    }
    let kept = run.app.keep_at_quit(keep_draft, Instant::now());
    if kept > 0 {
        tracing::info!(kept, "cells still waiting at quit kept in the notebook");
    }
    let switched = run.app.sessions.take_savers();
    drop(run.app);
    for thread in switched {
        persist::finish(thread, wait).await;
    }
    if let Some(thread) = run.saver {
        persist::finish(thread, wait).await;
    }
}

/// Draws one frame saying the switch is under way (stopping the worker can
/// take a moment).
///
/// # Errors
///
/// The terminal failed.
pub fn draw_switching(
    terminal: &mut Tui,
    app: &mut App,
    choice: &PoolChoice,
) -> std::io::Result<()> {
    app.notice = Some(format!("switching to pool {}…", choice.name));
    terminal
        .draw(|frame| ui::draw(frame, app, Instant::now()))
        .map(|_| ())
}
