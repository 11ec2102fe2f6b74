//! News for the app, a part of [`App`]'s reducer kept apart from `app.rs`:
//! what the session worker reports (the pool's state, a run started or
//! finished, an interrupt delivered, files, sessions, following, running
//! output) and what blocking work hands back (an encoded image, a built
//! preview), each applied to the state, with the effects that follow. The
//! news about this app's runs goes to the notebook's reducer (`cells.rs`).

use std::time::Instant;

use super::{App, POOL_LOG_LIMIT, PoolState};
use crate::session::SessionEvent;
use crate::tui::action::Effect;
use crate::tui::event::AppEvent;

impl App {
    /// Applies news from the session worker or from work handed to blocking
    /// threads; returns the effects that follow from it (a refresh after a
    /// transfer, the preview of a cell's new image).
    pub fn handle_event(&mut self, event: impl Into<AppEvent>, now: Instant) -> Vec<Effect> {
        self.dirty = true;
        match event.into() {
            AppEvent::Session(event) => {
                return match self.defer_while_recorded(event) {
                    Some(event) => self.session_event(event, now),
                    None => Vec::new(),
                };
            }
            AppEvent::ImageEncoded(done) => {
                if let Some(key) = self.views.images.encoded(done)
                    && key.cell < self.notebook.cells().len()
                {
                    self.notebook.outputs.invalidate(key.cell);
                }
            }
            AppEvent::PreviewBuilt { generation, result } => self.preview_built(generation, result),
            AppEvent::GraphicsProbed(picker) => {
                self.views.images.set_picker(picker);
                self.notebook.outputs.invalidate_all();
            }
        }
        Vec::new()
    }

    /// Applies news from the session worker; returns the effects that follow.
    fn session_event(&mut self, event: SessionEvent, now: Instant) -> Vec<Effect> {
        match event {
            SessionEvent::PoolProgress(line) => {
                self.pool_log.push(line);
                let excess = self.pool_log.len().saturating_sub(POOL_LOG_LIMIT);
                self.pool_log.drain(..excess);
            }
            SessionEvent::PoolReady => self.pool = PoolState::Ready,
            SessionEvent::PoolKey(key) => self.sessions.pane.ledger_pool = key,
            SessionEvent::PoolFailed(reason) => self.pool = PoolState::Failed(reason.message),
            SessionEvent::PoolRestarted(message) => {
                self.pool = PoolState::Ready;
                // The running cell is the one sent to the new pool: the cells
                // above it ran in a session that is gone.
                if let Some((cell, _)) = self.running().filter(|(cell, _)| *cell > 0) {
                    self.notebook.mark_new_session(cell, true);
                }
                self.pool_log.push(message.clone());
                self.notice = Some(message);
            }
            SessionEvent::PoolIsolation(isolation) => self.isolation = Some(isolation),
            SessionEvent::ExecutionStarted(run) => self.execution_started(run, now),
            SessionEvent::UploadsRedone { run, outcomes } => self.uploads_redone(run, &outcomes),
            SessionEvent::ExecutionFinished {
                run,
                outcome,
                exit_code,
                images,
            } => self.execution_finished(run, outcome, exit_code, images, now),
            SessionEvent::ExecutionNotRun(run) => self.execution_not_run(run, now),
            SessionEvent::InterruptSent { run, delivered } => {
                self.interrupt_sent(run, delivered, now);
            }
            SessionEvent::Files(event) => return self.files_event(event),
            SessionEvent::Sessions(event) => return self.sessions_event(event, now),
            SessionEvent::Followed(followed) => return self.followed(*followed),
            SessionEvent::LiveOutput { own, chunk } => self.live_output(own, chunk),
            SessionEvent::Follow(news) => return self.follow_news(news),
        }
        Vec::new()
    }
}
