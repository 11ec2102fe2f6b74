//! The cell editor, drawn by hand: ratatui-textarea keeps the text and the cursor
//! and does the editing, but has no highlighting hook, so this view draws the
//! syntect-highlighted lines itself, scrolls them to keep the cursor in sight and
//! places the terminal cursor with `Frame::set_cursor_position`.

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Widget};
use ratatui_textarea::TextArea;

use super::highlight::highlight;
use super::wrap::{columns_of_prefix, skip_columns};
use crate::tui::theme::Theme;

/// Key hints in the editor's title.
const HINTS: &str = " F5/Alt+Enter run · Esc notebook · PgUp/PgDn scroll · Ctrl+Q quit ";
const NOTEBOOK_HINTS: &str = " j/k scroll · Esc/Enter back to the cell · q quit ";
/// What the empty editor says.
const PLACEHOLDER: &str = "Type Python here; Enter adds a line, Up recalls earlier cells";

/// The editor's highlighted lines (rebuilt only when the text changes) and its
/// scroll position.
#[derive(Debug, Default)]
pub struct EditorView {
    source: String,
    lines: Vec<Line<'static>>,
    top: usize,
    left: usize,
}

impl EditorView {
    fn lines_for(&mut self, editor: &TextArea<'_>) -> &[Line<'static>] {
        let source = editor.lines().join("\n");
        if source != self.source || self.lines.is_empty() {
            self.lines = highlight(&source);
            self.source = source;
        }
        &self.lines
    }

    /// Moves the scroll position so that (`row`, `col`) is inside a `width` x
    /// `height` window.
    fn reveal(&mut self, row: usize, col: usize, width: usize, height: usize) {
        if row < self.top {
            self.top = row;
        } else if row >= self.top + height {
            self.top = row + 1 - height;
        }
        if col < self.left {
            self.left = col;
        } else if col >= self.left + width {
            self.left = col + 1 - width;
        }
    }
}

/// Rows the editor wants for `lines` lines of text, within `available` rows.
pub fn height(lines: usize, available: u16) -> u16 {
    let wanted = u16::try_from(lines).unwrap_or(u16::MAX).saturating_add(2);
    let max = (available / 2).max(3);
    wanted.clamp(3, max)
}

/// Draws the editor in `area` and puts the terminal cursor at its cursor.
pub fn render(
    frame: &mut Frame<'_>,
    area: Rect,
    editor: &TextArea<'_>,
    view: &mut EditorView,
    next_count: u32,
    focused: bool,
    theme: &Theme,
) {
    let (border, hints) = if focused {
        (theme.border_focused, HINTS)
    } else {
        (theme.muted, NOTEBOOK_HINTS)
    };
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(format!(" In [{next_count}] "))
        .title_top(Line::styled(hints, theme.muted).right_aligned());
    let inner = block.inner(area);
    block.render(area, frame.buffer_mut());
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let (row, col) = (editor.cursor().0, editor.cursor().1);
    let line_text = editor.lines().get(row).map_or("", String::as_str);
    let screen_col = columns_of_prefix(line_text, col);
    view.reveal(
        row,
        screen_col,
        usize::from(inner.width),
        usize::from(inner.height),
    );
    let (top, left) = (view.top, view.left);
    let buf = frame.buffer_mut();
    if editor.is_empty() {
        buf.set_line(
            inner.x,
            inner.y,
            &Line::styled(PLACEHOLDER, theme.muted),
            inner.width,
        );
    } else {
        let lines = view.lines_for(editor);
        for (line, y) in lines.iter().skip(top).zip(inner.y..inner.bottom()) {
            buf.set_line(inner.x, y, &skip_columns(line, left), inner.width);
        }
    }
    let x = inner.x + u16::try_from(screen_col - left).unwrap_or(0);
    let y = inner.y + u16::try_from(row - top).unwrap_or(0);
    if focused {
        frame.set_cursor_position(Position::new(x, y));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn height_grows_with_lines_within_half_the_screen() {
        assert_eq!(height(1, 24), 3);
        assert_eq!(height(5, 24), 7);
        assert_eq!(height(50, 24), 12);
        assert_eq!(height(50, 4), 3);
    }

    #[test]
    fn reveal_scrolls_to_the_cursor() {
        let mut v = EditorView::default();
        v.reveal(10, 0, 20, 3);
        assert_eq!(v.top, 8);
        v.reveal(2, 30, 20, 3);
        assert_eq!((v.top, v.left), (2, 11));
    }
}
