//! The cell being typed, as the notebook keeps it: the text area, browsing
//! the earlier cells' sources in it (Up on its first line, Down on its last,
//! with the draft kept and given back), and the cells of an opened notebook
//! offered one at a time. It changes only its own state; the cells it browses
//! are handed to it read-only.

use std::collections::VecDeque;

use ratatui_textarea::{CursorMove, DataCursor, Input, TextArea};

use crate::notebook::Cell;
use crate::notebook::language::Language;
use crate::tui::notebook::editor;

/// Where browsing the history is: `None` while editing a new cell.
#[derive(Debug, Default)]
struct History {
    position: Option<usize>,
    draft: Vec<String>,
}

/// The cell editor's state.
#[derive(Debug)]
pub struct CellEditor {
    area: TextArea<'static>,
    history: History,
    /// Cells of an opened notebook not yet offered.
    queued: VecDeque<String>,
}

impl Default for CellEditor {
    fn default() -> Self {
        Self {
            area: text_area(vec![String::new()]),
            history: History::default(),
            queued: VecDeque::new(),
        }
    }
}

/// A text area holding `lines`, with Tab as four spaces.
fn text_area(lines: Vec<String>) -> TextArea<'static> {
    let mut area = TextArea::new(lines);
    area.set_tab_length(4);
    area
}

impl CellEditor {
    /// The text area (for its view).
    pub fn text(&self) -> &TextArea<'static> {
        &self.area
    }

    /// The lines typed.
    pub fn lines(&self) -> &[String] {
        self.area.lines()
    }

    /// Nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.area.is_empty()
    }

    /// The cursor: (row, column), from 0.
    pub fn cursor(&self) -> DataCursor {
        self.area.cursor()
    }

    /// The text typed, its lines joined by `\n`.
    pub fn source(&self) -> String {
        self.area.lines().join("\n")
    }

    /// A key for the text area itself (characters, arrows, Backspace…).
    pub fn input(&mut self, input: Input) {
        self.area.input(input);
    }

    /// Pasted text at the cursor: line breaks normalised, tabs as four spaces,
    /// other control characters (escape sequences included) dropped.
    pub fn paste(&mut self, text: &str) {
        self.area.insert_str(clean_paste(text));
    }

    /// Enter: a new line with the current line's indentation, four spaces
    /// more after a line ending in `:` (in `language`).
    pub fn newline(&mut self, language: Language) {
        editor::newline(&mut self.area, language);
    }

    /// Undoes the last edit.
    pub fn undo(&mut self) {
        self.area.undo();
    }

    /// Redoes what was undone.
    pub fn redo(&mut self) {
        self.area.redo();
    }

    /// Replaces the whole text with `text` as it is, as one edit that Ctrl+Z
    /// undoes.
    pub fn replace(&mut self, text: &str) {
        editor::replace_text(&mut self.area, text);
    }

    /// Replaces the whole text with what `$EDITOR` gave back, cleaned as a
    /// paste is, as one edit that Ctrl+Z undoes.
    pub fn replace_from_outside(&mut self, text: &str) {
        self.replace(&clean_paste(text));
    }

    /// Takes the text to run: `None` when only blanks are typed (nothing
    /// changes); else the editor empties, offers the next queued cell of an
    /// opened notebook, and history browsing starts over.
    pub fn take_for_run(&mut self) -> Option<String> {
        let code = self.source();
        if code.trim().is_empty() {
            return None;
        }
        self.area = text_area(vec![String::new()]);
        if let Some(next) = self.queued.pop_front() {
            self.load(&next, CursorMove::Bottom);
        }
        self.history = History::default();
        Some(code)
    }

    /// Offers `sources` (the code cells of an opened notebook) one at a time:
    /// the first now if the editor is empty, the next after each run.
    pub fn queue_sources(&mut self, sources: Vec<String>) {
        self.queued.extend(sources);
        if self.area.is_empty()
            && let Some(next) = self.queued.pop_front()
        {
            self.load(&next, CursorMove::Bottom);
        }
    }

    /// Another session begins: history browsing starts over (the cells it
    /// browsed are gone) and the queued cells of the notebook left are
    /// dropped; the text typed stays.
    pub fn new_session(&mut self) {
        self.history = History::default();
        self.queued.clear();
    }

    /// The queued sources not offered yet (for a switch to another pool to
    /// offer them there).
    pub fn take_queued(&mut self) -> Vec<String> {
        self.queued.drain(..).collect()
    }

    fn load(&mut self, source: &str, cursor: CursorMove) {
        self.area = text_area(source.split('\n').map(str::to_string).collect());
        self.area.move_cursor(cursor);
        self.area.move_cursor(CursorMove::End);
    }

    /// Up on the first line: the previous cell's source of `cells` (the
    /// newest first time, keeping what was typed as the draft).
    pub fn history_prev(&mut self, cells: &[Cell]) {
        let count = cells.len();
        let target = match self.history.position {
            None if count == 0 => return,
            None => {
                self.history.draft = self.area.lines().to_vec();
                count - 1
            }
            Some(0) => return,
            Some(p) => p - 1,
        };
        self.history.position = Some(target);
        let source = cells[target].source.clone();
        self.load(&source, CursorMove::Top);
    }

    /// Down on the last line while browsing: the next cell's source, and
    /// after the newest, the draft back.
    pub fn history_next(&mut self, cells: &[Cell]) {
        let Some(p) = self.history.position else {
            return;
        };
        if p + 1 < cells.len() {
            self.history.position = Some(p + 1);
            let source = cells[p + 1].source.clone();
            self.load(&source, CursorMove::Bottom);
        } else {
            let draft = std::mem::take(&mut self.history.draft);
            self.history.position = None;
            self.load(&draft.join("\n"), CursorMove::Bottom);
        }
    }
}

/// Pasted text as the editor should get it: line breaks normalised, tabs as four
/// spaces, other control characters (escape sequences included) dropped.
pub fn clean_paste(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    crate::tui::widgets::sanitize::plain(&text.replace('\t', "    "))
}
