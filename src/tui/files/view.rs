//! Where the files pane goes on the screen and what it draws around the
//! listing: beside the outputs (40 % of the width) on terminals of 100 columns or
//! more; on narrower ones, while it has the focus, under the outputs (the lower
//! three fifths), so the newest outputs stay in view above it and the notebook
//! stays readable; hidden there while the editor has the keys, so typing gets
//! the whole width and height back. The preview
//! under the listing (or instead of it when there is little room), images
//! through the same image path as outputs; the transfer gauge; the files
//! prompts over the status line.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Gauge, Widget};

use crate::tui::files::pane;
use crate::tui::files::preview::Body;
use crate::tui::files::{FilesUi, PREVIEW_IMAGE};
use crate::tui::theme::Theme;
use crate::tui::widgets::fit::{self, human_size};
use crate::tui::widgets::image::{ImageLayout, ImageStore};

/// Narrowest terminal that shows the files pane beside the outputs.
pub const SIDE_BY_SIDE: u16 = 100;
/// Fewest rows the preview gets under the listing.
const MIN_SPLIT_ROWS: u16 = 16;
/// Fewest rows a pane under the outputs gets (on a narrow terminal).
pub const MIN_PANE_ROWS: u16 = 8;
/// Fewest rows of outputs kept above a pane on a narrow terminal; with less
/// room than that and [`MIN_PANE_ROWS`], the focused pane takes the area.
pub const MIN_OUTPUT_ROWS: u16 = 4;

/// Splits the notebook area: the outputs' part and the files pane's, if shown.
/// On a narrow terminal a focused pane goes under the outputs (three fifths of
/// the rows, at least [`MIN_PANE_ROWS`]), and covers them only where fewer than
/// [`MIN_OUTPUT_ROWS`] would be left. The sessions pane takes the same place.
/// `shown`: a side pane is shown; `focused`: it has the keys.
pub fn split(area: Rect, shown: bool, focused: bool) -> (Rect, Option<Rect>) {
    if !shown {
        return (area, None);
    }
    if area.width >= SIDE_BY_SIDE {
        let [outputs, pane] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(area);
        (outputs, Some(pane))
    } else if focused {
        let pane_rows = (area.height.saturating_mul(3) / 5).max(MIN_PANE_ROWS);
        if area.height < pane_rows + MIN_OUTPUT_ROWS {
            return (area, Some(area));
        }
        let [outputs, pane] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(pane_rows)]).areas(area);
        (outputs, Some(pane))
    } else {
        (area, None)
    }
}

/// What the files pane's view reads besides the pane's state.
pub struct FilesView<'a> {
    /// The pane has the keys.
    pub focused: bool,
    /// The palette.
    pub theme: &'a Theme,
    /// The images the views share (a previewed image is drawn from it).
    pub images: &'a mut ImageStore,
}

/// Draws the files pane (listing, preview, gauge) in `area`.
pub fn render(files: &mut FilesUi, cx: &mut FilesView<'_>, area: Rect, buf: &mut Buffer) {
    Clear.render(area, buf);
    files.pane.focused = cx.focused;
    let (area, gauge) = match &files.transfer {
        Some(_) if area.height > 4 => {
            let [rest, gauge] =
                Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
            (rest, Some(gauge))
        }
        _ => (area, None),
    };
    let showing = files.preview.is_some() || files.preview_loading.is_some();
    let (listing, preview_area) = if !showing {
        (Some(area), None)
    } else if area.height >= MIN_SPLIT_ROWS {
        let [l, p] =
            Layout::vertical([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(area);
        (Some(l), Some(p))
    } else {
        (None, Some(area))
    };
    if let Some(listing) = listing {
        let rows = usize::from(listing.height.saturating_sub(3));
        files.pane.keep_visible(rows);
        pane::render(listing, buf, &files.pane, cx.theme);
    }
    if let Some(p) = preview_area {
        files.view_size = (p.width, p.height);
        render_preview(files, cx, p, buf);
    } else {
        files.view_size = (area.width, area.height.saturating_mul(3) / 5);
    }
    if let (Some(g), Some(t)) = (gauge, &files.transfer) {
        render_gauge(t, g, buf, cx.theme);
    }
}

fn render_preview(files: &FilesUi, cx: &mut FilesView<'_>, area: Rect, buf: &mut Buffer) {
    let theme = cx.theme;
    let Some(preview) = &files.preview else {
        let name = files.preview_loading.as_deref().unwrap_or("");
        let block = Block::bordered().border_style(theme.border);
        let inner = block.inner(area);
        block.render(area, buf);
        let line = Line::styled(
            format!("loading {}…", crate::text::names::escape(name)),
            theme.muted,
        );
        buf.set_line(inner.x, inner.y, &line, inner.width);
        return;
    };
    if !matches!(preview.body, Body::Image(_)) {
        preview.render(area, buf, theme, files.preview_scroll);
        return;
    }
    let title = format!(
        " {} ",
        fit::truncate(&preview.name, usize::from(area.width.saturating_sub(4)))
    );
    let block = Block::bordered()
        .border_style(theme.border)
        .title(Span::styled(title, theme.accent));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height < 2 {
        return;
    }
    let caption = preview
        .text(theme)
        .lines
        .first()
        .cloned()
        .unwrap_or_default();
    buf.set_line(inner.x, inner.y, &caption, inner.width);
    let image_area = Rect {
        y: inner.y + 1,
        height: inner.height - 1,
        ..inner
    };
    let images = &mut *cx.images;
    // Fitted whole inside the pane: its width and the rows under the caption.
    match images.layout_in(PREVIEW_IMAGE, image_area.width, image_area.height) {
        ImageLayout::Rows(_) => images.render_rows(PREVIEW_IMAGE, 0, image_area, buf),
        ImageLayout::Unavailable(why) => {
            let line = Line::styled(fit::one_line(&why), theme.error);
            buf.set_line(image_area.x, image_area.y, &line, image_area.width);
        }
    }
}

fn render_gauge(
    t: &crate::tui::files::Transfer,
    area: Rect,
    buf: &mut Buffer,
    theme: &crate::tui::theme::Theme,
) {
    let (ratio, amount) = match t.total {
        Some(total) if total > 0 => (
            (t.done as f64 / total as f64).clamp(0.0, 1.0),
            format!("{} of {}", human_size(t.done), human_size(total)),
        ),
        _ => (0.0, human_size(t.done)),
    };
    let label = format!("{} {amount} (Esc cancels)", fit::one_line(&t.label));
    Gauge::default()
        .gauge_style(theme.accent)
        .ratio(ratio)
        .label(label)
        .render(area, buf);
}
