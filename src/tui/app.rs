//! The state the UI task owns, and the two reducers that change it:
//! [`App::update`] for user [`Action`]s and [`App::handle_event`] for news from the
//! session worker. Both are pure apart from the clock they are handed: they never
//! touch the terminal or the network; what must happen outside comes back as
//! [`Effect`]s for the loop to carry out.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ratatui_textarea::{CursorMove, TextArea};

use super::action::{Action, Effect};
use super::event::{AppEvent, DecodedImage, RunId};
use super::keymap::EditorContext;
use super::theme::Theme;
use super::ui::Views;
use super::ui::image::ImageKey;
use crate::client::ApiVersion;
use crate::notebook::{CellStatus, Notebook, Output};

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
}

/// The pool, as far as the UI knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolState {
    /// The embedded pool is starting (maybe building its Python environment).
    Starting,
    /// Executions can be sent.
    Ready,
    /// The pool could not be started or reached.
    Failed(String),
}

/// Where browsing the history is: `None` while editing a new cell.
#[derive(Debug, Default)]
struct History {
    position: Option<usize>,
    draft: Vec<String>,
}

/// Everything the UI task owns.
#[derive(Debug)]
pub struct App {
    /// Pool label, identifier, api-version.
    pub config: AppConfig,
    /// The palette.
    pub theme: Theme,
    /// The pool's state.
    pub pool: PoolState,
    /// The embedded pool's start-up progress, oldest first.
    pub pool_log: Vec<String>,
    /// The cells run so far.
    pub notebook: Notebook,
    /// The cell being typed.
    pub editor: TextArea<'static>,
    /// The cell executing now and since when.
    pub running: Option<(usize, Instant)>,
    /// A first Ctrl+C was pressed; a second before this instant quits.
    pub quit_armed_until: Option<Instant>,
    /// The loop should end.
    pub should_quit: bool,
    /// The notebook has the keyboard focus (Esc), not the editor.
    pub outputs_focused: bool,
    /// Something changed since the last draw.
    pub dirty: bool,
    /// View state and caches (scroll, highlighted lines, images).
    pub views: Views,
    history: History,
    runs: HashMap<RunId, usize>,
    next_run: u64,
}

fn new_editor(lines: Vec<String>) -> TextArea<'static> {
    let mut editor = TextArea::new(lines);
    editor.set_tab_length(4);
    editor
}

impl App {
    /// A fresh app; `pool` is `Starting` for the embedded pool, `Ready` for a
    /// remote endpoint (which is only known to work once a cell runs).
    pub fn new(config: AppConfig, pool: PoolState) -> Self {
        Self {
            config,
            theme: Theme::dark(),
            pool,
            pool_log: Vec::new(),
            notebook: Notebook::default(),
            editor: new_editor(vec![String::new()]),
            running: None,
            quit_armed_until: None,
            should_quit: false,
            outputs_focused: false,
            dirty: true,
            views: Views::default(),
            history: History::default(),
            runs: HashMap::new(),
            next_run: 1,
        }
    }

    /// What the keymap needs to know about the editor.
    pub fn editor_context(&self) -> EditorContext {
        let row = self.editor.cursor().0;
        EditorContext {
            empty: self.editor.is_empty(),
            on_first_line: row == 0,
            on_last_line: row + 1 >= self.editor.lines().len(),
            outputs_focused: self.outputs_focused,
        }
    }

    /// Cells sent to the worker and not finished yet.
    pub fn pending(&self) -> usize {
        self.runs.len()
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
        match (tick, self.quit_armed_until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Called when a wake-up time passes.
    pub fn tick(&mut self, now: Instant) {
        if self.quit_armed_until.is_some_and(|t| now >= t) {
            self.quit_armed_until = None;
            self.dirty = true;
        }
        if self.busy() {
            self.dirty = true;
        }
    }

    /// Applies a user action; returns the effects it asks for.
    pub fn update(&mut self, action: Action, now: Instant) -> Vec<Effect> {
        self.dirty = true;
        match action {
            Action::RunCell => return self.run_cell().into_iter().collect(),
            Action::HistoryPrev => self.history_prev(),
            Action::HistoryNext => self.history_next(),
            Action::Edit(input) => {
                self.editor.input(input);
            }
            Action::Paste(text) => {
                self.editor.insert_str(clean_paste(&text));
            }
            Action::PageUp => self.views.outputs.page(false),
            Action::PageDown => self.views.outputs.page(true),
            Action::ScrollLines(n) => self.views.outputs.scroll_by(i64::from(n)),
            Action::Interrupt => {
                if self.quit_armed_until.is_some_and(|t| now < t) {
                    self.should_quit = true;
                } else {
                    self.quit_armed_until = Some(now + QUIT_WINDOW);
                }
            }
            Action::Quit => self.should_quit = true,
            Action::FocusOutputs => self.outputs_focused = true,
            Action::FocusEditor => self.outputs_focused = false,
            Action::Resize => {}
        }
        Vec::new()
    }

    /// Moves the editor's text into the notebook as a queued cell.
    fn run_cell(&mut self) -> Option<Effect> {
        let code = self.editor.lines().join("\n");
        if code.trim().is_empty() {
            return None;
        }
        let index = self.notebook.push(code.clone());
        let run = RunId(self.next_run);
        self.next_run += 1;
        self.runs.insert(run, index);
        self.editor = new_editor(vec![String::new()]);
        self.history = History::default();
        self.views.outputs.follow();
        Some(Effect::Execute { run, code })
    }

    fn load(&mut self, source: &str, cursor: CursorMove) {
        self.editor = new_editor(source.split('\n').map(str::to_string).collect());
        self.editor.move_cursor(cursor);
        self.editor.move_cursor(CursorMove::End);
    }

    fn history_prev(&mut self) {
        let count = self.notebook.cells.len();
        let target = match self.history.position {
            None if count == 0 => return,
            None => {
                self.history.draft = self.editor.lines().to_vec();
                count - 1
            }
            Some(0) => return,
            Some(p) => p - 1,
        };
        self.history.position = Some(target);
        let source = self.notebook.cells[target].source.clone();
        self.load(&source, CursorMove::Top);
    }

    fn history_next(&mut self) {
        let Some(p) = self.history.position else {
            return;
        };
        if p + 1 < self.notebook.cells.len() {
            self.history.position = Some(p + 1);
            let source = self.notebook.cells[p + 1].source.clone();
            self.load(&source, CursorMove::Bottom);
        } else {
            let draft = std::mem::take(&mut self.history.draft);
            self.history.position = None;
            self.load(&draft.join("\n"), CursorMove::Bottom);
        }
    }

    /// Applies news from the session worker.
    pub fn handle_event(&mut self, event: AppEvent, now: Instant) {
        self.dirty = true;
        match event {
            AppEvent::PoolProgress(line) => {
                self.pool_log.push(line);
                let excess = self.pool_log.len().saturating_sub(POOL_LOG_LIMIT);
                self.pool_log.drain(..excess);
            }
            AppEvent::PoolReady => self.pool = PoolState::Ready,
            AppEvent::PoolFailed(reason) => self.pool = PoolState::Failed(reason),
            AppEvent::ExecutionStarted(run) => {
                if let Some(&index) = self.runs.get(&run) {
                    self.set_status(index, CellStatus::Running);
                    self.running = Some((index, now));
                }
            }
            AppEvent::ExecutionFinished {
                run,
                outcome,
                images,
            } => self.finish(run, outcome, images),
        }
    }

    fn set_status(&mut self, index: usize, status: CellStatus) {
        if let Some(cell) = self.notebook.cell_mut(index) {
            cell.status = status;
            self.views.outputs.invalidate(index);
        }
    }

    fn finish(
        &mut self,
        run: RunId,
        outcome: Result<crate::client::Execution, String>,
        images: Vec<DecodedImage>,
    ) {
        // A reply for a run this app never sent (or already settled) is stale.
        let Some(index) = self.runs.remove(&run) else {
            return;
        };
        if self.running.is_some_and(|(i, _)| i == index) {
            self.running = None;
        }
        let Some(cell) = self.notebook.cell_mut(index) else {
            return;
        };
        match outcome {
            Ok(exec) => cell.finish(&exec),
            Err(reason) => cell.fail(&reason),
        }
        let image_outputs = cell
            .outputs
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o, Output::DisplayData { .. }))
            .map(|(n, _)| n);
        for (output, decoded) in image_outputs.zip(images) {
            self.views.images.insert(
                ImageKey {
                    cell: index,
                    output,
                },
                decoded,
            );
        }
        self.views.outputs.invalidate(index);
    }
}

/// Pasted text as the editor should get it: line breaks normalised, tabs as four
/// spaces, other control characters (escape sequences included) dropped.
fn clean_paste(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    super::ui::sanitize::plain(&text.replace('\t', "    "))
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
