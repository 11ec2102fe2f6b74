//! What [`App`] does for the notebook: handing its keys, clicks, answers and
//! the worker's news about runs to its reducer (`tui/notebook/update.rs` and
//! the methods beside it, which change only [`NotebookUi`]'s state), and
//! carrying out what the reducer hands back ([`Out`](crate::tui::action::Out)): effects for the loop,
//! notices, prompts, the focus, and the [`NotebookRequest`]s only the app can
//! do (the history search overlay, the quit window, the follower and the
//! sessions pane told of a settled run). A recorded session on screen gives
//! way to the live notebook before a cell runs.
//!
//! [`NotebookUi`]: crate::tui::notebook::NotebookUi

use std::time::Instant;

use super::{App, Focus, Layer};
use crate::protocol::Execution;
use crate::session::{DecodedImage, Failure, RunId};
use crate::tui::action::Effect;
use crate::tui::app::Purpose;
use crate::tui::local::LocalOutcome;
use crate::tui::notebook::{
    NotebookAction, NotebookCx, NotebookOut, NotebookPrompt, NotebookRequest, NotebookUi,
};
use crate::tui::widgets::prompt::Answer;

impl App {
    /// A key of the notebook, for its reducer. Running a cell first brings
    /// the live notebook back when a recorded session is shown.
    pub(super) fn notebook_action(&mut self, action: NotebookAction, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        if action == NotebookAction::RunCell {
            effects.extend(self.leave_recorded(now));
        }
        let followed: Vec<usize> = self.follow.live_cells().collect();
        let cx = NotebookCx {
            keymap: &self.keymap,
            language: self.config.language,
            followed: &followed,
            api_version: self.config.api_version,
        };
        let outs = self.notebook.update(action, &cx);
        effects.extend(self.apply_notebook(outs, now));
        effects
    }

    /// A left click: the notebook takes the focus, selecting the cell under
    /// the pointer, or the editor does.
    pub(super) fn notebook_click(&mut self, column: u16, row: u16) -> Vec<Effect> {
        let outs = self.notebook.click(column, row);
        self.apply_notebook(outs, Instant::now())
    }

    /// Carries out what the notebook's reducer handed back; returns the
    /// effects for the loop. `now` is the clock of the quit window.
    pub(super) fn apply_notebook(&mut self, outs: Vec<NotebookOut>, now: Instant) -> Vec<Effect> {
        self.apply(outs, Purpose::Notebook, |app, request| {
            match request {
                NotebookRequest::FocusNotebook => app.focus = Focus::Notebook,
                NotebookRequest::NothingToInterrupt => app.arm_or_quit(now),
                NotebookRequest::Cleared => app.quit_armed_until = None,
                NotebookRequest::OpenHistorySearch(search) => {
                    app.overlays.open(Layer::HistorySearch(*search));
                }
                NotebookRequest::EndNotice(text) => {
                    if app.notice.as_ref() == Some(&text) {
                        app.notice = None;
                    }
                }
                NotebookRequest::Settled { cell, ran } => {
                    app.follow.live_tail.forget(Some(cell));
                    if ran {
                        app.sessions.record_run(&app.config.identifier);
                    }
                }
            }
            Vec::new()
        })
    }

    /// The answer to a notebook prompt, for its reducer. A standard input
    /// typed for the editor's command runs it: the live notebook comes back
    /// first when a recorded session is shown.
    pub(crate) fn notebook_answer(&mut self, asked: NotebookPrompt, answer: Answer) -> Vec<Effect> {
        let now = Instant::now();
        let mut effects = Vec::new();
        if asked == NotebookPrompt::Stdin && matches!(answer, Answer::Text(_)) {
            effects.extend(self.leave_recorded(now));
        }
        let outs = self.notebook.answer(asked, answer);
        effects.extend(self.apply_notebook(outs, now));
        effects
    }

    /// Runs `cells` again, in order, as new cells of the notebook.
    pub(crate) fn replay(&mut self, cells: Vec<crate::notebook::CellInput>) -> Vec<Effect> {
        let outs = self.notebook.replay(cells);
        self.apply_notebook(outs, Instant::now())
    }

    /// How a copy or save went: a notice, or the question before replacing a
    /// file.
    pub fn finish_local_work(&mut self, outcome: LocalOutcome) {
        self.dirty = true;
        let out = NotebookUi::local_work_done(outcome);
        self.apply_notebook(vec![out], Instant::now());
    }

    /// The worker began executing `run`.
    pub(super) fn execution_started(&mut self, run: RunId, now: Instant) {
        self.notebook.execution_started(run, now);
    }

    /// The worker's answer to `run`: the notebook settles its cell (its
    /// images go to the shared store); the follower and the sessions pane
    /// hear of it.
    pub(super) fn execution_finished(
        &mut self,
        run: RunId,
        outcome: Result<Execution, Failure>,
        exit_code: Option<i32>,
        images: Vec<DecodedImage>,
        now: Instant,
    ) {
        let apart = outcome.as_ref().is_ok_and(|e| {
            e.status == crate::protocol::ExecutionStatus::Succeeded
                && !e.stdout.is_empty()
                && !e.stderr.is_empty()
        });
        let outs = self.notebook.execution_finished(
            run,
            outcome,
            exit_code,
            images,
            &mut self.views.images,
        );
        self.apply_notebook(outs, now);
        self.replay_settled(run);
        // Without the pool's event stream (a pool over https: Azure's; only
        // a local pool over plain http streams) nothing says how stdout and
        // stderr interleaved (issue 27 item 2): said once, not every cell.
        let streams = self.follow.subscribed.is_some()
            || !self
                .sessions
                .endpoint
                .as_deref()
                .is_some_and(|e| e.starts_with("https://"));
        if apart && !streams && !self.follow.said_streams_apart {
            self.follow.said_streams_apart = true;
            self.notice = Some(
                "this pool returns stdout and stderr apart: stdout is shown first, \
                 their order between them is unknown"
                    .into(),
            );
        }
    }

    /// The worker did not run `run`: it was queued behind a cell that
    /// failed. Its cell says so.
    pub(super) fn execution_not_run(&mut self, run: RunId, now: Instant) {
        let outs = self.notebook.execution_not_run(run);
        self.apply_notebook(outs, now);
        self.replay_settled(run);
    }

    /// The worker's word on an interrupt it sent.
    pub(super) fn interrupt_sent(&mut self, run: RunId, delivered: bool, now: Instant) {
        let out = self.notebook.interrupt_sent(run, delivered, &self.keymap);
        self.apply_notebook(out.into_iter().collect(), now);
    }

    /// Puts settled cell `index`'s decoded images in the shared image store.
    pub(super) fn show_images(&mut self, index: usize, images: Vec<DecodedImage>) {
        self.notebook
            .show_images(index, images, &mut self.views.images);
    }
}

#[cfg(test)]
#[path = "cells_tests.rs"]
mod tests;
