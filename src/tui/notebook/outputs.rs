//! The outputs pane: the notebook's cells as one virtual list of rows with a
//! scroll offset. Each cell's rows are built once per width and kept until the cell
//! changes, so drawing touches only the rows on screen however long the notebook.
//! Before the first cell, the pane shows a banner with the pool's start-up progress.
//!
//! The selected cell (the notebook's cursor, moved with j/k) has its `In [n]:`
//! prompt highlighted at draw time, so moving the cursor never rebuilds rows; a
//! request to reveal a cell is carried out at the next draw, when the row offsets
//! are known.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::Line;

use crate::notebook::{Cell, Output};
use crate::tui::notebook::PoolState;
use crate::tui::notebook::cell_view::{CellContext, Row, cell_rows, running_line};
use crate::tui::theme::Theme;
use crate::tui::widgets::long_output::{LongTexts, OutputKey};
use crate::tui::widgets::sanitize;
use crate::tui::widgets::wrap::wrap;

/// Progress lines the banner shows at most.
const BANNER_LOG_LINES: usize = 12;

struct CellLayout {
    width: u16,
    rows: Vec<Row>,
    /// False while a long output is still being read: build again next frame.
    settled: bool,
}

/// Scroll state and row cache of the outputs pane.
#[derive(Default)]
pub struct OutputsView {
    layouts: Vec<Option<CellLayout>>,
    /// `offsets[i]`: rows of the cells before cell `i`; one more entry for the total.
    offsets: Vec<usize>,
    /// Cells whose outputs changed since the last draw.
    stale: Vec<usize>,
    /// First row on screen, as of the last draw.
    scroll: usize,
    /// Stick to the bottom: set when a cell is added, cleared by scrolling up.
    follow: bool,
    /// Rows the pane showed at the last draw (a page).
    viewport: u16,
    /// Rows of all cells at the last draw.
    total: usize,
    /// The cells on screen at the last draw.
    shown: Range<usize>,
    /// The cell whose prompt is highlighted.
    selected: Option<usize>,
    /// A cell to scroll into view at the next draw.
    reveal: Option<usize>,
    /// Where the pane was drawn last (for mouse clicks).
    area: Rect,
    /// Session boundaries, drawn after the cell before them: (cells before
    /// the boundary, what it says).
    boundaries: Vec<(usize, String)>,
    /// Marks drawn above cells (the client that ran a followed cell): (cell,
    /// text), by cell.
    marks: Vec<(usize, String)>,
}

impl std::fmt::Debug for OutputsView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputsView")
            .field("scroll", &self.scroll)
            .field("follow", &self.follow)
            .field("viewport", &self.viewport)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

impl OutputsView {
    /// Forgets the cached rows of cell `index` (its outputs changed).
    pub fn invalidate(&mut self, index: usize) {
        if let Some(slot) = self.layouts.get_mut(index) {
            *slot = None;
        }
        self.stale.push(index);
    }

    /// Forgets the cached rows of every cell (the image protocol changed).
    pub fn invalidate_all(&mut self) {
        for index in 0..self.layouts.len() {
            self.invalidate(index);
        }
    }

    /// Sets the session boundaries to draw (cells before each, and its text);
    /// the cells they follow are built again when they change.
    pub fn set_boundaries(&mut self, boundaries: Vec<(usize, String)>) {
        if boundaries == self.boundaries {
            return;
        }
        let old = std::mem::replace(&mut self.boundaries, boundaries);
        let touched: Vec<usize> = old
            .iter()
            .chain(&self.boundaries)
            .filter_map(|(after, _)| after.checked_sub(1))
            .collect();
        for cell in touched {
            self.invalidate(cell);
        }
    }

    /// Sets the marks to draw above cells (cell, text); the cells whose mark
    /// changed are built again.
    pub fn set_marks(&mut self, marks: Vec<(usize, String)>) {
        if marks == self.marks {
            return;
        }
        let old = std::mem::replace(&mut self.marks, marks);
        let touched: Vec<usize> = old.iter().chain(&self.marks).map(|(c, _)| *c).collect();
        for cell in touched {
            self.invalidate(cell);
        }
    }

    /// Keeps the bottom of the notebook in view from now on.
    pub fn follow(&mut self) {
        self.follow = true;
    }

    /// True when the pane sticks to the bottom.
    pub fn is_following(&self) -> bool {
        self.follow
    }

    /// The first row on screen as of the last draw.
    pub fn scroll(&self) -> usize {
        self.scroll
    }

    /// Scrolls by `delta` rows (negative: up). Reaching the bottom follows again.
    pub fn scroll_by(&mut self, delta: i64) {
        let max = self.total.saturating_sub(usize::from(self.viewport));
        let from = if self.follow {
            max
        } else {
            self.scroll.min(max)
        };
        let to = if delta < 0 {
            from.saturating_sub(usize::try_from(delta.unsigned_abs()).unwrap_or(usize::MAX))
        } else {
            from.saturating_add(usize::try_from(delta).unwrap_or(usize::MAX))
                .min(max)
        };
        self.scroll = to;
        self.follow = to >= max;
    }

    /// Highlights the prompt of cell `selected` (none: no highlight).
    pub fn select(&mut self, selected: Option<usize>) {
        self.selected = selected;
    }

    /// Scrolls, at the next draw, so that cell `index` is in view: all of it if
    /// it fits, else its top.
    pub fn reveal(&mut self, index: usize) {
        self.reveal = Some(index);
    }

    /// The last cell on screen at the last draw (the last cell before any draw),
    /// among `count` cells; `None` without cells.
    pub fn last_shown(&self, count: usize) -> Option<usize> {
        let last = count.checked_sub(1)?;
        Some(self.shown.end.checked_sub(1).map_or(last, |s| s.min(last)))
    }

    /// The cell drawn at screen position (`column`, `row`) at the last draw.
    pub fn cell_at(&self, column: u16, row: u16) -> Option<usize> {
        if !self.area.contains(Position::new(column, row)) {
            return None;
        }
        let line = self.scroll + usize::from(row - self.area.y);
        if line >= self.total {
            return None;
        }
        let cell = self
            .offsets
            .partition_point(|&o| o <= line)
            .checked_sub(1)?;
        (cell + 1 < self.offsets.len()).then_some(cell)
    }

    /// Scrolls one page (the pane height less one row of context) up or down.
    pub fn page(&mut self, down: bool) {
        let page = i64::from(self.viewport.saturating_sub(1).max(1));
        self.scroll_by(if down { page } else { -page });
    }

    /// The output the pager should open: in the selected cell, else among the
    /// cells on screen at the last draw from the bottom up (the whole notebook
    /// before any draw), the last collapsed output, else the last text output.
    pub fn pager_target(&self, cells: &[Cell], texts: &LongTexts) -> Option<OutputKey> {
        let range = match self.selected.filter(|&s| s < cells.len()) {
            Some(selected) => selected..selected + 1,
            None if self.shown.is_empty() => 0..cells.len(),
            None => self.shown.start..self.shown.end.min(cells.len()),
        };
        let text_outputs = |cell: usize| {
            cells[cell]
                .outputs
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, o)| !matches!(o, Output::DisplayData { .. }))
                .map(move |(output, o)| (OutputKey { cell, output }, o))
        };
        let long = range.clone().rev().find_map(|cell| {
            text_outputs(cell)
                .find(|(key, o)| texts.is_long_output(*key, o))
                .map(|(key, _)| key)
        });
        long.or_else(|| {
            range
                .rev()
                .find_map(|cell| text_outputs(cell).next().map(|(key, _)| key))
        })
    }

    /// Brings every cell's rows up to date for `width` and recounts the offsets.
    fn refresh(&mut self, cells: &[Cell], width: u16, ctx: &mut CellContext<'_>) {
        for cell in self.stale.drain(..) {
            ctx.texts.invalidate(cell);
        }
        self.layouts.resize_with(cells.len(), || None);
        let mut changed = self.offsets.len() != cells.len() + 1;
        for (index, (cell, slot)) in cells.iter().zip(self.layouts.iter_mut()).enumerate() {
            if slot.as_ref().is_none_or(|l| l.width != width || !l.settled) {
                let (mut rows, settled) = cell_rows(cell, index, width, ctx);
                if let Some((_, text)) = self.marks.iter().find(|(c, _)| *c == index) {
                    // One row (or more, wrapped) per line of the mark.
                    let mut marked: Vec<Row> = Vec::new();
                    for (i, part) in text.split('\n').enumerate() {
                        let prefix = if i == 0 { "▸ " } else { "  " };
                        let line = Line::styled(format!("{prefix}{part}"), ctx.theme.muted);
                        marked.extend(wrap(line, width).into_iter().map(Row::Text));
                    }
                    marked.append(&mut rows);
                    rows = marked;
                }
                if let Some((_, text)) = self.boundaries.iter().find(|(a, _)| *a == index + 1) {
                    let line = Line::styled(format!("── {text} ──"), ctx.theme.warning);
                    rows.extend(wrap(line, width).into_iter().map(Row::Text));
                    rows.push(Row::Text(Line::default()));
                }
                *slot = Some(CellLayout {
                    width,
                    rows,
                    settled,
                });
                changed = true;
            }
        }
        if changed {
            self.offsets.clear();
            self.offsets.push(0);
            let mut total = 0;
            for layout in &self.layouts {
                total += layout.as_ref().map_or(0, |l| l.rows.len());
                self.offsets.push(total);
            }
        }
    }

    /// Draws the notebook's rows into `area`. Only the cells on screen are
    /// visited: the first is found by binary search over the row offsets.
    pub fn render(
        &mut self,
        cells: &[Cell],
        area: Rect,
        buf: &mut Buffer,
        ctx: &mut CellContext<'_>,
    ) {
        self.refresh(cells, area.width, ctx);
        self.total = self.offsets.last().copied().unwrap_or(0);
        self.viewport = area.height;
        self.area = area;
        let max = self.total.saturating_sub(usize::from(area.height));
        self.scroll = if self.follow {
            max
        } else {
            self.scroll.min(max)
        };
        if let Some(cell) = self.reveal.take() {
            self.scroll_to_cell(cell, area.height, max);
        }
        let first = self
            .offsets
            .partition_point(|&o| o <= self.scroll)
            .saturating_sub(1);
        let mut y = area.y;
        let mut cell = first;
        while y < area.bottom() && cell < self.layouts.len() {
            if let Some(layout) = &self.layouts[cell] {
                let skip = self.scroll.saturating_sub(self.offsets[cell]);
                if skip < layout.rows.len() {
                    y = draw_rows(&layout.rows[skip..], area, y, buf, ctx);
                }
            }
            cell += 1;
        }
        self.shown = first..cell;
        self.highlight_selected(cells, area, buf, ctx);
    }

    /// Scrolls so that cell `index` is in view (its top, when it is taller than
    /// the pane); stays put when it already is.
    fn scroll_to_cell(&mut self, index: usize, height: u16, max: usize) {
        let (Some(&start), Some(&end)) = (self.offsets.get(index), self.offsets.get(index + 1))
        else {
            return;
        };
        let height = usize::from(height);
        if start < self.scroll || end > self.scroll + height {
            let top = end.saturating_sub(height).min(start);
            self.scroll = top.min(max);
            self.follow = self.scroll >= max;
        }
    }

    /// Paints the selected cell's `In [n]: ` prompt, if its first row is on screen.
    fn highlight_selected(
        &self,
        cells: &[Cell],
        area: Rect,
        buf: &mut Buffer,
        ctx: &CellContext<'_>,
    ) {
        let Some(index) = self.selected else { return };
        let (Some(cell), Some(&start)) = (cells.get(index), self.offsets.get(index)) else {
            return;
        };
        let Some(dy) = start
            .checked_sub(self.scroll)
            .filter(|dy| *dy < usize::from(area.height))
        else {
            return;
        };
        let width = format!("In [{}]: ", cell.execution_count).len();
        let width = u16::try_from(width).unwrap_or(u16::MAX).min(area.width);
        let y = area.y + u16::try_from(dy).unwrap_or(0);
        buf.set_style(Rect::new(area.x, y, width, 1), ctx.theme.selection);
    }
}

/// Draws `rows` from line `y` down to the bottom of `area`; returns the next `y`.
/// Consecutive rows of one image are drawn with one call.
fn draw_rows(
    rows: &[Row],
    area: Rect,
    mut y: u16,
    buf: &mut Buffer,
    ctx: &mut CellContext<'_>,
) -> u16 {
    let mut i = 0;
    while i < rows.len() && y < area.bottom() {
        match &rows[i] {
            Row::Text(line) => {
                buf.set_line(area.x, y, line, area.width);
                i += 1;
                y += 1;
            }
            Row::Running(cell) => {
                let since = ctx.pending.get(cell).and_then(|p| p.since());
                let line = running_line(since, &ctx.clock, ctx.theme);
                buf.set_line(area.x, y, &line, area.width);
                i += 1;
                y += 1;
            }
            Row::Image { key, row } => {
                let run = rows[i..]
                    .iter()
                    .take_while(|r| matches!(r, Row::Image { key: k, .. } if k == key))
                    .count();
                let height = u16::try_from(run)
                    .unwrap_or(u16::MAX)
                    .min(area.bottom() - y);
                ctx.images
                    .render_rows(*key, *row, Rect::new(area.x, y, area.width, height), buf);
                i += run;
                y += height;
            }
        }
    }
    y
}

/// The banner shown before the first cell: what this is, and how the pool is doing.
pub fn render_banner(
    pool: &PoolState,
    log: &[String],
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let mut lines = vec![
        Line::styled("sessionpad", theme.prompt_in),
        Line::styled(
            "a terminal notebook for Azure Container Apps dynamic sessions",
            theme.muted,
        ),
        Line::default(),
    ];
    match pool {
        PoolState::Starting => {
            lines.push(Line::styled(
                "Starting the local pool… The first run builds its Python environment, \
                 which can take a few minutes; you can type a cell meanwhile.",
                theme.warning,
            ));
            let skip = log.len().saturating_sub(BANNER_LOG_LINES);
            lines.extend(
                log[skip..]
                    .iter()
                    .map(|l| Line::styled(sanitize::plain(l), theme.muted)),
            );
        }
        PoolState::Ready => lines.push(Line::raw(
            "Type Python below and press F5 or Alt+Enter to run it. Up recalls earlier cells.",
        )),
        PoolState::Failed(reason) => {
            lines.push(Line::styled(
                "The pool could not be started:",
                theme.error_title,
            ));
            lines.extend(
                sanitize::plain_lines(reason)
                    .into_iter()
                    .map(|l| l.style(theme.error)),
            );
        }
    }
    let rows: Vec<Line<'static>> = lines
        .into_iter()
        .flat_map(|l| wrap(l, area.width))
        .collect();
    for (line, y) in rows.iter().zip(area.y..area.bottom()) {
        buf.set_line(area.x, y, line, area.width);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Instant;

    use super::*;
    use crate::notebook::Notebook;
    use crate::tui::notebook::cell_view::{Pending, RunClock};
    use crate::tui::widgets::highlight::Highlighter;
    use crate::tui::widgets::image::ImageStore;

    /// Draws `nb`, every cell of it queued.
    fn draw(view: &mut OutputsView, nb: &Notebook, height: u16) -> Vec<String> {
        let queued = (0..nb.cells.len()).map(|i| (i, Pending::Queued)).collect();
        draw_pending(view, nb, &queued, height)
    }

    /// Draws `nb`, the app saying `pending` of its cells.
    fn draw_pending(
        view: &mut OutputsView,
        nb: &Notebook,
        pending: &BTreeMap<usize, Pending>,
        height: u16,
    ) -> Vec<String> {
        let theme = Theme::dark();
        let mut hl = Highlighter::default();
        let mut images = ImageStore::default();
        let mut texts = LongTexts::default();
        texts.begin_frame();
        let mut ctx = CellContext {
            theme: &theme,
            highlighter: &mut hl,
            images: &mut images,
            texts: &mut texts,
            pending,
            clock: RunClock {
                output_at_end: false,
                now: Instant::now(),
                limit: None,
            },
            pager_key: "Ctrl+O",
            more_key: "m",
        };
        let area = Rect::new(0, 0, 20, height);
        let mut buf = Buffer::empty(area);
        view.render(&nb.cells, area, &mut buf, &mut ctx);
        (0..height)
            .map(|y| {
                (0..20)
                    .filter_map(|x| buf.cell((x, y)).map(|c| c.symbol().to_string()))
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    fn notebook(n: usize) -> Notebook {
        let mut nb = Notebook::default();
        for i in 0..n {
            nb.push(format!("x{i}"));
        }
        nb
    }

    #[test]
    fn follows_the_bottom_and_pages_up() {
        let nb = notebook(5); // 3 rows each: code, status, blank
        let mut view = OutputsView::default();
        view.follow();
        let screen = draw(&mut view, &nb, 4);
        assert_eq!(screen, vec!["", "In [5]: x4", "  queued", ""]);
        assert_eq!(view.scroll(), 11);
        view.page(false);
        assert!(!view.is_following());
        assert_eq!(draw(&mut view, &nb, 4)[1], "In [4]: x3");
        view.scroll_by(100);
        assert!(view.is_following());
    }

    #[test]
    fn a_session_boundary_follows_the_cell_before_it() {
        let nb = notebook(2);
        let mut view = OutputsView::default();
        view.set_boundaries(vec![(1, "new session".into())]);
        let screen = draw(&mut view, &nb, 8);
        assert_eq!(
            screen[..6],
            [
                "In [1]: x0",
                "  queued",
                "",
                "── new session ──",
                "",
                "In [2]: x1"
            ]
        );
        view.set_boundaries(Vec::new());
        assert_eq!(draw(&mut view, &nb, 8)[3], "In [2]: x1");
    }

    #[test]
    fn invalidated_cells_are_rebuilt() {
        let nb = notebook(1);
        let mut view = OutputsView::default();
        assert_eq!(draw(&mut view, &nb, 3)[1], "  queued");
        let running = BTreeMap::from([(0, Pending::Running { since: None })]);
        assert_eq!(
            draw_pending(&mut view, &nb, &running, 3)[1],
            "  queued",
            "cached until invalidated"
        );
        view.invalidate(0);
        assert_eq!(draw_pending(&mut view, &nb, &running, 3)[1], "  ⠋ running");
    }
}
