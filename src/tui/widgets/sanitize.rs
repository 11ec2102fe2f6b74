//! Session text as ratatui lines: the sanitizer of [`crate::text::sanitize`] (the
//! one gate between session output and the screen: only SGR survives), then SGR
//! sequences become ratatui styles through ansi-to-tui.

use ansi_to_tui::IntoText;
use ratatui::text::Line;

pub use crate::text::sanitize::{clean, plain};

/// Session text as styled lines: SGR sequences become styles, everything else that
/// could drive the terminal is gone. A single trailing newline ends the last line
/// rather than adding an empty one.
pub fn to_lines(raw: &str) -> Vec<Line<'static>> {
    let cleaned = clean(raw, true);
    let cleaned = cleaned.strip_suffix('\n').unwrap_or(&cleaned);
    match cleaned.into_text() {
        Ok(text) => text.lines,
        Err(_) => plain_lines(raw),
    }
}

/// Session text with every escape sequence removed, SGR included, as lines.
pub fn plain_lines(raw: &str) -> Vec<Line<'static>> {
    let cleaned = clean(raw, false);
    let cleaned = cleaned.strip_suffix('\n').unwrap_or(&cleaned);
    cleaned
        .split('\n')
        .map(|l| Line::raw(l.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use ratatui::style::Color;

    use super::*;

    fn text_of(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn sgr_colours_become_styles() {
        let lines = to_lines("\x1b[31mred\x1b[0m plain\n");
        assert_eq!(text_of(&lines), vec!["red plain"]);
        let red = &lines[0].spans[0];
        assert_eq!(red.content, "red");
        assert_eq!(red.style.fg, Some(Color::Red));
        assert!(lines[0].spans.iter().all(|s| !s.content.contains('\x1b')));
    }

    #[test]
    fn huge_sequences_make_one_line() {
        let long = format!("\x1b[{}31mx", "1;".repeat(10_000));
        assert_eq!(to_lines(&long).len(), 1);
    }

    /// A progress bar that colours its redraw keeps the colour.
    #[test]
    fn sgr_after_a_carriage_return_styles_the_redrawn_line() {
        let lines = to_lines("abc\r\x1b[31mxyz");
        assert_eq!(text_of(&lines), vec!["xyz"]);
        assert_eq!(lines[0].spans[0].style.fg, Some(Color::Red));
    }

    #[test]
    fn trailing_newline_does_not_add_a_line() {
        assert_eq!(text_of(&to_lines("42\n")), vec!["42"]);
        assert_eq!(text_of(&to_lines("a\n\nb")), vec!["a", "", "b"]);
    }
}
