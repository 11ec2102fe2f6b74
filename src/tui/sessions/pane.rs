//! The sessions pane: the identifiers this machine used with the pool (label,
//! last use, from the sessions store) and, where the api-version has
//! `listSessions`, the pool's own list (created, last accessed, expires), with an
//! idle-expiry countdown computed from `expires` and the `now` in the state;
//! then the flight recorder's history: the sessions this user's ledger
//! recorded calls of ([`super::history`]).
//!
//! "Last used" is the pool's own `lastAccessedAt` (2025-02-02-preview and later,
//! `aca-api.md` §4.4) where its list has the identifier, else when a cell this
//! machine ran there last finished (the sessions store's `last_run`), never when
//! a notebook was merely opened. The identifier in use is marked
//! [`CURRENT_MARK`], the selection [`SELECTION_MARK`] (and highlighted): two
//! marks, so one is never taken for the other. One selection runs through both
//! lists and follows its identifier when the lists change (a refresh reorders
//! them), never a row number.
//!
//! [`SessionsPaneState`] is the pane's view state; [`render`] is pure (no clock,
//! no network). Identifiers and labels are untrusted text (another agent chose
//! them) and pass [`fit::one_line`].

use chrono::{DateTime, FixedOffset, Offset, Utc};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use super::history::{self, RecordedList};
use crate::ledger::read::RecordedSession;
use crate::notebook::sessions_store::SessionEntry;
use crate::protocol::SessionInfo;
use crate::tui::theme::Theme;
use crate::tui::widgets::fit;

/// Narrowest the identifier column gets before other columns are dropped.
pub(super) const MIN_IDENTIFIER: usize = 20;
/// Width of the label column.
const LABEL_COLUMNS: usize = 16;
/// Width of the "last used" column (`2 h 03 min ago`).
const AGO_COLUMNS: usize = 15;
/// Width of the countdown column (`ends in 4 min 05 s`).
const IDLE_COLUMNS: usize = 18;
/// Width of a time column (`Mar 01 14:05`).
pub(super) const TIME_COLUMNS: usize = 12;
/// The marker columns: the selection's, the current session's, a space.
pub(super) const MARK_COLUMNS: usize = 3;
/// The mark of the selected row (also highlighted).
pub const SELECTION_MARK: char = '›';
/// The mark of the session the notebook runs in.
pub const CURRENT_MARK: char = '●';
/// Seconds before expiry from which the countdown is a warning.
const WARN_SECS: i64 = 60;

/// The pool's own list of sessions, as far as it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolList {
    /// The api-version (or pool kind) has no way to list sessions: why.
    Unsupported(String),
    /// A `listSessions` call is under way.
    Loading,
    /// The pool's sessions.
    Loaded(Vec<SessionInfo>),
    /// Listing failed: the reason.
    Failed(String),
}

/// One selectable row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionRow<'a> {
    /// An identifier this machine used.
    Local(&'a SessionEntry),
    /// A session from the pool's list.
    Pool(&'a SessionInfo),
    /// A session the flight recorder holds calls of.
    Recorded(&'a RecordedSession),
}

impl SessionRow<'_> {
    /// The row's session identifier.
    pub fn identifier(&self) -> &str {
        match self {
            Self::Local(e) => &e.identifier,
            Self::Pool(s) => &s.identifier,
            Self::Recorded(r) => &r.identifier,
        }
    }
}

/// Which list a row is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// This machine's identifiers.
    Local,
    /// The pool's list.
    Pool,
    /// The recorded sessions.
    Recorded,
}

/// What the selection is on: the list and the identifier, so that it can be
/// found again after the lists change.
pub type RowKey = (RowKind, String);

/// The view state of the sessions pane.
#[derive(Debug, Clone)]
pub struct SessionsPaneState {
    /// The pool as shown in the title (`local`, a host name).
    pub pool: String,
    /// The identifier in use.
    pub current: String,
    /// This machine's identifiers for the pool, most recently used first
    /// ([`crate::notebook::sessions_store::SessionsStore::list_for_pool`]).
    pub local: Vec<SessionEntry>,
    /// The pool's list.
    pub pool_list: PoolList,
    /// The flight recorder's sessions (all pools), most recently active first.
    pub recorded: RecordedList,
    /// The ledger's key of this pool (`local`, or the endpoint without its
    /// trailing `/`): recorded sessions under another key are another pool's.
    pub ledger_pool: String,
    /// Index of the selected row: the local rows first, then the pool's, then
    /// the recorded ones.
    pub selected: usize,
    /// Index of the first line shown.
    pub scroll: usize,
    /// Whether the pane has the focus.
    pub focused: bool,
    /// The time countdowns and ages are measured against.
    pub now: DateTime<Utc>,
    /// The offset times are shown in.
    pub tz: FixedOffset,
    /// An Azure pool's card from ARM (egress, lifecycle, maximum sessions),
    /// or the words of why ARM gave none; `None` until it arrives, and for
    /// other pools.
    pub card: Option<Result<crate::client::arm::SessionPoolResource, String>>,
}

impl SessionsPaneState {
    /// An empty pane for `pool` with `current` in use, in UTC.
    pub fn new(pool: &str, current: &str, now: DateTime<Utc>) -> Self {
        Self {
            pool: pool.to_string(),
            current: current.to_string(),
            local: Vec::new(),
            pool_list: PoolList::Loading,
            recorded: RecordedList::Loading,
            ledger_pool: crate::protocol::record::POOL_KEY.to_string(),
            selected: 0,
            scroll: 0,
            focused: false,
            now,
            tz: Utc.fix(),
            card: None,
        }
    }

    fn pool_sessions(&self) -> &[SessionInfo] {
        match &self.pool_list {
            PoolList::Loaded(list) => list,
            _ => &[],
        }
    }

    /// How many rows can be selected.
    pub fn row_count(&self) -> usize {
        self.local.len() + self.pool_sessions().len() + self.recorded.sessions().len()
    }

    /// The row at `index` (local rows first, then the pool's, then the
    /// recorded sessions).
    pub fn row(&self, index: usize) -> Option<SessionRow<'_>> {
        if let Some(e) = self.local.get(index) {
            return Some(SessionRow::Local(e));
        }
        let index = index - self.local.len();
        let pool = self.pool_sessions();
        match pool.get(index) {
            Some(s) => Some(SessionRow::Pool(s)),
            None => self
                .recorded
                .sessions()
                .get(index - pool.len())
                .map(SessionRow::Recorded),
        }
    }

    /// The selected row.
    pub fn selected_row(&self) -> Option<SessionRow<'_>> {
        self.row(self.selected)
    }

    /// Moves the selection by `delta` rows, stopping at either end.
    pub fn move_selection(&mut self, delta: isize) {
        let last = self.row_count().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// Selects row `index` (local rows first), within the rows.
    pub fn select_row(&mut self, index: usize) {
        self.selected = index;
        self.move_selection(0);
    }

    /// The list and identifier of the selected row.
    pub fn selected_key(&self) -> Option<RowKey> {
        self.selected_row().map(|row| {
            let kind = match row {
                SessionRow::Local(_) => RowKind::Local,
                SessionRow::Pool(_) => RowKind::Pool,
                SessionRow::Recorded(_) => RowKind::Recorded,
            };
            (kind, row.identifier().to_string())
        })
    }

    /// Puts the selection back on `key` after the lists changed: the same
    /// identifier in the same list, else in the other list; when it is gone
    /// (the session ended), the row at the same place, within the rows.
    pub fn reselect(&mut self, key: Option<RowKey>) {
        if let Some((kind, id)) = key {
            let rows = || (0..self.row_count()).filter_map(|i| self.row(i).map(|r| (i, r)));
            let same_list = rows().find(|(_, r)| {
                r.identifier() == id
                    && matches!(
                        (kind, r),
                        (RowKind::Local, SessionRow::Local(_))
                            | (RowKind::Pool, SessionRow::Pool(_))
                            | (RowKind::Recorded, SessionRow::Recorded(_))
                    )
            });
            if let Some((i, _)) = same_list.or_else(|| rows().find(|(_, r)| r.identifier() == id)) {
                self.selected = i;
                return;
            }
        }
        self.move_selection(0);
    }

    /// Replaces this machine's identifiers; the selection keeps its identifier.
    pub fn set_local(&mut self, local: Vec<SessionEntry>) {
        let key = self.selected_key();
        self.local = local;
        self.reselect(key);
    }

    /// Replaces the pool's list; the selection keeps its identifier.
    pub fn set_pool_list(&mut self, list: PoolList) {
        let key = self.selected_key();
        self.pool_list = list;
        self.reselect(key);
    }

    /// Replaces the recorded sessions; the selection keeps its identifier.
    pub fn set_recorded(&mut self, recorded: RecordedList) {
        let key = self.selected_key();
        self.recorded = recorded;
        self.reselect(key);
    }

    /// When `identifier` was last used: the pool's `lastAccessedAt` when its
    /// list has it, else `last_run` (this machine's last finished cell there).
    pub fn last_used(
        &self,
        identifier: &str,
        last_run: Option<DateTime<Utc>>,
    ) -> Option<DateTime<Utc>> {
        self.pool_info(identifier)
            .and_then(|s| s.last_accessed)
            .or(last_run)
    }

    /// The pool's record of `identifier`, when its list has one.
    pub fn pool_info(&self, identifier: &str) -> Option<&SessionInfo> {
        self.pool_sessions()
            .iter()
            .find(|s| s.identifier == identifier)
    }
}

/// The idle countdown of a session and its style: warning in the last minute,
/// error once expired.
pub fn idle_countdown(
    expires: DateTime<Utc>,
    now: DateTime<Utc>,
    theme: &Theme,
) -> (String, Style) {
    let left = (expires - now).num_seconds();
    let style = if left <= 0 {
        theme.error
    } else if left <= WARN_SECS {
        theme.warning
    } else {
        theme.muted
    };
    (fit::countdown(expires, now), style)
}

/// The identifier column's natural width: the longest identifier shown, at
/// least [`MIN_IDENTIFIER`].
fn longest<'a>(ids: impl Iterator<Item = &'a str>) -> usize {
    ids.map(|id| fit::columns(&fit::one_line(id)))
        .max()
        .unwrap_or(0)
        .max(MIN_IDENTIFIER)
}

/// A list's lines and, per selectable row, the line it is on.
pub(super) struct Lines {
    pub(super) lines: Vec<Line<'static>>,
    pub(super) row_lines: Vec<usize>,
}

pub(super) fn section_title(text: String, theme: &Theme) -> Line<'static> {
    Line::styled(text, theme.accent)
}

pub(super) fn header(cells: &[(&str, usize, bool)], theme: &Theme) -> Line<'static> {
    let mut text = " ".repeat(MARK_COLUMNS);
    for (i, (title, width, right)) in cells.iter().enumerate() {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(&if *right {
            fit::pad_left(title, *width)
        } else {
            fit::pad(title, *width)
        });
    }
    Line::styled(text, theme.muted.add_modifier(Modifier::BOLD))
}

/// The marker and identifier cells of a row.
pub(super) fn identifier_spans(
    state: &SessionsPaneState,
    selected: bool,
    id: &str,
    width: usize,
    theme: &Theme,
) -> Vec<Span<'static>> {
    let current = id == state.current;
    let style = if current {
        theme.accent.add_modifier(Modifier::BOLD)
    } else {
        Style::new()
    };
    let marks = format!(
        "{}{} ",
        if selected { SELECTION_MARK } else { ' ' },
        if current { CURRENT_MARK } else { ' ' }
    );
    vec![
        Span::styled(marks, theme.accent),
        Span::styled(fit::pad(&fit::one_line(id), width), style),
    ]
}

fn local_section(state: &SessionsPaneState, width: usize, theme: &Theme, out: &mut Lines) {
    out.lines.push(section_title(
        format!("This machine · {}", state.local.len()),
        theme,
    ));
    let (id_w, shown) = fit::layout(
        width.saturating_sub(MARK_COLUMNS),
        MIN_IDENTIFIER,
        &[AGO_COLUMNS, IDLE_COLUMNS, LABEL_COLUMNS],
    );
    let id_w = id_w.min(longest(state.local.iter().map(|e| e.identifier.as_str())));
    let [ago, idle, label] = [shown[0], shown[1], shown[2]];
    let mut cells = vec![("Identifier", id_w, false)];
    if label {
        cells.push(("Label", LABEL_COLUMNS, false));
    }
    if ago {
        cells.push(("Last used", AGO_COLUMNS, false));
    }
    if idle {
        cells.push(("Idle", IDLE_COLUMNS, false));
    }
    out.lines.push(header(&cells, theme));
    if state.local.is_empty() {
        out.lines.push(Line::styled("  (none yet)", theme.muted));
    }
    for entry in &state.local {
        let selected = out.row_lines.len() == state.selected;
        let mut spans = identifier_spans(state, selected, &entry.identifier, id_w, theme);
        if label {
            let text = entry
                .label
                .as_deref()
                .map(fit::one_line)
                .unwrap_or_default();
            spans.push(Span::raw(format!(" {}", fit::pad(&text, LABEL_COLUMNS))));
        }
        if ago {
            let text = state
                .last_used(&entry.identifier, entry.last_run)
                .map_or_else(|| "no run yet".to_string(), |t| fit::ago(t, state.now));
            spans.push(Span::styled(
                format!(" {}", fit::pad(&text, AGO_COLUMNS)),
                theme.muted,
            ));
        }
        if idle && let Some(expires) = state.pool_info(&entry.identifier).and_then(|s| s.expires) {
            let (text, style) = idle_countdown(expires, state.now, theme);
            spans.push(Span::styled(
                format!(" {}", fit::pad(&text, IDLE_COLUMNS)),
                style,
            ));
        }
        out.row_lines.push(out.lines.len());
        out.lines.push(Line::from(spans));
    }
}

/// Lines of the card's text at most this many, the last cut with `…`.
const CARD_LINES: usize = 4;

/// The pool section's title: `Pool · N`, or with an Azure pool's card its
/// summary (`Pool · egress off · cooldown 300 s · 3 of 100 alive`, `alive`
/// the sessions listed), wrapped onto the lines under it in a narrow pane;
/// and under it, when ARM gave no card, why (a 403 names the role), wrapped
/// onto at most [`CARD_LINES`] lines.
fn pool_title(
    state: &SessionsPaneState,
    alive: Option<usize>,
    width: usize,
    theme: &Theme,
    out: &mut Lines,
) {
    let summary = match &state.card {
        Some(Ok(card)) => Some(card.summary(alive)).filter(|s| !s.is_empty()),
        _ => None,
    };
    let title = match (summary, alive) {
        (Some(s), _) => format!("Pool · {}", fit::one_line(&s)),
        (None, Some(n)) => format!("Pool · {n}"),
        (None, None) => "Pool".into(),
    };
    for line in wrapped(&title, width, "  ") {
        out.lines.push(section_title(line, theme));
    }
    if let Some(Err(why)) = &state.card {
        let text = fit::one_line(&format!("pool card: {why}"));
        for line in wrapped(&text, width, "    ") {
            out.lines
                .push(Line::styled(format!("  {line}"), theme.muted));
        }
    }
}

/// `text` wrapped at `width` columns, later lines indented by `indent`, at
/// most [`CARD_LINES`] lines (the last cut with `…` when there was more).
fn wrapped(text: &str, width: usize, indent: &str) -> Vec<String> {
    let width = width.saturating_sub(2).max(8);
    let options = textwrap::Options::new(width).subsequent_indent(indent);
    let mut lines: Vec<String> = textwrap::wrap(text, options)
        .into_iter()
        .map(std::borrow::Cow::into_owned)
        .collect();
    if lines.len() > CARD_LINES {
        lines.truncate(CARD_LINES);
        if let Some(last) = lines.last_mut() {
            *last = fit::truncate(&format!("{last} …"), width);
        }
    }
    lines
}

fn pool_section(state: &SessionsPaneState, width: usize, theme: &Theme, out: &mut Lines) {
    let list = match &state.pool_list {
        PoolList::Loaded(list) => list,
        PoolList::Loading => {
            pool_title(state, None, width, theme, out);
            out.lines
                .push(Line::styled("  listing the pool's sessions…", theme.muted));
            return;
        }
        PoolList::Unsupported(why) | PoolList::Failed(why) => {
            pool_title(state, None, width, theme, out);
            let text = fit::truncate(&fit::one_line(why), width.saturating_sub(2));
            out.lines
                .push(Line::styled(format!("  {text}"), theme.muted));
            return;
        }
    };
    pool_title(state, Some(list.len()), width, theme, out);
    // Most important first: the countdown, then expiry, last access, creation.
    let (id_w, shown) = fit::layout(
        width.saturating_sub(MARK_COLUMNS),
        MIN_IDENTIFIER,
        &[IDLE_COLUMNS, TIME_COLUMNS, TIME_COLUMNS, TIME_COLUMNS],
    );
    let id_w = id_w.min(longest(list.iter().map(|s| s.identifier.as_str())));
    let [idle, expires, accessed, created] = [shown[0], shown[1], shown[2], shown[3]];
    let mut cells = vec![("Identifier", id_w, false)];
    for (show, title) in [
        (created, "Created"),
        (accessed, "Last access"),
        (expires, "Expires"),
    ] {
        if show {
            cells.push((title, TIME_COLUMNS, false));
        }
    }
    if idle {
        cells.push(("Idle", IDLE_COLUMNS, false));
    }
    out.lines.push(header(&cells, theme));
    if list.is_empty() {
        out.lines.push(Line::styled("  (no sessions)", theme.muted));
    }
    let time = |t: Option<DateTime<Utc>>| {
        let text = t
            .map(|t| fit::short_time(t, state.now, state.tz))
            .unwrap_or_default();
        Span::styled(format!(" {}", fit::pad(&text, TIME_COLUMNS)), theme.muted)
    };
    for info in list {
        let selected = out.row_lines.len() == state.selected;
        let mut spans = identifier_spans(state, selected, &info.identifier, id_w, theme);
        for (show, t) in [
            (created, info.created),
            (accessed, info.last_accessed),
            (expires, info.expires),
        ] {
            if show {
                spans.push(time(t));
            }
        }
        if let (true, Some(expires)) = (idle, info.expires) {
            let (text, style) = idle_countdown(expires, state.now, theme);
            spans.push(Span::styled(
                format!(" {}", fit::pad(&text, IDLE_COLUMNS)),
                style,
            ));
        }
        out.row_lines.push(out.lines.len());
        out.lines.push(Line::from(spans));
    }
}

/// Draws the sessions pane in `area`: a bordered block titled with the pool,
/// this machine's identifiers, a blank line, then the pool's list; scrolled just
/// enough to show the selection.
pub fn render(area: Rect, buf: &mut Buffer, state: &SessionsPaneState, theme: &Theme) {
    let border = if state.focused {
        theme.border_focused
    } else {
        theme.border
    };
    let title = format!(" Sessions · {} ", fit::one_line(&state.pool));
    let legend = format!(" {SELECTION_MARK} selected · {CURRENT_MARK} this notebook's session ");
    let block = Block::bordered()
        .border_style(border)
        .title(Span::styled(title, theme.accent))
        .title_bottom(Line::styled(legend, theme.muted).right_aligned());
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let width = usize::from(inner.width);
    let mut lines = Lines {
        lines: Vec::new(),
        row_lines: Vec::new(),
    };
    local_section(state, width, theme, &mut lines);
    lines.lines.push(Line::default());
    pool_section(state, width, theme, &mut lines);
    lines.lines.push(Line::default());
    history::recorded_section(state, width, theme, &mut lines);
    let rows = usize::from(inner.height);
    let selected_line = lines.row_lines.get(state.selected).copied();
    let mut start = state.scroll.min(lines.lines.len().saturating_sub(1));
    if let Some(line) = selected_line {
        if line < start {
            start = line;
        } else if line >= start + rows {
            start = line + 1 - rows;
        }
    }
    for (i, line) in lines.lines.iter().enumerate().skip(start).take(rows) {
        let y = inner.y + u16::try_from(i - start).unwrap_or(u16::MAX);
        buf.set_line(inner.x, y, line, inner.width);
        if Some(i) == selected_line {
            let style = if state.focused {
                theme.selection
            } else {
                theme.selection.add_modifier(Modifier::DIM)
            };
            buf.set_style(Rect::new(inner.x, y, inner.width, 1), style);
        }
    }
}

#[cfg(test)]
#[path = "pane_tests.rs"]
mod tests;
