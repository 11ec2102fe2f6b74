//! News about the pool's sessions for the sessions pane, a part of its
//! reducer kept apart from `mod.rs`: the pool's list, a session's details
//! (the idle countdown, a silently recycled session noticed and its earlier
//! cells offered for replay), an ended session, the pool's metadata, and the
//! flight recorder's history and recorded sessions read.

use std::time::Instant;

use chrono::Utc;

use super::Current;
use super::SessionsPrompt;
use super::history::RecordedList;
use crate::notebook::{Cell, CellInput, Output, StreamName};
use crate::protocol::SessionInfo;
use crate::session::{FailureKind, SessionsEvent};
use crate::tui::action::Effect;
use crate::tui::app::App;
use crate::tui::prompt::{Prompt, Purpose, Question};

impl App {
    /// News about the pool's sessions from the worker; returns the effects
    /// that follow from it.
    pub fn sessions_event(&mut self, event: SessionsEvent, now: Instant) -> Vec<Effect> {
        self.dirty = true;
        let s = &mut self.sessions;
        match event {
            SessionsEvent::Listed(result) => s.listed(result, now),
            SessionsEvent::Info { identifier, result } => {
                if identifier != self.config.identifier {
                    return Vec::new();
                }
                match result {
                    Ok(info) => self.session_details(info, now),
                    // The pool has no such session (any more): no countdown
                    // for a session that is gone; asked before a cell of this
                    // run, the reopened notebook's session is certainly new.
                    Err(e) if e.kind == FailureKind::NotFound => {
                        self.sessions.current = None;
                        let reopened = self.loaded_cells;
                        if reopened > 0 && self.notebook.cells.len() == reopened {
                            for b in self.boundaries.iter_mut().filter(|b| b.after == reopened) {
                                b.known_new = true;
                            }
                        }
                    }
                    Err(e) => tracing::debug!("session details: {e}"),
                }
            }
            SessionsEvent::Ended { identifier, result } => {
                self.notice = Some(match result {
                    Ok(message) => crate::tui::ui::sanitize::plain(&message),
                    Err(e) if e.kind == FailureKind::NotFound => {
                        format!("{identifier} was not running: the pool has no such session")
                    }
                    Err(e) => format!("cannot end {identifier}: {e}"),
                });
                if identifier == self.config.identifier {
                    self.sessions.current = None;
                }
                return self.sessions.refresh(now);
            }
            SessionsEvent::PoolInfo(result) => {
                if s.pool_info.is_some() {
                    s.pool_info = Some(result.map_err(|e| e.message));
                }
            }
            SessionsEvent::Recorded(result) => {
                s.reading_recorded = false;
                s.pane.set_recorded(match result {
                    Ok(list) => RecordedList::Loaded(list),
                    Err(e) => RecordedList::Failed(e.message),
                });
            }
            SessionsEvent::OpenedRecorded { request, result } => {
                return self.recorded_read(request, result);
            }
        }
        Vec::new()
    }

    /// The current session's details: the countdown's new end, and a recycled
    /// session noticed when the pool says it was created after the one we knew.
    fn session_details(&mut self, info: SessionInfo, now: Instant) {
        let s = &mut self.sessions;
        let recycled = matches!(
            (s.current.as_ref().and_then(|c| c.info.created), info.created),
            (Some(before), Some(after)) if after > before
        );
        s.current = Some(Current {
            info,
            at: (now, Utc::now()),
        });
        s.countdown_wake = None;
        if !recycled {
            return;
        }
        // The last cell ran in the fresh session; the ones before it are lost.
        let count = self.notebook.cells.len();
        let sources: Vec<CellInput> = self
            .notebook
            .cells
            .iter()
            .take(count.saturating_sub(1))
            .map(Cell::input)
            .collect();
        let message = format!(
            "the pool gave {} a fresh session: variables and files from before are gone",
            self.config.identifier
        );
        if let Some(last) = count.checked_sub(1)
            && let Some(cell) = self.notebook.cell_mut(last)
        {
            cell.outputs.push(Output::Stream {
                name: StreamName::Stderr,
                text: format!("[sessionpad] {message}\n").into(),
            });
            self.views.outputs.invalidate(last);
        }
        self.notice = Some(message);
        if let Some(last) = count.checked_sub(1) {
            self.mark_new_session(last, true);
        }
        if !sources.is_empty() {
            let question = Question::new(
                "Fresh session: run the ",
                sources.len().to_string(),
                " earlier cells again?",
            );
            self.ask(Prompt::question(
                Purpose::Sessions(SessionsPrompt::Replay(sources)),
                question,
            ));
        }
    }
}
