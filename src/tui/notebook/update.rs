//! The notebook's reducer: [`NotebookUi::update`] over a [`NotebookAction`]
//! (run, history, the editor's own keys, focus, select, stop, copy, save,
//! search, replay), and the parts of it the app calls for what is not a key:
//! a click, a replay of recorded cells. Stopping is honest about the service:
//! its API has no interrupt, so a cell that runs there can only be abandoned
//! (the UI stops waiting, the worker drops the request, the session may still
//! be busy); on the embedded local pool the kernel is interrupted for real and
//! a second stop abandons it there too. A run given up is forgotten by id, so
//! a late reply for it never appends output.
//!
//! Each method changes only [`NotebookUi`] and hands back [`NotebookOut`]s:
//! effects for the loop, notices, prompts, and [`NotebookRequest`]s for what
//! only the app can do. What it reads of the rest of the app comes in a
//! [`NotebookCx`].

use ratatui::layout::Position;

use super::history_search::HistorySearch;
use super::runs::{Abandoned, RunEffect, RunEvent};
use super::{NotebookAction, NotebookUi};
use crate::notebook::language::Language;
use crate::notebook::{Cell, CellInput, CellOutcome, Output};
use crate::session::RunId;
use crate::tui::action::{Action, Effect, Out};
use crate::tui::keymap::{Keymap, Mode};
use crate::tui::local::SaveRequest;
use crate::tui::widgets::prompt::{Prompt, Purposeful, Question};

/// What the notebook's reducer hands back (see [`Out`]).
pub type NotebookOut = Out<Prompt<NotebookPrompt>, NotebookRequest>;

/// What the notebook asks on the bottom row (a [`Prompt`]'s purpose).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotebookPrompt {
    /// The path to save cell `cell`'s output to.
    SavePath {
        /// The cell.
        cell: usize,
    },
    /// The file exists: replace it (`y`) or not?
    Overwrite(SaveRequest),
    /// The standard input to run the editor's shell command with.
    Stdin,
    /// Replay the cells above the last session boundary here (`y`)?
    ReplayEarlier,
}

impl Purposeful for NotebookPrompt {
    /// Tab completes a local path where one is typed (the file to save to).
    fn completion(&self) -> Option<fn(&str) -> String> {
        match self {
            Self::SavePath { .. } => Some(crate::tui::local_paths::complete_one),
            Self::Overwrite(_) | Self::Stdin | Self::ReplayEarlier => None,
        }
    }
}

/// What only the app can do for the notebook.
#[derive(Debug)]
pub enum NotebookRequest {
    /// Give the notebook (its outputs) the keyboard focus.
    FocusNotebook,
    /// Ctrl+C with no cell of this app running: the app's quit window (the
    /// first press warns, a second within two seconds quits).
    NothingToInterrupt,
    /// Ctrl+C cleared the cell: a quit window opened by an earlier Ctrl+C
    /// closes, so that the next Ctrl+C only warns again.
    Cleared,
    /// Open the history search (Ctrl+R) over the notebook.
    OpenHistorySearch(Box<HistorySearch>),
    /// Take down the status line's notice if it still says this text (the
    /// run it was about settled).
    EndNotice(String),
    /// This app's run of cell `cell` settled with the worker's answer: the
    /// follower forgets the cell's streamed tail, and when it `ran` (the
    /// session answered) the sessions pane counts a run of the session.
    Settled {
        /// The cell's index.
        cell: usize,
        /// The session executed it (else the worker said why not).
        ran: bool,
    },
}

/// What the notebook's reducer reads of the rest of the app, read-only.
#[derive(Debug, Clone, Copy)]
pub struct NotebookCx<'a> {
    /// The keys (notices name the key that stops a cell again).
    pub keymap: &'a Keymap,
    /// The language cells are written in (new lines' indentation, the
    /// external editor's file, standard input for Shell pools only).
    pub language: Language,
    /// The cells the follower shows while another client runs them, by
    /// index: pending like this app's own ([`NotebookUi::pending_cells`]).
    pub followed: &'a [usize],
    /// The api-version the pool is spoken to with (whether a cell can ask
    /// for more output: `outputStreamsMaxLength`, 2025-10-02-preview).
    pub api_version: crate::protocol::ApiVersion,
}

impl NotebookUi {
    /// The notebook's reducer: a key of the editor or the outputs.
    pub fn update(&mut self, action: NotebookAction, cx: &NotebookCx<'_>) -> Vec<NotebookOut> {
        match action {
            NotebookAction::RunCell => return self.run_cell(None).into_iter().collect(),
            NotebookAction::RunCellWithStdin => return self.ask_stdin(cx.language),
            NotebookAction::HistoryPrev => self.editor.history_prev(&self.book.cells),
            NotebookAction::HistoryNext => self.editor.history_next(&self.book.cells),
            NotebookAction::Newline => self.editor.newline(cx.language),
            NotebookAction::Undo => self.editor.undo(),
            NotebookAction::Redo => self.editor.redo(),
            NotebookAction::KillToStart => self.editor.kill_to_start(),
            NotebookAction::KillToEnd => self.editor.kill_to_end(),
            NotebookAction::Yank => self.editor.yank(),
            NotebookAction::Dedent => self.editor.dedent(),
            // Ctrl+C in the editor: the running cell first (its interrupt
            // stays one key away while text is typed), then IPython's habit
            // of clearing the cell, then the app's quit rule.
            NotebookAction::ClearOrInterrupt if self.runs.running().is_some() => {
                return self.stop_running(cx.keymap);
            }
            NotebookAction::ClearOrInterrupt if self.editor.clear() => {
                return vec![
                    Out::Notice(cleared_notice(cx.keymap)),
                    Out::Request(NotebookRequest::Cleared),
                ];
            }
            NotebookAction::ClearOrInterrupt => {
                return vec![Out::Request(NotebookRequest::NothingToInterrupt)];
            }
            NotebookAction::ExternalEditor => {
                return vec![Out::Effect(Effect::EditExternally {
                    source: self.editor.source(),
                    language: cx.language,
                })];
            }
            // Jupyter's habit: Ctrl+C interrupts the running cell; only when
            // nothing runs does it (pressed twice) quit.
            NotebookAction::Interrupt if self.runs.running().is_some() => {
                return self.stop_running(cx.keymap);
            }
            NotebookAction::Interrupt => {
                return vec![Out::Request(NotebookRequest::NothingToInterrupt)];
            }
            NotebookAction::FocusOutputs => return vec![self.focus_outputs()],
            NotebookAction::SelectCell(delta) => self.select_cell(delta),
            NotebookAction::StopCell => return self.stop_cell(cx),
            NotebookAction::CopyOutput => return vec![self.copy_cell(false)],
            NotebookAction::CopyInput => return vec![self.copy_cell(true)],
            NotebookAction::SaveOutput => return self.start_save().into_iter().collect(),
            NotebookAction::HistorySearch => return vec![self.start_history_search()],
            NotebookAction::ReplayEarlier => return self.replay_earlier(),
            NotebookAction::RunWithMoreOutput => return self.run_with_more_output(cx),
        }
        Vec::new()
    }

    /// Moves the editor's text into the notebook as a queued cell (a shell
    /// command given `stdin`, when there is one): the execution for the
    /// worker, or nothing when the editor is empty.
    pub fn run_cell(&mut self, stdin: Option<String>) -> Option<NotebookOut> {
        self.queue_cell(stdin, true, None)
    }

    /// [`NotebookUi::run_cell`]; `stop_on_error`: if the cell fails, the
    /// cells queued after it are not run (Jupyter's `stop_on_error`);
    /// `output_streams_max_length`: the `outputStreamsMaxLength` to send.
    fn queue_cell(
        &mut self,
        stdin: Option<String>,
        stop_on_error: bool,
        output_streams_max_length: Option<u32>,
    ) -> Option<NotebookOut> {
        let code = self.editor.take_for_run()?;
        let count = self.next_count();
        let index = self.book.push(code.clone());
        if let Some(cell) = self.book.cell_mut(index) {
            cell.stdin.clone_from(&stdin);
            cell.execution_count = count;
            cell.output_streams_max_length = output_streams_max_length;
        }
        let run = self.runs.queue(index);
        self.outputs.follow();
        // The notebook's cursor goes back to the newest cell (the next Esc
        // selects it), as Jupyter's does to the cell just run.
        self.selected = None;
        Some(Out::Effect(Effect::Execute {
            run,
            code,
            stdin,
            stop_on_error,
            output_streams_max_length,
        }))
    }

    /// `m`: runs the selected cell (else the newest) again as a new cell,
    /// asking for ten times the output the service cut it at
    /// ([`crate::notebook::larger_output_streams_max_length`]); a
    /// notice says what was sent, or why nothing was: its output is not cut,
    /// or the pool's api-version has no `outputStreamsMaxLength`. The
    /// editor's text stays.
    fn run_with_more_output(&mut self, cx: &NotebookCx<'_>) -> Vec<NotebookOut> {
        let count = self.book.cells.len();
        let Some(index) = self
            .selected
            .filter(|&i| i < count)
            .or(count.checked_sub(1))
        else {
            return vec![Out::Notice("no cell to run again".into())];
        };
        let cell = &self.book.cells[index];
        let Some(larger) = crate::notebook::larger_output_streams_max_length(&cell.probably_cut())
        else {
            return vec![Out::Notice(format!(
                "In [{}]: its output does not look cut, so there is nothing more to ask for",
                cell.execution_count
            ))];
        };
        if cx.api_version < crate::protocol::ApiVersion::V2025_10_02 {
            return vec![Out::Notice(format!(
                "asking for more output (outputStreamsMaxLength) needs api-version 2025-10-02-preview; this pool is spoken to with {} (api_version in the profile)",
                cx.api_version
            ))];
        }
        let (input, was) = (cell.input(), cell.execution_count);
        let draft = self.editor.source();
        self.editor.replace(&input.source);
        let mut outs: Vec<NotebookOut> = self
            .queue_cell(input.stdin, true, Some(larger))
            .into_iter()
            .collect();
        self.editor.replace(&draft);
        outs.push(Out::Notice(format!(
            "running In [{was}] again with outputStreamsMaxLength {}",
            crate::protocol::service_limits::thousands(larger)
        )));
        outs
    }

    /// Runs `cells` again, in order, as new cells (each with its standard
    /// input, if it had one); the editor's draft stays. A cell that fails
    /// stops the ones after it, as any run of cells does.
    pub fn replay(&mut self, cells: Vec<CellInput>) -> Vec<NotebookOut> {
        self.replay_with(cells, true)
    }

    /// [`NotebookUi::replay`]; with `stop_on_error` false every cell runs
    /// whatever the ones before came to (a recorded session's replay, whose
    /// cells may have failed when recorded too).
    pub fn replay_with(&mut self, cells: Vec<CellInput>, stop_on_error: bool) -> Vec<NotebookOut> {
        let draft = self.editor.source();
        let mut outs = Vec::new();
        for cell in cells {
            self.editor.replace(&cell.source);
            outs.extend(self.queue_cell(cell.stdin, stop_on_error, None));
        }
        self.editor.replace(&draft);
        let count = outs.len();
        outs.push(Out::Notice(format!("replaying {count} cells")));
        outs
    }

    /// Gives the notebook the keyboard focus, selecting the last cell on screen
    /// when no cell is selected yet.
    fn focus_outputs(&mut self) -> NotebookOut {
        let count = self.book.cells.len();
        if self.selected.is_none_or(|i| i >= count) {
            self.selected = self.outputs.last_shown(count);
        }
        Out::Request(NotebookRequest::FocusNotebook)
    }

    /// A left click at this screen position: in the outputs it takes the
    /// focus there and selects the cell under the pointer; in the editor it
    /// gives the editor the focus. Clicks elsewhere (the side panes, the
    /// status line) are left alone.
    pub fn click(&mut self, column: u16, row: u16) -> Vec<NotebookOut> {
        let at = Position::new(column, row);
        if self.areas.outputs.contains(at) {
            let focus = self.focus_outputs();
            if let Some(cell) = self.outputs.cell_at(column, row) {
                // Not revealed: the cell is on screen where it was clicked.
                self.selected = Some(cell);
            }
            vec![focus]
        } else if self.areas.editor.contains(at) {
            vec![Out::FocusEditor]
        } else {
            Vec::new()
        }
    }

    /// Moves the selection `delta` cells (clamped to the notebook) and scrolls it
    /// into view.
    fn select_cell(&mut self, delta: i32) {
        let count = self.book.cells.len();
        let Some(last) = count.checked_sub(1) else {
            self.selected = None;
            return;
        };
        let from = match self.selected.filter(|&i| i < count) {
            Some(i) => i,
            None => self.outputs.last_shown(count).unwrap_or(last),
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
    pub fn select(&mut self, index: usize) {
        self.selected = Some(index);
        self.outputs.reveal(index);
    }

    /// Stops the selected cell if it is pending (this app's, or another
    /// client's shown while it runs), else the running cell.
    fn stop_cell(&mut self, cx: &NotebookCx<'_>) -> Vec<NotebookOut> {
        let target = self
            .selected
            .filter(|i| {
                self.pending_cells(cx.followed.iter().copied())
                    .contains_key(i)
            })
            .or(self.running().map(|(i, _)| i));
        let key = stop_key(cx.keymap);
        self.stop(target, &key)
    }

    /// Stops the running cell (Ctrl+C while a cell runs), whatever is selected.
    fn stop_running(&mut self, keymap: &Keymap) -> Vec<NotebookOut> {
        let interrupt = key_for(
            keymap,
            Mode::Editor,
            &Action::Notebook(NotebookAction::Interrupt),
            "Ctrl+C",
        );
        let key = key_for(
            keymap,
            Mode::Editor,
            &Action::Notebook(NotebookAction::ClearOrInterrupt),
            &interrupt,
        );
        self.stop(self.running().map(|(i, _)| i), &key)
    }

    /// Stops cell `target`: a cell that waits will not run; a running cell is
    /// interrupted (local pool) or abandoned (the service, or a second stop).
    /// `key` is the key that stops it again, for the notice.
    fn stop(&mut self, target: Option<usize>, key: &str) -> Vec<NotebookOut> {
        let Some((index, run)) = target.and_then(|i| self.runs.of_cell(i).map(|r| (i, r))) else {
            return vec![Out::Notice("no cell is running".to_string())];
        };
        let count = self.book.cells[index].execution_count;
        let Some(step) = self.runs.apply(run, RunEvent::Stop, self.can_interrupt) else {
            return Vec::new();
        };
        match step.effect {
            Some(RunEffect::Interrupt) => {
                let notice = format!("interrupting In [{count}]… ({key} again abandons it)");
                vec![
                    self.notice_for(run, notice),
                    Out::Effect(Effect::Interrupt { run }),
                ]
            }
            Some(RunEffect::Abandon(why)) => {
                self.settle_abandoned(index, why.reason());
                let notice = match why {
                    Abandoned::BeforeStart => format!("In [{count}] will not run"),
                    _ => format!("abandoned: {}", why.reason()),
                };
                vec![Out::Notice(notice), Out::Effect(Effect::Abandon { run })]
            }
            Some(RunEffect::Settle) | None => Vec::new(),
        }
    }

    /// Replays the cells that succeeded above the newest boundary into the
    /// session (`R`), as new cells after the others.
    /// `R`: asks whether to replay the cells above the last session
    /// boundary that succeeded (issue 27: it replayed them at once), or says
    /// there is nothing to replay.
    fn replay_earlier(&mut self) -> Vec<NotebookOut> {
        let Some(boundary) = self.boundaries.last() else {
            return vec![Out::Notice(
                "nothing to replay: every cell ran in this session".into(),
            )];
        };
        let above = &self.book.cells[..boundary.after.min(self.book.cells.len())];
        let runs = above
            .iter()
            .filter(|c| c.outcome == Some(CellOutcome::Succeeded))
            .count();
        if runs == 0 {
            return vec![Out::Notice(
                "nothing to replay: no earlier cell succeeded".into(),
            )];
        }
        let left_out = match above.len() - runs {
            0 => String::new(),
            n => format!(" ({n} that did not succeed left out)"),
        };
        // A live session ran them already: their variables are there.
        let (before, after) = if matches!(boundary.pool_says, super::PoolSays::Live { .. }) {
            (
                "The session is live and ran them: replay ",
                format!(" again anyway{left_out}?"),
            )
        } else {
            ("Replay ", format!(" in this session{left_out}?"))
        };
        let question = Question::new(before, format!("{runs} earlier cell(s)"), &after);
        vec![Out::Ask(Prompt::question(
            NotebookPrompt::ReplayEarlier,
            question,
        ))]
    }

    /// Replays the cells above the last session boundary that succeeded
    /// (the answer to [`NotebookPrompt::ReplayEarlier`]).
    pub(super) fn replay_earlier_now(&mut self) -> Vec<NotebookOut> {
        let Some(boundary) = self.boundaries.last_mut() else {
            return Vec::new();
        };
        boundary.replayed = true;
        let after = boundary.after;
        let above = &self.book.cells[..after.min(self.book.cells.len())];
        let sources: Vec<CellInput> = above
            .iter()
            .filter(|c| c.outcome == Some(CellOutcome::Succeeded))
            .map(Cell::input)
            .collect();
        let left_out = above.len() - sources.len();
        if let Some(last) = after.checked_sub(1) {
            self.outputs.invalidate(last);
        }
        let mut outs = self.replay(sources);
        if left_out > 0 {
            let runs = outs
                .iter()
                .filter(|out| matches!(out, Out::Effect(_)))
                .count();
            outs.push(Out::Notice(format!(
                "replaying {runs} cells ({left_out} that did not succeed left out)"
            )));
        }
        outs
    }

    /// Records cell `index` as given up: an error output saying why, and saved
    /// like any settled cell.
    fn settle_abandoned(&mut self, index: usize, why: &str) {
        let Some(cell) = self.book.cell_mut(index) else {
            return;
        };
        cell.outputs = vec![Output::Error {
            ename: "Abandoned".to_string(),
            evalue: why.to_string(),
            traceback: Vec::new(),
        }];
        cell.outcome = Some(CellOutcome::Failed);
        cell.duration = None;
        self.outputs.invalidate(index);
        self.save_cell(index);
    }

    /// Shows `text` on the status line as news of `run`: it ends when the run
    /// settles, or with the next key.
    pub(super) fn notice_for(&mut self, run: RunId, text: String) -> NotebookOut {
        self.notice_about = Some((run, text.clone()));
        Out::Notice(text)
    }

    /// Takes down the notice about `run`, if it is still up.
    pub(super) fn end_notice_about(&mut self, run: RunId) -> Option<NotebookOut> {
        let (_, text) = self.notice_about.take_if(|(r, _)| *r == run)?;
        Some(Out::Request(NotebookRequest::EndNotice(text)))
    }

    /// Brings the history search (Ctrl+R) up, or says there is nothing to
    /// search yet.
    fn start_history_search(&self) -> NotebookOut {
        if self.book.cells.is_empty() {
            return Out::Notice("no earlier cells yet".to_string());
        }
        let search = HistorySearch::new(&self.book.cells);
        Out::Request(NotebookRequest::OpenHistorySearch(Box::new(search)))
    }

    /// Brings cell `index`'s source into the editor (the history search chose
    /// it), as one edit Ctrl+Z undoes; the editor gets the keys.
    pub fn take_from_history(&mut self, index: usize) -> Vec<NotebookOut> {
        let Some(cell) = self.book.cells.get(index) else {
            return Vec::new();
        };
        let source = cell.source.clone();
        let count = cell.execution_count;
        self.editor.replace_with_copy(&source);
        vec![
            Out::FocusEditor,
            Out::Notice(format!(
                "In [{count}] is in the editor; running it adds a new cell"
            )),
        ]
    }
}

/// The key bound to `action` in `mode`, for notices (`fallback` when none is).
fn key_for(keymap: &Keymap, mode: Mode, action: &Action, fallback: &str) -> String {
    keymap
        .bindings(mode)
        .iter()
        .find(|b| &b.action == action)
        .map_or_else(|| fallback.to_string(), |b| b.key.to_string())
}

/// What the status line says when Ctrl+C cleared the cell: the keys that
/// bring the text back.
fn cleared_notice(keymap: &Keymap) -> String {
    let key = |action, fallback| key_for(keymap, Mode::Editor, &Action::Notebook(action), fallback);
    let undo = key(NotebookAction::Undo, "undo");
    let yank = key(NotebookAction::Yank, "yank");
    format!("cell cleared: {undo} or {yank} brings it back")
}

/// The key that stops a cell in the notebook, for notices.
pub(super) fn stop_key(keymap: &Keymap) -> String {
    key_for(
        keymap,
        Mode::Outputs,
        &Action::Notebook(NotebookAction::StopCell),
        "stop",
    )
}

#[cfg(test)]
#[path = "update_tests.rs"]
mod tests;
