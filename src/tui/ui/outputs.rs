//! The outputs pane: the notebook's cells as one virtual list of rows with a
//! scroll offset. Each cell's rows are built once per width and kept until the cell
//! changes, so drawing touches only the rows on screen however long the notebook.
//! Before the first cell, the pane shows a banner with the pool's start-up progress.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::cell_view::{CellContext, Row, cell_rows};
use super::sanitize;
use super::wrap::wrap;
use crate::notebook::Cell;
use crate::tui::app::PoolState;
use crate::tui::theme::Theme;

/// Progress lines the banner shows at most.
const BANNER_LOG_LINES: usize = 12;

struct CellLayout {
    width: u16,
    rows: Vec<Row>,
}

/// Scroll state and row cache of the outputs pane.
#[derive(Default)]
pub struct OutputsView {
    layouts: Vec<Option<CellLayout>>,
    /// First row on screen, as of the last draw.
    scroll: usize,
    /// Stick to the bottom: set when a cell is added, cleared by scrolling up.
    follow: bool,
    /// Rows the pane showed at the last draw (a page).
    viewport: u16,
    /// Rows of all cells at the last draw.
    total: usize,
}

impl std::fmt::Debug for OutputsView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputsView")
            .field("scroll", &self.scroll)
            .field("follow", &self.follow)
            .field("viewport", &self.viewport)
            .field("total", &self.total)
            .finish()
    }
}

impl OutputsView {
    /// Forgets the cached rows of cell `index` (its outputs changed).
    pub fn invalidate(&mut self, index: usize) {
        if let Some(slot) = self.layouts.get_mut(index) {
            *slot = None;
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

    /// Scrolls one page (the pane height less one row of context) up or down.
    pub fn page(&mut self, down: bool) {
        let page = i64::from(self.viewport.saturating_sub(1).max(1));
        self.scroll_by(if down { page } else { -page });
    }

    /// Brings every cell's rows up to date for `width`, returning the total.
    fn refresh(&mut self, cells: &[Cell], width: u16, ctx: &mut CellContext<'_>) -> usize {
        self.layouts.resize_with(cells.len(), || None);
        let mut total = 0;
        for (index, (cell, slot)) in cells.iter().zip(self.layouts.iter_mut()).enumerate() {
            if slot.as_ref().is_none_or(|l| l.width != width) {
                *slot = Some(CellLayout {
                    width,
                    rows: cell_rows(cell, index, width, ctx),
                });
            }
            total += slot.as_ref().map_or(0, |l| l.rows.len());
        }
        total
    }

    /// Draws the notebook's rows into `area`.
    pub fn render(
        &mut self,
        cells: &[Cell],
        area: Rect,
        buf: &mut Buffer,
        ctx: &mut CellContext<'_>,
    ) {
        self.total = self.refresh(cells, area.width, ctx);
        self.viewport = area.height;
        let max = self.total.saturating_sub(usize::from(area.height));
        self.scroll = if self.follow {
            max
        } else {
            self.scroll.min(max)
        };
        let mut skip = self.scroll;
        let mut y = area.y;
        for layout in self.layouts.iter().flatten() {
            if y >= area.bottom() {
                break;
            }
            if skip >= layout.rows.len() {
                skip -= layout.rows.len();
                continue;
            }
            y = draw_rows(&layout.rows[skip..], area, y, buf, ctx);
            skip = 0;
        }
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
    use super::*;
    use crate::notebook::Notebook;
    use crate::tui::ui::highlight::Highlighter;
    use crate::tui::ui::image::ImageStore;

    fn draw(view: &mut OutputsView, nb: &Notebook, height: u16) -> Vec<String> {
        let theme = Theme::dark();
        let mut hl = Highlighter::default();
        let mut images = ImageStore::default();
        let mut ctx = CellContext {
            theme: &theme,
            highlighter: &mut hl,
            images: &mut images,
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
    fn invalidated_cells_are_rebuilt() {
        let mut nb = notebook(1);
        let mut view = OutputsView::default();
        assert_eq!(draw(&mut view, &nb, 3)[1], "  queued");
        nb.cells[0].status = crate::notebook::CellStatus::Running;
        assert_eq!(
            draw(&mut view, &nb, 3)[1],
            "  queued",
            "cached until invalidated"
        );
        view.invalidate(0);
        assert_eq!(draw(&mut view, &nb, 3)[1], "  running…");
    }
}
