//! The notebook's state, [`NotebookUi`]: the cells, the cell editor, the
//! selection, this app's runs, the session boundaries, the saver, and the
//! notebook's own view state (the outputs pane's scroll and row cache, the
//! editor's highlighted lines, where both were drawn). Its reducer is in
//! `update.rs`; what it shares with other features (the image store, the
//! long texts, the highlighter) stays the app's and is handed in where a
//! method needs it.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use ratatui::layout::Rect;

use super::cell_editor::CellEditor;
use super::cell_view::Pending;
use super::editor::EditorView;
use super::outputs::OutputsView;
use super::runs::Runs;
use crate::notebook::language::Language;
use crate::notebook::store::Saver;
use crate::notebook::{Cell, Notebook};
use crate::session::RunId;

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
    /// Not a new session but a new kernel in it (it was ended: a timeout
    /// it ignored, its memory limit, a crash): the kernel's numbering
    /// starts again here, as its state did.
    pub kernel_restarted: bool,
    /// What the pool said about the session of the cells above, for a
    /// reopened notebook (issue 27 item 9: it said "maybe ended" of a live
    /// session, and never that `/mnt/data` goes with an ended one).
    pub pool_says: PoolSays,
}

/// What the pool said about the session that ran a reopened notebook's cells
/// (`GET session`, 2025-02-02-preview and later, `aca-api.md` §4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoolSays {
    /// The pool cannot be asked (its api-version has no session calls), or
    /// the boundary is not a reopened notebook's.
    #[default]
    CannotAsk,
    /// Asked; no answer yet.
    Asking,
    /// The session is live and was created before the notebook file was
    /// last written (`created`, when the pool gives it), so it is the one
    /// that ran the cells above: their variables and files are kept.
    Live {
        /// When the pool created the session (`createdAt`).
        created: Option<DateTime<Utc>>,
    },
    /// The pool has no such session: it ended, and its variables and
    /// `/mnt/data` files with it.
    Ended,
}

/// Where the notebook's panes were drawn, as of the last frame (for clicks).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    /// The outputs of the cells (or the banner before the first).
    pub outputs: Rect,
    /// The cell editor.
    pub editor: Rect,
}

/// The notebook's state: everything its reducer (`update.rs`) changes.
#[derive(Debug, Default)]
pub struct NotebookUi {
    /// The cells run so far (and those shown while they run), in order.
    pub book: Notebook,
    /// The cell being typed, its history browsing and the queued cells of an
    /// opened notebook (`cell_editor.rs`).
    pub editor: CellEditor,
    /// Tab completion's request and whether the pool completes
    /// (`completion.rs`).
    pub completion: super::completion::CompletionState,
    /// The notebook's cursor: the cell that copy, save and stop act on.
    pub selected: Option<usize>,
    /// Where the session behind the notebook changed: the cells before each
    /// boundary ran in a session that is not the one the cells after it run in.
    pub boundaries: Vec<SessionBoundary>,
    /// How many cells at the start of the notebook were reloaded from disk
    /// (records of an earlier run, not this run's).
    pub loaded_cells: usize,
    /// When the notebook file of those cells was last written (its
    /// modification time): a live session created after it did not run
    /// them.
    pub loaded_at: Option<DateTime<Utc>>,
    /// The execution limit of a cell, shown on the running cell.
    pub execution_limit: Option<Duration>,
    /// Cells can be interrupted for real (the embedded local pool); elsewhere
    /// stopping a cell abandons it.
    pub can_interrupt: bool,
    /// Scroll position, selection mark and row cache of the outputs pane.
    pub outputs: OutputsView,
    /// Highlighted lines and scroll position of the editor.
    pub editor_view: EditorView,
    /// Where the outputs and the editor were drawn at the last frame.
    pub areas: Areas,
    /// The execution requests not done yet (`runs.rs`): where this app's own
    /// cells are queued or running ([`NotebookUi::pending_cells`]).
    pub(super) runs: Runs,
    /// Writes each settled cell to the notebook file, off the UI task.
    pub(super) saver: Option<Saver>,
    /// The run the status line's notice is about, and its text: the notice
    /// ends when that run settles (if no key took it down first).
    pub(super) notice_about: Option<(RunId, String)>,
    /// The pool's execution ids of this app's running cells, by cell, as
    /// their running output named them (`quit.rs`: what finds a cell's
    /// record once the notebook was quit while it ran).
    pub(super) execution_ids: HashMap<usize, String>,
    /// The newest count the kernel told (local pools), with its cell's
    /// index: a later count not above it means the kernel started again.
    pub(super) kernel_count: Option<(usize, u32)>,
}

impl NotebookUi {
    /// An empty notebook whose editor highlights `language`.
    pub fn new(language: Language) -> Self {
        let mut notebook = Self::default();
        notebook.editor_view.set_language(language);
        notebook
    }

    /// The cells, oldest first.
    pub fn cells(&self) -> &[Cell] {
        &self.book.cells
    }

    /// Forgets the cells, the runs, the boundaries, the saver and the view
    /// state (the session switched); the editor keeps the draft and forgets
    /// its history, and highlights `language`. Dropping the saver lets its
    /// thread write what it has and end.
    pub fn new_session(&mut self, language: Language) {
        self.book = Notebook::default();
        self.boundaries.clear();
        self.loaded_cells = 0;
        self.loaded_at = None;
        self.outputs = OutputsView::default();
        self.editor_view = EditorView::default();
        self.editor_view.set_language(language);
        self.areas = Areas::default();
        self.editor.new_session();
        self.runs.clear();
        self.execution_ids.clear();
        self.kernel_count = None;
        self.selected = None;
        self.saver = None;
    }

    /// Adds `cells`, the records of an earlier run of this notebook (from its
    /// file), after the cells there are; returns the index the first of them
    /// got (their images are keyed from it). They mark a session boundary.
    pub fn load_history(&mut self, cells: Vec<Cell>) -> usize {
        let offset = self.book.cells.len();
        // A fresh session's notebook (a replay's): nothing ran earlier, even
        // when the replayed cells are already in the notebook (issue 26).
        if cells.is_empty() {
            return offset;
        }
        self.book.cells.extend(cells);
        self.loaded_cells = self.book.cells.len();
        // The cells came from an earlier run of sessionpad: whatever state they
        // built lived in the session of that run.
        if self.loaded_cells > 0 {
            self.mark_new_session(self.loaded_cells, false);
        }
        self.outputs.follow();
        offset
    }

    /// From now on every settled cell is handed to `saver`.
    pub fn set_saver(&mut self, saver: Saver) {
        self.saver = Some(saver);
    }

    /// Hands cell `index`, as it is now, to the saver (if there is one).
    pub(crate) fn save_cell(&self, index: usize) {
        if let (Some(saver), Some(cell)) = (&self.saver, self.book.cells.get(index)) {
            saver.cell_finished(index, cell.clone());
        }
    }

    /// Cells sent to the worker and not finished yet.
    pub fn pending(&self) -> usize {
        self.runs.len()
    }

    /// The cell of this app executing now, and since when.
    pub fn running(&self) -> Option<(usize, Instant)> {
        self.runs.running().map(|(_, cell, since)| (cell, since))
    }

    /// Every cell waiting for an answer, by index, with where it is: the
    /// run's state (queued, or running since the worker began it) for a cell
    /// this app sent; running, since an unknown time, for each of `followed`
    /// (another client's cell shown while it runs: the follower's live
    /// cells), unless this app's run of it says more. The one place a cell's
    /// pending state comes from (cells hold only what their execution came
    /// to); the views draw from it.
    pub fn pending_cells(
        &self,
        followed: impl IntoIterator<Item = usize>,
    ) -> BTreeMap<usize, Pending> {
        let followed = followed
            .into_iter()
            .map(|cell| (cell, Pending::Running { since: None }));
        // This app's runs come last, so their state wins.
        let own = self.runs.iter().map(|run| (run.cell, run.state.pending()));
        followed.chain(own).collect()
    }

    /// The `In [n]` the next cell gets: 1 right after a session boundary
    /// the pool said is new (its kernel counts from 1), else one past the
    /// newest numbered cell's (a reopened notebook's session may live on). A local pool's kernel corrects it when the
    /// cell has run ([`NotebookUi::kernel_numbered`]).
    pub fn next_count(&self) -> u32 {
        let len = self.book.cells.len();
        if len > 0
            && self
                .boundaries
                .iter()
                .any(|b| b.after == len && b.known_new)
        {
            return 1;
        }
        self.book.next_count()
    }

    /// The kernel numbered cell `index` `count` (it is about to settle with
    /// it): when that is not above the count it told last, and no session
    /// boundary stands between, the kernel started again: a boundary says
    /// so there. The cells still waiting after it are numbered on from it.
    pub(super) fn kernel_numbered(&mut self, index: usize, count: u32) {
        if let Some((before, last)) = self.kernel_count
            && count <= last
            && index > before
            && !self
                .boundaries
                .iter()
                .any(|b| b.after > before && b.after <= index)
        {
            self.boundaries.push(SessionBoundary {
                after: index,
                known_new: true,
                replayed: false,
                kernel_restarted: true,
                pool_says: PoolSays::CannotAsk,
            });
            self.boundaries.sort_by_key(|b| b.after);
        }
        self.kernel_count = Some((index, count));
        let mut next = count;
        for cell in self.book.cells.iter_mut().skip(index + 1) {
            if cell.outcome.is_none() {
                next = next.saturating_add(1);
                cell.execution_count = next;
            }
        }
        self.outputs.invalidate_all();
    }

    /// Marks that the cells from `after` on run in a session other than the one
    /// that ran the cells before (once per place; a kernel restart marked
    /// there becomes this boundary); `known_new` when the pool said so.
    pub fn mark_new_session(&mut self, after: usize, known_new: bool) {
        // A kernel that started again there was the new session's: the
        // boundary says the session is new (the count started again too).
        if let Some(b) = self
            .boundaries
            .iter_mut()
            .find(|b| b.after == after && b.kernel_restarted)
        {
            b.kernel_restarted = false;
            b.known_new = true;
            return;
        }
        if !self.boundaries.iter().any(|b| b.after == after) {
            self.boundaries.push(SessionBoundary {
                after,
                known_new,
                replayed: false,
                kernel_restarted: false,
                pool_says: PoolSays::CannotAsk,
            });
            self.boundaries.sort_by_key(|b| b.after);
        }
    }
}
