//! The help overlay (F1, or `?` in the notebook): a centred popup listing the keys
//! of every mode with what they do, made from the keymap itself so it never
//! drifts from the bindings (user overrides included). Keys with the same
//! description share a row. Wide screens get two columns; a description longer
//! than its column wraps at a word, its further lines under its first (never
//! cut); what does not fit scrolls. Its own keys (close, scroll) are the help
//! mode's, shown in its border.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};
use serde::Deserialize;

use crate::tui::keymap::{Keymap, Mode};
use crate::tui::theme::Theme;

/// The modes listed (the help mode's own keys are in the border).
const LISTED: [Mode; 5] = [
    Mode::Editor,
    Mode::Outputs,
    Mode::Files,
    Mode::Sessions,
    Mode::Pager,
];
/// The widest the popup gets.
const MAX_WIDTH: u16 = 150;
/// The narrowest column that makes two columns worth it.
const MIN_COLUMN: u16 = 46;
/// Columns between two columns.
const GAP: u16 = 2;
/// The widest key column; longer key lists get a line of their own.
const MAX_KEYS: usize = 22;
/// The line under the list, about changing keys.
const FOOTER: &str = "Change keys in the config file: [keys.editor] \"<C-r>\" = \"run_cell\"";

/// A help action (`run = "help open"` in the keymap; the older names `help`,
/// `close_help` and `help_scroll N` still parse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HelpAction {
    /// Show the keys (the app opens the overlay, at the top).
    Open,
    /// Close the overlay.
    Close,
    /// Scroll by this many lines (negative: up).
    Scroll(i32),
}

/// Whether the help stays open after an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelpOutcome {
    /// It stays open.
    Stay,
    /// It closed.
    Close,
}

/// The help overlay's state: its scroll position.
#[derive(Debug, Default)]
pub struct HelpView {
    scroll: usize,
}

impl HelpView {
    /// The help's reducer: scrolls, or says it closes.
    pub fn update(&mut self, action: HelpAction) -> HelpOutcome {
        match action {
            HelpAction::Close => return HelpOutcome::Close,
            HelpAction::Scroll(n) => self.scroll_by(n),
            HelpAction::Open => {}
        }
        HelpOutcome::Stay
    }

    /// Scrolls by `lines` (negative: up); the next draw clamps it to the end.
    pub fn scroll_by(&mut self, lines: i32) {
        let step = usize::try_from(lines.unsigned_abs()).unwrap_or(usize::MAX);
        self.scroll = if lines < 0 {
            self.scroll.saturating_sub(step)
        } else {
            self.scroll.saturating_add(step)
        };
    }
}

/// One mode's rows: keys (joined) and what they do.
struct Section {
    mode: Mode,
    rows: Vec<(String, String)>,
}

fn sections(keymap: &Keymap) -> Vec<Section> {
    LISTED
        .iter()
        .map(|&mode| {
            let mut rows: Vec<(String, String)> = Vec::new();
            for b in keymap.bindings(mode) {
                let key = b.key.to_string();
                match rows.iter_mut().find(|(_, desc)| *desc == b.desc) {
                    Some((keys, _)) => {
                        keys.push_str(", ");
                        keys.push_str(&key);
                    }
                    None => rows.push((key, b.desc.clone())),
                }
            }
            Section { mode, rows }
        })
        .filter(|s| !s.rows.is_empty())
        .collect()
}

/// The lines of `sections` in one column `width` columns wide: a heading per
/// mode, then a row per description with the keys in a column of their own and
/// the description wrapped to the rest of the width.
fn column_lines(sections: &[&Section], width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let keys_width = sections
        .iter()
        .flat_map(|s| s.rows.iter())
        .map(|(keys, _)| keys.chars().count())
        .filter(|&w| w <= MAX_KEYS)
        .max()
        .unwrap_or(0);
    let key_style = theme.accent.remove_modifier(Modifier::BOLD);
    let mut lines = Vec::new();
    for (n, section) in sections.iter().enumerate() {
        if n > 0 {
            lines.push(Line::default());
        }
        lines.push(Line::styled(section.mode.title(), theme.accent));
        let indent = keys_width + 4;
        let room = width.saturating_sub(indent).max(12);
        for (keys, desc) in &section.rows {
            let mut pieces = textwrap::wrap(desc, room).into_iter();
            let first = Span::raw(pieces.next().unwrap_or_default().into_owned());
            if keys.chars().count() > keys_width {
                lines.push(Line::from(Span::styled(format!("  {keys}"), key_style)));
                lines.push(Line::from(vec![Span::raw(" ".repeat(indent)), first]));
            } else {
                let keys = format!("  {keys:<keys_width$}  ");
                lines.push(Line::from(vec![Span::styled(keys, key_style), first]));
            }
            for piece in pieces {
                lines.push(Line::from(vec![
                    Span::raw(" ".repeat(indent)),
                    Span::raw(piece.into_owned()),
                ]));
            }
        }
    }
    lines
}

/// Splits the sections in two columns of about equal height: the first ones
/// left, the rest right.
fn split_columns<'a>(all: &'a [Section], width: u16, theme: &Theme) -> [Vec<&'a Section>; 2] {
    let heights: Vec<usize> = all
        .iter()
        .map(|s| column_lines(&[s], width, theme).len())
        .collect();
    let half = heights.iter().sum::<usize>().div_ceil(2);
    let mut left = Vec::new();
    let mut right = Vec::new();
    let mut left_height = 0;
    for (section, h) in all.iter().zip(heights) {
        if right.is_empty() && (left.is_empty() || left_height + h <= half) {
            left_height += h + 1;
            left.push(section);
        } else {
            right.push(section);
        }
    }
    [left, right]
}

/// The popup's width in `area`: a margin on both sides, at most [`MAX_WIDTH`].
fn popup_width(area: Rect) -> u16 {
    area.width
        .saturating_sub(4)
        .min(MAX_WIDTH)
        .max(area.width.min(20))
}

/// The popup's area: centred in `area`, as tall as its content allows.
fn popup_area(area: Rect, content_rows: usize) -> Rect {
    let width = popup_width(area);
    // Borders and the footer line.
    let wanted = u16::try_from(content_rows + 3).unwrap_or(u16::MAX);
    let height = wanted
        .min(area.height.saturating_sub(2))
        .max(area.height.min(5));
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

/// The width of a column of the popup in `area` and the lines of each column
/// (one or two).
fn laid_out(area: Rect, keymap: &Keymap, theme: &Theme) -> (u16, Vec<Vec<Line<'static>>>) {
    let all = sections(keymap);
    let inner_width = popup_width(area).saturating_sub(2);
    let two = inner_width >= 2 * MIN_COLUMN + GAP;
    let column_width = if two {
        inner_width.saturating_sub(GAP) / 2
    } else {
        inner_width
    };
    let columns = if two {
        split_columns(&all, column_width, theme)
            .iter()
            .map(|c| column_lines(c, column_width, theme))
            .collect()
    } else {
        vec![column_lines(
            &all.iter().collect::<Vec<_>>(),
            column_width,
            theme,
        )]
    };
    (column_width, columns)
}

/// Draws the help overlay over `area`.
pub fn render(area: Rect, buf: &mut Buffer, keymap: &Keymap, view: &mut HelpView, theme: &Theme) {
    let (column_width, columns) = laid_out(area, keymap, theme);
    let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
    let popup = popup_area(area, rows);
    Clear.render(popup, buf);
    let close = keymap.hint_line(Mode::Help, usize::from(popup.width.saturating_sub(4)));
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border_focused)
        .title(Line::styled(" Keys ", theme.accent));
    if !close.is_empty() {
        block = block.title_bottom(Line::styled(format!(" {close} "), theme.muted).right_aligned());
    }
    let inner = block.inner(popup);
    block.render(popup, buf);
    if inner.height < 2 || inner.width == 0 {
        return;
    }
    let visible = usize::from(inner.height - 1);
    view.scroll = view.scroll.min(rows.saturating_sub(visible));
    if rows > visible {
        let shown = format!(
            " {}-{} of {} ",
            view.scroll + 1,
            (view.scroll + visible).min(rows),
            rows
        );
        let line = Line::styled(shown, theme.muted);
        let width = u16::try_from(line.width()).unwrap_or(u16::MAX);
        let x = popup.right().saturating_sub(width + 1).max(popup.x);
        buf.set_line(x, popup.y, &line, popup.right() - x);
    }
    for (n, lines) in columns.iter().enumerate() {
        let x = inner.x + u16::try_from(n).unwrap_or(0) * (column_width + GAP);
        for (line, y) in lines
            .iter()
            .skip(view.scroll)
            .zip(inner.y..inner.bottom() - 1)
        {
            buf.set_line(x, y, line, column_width);
        }
    }
    buf.set_line(
        inner.x,
        inner.bottom() - 1,
        &Line::styled(FOOTER, theme.muted),
        inner.width,
    );
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use insta::assert_snapshot;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::style::Color;

    use super::*;
    use crate::tui::action::Action;
    use crate::tui::app::{App, AppConfig, PoolState};
    use crate::tui::keymap::KeyOverrides;
    use crate::tui::notebook::NotebookAction;

    fn app() -> App {
        let mut app = App::new(
            AppConfig {
                pool_label: "local".into(),
                identifier: "sessionpad-0badc0de".into(),
                api_version: crate::protocol::ApiVersion::V2025_10_02,
                language: crate::notebook::language::Language::Python,
            },
            PoolState::Ready,
        );
        app.update(Action::Paste("print('hi')".into()), Instant::now());
        app.update(
            Action::Notebook(NotebookAction::FocusOutputs),
            Instant::now(),
        );
        app.update(
            Action::Help(crate::tui::help::HelpAction::Open),
            Instant::now(),
        );
        app
    }

    fn screen(app: &mut App, width: u16, height: u16) -> TestBackend {
        let mut terminal = match Terminal::new(TestBackend::new(width, height)) {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        if let Err(e) = terminal.draw(|f| crate::tui::app::view::draw(f, app, Instant::now())) {
            panic!("{e}");
        }
        terminal.backend().clone()
    }

    #[test]
    fn help_overlay_80x24() {
        assert_snapshot!(screen(&mut app(), 80, 24));
    }

    #[test]
    fn help_overlay_160x48() {
        assert_snapshot!(screen(&mut app(), 160, 48));
    }

    #[test]
    fn help_overlay_scrolls_to_its_end_and_no_further() {
        let mut app = app();
        app.update(
            Action::Help(crate::tui::help::HelpAction::Scroll(1000)),
            Instant::now(),
        );
        let text = format!("{:?}", screen(&mut app, 80, 24));
        assert!(text.contains("Go to the end"), "{text}");
        assert!(text.contains(" of "), "{text}");
        app.update(
            Action::Help(crate::tui::help::HelpAction::Scroll(-1)),
            Instant::now(),
        );
        let up = format!("{:?}", screen(&mut app, 80, 24));
        assert_ne!(up, text);
        app.update(
            Action::Help(crate::tui::help::HelpAction::Close),
            Instant::now(),
        );
        let closed = format!("{:?}", screen(&mut app, 80, 24));
        assert!(!closed.contains(" Keys "), "{closed}");
    }

    #[test]
    fn every_description_reads_whole_at_80_and_160_columns() {
        let keymap = Keymap::default();
        let theme = Theme::dark();
        let squeeze = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        for (width, height) in [(80, 24), (160, 48)] {
            let (column_width, columns) = laid_out(Rect::new(0, 0, width, height), &keymap, &theme);
            let mut text = String::new();
            for line in columns.iter().flatten() {
                assert!(
                    line.width() <= usize::from(column_width),
                    "{width} columns: {line:?} is wider than its column ({column_width})"
                );
                text.push(' ');
                text.push_str(&line.to_string());
            }
            let text = squeeze(&text);
            for mode in LISTED {
                for b in keymap.bindings(mode) {
                    assert!(
                        text.contains(&squeeze(&b.desc)),
                        "{width} columns: {:?} is not whole in:\n{text}",
                        b.desc
                    );
                }
            }
        }
    }

    #[test]
    fn the_help_shows_the_user_s_keys() {
        let mut app = app();
        let overrides: KeyOverrides = match toml::from_str(
            "[editor]\n\"<C-r>\" = { run = \"run_cell\", desc = \"Run it my way\" }\n",
        ) {
            Ok(o) => o,
            Err(e) => panic!("{e}"),
        };
        app.keymap = match Keymap::with_overrides(&overrides) {
            Ok(k) => k,
            Err(e) => panic!("{e:?}"),
        };
        let text = format!("{:?}", screen(&mut app, 160, 48));
        assert!(
            text.contains("Ctrl+R  ") && text.contains("Run it my way"),
            "{text}"
        );
    }

    #[test]
    fn no_color_draws_without_colours() {
        let mut app = app();
        app.theme = match Theme::named("dark", true) {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        let backend = screen(&mut app, 160, 48);
        let buffer = backend.buffer();
        let coloured = buffer
            .content()
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count();
        assert_eq!(coloured, 0);
        let bold = buffer
            .content()
            .iter()
            .filter(|c| c.modifier.contains(Modifier::BOLD))
            .count();
        assert!(bold > 0);
    }
}
