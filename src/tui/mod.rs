//! The terminal UI: a cell editor, the outputs of the cells run so far and a status
//! line, on ratatui + crossterm.
//!
//! Shape (style.md): the UI task owns the terminal and all state ([`app::App`]);
//! keys become [`action::Action`]s, `App::update` returns [`action::Effect`]s, and
//! the session worker ([`worker`]) owns the client and the embedded pool, talking
//! back through [`event::AppEvent`]s. The UI task never awaits the network.

pub mod action;
pub mod app;
pub mod cell_export;
pub mod event;
pub mod external_editor;
pub mod file_picker;
pub mod files_state;
pub mod graphics;
pub mod keymap;
pub mod local;
pub mod local_paths;
pub mod persist;
pub mod radar;
pub mod runner;
pub mod sessions_state;
pub mod terminal;
pub mod theme;
pub mod ui;
pub mod worker;
pub mod worker_files;

use std::time::Duration;

use crate::client::ApiVersion;
use crate::config::UiConfig;

use self::app::{App, AppConfig, PoolState};
use self::event::AppEventSender;
use self::terminal::TerminalGuard;
use self::worker::{Connection, SessionWorker, WorkerConfig};

/// How long quitting waits for the worker to stop the embedded pool.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// How the TUI was asked to start.
#[derive(Debug, Clone)]
pub struct TuiOptions {
    /// Pool management endpoint; `None` starts the embedded local pool.
    pub endpoint: Option<String>,
    /// Static bearer token for `endpoint`.
    pub token: Option<String>,
    /// An Entra credential for `endpoint` instead of the static token.
    pub auth: Option<crate::client::auth::AuthConfig>,
    /// The api-version to speak.
    pub api_version: ApiVersion,
    /// Session identifier; `None` uses the one derived from the working directory
    /// (as the CLI does), so restarting in a folder reopens its notebook.
    pub identifier: Option<String>,
    /// Execution limit of each cell.
    pub timeout: Duration,
    /// Theme, keys and image protocol from the config file.
    pub ui: UiConfig,
}

/// Runs the TUI until the user quits. The terminal is restored on return, on error
/// and on panic; the embedded pool (if any) is shut down after the terminal is
/// given back.
///
/// # Errors
///
/// The terminal could not be set up or failed, or a task panicked.
pub async fn run(opts: TuiOptions) -> anyhow::Result<()> {
    run_with(opts, Vec::new()).await
}

/// Runs the TUI like [`run`], with `queued` cell sources (an opened notebook's)
/// offered in the editor one at a time, not run.
///
/// # Errors
///
/// As [`run`].
pub async fn run_with(opts: TuiOptions, queued: Vec<String>) -> anyhow::Result<()> {
    let identifier = opts
        .identifier
        .clone()
        .unwrap_or_else(crate::cli::target::identifier_for_cwd);
    let (connection, pool_label, pool_state) = match &opts.endpoint {
        None => (
            Connection::Embedded,
            "local".to_string(),
            PoolState::Starting,
        ),
        Some(endpoint) => (
            Connection::Remote {
                endpoint: endpoint.clone(),
                token: opts.token.clone(),
                auth: opts.auth.clone(),
            },
            host_of(endpoint),
            PoolState::Ready,
        ),
    };
    let mut app = App::new(
        AppConfig {
            pool_label,
            identifier: identifier.clone(),
            api_version: opts.api_version,
        },
        pool_state,
    );
    app.execution_limit = Some(opts.timeout);
    // Only the embedded pool's kernels can be interrupted; the service cannot.
    app.can_interrupt = matches!(connection, Connection::Embedded);
    apply_ui(&mut app, &opts.ui)?;
    let place = persist::Place::new(opts.endpoint.as_deref(), &identifier, opts.api_version);
    let saver = persist::attach(&mut app, place).await;
    attach_sessions_store(&mut app, opts.endpoint.as_deref(), &identifier).await;
    app.queue_sources(queued);
    let mut guard = TerminalGuard::enter()?;
    let (sender, mut events) = AppEventSender::channel();
    app.views.images.connect(sender.clone());
    let worker = SessionWorker::spawn(
        WorkerConfig {
            connection,
            api_version: opts.api_version,
            identifier,
            timeout: opts.timeout,
        },
        sender,
    );
    // Asked before the first frame and before the input stream starts: keys
    // typed while the probe reads the answer would be lost, and nobody types
    // before seeing the screen. A terminal that never answers delays the first
    // frame by the probe's timeout.
    let choice = graphics::choice(opts.ui.image_protocol);
    let picker = tokio::task::spawn_blocking(move || graphics::picker(choice))
        .await
        .unwrap_or_else(|_| ratatui_image::picker::Picker::halfblocks());
    app.views.images.set_picker(picker);
    app.views.outputs.invalidate_all();
    app.dirty = true;
    let result = runner::run_loop(guard.terminal_mut(), &mut app, &mut events, &worker).await;
    drop(guard);
    worker.shutdown(SHUTDOWN_WAIT).await;
    // A cell that finished while quitting is still saved; then the saver drains.
    while let Ok(event) = events.try_recv() {
        app.handle_event(event, std::time::Instant::now());
    }
    let switched = app.sessions.take_savers();
    drop(app);
    for thread in switched {
        persist::finish(thread, SHUTDOWN_WAIT).await;
    }
    if let Some(thread) = saver {
        persist::finish(thread, SHUTDOWN_WAIT).await;
    }
    result
}

/// Reads this machine's sessions store (off the UI task) into the sessions pane
/// and records that `identifier` is used with the pool now.
async fn attach_sessions_store(app: &mut App, endpoint: Option<&str>, identifier: &str) {
    use crate::notebook::sessions_store::SessionsStore;
    let loaded = tokio::task::spawn_blocking(SessionsStore::load).await;
    let sessions = &mut app.sessions;
    sessions.endpoint = endpoint.map(str::to_string);
    sessions.pool = crate::notebook::store::pool_name(endpoint);
    match loaded {
        Ok(loaded) => {
            if let Some(problem) = loaded.problem {
                app.pool_log.push(problem);
            }
            app.sessions.store = Some(loaded.store);
            app.sessions.record_use(identifier);
        }
        Err(e) => tracing::error!("sessions store not loaded: {e}"),
    }
}

/// Puts the config file's theme (without colours under `NO_COLOR`) and keys into
/// the app. Both were checked when the file was read, so errors here are bugs.
fn apply_ui(app: &mut App, ui: &UiConfig) -> anyhow::Result<()> {
    let name = ui.theme.as_deref().unwrap_or(theme::DEFAULT_THEME);
    app.theme =
        theme::Theme::named(name, theme::no_color_from_env()).map_err(anyhow::Error::msg)?;
    app.keymap = keymap::Keymap::with_overrides(&ui.keys)
        .map_err(|e| anyhow::anyhow!("keys: {}", e.message))?;
    Ok(())
}

/// A fresh session identifier: `sessionpad-` and 8 hex digits.
pub fn random_identifier() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("sessionpad-{}", &hex[..8])
}

/// The host of an endpoint URL for the status line, or the endpoint itself when
/// it does not parse.
fn host_of(endpoint: &str) -> String {
    url::Url::parse(endpoint)
        .ok()
        .and_then(|u| {
            u.host_str().map(|h| match u.port() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_string(),
            })
        })
        .unwrap_or_else(|| endpoint.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_prefixed_and_short() {
        let id = random_identifier();
        assert!(id.starts_with("sessionpad-"));
        assert_eq!(id.len(), "sessionpad-".len() + 8);
        assert_ne!(id, random_identifier());
    }

    #[test]
    fn host_of_endpoint() {
        assert_eq!(
            host_of("https://eastus.dynamicsessions.io/subscriptions/x/sessionPools/p"),
            "eastus.dynamicsessions.io"
        );
        assert_eq!(host_of("http://127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(host_of("nonsense"), "nonsense");
    }
}
