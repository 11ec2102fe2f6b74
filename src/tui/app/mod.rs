//! The state the UI task owns, and the two reducers that change it:
//! [`App::update`] for user [`Action`]s and [`App::handle_event`] for news from the
//! session worker. Both are pure apart from the clock they are handed: they never
//! touch the terminal or the network; what must happen outside comes back as
//! [`Effect`]s for the loop to carry out.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use self::view::Views;
use super::action::{Action, Effect, Out};
use super::keymap::Keymap;
use super::theme::Theme;
use crate::notebook::Cell;
use crate::protocol::ApiVersion;
use crate::session::DecodedImage;
use crate::tui::help::{HelpAction, HelpOutcome, HelpView};
use crate::tui::notebook::NotebookUi;
use crate::tui::notebook::cell_view::Pending;
use crate::tui::pager::{Pager, PagerAction, PagerCx, PagerOutcome};
use crate::tui::widgets::image::ImageKey;
use crate::tui::widgets::prompt::Prompt;

/// How long a first Ctrl+C waits for the second.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// How often the screen refreshes while something runs (elapsed time).
pub const BUSY_TICK: Duration = Duration::from_millis(100);
/// Pool start-up lines kept for the banner.
const POOL_LOG_LIMIT: usize = 200;

/// What the status line says about where the session lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppConfig {
    /// `local` for the embedded pool, else the endpoint's host.
    pub pool_label: String,
    /// The session identifier cells run in.
    pub identifier: String,
    /// The api-version the client speaks.
    pub api_version: ApiVersion,
    /// The language cells are written in (from the pool's container type).
    pub language: crate::notebook::language::Language,
}

/// Everything the UI task owns.
#[derive(Debug)]
pub struct App {
    /// Pool label, identifier, api-version.
    pub config: AppConfig,
    /// The palette.
    pub theme: Theme,
    /// The keys, per mode (defaults merged with the config file's).
    pub keymap: Keymap,
    /// A one-off message for the status line, taken down by the next key.
    pub notice: Option<String>,
    /// The pool's state.
    pub pool: PoolState,
    /// The embedded pool's start-up progress, oldest first.
    pub pool_log: Vec<String>,
    /// What keeps the sessions isolated when the pool is a sessionpad local
    /// pool and that is known (`None` for Azure's pools, or not yet known); the
    /// status line warns from it when they are not.
    pub isolation: Option<crate::protocol::Isolation>,
    /// The notebook (`tui/notebook/`): the cells, the cell editor, the
    /// selection, this app's runs, the session boundaries, the saver and the
    /// notebook's view state.
    pub notebook: NotebookUi,
    /// A first Ctrl+C was pressed; a second before this instant quits.
    pub quit_armed_until: Option<Instant>,
    /// The loop should end.
    pub should_quit: bool,
    /// Who has the keys when no overlay takes them.
    pub focus: Focus,
    /// The side pane shown, if any.
    pub side: Option<SidePane>,
    /// What is open over the screen, newest on top (`overlay.rs`): the
    /// prompt, the history search, the picker, the pools chooser, the help,
    /// the pager. The top one takes the keys before the focus does.
    pub overlays: Overlays,
    /// Something changed since the last draw.
    pub dirty: bool,
    /// The caches the views of several features share (images, long texts,
    /// highlighted code).
    pub views: Views,
    /// The files pane: listing, preview, transfers (`files/`).
    pub files: super::files::FilesUi,
    /// The sessions pane: identifiers, switching, details (`sessions/`).
    pub sessions: super::sessions::SessionsUi,
    /// The pools to switch to and the chooser (`pools.rs`).
    pub pools: super::pools::PoolsUi,
    /// Following the session: other clients' cells (`tui/app/follow.rs`).
    pub follow: FollowUi,
    /// A recorded session shown read-only, and reads of the flight recorder
    /// under way (`tui/app/recorded.rs`).
    pub recorded: RecordedUi,
}

impl App {
    /// A fresh app; `pool` is `Starting` for the embedded pool, `Ready` for a
    /// remote endpoint (which is only known to work once a cell runs).
    pub fn new(config: AppConfig, pool: PoolState) -> Self {
        let config_can_manage = config.api_version.has_file_management();
        let config_can_recurse = config.api_version.has_recursive_listing();
        let notebook = NotebookUi::new(config.language);
        let mut views = Views::default();
        views.set_language(config.language);
        let sessions = super::sessions::SessionsUi::new(
            &config.pool_label,
            &config.identifier,
            config.api_version,
        );
        Self {
            config,
            theme: Theme::dark(),
            keymap: Keymap::default(),
            notice: None,
            pool,
            pool_log: Vec::new(),
            isolation: None,
            notebook,
            quit_armed_until: None,
            should_quit: false,
            focus: Focus::Editor,
            side: None,
            overlays: Overlays::default(),
            dirty: true,
            views,
            files: super::files::FilesUi::new(config_can_manage).with_recursion(config_can_recurse),
            sessions,
            pools: super::pools::PoolsUi::default(),
            follow: FollowUi::default(),
            recorded: RecordedUi::default(),
        }
    }

    /// Shows the cells of an earlier run of this notebook (from its file) as the
    /// records they are: not re-run, but recalled by Up like any cell. `images`
    /// are keyed by position in `cells`.
    pub fn load_history(&mut self, cells: Vec<Cell>, images: Vec<(ImageKey, DecodedImage)>) {
        let offset = self.notebook.load_history(cells);
        // The session of the reopened cells is asked about (lifecycle.rs at
        // start, `switch_session` after a switch) wherever the pool can say.
        if self.sessions.can_list {
            let reopened = self.notebook.loaded_cells;
            for b in &mut self.notebook.boundaries {
                if b.after == reopened && !b.known_new {
                    b.pool_says = PoolSays::Asking;
                }
            }
        }
        for (key, decoded) in images {
            let key = ImageKey {
                cell: key.cell + offset,
                output: key.output,
            };
            self.views.images.insert(key, decoded);
        }
        self.dirty = true;
    }

    /// The cell sources of an opened notebook not yet offered (for a switch to
    /// another pool to offer them there).
    pub fn take_queued(&mut self) -> Vec<String> {
        self.notebook.editor.take_queued()
    }

    /// Offers `sources` (the code cells of an opened notebook) in the editor one at
    /// a time: the first now if the editor is empty, the next after each run.
    pub fn queue_sources(&mut self, sources: Vec<String>) {
        self.notebook.editor.queue_sources(sources);
        self.dirty = true;
    }

    /// Cells sent to the worker and not finished yet.
    pub fn pending(&self) -> usize {
        self.notebook.pending()
    }

    /// The cell executing now and since when.
    pub fn running(&self) -> Option<(usize, Instant)> {
        self.notebook.running()
    }

    /// Every cell waiting for an answer, by index, with where it is
    /// ([`NotebookUi::pending_cells`] of this app's runs and the follower's
    /// live cells): the one place a cell's pending state comes from.
    pub fn pending_cells(&self) -> BTreeMap<usize, Pending> {
        self.notebook.pending_cells(self.follow.live_cells())
    }

    /// Where cell `cell` is while it waits for an answer
    /// ([`App::pending_cells`]); `None` for a settled cell (and for a cell
    /// nothing waits on, which the app never leaves unsettled).
    pub fn pending_of(&self, cell: usize) -> Option<Pending> {
        self.pending_cells().remove(&cell)
    }

    /// True while something changes on its own (pool starting, cells running), so
    /// the screen needs periodic redraws.
    pub fn busy(&self) -> bool {
        self.pool == PoolState::Starting || self.notebook.pending() > 0
    }

    /// When the loop should wake up next without input: the busy tick, or the end
    /// of the Ctrl+C window (to take its notice down).
    pub fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        let tick = self.busy().then(|| now + BUSY_TICK);
        // The idle countdown changes on its own too.
        let sessions_open = self.pane_open(SidePane::Sessions);
        [
            tick,
            self.quit_armed_until,
            self.sessions.next_wakeup(sessions_open, now),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Called when a wake-up time passes; returns the effects that are due
    /// (the open sessions pane's refresh).
    pub fn tick(&mut self, now: Instant) -> Vec<Effect> {
        if self.quit_armed_until.is_some_and(|t| now >= t) {
            self.quit_armed_until = None;
            self.dirty = true;
        }
        if self.busy() || self.sessions.countdown_due(now) {
            self.dirty = true;
        }
        // The open sessions pane refreshes by itself.
        let sessions_open = self.pane_open(SidePane::Sessions);
        if let Some(effects) = self.sessions.refresh_due(sessions_open, now) {
            self.dirty = true;
            return effects;
        }
        Vec::new()
    }

    /// Applies a user action; returns the effects it asks for.
    pub fn update(&mut self, action: Action, now: Instant) -> Vec<Effect> {
        self.dirty = true;
        // The completion list takes its keys before any action is made
        // (`App::completion_key`); any other action closes it.
        if !matches!(action, Action::Resize) {
            self.notebook.completion.close_popup();
        }
        if !matches!(action, Action::Resize) {
            self.notice = None;
        }
        match (self.overlay(), action) {
            (Some(Overlay::Prompt), action) => self.prompt_action(action),
            (Some(Overlay::HistorySearch), action) => self.modal_action(action),
            (Some(Overlay::Picker), action) => self.picker_action(action),
            (Some(Overlay::PoolsMenu), action) => self.pools_menu_action(action),
            (Some(Overlay::RecordedFiles), action) => self.recorded_files_action(action),
            (Some(Overlay::Help), Action::Help(action)) => self.help_action(action),
            (Some(Overlay::Pager), action) => match pager_action(action) {
                Ok(action) => self.pager_action(action),
                // The other keys that apply with the pager open (quit…).
                Err(action) => self.app_action(action, now),
            },
            (_, action) => self.app_action(action, now),
        }
    }

    /// A key of the help overlay: it scrolls, or closes.
    fn help_action(&mut self, action: HelpAction) -> Vec<Effect> {
        if let Some(help) = self.overlays.help_mut()
            && help.update(action) == HelpOutcome::Close
        {
            self.overlays.close(Overlay::Help);
        }
        Vec::new()
    }

    /// A key of the pager while it is open: its reducer scrolls and searches
    /// its own state, reading the cells; `q` closes it.
    fn pager_action(&mut self, action: PagerAction) -> Vec<Effect> {
        let cx = PagerCx {
            cells: self.notebook.cells(),
            texts: &self.views.texts,
        };
        if let Some(pager) = self.overlays.pager_mut()
            && pager.update(action, &cx) == PagerOutcome::Close
        {
            self.overlays.close(Overlay::Pager);
        }
        Vec::new()
    }

    /// Opens the pager on the output the notebook points at (the last
    /// collapsed output on screen, else the last text output on screen).
    fn open_pager(&mut self) {
        let cells = self.notebook.cells();
        if let Some(key) = self.notebook.outputs.pager_target(cells, &self.views.texts) {
            self.overlays.open(Layer::Pager(Pager::open(key, cells)));
        }
    }

    /// A key no overlay took: the app's own (quit, focus, the panes'
    /// toggles, the shared typing, pasting, scrolling and clicking keys, the
    /// pager's and the help's opening), the panes' actions handed on to
    /// their routing (`tui/app/<pane>.rs`), and the notebook's own actions
    /// to its reducer (`tui/app/cells.rs`).
    fn app_action(&mut self, action: Action, now: Instant) -> Vec<Effect> {
        match action {
            Action::Notebook(action) => return self.notebook_action(action, now),
            Action::ToggleFiles => return self.toggle_files(),
            Action::Files(a) => return self.files_action(a),
            Action::ToggleSessions => return self.toggle_sessions(),
            Action::Sessions(a) => return self.sessions_action(a),
            Action::Paste(text) if self.pane_focused(SidePane::Files) => {
                return self.files_paste(&text);
            }
            Action::Complete => return self.complete_or_indent(),
            Action::Edit(input) => self.notebook.editor.input(input),
            Action::Paste(text) => self.notebook.editor.paste(&text),
            Action::PageUp => self.notebook.outputs.page(false),
            Action::PageDown => self.notebook.outputs.page(true),
            Action::ScrollLines(n) => self.notebook.outputs.scroll_by(i64::from(n)),
            Action::Quit => self.ask_to_quit(),
            Action::Click { column, row } => return self.notebook_click(column, row),
            Action::FocusEditor => self.focus = Focus::Editor,
            Action::RecordedFiles => return self.open_recorded_files(),
            Action::Resize => {}
            Action::Pager(PagerAction::Open) => self.open_pager(),
            // The pager's other keys come only while it is open (above).
            Action::Pager(_) => {}
            Action::Help(HelpAction::Open) => {
                self.overlays.open(Layer::Help(HelpView::default()));
            }
            // Closing and scrolling come only while the help is open (above).
            Action::Help(_) => {}
        }
        Vec::new()
    }

    /// Ctrl+C with no cell of this app running: the first press warns (the
    /// status line counts down), a second within [`QUIT_WINDOW`] quits (asking
    /// first when a cell is queued or text is typed: [`App::ask_to_quit`]).
    fn arm_or_quit(&mut self, now: Instant) {
        if self.quit_armed_until.is_some_and(|t| now < t) {
            self.quit_armed_until = None;
            self.ask_to_quit();
        } else {
            self.quit_armed_until = Some(now + QUIT_WINDOW);
        }
    }

    /// Carries out what a feature's reducer handed back, in order: effects are
    /// collected for the loop, a notice goes to the status line, a prompt
    /// opens with its purpose wrapped by `purpose`, the focus goes back to
    /// the editor, and the feature's own requests go to `request`.
    fn apply<P, R>(
        &mut self,
        outs: Vec<Out<Prompt<P>, R>>,
        purpose: fn(P) -> Purpose,
        mut request: impl FnMut(&mut Self, R) -> Vec<Effect>,
    ) -> Vec<Effect> {
        let mut effects = Vec::new();
        for out in outs {
            match out {
                Out::Effect(effect) => effects.push(effect),
                Out::Notice(text) => self.notice = Some(text),
                Out::Ask(prompt) => self.ask(prompt.map_purpose(purpose)),
                Out::FocusEditor => self.focus = Focus::Editor,
                Out::Request(r) => effects.extend(request(self, r)),
            }
        }
        effects
    }

    /// Takes the text back from `$EDITOR`, as one edit that Ctrl+Z undoes; when
    /// the editor failed the cell stays as it was and the status line says why.
    pub fn finish_external_edit(&mut self, outcome: Result<String, String>) {
        self.dirty = true;
        match outcome {
            Ok(text) => self.notebook.editor.replace_from_outside(&text),
            Err(reason) => self.notice = Some(reason),
        }
    }
}

/// The pager's action for a key while the pager is open: its own, and the
/// typing, pasting, wheel and paging keys it takes over; any other action is
/// the notebook's (`Err`).
fn pager_action(action: Action) -> Result<PagerAction, Action> {
    Ok(match action {
        Action::Pager(action) => action,
        Action::Edit(input) => PagerAction::Type(input),
        Action::Paste(text) => PagerAction::Paste(text),
        Action::ScrollLines(n) => PagerAction::Scroll(n),
        Action::PageUp => PagerAction::Page(-1),
        Action::PageDown => PagerAction::Page(1),
        other => return Err(other),
    })
}

mod cells;
mod events;
mod files;
mod focus;
mod follow;
mod modal;
mod overlay;
mod picker;
mod pools;
pub(crate) mod prompt;
mod quit;
mod recorded;
mod recorded_files;
mod recorded_marks;
mod replay_watch;
mod session;
mod sessions;
pub mod status;
pub mod view;

pub use self::focus::{Focus, SidePane};
pub use self::follow::FollowUi;
pub use self::overlay::{Layer, Overlay, Overlays, Taken};
pub use self::prompt::{AppPrompt, Purpose};
pub use self::recorded::{RecordedUi, RecordedView, Then};
pub use crate::tui::notebook::PoolState;
pub use crate::tui::notebook::{NotebookPrompt, PoolSays, SessionBoundary};

#[cfg(test)]
mod tests;
