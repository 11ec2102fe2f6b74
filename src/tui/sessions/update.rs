//! The sessions pane's reducer: its keys (move, refresh, the pool's metadata,
//! back, new, attach, end), the answers to what it asked, and the news that
//! is only its own (the pool's list, the pool's metadata, the recorded
//! sessions read). It changes only [`SessionsUi`] and hands back
//! [`SessionsOut`]s; what needs the rest of the app (switching the notebook
//! to a session, following it, reading a recorded session, replaying cells,
//! the pools chooser) goes back as a [`SessionsRequest`].

use std::time::Instant;

use super::history::RecordedList;
use super::pane::SessionRow;
use super::{PAGE, SessionsAction, SessionsPrompt, SessionsUi};
use crate::ledger::read::RecordedSession;
use crate::notebook::CellInput;
use crate::session::{Failure, SessionsCommand};
use crate::tui::action::{Effect, Out};
use crate::tui::widgets::prompt::{Answer, Prompt, Question};

/// What the sessions pane's reducer hands back (see [`Out`]).
pub type SessionsOut = Out<Prompt<SessionsPrompt>, SessionsRequest>;

/// What a recorded session is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordedUse {
    /// Show it read-only in place of the notebook.
    View,
    /// Export it as `.ipynb` (asks where).
    Export,
    /// Replay it into a fresh session (asks first).
    Replay,
}

/// What only the app can do for the sessions pane.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionsRequest {
    /// Run the notebook in this session (typed, or the row chosen).
    Switch(String),
    /// Follow this session (on the one in use: turn following on or off).
    Follow(String),
    /// Read this recorded session from the flight recorder, for this use.
    ReadRecorded(Box<RecordedSession>, RecordedUse),
    /// Open the pools chooser.
    OpenPools,
    /// Run these cells again, in order, in the session in use.
    Replay(Vec<CellInput>),
    /// Switch to the fresh session `identifier` and replay `cells` there.
    ReplayIn {
        /// The fresh session.
        identifier: String,
        /// The cells, in order, with the uploads before each.
        plan: Box<crate::session::replay::ReplayPlan>,
    },
}

impl SessionsUi {
    /// The sessions pane's reducer: a key of the pane, at `now`.
    pub fn update(&mut self, action: SessionsAction, now: Instant) -> Vec<SessionsOut> {
        match action {
            SessionsAction::Down => self.move_by(1),
            SessionsAction::Up => self.move_by(-1),
            SessionsAction::PageDown => self.move_by(PAGE),
            SessionsAction::PageUp => self.move_by(-PAGE),
            SessionsAction::Refresh => return effects(self.refresh(now)),
            SessionsAction::Pools => return vec![Out::Request(SessionsRequest::OpenPools)],
            SessionsAction::PoolInfo => {
                self.pool_info = Some(Err("loading…".into()));
                self.pool_info_scroll = 0;
                return vec![Effect::Sessions(SessionsCommand::PoolInfo).into()];
            }
            SessionsAction::New => {
                let id = crate::tui::random_identifier();
                return vec![Out::Ask(Prompt::line(
                    SessionsPrompt::New,
                    "New session identifier:",
                    &id,
                ))];
            }
            SessionsAction::Attach => {
                return vec![Out::Ask(Prompt::line(
                    SessionsPrompt::Attach,
                    "Attach to identifier:",
                    "",
                ))];
            }
            SessionsAction::Switch => return self.choose_selected(),
            SessionsAction::Export => return self.read_selected(RecordedUse::Export),
            SessionsAction::Replay => return self.read_selected(RecordedUse::Replay),
            SessionsAction::Follow => {
                return self
                    .selected_identifier()
                    .map(|id| Out::Request(SessionsRequest::Follow(id)))
                    .into_iter()
                    .collect();
            }
            SessionsAction::End => return self.ask_to_end_selected(),
            SessionsAction::Back => {
                if self.pool_info.take().is_none() {
                    return vec![Out::FocusEditor];
                }
            }
        }
        Vec::new()
    }

    /// Moves `delta` rows: scrolls the pool's metadata when it is shown, else
    /// moves the selection.
    fn move_by(&mut self, delta: isize) {
        if self.pool_info.is_some() {
            self.pool_info_scroll = self.pool_info_scroll.saturating_add_signed(delta);
        } else {
            self.pane.move_selection(delta);
        }
    }

    fn selected_identifier(&self) -> Option<String> {
        self.pane.selected_row().map(|r| r.identifier().to_string())
    }

    /// Enter on the selected row: a recorded session is read to be shown
    /// read-only; another row asks the app to switch to its session.
    fn choose_selected(&self) -> Vec<SessionsOut> {
        match self.pane.selected_row() {
            Some(SessionRow::Recorded(recorded)) => vec![Out::Request(
                SessionsRequest::ReadRecorded(Box::new(recorded.clone()), RecordedUse::View),
            )],
            Some(row) => vec![Out::Request(SessionsRequest::Switch(
                row.identifier().to_string(),
            ))],
            None => Vec::new(),
        }
    }

    /// Reads the selected recorded session for `use_`; on any other row, says
    /// which rows those are.
    fn read_selected(&self, use_: RecordedUse) -> Vec<SessionsOut> {
        match self.pane.selected_row() {
            Some(SessionRow::Recorded(recorded)) => vec![Out::Request(
                SessionsRequest::ReadRecorded(Box::new(recorded.clone()), use_),
            )],
            _ => vec![Out::Notice(
                "select a session under Recorded: those are the ones the flight recorder holds"
                    .into(),
            )],
        }
    }

    /// Asks whether to end the selected session.
    fn ask_to_end_selected(&self) -> Vec<SessionsOut> {
        let Some(id) = self.selected_identifier() else {
            return Vec::new();
        };
        let question = Question::new(
            "End session ",
            id.clone(),
            "? Its state and files are lost.",
        );
        vec![Out::Ask(Prompt::question(
            SessionsPrompt::End(id),
            question,
        ))]
    }

    /// The answer to what the pane asked: the identifier to switch to, or
    /// whether to end a session, replay cells or where to export a recorded
    /// session.
    pub fn answer(&mut self, asked: SessionsPrompt, answer: Answer) -> Vec<SessionsOut> {
        let notice = |text: &str| vec![Out::Notice(text.to_string())];
        match (asked, answer) {
            (SessionsPrompt::New | SessionsPrompt::Attach, Answer::Text(id)) => {
                vec![Out::Request(SessionsRequest::Switch(id))]
            }
            (SessionsPrompt::End(id), Answer::Yes) => {
                vec![Effect::Sessions(SessionsCommand::End { identifier: id }).into()]
            }
            (SessionsPrompt::End(id), _) => notice(&format!("{id} keeps running")),
            (SessionsPrompt::Replay(sources), Answer::Yes) => {
                vec![Out::Request(SessionsRequest::Replay(sources))]
            }
            (SessionsPrompt::Replay(_), _) => notice("not replayed: Up recalls earlier cells"),
            (
                SessionsPrompt::ExportRecorded {
                    identifier,
                    cells,
                    bytes,
                },
                Answer::Text(typed),
            ) => {
                if typed.trim().is_empty() {
                    return notice("not exported: no file name");
                }
                vec![
                    Effect::Local(crate::tui::local::LocalWork::Save(
                        crate::tui::local::SaveRequest {
                            path: crate::tui::local::resolve(&typed),
                            bytes,
                            overwrite: false,
                            what: format!(
                                "recorded session {} ({cells} cells)",
                                crate::tui::widgets::sanitize::plain(&identifier)
                            ),
                        },
                    ))
                    .into(),
                ]
            }
            (SessionsPrompt::ExportRecorded { .. }, _) => notice("not exported"),
            (SessionsPrompt::ReplayRecorded { identifier, plan }, Answer::Yes) => {
                vec![Out::Request(SessionsRequest::ReplayIn { identifier, plan })]
            }
            (SessionsPrompt::ReplayRecorded { .. }, _) => notice("not replayed"),
            // A line given up (Esc).
            (SessionsPrompt::New | SessionsPrompt::Attach, _) => Vec::new(),
        }
    }

    /// The pool's metadata arrived (shown only if it is still asked for).
    pub fn pool_info_arrived(&mut self, result: Result<crate::protocol::PoolMetadata, Failure>) {
        if self.pool_info.is_some() {
            self.pool_info = Some(result.map_err(|e| e.message));
        }
    }

    /// The flight recorder's list of recorded sessions arrived.
    pub fn recorded_arrived(&mut self, result: Result<Vec<RecordedSession>, Failure>) {
        self.reading_recorded = false;
        self.pane.set_recorded(match result {
            Ok(list) => RecordedList::Loaded(list),
            Err(e) => RecordedList::Failed(e.message),
        });
    }
}

/// Effects as the pane's outs.
fn effects(effects: Vec<Effect>) -> Vec<SessionsOut> {
    effects.into_iter().map(Out::Effect).collect()
}
