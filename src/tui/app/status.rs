//! The status line: where cells run (pool, session identifier, api-version), a
//! warning when the local pool's sessions are not isolated, and how the last
//! run went; on the right, the Ctrl+C notice when one is pending,
//! else the app's one-off notice (such as why `$EDITOR` failed).
//! (Key hints live in the editor's title, which has a stable width.)

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::notebook::CellOutcome;
use crate::notebook::language::Language;
use crate::tui::app::{App, PoolState};
use crate::tui::notebook::format_duration;
use crate::tui::widgets::sanitize;

/// Shown after a first Ctrl+C.
const QUIT_NOTICE: &str = " press Ctrl+C again to quit ";

/// The state of the last run (or of the pool before any), with its style.
pub fn run_state(app: &App, now: Instant) -> (String, Style) {
    let theme = &app.theme;
    let queued = app
        .pending()
        .saturating_sub(usize::from(app.running().is_some()));
    let queued_note = if queued > 0 {
        format!(" · {queued} queued")
    } else {
        String::new()
    };
    if let Some((_, since)) = app.running() {
        let elapsed = format_duration(now.saturating_duration_since(since));
        return (format!("running {elapsed}{queued_note}"), theme.warning);
    }
    match &app.pool {
        PoolState::Starting => {
            let last = app
                .pool_log
                .last()
                .map(|l| format!(" {}", sanitize::plain(l)))
                .unwrap_or_default();
            let waiting = if queued > 0 {
                format!(" {queued} queued ·")
            } else {
                String::new()
            };
            return (format!("starting pool…{waiting}{last}"), theme.warning);
        }
        PoolState::Failed(_) if app.notebook.book.cells.is_empty() => {
            return ("pool failed".to_string(), theme.error);
        }
        _ => {}
    }
    // Cells reloaded from an earlier run say nothing about this one; the
    // last settled cell does.
    let Some((outcome, duration)) = app
        .notebook
        .book
        .cells
        .iter()
        .skip(app.notebook.loaded_cells)
        .rev()
        .find_map(|c| c.outcome.map(|o| (o, c.duration)))
    else {
        return if queued > 0 {
            (format!("queued{queued_note}"), theme.warning)
        } else {
            ("ready".to_string(), theme.success)
        };
    };
    let took = duration.map(format_duration);
    let (text, style) = match (outcome, took) {
        (CellOutcome::Failed, Some(t)) => (format!("failed in {t}"), theme.error),
        (CellOutcome::Failed, None) => ("failed".to_string(), theme.error),
        (CellOutcome::Canceled, _) => ("canceled".to_string(), theme.warning),
        (CellOutcome::Succeeded, Some(t)) => (format!("done in {t}"), theme.success),
        (CellOutcome::Succeeded, None) => ("done".to_string(), theme.success),
        (CellOutcome::Unknown, _) => ("running when you quit".to_string(), theme.warning),
        (CellOutcome::NotRun, _) => (NOT_RUN.to_string(), theme.warning),
    };
    (format!("{text}{queued_note}"), style)
}

/// What a cell never run says: it was queued behind a cell that failed.
pub(crate) const NOT_RUN: &str = "not run: an earlier cell failed";

/// Draws the status line into `area` (one row), blanked first.
///
/// Layout, left to right: the pool, then [`NOT_ISOLATED`] when the local pool's
/// sessions are not isolated (right after the pool, so it is never cut off),
/// the identifier, the api-version, the run state and what isolates the
/// sessions when they are (`sandboxed · no network`); on the right a notice
/// (the Ctrl+C warning, or the app's one-off notice), else the session's idle
/// countdown. Parts are never drawn over each other: when the row is too
/// narrow, whole parts give way, the api-version first, then the countdown,
/// what isolates the sessions, the identifier and the run state; a notice gives way to nothing but the
/// pool and its warning (it is cut instead).
pub fn render(app: &App, now: Instant, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    crate::tui::widgets::line_prompt::clear_row(area, buf, theme);
    let (state, state_style) = run_state(app, now);
    // A pool that does not run Python says what it runs (`local shell`).
    let kind = match app.config.language {
        Language::Python => String::new(),
        other => format!(" {}", other.label().to_lowercase()),
    };
    let mut head = vec![Span::styled(
        format!(" {}{kind}", app.config.pool_label),
        theme.status_accent,
    )];
    if not_isolated(app) {
        head.push(Span::styled(
            format!(" {NOT_ISOLATED}"),
            theme.status.patch(theme.error),
        ));
    }
    let notice = if app.quit_armed_until.is_some_and(|t| now < t) {
        Some(QUIT_NOTICE.to_string())
    } else {
        app.notice
            .as_deref()
            .map(|n| format!(" {} ", sanitize::plain(n)))
    };
    // (rank, span): the lowest rank gives way first.
    let mut parts: Vec<(u8, Span<'static>)> = vec![
        (3, Span::styled(identifier_text(app), theme.status_accent)),
        (
            0,
            Span::styled(app.config.api_version.as_str(), theme.status),
        ),
        (4, Span::styled(state, theme.status.patch(state_style))),
    ];
    // Said, not left to be inferred from a missing warning (a demo's audience
    // should see it); on a narrow line it gives way before the identifier.
    if let Some(badge) = app
        .isolation
        .as_ref()
        .and_then(crate::protocol::Isolation::badge)
    {
        parts.push((2, Span::styled(badge, theme.status)));
    }
    let right = match notice {
        Some(text) => Some((
            u8::MAX,
            Span::styled(text, theme.status.patch(theme.warning)),
        )),
        None => crate::tui::sessions::view::countdown(&app.sessions, &app.theme, now).map(
            |(text, style)| {
                (
                    1,
                    Span::styled(format!(" {text} "), theme.status.patch(style)),
                )
            },
        ),
    };
    let mut right = right;
    let width = usize::from(area.width);
    let head_width: usize = head.iter().map(Span::width).sum();
    loop {
        let left: usize = head_width + parts.iter().map(|(_, p)| 3 + p.width()).sum::<usize>();
        let right_width = right.as_ref().map_or(0, |(_, r)| r.width() + 1);
        if left + right_width <= width {
            break;
        }
        let lowest_part = parts.iter().enumerate().min_by_key(|(_, (rank, _))| *rank);
        match (lowest_part, &right) {
            (Some((_, (rank, _))), Some((right_rank, _))) if right_rank < rank => right = None,
            (Some((i, _)), _) => {
                parts.remove(i);
            }
            (None, Some((rank, _))) if *rank < u8::MAX => right = None,
            (None, _) => break,
        }
    }
    let sep = Span::styled(" │ ", theme.status);
    let kept = u16::try_from(head_width).unwrap_or(u16::MAX);
    let mut left = Line::from(head);
    for (_, part) in parts {
        left.spans.push(sep.clone());
        left.spans.push(part);
    }
    buf.set_line(area.x, area.y, &left, area.width);
    if let Some((_, span)) = right {
        // The notice must be seen even when the pool and its warning fill the
        // line: they stay, and the notice is cut instead.
        let width = u16::try_from(span.width()).unwrap_or(u16::MAX);
        let floor = area.x.saturating_add(kept).min(area.right());
        let x = area.right().saturating_sub(width).max(floor);
        buf.set_span(x, area.y, &span, area.right() - x);
    }
}

/// The session identifier, and whether the notebook follows it: `(following)`
/// once the pool's event stream is open, `(follow: connecting)` before; while
/// a recorded session is shown read-only, that one, said so.
fn identifier_text(app: &App) -> String {
    let id = &app.config.identifier;
    if let Some(view) = &app.recorded.view {
        return format!(
            "recorded {} (read-only; cells run in {id})",
            sanitize::plain(&view.identifier)
        );
    }
    if !app.follow.following {
        return id.clone();
    }
    if app.follow.subscribed.as_deref() == Some(id.as_str()) {
        format!("{id} (following)")
    } else {
        format!("{id} (follow: connecting)")
    }
}

/// The status line's warning when the local pool's sessions are not isolated
/// (the pool info, `i` in the sessions pane, says why).
pub const NOT_ISOLATED: &str = "⚠ not isolated";

/// Whether the pool is a local pool known to run its sessions unsandboxed.
pub fn not_isolated(app: &App) -> bool {
    app.isolation.as_ref().is_some_and(|i| !i.is_sandboxed())
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
