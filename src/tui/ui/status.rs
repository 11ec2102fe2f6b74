//! The status line: where cells run (pool, session identifier, api-version) and
//! how the last run went; on the right, the Ctrl+C notice when one is pending,
//! else the app's one-off notice (such as why `$EDITOR` failed).
//! (Key hints live in the editor's title, which has a stable width.)

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::format_duration;
use super::sanitize;
use crate::notebook::CellStatus;
use crate::tui::app::{App, PoolState};

/// Shown after a first Ctrl+C.
const QUIT_NOTICE: &str = " press Ctrl+C again to quit ";

/// The state of the last run (or of the pool before any), with its style.
pub fn run_state(app: &App, now: Instant) -> (String, Style) {
    let theme = &app.theme;
    let queued = app
        .pending()
        .saturating_sub(usize::from(app.running.is_some()));
    let queued_note = if queued > 0 {
        format!(" · {queued} queued")
    } else {
        String::new()
    };
    if let Some((_, since)) = app.running {
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
        PoolState::Failed(_) if app.notebook.cells.is_empty() => {
            return ("pool failed".to_string(), theme.error);
        }
        _ => {}
    }
    // Cells reloaded from an earlier run say nothing about this one.
    let Some(last) = app
        .notebook
        .cells
        .iter()
        .skip(app.loaded_cells)
        .rev()
        .find(|c| !c.status.is_pending())
    else {
        return if queued > 0 {
            (format!("queued{queued_note}"), theme.warning)
        } else {
            ("ready".to_string(), theme.success)
        };
    };
    let took = last.duration.map(format_duration);
    let (text, style) = match (last.status, took) {
        (CellStatus::Failed, Some(t)) => (format!("failed in {t}"), theme.error),
        (CellStatus::Failed, None) => ("failed".to_string(), theme.error),
        (CellStatus::Canceled, _) => ("canceled".to_string(), theme.warning),
        (_, Some(t)) => (format!("done in {t}"), theme.success),
        (_, None) => ("done".to_string(), theme.success),
    };
    (format!("{text}{queued_note}"), style)
}

/// Draws the status line into `area` (one row).
pub fn render(app: &App, now: Instant, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    buf.set_style(area, theme.status);
    let sep = Span::styled(" │ ", theme.status);
    let (state, state_style) = run_state(app, now);
    let left = Line::from(vec![
        Span::styled(format!(" {}", app.config.pool_label), theme.status_accent),
        sep.clone(),
        Span::styled(app.config.identifier.clone(), theme.status_accent),
        sep.clone(),
        Span::styled(app.config.api_version.as_str(), theme.status),
        sep,
        Span::styled(state, theme.status.patch(state_style)),
    ]);
    buf.set_line(area.x, area.y, &left, area.width);
    let notice = if app.quit_armed_until.is_some_and(|t| now < t) {
        Some(QUIT_NOTICE.to_string())
    } else {
        app.notice
            .as_deref()
            .map(|n| format!(" {} ", sanitize::plain(n)))
    };
    if let Some(notice) = notice {
        // The notice must be seen even when the left part fills the line.
        let notice = Span::styled(notice, theme.status.patch(theme.warning));
        let width = u16::try_from(notice.width()).unwrap_or(u16::MAX);
        let x = area.right().saturating_sub(width).max(area.x);
        buf.set_span(x, area.y, &notice, area.right() - x);
    }
}
