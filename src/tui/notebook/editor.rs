//! The cell editor, drawn by hand: ratatui-textarea keeps the text and the cursor
//! and does the editing, but has no highlighting hook, so this view draws the
//! syntect-highlighted lines itself, wraps long lines (a `…` in the last column
//! where a line goes on in the next row; issue 27: scrolling sideways cut the
//! start of every line), scrolls the rows to keep the cursor in sight and
//! places the terminal cursor with `Frame::set_cursor_position`. The key hints in
//! its title come from the keymap of the focused mode.
//!
//! It also holds the two edits that are more than a key: Enter with Python
//! indentation ([`newline`]) and taking text back from `$EDITOR`
//! ([`replace_text`]).

use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Widget};
use ratatui_textarea::TextArea;

use crate::notebook::language::Language;
use crate::tui::keymap::{Keymap, Mode};
use crate::tui::theme::Theme;
use crate::tui::widgets::highlight::highlight;
use crate::tui::widgets::wrap::{columns_of_prefix, rows_needed, wrap};

/// What a line ending in `:` adds to the next line's indentation.
const INDENT: &str = "    ";
/// What the empty editor says after the language's "Type … here".
const PLACEHOLDER_TAIL: &str = "; Enter adds a line, Up recalls earlier cells";

/// The editor's highlighted lines (rebuilt only when the text changes), cut
/// into screen rows at the editor's width (long lines wrap: every line keeps
/// its first columns, and nothing is hidden sideways), and its scroll
/// position in rows.
#[derive(Debug, Default)]
pub struct EditorView {
    /// The language the text is highlighted as.
    language: Language,
    source: String,
    lines: Vec<Line<'static>>,
    /// The wrapped rows for `width`, and where each text line's rows begin.
    rows: Vec<Row>,
    starts: Vec<usize>,
    width: usize,
    top: usize,
}

/// One screen row of the editor: a piece of a text line, and whether the
/// line goes on in the next row (drawn with a [`WRAP_MARK`] at the edge).
#[derive(Debug, Clone)]
struct Row {
    text: Line<'static>,
    cut: bool,
}

/// Drawn in the last column of a row whose line goes on in the next row.
const WRAP_MARK: &str = "…";

impl EditorView {
    /// Highlights the text as `language` from now on.
    pub fn set_language(&mut self, language: Language) {
        if language != self.language {
            self.language = language;
            self.lines.clear();
            self.rows.clear();
        }
    }

    /// Highlights the text of `editor` (when it changed) and cuts its lines
    /// into rows of at most `width` columns (when the text or the width
    /// changed).
    fn layout(&mut self, editor: &TextArea<'_>, width: usize) {
        let source = editor.lines().join("\n");
        let changed = source != self.source || self.lines.is_empty();
        if changed {
            self.lines = highlight(&source, self.language);
            self.source = source;
        }
        if !changed && width == self.width && !self.rows.is_empty() {
            return;
        }
        self.width = width;
        self.rows.clear();
        self.starts.clear();
        let count = editor.lines().len().max(1);
        for i in 0..count {
            self.starts.push(self.rows.len());
            let line = self.lines.get(i).cloned().unwrap_or_default();
            let pieces = wrap(line, u16::try_from(width).unwrap_or(u16::MAX));
            let last = pieces.len().saturating_sub(1);
            self.rows
                .extend(pieces.into_iter().enumerate().map(|(j, text)| Row {
                    text,
                    cut: j < last,
                }));
        }
    }

    /// The screen row (from the text's first) and column of the cursor at
    /// (`row`, `col`), `col` in columns of its line.
    fn locate(&self, row: usize, col: usize) -> (usize, usize) {
        let first = self.starts.get(row).copied().unwrap_or(0);
        let end = self.starts.get(row + 1).copied().unwrap_or(self.rows.len());
        let mut col = col;
        for (i, piece) in self.rows.iter().enumerate().take(end).skip(first) {
            let w = piece.text.width();
            if col < w || i + 1 >= end {
                return (i, col);
            }
            col -= w;
        }
        (first, col)
    }

    /// Moves the scroll position so that screen row `row` is inside a
    /// window of `height` rows.
    fn reveal(&mut self, row: usize, height: usize) {
        if row < self.top {
            self.top = row;
        } else if row >= self.top + height {
            self.top = row + 1 - height;
        }
    }
}

/// The width text is wrapped at in an editor whose inside is `inner`
/// columns wide: one column is kept for the cursor at a line's end and for
/// the [`WRAP_MARK`].
fn wrap_width(inner: usize) -> usize {
    inner.saturating_sub(1).max(1)
}

/// Screen rows `lines` take in an editor `width` columns wide (its borders
/// included), long lines wrapped: what [`height`] is asked for.
pub fn wrapped_rows(lines: &[String], width: u16) -> usize {
    let at = u16::try_from(wrap_width(usize::from(width.saturating_sub(2)))).unwrap_or(u16::MAX);
    lines
        .iter()
        .map(|l| rows_needed(l, at))
        .sum::<usize>()
        .max(1)
}

/// Rows the editor wants for `lines` lines of text, within `available` rows.
pub fn height(lines: usize, available: u16) -> u16 {
    let wanted = u16::try_from(lines).unwrap_or(u16::MAX).saturating_add(2);
    let max = (available / 2).max(3);
    wanted.clamp(3, max)
}

/// The indentation of a new line after `before` (the text left of the cursor)
/// in `language`: the same as the current line's, four spaces more where a
/// block opens (comments aside): after a trailing `:` in Python, `{`, `(` or
/// `[` in JavaScript, `{`, `then`, `do` or `else` in shell.
pub fn newline_indent(before: &str, language: Language) -> String {
    let mut indent: String = before
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let code = match language {
        Language::JavaScript => before.split("//").next().unwrap_or(before),
        Language::Python | Language::Shell => strip_comment(before),
    };
    let code = code.trim_end();
    let opens = match language {
        Language::Python => code.ends_with(':'),
        Language::JavaScript => code.ends_with(['{', '(', '[']),
        Language::Shell => {
            code.ends_with('{')
                || code
                    .rsplit([' ', ';', '\t'])
                    .next()
                    .is_some_and(|w| matches!(w, "then" | "do" | "else"))
        }
    };
    if opens {
        indent.push_str(INDENT);
    }
    indent
}

/// `line` without a trailing `# comment` (a `#` inside a string literal stays).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Enter in the editor: a new line, indented by [`newline_indent`] for
/// `language`.
pub fn newline(editor: &mut TextArea<'_>, language: Language) {
    let (row, col) = (editor.cursor().0, editor.cursor().1);
    let before: String = editor
        .lines()
        .get(row)
        .map(|l| l.chars().take(col).collect())
        .unwrap_or_default();
    let indent = newline_indent(&before, language);
    editor.insert_newline();
    if !indent.is_empty() {
        editor.insert_str(indent);
    }
}

/// What the empty editor says for `language`.
fn placeholder(language: Language) -> String {
    let what = match language {
        Language::Python => "Python",
        Language::Shell => "shell commands",
        Language::JavaScript => "JavaScript",
    };
    format!("Type {what} here{PLACEHOLDER_TAIL}")
}

/// Replaces the whole text with `text` as edits (so Ctrl+Z brings the old text
/// back); nothing happens when the text is the same.
pub fn replace_text(editor: &mut TextArea<'_>, text: &str) {
    if editor.lines().join("\n") == text {
        return;
    }
    editor.select_all();
    editor.insert_str(text);
}

/// Draws the editor in `area` and puts the terminal cursor at its cursor
/// (when `focused`); returns where that cursor is on screen (the completion
/// list is drawn next to it). The title hints are those of the editor's keys
/// when it has the focus, else the notebook's.
#[allow(clippy::too_many_arguments)]
pub fn render(
    frame: &mut Frame<'_>,
    area: Rect,
    editor: &TextArea<'_>,
    view: &mut EditorView,
    next_count: u32,
    focused: bool,
    theme: &Theme,
    keymap: &Keymap,
) -> Position {
    let (border, mode) = if focused {
        (theme.border_focused, Mode::Editor)
    } else {
        (theme.border, Mode::Outputs)
    };
    let title = format!(" In [{next_count}] ");
    // Both corners, the title, a gap and the spaces around the hints.
    let room = usize::from(area.width).saturating_sub(title.chars().count() + 5);
    let hints = keymap.hint_line(mode, room);
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(title);
    if !hints.is_empty() {
        block = block.title_top(Line::styled(format!(" {hints} "), theme.muted).right_aligned());
    }
    let inner = block.inner(area);
    block.render(area, frame.buffer_mut());
    if inner.width == 0 || inner.height == 0 {
        return Position::new(inner.x, inner.y);
    }
    let (row, col) = (editor.cursor().0, editor.cursor().1);
    let line_text = editor.lines().get(row).map_or("", String::as_str);
    let width = usize::from(inner.width);
    view.layout(editor, wrap_width(width));
    let (cursor_row, cursor_col) = view.locate(row, columns_of_prefix(line_text, col));
    view.reveal(cursor_row, usize::from(inner.height));
    let top = view.top;
    let buf = frame.buffer_mut();
    if editor.is_empty() {
        buf.set_line(
            inner.x,
            inner.y,
            &Line::styled(placeholder(view.language), theme.muted),
            inner.width,
        );
    } else {
        for (piece, y) in view.rows.iter().skip(top).zip(inner.y..inner.bottom()) {
            let mut shown = piece.text.clone();
            if !theme.colors {
                // NO_COLOR: the highlighting keeps its bold and italics only.
                for span in &mut shown.spans {
                    span.style = Style::new().add_modifier(span.style.add_modifier);
                }
            }
            buf.set_line(inner.x, y, &shown, inner.width);
            if piece.cut {
                let x = inner.x + u16::try_from(width - 1).unwrap_or(0);
                buf.set_string(x, y, WRAP_MARK, theme.muted);
            }
        }
    }
    let x = inner.x + u16::try_from(cursor_col).unwrap_or(0).min(inner.width - 1);
    let y = inner.y + u16::try_from(cursor_row - top).unwrap_or(0);
    if focused {
        frame.set_cursor_position(Position::new(x, y));
    }
    Position::new(x, y)
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
    fn enter_keeps_the_indentation_and_adds_four_after_a_colon() {
        assert_eq!(newline_indent("x = 1", Language::Python), "");
        assert_eq!(
            newline_indent("for i in range(3):", Language::Python),
            "    "
        );
        assert_eq!(newline_indent("    if i:  ", Language::Python), "        ");
        assert_eq!(newline_indent("    print(i)", Language::Python), "    ");
        assert_eq!(
            newline_indent("    else:  # the rest", Language::Python),
            "        "
        );
        assert_eq!(newline_indent("d = {'#': 1}", Language::Python), "");
        assert_eq!(
            newline_indent("s = \"a:\"  # not a block:", Language::Python),
            ""
        );
        assert_eq!(newline_indent("x[1:", Language::Python), "    ");
    }

    #[test]
    fn enter_indents_after_a_block_opens_in_javascript_and_shell() {
        let js = |line| newline_indent(line, Language::JavaScript);
        assert_eq!(js("function f(x) {"), "    ");
        assert_eq!(js("  const a = ["), "      ");
        assert_eq!(js("let x = 1; // {"), "");
        assert_eq!(js("if (ok): "), "");
        let sh = |line| newline_indent(line, Language::Shell);
        assert_eq!(sh("for f in *.csv; do"), "    ");
        assert_eq!(sh("if [ -f a ]; then"), "    ");
        assert_eq!(sh("f() {"), "    ");
        assert_eq!(sh("echo done"), "");
        assert_eq!(sh("echo redo"), "");
    }

    fn typed(editor: &mut TextArea<'_>, text: &str) {
        for c in text.chars() {
            if c == '\n' {
                newline(editor, Language::Python);
            } else {
                editor.insert_char(c);
            }
        }
    }

    #[test]
    fn newline_indents_a_block() {
        let mut editor = TextArea::default();
        typed(&mut editor, "def f(x):\nif x:\nreturn 1\n");
        assert_eq!(
            editor.lines(),
            ["def f(x):", "    if x:", "        return 1", "        "]
        );
        // In the middle of a line, the rest moves down after the indentation.
        let mut editor = TextArea::from(["if x:pass"]);
        editor.move_cursor(ratatui_textarea::CursorMove::Jump(0, 5));
        newline(&mut editor, Language::Python);
        assert_eq!(editor.lines(), ["if x:", "    pass"]);
    }

    #[test]
    fn undo_and_redo_step_through_edits() {
        let mut editor = TextArea::default();
        typed(&mut editor, "if x:\n");
        assert_eq!(editor.lines(), ["if x:", "    "]);
        editor.undo();
        editor.undo();
        assert_eq!(editor.lines(), ["if x:"]);
        editor.redo();
        assert_eq!(editor.lines(), ["if x:", ""]);
    }

    #[test]
    fn replacing_the_text_can_be_undone() {
        let mut editor = TextArea::from(["a = 1", "b = 2"]);
        replace_text(&mut editor, "c = 3\nd = 4\n");
        assert_eq!(editor.lines(), ["c = 3", "d = 4", ""]);
        while editor.undo() {}
        assert_eq!(editor.lines(), ["a = 1", "b = 2"]);
        replace_text(&mut editor, "");
        assert!(editor.is_empty());
    }

    #[test]
    fn reveal_scrolls_to_the_cursor() {
        let mut v = EditorView::default();
        v.reveal(10, 3);
        assert_eq!(v.top, 8);
        v.reveal(2, 3);
        assert_eq!(v.top, 2);
    }

    #[test]
    fn long_lines_wrap_and_the_cursor_follows_its_row() {
        let long = format!("s = '{}'", "a".repeat(20));
        let editor = TextArea::from(["first = 1".to_string(), long.clone(), "x".to_string()]);
        let mut v = EditorView::default();
        v.layout(&editor, 10);
        let rows: Vec<String> = v.rows.iter().map(|r| r.text.to_string()).collect();
        assert_eq!(
            rows,
            ["first = 1", "s = 'aaaaa", "aaaaaaaaaa", "aaaaa'", "x"]
        );
        let cut: Vec<bool> = v.rows.iter().map(|r| r.cut).collect();
        assert_eq!(cut, [false, true, true, false, false]);
        assert_eq!(v.locate(0, 3), (0, 3));
        assert_eq!(v.locate(1, 0), (1, 0));
        assert_eq!(v.locate(1, 10), (2, 0));
        assert_eq!(v.locate(1, 26), (3, 6));
        assert_eq!(v.locate(2, 1), (4, 1));
        assert_eq!(wrapped_rows(editor.lines(), 13), 5);
        // A narrower editor rewraps the same text.
        v.layout(&editor, 20);
        assert_eq!(v.rows.len(), 4);
    }
}
