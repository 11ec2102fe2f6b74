//! What [`App`] does for the sessions pane (`tui/sessions/` holds its state and
//! views; `impl App` lives only in `tui/app/`): opening and closing the pane,
//! its keys (move, switch, read a recorded session, follow, end), switching
//! the notebook to another session, replaying earlier cells, the answers to
//! its questions, and the news about the pool's sessions: the pool's list, a
//! session's details (the idle countdown, a silently recycled session noticed
//! and its earlier cells offered for replay), an ended session, the pool's
//! metadata, and the flight recorder's history and recorded sessions read.

use super::App;
use crate::notebook::Cell;
use crate::notebook::CellInput;
use crate::notebook::Output;
use crate::notebook::StreamName;
use crate::protocol::SessionInfo;
use crate::session::FailureKind;
use crate::session::SessionsCommand;
use crate::session::SessionsEvent;
use crate::tui::action::Effect;
use crate::tui::app::Purpose;
use crate::tui::app::SidePane;
use crate::tui::app::Then;
use crate::tui::persist::Place;
use crate::tui::sessions::Current;
use crate::tui::sessions::PAGE;
use crate::tui::sessions::SessionsAction;
use crate::tui::sessions::SessionsPrompt;
use crate::tui::sessions::history::RecordedList;
use crate::tui::sessions::pane::SessionRow;
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

    /// A key of the sessions pane.
    pub fn sessions_action(&mut self, action: SessionsAction) -> Vec<Effect> {
        let s = &mut self.sessions;
        match action {
            SessionsAction::Down => self.sessions_move(1),
            SessionsAction::Up => self.sessions_move(-1),
            SessionsAction::PageDown => self.sessions_move(PAGE),
            SessionsAction::PageUp => self.sessions_move(-PAGE),
            SessionsAction::Refresh => return s.refresh(Instant::now()),
            SessionsAction::Pools => self.open_pools(),
            SessionsAction::PoolInfo => {
                s.pool_info = Some(Err("loading…".into()));
                s.pool_info_scroll = 0;
                return vec![Effect::Sessions(SessionsCommand::PoolInfo)];
            }
            SessionsAction::New => {
                let id = crate::tui::random_identifier();
                self.ask(Prompt::line(
                    Purpose::Sessions(SessionsPrompt::New),
                    "New session identifier:",
                    &id,
                ));
            }
            SessionsAction::Attach => {
                self.ask(Prompt::line(
                    Purpose::Sessions(SessionsPrompt::Attach),
                    "Attach to identifier:",
                    "",
                ));
            }
            SessionsAction::Switch => return self.switch_to_selected(),
            SessionsAction::Export => return self.read_selected_recorded(Then::Export),
            SessionsAction::Replay => return self.read_selected_recorded(Then::Replay),
            SessionsAction::Follow => return self.follow_selected(),
            SessionsAction::End => self.ask_to_end_selected(),
            SessionsAction::Back => {
                if s.pool_info.take().is_none() {
                    self.focus = crate::tui::app::Focus::Editor;
                }
            }
        }
        Vec::new()
    }

    /// Moves `delta` rows: scrolls the pool's metadata when it is shown, else
    /// moves the selection.
    fn sessions_move(&mut self, delta: isize) {
        let s = &mut self.sessions;
        if s.pool_info.is_some() {
            s.pool_info_scroll = s.pool_info_scroll.saturating_add_signed(delta);
        } else {
            s.pane.move_selection(delta);
        }
    }

    /// Enter on the selected row: a recorded session opens read-only; another
    /// row switches to its session (back from a recorded one to the session in
    /// use when it is that one).
    fn switch_to_selected(&mut self) -> Vec<Effect> {
        match self.sessions.pane.selected_row() {
            Some(SessionRow::Recorded(recorded)) => {
                let recorded = recorded.clone();
                self.read_recorded(&recorded, Then::View)
            }
            Some(row) => {
                let id = row.identifier().to_string();
                if self.recorded.view.is_some() && id == self.config.identifier {
                    self.notice = Some(format!("back to {id}"));
                    return self.leave_recorded(Instant::now());
                }
                self.switch_session(&id)
            }
            None => Vec::new(),
        }
    }

    /// Reads the selected recorded session to export or replay it (`then`);
    /// on any other row, says which rows those are.
    fn read_selected_recorded(&mut self, then: Then) -> Vec<Effect> {
        match self.sessions.pane.selected_row() {
            Some(SessionRow::Recorded(recorded)) => {
                let recorded = recorded.clone();
                self.read_recorded(&recorded, then)
            }
            _ => {
                self.notice = Some(
                    "select a session under Recorded: those are the ones the flight recorder holds"
                        .into(),
                );
                Vec::new()
            }
        }
    }

    /// Follows the selected session: on the session in use, turns following
    /// on or off; on another, switches to it and follows it.
    fn follow_selected(&mut self) -> Vec<Effect> {
        let Some(id) = self
            .sessions
            .pane
            .selected_row()
            .map(|r| r.identifier().to_string())
        else {
            return Vec::new();
        };
        if id == self.config.identifier {
            let on = !self.follow.following;
            return self.set_following(on);
        }
        let mut effects = self.switch_session(&id);
        if self.config.identifier == id {
            effects.extend(self.set_following(true));
        }
        effects
    }

    /// Asks whether to end the selected session.
    fn ask_to_end_selected(&mut self) {
        if let Some(id) = self
            .sessions
            .pane
            .selected_row()
            .map(|r| r.identifier().to_string())
        {
            let question = Question::new(
                "End session ",
                id.clone(),
                "? Its state and files are lost.",
            );
            self.ask(Prompt::question(
                Purpose::Sessions(SessionsPrompt::End(id)),
                question,
            ));
        }
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

    /// The answer to a sessions prompt: the identifier to switch to, or
    /// whether to end a session or replay cells.
    pub(crate) fn sessions_answer(&mut self, asked: SessionsPrompt, answer: Answer) -> Vec<Effect> {
        match (asked, answer) {
            (SessionsPrompt::New | SessionsPrompt::Attach, Answer::Text(id)) => {
                return self.switch_session(&id);
            }
            (SessionsPrompt::End(id), Answer::Yes) => {
                return vec![Effect::Sessions(SessionsCommand::End { identifier: id })];
            }
            (SessionsPrompt::End(id), _) => self.notice = Some(format!("{id} keeps running")),
            (SessionsPrompt::Replay(sources), Answer::Yes) => return self.replay(sources),
            (SessionsPrompt::Replay(_), _) => {
                self.notice = Some("not replayed: Up recalls earlier cells".into());
            }
            (
                SessionsPrompt::ExportRecorded {
                    identifier,
                    cells,
                    bytes,
                },
                Answer::Text(typed),
            ) => {
                if typed.trim().is_empty() {
                    self.notice = Some("not exported: no file name".into());
                    return Vec::new();
                }
                return vec![Effect::Local(crate::tui::local::LocalWork::Save(
                    crate::tui::local::SaveRequest {
                        path: crate::tui::local::resolve(&typed),
                        bytes,
                        overwrite: false,
                        what: format!(
                            "recorded session {} ({cells} cells)",
                            crate::tui::widgets::sanitize::plain(&identifier)
                        ),
                    },
                ))];
            }
            (SessionsPrompt::ExportRecorded { .. }, _) => {
                self.notice = Some("not exported".into());
            }
            (SessionsPrompt::ReplayRecorded { identifier, cells }, Answer::Yes) => {
                let mut effects = self.switch_session(&identifier);
                if self.config.identifier == identifier {
                    effects.extend(self.replay(cells));
                }
                return effects;
            }
            (SessionsPrompt::ReplayRecorded { .. }, _) => {
                self.notice = Some("not replayed".into());
            }
            // A line given up (Esc).
            (SessionsPrompt::New | SessionsPrompt::Attach, _) => {}
        }
        Vec::new()
    }

    /// Runs `cells` again, in order, as new cells (each with its standard
    /// input, if it had one).
    pub(crate) fn replay(&mut self, cells: Vec<CellInput>) -> Vec<Effect> {
        let draft = self.editor.lines().join("\n");
        let mut effects = Vec::new();
        for cell in cells {
            crate::tui::notebook::editor::replace_text(&mut self.editor, &cell.source);
            effects.extend(self.run_cell(cell.stdin));
        }
        crate::tui::notebook::editor::replace_text(&mut self.editor, &draft);
        self.notice = Some(format!("replaying {} cells", effects.len()));
        effects
    }
}
