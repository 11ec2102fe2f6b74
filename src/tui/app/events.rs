//! News for the app, a part of [`App`]'s reducer kept apart from `app.rs`:
//! what the session worker reports (the pool's state, a run started or
//! finished, an interrupt delivered, files, sessions, following, running
//! output) and what blocking work hands back (an encoded image, a built
//! preview), each applied to the state, with the effects that follow.

use std::time::Instant;

use super::{App, POOL_LOG_LIMIT, PoolState};
use crate::session::{DecodedImage, Failure, RunId, SessionEvent};
use crate::tui::action::Effect;
use crate::tui::event::AppEvent;
use crate::tui::runs::RunEvent;

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
                    && key.cell < self.notebook.cells.len()
                {
                    self.views.outputs.invalidate(key.cell);
                }
            }
            AppEvent::PreviewBuilt { generation, result } => self.preview_built(generation, result),
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
            SessionEvent::PoolFailed(reason) => self.pool = PoolState::Failed(reason.message),
            SessionEvent::PoolRestarted(message) => {
                self.pool = PoolState::Ready;
                // The running cell is the one sent to the new pool: the cells
                // above it ran in a session that is gone.
                if let Some((cell, _)) = self.running().filter(|(cell, _)| *cell > 0) {
                    self.mark_new_session(cell, true);
                }
                self.pool_log.push(message.clone());
                self.notice = Some(message);
            }
            SessionEvent::PoolIsolation(isolation) => self.isolation = Some(isolation),
            SessionEvent::ExecutionStarted(run) => {
                // The cell shows it running (`App::pending_of`): built again.
                if let Some(step) = self
                    .runs
                    .apply(run, RunEvent::Started(now), self.can_interrupt)
                    && step.state.is_some()
                {
                    self.views.outputs.invalidate(step.cell);
                }
            }
            SessionEvent::ExecutionFinished {
                run,
                outcome,
                exit_code,
                images,
            } => self.finish(run, outcome, exit_code, images),
            SessionEvent::InterruptSent { run, delivered } => self.interrupt_sent(run, delivered),
            SessionEvent::Files(event) => return self.files_event(event),
            SessionEvent::Sessions(event) => return self.sessions_event(event, now),
            SessionEvent::Followed(followed) => return self.followed(*followed),
            SessionEvent::LiveOutput { own, chunk } => self.live_output(own, chunk),
            SessionEvent::Follow(news) => return self.follow_news(news),
        }
        Vec::new()
    }

    /// Shows `text` on the status line as news of `run`: it ends when the run
    /// settles, or with the next key.
    pub(super) fn notice_for(&mut self, run: RunId, text: String) {
        self.notice = Some(text.clone());
        self.notice_about = Some((run, text));
    }

    /// Takes down the notice about `run`, if it is still up.
    pub(super) fn end_notice_about(&mut self, run: RunId) {
        if let Some((_, text)) = self.notice_about.take_if(|(r, _)| *r == run)
            && self.notice.as_ref() == Some(&text)
        {
            self.notice = None;
        }
    }

    fn finish(
        &mut self,
        run: RunId,
        outcome: Result<crate::protocol::Execution, Failure>,
        exit_code: Option<i32>,
        images: Vec<DecodedImage>,
    ) {
        // A reply for a run this app never sent (or already settled) is stale.
        let Some(step) = self.runs.apply(run, RunEvent::Finished, self.can_interrupt) else {
            return;
        };
        let index = step.cell;
        self.end_notice_about(run);
        self.follow.live_tail.forget(Some(index));
        let Some(cell) = self.notebook.cell_mut(index) else {
            return;
        };
        match outcome {
            Ok(exec) => {
                cell.finish(exec, exit_code);
                self.sessions.record_run(&self.config.identifier);
            }
            Err(failure) => cell.fail(&failure.message),
        }
        self.show_images(index, images);
        self.views.outputs.invalidate(index);
        if let (Some(saver), Some(cell)) = (&self.saver, self.notebook.cells.get(index)) {
            saver.cell_finished(index, cell.clone());
        }
    }
}
