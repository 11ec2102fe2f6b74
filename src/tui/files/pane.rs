//! The files pane: the listing of a session folder (`/mnt/data` or a folder in
//! it) with name, size, modified time and type; folders first with a trailing
//! `/`; the artifact radar's marks (`+` new, `~` changed since before the last
//! cell); the user's marks (`*`, for downloading several files); the selection.
//!
//! [`FilesPaneState`] is the pane's own view state, changed only by the app's
//! update functions; [`render`] is pure: it reads the state and draws, never
//! touching the network or the clock (the state carries `now`). Remote names are
//! untrusted: they are drawn escaped as `ls -b` shows them
//! ([`crate::text::names::escape`]).

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, FixedOffset, Offset, Utc};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use crate::protocol::{FileKind, RemoteFile};
use crate::session::radar::{Change, Radar, content_type_essence, extension};
use crate::tui::theme::Theme;
use crate::tui::widgets::fit;

/// Width of the size column (`1023 KiB`).
const SIZE_COLUMNS: usize = 8;
/// Width of the modified column (`Mar 01 14:05`).
const TIME_COLUMNS: usize = 12;
/// Width of the type column.
const TYPE_COLUMNS: usize = 8;
/// Narrowest the name column gets before other columns are dropped.
const MIN_NAME: usize = 16;
/// The marks before each name: radar mark and user mark.
const MARK_COLUMNS: usize = 2;

/// The view state of the files pane.
#[derive(Debug, Clone)]
pub struct FilesPaneState {
    /// The listed folder as shown in the title (`/mnt/data`, `/mnt/data/sub`).
    pub folder: String,
    /// The entries, folders first, then by name (see [`Self::set_listing`]).
    entries: Vec<RemoteFile>,
    /// Index of the selected entry.
    pub selected: usize,
    /// Index of the first entry shown.
    pub scroll: usize,
    /// Paths ([`RemoteFile::path`]) the user marked.
    pub marked: BTreeSet<String>,
    /// The radar's marks by path: new or changed since before the last cell.
    pub changes: HashMap<String, Change>,
    /// Whether the pane has the focus.
    pub focused: bool,
    /// A line shown instead of an empty listing (`loading…`, an error).
    pub message: Option<String>,
    /// The time modified times are shown against (same day: time only).
    pub now: DateTime<Utc>,
    /// The offset times are shown in.
    pub tz: FixedOffset,
}

impl FilesPaneState {
    /// An empty pane for `folder`, showing times in UTC against `now`.
    pub fn new(folder: &str, now: DateTime<Utc>) -> Self {
        Self {
            folder: folder.to_string(),
            entries: Vec::new(),
            selected: 0,
            scroll: 0,
            marked: BTreeSet::new(),
            changes: HashMap::new(),
            focused: false,
            message: None,
            now,
            tz: Utc.fix(),
        }
    }

    /// The entries in display order.
    pub fn entries(&self) -> &[RemoteFile] {
        &self.entries
    }

    /// Replaces the listing: sorts it (folders first, then by path without
    /// regard to case), keeps the selection on the same path when it is still
    /// there, and forgets marks of paths that are gone.
    pub fn set_listing(&mut self, mut files: Vec<RemoteFile>) {
        let selected_path = self.selected_file().map(RemoteFile::path);
        files.sort_by(|a, b| {
            (a.kind != FileKind::Directory)
                .cmp(&(b.kind != FileKind::Directory))
                .then_with(|| a.path().to_lowercase().cmp(&b.path().to_lowercase()))
                .then_with(|| a.path().cmp(&b.path()))
        });
        self.entries = files;
        let paths: BTreeSet<String> = self.entries.iter().map(RemoteFile::path).collect();
        self.marked.retain(|p| paths.contains(p));
        self.selected = selected_path
            .and_then(|p| self.entries.iter().position(|f| f.path() == p))
            .unwrap_or(0)
            .min(self.entries.len().saturating_sub(1));
        self.message = None;
    }

    /// Takes the radar's new/changed marks of the entries of `folder`
    /// (relative to `/mnt/data`, `None` at the root; see [`Radar::marks_in`]).
    pub fn set_radar(&mut self, radar: &Radar, folder: Option<&str>) {
        self.changes = radar.marks_in(folder);
    }

    /// The selected entry.
    pub fn selected_file(&self) -> Option<&RemoteFile> {
        self.entries.get(self.selected)
    }

    /// Selects the entry at `path`, if listed. Returns whether it was.
    pub fn select_path(&mut self, path: &str) -> bool {
        match self.entries.iter().position(|f| f.path() == path) {
            Some(i) => {
                self.selected = i;
                true
            }
            None => false,
        }
    }

    /// Moves the selection by `delta` entries, stopping at either end.
    pub fn move_selection(&mut self, delta: isize) {
        let last = self.entries.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// Marks or unmarks the selected file or folder.
    pub fn toggle_mark(&mut self) {
        let Some(file) = self.selected_file() else {
            return;
        };
        let path = file.path();
        if !self.marked.remove(&path) {
            self.marked.insert(path);
        }
    }

    /// The files and folders an action applies to: the marked ones, else the
    /// selected entry.
    pub fn targets(&self) -> Vec<&RemoteFile> {
        if self.marked.is_empty() {
            self.selected_file().into_iter().collect()
        } else {
            self.entries
                .iter()
                .filter(|f| self.marked.contains(&f.path()))
                .collect()
        }
    }

    /// Moves [`Self::scroll`] so the selection is among `rows` visible rows.
    pub fn keep_visible(&mut self, rows: usize) {
        self.scroll = visible_start(self.scroll, self.selected, rows);
    }
}

/// The first row to show so that `selected` is visible among `rows` rows,
/// starting from `scroll`.
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

/// The name shown for an entry: its path below the listed folder (just the
/// name unless the listing was recursive), sanitised, folders with a trailing
/// `/`.
pub fn display_name(file: &RemoteFile) -> String {
    let mut name = crate::text::names::escape(&file.path());
    if file.kind == FileKind::Directory {
        name.push('/');
    }
    name
}

/// A human size of a file, blank for folders and unknown sizes.
fn size_text(file: &RemoteFile) -> String {
    match (file.kind, file.size) {
        (FileKind::File, Some(size)) => fit::human_size(size),
        _ => String::new(),
    }
}

/// The type column: `folder`, else the extension, else the content type's
/// subtype, else `file`.
pub fn type_label(file: &RemoteFile) -> String {
    if file.kind == FileKind::Directory {
        return "folder".into();
    }
    let ext = extension(&file.name)
        .filter(|e| e.len() <= TYPE_COLUMNS && e.chars().all(|c| c.is_ascii_alphanumeric()));
    if let Some(ext) = ext {
        return ext;
    }
    file.content_type
        .as_deref()
        .map(content_type_essence)
        .and_then(|e| e.split('/').nth(1).map(fit::one_line))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "file".into())
}

/// The columns of one listing row, fitted to `width`.
struct Columns {
    name: usize,
    size: bool,
    time: bool,
    kind: bool,
}

impl Columns {
    /// Columns for `width`, the name column no wider than the `longest` name
    /// (so the other columns stay near the names on a wide screen).
    fn fit(width: usize, longest: usize) -> Self {
        let (name, shown) = fit::layout(
            width.saturating_sub(MARK_COLUMNS),
            MIN_NAME,
            &[SIZE_COLUMNS, TIME_COLUMNS, TYPE_COLUMNS],
        );
        Self {
            name: name.min(longest.max(MIN_NAME)),
            size: shown[0],
            time: shown[1],
            kind: shown[2],
        }
    }

    fn header(&self, theme: &Theme) -> Line<'static> {
        let mut text = format!(
            "{}{}",
            " ".repeat(MARK_COLUMNS),
            fit::pad("Name", self.name)
        );
        if self.size {
            text.push(' ');
            text.push_str(&fit::pad_left("Size", SIZE_COLUMNS));
        }
        if self.time {
            text.push(' ');
            text.push_str(&fit::pad("Modified", TIME_COLUMNS));
        }
        if self.kind {
            text.push(' ');
            text.push_str(&fit::pad("Type", TYPE_COLUMNS));
        }
        Line::styled(text, theme.muted.add_modifier(Modifier::BOLD))
    }

    fn row(&self, state: &FilesPaneState, file: &RemoteFile, theme: &Theme) -> Line<'static> {
        let path = file.path();
        let (mark, mark_style) = match state.changes.get(&path) {
            Some(Change::New) => ("+", theme.success),
            Some(Change::Changed) => ("~", theme.warning),
            None => (" ", Style::new()),
        };
        let user_mark = if state.marked.contains(&path) {
            "*"
        } else {
            " "
        };
        let name = display_name(file);
        let name_style = if file.kind == FileKind::Directory {
            theme.accent
        } else {
            mark_style
        };
        let mut spans = vec![
            Span::styled(mark, mark_style),
            Span::styled(user_mark, theme.accent),
            Span::styled(fit::pad(&name, self.name), name_style),
        ];
        if self.size {
            spans.push(Span::raw(format!(
                " {}",
                fit::pad_left(&size_text(file), SIZE_COLUMNS)
            )));
        }
        if self.time {
            let time = file
                .modified
                .map(|t| fit::short_time(t, state.now, state.tz))
                .unwrap_or_default();
            spans.push(Span::styled(
                format!(" {}", fit::pad(&time, TIME_COLUMNS)),
                theme.muted,
            ));
        }
        if self.kind {
            spans.push(Span::styled(
                format!(" {}", fit::pad(&type_label(file), TYPE_COLUMNS)),
                theme.muted,
            ));
        }
        Line::from(spans)
    }
}

/// The counts under the listing: `5 files · 1 folder · 2 new · 1 changed · 2 marked`.
fn summary(state: &FilesPaneState) -> String {
    let folders = state
        .entries
        .iter()
        .filter(|f| f.kind == FileKind::Directory)
        .count();
    let files = state.entries.len() - folders;
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = vec![plural(files, "file", "files")];
    if folders > 0 {
        parts.push(plural(folders, "folder", "folders"));
    }
    // Files only: a folder's mark stands for the files inside it.
    let marks = |change: Change| {
        state
            .entries
            .iter()
            .filter(|f| f.kind == FileKind::File && state.changes.get(&f.path()) == Some(&change))
            .count()
    };
    let (new, changed) = (marks(Change::New), marks(Change::Changed));
    if new > 0 {
        parts.push(format!("{new} new"));
    }
    if changed > 0 {
        parts.push(format!("{changed} changed"));
    }
    if !state.marked.is_empty() {
        parts.push(format!("{} marked", state.marked.len()));
    }
    parts.join(" · ")
}

/// Draws the files pane in `area`: a bordered block titled with the folder, a
/// header row, then one row per entry from the scroll position (moved just
/// enough to show the selection), the counts in the bottom border.
pub fn render(area: Rect, buf: &mut Buffer, state: &FilesPaneState, theme: &Theme) {
    let border = if state.focused {
        theme.border_focused
    } else {
        theme.border
    };
    let title = format!(" Files · {} ", crate::text::names::escape(&state.folder));
    let block = Block::bordered()
        .border_style(border)
        .title(Span::styled(title, theme.accent))
        .title_bottom(Span::styled(format!(" {} ", summary(state)), theme.muted));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let width = usize::from(inner.width);
    let longest = state
        .entries
        .iter()
        .map(|f| fit::columns(&display_name(f)))
        .max()
        .unwrap_or(0);
    let columns = Columns::fit(width, longest);
    let mut y = inner.y;
    buf.set_line(inner.x, y, &columns.header(theme), inner.width);
    y += 1;
    let rows = usize::from(inner.bottom().saturating_sub(y));
    if state.entries.is_empty() {
        let text = state.message.as_deref().unwrap_or("(no files)");
        if rows > 0 {
            let line = Line::styled(fit::truncate(&fit::one_line(text), width), theme.muted);
            buf.set_line(inner.x, y, &line, inner.width);
        }
        return;
    }
    let start = visible_start(state.scroll, state.selected, rows);
    for (i, file) in state.entries.iter().enumerate().skip(start).take(rows) {
        let row_area = Rect::new(inner.x, y, inner.width, 1);
        buf.set_line(inner.x, y, &columns.row(state, file, theme), inner.width);
        if i == state.selected {
            let selection = if state.focused {
                theme.selection
            } else {
                theme.selection.add_modifier(Modifier::DIM)
            };
            buf.set_style(row_area, selection);
        }
        y += 1;
    }
}

#[cfg(test)]
#[path = "pane_tests.rs"]
mod tests;
