//! The pager: one output's whole text on the full screen, for outputs the
//! notebook shows collapsed. It reads the output's line index (`text_index.rs`)
//! and draws only the rows on screen: the rows each line wraps into are counted
//! once per width (a running sum, searched by bisection), so scrolling a
//! million-line output costs what scrolling a screenful does.
//!
//! Keys (from the keymap's `pager` mode): scroll, page, top and bottom, `/` to
//! type a search, `n`/`N` for the next and previous line that matches, `q`/Esc
//! to close. While a search is typed, every key goes to the prompt.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui_textarea::{Input, Key};

use serde::Deserialize;

use crate::notebook::{Cell, Output, StreamName};
use crate::protocol::service_limits::thousands;
use crate::tui::keymap::{Keymap, Mode};
use crate::tui::theme::Theme;
use crate::tui::widgets::long_output::{LongTexts, OutputKey};
use crate::tui::widgets::text_index::TextView;
use crate::tui::widgets::wrap::{rows_needed, wrap};

/// The key the collapsed note names when the keymap binds none in the editor.
const PAGER_KEY: &str = "Ctrl+O";

/// The key that opens the pager from the cell editor or the notebook, as the
/// note under a collapsed output names it (`Ctrl+O`).
pub fn pager_key(keymap: &Keymap) -> String {
    keymap
        .key_for(
            &crate::tui::action::Action::Pager(PagerAction::Open),
            &[Mode::Editor, Mode::Outputs],
        )
        .unwrap_or_else(|| PAGER_KEY.to_string())
}

/// The pager's state: which output, where, and the search.
#[derive(Debug)]
pub struct Pager {
    key: OutputKey,
    title: String,
    /// First row on screen.
    top: usize,
    /// A line to bring to the top at the next draw (a search hit).
    jump: Option<usize>,
    /// The text width `offsets` were counted for.
    width: u16,
    /// `offsets[n]`: rows of the lines before line `n`, for the lines counted.
    offsets: Vec<usize>,
    /// Text rows on screen at the last draw.
    viewport: u16,
    /// The search being typed, while the prompt is open.
    typing: Option<String>,
    /// The last search.
    query: String,
    /// The line of the current match.
    hit: Option<usize>,
    /// A notice for the bottom row (no match, wrapped around).
    message: Option<String>,
}

/// What a key typed at the search prompt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptOutcome {
    /// Keep typing.
    Typing,
    /// Search for what was typed.
    Submit,
    /// The prompt closed without a search.
    Cancel,
}

impl Pager {
    /// A pager on output `key` of `cells`, at the top, titled after the
    /// output (`stdout of In [3]`).
    pub fn open(key: OutputKey, cells: &[Cell]) -> Self {
        Self::new(key, title(cells, key))
    }

    /// A pager on `key`, titled `title` (`stdout of In [3]`), at the top.
    pub fn new(key: OutputKey, title: String) -> Self {
        Self {
            key,
            title,
            top: 0,
            jump: None,
            width: 0,
            offsets: vec![0],
            viewport: 1,
            typing: None,
            query: String::new(),
            hit: None,
            message: None,
        }
    }

    /// The output shown.
    pub fn key(&self) -> OutputKey {
        self.key
    }

    /// True while the search prompt takes the keys.
    pub fn is_typing(&self) -> bool {
        self.typing.is_some()
    }

    /// Scrolls by `delta` rows (negative: up); the draw keeps it in range.
    pub fn scroll(&mut self, delta: i64) {
        let by = usize::try_from(delta.unsigned_abs()).unwrap_or(usize::MAX);
        self.top = if delta < 0 {
            self.top.saturating_sub(by)
        } else {
            self.top.saturating_add(by)
        };
        self.message = None;
    }

    /// Scrolls `pages` screens (negative: up), less a row of context each.
    pub fn page(&mut self, pages: i32) {
        let page = i64::from(self.viewport.saturating_sub(1).max(1));
        self.scroll(page * i64::from(pages));
    }

    /// Goes to the first row (`false`) or the last screen (`true`).
    pub fn to_end(&mut self, end: bool) {
        self.top = if end { usize::MAX } else { 0 };
        self.jump = None;
    }

    /// Opens the search prompt.
    pub fn start_search(&mut self) {
        self.typing = Some(String::new());
        self.message = None;
    }

    /// A key typed at the prompt.
    pub fn prompt_key(&mut self, input: &Input) -> PromptOutcome {
        let Some(typed) = self.typing.as_mut() else {
            return PromptOutcome::Cancel;
        };
        match input.key {
            Key::Enter => {
                self.query = self.typing.take().unwrap_or_default();
                if self.query.is_empty() {
                    return PromptOutcome::Cancel;
                }
                self.hit = None;
                PromptOutcome::Submit
            }
            Key::Esc => {
                self.typing = None;
                PromptOutcome::Cancel
            }
            Key::Char('c' | 'g') if input.ctrl => {
                self.typing = None;
                PromptOutcome::Cancel
            }
            Key::Backspace => {
                if typed.pop().is_none() {
                    self.typing = None;
                    return PromptOutcome::Cancel;
                }
                PromptOutcome::Typing
            }
            Key::Char(c) if !input.ctrl && !input.alt => {
                typed.push(c);
                PromptOutcome::Typing
            }
            _ => PromptOutcome::Typing,
        }
    }

    /// Pasted text: its first line goes into the search prompt, when it is open.
    pub fn paste(&mut self, text: &str) {
        if let Some(typed) = self.typing.as_mut() {
            let line = text.lines().next().unwrap_or_default();
            typed.push_str(&crate::tui::widgets::sanitize::plain(line));
        }
    }

    /// Moves to the next (or previous) line matching the last search. A fresh
    /// search starts at the top line on screen, which may itself match.
    pub fn find(&mut self, index: &TextView<'_>, forward: bool) {
        if self.query.is_empty() {
            self.message = Some("no search yet: press / to type one".into());
            return;
        }
        let top = self.line_at(self.top);
        let bottom = self.line_at(self.top + usize::from(self.viewport).saturating_sub(1));
        // Go on from the current match while it is on screen, else from the top.
        let on_screen = self.hit.filter(|h| (top..=bottom).contains(h));
        let fresh = on_screen.is_none();
        let from = on_screen.unwrap_or(top);
        let found = if fresh && index.plain_line(top).contains(self.query.as_str()) {
            Some(top)
        } else {
            index.find(&self.query, from, forward)
        };
        self.message = match found {
            None => Some(format!("not found: {}", self.query)),
            Some(n) if !fresh && forward && n <= from => Some("search wrapped to the top".into()),
            Some(n) if !fresh && !forward && n >= from => Some("search wrapped to the end".into()),
            Some(_) => None,
        };
        if let Some(n) = found {
            self.hit = Some(n);
            self.jump = Some(n);
        }
    }

    /// The line that row `row` belongs to (among the lines counted).
    fn line_at(&self, row: usize) -> usize {
        self.offsets
            .partition_point(|&o| o <= row)
            .saturating_sub(1)
            .min(self.offsets.len().saturating_sub(2))
    }

    /// Counts the rows of the lines not counted yet (all of them after a change
    /// of width), keeping the top line in place.
    fn measure(&mut self, index: &TextView<'_>, complete: bool, width: u16) {
        let count = index.line_count();
        if width != self.width {
            let anchor = self.line_at(self.top);
            self.width = width;
            self.offsets = vec![0];
            self.count_rows(index, count);
            self.top = self.offsets[anchor.min(count)];
            return;
        }
        let stable = if complete {
            count
        } else {
            index.stable_lines()
        };
        self.offsets
            .truncate(stable.min(self.offsets.len() - 1).min(count) + 1);
        self.count_rows(index, count);
    }

    fn count_rows(&mut self, index: &TextView<'_>, count: usize) {
        let mut total = self.offsets.last().copied().unwrap_or(0);
        let width = usize::from(self.width.max(1));
        let ascii = index.is_plain_ascii();
        for n in self.offsets.len() - 1..count {
            total += if ascii {
                index.raw_line(n).len().div_ceil(width).max(1)
            } else {
                rows_needed(&index.plain_line(n), self.width)
            };
            self.offsets.push(total);
        }
    }

    /// Draws the pager over all of `area`.
    pub fn render(
        &mut self,
        index: &TextView<'_>,
        complete: bool,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        hints: &str,
    ) {
        if area.height < 3 || area.width < 8 {
            return;
        }
        let count = index.line_count();
        let gutter = u16::try_from(count.max(1).to_string().len() + 1)
            .unwrap_or(8)
            .max(4);
        let text = Rect::new(
            area.x + gutter,
            area.y + 1,
            area.width.saturating_sub(gutter).max(1),
            area.height - 2,
        );
        self.measure(index, complete, text.width);
        self.viewport = text.height;
        if let Some(line) = self.jump.take() {
            self.top = self.offsets[line.min(count)];
        }
        let total = self.offsets.last().copied().unwrap_or(0);
        self.top = self.top.min(total.saturating_sub(usize::from(text.height)));
        let first = self.line_at(self.top);
        self.draw_text(index, first, text, area.x, buf, theme);
        self.draw_title(index, complete, first, area, buf, theme);
        self.draw_bottom(area, buf, theme, hints);
    }

    fn draw_text(
        &self,
        index: &TextView<'_>,
        first: usize,
        text: Rect,
        gutter_x: u16,
        buf: &mut Buffer,
        theme: &Theme,
    ) {
        let mut skip = self.top - self.offsets[first];
        let mut y = text.y;
        let visible = index.lines(first..first + usize::from(text.height));
        for (n, line) in (first..).zip(visible) {
            let line = highlight(line, &self.query, theme.selection);
            for (row, piece) in wrap(line, text.width).into_iter().enumerate() {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                if y >= text.bottom() {
                    return;
                }
                if row == 0 {
                    let style = if self.hit == Some(n) {
                        theme.accent
                    } else {
                        theme.muted
                    };
                    let number = format!("{:>w$} ", n + 1, w = usize::from(text.x - gutter_x - 1));
                    buf.set_string(gutter_x, y, number, style);
                }
                buf.set_line(text.x, y, &piece, text.width);
                y += 1;
            }
        }
    }

    fn draw_title(
        &self,
        index: &TextView<'_>,
        complete: bool,
        first: usize,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
    ) {
        let count = index.line_count();
        let last = self.line_at(self.top + usize::from(self.viewport).saturating_sub(1));
        let total = self.offsets.last().copied().unwrap_or(0);
        let end = self.top + usize::from(self.viewport);
        let percent = (end.min(total) * 100).checked_div(total).unwrap_or(100);
        let reading = if complete { "" } else { " (reading…)" };
        let position = format!(
            "lines {}–{} of {}{reading} · {percent}%",
            thousands((first + 1).min(count)),
            thousands((last + 1).min(count)),
            thousands(count),
        );
        buf.set_style(Rect::new(area.x, area.y, area.width, 1), theme.status);
        let line = Line::from(vec![
            Span::styled(format!(" {} ", self.title), theme.status_accent),
            Span::styled(format!("│ {position}"), theme.status),
        ]);
        buf.set_line(area.x, area.y, &line, area.width);
    }

    fn draw_bottom(&self, area: Rect, buf: &mut Buffer, theme: &Theme, hints: &str) {
        let y = area.bottom() - 1;
        let line = match (&self.typing, &self.message) {
            (Some(typed), _) => Line::from(vec![
                Span::styled("/", theme.accent),
                Span::raw(typed.clone()),
                Span::styled("█", theme.muted),
            ]),
            (None, Some(message)) => Line::styled(message.clone(), theme.warning),
            (None, None) if !self.query.is_empty() => {
                Line::styled(format!("/{} · {hints}", self.query), theme.muted)
            }
            (None, None) => Line::styled(hints.to_string(), theme.muted),
        };
        buf.set_line(area.x, y, &line, area.width);
    }
}

/// Draws `pager` over the whole frame; false when its output is gone (the
/// app then closes it) or its text is not indexed yet.
pub fn render(frame: &mut Frame<'_>, pager: &mut Pager, cx: &mut PagerView<'_>) -> bool {
    let area = frame.area();
    let hints = cx.keymap.hint_line(Mode::Pager, usize::from(area.width));
    let key = pager.key;
    let output = cx
        .cells
        .get(key.cell)
        .and_then(|c| c.outputs.get(key.output));
    let Some(text) = output.and_then(|o| cx.texts.index(key, o)) else {
        return false;
    };
    pager.render(
        &text.index,
        text.complete,
        area,
        frame.buffer_mut(),
        cx.theme,
        &hints,
    );
    true
}

/// What the pager's view reads but does not own.
pub struct PagerView<'a> {
    /// The notebook's cells (the output shown is one of theirs).
    pub cells: &'a [Cell],
    /// The line indexes of long outputs (read on as the output grows).
    pub texts: &'a mut LongTexts,
    /// The palette.
    pub theme: &'a Theme,
    /// The keys, for the hint line.
    pub keymap: &'a Keymap,
}

/// The pager's title for output `key`: `stdout of In [3]`.
fn title(cells: &[Cell], key: OutputKey) -> String {
    let Some(cell) = cells.get(key.cell) else {
        return String::new();
    };
    let what = match cell.outputs.get(key.output) {
        Some(Output::Stream {
            name: StreamName::Stdout,
            ..
        }) => "stdout",
        Some(Output::Stream {
            name: StreamName::Stderr,
            ..
        }) => "stderr",
        Some(Output::ExecuteResult { .. }) => "result",
        Some(Output::Error { .. }) => "error",
        Some(Output::Files { .. }) => "files line",
        Some(Output::DisplayData { .. }) | None => "output",
    };
    format!("{what} of In [{}]", cell.execution_count)
}

/// A pager action (`run = "pager scroll 1"` in the keymap's `pager` table;
/// the older names `open_pager`, `pager_scroll 1`… still parse).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PagerAction {
    /// Open the whole text of an output in the pager: the last collapsed
    /// output on screen, else the last text output on screen (the notebook
    /// picks it; the app opens the pager on it).
    Open,
    /// Close the pager.
    Close,
    /// Scroll by this many rows (negative: up).
    Scroll(i32),
    /// Scroll by this many screens (negative: up).
    Page(i32),
    /// Go to the start of the text.
    Top,
    /// Go to the end of the text.
    Bottom,
    /// Open the search prompt (`/`).
    Search,
    /// Go to the next line matching the search (`n`).
    Next,
    /// Go to the previous line matching the search (`N`).
    Prev,
    /// A key typed while the search prompt is open.
    #[serde(skip)]
    Type(Input),
    /// Text pasted (into the search prompt, when it is open).
    #[serde(skip)]
    Paste(String),
}

/// What the pager's reducer reads but does not own.
pub struct PagerCx<'a> {
    /// The notebook's cells.
    pub cells: &'a [Cell],
    /// The line indexes of long outputs.
    pub texts: &'a LongTexts,
}

/// What the app should do with the pager after an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PagerOutcome {
    /// It stays open.
    Stay,
    /// It closed (`q`, Esc).
    Close,
}

impl Pager {
    /// The pager's reducer: applies `action` to its own state, reading the
    /// output's text through `cx` for a search. [`PagerAction::Open`] is the
    /// app's (it names no pager yet) and leaves the pager as it is.
    pub fn update(&mut self, action: PagerAction, cx: &PagerCx<'_>) -> PagerOutcome {
        let search = match action {
            PagerAction::Close => return PagerOutcome::Close,
            PagerAction::Open => None,
            PagerAction::Scroll(n) => {
                self.scroll(i64::from(n));
                None
            }
            PagerAction::Page(n) => {
                self.page(n);
                None
            }
            PagerAction::Top => {
                self.to_end(false);
                None
            }
            PagerAction::Bottom => {
                self.to_end(true);
                None
            }
            PagerAction::Search => {
                self.start_search();
                None
            }
            PagerAction::Paste(text) => {
                self.paste(&text);
                None
            }
            PagerAction::Next => Some(true),
            PagerAction::Prev => Some(false),
            PagerAction::Type(input) => {
                (self.prompt_key(&input) == PromptOutcome::Submit).then_some(true)
            }
        };
        if let Some(forward) = search
            && let Some(output) = cx
                .cells
                .get(self.key.cell)
                .and_then(|c| c.outputs.get(self.key.output))
            && let Some(index) = cx.texts.get(self.key, output)
        {
            self.find(&index, forward);
        }
        PagerOutcome::Stay
    }
}

/// `line` with every occurrence of `query` in `style` (over the span's own).
fn highlight(line: Line<'static>, query: &str, style: Style) -> Line<'static> {
    if query.is_empty() {
        return line;
    }
    let plain: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    let hits: Vec<(usize, usize)> = plain
        .match_indices(query)
        .map(|(at, q)| (at, at + q.len()))
        .collect();
    if hits.is_empty() {
        return line;
    }
    let mut spans = Vec::new();
    let mut pos = 0;
    for span in &line.spans {
        let (start, end) = (pos, pos + span.content.len());
        let mut cut = start;
        for &(a, b) in hits.iter().filter(|(a, b)| *a < end && *b > start) {
            let (a, b) = (a.max(start), b.min(end));
            if a > cut {
                spans.push(Span::styled(
                    span.content[cut - start..a - start].to_string(),
                    span.style,
                ));
            }
            spans.push(Span::styled(
                span.content[a - start..b - start].to_string(),
                span.style.patch(style),
            ));
            cut = b;
        }
        if cut < end {
            spans.push(Span::styled(
                span.content[cut - start..].to_string(),
                span.style,
            ));
        }
        pos = end;
    }
    Line::from(spans).style(line.style)
}

#[cfg(test)]
mod tests;
