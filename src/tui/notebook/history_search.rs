//! The history search (Ctrl+R): a popup listing earlier cells, newest first,
//! each source once, filtered as you type (every word of the query must appear,
//! case ignored). Enter brings the chosen cell into the editor for editing, where
//! running it appends a new cell; the notebook's record is never rewritten.
//!
//! While it is open every key comes here (`Action::Edit`): Up/Down (or Ctrl+P,
//! Ctrl+N, and Ctrl+R again for an older one) move in the list, PgUp/PgDn by a
//! page, Enter takes, Esc (Ctrl+C, Ctrl+G) closes, other keys edit the query.

use std::collections::HashSet;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};
use ratatui_textarea::{Input, Key};

use crate::notebook::Cell;
use crate::tui::theme::Theme;
use crate::tui::widgets::line_prompt::{LinePrompt, PromptKey};
use crate::tui::widgets::sanitize;

/// Rows a page key moves.
const PAGE: usize = 10;
/// Widest the popup gets.
const MAX_WIDTH: u16 = 100;

/// What a key did to the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchKey {
    /// Still searching.
    Searching,
    /// Enter on this cell (its index in the notebook).
    Take(usize),
    /// Closed without choosing.
    Cancel,
}

/// The query, the cells that match it and the highlighted one.
#[derive(Debug)]
pub struct HistorySearch {
    query: LinePrompt,
    /// Indexes of matching cells, newest first, one per distinct source.
    matches: Vec<usize>,
    /// Position in `matches`.
    selected: usize,
    /// First row of the list on screen.
    top: usize,
}

impl HistorySearch {
    /// A search over `cells` with an empty query (every distinct cell).
    pub fn new(cells: &[Cell]) -> Self {
        let mut search = Self {
            query: LinePrompt::new("search:", ""),
            matches: Vec::new(),
            selected: 0,
            top: 0,
        };
        search.refilter(cells);
        search
    }

    /// The cells matching the query, newest first.
    pub fn matches(&self) -> &[usize] {
        &self.matches
    }

    /// The cell highlighted now.
    pub fn selected(&self) -> Option<usize> {
        self.matches.get(self.selected).copied()
    }

    fn refilter(&mut self, cells: &[Cell]) {
        let words: Vec<String> = self
            .query
            .text()
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let mut seen = HashSet::new();
        self.matches = cells
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, c)| !c.source.trim().is_empty() && seen.insert(c.source.as_str()))
            .filter(|(_, c)| {
                let source = c.source.to_lowercase();
                words.iter().all(|w| source.contains(w.as_str()))
            })
            .map(|(i, _)| i)
            .collect();
        self.selected = 0;
        self.top = 0;
    }

    fn move_by(&mut self, delta: isize) {
        let last = self.matches.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// Takes one key; `cells` is the notebook the search runs over.
    pub fn key(&mut self, input: Input, cells: &[Cell]) -> SearchKey {
        let page = isize::try_from(PAGE).unwrap_or(1);
        match input.key {
            Key::Up => self.move_by(-1),
            Key::Down => self.move_by(1),
            Key::Char('p') if input.ctrl => self.move_by(-1),
            Key::Char('n' | 'r') if input.ctrl => self.move_by(1),
            Key::PageUp => self.move_by(-page),
            Key::PageDown => self.move_by(page),
            _ => match self.query.key(input) {
                PromptKey::Accept(_) => {
                    return self.selected().map_or(SearchKey::Cancel, SearchKey::Take);
                }
                PromptKey::Cancel => return SearchKey::Cancel,
                PromptKey::Typing => self.refilter(cells),
            },
        }
        SearchKey::Searching
    }

    /// Pasted text goes into the query.
    pub fn paste(&mut self, text: &str, cells: &[Cell]) {
        self.query.paste(text);
        self.refilter(cells);
    }

    /// Draws the popup over `area`.
    pub fn render(&mut self, cells: &[Cell], area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = area
            .width
            .saturating_sub(4)
            .min(MAX_WIDTH)
            .max(area.width.min(20));
        let height = area.height.saturating_sub(2).max(area.height.min(5));
        let popup = Rect::new(
            area.x + (area.width - width) / 2,
            area.y + (area.height - height) / 2,
            width,
            height,
        );
        Clear.render(popup, buf);
        let count = format!(" {} of {} ", self.matches.len(), distinct(cells));
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.border_focused)
            .title(Line::styled(" History ", theme.accent))
            .title(Line::styled(count, theme.muted).right_aligned())
            .title_bottom(
                Line::styled(" ↑/↓ choose · Enter edit · Esc close ", theme.muted).right_aligned(),
            );
        let inner = block.inner(popup);
        block.render(popup, buf);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        self.query.render(Rect { height: 1, ..inner }, buf, theme);
        let list = Rect {
            y: inner.y + 1,
            height: inner.height - 1,
            ..inner
        };
        self.draw_list(cells, list, buf, theme);
    }

    fn draw_list(&mut self, cells: &[Cell], area: Rect, buf: &mut Buffer, theme: &Theme) {
        let rows = usize::from(area.height);
        if rows == 0 {
            return;
        }
        if self.matches.is_empty() {
            buf.set_line(
                area.x,
                area.y,
                &Line::styled("  no earlier cell matches", theme.muted),
                area.width,
            );
            return;
        }
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + rows {
            self.top = self.selected + 1 - rows;
        }
        for ((n, &index), y) in self
            .matches
            .iter()
            .enumerate()
            .skip(self.top)
            .zip(area.y..area.bottom())
        {
            let Some(cell) = cells.get(index) else {
                continue;
            };
            let line = entry_line(cell, theme);
            buf.set_line(area.x, y, &line, area.width);
            if n == self.selected {
                buf.set_style(Rect::new(area.x, y, area.width, 1), theme.selection);
            }
        }
    }
}

/// How many distinct non-empty sources the notebook has.
fn distinct(cells: &[Cell]) -> usize {
    let mut seen = HashSet::new();
    cells
        .iter()
        .filter(|c| !c.source.trim().is_empty() && seen.insert(c.source.as_str()))
        .count()
}

/// One row of the list: `In [n]`, the first line of the source, and how many
/// more lines it has.
fn entry_line(cell: &Cell, theme: &Theme) -> Line<'static> {
    let source = sanitize::plain(&cell.source);
    let mut lines = source.lines();
    let first = lines.next().unwrap_or_default().to_string();
    let more = lines.count();
    let mut spans = vec![
        Span::styled(
            format!(" {:>8}  ", format!("In [{}]", cell.execution_count)),
            theme.prompt_in,
        ),
        Span::raw(first),
    ];
    if more > 0 {
        spans.push(Span::styled(format!("  (+{more} lines)"), theme.muted));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::notebook::Notebook;

    fn notebook(sources: &[&str]) -> Vec<Cell> {
        let mut nb = Notebook::default();
        for s in sources {
            nb.push((*s).to_string());
        }
        nb.cells
    }

    fn typed(c: char) -> Input {
        Input {
            key: Key::Char(c),
            ..Input::default()
        }
    }

    fn key(key: Key) -> Input {
        Input {
            key,
            ..Input::default()
        }
    }

    #[test]
    fn newest_first_each_source_once_filtered_by_every_word() {
        let cells = notebook(&[
            "import pandas as pd",
            "x = 1",
            "df = pd.read_csv('a.csv')",
            "x = 1",
            "print(df)",
        ]);
        let mut s = HistorySearch::new(&cells);
        assert_eq!(s.matches(), &[4, 3, 2, 0]);
        for c in "PD ".chars() {
            s.key(typed(c), &cells);
        }
        assert_eq!(s.matches(), &[2, 0]);
        for c in "csv".chars() {
            s.key(typed(c), &cells);
        }
        assert_eq!(s.matches(), &[2]);
        assert_eq!(s.key(key(Key::Enter), &cells), SearchKey::Take(2));
    }

    #[test]
    fn arrows_move_and_escape_closes() {
        let cells = notebook(&["a", "b", "c"]);
        let mut s = HistorySearch::new(&cells);
        assert_eq!(s.selected(), Some(2));
        s.key(key(Key::Down), &cells);
        s.key(key(Key::Down), &cells);
        s.key(key(Key::Down), &cells);
        assert_eq!(s.selected(), Some(0), "stops at the oldest");
        s.key(key(Key::Up), &cells);
        assert_eq!(s.key(key(Key::Enter), &cells), SearchKey::Take(1));
        assert_eq!(s.key(key(Key::Esc), &cells), SearchKey::Cancel);
        let mut none = HistorySearch::new(&cells);
        none.paste("zzz", &cells);
        assert_eq!(none.key(key(Key::Enter), &cells), SearchKey::Cancel);
    }
}
