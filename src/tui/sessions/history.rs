//! The sessions pane's history section (issue 13): the sessions the flight
//! recorder holds calls of, from this user's ledger, most recently active
//! first: identifier, the last client that named itself, how many cells,
//! first and last activity, and the session's state, from the pool's own
//! list when the session is this pool's (`live` when the pool lists it,
//! `ended` when it does not), else `other` (the details name its pool). Identifiers,
//! clients and pool keys are untrusted text (an agent chose them) and pass
//! [`fit::one_line`].

use chrono::{DateTime, Utc};
use ratatui::text::{Line, Span};

use super::pane::{
    Lines, MARK_COLUMNS, MIN_IDENTIFIER, PoolList, SessionsPaneState, TIME_COLUMNS, header,
    identifier_spans, section_title,
};
use crate::ledger::read::RecordedSession;
use crate::tui::theme::Theme;
use crate::tui::widgets::fit;

/// Width of the client column.
const CLIENT_COLUMNS: usize = 24;
/// Width of the cells column.
const CELLS_COLUMNS: usize = 5;
/// Width of the state column (`live`, `ended`, `other`).
const STATE_COLUMNS: usize = 5;

/// The recorded sessions, as far as they are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordedList {
    /// The ledger is being read.
    Loading,
    /// The recorded sessions (none when nothing was recorded yet).
    Loaded(Vec<RecordedSession>),
    /// The ledger could not be read: why.
    Failed(String),
}

impl RecordedList {
    /// The sessions listed (none while loading or after a failure).
    pub fn sessions(&self) -> &[RecordedSession] {
        match self {
            Self::Loaded(list) => list,
            _ => &[],
        }
    }
}

/// A recorded session's state as the pane shows it: this pool's sessions
/// are `live` while the pool lists them and `ended` once it does not (`?`
/// when the pool cannot list or has not answered); another pool's are
/// `other`.
pub fn state_of(state: &SessionsPaneState, recorded: &RecordedSession) -> &'static str {
    // A ledger written before pools were told apart files every local pool
    // as `local`: those sessions are judged by this pool's list.
    let legacy = recorded.pool == crate::protocol::record::POOL_KEY
        && crate::protocol::record::is_local_pool_key(&state.ledger_pool);
    if recorded.pool != state.ledger_pool && !legacy {
        return "other";
    }
    match &state.pool_list {
        PoolList::Loaded(list) if list.iter().any(|s| s.identifier == recorded.identifier) => {
            "live"
        }
        PoolList::Loaded(_) => "ended",
        _ => "?",
    }
}

/// The details box of a recorded session: its identifier, the pool it was
/// recorded under and its state, the last client (whole, sanitised), the
/// counts, first and last activity, and the keys that act on it.
pub(super) fn details(
    state: &SessionsPaneState,
    recorded: &RecordedSession,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let when = |t: DateTime<Utc>| fit::short_time(t, state.now, state.tz);
    vec![
        Line::styled(fit::one_line(&recorded.identifier), theme.accent),
        Line::raw(match state_of(state, recorded) {
            "other" => format!(
                "recorded on another pool: {}",
                fit::one_line(&recorded.pool)
            ),
            this => format!("recorded on this pool · {this}"),
        }),
        Line::raw(clients_line(recorded)),
        Line::raw(format!(
            "{} cells, {} calls · {} → {}",
            recorded.cells,
            recorded.calls,
            when(recorded.first),
            when(recorded.last)
        )),
        Line::styled(
            "Enter opens read-only · x exports .ipynb · R replays in a fresh session",
            theme.muted,
        ),
    ]
}

/// The section's lines: a title with the count, a header, one row per
/// recorded session (selectable, after the pool's rows).
pub(super) fn recorded_section(
    state: &SessionsPaneState,
    width: usize,
    theme: &Theme,
    out: &mut Lines,
) {
    let list = match &state.recorded {
        RecordedList::Loaded(list) => list,
        RecordedList::Loading => {
            out.lines.push(section_title("Recorded".into(), theme));
            out.lines
                .push(Line::styled("  reading the flight recorder…", theme.muted));
            return;
        }
        RecordedList::Failed(why) => {
            out.lines.push(section_title("Recorded".into(), theme));
            // The path and SQLite's reason both matter: wrapped, not cut.
            for line in textwrap::wrap(&fit::one_line(why), width.saturating_sub(2).max(10)) {
                out.lines
                    .push(Line::styled(format!("  {line}"), theme.error));
            }
            return;
        }
    };
    out.lines.push(section_title(
        format!(
            "Recorded · {} · Enter opens read-only · x exports · R replays",
            list.len()
        ),
        theme,
    ));
    let columns = Columns::fit(list, width);
    out.lines.push(header(&columns.titles(), theme));
    if list.is_empty() {
        out.lines.push(Line::styled(
            "  (nothing recorded yet: the local pool and `serve --upstream` record every call)",
            theme.muted,
        ));
    }
    for recorded in list {
        let selected = out.row_lines.len() == state.selected;
        let row = columns.row(state, recorded, selected, theme);
        out.row_lines.push(out.lines.len());
        out.lines.push(row);
    }
}

/// The section's columns as they fit the pane: the identifier's width and
/// which of the others are shown.
struct Columns {
    /// Width of the identifier column.
    id_w: usize,
    /// The state column (`live`, `ended`, `other`).
    status: bool,
    /// The cells column.
    cells: bool,
    /// The last activity's column.
    last_at: bool,
    /// The client column.
    client: bool,
    /// The first activity's column.
    first_at: bool,
}

impl Columns {
    /// The columns for `list` in a pane `width` wide, the most important kept
    /// first: state, cells, last activity, client, first; the identifier column
    /// no wider than the longest identifier needs.
    fn fit(list: &[RecordedSession], width: usize) -> Self {
        let (id_w, shown) = fit::layout(
            width.saturating_sub(MARK_COLUMNS),
            MIN_IDENTIFIER,
            &[
                STATE_COLUMNS,
                CELLS_COLUMNS,
                TIME_COLUMNS,
                CLIENT_COLUMNS,
                TIME_COLUMNS,
            ],
        );
        let id_w = id_w.min(
            list.iter()
                .map(|r| fit::columns(&fit::one_line(&r.identifier)))
                .max()
                .unwrap_or(0)
                .max(MIN_IDENTIFIER),
        );
        Self {
            id_w,
            status: shown[0],
            cells: shown[1],
            last_at: shown[2],
            client: shown[3],
            first_at: shown[4],
        }
    }

    /// The header's cells (title, width, right-aligned) of the columns shown,
    /// in the order the rows show them.
    fn titles(&self) -> Vec<(&'static str, usize, bool)> {
        let mut titles = vec![("Identifier", self.id_w, false)];
        for (show, title, w, right) in [
            (self.client, "Client", CLIENT_COLUMNS, false),
            (self.cells, "Cells", CELLS_COLUMNS, true),
            (self.first_at, "First", TIME_COLUMNS, false),
            (self.last_at, "Last", TIME_COLUMNS, false),
            (self.status, "State", STATE_COLUMNS, false),
        ] {
            if show {
                titles.push((title, w, right));
            }
        }
        titles
    }

    /// The row of `recorded` (`selected`: the selection is on it): its marks
    /// and identifier, then the columns shown.
    fn row(
        &self,
        state: &SessionsPaneState,
        recorded: &RecordedSession,
        selected: bool,
        theme: &Theme,
    ) -> Line<'static> {
        let time = |t: DateTime<Utc>| {
            let text = fit::short_time(t, state.now, state.tz);
            Span::styled(format!(" {}", fit::pad(&text, TIME_COLUMNS)), theme.muted)
        };
        let mut spans = identifier_spans(state, selected, &recorded.identifier, self.id_w, theme);
        if self.client {
            // The client that started the session (the agent), not the
            // person who took it over last.
            let text = fit::one_line(&crate::session::follow::short_agent(
                recorded
                    .first_client
                    .as_deref()
                    .or(recorded.client.as_deref()),
            ));
            spans.push(Span::raw(format!(
                " {}",
                fit::pad(&fit::truncate(&text, CLIENT_COLUMNS), CLIENT_COLUMNS)
            )));
        }
        if self.cells {
            spans.push(Span::raw(format!(
                " {}",
                fit::pad_left(&recorded.cells.to_string(), CELLS_COLUMNS)
            )));
        }
        if self.first_at {
            spans.push(time(recorded.first));
        }
        if self.last_at {
            spans.push(time(recorded.last));
        }
        if self.status {
            let text = state_of(state, recorded);
            let style = if text == "live" {
                theme.accent
            } else {
                theme.muted
            };
            spans.push(Span::styled(
                format!(" {}", fit::pad(text, STATE_COLUMNS)),
                style,
            ));
        }
        Line::from(spans)
    }
}

/// The details' line about who used a recorded session: the client that
/// started it, and the latest where another came after it.
fn clients_line(recorded: &RecordedSession) -> String {
    let name = |c: Option<&str>| c.map_or_else(|| "unknown".to_string(), fit::one_line);
    match (recorded.first_client.as_deref(), recorded.client.as_deref()) {
        (Some(first), Some(last)) if first != last => format!(
            "started by: {} · last client: {}",
            name(Some(first)),
            name(Some(last))
        ),
        (first, last) => format!("client: {}", name(first.or(last))),
    }
}
