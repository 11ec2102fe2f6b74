//! The notebook's cursor (the selected cell) and stopping a cell that waits or
//! runs: a part of [`App`]'s reducer kept apart from `app.rs`.
//!
//! Stopping is honest about the service: its API has no interrupt, so a cell
//! that runs there can only be abandoned (the UI stops waiting, the worker drops
//! the request, the session may still be busy). On the embedded local pool the
//! kernel is interrupted for real and the cell ends with a `KeyboardInterrupt`;
//! a second stop abandons it there too. A run given up is forgotten by id, so a
//! late reply for it never appends output.

use ratatui::layout::Position;

use super::{App, Focus, RunId, SessionBoundary};
use crate::notebook::{Cell, CellInput, CellOutcome, Output};
use crate::tui::action::{Action, Effect};
use crate::tui::keymap::Mode;
use crate::tui::runs::{Abandoned, RunEffect, RunEvent, RunState};

impl App {
    /// Gives the notebook the keyboard focus, selecting the last cell on screen
    /// when no cell is selected yet.
    pub(super) fn focus_outputs(&mut self) {
        self.focus = Focus::Notebook;
        let count = self.notebook.cells.len();
        if self.selected.is_none_or(|i| i >= count) {
            self.selected = self.views.outputs.last_shown(count);
        }
    }

    /// A left click: in the notebook it takes the focus there and selects the
    /// cell under the pointer; in the editor it gives the editor the focus.
    /// Clicks elsewhere (the side panes, the status line) are left alone.
    pub(super) fn click(&mut self, column: u16, row: u16) {
        let at = Position::new(column, row);
        let areas = self.views.areas;
        if areas.outputs.contains(at) {
            self.focus_outputs();
            if let Some(cell) = self.views.outputs.cell_at(column, row) {
                // Not revealed: the cell is on screen where it was clicked.
                self.selected = Some(cell);
            }
        } else if areas.editor.contains(at) {
            self.focus = Focus::Editor;
        }
    }

    /// Moves the selection `delta` cells (clamped to the notebook) and scrolls it
    /// into view.
    pub(super) fn select_cell(&mut self, delta: i32) {
        let count = self.notebook.cells.len();
        let Some(last) = count.checked_sub(1) else {
            self.selected = None;
            return;
        };
        let from = match self.selected.filter(|&i| i < count) {
            Some(i) => i,
            None => self.views.outputs.last_shown(count).unwrap_or(last),
        };
        let step = usize::try_from(delta.unsigned_abs()).unwrap_or(usize::MAX);
        let to = if delta < 0 {
            from.saturating_sub(step)
        } else {
            from.saturating_add(step).min(last)
        };
        self.select(to);
    }

    /// Selects cell `index` and scrolls it into view.
    pub(super) fn select(&mut self, index: usize) {
        self.selected = Some(index);
        self.views.outputs.reveal(index);
    }

    /// The key bound to `action` in `mode`, for notices (`fallback` when none is).
    fn key_for(&self, mode: Mode, action: &Action, fallback: &str) -> String {
        self.keymap
            .bindings(mode)
            .iter()
            .find(|b| &b.action == action)
            .map_or_else(|| fallback.to_string(), |b| b.key.to_string())
    }

    /// The key that stops a cell in the notebook, for notices.
    fn stop_key(&self) -> String {
        self.key_for(Mode::Outputs, &Action::StopCell, "stop")
    }

    /// Stops the selected cell if it is pending, else the running cell.
    pub(super) fn stop_cell(&mut self) -> Vec<Effect> {
        let target = self
            .selected
            .filter(|i| self.pending_of(*i).is_some())
            .or(self.running().map(|(i, _)| i));
        let key = self.stop_key();
        self.stop(target, &key)
    }

    /// Stops the running cell (Ctrl+C while a cell runs), whatever is selected.
    pub(super) fn stop_running(&mut self) -> Vec<Effect> {
        let key = self.key_for(Mode::Editor, &Action::Interrupt, "Ctrl+C");
        self.stop(self.running().map(|(i, _)| i), &key)
    }

    /// Stops cell `target`: a cell that waits will not run; a running cell is
    /// interrupted (local pool) or abandoned (the service, or a second stop).
    /// `key` is the key that stops it again, for the notice.
    fn stop(&mut self, target: Option<usize>, key: &str) -> Vec<Effect> {
        let Some((index, run)) = target.and_then(|i| self.runs.of_cell(i).map(|r| (i, r))) else {
            self.notice = Some("no cell is running".to_string());
            return Vec::new();
        };
        let count = self.notebook.cells[index].execution_count;
        let Some(step) = self.runs.apply(run, RunEvent::Stop, self.can_interrupt) else {
            return Vec::new();
        };
        match step.effect {
            Some(RunEffect::Interrupt) => {
                let notice = format!("interrupting In [{count}]… ({key} again abandons it)");
                self.notice_for(run, notice);
                vec![Effect::Interrupt { run }]
            }
            Some(RunEffect::Abandon(why)) => {
                self.settle_abandoned(index, why.reason());
                self.notice = Some(match why {
                    Abandoned::BeforeStart => format!("In [{count}] will not run"),
                    _ => format!("abandoned: {}", why.reason()),
                });
                vec![Effect::Abandon { run }]
            }
            Some(RunEffect::Settle) | None => Vec::new(),
        }
    }

    /// Marks that the cells from `after` on run in a session other than the one
    /// that ran the cells before (once per place); `known_new` when the pool
    /// said so.
    pub(crate) fn mark_new_session(&mut self, after: usize, known_new: bool) {
        if !self.boundaries.iter().any(|b| b.after == after) {
            self.boundaries.push(SessionBoundary {
                after,
                known_new,
                replayed: false,
            });
            self.boundaries.sort_by_key(|b| b.after);
        }
    }

    /// Replays the cells that succeeded above the newest boundary into the
    /// session (`R`), as new cells after the others.
    pub(super) fn replay_earlier(&mut self) -> Vec<Effect> {
        let Some(boundary) = self.boundaries.last_mut() else {
            self.notice = Some("nothing to replay: every cell ran in this session".into());
            return Vec::new();
        };
        boundary.replayed = true;
        let above = &self.notebook.cells[..boundary.after.min(self.notebook.cells.len())];
        let sources: Vec<CellInput> = above
            .iter()
            .filter(|c| c.outcome == Some(CellOutcome::Succeeded))
            .map(Cell::input)
            .collect();
        let left_out = above.len() - sources.len();
        if let Some(last) = boundary.after.checked_sub(1) {
            self.views.outputs.invalidate(last);
        }
        let effects = self.replay(sources);
        if left_out > 0 {
            self.notice = Some(format!(
                "replaying {} cells ({left_out} that did not succeed left out)",
                effects.len()
            ));
        }
        effects
    }

    /// The worker's word on an interrupt it sent.
    pub(super) fn interrupt_sent(&mut self, run: RunId, delivered: bool) {
        let interrupting = matches!(self.runs.state(run), Some(RunState::Interrupting { .. }));
        if !interrupting || delivered {
            return;
        }
        let notice = format!(
            "the kernel did not acknowledge the interrupt; {} again abandons the cell",
            self.stop_key()
        );
        self.notice_for(run, notice);
    }

    /// Records cell `index` as given up: an error output saying why, and saved
    /// like any settled cell.
    fn settle_abandoned(&mut self, index: usize, why: &str) {
        let Some(cell) = self.notebook.cell_mut(index) else {
            return;
        };
        cell.outputs = vec![Output::Error {
            ename: "Abandoned".to_string(),
            evalue: why.to_string(),
            traceback: Vec::new(),
        }];
        cell.outcome = Some(CellOutcome::Failed);
        cell.duration = None;
        self.views.outputs.invalidate(index);
        if let (Some(saver), Some(cell)) = (&self.saver, self.notebook.cells.get(index)) {
            saver.cell_finished(index, cell.clone());
        }
    }
}

#[cfg(test)]
#[path = "cells_tests.rs"]
mod tests;
