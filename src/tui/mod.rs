//! The terminal UI: a cell editor, the outputs of the cells run so far and a status
//! line, on ratatui + crossterm.
//!
//! Shape (style.md): the UI task owns the terminal and all state ([`app::App`]);
//! keys become [`action::Action`]s, `App::update` returns [`action::Effect`]s, and
//! the session worker ([`crate::session`], which knows nothing of the terminal)
//! owns the client (and finds or starts the background local pool), talking back through
//! [`crate::session::SessionEvent`]s that arrive wrapped in [`event::AppEvent`]s.
//! The UI task never awaits the network.

pub mod action;
pub mod app;
pub mod cell_export;
pub mod event;
pub mod external_editor;
pub mod files;
pub mod graphics;
pub mod help;
pub mod keymap;
mod lifecycle;
pub mod local;
pub mod local_paths;
pub mod notebook;
pub mod pager;
pub mod persist;
pub mod picker;
pub mod pools;
pub mod runner;
pub mod sessions;
pub mod terminal;
pub mod theme;
pub mod typeahead;
pub mod ui_config;
pub mod widgets;

use std::time::Duration;

pub use self::ui_config::UiConfig;

use self::app::App;
use self::terminal::TerminalGuard;

/// How long quitting waits for the worker to stop.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// How the TUI was asked to start.
#[derive(Debug, Clone)]
pub struct TuiOptions {
    /// The pool to start on: its endpoint (`None`: the background local pool),
    /// credentials, api-version, session identifier, execution limit and pool
    /// type.
    pub target: pools::PoolTarget,
    /// How the background local pool is started when the target has no
    /// endpoint and none runs (`[background_pool]`, the config file it reads).
    pub background: crate::background::StartOptions,
    /// Theme, keys and image protocol from the config file.
    pub ui: UiConfig,
    /// The pools the sessions pane can switch to (config profiles, the local
    /// pool); empty offers none.
    pub pools: Vec<pools::PoolChoice>,
    /// The name of the pool `target` reaches, as in `pools`.
    pub pool_name: String,
    /// Start following the session (`sessionpad --follow ID`): other
    /// clients' cells in it appear as they finish.
    pub follow: bool,
}

impl TuiOptions {
    /// These options pointed at `choice`; the UI settings and the choices stay.
    /// A choice that cannot be used changes nothing.
    #[must_use]
    pub fn switched_to(&self, choice: &pools::PoolChoice) -> Self {
        let Ok(target) = &choice.target else {
            return self.clone();
        };
        Self {
            target: target.clone(),
            pool_name: choice.name.clone(),
            ..self.clone()
        }
    }
}

/// Runs the TUI until the user quits. The terminal is restored on return, on error
/// and on panic; the background local pool it used keeps running (it ends by
/// itself when idle, or on `sessionpad pool stop`).
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
/// The first frame is drawn before anything waits: the pool is found or
/// started by the worker meanwhile, and the terminal is asked about its
/// graphics after that frame (the keys typed while it answers are kept, see
/// [`typeahead`]).
///
/// Choosing another pool in the sessions pane (`p`) ends the loop's run for the
/// current pool and starts one for the chosen pool in the same terminal
/// ([`pools`]): the notebook is saved, the worker stopped (the background
/// local pool keeps running, with its sessions, for a switch back) and the app
/// built again; the cell being typed moves along.
///
/// # Errors
///
/// As [`run`].
pub async fn run_with(opts: TuiOptions, queued: Vec<String>) -> anyhow::Result<()> {
    // The syntaxes load beside the first frame, not before it.
    widgets::highlight::preload();
    let mut guard = TerminalGuard::enter()?;
    let mut current = opts;
    let mut carry = lifecycle::Carry {
        queued,
        ..Default::default()
    };
    // The graphics probe's picker once known, and until then the probe
    // reading the answer off the UI task (its keys go to the first run).
    let mut picker: Option<ratatui_image::picker::Picker> = None;
    let mut probing: Option<tokio::task::JoinHandle<ratatui_image::picker::Picker>> = None;
    loop {
        let mut run = lifecycle::start(&current, std::mem::take(&mut carry)).await?;
        let mut typed = None;
        if picker.is_none()
            && let Some(probe) = probing.take()
        {
            // A pool chosen before the terminal answered: its answer first.
            picker = probe.await.ok();
        }
        match &picker {
            Some(picker) => {
                run.app.views.images.set_picker(picker.clone());
                run.app.notebook.outputs.invalidate_all();
            }
            None => {
                // The first frame, before the terminal is asked anything.
                run.app.dirty = true;
                guard.terminal_mut().draw(|frame| {
                    app::view::draw(frame, &mut run.app, std::time::Instant::now());
                })?;
                tracing::debug!("first frame drawn");
                let (keys, handle) = probe_graphics(&current, run.sender.clone());
                typed = Some(keys);
                probing = Some(handle);
            }
        }
        run.app.dirty = true;
        let result = runner::run_loop(
            guard.terminal_mut(),
            &mut run.app,
            &mut run.events,
            &run.worker,
            &run.sender,
            typed,
            std::mem::take(&mut run.pending),
        )
        .await;
        // The answer, once read, serves every later run (a switched pool's);
        // still probing, the next run waits for it.
        if picker.is_none()
            && let Some(probe) = probing.take_if(|p| p.is_finished())
        {
            picker = probe.await.ok();
        }
        let Ok(runner::LoopEnd::SwitchPool(choice)) = result else {
            drop(guard);
            lifecycle::finish(run, SHUTDOWN_WAIT, true).await;
            break result.map(|_| ());
        };
        carry = lifecycle::Carry::from_app(&mut run.app, &choice);
        let _ = lifecycle::draw_switching(guard.terminal_mut(), &mut run.app, &choice);
        lifecycle::finish(run, SHUTDOWN_WAIT, false).await;
        current = current.switched_to(&choice);
    }
}

/// Asks the terminal which image protocol it speaks, after the first frame:
/// the question is written now, and the answer read on a blocking thread
/// while the loop runs (issue 27: the loop used to wait for it, 150 ms inside
/// tmux, before the first key was handled). The keys typed meanwhile come
/// through the receiver returned as soon as each is whole; it closes when
/// the answer is read, and then the loop reads the terminal itself. The
/// picker goes to the loop as [`event::AppEvent::GraphicsProbed`] and is
/// also the task's result. A terminal that never answers takes
/// [`graphics::PROBE_TIMEOUT`] to give half-blocks.
fn probe_graphics(
    opts: &TuiOptions,
    events: event::AppEventSender,
) -> (
    tokio::sync::mpsc::UnboundedReceiver<crossterm::event::Event>,
    tokio::task::JoinHandle<ratatui_image::picker::Picker>,
) {
    let asked = graphics::ask_terminal(graphics::choice(opts.ui.image_protocol));
    let (keys, typed) = tokio::sync::mpsc::unbounded_channel();
    let handle = tokio::task::spawn_blocking(move || {
        // The loop dropped the receiver (it handed the terminal to
        // `$EDITOR`): the probe stops reading at once.
        let gone = keys.clone();
        let picker = asked.answer(
            &mut |events| {
                for key in events {
                    let _ = keys.send(key);
                }
            },
            &|| gone.is_closed(),
        );
        events.graphics_probed(picker.clone());
        picker
    });
    (typed, handle)
}

/// Reads this machine's sessions store (off the UI task) into the sessions pane
/// and records that `identifier` is used with the pool now.
async fn attach_sessions_store(app: &mut App, endpoint: Option<&str>, identifier: &str) {
    use crate::notebook::sessions_store::SessionsStore;
    let loaded = tokio::task::spawn_blocking(SessionsStore::load).await;
    let sessions = &mut app.sessions;
    sessions.endpoint = endpoint.map(str::to_string);
    sessions.pool = crate::notebook::store::pool_name(endpoint, app.config.language);
    // A named endpoint's key is known now; the background or embedded
    // pool's names its address, known once it is reached
    // (`SessionEvent::PoolKey`).
    if let Some(endpoint) = endpoint {
        let container_type = app.config.language.container_type();
        sessions.pane.ledger_pool = crate::protocol::record::pool_key_of(endpoint, container_type);
    }
    match loaded {
        Ok(loaded) => {
            if let Some(problem) = loaded.problem {
                app.pool_log.push(problem);
            }
            // The file is written off this task, by a thread joined when the
            // run ends (with the notebook's savers).
            match crate::notebook::sessions_store::StoreWriter::spawn(loaded.store.clone()) {
                Ok((writer, thread)) => {
                    app.sessions.writer = Some(writer);
                    app.sessions.keep_saver(Some(thread));
                }
                Err(e) => tracing::error!("sessions store writer not started: {e}"),
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
    widgets::highlight::set_theme(&app.theme.syntax).map_err(anyhow::Error::msg)?;
    app.keymap = keymap::Keymap::with_overrides(&ui.keys)
        .map_err(|e| anyhow::anyhow!("keys: {}", e.message))?;
    Ok(())
}

/// A fresh session identifier: `sessionpad-` and 8 hex digits.
pub fn random_identifier() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("sessionpad-{}", &hex[..8])
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
}
