//! Quitting without losing a cell (issue 26, issue 27): what the notebook
//! holds that quitting would leave behind ([`AtStake`], which the app asks
//! about before it quits), and what it keeps when it is quit anyway
//! ([`NotebookUi::keep_at_quit`]): a cell still running or queued is saved
//! with its outputs so far, marked as running (or queued) when you quit, with
//! what identifies its execution; the text typed in the editor becomes the
//! notebook's draft, given back when it is opened again. Reopened, a cell
//! that was running is filled in from the flight recorder's record of it
//! once that is found ([`NotebookUi::fill_from_record`]).

use std::time::Instant;

use chrono::{DateTime, Utc};

use super::NotebookUi;
use crate::notebook::{Cell, QuitWhile, Waiting};
use crate::session::DecodedImage;
use crate::tui::widgets::image::ImageStore;
use crate::tui::widgets::prompt::Question;

/// What quitting now would leave behind: cells of this notebook waiting for
/// their answer, and text typed in the editor and kept nowhere yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AtStake {
    /// The `In [n]` of the cell running now, if one is.
    pub running: Option<u32>,
    /// How many cells wait behind it (or for the pool).
    pub queued: usize,
    /// How many lines the editor holds that were typed and are kept nowhere.
    pub typed_lines: Option<usize>,
}

impl AtStake {
    /// Nothing would be left behind: quitting needs no question.
    pub fn is_empty(&self) -> bool {
        self.running.is_none() && self.queued == 0 && self.typed_lines.is_none()
    }

    /// The question quitting asks: what is at stake, and what is kept of it
    /// (the longer explanation is shown where the row has room for it).
    pub fn question(&self) -> Question {
        let lines = |n: usize| {
            if n == 1 {
                "1 line".to_string()
            } else {
                format!("{n} lines")
            }
        };
        let cells = match (self.running, self.queued) {
            (Some(n), 0) => Some(format!("A cell is running (In [{n}])")),
            (Some(n), q) => Some(format!("A cell is running (In [{n}]), {q} more queued")),
            (None, 1) => Some("A cell is queued".to_string()),
            (None, q) if q > 1 => Some(format!("{q} cells are queued")),
            (None, _) => None,
        };
        let subject = match (cells, self.typed_lines) {
            (Some(cells), Some(n)) => format!("{cells} and the editor holds {}", lines(n)),
            (Some(cells), None) => cells,
            (None, Some(n)) => format!("The editor holds {}", lines(n)),
            (None, None) => String::new(),
        };
        let mut kept = Vec::new();
        if self.running.is_some() {
            kept.push("the running cell is kept, marked as running when you quit");
        } else if self.queued > 0 {
            kept.push("the queued cells are kept, marked as queued when you quit");
        }
        if self.typed_lines.is_some() {
            kept.push("the typed text comes back when you open the notebook again");
        }
        let short = if kept.len() > 1 {
            " Both are kept."
        } else {
            " It is kept."
        };
        Question::new("", subject, ": quit anyway?").with_notes(vec![
            format!(" {}.", capitalise(&kept.join("; "))),
            short.into(),
        ])
    }
}

/// `text` with its first letter in capitals.
fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// What keeping a waiting cell at quitting reads of the rest of the app.
#[derive(Debug, Clone, Copy)]
pub struct QuitCx<'a> {
    /// The session identifier the cells ran in.
    pub identifier: &'a str,
    /// The flight recorder's key of the pool, when known.
    pub pool: Option<&'a str>,
    /// The loop's clock now (the runs' starts are on it).
    pub now: Instant,
    /// The wall clock now, UTC (what the flight recorder's times are on).
    pub wall: DateTime<Utc>,
}

impl NotebookUi {
    /// What quitting now would leave behind ([`AtStake`]): this notebook's
    /// own cells waiting for an answer (another client's cell, followed
    /// while it runs, is recorded by the pool) and the editor's typed text.
    pub fn at_stake(&self) -> AtStake {
        let running = self
            .runs
            .running()
            .and_then(|(_, cell, _)| self.book.cells.get(cell))
            .map(|c| c.execution_count);
        let queued = self
            .runs
            .iter()
            .filter(|r| r.state.since().is_none())
            .count();
        AtStake {
            running,
            queued,
            typed_lines: self.editor.typed_lines(),
        }
    }

    /// The pool named the execution of this notebook's running cell `cell`
    /// (its running output did): kept, for the flight recorder's record of
    /// it to be found should the notebook be quit before it ends.
    pub fn note_execution_id(&mut self, cell: usize, id: &str) {
        if self
            .execution_ids
            .get(&cell)
            .is_none_or(|known| known != id)
        {
            self.execution_ids.insert(cell, id.to_string());
        }
    }

    /// The notebook is quit (or left for another pool): each of its cells
    /// still running or queued is saved with its outputs so far, marked as
    /// running (or queued) when you quit, with what identifies its execution
    /// (`at`); its runs are forgotten. With `keep_draft` the editor's typed
    /// text is saved as the notebook's draft ([`CellEditor::draft`]), else
    /// the saved draft is taken away (the text went along to another pool).
    /// Returns how many cells were kept.
    ///
    /// [`CellEditor::draft`]: super::cell_editor::CellEditor::draft
    pub fn keep_at_quit(&mut self, at: &QuitCx<'_>, keep_draft: bool) -> usize {
        let waiting: Vec<_> = self.runs.iter().collect();
        for run in &waiting {
            let since = run.state.since();
            let started_at = since.map(|s| {
                let ago = at.now.saturating_duration_since(s);
                at.wall - chrono::TimeDelta::from_std(ago).unwrap_or_default()
            });
            let quit = QuitWhile {
                was: if since.is_some() {
                    Waiting::Running
                } else {
                    Waiting::Queued
                },
                identifier: at.identifier.to_string(),
                pool: at.pool.filter(|p| !p.is_empty()).map(str::to_string),
                execution_id: self.execution_ids.remove(&run.cell),
                started_at,
                quit_at: Some(at.wall),
                recorded_seq: None,
            };
            if let Some(cell) = self.book.cell_mut(run.cell)
                && cell.outcome.is_none()
            {
                cell.quit_waiting(quit);
                self.outputs.invalidate(run.cell);
                self.save_cell(run.cell);
            }
        }
        self.runs.clear();
        if let Some(saver) = &self.saver {
            saver.keep_draft(if keep_draft {
                self.editor.draft()
            } else {
                None
            });
        }
        waiting.len()
    }

    /// The cells that were running when the notebook was last quit and that
    /// no record has filled in yet, by index, with what identifies them.
    pub fn awaiting_record(&self) -> Vec<(usize, &Cell, &QuitWhile)> {
        self.book
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| c.awaits_record())
            .filter_map(|(i, c)| c.quit_while.as_deref().map(|q| (i, c, q)))
            .collect()
    }

    /// Fills cell `index` in from `recorded`, the flight recorder's record
    /// `seq` of its execution (it ended after the notebook was quit), its
    /// decoded `images` into `store`, and saves it. `false` (nothing
    /// changed) when the cell is not one waiting for its record with this
    /// `source` any more (another notebook is shown, or it was filled in).
    pub fn fill_from_record(
        &mut self,
        index: usize,
        source: &str,
        recorded: Cell,
        seq: i64,
        images: Vec<DecodedImage>,
        store: &mut ImageStore,
    ) -> bool {
        let Some(cell) = self.book.cell_mut(index) else {
            return false;
        };
        if !cell.awaits_record() || cell.source != source {
            return false;
        }
        cell.fill_from_record(recorded, seq);
        self.show_images(index, images, store);
        self.outputs.invalidate(index);
        self.save_cell(index);
        true
    }
}
