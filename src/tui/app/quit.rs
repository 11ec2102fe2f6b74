//! Quitting, as the app does it (issue 26, issue 27): the quit action asks
//! first when the notebook holds a cell running or queued, or text typed in
//! the editor and kept nowhere ([`App::ask_to_quit`]; `y` or the quit key
//! again quits, anything else stays); quitting keeps them
//! ([`App::keep_at_quit`]: the cells saved as running or queued when you
//! quit, the text as the notebook's draft). A notebook opened again asks the
//! flight recorder for the cells that were running when it was quit
//! ([`App::look_up_quit_cells`]) and fills them in from the record, saying
//! so ([`App::record_found`]).

use std::time::Instant;

use super::{App, Purpose};
use crate::session::{Failure, FoundRecord, RecordLookup, SessionsCommand};
use crate::tui::action::Effect;
use crate::tui::notebook::QuitCx;
use crate::tui::widgets::prompt::{Answer, Prompt};

impl App {
    /// The quit action (Ctrl+Q anywhere, `q` in the notebook, a second
    /// Ctrl+C when nothing runs): quits at once when nothing would be left
    /// behind, else asks, saying what is at stake and what is kept.
    pub fn ask_to_quit(&mut self) {
        let at_stake = self.notebook.at_stake();
        if at_stake.is_empty() {
            self.should_quit = true;
        } else {
            tracing::info!(?at_stake, "quitting would leave something behind: asking");
            self.ask(Prompt::question(Purpose::Quit, at_stake.question()));
        }
    }

    /// The answer to the quit question: `y` quits; anything else stays.
    pub(super) fn quit_answer(&mut self, answer: &Answer) {
        if *answer == Answer::Yes {
            self.should_quit = true;
        } else {
            self.notice = Some("not quitting".to_string());
        }
    }

    /// The loop ended (quit, the terminal gone, or a switch to another pool
    /// when `keep_draft` is false): this notebook's cells still running or
    /// queued are saved as running or queued when you quit, with what
    /// identifies their execution, and with `keep_draft` the editor's typed
    /// text as the notebook's draft ([`crate::tui::notebook::NotebookUi::keep_at_quit`]).
    /// Returns how many cells were kept.
    pub fn keep_at_quit(&mut self, keep_draft: bool, now: Instant) -> usize {
        let pool = self.sessions.pane.ledger_pool.clone();
        let at = QuitCx {
            identifier: &self.config.identifier,
            pool: Some(pool.as_str()),
            now,
            wall: chrono::Utc::now(),
        };
        self.notebook.keep_at_quit(&at, keep_draft)
    }

    /// Asks the flight recorder for each cell of the notebook that was
    /// running when it was last quit and that no record filled in yet: the
    /// effects (none when there is no such cell).
    pub fn look_up_quit_cells(&self) -> Vec<Effect> {
        self.notebook
            .awaiting_record()
            .into_iter()
            .map(|(cell, c, quit)| {
                Effect::Sessions(SessionsCommand::FindRecord(RecordLookup {
                    cell,
                    code: c.source.clone(),
                    identifier: quit.identifier.clone(),
                    pool: quit.pool.clone(),
                    execution_id: quit.execution_id.clone(),
                    started_at: quit.started_at,
                    quit_at: quit.quit_at,
                    language: self.config.language,
                }))
            })
            .collect()
    }

    /// The flight recorder's answer about a cell that was running when the
    /// notebook was quit: its record fills the cell in (saved, and said on
    /// the status line); no record, or no ledger to read, is said too, and
    /// the cell stays marked as running when you quit.
    pub(super) fn record_found(
        &mut self,
        lookup: &RecordLookup,
        result: Result<Option<Box<FoundRecord>>, Failure>,
    ) {
        let count = match self.notebook.cells().get(lookup.cell) {
            Some(c) if c.awaits_record() && c.source == lookup.code => c.execution_count,
            // Another notebook is shown now, or the cell was filled in.
            _ => return,
        };
        self.notice = Some(match result {
            Err(e) => format!("In [{count}] was running when you quit; {e}"),
            Ok(None) => {
                format!("In [{count}] was running when you quit: not in the flight recorder (yet)")
            }
            Ok(Some(found)) => {
                let FoundRecord {
                    cell,
                    seq,
                    images,
                    client_gone,
                } = *found;
                let filled = self.notebook.fill_from_record(
                    lookup.cell,
                    &lookup.code,
                    cell,
                    seq,
                    images,
                    &mut self.views.images,
                );
                if !filled {
                    return;
                }
                let after = if client_gone { " after you quit" } else { "" };
                format!("In [{count}] ended{after}: outputs from the flight recorder")
            }
        });
    }
}

#[cfg(test)]
#[path = "quit_tests.rs"]
mod tests;
