//! The worker's news about this app's runs, for the notebook's reducer: a
//! run started, finished (its cell settles with the answer, or with why there
//! is none) or had an interrupt sent. A reply for a run this app never sent,
//! or already settled, is stale and changes nothing.

use std::time::Instant;

use super::NotebookUi;
use super::runs::RunEvent;
use super::runs::RunState;
use super::update::{NotebookOut, NotebookRequest, stop_key};
use crate::notebook::Output;
use crate::protocol::Execution;
use crate::session::{DecodedImage, Failure, RunId};
use crate::tui::action::Out;
use crate::tui::keymap::Keymap;
use crate::tui::widgets::image::{ImageKey, ImageStore};

impl NotebookUi {
    /// The worker began executing `run` at `now`: its cell shows it running
    /// (built again).
    pub fn execution_started(&mut self, run: RunId, now: Instant) {
        if let Some(step) = self
            .runs
            .apply(run, RunEvent::Started(now), self.can_interrupt)
            && step.state.is_some()
        {
            self.outputs.invalidate(step.cell);
        }
    }

    /// The worker's answer to `run`: its cell settles with the execution
    /// (and the shell's `exit_code`) or fails with why there is none, its
    /// decoded `images` go to `store` (the app's shared image store, in the
    /// order of the cell's image outputs), and the cell is saved. Hands back
    /// the end of the notice about the run and [`NotebookRequest::Settled`].
    pub fn execution_finished(
        &mut self,
        run: RunId,
        outcome: Result<Execution, Failure>,
        exit_code: Option<i32>,
        images: Vec<DecodedImage>,
        store: &mut ImageStore,
    ) -> Vec<NotebookOut> {
        let Some(step) = self.runs.apply(run, RunEvent::Finished, self.can_interrupt) else {
            return Vec::new();
        };
        let index = step.cell;
        self.execution_ids.remove(&index);
        let mut outs: Vec<NotebookOut> = self.end_notice_about(run).into_iter().collect();
        let settled = |ran| Out::Request(NotebookRequest::Settled { cell: index, ran });
        if self.book.cells.get(index).is_none() {
            outs.push(settled(false));
            return outs;
        }
        outs.push(settled(outcome.is_ok()));
        if let Some(count) = outcome.as_ref().ok().and_then(|e| e.execution_count) {
            self.kernel_numbered(index, count);
        }
        let Some(cell) = self.book.cell_mut(index) else {
            return outs;
        };
        match outcome {
            Ok(exec) => cell.finish(exec, exit_code),
            Err(failure) => cell.fail(&failure.message),
        }
        self.show_images(index, images, store);
        self.outputs.invalidate(index);
        self.save_cell(index);
        outs
    }

    /// The worker did not run `run` (it was queued behind a cell that
    /// failed): its cell settles as not run, keeping its source, and is
    /// saved. Hands back the end of the notice about the run and
    /// [`NotebookRequest::Settled`] (not ran).
    pub fn execution_not_run(&mut self, run: RunId) -> Vec<NotebookOut> {
        let Some(step) = self.runs.apply(run, RunEvent::Finished, self.can_interrupt) else {
            return Vec::new();
        };
        let index = step.cell;
        self.execution_ids.remove(&index);
        let mut outs: Vec<NotebookOut> = self.end_notice_about(run).into_iter().collect();
        outs.push(Out::Request(NotebookRequest::Settled {
            cell: index,
            ran: false,
        }));
        if let Some(cell) = self.book.cell_mut(index) {
            cell.not_run();
            self.outputs.invalidate(index);
            self.save_cell(index);
        }
        outs
    }

    /// The worker's word on an interrupt it sent for `run`: when the kernel
    /// did not take it, a notice (naming the key that abandons the cell,
    /// from `keymap`) lasting until the run settles.
    pub fn interrupt_sent(
        &mut self,
        run: RunId,
        delivered: bool,
        keymap: &Keymap,
    ) -> Option<NotebookOut> {
        let interrupting = matches!(self.runs.state(run), Some(RunState::Interrupting { .. }));
        if !interrupting || delivered {
            return None;
        }
        let notice = format!(
            "the kernel did not acknowledge the interrupt; {} again abandons the cell",
            stop_key(keymap)
        );
        Some(self.notice_for(run, notice))
    }

    /// Puts settled cell `index`'s decoded images in `store` (the app's
    /// shared image store), in the order of its image outputs.
    pub fn show_images(&self, index: usize, images: Vec<DecodedImage>, store: &mut ImageStore) {
        let Some(cell) = self.book.cells.get(index) else {
            return;
        };
        let image_outputs = cell
            .outputs
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o, Output::DisplayData { .. }))
            .map(|(n, _)| n);
        for (output, decoded) in image_outputs.zip(images) {
            store.insert(
                ImageKey {
                    cell: index,
                    output,
                },
                decoded,
            );
        }
    }
}
