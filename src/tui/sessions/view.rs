//! What the sessions pane draws around its lists: the selected session's
//! details under them, the pool's metadata in a scrollable popup (with the
//! isolation of a local pool's sessions first), the sessions prompts and
//! the idle countdown of the current session on the status line (a warning in
//! its last minute).

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::protocol::Isolation;
use crate::protocol::PoolMetadata;
use crate::tui::keymap::Keymap;
use crate::tui::sessions::SessionsUi;
use crate::tui::sessions::pane::{self, SessionRow};
use crate::tui::theme::Theme;
use crate::tui::widgets::fit;

/// Seconds before the idle expiry from which the status line warns.
pub const WARN_SECS: i64 = 60;
/// Rows of the details box under the lists.
const DETAILS_ROWS: u16 = 5;

/// Draws the sessions pane in `area`: the lists and the details of the
/// selected row (the pool info is drawn over the notebook by
/// [`render_pool_info_over`]).
/// `focused`: the pane has the keys.
pub fn render(s: &mut SessionsUi, focused: bool, theme: &Theme, area: Rect, buf: &mut Buffer) {
    Clear.render(area, buf);
    s.pane.focused = focused;
    let (lists, details) = if area.height > DETAILS_ROWS + 10 {
        let [l, d] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(DETAILS_ROWS)]).areas(area);
        (l, Some(d))
    } else {
        (area, None)
    };
    pane::render(lists, buf, &s.pane, theme);
    if let Some(d) = details {
        render_details(s, theme, d, buf);
    }
}

/// What the pool info popup reads besides the pane's state.
pub struct PoolInfoView<'a> {
    /// The keys (the popup names those that close and scroll it).
    pub keymap: &'a Keymap,
    /// What the app learnt at start of a local pool's isolation, if anything.
    pub isolation: Option<&'a Isolation>,
    /// The palette.
    pub theme: &'a Theme,
}

/// The pool info popup, while open, over `area` (the whole notebook area, so
/// its long lines and package list get the room the pane lacks).
pub fn render_pool_info_over(
    s: &mut SessionsUi,
    cx: &PoolInfoView<'_>,
    area: Rect,
    buf: &mut Buffer,
) {
    let keys = PopupKeys::from_keymap(cx.keymap);
    // An Azure pool's card from ARM first, "N of max alive" counting the
    // sessions listed.
    let alive = match &s.pane.pool_list {
        pane::PoolList::Loaded(list) => Some(list.len()),
        _ => None,
    };
    let card = match &s.pane.card {
        Some(Ok(card)) => card.card(alive),
        Some(Err(why)) => vec![("pool card".to_string(), why.clone())],
        None => Vec::new(),
    };
    if let Some(info) = &s.pool_info {
        render_pool_info(
            info,
            (cx.isolation, &card),
            &mut s.pool_info_scroll,
            &keys,
            area,
            buf,
            cx.theme,
        );
    }
}

/// The keys the pool info popup names in its border, as the keymap binds them
/// (the sessions pane's keys, which the popup takes while it is open).
struct PopupKeys {
    /// What closes it.
    close: String,
    /// What scrolls it: line and page keys.
    scroll: String,
}

impl PopupKeys {
    fn from_keymap(keymap: &crate::tui::keymap::Keymap) -> Self {
        use crate::tui::action::Action;
        use crate::tui::keymap::Mode;
        use crate::tui::sessions::SessionsAction;
        let key = |a: SessionsAction| keymap.key_for(&Action::Sessions(a), &[Mode::Sessions]);
        let pair = |a, b| match (key(a), key(b)) {
            (Some(a), Some(b)) => Some(format!("{a}/{b}")),
            (Some(one), None) | (None, Some(one)) => Some(one),
            (None, None) => None,
        };
        let scroll = [
            pair(SessionsAction::Down, SessionsAction::Up),
            pair(SessionsAction::PageDown, SessionsAction::PageUp),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
        Self {
            close: key(SessionsAction::Back).unwrap_or_else(|| "Esc".into()),
            scroll,
        }
    }
}

fn render_details(s: &SessionsUi, theme: &Theme, area: Rect, buf: &mut Buffer) {
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
        SessionRow::Recorded(recorded) => {
            let lines = super::history::details(&s.pane, recorded, theme);
            Paragraph::new(lines).render(inner, buf);
            return;
        }
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

/// The pool info popup over `area`: the isolation of a local pool's sessions
/// (the metadata's, else `known`, what the app learnt at start), then the
/// metadata (or why there is none), every line wrapped to the popup's width.
/// It scrolls: `scroll` is the first line shown, clamped here to the last
/// page, and the border says which lines are shown.
fn render_pool_info(
    info: &Result<PoolMetadata, String>,
    (known, card): (Option<&Isolation>, &[(String, String)]),
    scroll: &mut usize,
    keys: &PopupKeys,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let width = area.width.saturating_sub(2);
    let text_width = usize::from(width.saturating_sub(2).max(1));
    let mut lines = card_lines(card, text_width, theme);
    lines.extend(pool_info_lines(info, known, text_width, theme));
    let popup = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width,
        height: u16::try_from(lines.len() + 2)
            .unwrap_or(u16::MAX)
            .min(area.height.saturating_sub(2)),
    };
    Clear.render(popup, buf);
    let visible = usize::from(popup.height.saturating_sub(2));
    *scroll = (*scroll).min(lines.len().saturating_sub(visible));
    let mut block = Block::bordered()
        .border_style(theme.border_focused)
        .title(Span::styled(
            format!(" Pool info ({} closes) ", keys.close),
            theme.accent,
        ));
    if lines.len() > visible {
        let shown = format!(
            " {}-{} of {} · {} scroll ",
            *scroll + 1,
            (*scroll + visible).min(lines.len()),
            lines.len(),
            keys.scroll
        );
        block = block.title_top(Line::styled(shown, theme.muted).right_aligned());
    }
    let inner = block.inner(popup);
    block.render(popup, buf);
    for (line, y) in lines.iter().skip(*scroll).zip(inner.top()..inner.bottom()) {
        buf.set_line(inner.x, y, line, inner.width);
    }
}

/// An Azure pool's card (`(label, value)` lines, `SessionPoolResource::card`)
/// as label and value columns wrapped to `width`, and a blank line after it;
/// nothing for other pools.
fn card_lines(card: &[(String, String)], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    if card.is_empty() {
        return Vec::new();
    }
    let label_width = label_width(card).max(MIN_LABEL);
    let mut lines = vec![Line::styled("Session pool (ARM)", theme.accent)];
    for (label, value) in card {
        lines.extend(labelled(
            label,
            label_width,
            value,
            Style::default(),
            width,
            theme,
        ));
    }
    lines.push(Line::default());
    lines
}

/// Every line of the pool info, wrapped to `width` columns: the isolation
/// ([`isolation_lines`]), then [`pool_lines`].
fn pool_info_lines(
    info: &Result<PoolMetadata, String>,
    known: Option<&Isolation>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let isolation = info
        .as_ref()
        .ok()
        .and_then(|m| m.isolation.as_ref())
        .or(known);
    // One label column for both parts.
    let label_width = isolation
        .map_or(0, |i| label_width(&i.lines()))
        .max(MIN_LABEL);
    let mut lines =
        isolation.map_or_else(Vec::new, |i| isolation_lines(i, label_width, width, theme));
    match info {
        Err(e) => lines.extend(
            textwrap::wrap(&fit::one_line(e), width.max(1))
                .into_iter()
                .map(|l| Line::styled(l.into_owned(), theme.muted)),
        ),
        Ok(meta) => lines.extend(pool_lines(meta, label_width, width, theme)),
    }
    lines
}

/// `label value` rows with the labels in a column of `label_width` and each
/// value wrapped to the rest of `width`, its further lines under the first.
fn labelled(
    label: &str,
    label_width: usize,
    value: &str,
    style: Style,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let room = width.saturating_sub(label_width + 1).max(8);
    let label = fit::one_line(label);
    textwrap::wrap(&fit::one_line(value), room)
        .into_iter()
        .enumerate()
        .map(|(i, piece)| {
            let head = if i == 0 { label.as_str() } else { "" };
            Line::from(vec![
                Span::styled(fit::pad(head, label_width + 1), theme.muted),
                Span::styled(piece.into_owned(), style),
            ])
        })
        .collect()
}

/// Narrowest label column of the pool info (`runtime`, `kernel`).
const MIN_LABEL: usize = 7;

/// The widest label of `pairs`, in columns.
fn label_width(pairs: &[(String, String)]) -> usize {
    pairs
        .iter()
        .map(|(l, _)| fit::columns(&fit::one_line(l)))
        .max()
        .unwrap_or(0)
}

/// [`Isolation::lines`] as label and value columns (labels `label_width`
/// wide), wrapped to `width`: the sandbox (in the error colour when sessions
/// are not isolated), each limit with its mechanism, then the notes (the user
/// id sessions run as, seccomp, files, network).
pub fn isolation_lines(
    isolation: &Isolation,
    label_width: usize,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    isolation
        .lines()
        .into_iter()
        .enumerate()
        .flat_map(|(i, (label, value))| {
            let style = if i == 0 && !isolation.is_sandboxed() {
                theme.error
            } else {
                Style::default()
            };
            labelled(&label, label_width, &value, style, width, theme)
        })
        .collect()
}

/// The version of package `name` in `meta`, if listed.
fn package_version<'a>(meta: &'a PoolMetadata, name: &str) -> Option<&'a str> {
    meta.packages
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
        .map(|p| p.version.as_str())
}

/// The metadata's lines, wrapped to `width`: the kernel (with the IPython it
/// runs, when the packages say), its project, the runtimes, when the image was
/// made, then every package, laid out in as many aligned columns as fit.
fn pool_lines(
    meta: &PoolMetadata,
    label: usize,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let pair = |n: &str, v: &str| fit::one_line(format!("{n} {v}").trim());
    let plain = Style::default();
    let mut lines = Vec::new();
    if let Some(k) = &meta.kernel {
        let mut text = pair(&k.name, &k.version);
        if k.name.eq_ignore_ascii_case("ipykernel")
            && let Some(v) = package_version(meta, "ipython")
        {
            text.push_str(&format!(" (IPython {})", fit::one_line(v)));
        }
        lines.extend(labelled("kernel", label, &text, plain, width, theme));
        if let Some(url) = &k.project_url {
            lines.extend(labelled("", label, url, theme.muted, width, theme));
        }
    }
    for l in &meta.service_limits {
        let text = format!("{}: {} (source: {})", l.what, l.value, l.source);
        lines.extend(labelled("azure", label, &text, plain, width, theme));
    }
    for r in &meta.runtimes {
        lines.extend(labelled(
            "runtime",
            label,
            &pair(&r.name, &r.version),
            plain,
            width,
            theme,
        ));
    }
    let when = meta
        .updated
        .or(meta.created)
        .map(|t| format!("updated {}", t.format("%Y-%m-%d %H:%M UTC")));
    // A local pool names its image (`sessionpadImage`); Azure's do not.
    let image = match (meta.image, when) {
        (Some(i), Some(w)) => Some(format!("{i}, {w}")),
        (Some(i), None) => Some(i.to_string()),
        (None, w) => w,
    };
    if let Some(text) = image {
        lines.extend(labelled("image", label, &text, plain, width, theme));
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
    let column = packages
        .iter()
        .map(|p| fit::columns(p))
        .max()
        .unwrap_or(1)
        .min(width.max(1));
    let per_line = ((width + 2) / (column + 2)).max(1);
    for chunk in packages.chunks(per_line) {
        let cells: Vec<String> = chunk.iter().map(|p| fit::pad(p, column)).collect();
        lines.push(Line::raw(cells.join("  ").trim_end().to_string()));
    }
    lines
}

/// The idle countdown of the current session for the status line, with its
/// style: `idle ends in 4 min`, a warning under a minute, an error once
/// expired; `None` when the pool does not say when.
pub fn countdown(
    s: &SessionsUi,
    theme: &Theme,
    now: Instant,
) -> Option<(String, ratatui::style::Style)> {
    let left = s.expires_in(now)?;
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

#[cfg(test)]
mod popup_keys_tests {
    use super::PopupKeys;
    use crate::tui::keymap::{KeyOverrides, Keymap};

    #[test]
    fn the_pool_info_names_the_keys_as_bound() {
        let keys = PopupKeys::from_keymap(&Keymap::default());
        assert_eq!(
            (keys.close.as_str(), keys.scroll.as_str()),
            ("Esc", "j/k PgDn/PgUp")
        );
        let overrides: KeyOverrides = toml::from_str(
            r#"
            [sessions]
            "n" = "sessions down"
            "j" = "none"
            "<Down>" = "none"
            "#,
        )
        .expect("overrides");
        let keymap = Keymap::with_overrides(&overrides).expect("a keymap");
        let keys = PopupKeys::from_keymap(&keymap);
        assert!(keys.scroll.starts_with("n/k "), "{}", keys.scroll);
    }
}
