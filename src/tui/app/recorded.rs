//! Recorded sessions in the notebook (issue 13), a part of [`App`]'s reducer
//! kept apart from `app.rs`: a session the flight recorder holds calls of,
//! chosen in the sessions pane's history, opens **read-only** in place of the
//! notebook (each cell marked with the client that ran it), is exported as
//! `.ipynb`, or is replayed into a fresh session of the pool; and when
//! following begins, the calls an agent made before are caught up on.
//!
//! The ledger is read by the session worker
//! ([`SessionsCommand::OpenRecorded`]); what to do with the cells when they
//! arrive is kept here with the request ([`Then`]).
//!
//! While a recorded session is shown, the live notebook (its cells, views,
//! marks) is kept aside in [`RecordedView`], untouched: the news that would
//! change it (another client's followed cell, running output) waits in the
//! view and is applied when the notebook comes back. No cell of the live
//! session runs meanwhile: the view opens only when none is pending, and
//! running a cell (the editor stays the live session's) brings the live
//! notebook back first, so the typed cell is never lost.

use std::collections::HashMap;
use std::time::Instant;

use super::App;
use super::SessionBoundary;
use crate::ledger::read::RecordedSession;
use crate::notebook::ipynb::{self, NotebookMeta};
use crate::notebook::{Cell, Notebook};
use crate::session::replay::{Ending, PlannedCell, ReplayPlan};
use crate::session::{Failure, RecordedNotebook, RecordedRequest, SessionEvent, SessionsCommand};
use crate::tui::action::Effect;
use crate::tui::app::Purpose;
use crate::tui::sessions::SessionsPrompt;
use crate::tui::widgets::image::ImageKey;
use crate::tui::widgets::prompt::{Prompt, Question};
use crate::tui::widgets::sanitize;

/// What to do with a recorded session's cells once they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// Show them read-only in place of the notebook.
    View,
    /// Ask where to export them as `.ipynb`.
    Export,
    /// Ask whether to replay them into a fresh session.
    Replay,
    /// Add them to the notebook as followed cells (following began).
    CatchUp,
}

/// The notebook's recorded-session state.
#[derive(Debug, Default)]
pub struct RecordedUi {
    /// The recorded session shown read-only, with the live notebook kept aside.
    pub view: Option<RecordedView>,
    /// Reads under way and what follows each.
    waiting: Vec<(RecordedRequest, Then)>,
    /// The replay of a recorded session into this notebook, while it runs
    /// and after (its verdicts and summary stay on screen).
    pub replay: Option<super::replay_watch::ReplayWatch>,
}

/// A recorded session on screen, read-only.
#[derive(Debug)]
pub struct RecordedView {
    /// Its session identifier.
    pub identifier: String,
    /// The pool key it was recorded under.
    pub pool: String,
    /// Per cell, what the flight recorder says of it (when, how long, the
    /// uploads before it, the files it changed).
    pub records: Vec<crate::session::history::CellRecord>,
    /// The live notebook, kept aside.
    live: Live,
    /// News about the live notebook that arrived meanwhile, in order.
    deferred: Vec<SessionEvent>,
}

/// The live notebook's state while a recorded one is shown.
#[derive(Debug)]
struct Live {
    notebook: Notebook,
    outputs: crate::tui::notebook::outputs::OutputsView,
    images: crate::tui::widgets::image::ImageStore,
    texts: crate::tui::widgets::long_output::LongTexts,
    highlighter: crate::tui::widgets::highlight::Highlighter,
    clients: HashMap<usize, String>,
    selected: Option<usize>,
    boundaries: Vec<SessionBoundary>,
    loaded_cells: usize,
}

/// A file name for an export of `identifier`: its safe characters, `.ipynb`.
fn export_name(identifier: &str) -> String {
    let safe: String = identifier
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(60)
        .collect();
    let safe = safe.trim_start_matches('.');
    if safe.is_empty() {
        "recorded.ipynb".to_string()
    } else {
        format!("{safe}.ipynb")
    }
}

impl App {
    /// Asks for `recorded`'s cells to be read from the ledger, then `then`.
    pub(crate) fn read_recorded(&mut self, recorded: &RecordedSession, then: Then) -> Vec<Effect> {
        if then == Then::View
            && self
                .recorded
                .view
                .as_ref()
                .is_some_and(|v| v.identifier == recorded.identifier && v.pool == recorded.pool)
        {
            self.notice = Some("already shown: run a cell to go back to your session".into());
            return Vec::new();
        }
        if then == Then::View && self.pending() > 0 {
            self.notice = Some("a cell is still running: wait for it or stop it first".into());
            return Vec::new();
        }
        let request = RecordedRequest {
            identifier: recorded.identifier.clone(),
            pool: Some(recorded.pool.clone()),
            language: self.config.language,
            after: None,
            others_only: false,
        };
        self.notice = Some(format!(
            "reading {} from the flight recorder…",
            sanitize::plain(&recorded.identifier)
        ));
        self.recorded.waiting.push((request.clone(), then));
        vec![Effect::Sessions(SessionsCommand::OpenRecorded(request))]
    }

    /// Asks for the calls other clients made in the current session after the
    /// last one this notebook showed (following began).
    pub(crate) fn catch_up_request(&mut self) -> Vec<Effect> {
        let identifier = self.config.identifier.clone();
        let request = RecordedRequest {
            after: self.sessions.followed_seq(&identifier),
            identifier,
            // This pool's calls only: the identifier may be in use on
            // another pool at the same time (issue 26); every pool's while
            // this pool's key is not known yet.
            pool: Some(self.sessions.pane.ledger_pool.clone())
                .filter(|k| k != crate::protocol::record::POOL_KEY),
            language: self.config.language,
            others_only: true,
        };
        self.recorded.waiting.push((request.clone(), Then::CatchUp));
        vec![Effect::Sessions(SessionsCommand::OpenRecorded(request))]
    }

    /// A recorded session's cells were read (or not): what was asked follows.
    pub(crate) fn recorded_read(
        &mut self,
        request: RecordedRequest,
        result: Result<Box<RecordedNotebook>, Failure>,
    ) -> Vec<Effect> {
        let Some(at) = self
            .recorded
            .waiting
            .iter()
            .position(|(r, _)| *r == request)
        else {
            return Vec::new();
        };
        let (_, then) = self.recorded.waiting.remove(at);
        let name = sanitize::plain(&request.identifier);
        let got = match result {
            Ok(got) => got,
            Err(e) => {
                self.notice = Some(format!("cannot read {name}'s record: {e}"));
                return Vec::new();
            }
        };
        match then {
            Then::CatchUp => return self.catch_up(&request, *got),
            _ if got.cells.is_empty() => {
                self.notice = Some(format!(
                    "no cells recorded for {name} ({} file call(s))",
                    got.file_calls
                ));
            }
            Then::View => self.show_recorded(request, *got),
            Then::Export => self.ask_export(&request, &got),
            Then::Replay => self.ask_replay(&name, *got),
        }
        Vec::new()
    }

    /// Asks whether to replay `got` (recorded session `name`, sanitised)
    /// into a fresh session, its uploads redone before the cells they came
    /// before.
    fn ask_replay(&mut self, name: &str, got: RecordedNotebook) {
        let shell = got.language == crate::notebook::language::Language::Shell;
        let mut records = got.records.into_iter();
        let cells: Vec<PlannedCell> = got
            .cells
            .iter()
            .map(|cell| {
                let record = records.next();
                PlannedCell {
                    input: Cell::input(cell),
                    recorded: record.as_ref().map_or_else(
                        || Ending::of_cell(cell, shell).unwrap_or(Ending::Other("unknown".into())),
                        |r| r.ending.clone(),
                    ),
                    uploads: record.map(|r| r.uploads_before).unwrap_or_default(),
                }
            })
            .collect();
        let uploads: usize =
            cells.iter().map(|c| c.uploads.len()).sum::<usize>() + got.uploads_after.len();
        let hex = uuid::Uuid::new_v4().simple().to_string();
        let fresh = format!("replay-{}", &hex[..8]);
        let what = match uploads {
            0 => format!("{} recorded cells of {name}", cells.len()),
            n => format!("{} recorded cells of {name} ({n} uploads)", cells.len()),
        };
        let question = Question::new(
            "Replay the ",
            what,
            &format!(" into a fresh session {fresh}?"),
        );
        let plan = ReplayPlan {
            source: name.to_string(),
            cells,
            uploads_after: got.uploads_after,
            shell,
        };
        self.ask(Prompt::question(
            Purpose::Sessions(SessionsPrompt::ReplayRecorded {
                identifier: fresh,
                plan: Box::new(plan),
            }),
            question,
        ));
    }

    /// Shows `got` read-only, the live notebook kept aside.
    fn show_recorded(&mut self, request: RecordedRequest, got: RecordedNotebook) {
        if self.pending() > 0 {
            self.notice = Some("a cell is still running: wait for it or stop it first".into());
            return;
        }
        // A second recorded session replaces the first; the live one stays aside.
        let (live, deferred) = match self.recorded.view.take() {
            Some(view) => (view.live, view.deferred),
            None => (self.take_live(), Vec::new()),
        };
        let count = got.cells.len();
        self.notebook.book = Notebook { cells: got.cells };
        self.views.highlighter.set_language(got.language);
        for ((cell, output), decoded) in got.images {
            self.views.images.insert(ImageKey { cell, output }, decoded);
        }
        self.follow.clients = got
            .calls
            .iter()
            .enumerate()
            .map(|(i, (client, _))| {
                (
                    i,
                    sanitize::plain(&crate::session::follow::short_agent(client.as_deref())),
                )
            })
            .collect();
        self.notebook.outputs.follow();
        let name = sanitize::plain(&request.identifier);
        self.notice = Some(format!(
            "recorded session {name}: {count} cells, read-only · F: a cell's files · run a cell to go back to {}",
            sanitize::plain(&self.config.identifier)
        ));
        self.recorded.view = Some(RecordedView {
            identifier: request.identifier,
            pool: request.pool.unwrap_or_default(),
            records: got.records,
            live,
            deferred,
        });
        self.dirty = true;
    }

    /// Takes the live notebook's state out, leaving an empty notebook with
    /// fresh views (images still drawn with the terminal's protocol).
    fn take_live(&mut self) -> Live {
        let images = self.views.images.sibling();
        Live {
            notebook: std::mem::take(&mut self.notebook.book),
            outputs: std::mem::take(&mut self.notebook.outputs),
            images: std::mem::replace(&mut self.views.images, images),
            texts: std::mem::take(&mut self.views.texts),
            highlighter: std::mem::take(&mut self.views.highlighter),
            clients: std::mem::take(&mut self.follow.clients),
            selected: self.notebook.selected.take(),
            boundaries: std::mem::take(&mut self.notebook.boundaries),
            loaded_cells: std::mem::take(&mut self.notebook.loaded_cells),
        }
    }

    /// Puts the live notebook back (when a recorded one is shown) and applies
    /// the news that waited; returns the effects that follow from it.
    pub(crate) fn leave_recorded(&mut self, now: Instant) -> Vec<Effect> {
        let Some(view) = self.recorded.view.take() else {
            return Vec::new();
        };
        let live = view.live;
        self.notebook.book = live.notebook;
        self.notebook.outputs = live.outputs;
        self.views.images = live.images;
        self.views.texts = live.texts;
        self.views.highlighter = live.highlighter;
        self.overlays.close(super::Overlay::Pager);
        self.follow.clients = live.clients;
        self.notebook.selected = live.selected;
        self.notebook.boundaries = live.boundaries;
        self.notebook.loaded_cells = live.loaded_cells;
        self.dirty = true;
        let mut effects = Vec::new();
        for event in view.deferred {
            effects.extend(self.handle_event(event, now));
        }
        effects
    }

    /// While a recorded session is shown, keeps `event` for the live
    /// notebook if it would change it (`None`); else gives it back.
    pub(crate) fn defer_while_recorded(&mut self, event: SessionEvent) -> Option<SessionEvent> {
        let Some(view) = self.recorded.view.as_mut() else {
            return Some(event);
        };
        match event {
            SessionEvent::ExecutionStarted(_)
            | SessionEvent::ExecutionFinished { .. }
            | SessionEvent::ExecutionNotRun(_)
            | SessionEvent::UploadsRedone { .. }
            | SessionEvent::InterruptSent { .. }
            | SessionEvent::PoolRestarted(_)
            | SessionEvent::Followed(_)
            | SessionEvent::LiveOutput { .. }
            | SessionEvent::Follow(_)
            // It fills in a cell of the live notebook.
            | SessionEvent::Sessions(crate::session::SessionsEvent::FoundRecord { .. }) => {
                view.deferred.push(event);
                None
            }
            other => Some(other),
        }
    }

    /// Asks where to export `got` (a recorded session) as `.ipynb`.
    fn ask_export(&mut self, request: &RecordedRequest, got: &RecordedNotebook) {
        let meta = NotebookMeta {
            pool: request.pool.clone().unwrap_or_default(),
            identifier: request.identifier.clone(),
            api_version: self.config.api_version.to_string(),
            language: got.language,
        };
        let bytes = ipynb::to_string(&got.cells, &meta).into_bytes();
        self.ask(Prompt::line(
            Purpose::Sessions(SessionsPrompt::ExportRecorded {
                identifier: request.identifier.clone(),
                cells: got.cells.len(),
                bytes,
            }),
            &format!(
                "Export recorded {} ({} cells) as .ipynb to:",
                sanitize::plain(&request.identifier),
                got.cells.len()
            ),
            &export_name(&request.identifier),
        ));
    }

    /// Following began: the calls other clients made before become followed
    /// cells, each once.
    fn catch_up(&mut self, request: &RecordedRequest, got: RecordedNotebook) -> Vec<Effect> {
        if !self.follow.following || request.identifier != self.config.identifier {
            return Vec::new();
        }
        let mut images: HashMap<usize, Vec<crate::session::DecodedImage>> = HashMap::new();
        for ((cell, _), decoded) in got.images {
            images.entry(cell).or_default().push(decoded);
        }
        let mut added = 0;
        for (i, (cell, (client, seq))) in got.cells.into_iter().zip(got.calls).enumerate() {
            if !self.follow.applied.insert(seq) {
                continue;
            }
            let index = self.notebook.book.push(String::new());
            if let Some(slot) = self.notebook.book.cell_mut(index) {
                let count = slot.execution_count;
                *slot = Cell {
                    execution_count: count,
                    ..cell
                };
            }
            let client = sanitize::plain(&crate::session::follow::short_agent(client.as_deref()));
            self.follow
                .clients
                .insert(index, format!("{client} · before following"));
            self.show_images(index, images.remove(&i).unwrap_or_default());
            self.notebook.outputs.invalidate(index);
            self.notebook.save_cell(index);
            added += 1;
        }
        if let Some(last) = got.last_seq {
            let identifier = self.config.identifier.clone();
            self.sessions.record_followed(&identifier, last);
        }
        self.notice = Some(if added > 0 {
            self.notebook.outputs.follow();
            format!("following · {added} earlier cell(s) added")
        } else {
            "following · nothing earlier".into()
        });
        self.dirty = true;
        Vec::new()
    }
}

#[cfg(test)]
#[path = "recorded_tests.rs"]
mod tests;
