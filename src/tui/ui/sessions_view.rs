//! What the sessions pane draws around its lists: the selected session's
//! details under them, the pool's metadata in a popup (with the isolation of a
//! local pool's sessions first), the sessions prompts and
//! the idle countdown of the current session on the status line (a warning in
//! its last minute).

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use super::fit;
use super::prompt::render_question;
use super::sessions_pane::{self, SessionRow};
use crate::client::PoolMetadata;
use crate::pool::Isolation;
use crate::tui::app::App;
use crate::tui::sessions_state::SessionsPrompt;
use crate::tui::theme::Theme;

/// Seconds before the idle expiry from which the status line warns.
pub const WARN_SECS: i64 = 60;
/// Rows of the details box under the lists.
const DETAILS_ROWS: u16 = 5;

/// Draws the sessions pane in `area`: the lists, the details of the selected
/// row, and the pool's metadata over them when asked for.
pub fn render(app: &mut App, area: Rect, buf: &mut Buffer) {
    Clear.render(area, buf);
    let s = &mut app.sessions;
    s.pane.focused = s.focused;
    let (lists, details) = if area.height > DETAILS_ROWS + 6 {
        let [l, d] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(DETAILS_ROWS)]).areas(area);
        (l, Some(d))
    } else {
        (area, None)
    };
    sessions_pane::render(lists, buf, &s.pane, &app.theme);
    if let Some(d) = details {
        render_details(app, d, buf);
    }
    if let Some(info) = &app.sessions.pool_info {
        render_pool_info(info, app.isolation.as_ref(), area, buf, &app.theme);
    }
}

fn render_details(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    let s = &app.sessions;
    let block = Block::bordered()
        .border_style(theme.border)
        .title(Span::styled(" Details ", theme.accent));
    let inner = block.inner(area);
    block.render(area, buf);
    let Some(row) = s.pane.selected_row() else {
        return;
    };
    let id = row.identifier().to_string();
    let info = match row {
        SessionRow::Pool(info) => Some(info.clone()),
        SessionRow::Local(_) => s.pane.pool_info(&id).cloned().or_else(|| {
            s.current
                .as_ref()
                .filter(|c| c.info.identifier == id)
                .map(|c| c.info.clone())
        }),
    };
    let when = |t: Option<chrono::DateTime<chrono::Utc>>| {
        t.map_or_else(
            || "—".to_string(),
            |t| fit::short_time(t, s.pane.now, s.pane.tz),
        )
    };
    let mut lines = vec![Line::styled(fit::one_line(&id), theme.accent)];
    match info {
        Some(info) => {
            lines.push(Line::raw(format!(
                "created {} · last used {}",
                when(info.created),
                when(info.last_accessed)
            )));
            let expiry = info
                .expires
                .map_or_else(|| "—".into(), |e| fit::countdown(e, s.pane.now));
            lines.push(Line::raw(format!("idle expiry: {expiry}")));
        }
        None => lines.push(Line::styled(
            "no details from the pool (Enter switches to it)",
            theme.muted,
        )),
    }
    Paragraph::new(lines).render(inner, buf);
}

/// The pool info popup: the isolation of a local pool's sessions (the
/// metadata's, else `known`, what the app learnt at start), then the metadata
/// (or why there is none).
fn render_pool_info(
    info: &Result<PoolMetadata, String>,
    known: Option<&Isolation>,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let isolation = info
        .as_ref()
        .ok()
        .and_then(|m| m.isolation.as_ref())
        .or(known);
    let mut lines = isolation.map_or_else(Vec::new, |i| isolation_lines(i, theme));
    match info {
        Err(e) => lines.push(Line::styled(fit::one_line(e), theme.muted)),
        Ok(meta) => lines.extend(pool_lines(meta, theme)),
    }
    let width = area.width.saturating_sub(2);
    // Rows the wrapped text needs, and the border.
    let text_width = usize::from(width.saturating_sub(2).max(1));
    let needed: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(text_width).max(1))
        .sum();
    let popup = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width,
        height: u16::try_from(needed + 2)
            .unwrap_or(u16::MAX)
            .min(area.height.saturating_sub(2)),
    };
    Clear.render(popup, buf);
    let block = Block::bordered()
        .border_style(theme.border_focused)
        .title(Span::styled(" Pool info (Esc closes) ", theme.accent));
    Paragraph::new(lines)
        .block(block)
        .wrap(Wrap { trim: false })
        .render(popup, buf);
}

/// [`Isolation::lines`] as label and value columns; the sandbox line of
/// sessions that are not isolated in the error colour.
pub fn isolation_lines(isolation: &Isolation, theme: &Theme) -> Vec<Line<'static>> {
    let pairs = isolation.lines();
    let width = pairs
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    pairs
        .into_iter()
        .enumerate()
        .map(|(i, (label, value))| {
            let style = if i == 0 && !isolation.is_sandboxed() {
                theme.error
            } else {
                ratatui::style::Style::default()
            };
            Line::from(vec![
                Span::styled(format!("{:<width$} ", fit::one_line(&label)), theme.muted),
                Span::styled(fit::one_line(&value), style),
            ])
        })
        .collect()
}

fn pool_lines(meta: &PoolMetadata, theme: &Theme) -> Vec<Line<'static>> {
    let pair = |n: &str, v: &str| fit::one_line(format!("{n} {v}").trim());
    let mut lines = Vec::new();
    if let Some(k) = &meta.kernel {
        lines.push(Line::from(vec![
            Span::styled("kernel  ", theme.muted),
            Span::raw(pair(&k.name, &k.version)),
        ]));
    }
    for r in &meta.runtimes {
        lines.push(Line::from(vec![
            Span::styled("runtime ", theme.muted),
            Span::raw(pair(&r.name, &r.version)),
        ]));
    }
    lines.push(Line::styled(
        format!("{} packages:", meta.packages.len()),
        theme.muted,
    ));
    let packages: Vec<String> = meta
        .packages
        .iter()
        .map(|p| pair(&p.name, &p.version))
        .collect();
    lines.push(Line::raw(packages.join(" · ")));
    lines
}

/// The sessions prompts over the status line, if one is open (the idle
/// countdown is part of the status line itself, [`countdown`]).
pub fn render_status(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = &app.theme;
    match &app.sessions.prompt {
        Some(SessionsPrompt::New(p) | SessionsPrompt::Attach(p)) => {
            p.render(area, buf, theme);
        }
        Some(SessionsPrompt::End(id)) => {
            let q = format!(
                "End session {}? Its state and files are lost.",
                fit::one_line(id)
            );
            render_question(&q, "y/N", area, buf, theme);
        }
        Some(SessionsPrompt::Replay(sources)) => {
            let q = format!(
                "Fresh session: run the {} earlier cells again?",
                sources.len()
            );
            render_question(&q, "y/N", area, buf, theme);
        }
        None => {}
    }
}

/// The idle countdown of the current session for the status line, with its
/// style: `idle ends in 4 min`, a warning under a minute, an error once
/// expired; `None` when the pool does not say when.
pub fn countdown(app: &App, now: Instant) -> Option<(String, ratatui::style::Style)> {
    let left = app.sessions.expires_in(now)?;
    let theme = &app.theme;
    Some(if left <= 0 {
        ("session idle-expired".to_string(), theme.error)
    } else if left < WARN_SECS {
        (format!("idle ends in {left} s"), theme.warning)
    } else {
        (
            format!("idle ends in {} min", left.div_euclid(60)),
            theme.muted,
        )
    })
}
