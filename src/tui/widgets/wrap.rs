//! Cutting styled lines to a width: hard wrapping for the outputs pane (code and
//! tracebacks read better cut at the edge than re-flowed at spaces) and the
//! cell editor. Widths are terminal columns, not bytes or chars.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Columns `symbol` takes on screen.
fn columns(symbol: &str) -> usize {
    Span::raw(symbol).width()
}

/// `line` cut into pieces at most `width` columns wide. Every piece keeps the
/// line's own style; an empty line stays one empty line.
pub fn wrap(line: Line<'static>, width: u16) -> Vec<Line<'static>> {
    wrap_at_most(line, width, usize::MAX)
}

/// The first `max_rows` pieces of [`wrap`], without cutting the rest of the line
/// (for previews of long lines).
pub fn wrap_at_most(line: Line<'static>, width: u16, max_rows: usize) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    if max_rows == 0 {
        return Vec::new();
    }
    if line.width() <= width {
        return vec![line];
    }
    let line_style = line.style;
    let mut pieces = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for span in &line.spans {
        let mut run = String::new();
        for g in span.styled_graphemes(Style::default()) {
            let w = columns(g.symbol);
            if used + w > width && used > 0 {
                flush_run(&mut current, &mut run, span.style);
                pieces.push(Line::from(std::mem::take(&mut current)).style(line_style));
                used = 0;
                if pieces.len() == max_rows {
                    return pieces;
                }
            }
            run.push_str(g.symbol);
            used += w;
        }
        flush_run(&mut current, &mut run, span.style);
    }
    if !current.is_empty() || pieces.is_empty() {
        pieces.push(Line::from(current).style(line_style));
    }
    pieces
}

fn flush_run(current: &mut Vec<Span<'static>>, run: &mut String, style: Style) {
    if !run.is_empty() {
        current.push(Span::styled(std::mem::take(run), style));
    }
}

/// How many rows [`wrap`] cuts a line of plain `text` into at `width` (grapheme
/// clusters counted per character; close enough to size a scroll bar or a
/// virtual list, which clamp to the real rows when drawing).
pub fn rows_needed(text: &str, width: u16) -> usize {
    let width = usize::from(width.max(1));
    if text.is_ascii() {
        return text.len().div_ceil(width).max(1);
    }
    let mut rows = 1;
    let mut used = 0;
    for c in text.chars() {
        let mut buf = [0u8; 4];
        let w = columns(c.encode_utf8(&mut buf));
        if used + w > width && used > 0 {
            rows += 1;
            used = 0;
        }
        used += w;
    }
    rows
}

/// Columns taken by the first `chars` characters of `text`.
pub fn columns_of_prefix(text: &str, chars: usize) -> usize {
    text.chars()
        .take(chars)
        .map(|c| {
            let mut buf = [0u8; 4];
            columns(c.encode_utf8(&mut buf))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use ratatui::style::Color;

    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn wraps_at_width_and_keeps_span_styles() {
        let red = Style::new().fg(Color::Red);
        let line = Line::from(vec![Span::raw("abc"), Span::styled("defgh", red)]);
        let out = wrap(line, 4);
        assert_eq!(text(&out), vec!["abcd", "efgh"]);
        assert_eq!(out[1].spans[0].style, red);
    }

    #[test]
    fn short_and_empty_lines_stay_whole() {
        assert_eq!(text(&wrap(Line::raw("ab"), 4)), vec!["ab"]);
        assert_eq!(text(&wrap(Line::default(), 4)), vec![""]);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        assert_eq!(text(&wrap(Line::raw("日本語"), 4)), vec!["日本", "語"]);
        assert_eq!(columns_of_prefix("日本語", 2), 4);
    }

    #[test]
    fn wrap_at_most_stops_early_and_rows_needed_agrees() {
        let long = Line::raw("abcdefghij");
        assert_eq!(text(&wrap_at_most(long, 3, 2)), vec!["abc", "def"]);
        for s in ["", "ab", "abcdefghij", "日本語の", "a日本"] {
            assert_eq!(rows_needed(s, 3), wrap(Line::raw(s), 3).len(), "{s}");
        }
    }
}
