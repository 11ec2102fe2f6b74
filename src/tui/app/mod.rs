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
use super::runs::Runs;
use super::theme::Theme;
use crate::notebook::store::Saver;
use crate::notebook::{Cell, Notebook};
use crate::protocol::ApiVersion;
use crate::session::{DecodedImage, RunId};
use crate::tui::help::{HelpAction, HelpOutcome, HelpView};
use crate::tui::notebook::cell_editor::CellEditor;
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

/// A place in the notebook where the session changed: the cells before it ran
/// in an earlier session (reopened from disk, a recycled session), so their
/// variables and files are not in the session the cells after it run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionBoundary {
    /// How many cells come before the boundary.
    pub after: usize,
    /// The pool said the session is new (it was recycled), rather than the
    /// notebook being reopened, where only a pool that ended with sessionpad
    /// (the embedded one) makes the session certainly new.
    pub known_new: bool,
    /// The cells above were replayed into the new session (`R`).
    pub replayed: bool,
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
    /// The run the notice is about, and its text: the notice ends when that run
    /// settles (if no key took it down first).
    notice_about: Option<(RunId, String)>,
    /// The pool's state.
    pub pool: PoolState,
    /// The embedded pool's start-up progress, oldest first.
    pub pool_log: Vec<String>,
    /// What keeps the sessions isolated when the pool is a sessionpad local
    /// pool and that is known (`None` for Azure's pools, or not yet known); the
    /// status line warns from it when they are not.
    pub isolation: Option<crate::protocol::Isolation>,
    /// The cells run so far.
    pub notebook: Notebook,
    /// The cell being typed, its history browsing and the queued cells of an
    /// opened notebook (`tui/notebook/cell_editor.rs`).
    pub editor: CellEditor,
    /// The execution limit of a cell, shown on the running cell.
    pub execution_limit: Option<Duration>,
    /// A first Ctrl+C was pressed; a second before this instant quits.
    pub quit_armed_until: Option<Instant>,
    /// The loop should end.
    pub should_quit: bool,
    /// How many cells at the start of the notebook were reloaded from disk
    /// (records of an earlier run, not this run's).
    pub loaded_cells: usize,
    /// Where the session behind the notebook changed: the cells before each
    /// boundary ran in a session that is not the one the cells after it run in.
    pub boundaries: Vec<SessionBoundary>,
    /// Who has the keys when no overlay takes them.
    pub focus: Focus,
    /// The side pane shown, if any.
    pub side: Option<SidePane>,
    /// The notebook's cursor: the cell that copy, save and stop act on.
    pub selected: Option<usize>,
    /// Cells can be interrupted for real (the embedded local pool); elsewhere
    /// stopping a cell abandons it.
    pub can_interrupt: bool,
    /// What is open over the screen, newest on top (`overlay.rs`): the
    /// prompt, the history search, the picker, the pools chooser, the help,
    /// the pager. The top one takes the keys before the focus does.
    pub overlays: Overlays,
    /// Something changed since the last draw.
    pub dirty: bool,
    /// View state and caches (scroll, highlighted lines, images).
    pub views: Views,
    /// The execution requests not done yet (`runs.rs`): where this app's own
    /// cells are queued or running ([`App::pending_of`]).
    runs: Runs,
    /// Writes each settled cell to the notebook file, off this task.
    saver: Option<Saver>,
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
            notice_about: None,
            pool,
            pool_log: Vec::new(),
            isolation: None,
            notebook: Notebook::default(),
            editor: CellEditor::default(),
            execution_limit: None,
            quit_armed_until: None,
            should_quit: false,
            loaded_cells: 0,
            boundaries: Vec::new(),
            focus: Focus::Editor,
            side: None,
            selected: None,
            can_interrupt: false,
            overlays: Overlays::default(),
            dirty: true,
            views,
            runs: Runs::default(),
            saver: None,
            files: super::files::FilesUi::new(config_can_manage),
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
        let offset = self.notebook.cells.len();
        self.notebook.cells.extend(cells);
        self.loaded_cells = self.notebook.cells.len();
        // The cells came from an earlier run of sessionpad: whatever state they
        // built lived in the session of that run.
        if self.loaded_cells > 0 {
            self.mark_new_session(self.loaded_cells, false);
        }
        for (key, decoded) in images {
            let key = ImageKey {
                cell: key.cell + offset,
                output: key.output,
            };
            self.views.images.insert(key, decoded);
        }
        self.views.outputs.follow();
        self.dirty = true;
    }

    /// From now on every settled cell is handed to `saver`.
    pub fn set_saver(&mut self, saver: Saver) {
        self.saver = Some(saver);
    }

    /// The cell sources of an opened notebook not yet offered (for a switch to
    /// another pool to offer them there).
    pub fn take_queued(&mut self) -> Vec<String> {
        self.editor.take_queued()
    }

    /// Offers `sources` (the code cells of an opened notebook) in the editor one at
    /// a time: the first now if the editor is empty, the next after each run.
    pub fn queue_sources(&mut self, sources: Vec<String>) {
        self.editor.queue_sources(sources);
        self.dirty = true;
    }

    /// Cells sent to the worker and not finished yet.
    pub fn pending(&self) -> usize {
        self.runs.len()
    }

    /// The cell executing now and since when.
    pub fn running(&self) -> Option<(usize, Instant)> {
        self.runs.running().map(|(_, cell, since)| (cell, since))
    }

    /// Every cell waiting for an answer, by index, with where it is: the
    /// run's state (queued, or running since the worker began it) for a cell
    /// this app sent; running, since an unknown time, for another client's
    /// cell shown while it runs (following), unless this app's run of it says
    /// more. The one place a cell's pending state comes from (cells hold only
    /// what their execution came to); the views draw from it.
    pub fn pending_cells(&self) -> BTreeMap<usize, Pending> {
        let followed = self
            .follow
            .live_cells()
            .map(|cell| (cell, Pending::Running { since: None }));
        // This app's runs come last, so their state wins.
        let own = self.runs.iter().map(|run| (run.cell, run.state.pending()));
        followed.chain(own).collect()
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
        self.pool == PoolState::Starting || !self.runs.is_empty()
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
        if !matches!(action, Action::Resize) {
            self.notice = None;
        }
        match (self.overlay(), action) {
            (Some(Overlay::Prompt), action) => self.prompt_action(action),
            (Some(Overlay::HistorySearch), action) => self.modal_action(action),
            (Some(Overlay::Picker), action) => self.picker_action(action),
            (Some(Overlay::PoolsMenu), action) => self.pools_menu_action(action),
            (Some(Overlay::Help), Action::Help(action)) => self.help_action(action),
            (Some(Overlay::Pager), action) => match pager_action(action) {
                Ok(action) => self.pager_action(action),
                // The notebook's keys that apply with the pager open (quit…).
                Err(action) => self.notebook_action(action, now),
            },
            (_, action) => self.notebook_action(action, now),
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
            cells: &self.notebook.cells,
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
        let cells = &self.notebook.cells;
        if let Some(key) = self.views.outputs.pager_target(cells, &self.views.texts) {
            self.overlays.open(Layer::Pager(Pager::open(key, cells)));
        }
    }

    /// The notebook's reducer: the keys of the editor and the outputs (run,
    /// scroll, select, copy, save, history, help), and the panes' toggles and
    /// actions handed on to their routing (`tui/app/<pane>.rs`).
    fn notebook_action(&mut self, action: Action, now: Instant) -> Vec<Effect> {
        match action {
            Action::RunCell => {
                // A recorded session on screen gives way to the live one first.
                let mut effects = self.leave_recorded(now);
                effects.extend(self.run_cell(None));
                return effects;
            }
            Action::RunCellWithStdin => self.ask_stdin(),
            Action::ToggleFiles => return self.toggle_files(),
            Action::Files(a) => return self.files_action(a),
            Action::ToggleSessions => return self.toggle_sessions(),
            Action::Sessions(a) => return self.sessions_action(a),
            Action::Paste(text) if self.pane_focused(SidePane::Files) => {
                return self.files_paste(&text);
            }
            Action::HistoryPrev => self.editor.history_prev(&self.notebook.cells),
            Action::HistoryNext => self.editor.history_next(&self.notebook.cells),
            Action::Edit(input) => {
                self.editor.input(input);
            }
            Action::Paste(text) => {
                self.editor.paste(&text);
            }
            Action::PageUp => self.views.outputs.page(false),
            Action::PageDown => self.views.outputs.page(true),
            Action::ScrollLines(n) => self.views.outputs.scroll_by(i64::from(n)),
            // Jupyter's habit: Ctrl+C interrupts the running cell; only when
            // nothing runs does it (pressed twice) quit.
            Action::Interrupt if self.runs.running().is_some() => return self.stop_running(),
            Action::Interrupt => {
                if self.quit_armed_until.is_some_and(|t| now < t) {
                    self.should_quit = true;
                } else {
                    self.quit_armed_until = Some(now + QUIT_WINDOW);
                }
            }
            Action::Quit => self.should_quit = true,
            Action::FocusOutputs => self.focus_outputs(),
            Action::SelectCell(delta) => self.select_cell(delta),
            Action::StopCell => return self.stop_cell(),
            Action::CopyOutput => return self.copy_cell(false).into_iter().collect(),
            Action::CopyInput => return self.copy_cell(true).into_iter().collect(),
            Action::SaveOutput => self.start_save(),
            Action::HistorySearch => self.start_history_search(),
            Action::ReplayEarlier => return self.replay_earlier(),
            Action::Click { column, row } => self.click(column, row),
            Action::FocusEditor => self.focus = Focus::Editor,
            Action::Resize => {}
            Action::Pager(PagerAction::Open) => self.open_pager(),
            // The pager's other keys come only while it is open (above).
            Action::Pager(_) => {}
            Action::Newline => self.editor.newline(self.config.language),
            Action::Undo => self.editor.undo(),
            Action::Redo => self.editor.redo(),
            Action::ExternalEditor => {
                return vec![Effect::EditExternally {
                    source: self.editor.source(),
                    language: self.config.language,
                }];
            }
            Action::Help(HelpAction::Open) => {
                self.overlays.open(Layer::Help(HelpView::default()));
            }
            // Closing and scrolling come only while the help is open (above).
            Action::Help(_) => {}
        }
        Vec::new()
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
            Ok(text) => self.editor.replace_from_outside(&text),
            Err(reason) => self.notice = Some(reason),
        }
    }

    /// Moves the editor's text into the notebook as a queued cell (a shell
    /// command given `stdin`, when there is one).
    pub(crate) fn run_cell(&mut self, stdin: Option<String>) -> Option<Effect> {
        let code = self.editor.take_for_run()?;
        let index = self.notebook.push(code.clone());
        if let Some(cell) = self.notebook.cell_mut(index) {
            cell.stdin.clone_from(&stdin);
        }
        let run = self.runs.queue(index);
        self.views.outputs.follow();
        // The notebook's cursor goes back to the newest cell (the next Esc
        // selects it), as Jupyter's does to the cell just run.
        self.selected = None;
        Some(Effect::Execute { run, code, stdin })
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
mod recorded;
mod session;
mod sessions;
pub mod status;
pub mod view;

pub use self::focus::{Focus, SidePane};
pub use self::follow::FollowUi;
pub use self::modal::NotebookPrompt;
pub use self::overlay::{Layer, Overlay, Overlays, Taken};
pub use self::prompt::{AppPrompt, Purpose};
pub use self::recorded::{RecordedUi, RecordedView, Then};
pub use crate::tui::notebook::PoolState;

#[cfg(test)]
mod tests;
