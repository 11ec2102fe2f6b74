//! What [`App`] does for the sessions pane (`tui/sessions/` holds its state and
//! views; `impl App` lives only in `tui/app/`): opening and closing the pane,
//! its keys (move, switch, read a recorded session, follow, end), switching
//! the notebook to another session, replaying earlier cells, the answers to
//! its questions, and the news about the pool's sessions: the pool's list, a
//! session's details (the idle countdown, a silently recycled session noticed
//! and its earlier cells offered for replay), an ended session, the pool's
//! metadata, and the flight recorder's history and recorded sessions read.

use super::{App, Focus};
use crate::notebook::Cell;
use crate::notebook::CellInput;
use crate::notebook::Output;
use crate::notebook::StreamName;
use crate::protocol::SessionInfo;
use crate::session::FailureKind;
use crate::session::SessionsCommand;
use crate::session::SessionsEvent;
use crate::tui::action::Effect;
use crate::tui::app::PoolSays;
use crate::tui::app::Purpose;
use crate::tui::app::SidePane;
use crate::tui::app::Then;
use crate::tui::persist::Place;
use crate::tui::sessions::Current;
use crate::tui::sessions::SessionsAction;
use crate::tui::sessions::SessionsPrompt;
use crate::tui::sessions::update::{RecordedUse, SessionsOut, SessionsRequest};
use crate::tui::widgets::prompt::Answer;
use crate::tui::widgets::prompt::Prompt;
use crate::tui::widgets::prompt::Question;
use chrono::Utc;
use std::time::Instant;

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
                    Ok(info) => {
                        self.reopened_session_is(Some(&info));
                        self.session_details(info, now);
                    }
                    // The pool has no such session (any more): no countdown
                    // for a session that is gone.
                    Err(e) if e.kind == FailureKind::NotFound => {
                        self.sessions.current = None;
                        self.reopened_session_is(None);
                    }
                    // No answer: the boundary says the pool could not tell.
                    Err(e) => {
                        tracing::debug!("session details: {e}");
                        for b in &mut self.notebook.boundaries {
                            if b.pool_says == PoolSays::Asking {
                                b.pool_says = PoolSays::CannotAsk;
                            }
                        }
                    }
                }
            }
            SessionsEvent::Ended { identifier, result } => {
                self.notice = Some(match result {
                    Ok(message) => crate::tui::widgets::sanitize::plain(&message),
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
            SessionsEvent::PoolInfo(result) => s.pool_info_arrived(result),
            SessionsEvent::PoolCard(result) => s.pane.card = Some(result.map(|card| *card)),
            SessionsEvent::Recorded(result) => s.recorded_arrived(result),
            SessionsEvent::OpenedRecorded { request, result } => {
                return self.recorded_read(request, result);
            }
            SessionsEvent::FoundRecord { lookup, result } => self.record_found(&lookup, result),
            SessionsEvent::RecordedFileRead { request, result } => {
                return self.recorded_file_read(&request, result);
            }
            SessionsEvent::RecordedFileSaved { request, saved } => {
                self.recorded_file_saved(request, saved);
            }
            SessionsEvent::Completed { request, result } => {
                return self.completion_answered(&request, result);
            }
        }
        Vec::new()
    }

    /// What the pool answered about a reopened notebook's session (`info`,
    /// `None` when it has no such session), while its boundary waits for it:
    /// the session is live and ran the cells above when it was created
    /// before the notebook file was last written (2 s of clock slack);
    /// otherwise the session that ran them ended, with its variables and
    /// `/mnt/data` files. The status line says which, once, unless it
    /// shows another notice.
    fn reopened_session_is(&mut self, info: Option<&SessionInfo>) {
        const SLACK: chrono::TimeDelta = chrono::TimeDelta::seconds(2);
        let reopened = self.notebook.loaded_cells;
        let loaded_at = self.notebook.loaded_at;
        let Some(b) = self
            .notebook
            .boundaries
            .iter_mut()
            .find(|b| b.after == reopened && b.pool_says == PoolSays::Asking)
        else {
            return;
        };
        let created = info.and_then(|i| i.created);
        let ran_them = match (created, loaded_at) {
            (Some(created), Some(at)) => created <= at + SLACK,
            _ => true,
        };
        let said = if info.is_some() && ran_them {
            b.pool_says = PoolSays::Live { created };
            "session live: variables and files kept"
        } else {
            b.pool_says = PoolSays::Ended;
            b.known_new = true;
            "session ended: variables and /mnt/data files are gone"
        };
        // A notice already up (the flight recorder's about a cell left
        // running) says more; the boundary says this one too.
        if self.notice.is_none() {
            self.notice = Some(said.into());
        }
        if let Some(last) = reopened.checked_sub(1) {
            self.notebook.outputs.invalidate(last);
        }
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
        let count = self.notebook.book.cells.len();
        let sources: Vec<CellInput> = self
            .notebook
            .book
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
            && let Some(cell) = self.notebook.book.cell_mut(last)
        {
            cell.outputs.push(Output::Stream {
                name: StreamName::Stderr,
                text: format!("[sessionpad] {message}\n").into(),
            });
            self.notebook.outputs.invalidate(last);
        }
        self.notice = Some(message);
        if let Some(last) = count.checked_sub(1) {
            self.notebook.mark_new_session(last, true);
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

impl App {
    /// Shows the sessions pane with the focus, or hides it (F3).
    pub fn toggle_sessions(&mut self) -> Vec<Effect> {
        if self.pane_focused(SidePane::Sessions) {
            self.hide_pane();
            return Vec::new();
        }
        self.show_pane(SidePane::Sessions);
        self.sessions.refresh(Instant::now())
    }

    /// A key of the sessions pane, for its reducer.
    pub fn sessions_action(&mut self, action: SessionsAction) -> Vec<Effect> {
        let outs = self.sessions.update(action, Instant::now());
        self.apply_sessions(outs)
    }

    /// Carries out what the sessions pane's reducer handed back; returns the
    /// effects for the loop.
    fn apply_sessions(&mut self, outs: Vec<SessionsOut>) -> Vec<Effect> {
        self.apply(outs, Purpose::Sessions, Self::sessions_request)
    }

    /// What only the app can do for the sessions pane.
    fn sessions_request(&mut self, request: SessionsRequest) -> Vec<Effect> {
        match request {
            SessionsRequest::Switch(id) => {
                // Back from a recorded session to the session in use.
                if self.recorded.view.is_some() && id == self.config.identifier {
                    self.notice = Some(format!("back to {id}"));
                    return self.leave_recorded(Instant::now());
                }
                self.switch_session(&id)
            }
            SessionsRequest::Follow(id) => self.follow_session(&id),
            SessionsRequest::ReadRecorded(recorded, use_) => {
                let then = match use_ {
                    RecordedUse::View => Then::View,
                    RecordedUse::Export => Then::Export,
                    RecordedUse::Replay => Then::Replay,
                };
                self.read_recorded(&recorded, then)
            }
            SessionsRequest::OpenPools => {
                self.open_pools();
                Vec::new()
            }
            SessionsRequest::Replay(cells) => self.replay(cells),
            SessionsRequest::ReplayIn { identifier, plan } => {
                let mut effects = self.switch_session(&identifier);
                if self.config.identifier == identifier {
                    effects.extend(self.replay_recorded(*plan));
                }
                effects
            }
        }
    }

    /// Follows session `id`: on the session in use, turns following on or
    /// off; on another, switches to it and follows it.
    fn follow_session(&mut self, id: &str) -> Vec<Effect> {
        if id == self.config.identifier {
            let on = !self.follow.following;
            return self.set_following(on);
        }
        let mut effects = self.switch_session(id);
        if self.config.identifier == id {
            effects.extend(self.set_following(true));
        }
        effects
    }

    /// Starts using session `identifier`: the worker runs the next cells there
    /// and the loop loads its notebook ([`Effect::LoadNotebook`]).
    pub fn switch_session(&mut self, identifier: &str) -> Vec<Effect> {
        let identifier = identifier.trim();
        if identifier.is_empty() {
            self.notice = Some("no identifier given".into());
            return Vec::new();
        }
        if identifier == self.config.identifier {
            self.notice = Some(format!("already in {identifier}"));
            return Vec::new();
        }
        if self.pending() > 0 {
            self.notice = Some("a cell is still running: wait for it or stop it first".into());
            return Vec::new();
        }
        let mut effects = self.leave_recorded(Instant::now());
        effects.extend(self.begin_session(identifier));
        let s = &mut self.sessions;
        s.current = None;
        s.pane.current = identifier.to_string();
        s.record_use(identifier);
        let place = Place::new(
            s.endpoint.as_deref(),
            identifier,
            self.config.api_version,
            self.config.language,
        );
        self.notice = Some(format!("switched to {identifier}"));
        effects.push(Effect::SwitchSession {
            identifier: identifier.to_string(),
        });
        effects.push(Effect::LoadNotebook(place));
        if self.sessions.can_list {
            effects.push(Effect::Sessions(SessionsCommand::Info {
                identifier: identifier.to_string(),
            }));
        }
        effects
    }

    /// The answer to a sessions prompt, for the pane's reducer.
    pub(crate) fn sessions_answer(&mut self, asked: SessionsPrompt, answer: Answer) -> Vec<Effect> {
        let outs = self.sessions.answer(asked, answer);
        self.apply_sessions(outs)
    }
}

impl App {
    /// Tab in the editor: a completion request to the worker after a name
    /// or `.` (`notebook/completion.rs`), else the editor's own Tab (indent).
    pub(super) fn complete_or_indent(&mut self) -> Vec<Effect> {
        let identifier = self.config.identifier.clone();
        let nb = &mut self.notebook;
        match nb.completion.tab(&nb.editor, &identifier) {
            Some(out) => self.completion_out(out),
            None => {
                nb.editor.input(ratatui_textarea::Input {
                    key: ratatui_textarea::Key::Tab,
                    ..ratatui_textarea::Input::default()
                });
                Vec::new()
            }
        }
    }

    /// A key press while the completion list may be open, before the keymap
    /// makes an action of it: `Some` when the list took it (it moved, took a
    /// candidate, or closed on Esc, which then does not leave the editor);
    /// `None` when no list is open over the editor, or the key closed it and
    /// now acts as it always does.
    pub fn completion_key(&mut self, key: crossterm::event::KeyEvent) -> Option<Vec<Effect>> {
        if self.overlay().is_some() || self.focus != Focus::Editor {
            return None;
        }
        let nb = &mut self.notebook;
        nb.completion.popup()?;
        self.dirty = true;
        let input = ratatui_textarea::Input::from(key);
        nb.completion
            .popup_key(&mut nb.editor, &input)
            .then(Vec::new)
    }

    /// The worker's completion answer applied to the editor, if still current.
    fn completion_answered(
        &mut self,
        request: &crate::session::CompletionRequest,
        result: Result<Option<crate::protocol::Completion>, crate::session::Failure>,
    ) -> Vec<Effect> {
        let nb = &mut self.notebook;
        let out = nb.completion.answered(&mut nb.editor, request, result);
        tracing::debug!(
            ticket = request.ticket,
            listed = nb.completion.popup().map_or(0, |p| p.items().len()),
            "completion answered"
        );
        out.map_or_else(Vec::new, |out| self.completion_out(out))
    }

    /// A completion output: an effect for the loop, or a status notice.
    fn completion_out(
        &mut self,
        out: crate::tui::notebook::completion::CompletionOut,
    ) -> Vec<Effect> {
        use crate::tui::notebook::completion::CompletionOut;
        match out {
            CompletionOut::Effect(effect) => vec![effect],
            CompletionOut::Notice(text) => {
                self.notice = Some(text);
                Vec::new()
            }
        }
    }
}
