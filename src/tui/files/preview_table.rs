//! The table preview of a CSV or TSV file: the first rows of its head parsed
//! with the `csv` crate (flexible rows, quoted line breaks shown as `↵`),
//! every cell sanitised, the columns fitted to the pane's width, and drawn
//! with a rule under the header.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::TablePreview;
use crate::tui::theme::Theme;
use crate::tui::widgets::{fit, sanitize};

/// Widest a table column gets before the table is fitted to the width.
const MAX_COLUMN: usize = 40;
/// Narrowest a column is squeezed to when the table is too wide.
const MIN_COLUMN: usize = 6;

/// The delimiter of a CSV (`,`) or TSV (tab) file, by extension or content type.
pub(super) fn delimiter_of(ext: Option<&str>, essence: Option<&str>) -> Option<u8> {
    match (ext, essence) {
        (Some("csv"), _) | (_, Some("text/csv" | "application/csv")) => Some(b','),
        (Some("tsv" | "tab"), _) | (_, Some("text/tab-separated-values")) => Some(b'\t'),
        _ => None,
    }
}

/// The first rows of delimited `text`: a header and up to `rows - 2` data rows
/// (the header and the rule under it take two). `None` when it does not parse,
/// so the caller shows it as text.
pub(super) fn table(
    text: &str,
    delimiter: u8,
    complete: bool,
    rows: usize,
    width: usize,
    notes: &mut Vec<String>,
) -> Option<TablePreview> {
    let wanted = rows.saturating_sub(1).max(2);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut more = false;
    for record in reader.byte_records() {
        let record = record.ok()?;
        if out.len() == wanted {
            more = true;
            break;
        }
        out.push(record.iter().map(cell_text).collect());
    }
    // The last row of a cut-off head may itself be cut.
    if !complete && !more && out.len() > 1 {
        out.pop();
        more = true;
    }
    if out.is_empty() {
        return None;
    }
    if more {
        notes.push(format!("first {} rows shown", out.len().saturating_sub(1)));
    }
    let widths = fit_widths(&out, width);
    Some(TablePreview { rows: out, widths })
}

/// One cell as one sanitised line (a line break inside a quoted cell shows as
/// `↵`).
fn cell_text(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    sanitize::plain(&text).trim().replace('\n', "↵")
}

/// Column widths: each column's widest cell (at most [`MAX_COLUMN`]), then the
/// widest columns narrowed (down to [`MIN_COLUMN`]) until the row fits `width`.
fn fit_widths(rows: &[Vec<String>], width: usize) -> Vec<usize> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![1usize; columns];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(fit::columns(cell).min(MAX_COLUMN));
        }
    }
    let gaps = SEPARATOR_COLUMNS * columns.saturating_sub(1);
    while widths.iter().sum::<usize>() + gaps > width {
        let Some((i, &w)) = widths.iter().enumerate().max_by_key(|(_, w)| **w) else {
            break;
        };
        if w <= MIN_COLUMN {
            break;
        }
        widths[i] = w - 1;
    }
    widths
}

/// Between two table columns.
const SEPARATOR: &str = " │ ";
const SEPARATOR_COLUMNS: usize = 3;

pub(super) fn table_lines(table: &TablePreview, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::with_capacity(table.rows.len() + 1);
    for (r, row) in table.rows.iter().enumerate() {
        let style = if r == 0 { theme.accent } else { Style::new() };
        let mut spans = Vec::with_capacity(table.widths.len() * 2);
        for (i, &w) in table.widths.iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(SEPARATOR, theme.muted));
            }
            let cell = row.get(i).map_or("", String::as_str);
            spans.push(Span::styled(fit::pad(cell, w), style));
        }
        lines.push(Line::from(spans));
        if r == 0 {
            let rule: Vec<String> = table.widths.iter().map(|&w| "─".repeat(w)).collect();
            lines.push(Line::styled(rule.join("─┼─"), theme.muted));
        }
    }
    lines
}
