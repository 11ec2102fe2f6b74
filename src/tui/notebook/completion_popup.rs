//! The list of completion candidates (issue 27 item 1): when the kernel
//! answers a Tab with several matches, a small bordered list opens near the
//! cursor over the notebook. Its state, its reducer ([`Popup::key`]) and its
//! view ([`render`]) are here; [`super::completion`] opens it and hands it the
//! keys while it is open.
//!
//! Keys: Down and Tab select the next candidate, Up and Shift+Tab the one
//! before (both wrap); Enter takes the selected one (it replaces the typed
//! part, `cursorStart..cursorEnd` of the kernel's answer); Esc closes the list
//! and nothing else (the editor keeps the keys). A letter, a digit or `_`
//! is typed into the cell and narrows the list to the candidates that start
//! with what is now typed, as IPython's list does; Backspace widens it again
//! (the list closes when nothing matches, or when Backspace goes before the
//! part the list replaces). Any other key closes it and then does what it
//! always does.
//!
//! Candidates come from the kernel, so they are untrusted: each is made one
//! safe line ([`fit::one_line`]: no escape sequence, no control character)
//! before it is kept, and the kept text is what is shown and inserted.

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};
use ratatui_textarea::{Input, Key};

use crate::tui::theme::Theme;
use crate::tui::widgets::fit;

/// The most rows of candidates the list shows at once; it scrolls beyond.
pub const ROWS: usize = 10;

/// The widest the list's text gets, in columns (longer candidates are cut
/// on screen with `…`; the whole text is inserted).
const WIDTH: usize = 48;

/// The open list: the candidates, the range of the cell they replace and
/// which one is selected.
#[derive(Debug, Clone, PartialEq)]
pub struct Popup {
    /// Every candidate the kernel gave, each made safe text, none empty.
    all: Vec<String>,
    /// The candidates shown: those of `all` that start with what is typed.
    items: Vec<String>,
    /// Code points `start..end` of the cell's source are what a taken
    /// candidate replaces (the kernel's `cursorStart`, and the cursor).
    start: usize,
    end: usize,
    /// The selected candidate's index.
    selected: usize,
    /// The first candidate shown (the list scrolls to keep the selection in
    /// its [`ROWS`]).
    top: usize,
}

/// What a key did to the open list.
#[derive(Debug, Clone, PartialEq)]
pub enum PopupKey {
    /// The selection moved; the list stays open.
    Moved,
    /// Enter: replace code points `start..end` with `text`; the list closes.
    Take {
        /// The first code point replaced.
        start: usize,
        /// One past the last code point replaced.
        end: usize,
        /// The candidate taken.
        text: String,
    },
    /// Esc: the list closes and the key does nothing else.
    Closed,
    /// A letter, a digit, `_` or Backspace: the caller types it into the
    /// cell, then calls [`Popup::narrow`] with what is typed.
    Type,
    /// Any other key: the list closes and the key acts as it always does.
    Pass,
}

impl Popup {
    /// A list of `candidates` (untrusted kernel text) replacing code points
    /// `start..end`; `None` when fewer than two are left once made safe.
    pub fn open(candidates: &[String], start: usize, end: usize) -> Option<Self> {
        let mut items: Vec<String> = Vec::with_capacity(candidates.len());
        for c in candidates {
            let safe = fit::one_line(c);
            if !safe.is_empty() && !items.contains(&safe) {
                items.push(safe);
            }
        }
        (items.len() >= 2).then_some(Self {
            all: items.clone(),
            items,
            start,
            end,
            selected: 0,
            top: 0,
        })
    }

    /// The candidates, as shown.
    pub fn items(&self) -> &[String] {
        &self.items
    }

    /// The selected candidate's index.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// The first candidate shown.
    pub fn top(&self) -> usize {
        self.top
    }

    /// The list's reducer: what key `input` does to it (see the module's
    /// keys). The caller closes the list on everything but [`PopupKey::Moved`].
    pub fn key(&mut self, input: &Input) -> PopupKey {
        if input.ctrl || input.alt {
            return PopupKey::Pass;
        }
        match input.key {
            Key::Down => self.step(true),
            Key::Up => self.step(false),
            Key::Tab => self.step(!input.shift),
            Key::Enter if !input.shift => PopupKey::Take {
                start: self.start,
                end: self.end,
                text: self.items[self.selected].clone(),
            },
            Key::Esc => PopupKey::Closed,
            Key::Char(c) if c.is_alphanumeric() || c == '_' => PopupKey::Type,
            Key::Backspace => PopupKey::Type,
            _ => PopupKey::Pass,
        }
    }

    /// The cell changed after a [`PopupKey::Type`]: `typed` is now the text
    /// from the replaced part's start to the cursor, at code point `cursor`
    /// of the cell. Keeps the candidates that start with `typed` (the
    /// selected one stays selected while it is kept) and returns `false`
    /// when the list should close: nothing matches, or the cursor went
    /// before the replaced part.
    pub fn narrow(&mut self, typed: &str, cursor: usize) -> bool {
        if cursor < self.start {
            return false;
        }
        let selected = self.items.get(self.selected).cloned();
        self.items = self
            .all
            .iter()
            .filter(|c| c.starts_with(typed))
            .cloned()
            .collect();
        self.end = cursor;
        self.selected = selected
            .and_then(|s| self.items.iter().position(|i| *i == s))
            .unwrap_or(0);
        self.top = self.top.min(self.selected);
        if self.selected >= self.top + ROWS {
            self.top = self.selected + 1 - ROWS;
        }
        !self.items.is_empty()
    }

    /// The first code point the list's candidates replace.
    pub fn start(&self) -> usize {
        self.start
    }

    /// Selects the next (or previous) candidate, wrapping at the ends, and
    /// scrolls so it is among the [`ROWS`] shown.
    fn step(&mut self, forward: bool) -> PopupKey {
        let n = self.items.len();
        self.selected = if forward {
            (self.selected + 1) % n
        } else {
            (self.selected + n - 1) % n
        };
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + ROWS {
            self.top = self.selected + 1 - ROWS;
        }
        PopupKey::Moved
    }
}

/// Draws `popup` over `area` (the notebook), next to the terminal cursor at
/// `cursor` (in the editor under the notebook): the list's bottom edge on
/// the notebook's last row, its left edge under the typed part, moved left
/// to fit. Titled with the count when there are more than it shows.
pub fn render(popup: &Popup, cursor: Position, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.width < 6 || area.height < 3 {
        return;
    }
    let text_width = popup
        .items
        .iter()
        .map(|i| fit::columns(i))
        .max()
        .unwrap_or(0)
        .min(WIDTH);
    let rows = popup
        .items
        .len()
        .min(ROWS)
        .min(usize::from(area.height - 2));
    let width = u16::try_from(text_width + 4)
        .unwrap_or(u16::MAX)
        .min(area.width);
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX);
    let typed = u16::try_from(popup.end.saturating_sub(popup.start)).unwrap_or(0);
    let left = cursor.x.saturating_sub(typed + 2).max(area.x);
    let x = left.min(area.right() - width);
    let rect = Rect {
        x,
        y: area.bottom() - height,
        width,
        height,
    };
    // The selection stays among the rows shown, also when fewer than ROWS fit.
    let top = popup
        .top
        .min(popup.selected)
        .max((popup.selected + 1).saturating_sub(rows));
    let inner = usize::from(width.saturating_sub(4));
    let lines: Vec<Line<'static>> = popup
        .items
        .iter()
        .enumerate()
        .skip(top)
        .take(rows)
        .map(|(i, item)| {
            let line = Line::from(Span::raw(format!(" {} ", fit::pad(item, inner))));
            if i == popup.selected {
                line.patch_style(theme.selection)
            } else {
                line
            }
        })
        .collect();
    let mut block = Block::bordered().border_style(theme.border_focused);
    if popup.items.len() > rows {
        block = block.title(Span::styled(
            format!(" {}/{} ", popup.selected + 1, popup.items.len()),
            theme.muted,
        ));
    }
    Clear.render(rect, buf);
    Paragraph::new(lines).block(block).render(rect, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("name{i:02}")).collect()
    }

    fn key(key: Key) -> Input {
        Input {
            key,
            ..Input::default()
        }
    }

    #[test]
    fn down_and_tab_move_on_up_and_shift_tab_back_wrapping() {
        let mut p = Popup::open(&names(3), 0, 0).unwrap();
        assert_eq!(p.key(&key(Key::Down)), PopupKey::Moved);
        assert_eq!(p.selected(), 1);
        assert_eq!(p.key(&key(Key::Tab)), PopupKey::Moved);
        assert_eq!(p.selected(), 2);
        p.key(&key(Key::Down));
        assert_eq!(p.selected(), 0, "wraps to the first");
        p.key(&key(Key::Up));
        assert_eq!(p.selected(), 2, "wraps to the last");
        let shift_tab = Input {
            key: Key::Tab,
            shift: true,
            ..Input::default()
        };
        p.key(&shift_tab);
        assert_eq!(p.selected(), 1);
    }

    #[test]
    fn the_list_scrolls_to_keep_the_selection_shown() {
        let mut p = Popup::open(&names(25), 0, 0).unwrap();
        for _ in 0..ROWS {
            p.key(&key(Key::Down));
        }
        assert_eq!((p.selected(), p.top()), (ROWS, 1));
        p.key(&key(Key::Up));
        assert_eq!(p.top(), 1, "still shown: no scroll");
        p.key(&key(Key::Down));
        p.key(&key(Key::Down));
        assert_eq!((p.selected(), p.top()), (ROWS + 1, 2));
        // Up from the first wraps to the last, shown at the bottom.
        let mut p = Popup::open(&names(25), 0, 0).unwrap();
        p.key(&key(Key::Up));
        assert_eq!((p.selected(), p.top()), (24, 24 + 1 - ROWS));
        p.key(&key(Key::Down));
        assert_eq!((p.selected(), p.top()), (0, 0));
    }

    #[test]
    fn enter_takes_the_selected_one_esc_closes_names_type_others_pass() {
        let mut p = Popup::open(&names(3), 4, 7).unwrap();
        p.key(&key(Key::Down));
        assert_eq!(
            p.key(&key(Key::Enter)),
            PopupKey::Take {
                start: 4,
                end: 7,
                text: "name01".to_string()
            }
        );
        assert_eq!(p.key(&key(Key::Esc)), PopupKey::Closed);
        assert_eq!(p.key(&key(Key::Char('x'))), PopupKey::Type);
        assert_eq!(p.key(&key(Key::Char('_'))), PopupKey::Type);
        assert_eq!(p.key(&key(Key::Backspace)), PopupKey::Type);
        assert_eq!(p.key(&key(Key::Char('('))), PopupKey::Pass);
        assert_eq!(p.key(&key(Key::Char(' '))), PopupKey::Pass);
        assert_eq!(p.key(&key(Key::F(5))), PopupKey::Pass);
        let ctrl_n = Input {
            key: Key::Char('n'),
            ctrl: true,
            ..Input::default()
        };
        assert_eq!(p.key(&ctrl_n), PopupKey::Pass);
    }

    #[test]
    fn candidates_are_made_safe_and_empty_or_repeated_ones_dropped() {
        let raw = vec![
            "getcwd".to_string(),
            "\x1b]52;c;ZXZpbA==\x07".to_string(),
            "get\x1b[2Jenv".to_string(),
            "getcwd".to_string(),
            "line\nbreak".to_string(),
        ];
        let p = Popup::open(&raw, 0, 0).unwrap();
        assert_eq!(p.items(), ["getcwd", "getenv", "line\u{fffd}break"]);
        for item in p.items() {
            assert!(!item.chars().any(char::is_control), "{item:?}");
        }
        assert_eq!(Popup::open(&["one".to_string()], 0, 0), None);
    }

    #[test]
    fn the_list_is_drawn_over_the_notebook_next_to_the_cursor() {
        let area = Rect::new(0, 0, 40, 8);
        let mut buf = Buffer::empty(Rect::new(0, 0, 40, 11));
        let mut p = Popup::open(&names(12), 10, 12).unwrap();
        p.key(&key(Key::Down));
        render(&p, Position::new(20, 9), area, &mut buf, &Theme::dark());
        let rows: Vec<String> = (0..11)
            .map(|y| {
                (0..40)
                    .map(|x| buf.cell((x, y)).map_or(" ", |c| c.symbol()))
                    .collect::<String>()
            })
            .collect();
        // 6 rows of candidates fit in the 8 rows; the list ends on row 7,
        // its left edge two columns left of the typed part.
        assert_eq!(rows[0].trim(), "┌ 2/12 ──┐");
        assert_eq!(rows[1].trim(), "│ name00 │");
        assert_eq!(rows[2].trim(), "│ name01 │");
        assert_eq!(rows[7].trim(), "└────────┘");
        assert_eq!(rows[1].find('│'), Some(16), "{:?}", rows[1]);
        assert_eq!(rows[8].trim(), "");
    }
}
