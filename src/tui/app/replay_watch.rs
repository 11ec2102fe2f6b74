//! A recorded session replayed into a fresh session (issue 26), a part of
//! [`App`]'s reducer: the recorded uploads are redone by the worker before
//! the cell that followed each ([`Effect::ReplayUploads`]), and as the cells
//! settle the notebook says of each whether it ended as recorded (its status;
//! a shell command's exit code), then sums the replay up as the command line
//! does (`N as recorded, M differ (K uploads not redone)`), in the banner
//! after the last cell and on the status line. The comparison and the summary
//! are [`crate::session::replay`]'s, shared with `sessionpad replay`.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use super::App;
use crate::session::RunId;
use crate::session::replay::{Ending, RecordedUpload, ReplayPlan, Tally};
use crate::tui::action::Effect;
use crate::tui::notebook::NotebookOut;
use crate::tui::widgets::sanitize;

/// A replay under way (or done) in the notebook.
#[derive(Debug, Default)]
pub struct ReplayWatch {
    /// The recorded session's identifier, sanitised.
    source: String,
    /// The replayed cells' runs: the cell's index in the notebook and how it
    /// ended when recorded.
    runs: HashMap<RunId, (usize, Ending)>,
    /// Compared by exit code.
    shell: bool,
    /// Lines said above each replayed cell (its uploads, its verdict).
    notes: BTreeMap<usize, Vec<String>>,
    /// The count so far.
    tally: Tally,
    /// Cells not settled yet.
    remaining: usize,
    /// After which cell the summary goes (the last replayed one, plus 1).
    end: usize,
    /// The summary, once every cell settled.
    pub summary: Option<String>,
}

impl ReplayWatch {
    /// The lines to draw above cells: (cell, lines joined by newlines).
    pub fn marks(&self) -> impl Iterator<Item = (usize, String)> + '_ {
        self.notes
            .iter()
            .map(|(cell, lines)| (*cell, lines.join("\n")))
    }

    /// Where the summary is drawn (after this many cells) and what it says.
    pub fn banner(&self) -> Option<(usize, String)> {
        self.summary.clone().map(|s| (self.end, s))
    }
}

/// One line about an upload redone (or not) before a cell.
fn upload_line(upload: &RecordedUpload, outcome: &Result<u64, String>) -> String {
    let name = sanitize::plain(&upload.name);
    match outcome {
        Ok(size) => format!(
            "upload of {name} redone ({})",
            crate::text::human_size(*size)
        ),
        Err(why) => format!("upload of {name} NOT redone: {}", sanitize::plain(why)),
    }
}

impl App {
    /// Runs a recorded session's cells (`plan`) as new cells of the
    /// notebook, each after the recorded uploads that came before it; the
    /// cells' verdicts follow as they settle.
    pub(crate) fn replay_recorded(&mut self, plan: ReplayPlan) -> Vec<Effect> {
        let first = self.notebook.book.cells.len();
        let inputs = plan.cells.iter().map(|c| c.input.clone()).collect();
        // Every recorded cell runs, as when it was recorded, whatever the
        // ones before it came to.
        let outs = self.notebook.replay_with(inputs, false);
        let mut watch = ReplayWatch {
            source: sanitize::plain(&plan.source),
            shell: plan.shell,
            end: first + plan.cells.len(),
            ..ReplayWatch::default()
        };
        let last = plan.cells.len().saturating_sub(1);
        let mut planned = plan.cells.into_iter().enumerate();
        let mut trailing = plan.uploads_after;
        let mut with_uploads = Vec::new();
        for out in outs {
            if let NotebookOut::Effect(Effect::Execute { run, .. }) = &out
                && let Some((i, cell)) = planned.next()
            {
                let run = *run;
                watch.runs.insert(run, (first + i, cell.recorded));
                watch.remaining += 1;
                // The uploads recorded after the last cell are redone once
                // it has run.
                let after = if i == last {
                    std::mem::take(&mut trailing)
                } else {
                    Vec::new()
                };
                let notes = watch.notes.entry(first + i).or_default();
                if !cell.uploads.is_empty() {
                    notes.push(format!(
                        "redoing {} recorded upload(s) first",
                        cell.uploads.len()
                    ));
                }
                if !after.is_empty() {
                    notes.push(format!(
                        "redoing {} upload(s) recorded after it once it has run",
                        after.len()
                    ));
                }
                if !cell.uploads.is_empty() || !after.is_empty() {
                    with_uploads.push(NotebookOut::Effect(Effect::ReplayUploads {
                        run,
                        uploads: cell.uploads,
                        after,
                    }));
                }
            }
            with_uploads.push(out);
        }
        self.recorded.replay = Some(watch);
        self.apply_notebook(with_uploads, Instant::now())
    }

    /// The worker redid (or not) the recorded uploads before `run`.
    pub(super) fn uploads_redone(
        &mut self,
        run: RunId,
        outcomes: &[(RecordedUpload, Result<u64, String>)],
    ) {
        let Some(watch) = self.recorded.replay.as_mut() else {
            return;
        };
        let Some((cell, _)) = watch.runs.get(&run) else {
            return;
        };
        let notes = watch.notes.entry(*cell).or_default();
        // The outcomes of one set: its announcement goes (the first one's
        // first; the uploads after the cell come once it has run).
        if let Some(at) = notes.iter().position(|l| l.starts_with("redoing ")) {
            notes.remove(at);
        }
        for (upload, outcome) in outcomes {
            if outcome.is_err() {
                watch.tally.uploads_not_redone += 1;
            }
            notes.push(upload_line(upload, outcome));
        }
        self.notebook.outputs.invalidate(*cell);
        self.dirty = true;
    }

    /// After the notebook settled `run`: when it is a replayed cell, says
    /// whether it ended as recorded, and once every cell did, the summary.
    pub(super) fn replay_settled(&mut self, run: RunId) {
        let Some(watch) = self.recorded.replay.as_mut() else {
            return;
        };
        let Some((cell, then)) = watch.runs.remove(&run) else {
            return;
        };
        let Some(now) = self
            .notebook
            .book
            .cells
            .get(cell)
            .and_then(|c| Ending::of_cell(c, watch.shell))
        else {
            return;
        };
        watch.tally.cell(&then, &now);
        let verdict = if then == now {
            format!("as recorded ({now})")
        } else {
            format!("DIFFERS: {now} now, {then} when recorded")
        };
        watch.notes.entry(cell).or_default().push(verdict);
        watch.remaining = watch.remaining.saturating_sub(1);
        if watch.remaining == 0 {
            let summary = format!("replay of {}: {}", watch.source, watch.tally);
            self.notice = Some(summary.clone());
            watch.summary = Some(summary);
        }
        self.notebook.outputs.invalidate(cell);
        self.dirty = true;
    }
}
