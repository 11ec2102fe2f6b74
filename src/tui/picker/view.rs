//! The upload picker's popup (state in `picker/mod.rs`), centred over the
//! notebook area: the local folder in the title, one row per entry (`[x]` for a
//! marked file, folders with a trailing `/`, sizes in binary units, files over
//! the upload limit flagged), the counts in the bottom border, the notice of
//! the last key and a line of keys at the bottom.
//!
//! Drawing reads only the picker's state (sizes were read when the folder was
//! listed) and moves only its scroll. Local names are untrusted like remote
//! ones (a file can be named `a\x1b[2Jb`): every name and path passes
//! [`fit::one_line`] before it reaches the buffer.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Widget};

use crate::client::MAX_UPLOAD;
use crate::tui::picker::{FilePicker, PickerEntry};
use crate::tui::theme::Theme;
use crate::tui::widgets::fit::{self, human_size};

/// The keys, on the popup's last row.
const HINTS: &str = "Space mark · a all · Enter upload · ←/→ folders · . hidden · Esc close";
/// Width of the size column (`1023 KiB`).
const SIZE_COLUMNS: usize = 8;
/// Width of the flag column of files over the limit.
const FLAG_COLUMNS: usize = 8;
/// The flag of files over the limit.
const TOO_BIG: &str = "too big";
/// The mark column (`[x] `).
const MARK_COLUMNS: usize = 4;
/// Narrowest the name column gets before other columns are dropped.
const MIN_NAME: usize = 12;
/// Widest the popup gets.
const MAX_WIDTH: u16 = 100;
/// Fewest rows the popup gets where the area has them.
const MIN_HEIGHT: u16 = 12;

/// The popup's place in `area` for a listing of `entries` rows: centred, at
/// most 100 columns (`MAX_WIDTH`), as tall as the listing needs (at least 12
/// rows, `MIN_HEIGHT`), a column and a row of the area left around it where
/// there is room.
pub fn popup_area(area: Rect, entries: usize) -> Rect {
    let width = area
        .width
        .saturating_sub(4)
        .clamp(area.width.min(30), MAX_WIDTH);
    // Borders, the notice and the keys: 4 rows besides the listing.
    let wanted = u16::try_from(entries.saturating_add(4)).unwrap_or(u16::MAX);
    let height = wanted
        .max(MIN_HEIGHT)
        .min(area.height.saturating_sub(2))
        .max(area.height.min(MIN_HEIGHT));
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Draws the picker as a popup over `area` (the notebook area), moving its
/// scroll just enough to show the selection.
pub fn render(picker: &mut FilePicker, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let popup = popup_area(area, picker.entries().len());
    Clear.render(popup, buf);
    let room = usize::from(popup.width.saturating_sub(4));
    let title = format!(
        " Upload · {} ",
        keep_tail(&picker_cwd(picker), room.saturating_sub(11))
    );
    let block = Block::bordered()
        .border_style(theme.border_focused)
        .title(Span::styled(title, theme.accent))
        .title_bottom(Span::styled(format!(" {} ", summary(picker)), theme.muted));
    let inner = block.inner(popup);
    block.render(popup, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let width = usize::from(inner.width);
    let mut bottom = inner.bottom();
    let mut footer = |text: String, style: Style, buf: &mut Buffer| {
        if bottom > inner.y {
            bottom -= 1;
            let line = Line::styled(fit::truncate(&fit::one_line(&text), width), style);
            buf.set_line(inner.x, bottom, &line, inner.width);
        }
    };
    footer(HINTS.to_string(), theme.muted, buf);
    if let Some(notice) = &picker.notice {
        footer(notice.clone(), theme.warning, buf);
    }
    let list = Rect {
        height: bottom - inner.y,
        ..inner
    };
    render_rows(picker, list, buf, theme);
}

/// The entries from the scroll position (moved to show the selection).
fn render_rows(picker: &mut FilePicker, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let rows = usize::from(area.height);
    if rows == 0 {
        return;
    }
    if picker.entries().len() == 0 {
        let line = Line::styled("(nothing to list)", theme.muted);
        buf.set_line(area.x, area.y, &line, area.width);
        return;
    }
    let selected = picker.selected();
    picker.scroll = visible_start(picker.scroll, selected, rows);
    let (name_width, shown) = fit::layout(
        usize::from(area.width).saturating_sub(MARK_COLUMNS),
        MIN_NAME,
        &[SIZE_COLUMNS, FLAG_COLUMNS],
    );
    // No wider than the longest name, so sizes stay near their names.
    let longest = picker
        .entries()
        .map(|e| fit::columns(&fit::one_line(e.name)))
        .max();
    let name_width = name_width.min(longest.unwrap_or(0).max(MIN_NAME));
    let shown_rows = picker.entries().enumerate().skip(picker.scroll).take(rows);
    for (y, (i, entry)) in (area.y..).zip(shown_rows) {
        let line = row(&entry, name_width, shown[0], shown[1], theme);
        buf.set_line(area.x, y, &line, area.width);
        if i == selected {
            buf.set_style(Rect::new(area.x, y, area.width, 1), theme.selection);
        }
    }
}

/// One row: mark, name, size and the flag of a file over the limit.
fn row(
    entry: &PickerEntry<'_>,
    name: usize,
    size: bool,
    flag: bool,
    theme: &Theme,
) -> Line<'static> {
    let mark = match (entry.is_dir, entry.marked) {
        (true, _) => "    ",
        (false, true) => "[x] ",
        (false, false) => "[ ] ",
    };
    let name_style = if entry.is_dir {
        theme.accent
    } else {
        Style::new()
    };
    let mut spans = vec![
        Span::styled(mark, theme.accent),
        Span::styled(fit::pad(&fit::one_line(entry.name), name), name_style),
    ];
    let too_big = entry.size.is_some_and(|s| s > MAX_UPLOAD);
    if size {
        let text = entry.size.map(human_size).unwrap_or_default();
        let style = if too_big { theme.error } else { Style::new() };
        spans.push(Span::styled(
            format!(" {}", fit::pad_left(&text, SIZE_COLUMNS)),
            style,
        ));
    }
    if flag && too_big {
        spans.push(Span::styled(format!(" {TOO_BIG}"), theme.error));
    }
    Line::from(spans)
}

/// The counts in the bottom border: `3 files · 1 folder · 2 marked · hidden shown`.
fn summary(picker: &FilePicker) -> String {
    let (mut files, mut folders) = (0, 0);
    for entry in picker.entries().filter(|e| e.name != "../") {
        if entry.is_dir {
            folders += 1;
        } else {
            files += 1;
        }
    }
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut parts = vec![plural(files, "file"), plural(folders, "folder")];
    parts.push(format!("{} marked", picker.marked().len()));
    if picker.show_hidden() {
        parts.push("hidden shown".into());
    }
    parts.join(" · ")
}

fn picker_cwd(picker: &FilePicker) -> String {
    fit::one_line(&picker.cwd().to_string_lossy())
}

/// `text` cut to at most `width` columns from the left (`…/folder`): the end of
/// a path says the most.
fn keep_tail(text: &str, width: usize) -> String {
    if fit::columns(text) <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = fit::columns(c.encode_utf8(&mut [0u8; 4]));
        if used + w > width {
            break;
        }
        used += w;
        tail.push(c);
    }
    let mut out = String::from(fit::ELLIPSIS);
    out.extend(tail.into_iter().rev());
    out
}

/// The first row to show so that `selected` is among `rows` rows, from `scroll`.
fn visible_start(scroll: usize, selected: usize, rows: usize) -> usize {
    let rows = rows.max(1);
    if selected < scroll {
        selected
    } else if selected >= scroll + rows {
        selected + 1 - rows
    } else {
        scroll
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
