//! The sessions pane's part of the app state and its reducers: this machine's
//! identifiers for the pool (the sessions store) and the pool's own list where
//! the api-version has `listSessions`; switching to a session (its own notebook
//! loads), a new one (random or typed identifier), attaching by identifier,
//! ending one (after a yes, the question naming it); the current session's
//! details for the idle countdown; noticing a silently recycled session (its
//! `created` moved) and offering to replay the earlier cells; the pool's
//! metadata in a scrollable popup; the flight recorder's history (the
//! sessions this user's ledger holds calls of, [`history`]): opened read-only,
//! exported as `.ipynb` or replayed into a fresh session
//! (`tui/app/recorded.rs`).
//!
//! While the pane is open its lists refresh by themselves every
//! [`REFRESH_EVERY`], one `listSessions` at a time: the next is asked for only
//! [`REFRESH_EVERY`] after the answer to the last, so a slow pool never gets a
//! pile of requests. Each finished cell is recorded in the sessions store
//! (`last_run`), the "last used" of pools that do not list their sessions.
//!
//! Pure like the other reducers: the pool is reached through
//! [`Effect::Sessions`] commands (the session worker owns a client), the switched session's notebook
//! is loaded by the loop ([`Effect::LoadNotebook`]), and the store file is
//! small and written at once.

pub mod history;
pub mod pane;
pub mod update;
pub mod view;

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::notebook::CellInput;
use crate::notebook::sessions_store::{SessionsStore, StoreWriter};
use crate::notebook::store::SaverThread;
use crate::protocol::{ApiVersion, PoolMetadata, SessionInfo};
use crate::session::{Failure, SessionsCommand};
use crate::tui::action::Effect;
use crate::tui::sessions::pane::{PoolList, SessionsPaneState};

/// A key of the sessions pane (`run = "sessions down"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionsAction {
    /// Select the next row (scroll the pool info down a line while it is open).
    Down,
    /// Select the previous row (scroll the pool info up a line while it is open).
    Up,
    /// Switch to the selected session (its notebook loads); on a recorded
    /// session, show its recorded cells read-only.
    Switch,
    /// Export the selected recorded session as `.ipynb` (asks where).
    Export,
    /// Replay the selected recorded session's cells into a fresh session
    /// (asks first).
    Replay,
    /// Start a new session: a random identifier, or one typed.
    New,
    /// Attach to an identifier typed (an agent's session).
    Attach,
    /// Follow the selected session (switching to it): the cells other clients
    /// run there appear as they finish; on the followed session, stop.
    Follow,
    /// End the selected session, after a yes.
    End,
    /// List the pool's sessions again.
    Refresh,
    /// Show the pool's metadata.
    PoolInfo,
    /// Choose another pool (a config profile, or the local pool).
    Pools,
    /// Close a popup, else back to the editor.
    Back,
    /// Down a page (of the pool info while it is open, else of the lists).
    PageDown,
    /// Up a page (of the pool info while it is open, else of the lists).
    PageUp,
}

/// How often the lists refresh while the pane is open (after the answer to the
/// previous refresh).
pub const REFRESH_EVERY: Duration = Duration::from_secs(5);
/// Rows a page key moves.
pub(crate) const PAGE: isize = 10;

/// What the sessions pane asks on the bottom row (a [`crate::tui::widgets::prompt::Prompt`]'s purpose).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionsPrompt {
    /// The identifier of a new session (a random one offered).
    New,
    /// The identifier to attach to.
    Attach,
    /// End this session?
    End(String),
    /// The session was recycled: replay these cells?
    Replay(Vec<CellInput>),
    /// Where to export a recorded session's notebook (its `.ipynb` text).
    ExportRecorded {
        /// The recorded session.
        identifier: String,
        /// How many cells it has.
        cells: usize,
        /// The `.ipynb` text.
        bytes: Vec<u8>,
    },
    /// Replay a recorded session's cells into the fresh session `identifier`?
    ReplayRecorded {
        /// The fresh session's identifier.
        identifier: String,
        /// The cells, in order, with the uploads before each.
        plan: Box<crate::session::replay::ReplayPlan>,
    },
}

impl crate::tui::widgets::prompt::Purposeful for SessionsPrompt {
    fn completion(&self) -> Option<fn(&str) -> String> {
        // Identifiers and file names are not completed.
        None
    }
}

/// The current session's details and when they were read.
#[derive(Debug, Clone)]
pub struct Current {
    /// The details.
    pub info: SessionInfo,
    /// When they arrived, on the loop's clock and the wall clock.
    pub at: (Instant, DateTime<Utc>),
}

/// The sessions pane's state in the app.
#[derive(Debug)]
pub struct SessionsUi {
    /// The pane's view state.
    pub pane: SessionsPaneState,
    /// This machine's identifiers (none when it could not be read), changed
    /// in memory here; the file is written by `writer`, off the UI task.
    pub store: Option<SessionsStore>,
    /// The thread that writes the store's file (none without a store).
    pub writer: Option<StoreWriter>,
    /// The pool's name in the store and the notebook files.
    pub pool: String,
    /// The endpoint, for the notebook's place (`None`: the local pool).
    pub endpoint: Option<String>,
    /// The current session's details.
    pub current: Option<Current>,
    /// The pool's metadata popup, while open.
    pub pool_info: Option<Result<PoolMetadata, String>>,
    /// The first line of the pool info shown (it scrolls; the view clamps it).
    pub pool_info_scroll: usize,
    /// The pool can list sessions (the api-version has `listSessions`).
    pub can_list: bool,
    /// A `listSessions` is under way (no second one is sent meanwhile).
    listing: bool,
    /// The flight recorder's sessions are being read (no second read meanwhile).
    pub(crate) reading_recorded: bool,
    /// The pool's card was asked for (once: an Azure pool's ARM resource).
    card_asked: bool,
    /// When the open pane refreshes next (`None` while a listing is under way).
    next_refresh: Option<Instant>,
    /// When the countdown's text changes next.
    pub(crate) countdown_wake: Option<Instant>,
    /// The savers of notebooks loaded by switching (finished when quitting).
    savers: Vec<SaverThread>,
}

impl SessionsUi {
    /// A closed pane for `pool` with `identifier` in use.
    pub fn new(pool_label: &str, identifier: &str, api_version: ApiVersion) -> Self {
        let can_list = api_version.has_session_management();
        let mut pane = SessionsPaneState::new(pool_label, identifier, Utc::now());
        if !can_list {
            pane.pool_list = PoolList::Unsupported(format!(
                "api-version {api_version} cannot list sessions (2025-02-02-preview and later can)"
            ));
        }
        Self {
            pane,
            store: None,
            writer: None,
            pool: "local".into(),
            endpoint: None,
            current: None,
            pool_info: None,
            pool_info_scroll: 0,
            can_list,
            listing: false,
            reading_recorded: false,
            card_asked: false,
            next_refresh: None,
            savers: Vec::new(),
            countdown_wake: None,
        }
    }

    /// Keeps the saver thread of a notebook loaded by a switch.
    pub fn keep_saver(&mut self, thread: Option<SaverThread>) {
        self.savers.extend(thread);
    }

    /// The saver threads to wait for when quitting.
    pub fn take_savers(&mut self) -> Vec<SaverThread> {
        std::mem::take(&mut self.savers)
    }

    /// Takes this machine's identifiers for the pool from the store.
    fn reload_local(&mut self) {
        if let Some(store) = &self.store {
            let local = store
                .list_for_pool(&self.pool)
                .into_iter()
                .cloned()
                .collect();
            self.pane.set_local(local);
        }
    }

    /// Records that a cell run in `identifier` finished now: its "last used"
    /// where the pool does not list sessions (the file is written by the
    /// writer thread).
    pub fn record_run(&mut self, identifier: &str) {
        let now = Utc::now();
        if let Some(store) = &mut self.store {
            store.note_run(&self.pool, identifier, now);
        }
        if let Some(writer) = &self.writer {
            writer.record_run(&self.pool, identifier, now);
        }
        self.pane.now = now;
        self.reload_local();
    }

    /// Records that `identifier` is used now (the file is written by the
    /// writer thread).
    pub fn record_use(&mut self, identifier: &str) {
        let now = Utc::now();
        if let Some(store) = &mut self.store {
            store.note_use(&self.pool, identifier, now);
        }
        if let Some(writer) = &self.writer {
            writer.record_use(&self.pool, identifier, now);
        }
        self.reload_local();
    }

    /// The flight recorder's `seq` of the last call of another client shown
    /// while following `identifier` (`None`: never followed here).
    pub fn followed_seq(&self, identifier: &str) -> Option<i64> {
        self.store
            .as_ref()
            .and_then(|s| s.get(&self.pool, identifier))
            .and_then(|e| e.followed_seq)
    }

    /// Records that following `identifier` showed the recorded call `seq`
    /// (the file is written by the writer thread).
    pub fn record_followed(&mut self, identifier: &str, seq: i64) {
        if let Some(store) = &mut self.store {
            store.note_followed(&self.pool, identifier, seq);
        }
        if let Some(writer) = &self.writer {
            writer.record_followed(&self.pool, identifier, seq);
        }
    }

    /// Reads this machine's identifiers again, asks the pool for its list
    /// unless a listing is under way, and the flight recorder for its
    /// sessions unless a read is. The lists on screen stay until the new
    /// ones arrive.
    pub(crate) fn refresh(&mut self, now: Instant) -> Vec<Effect> {
        self.reload_local();
        self.pane.now = Utc::now();
        let mut effects = Vec::new();
        if !self.reading_recorded {
            self.reading_recorded = true;
            effects.push(Effect::Sessions(SessionsCommand::Recorded));
        }
        // An Azure pool's card, read from ARM once: the resource changes
        // rarely, the lists every refresh.
        let azure = self
            .endpoint
            .as_deref()
            .and_then(crate::client::arm::PoolResourceId::from_endpoint)
            .is_some();
        if azure && !self.card_asked {
            self.card_asked = true;
            effects.push(Effect::Sessions(SessionsCommand::PoolCard));
        }
        if !self.can_list {
            self.next_refresh = Some(now + REFRESH_EVERY);
            return effects;
        }
        self.next_refresh = None;
        if self.listing {
            return effects;
        }
        self.listing = true;
        if !matches!(self.pane.pool_list, PoolList::Loaded(_)) {
            self.pane.set_pool_list(PoolList::Loading);
        }
        effects.push(Effect::Sessions(SessionsCommand::List));
        effects
    }

    /// The pool's list arrived (or did not): shown, and the next refresh
    /// planned [`REFRESH_EVERY`] from `now`.
    pub(crate) fn listed(&mut self, result: Result<Vec<SessionInfo>, Failure>, now: Instant) {
        self.listing = false;
        self.pane.now = Utc::now();
        self.pane.set_pool_list(match result {
            Ok(list) => PoolList::Loaded(list),
            Err(e) => PoolList::Failed(e.message),
        });
        self.next_refresh = Some(now + REFRESH_EVERY);
    }

    /// The refresh of the pane, when it is `open` and its time has come: the
    /// effects to carry out (`None`: not due, nothing changed).
    pub fn refresh_due(&mut self, open: bool, now: Instant) -> Option<Vec<Effect>> {
        if !open || self.next_refresh.is_none_or(|t| now < t) {
            return None;
        }
        Some(self.refresh(now))
    }

    /// When the countdown's text changes next: every second in its last
    /// minute, else when the minute changes; never without a countdown.
    /// The pane's next refresh counts too while it is `open`.
    pub fn next_wakeup(&self, open: bool, now: Instant) -> Option<Instant> {
        let refresh = self.next_refresh.filter(|_| open);
        let countdown = self.expires_in(now).and_then(|left| {
            let wait = match left {
                ..=0 => return None,
                1..=60 => 1,
                _ => left % 60 + 1,
            };
            Some(now + Duration::from_secs(wait.unsigned_abs()))
        });
        [refresh, countdown].into_iter().flatten().min()
    }

    /// Whether a countdown wake-up is due at `now` (its text changed).
    pub fn countdown_due(&mut self, now: Instant) -> bool {
        let due = self.countdown_wake.is_some_and(|t| now >= t);
        if due || self.countdown_wake.is_none() {
            self.countdown_wake = self.next_wakeup(false, now);
        }
        due
    }

    /// The idle countdown's end, as the wall clock at `now` sees it.
    pub fn expires_in(&self, now: Instant) -> Option<i64> {
        let current = self.current.as_ref()?;
        let expires = current.info.expires?;
        let (at, wall) = current.at;
        let elapsed = chrono::Duration::from_std(now.saturating_duration_since(at)).ok()?;
        Some((expires - (wall + elapsed)).num_seconds())
    }
}

#[cfg(test)]
mod tests;
