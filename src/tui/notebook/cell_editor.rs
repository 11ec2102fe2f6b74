//! The cell being typed, as the notebook keeps it: the text area, browsing
//! the earlier cells' sources in it (Up on its first line, Down on its last,
//! with the draft kept and given back), and the cells of an opened notebook
//! offered one at a time. It knows which text the person typed and which it
//! was given (a cell from history, an opened notebook's cell, the draft of
//! the last time given back), so that quitting asks before leaving typed
//! text behind and keeps it as the notebook's draft ([`CellEditor::draft`]).
//! It changes only its own state; the cells it browses are handed to it
//! read-only.

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
    /// How the draft came to the editor while browsing (`None`: typed).
    given: Option<Given>,
}

/// Text the editor was given rather than typed, as it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Given {
    /// A copy of what is kept elsewhere: a cell's source from history, a
    /// cell of an opened notebook.
    Copy(String),
    /// The notebook's draft, given back: kept in the notebook's file.
    Draft(String),
}

/// The cell editor's state.
#[derive(Debug)]
pub struct CellEditor {
    area: TextArea<'static>,
    history: History,
    /// Cells of an opened notebook not yet offered.
    queued: VecDeque<String>,
    /// The text the editor holds was given to it, not typed, as it was given
    /// (edited since, it counts as typed).
    given: Option<Given>,
    /// The notebook's draft, waiting at the front of `queued` because the
    /// editor held other text when it came back.
    draft_queued: Option<String>,
}

impl Default for CellEditor {
    fn default() -> Self {
        Self {
            area: text_area(vec![String::new()]),
            history: History::default(),
            queued: VecDeque::new(),
            given: None,
            draft_queued: None,
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
    /// undoes; it counts as typed.
    pub fn replace(&mut self, text: &str) {
        editor::replace_text(&mut self.area, text);
        self.given = None;
    }

    /// Replaces the whole text with `source`, a copy of a cell kept in the
    /// notebook (the history search chose it), as one edit that Ctrl+Z
    /// undoes; until it is edited, quitting leaves nothing typed behind.
    pub fn replace_with_copy(&mut self, source: &str) {
        editor::replace_text(&mut self.area, source);
        self.given = Some(Given::Copy(source.to_string()));
    }

    /// Gives back `draft`, the text typed and not run when the notebook was
    /// last quit: into the editor when it is empty, else offered next (after
    /// what it holds is run), before any queued cell.
    pub fn restore_draft(&mut self, draft: &str) {
        if draft.trim().is_empty() {
            return;
        }
        if self.area.is_empty() {
            self.load(draft, CursorMove::Bottom);
            self.given = Some(Given::Draft(draft.to_string()));
        } else {
            self.queued.push_front(draft.to_string());
            self.draft_queued = Some(draft.to_string());
        }
    }

    /// The texts the editor holds, each with how it came: what it shows,
    /// and while history is browsed, the text browsing began from.
    fn held(&self) -> Vec<(String, Option<&Given>)> {
        let mut held = vec![(self.source(), self.given.as_ref())];
        if self.history.position.is_some() {
            held.push((self.history.draft.join("\n"), self.history.given.as_ref()));
        }
        held
    }

    /// How many lines the person typed that are kept nowhere yet (not a cell
    /// from history or an opened notebook as it was given, not the draft
    /// given back as it was): what quitting would leave behind if it kept no
    /// draft. `None` when there are none.
    pub fn typed_lines(&self) -> Option<usize> {
        let lines: usize = self
            .held()
            .into_iter()
            .filter(|(text, given)| {
                let as_given = matches!(given, Some(Given::Copy(g) | Given::Draft(g)) if g == text);
                !text.trim().is_empty() && !as_given
            })
            .map(|(text, _)| text.trim_end().lines().count().max(1))
            .sum();
        (lines > 0).then_some(lines)
    }

    /// The text to keep as the notebook's draft when it is quit: what the
    /// editor holds (unless it is a copy of a cell, unchanged; while history
    /// is browsed, the text browsing began from too), and the draft given
    /// back that still waits behind it, a blank line between each; `None`
    /// when there is nothing.
    pub fn draft(&self) -> Option<String> {
        let parts: Vec<String> = self
            .held()
            .into_iter()
            .filter(|(text, given)| {
                let copy = matches!(given, Some(Given::Copy(g)) if g == text);
                !text.trim().is_empty() && !copy
            })
            .map(|(text, _)| text)
            .chain(self.draft_queued.clone())
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
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
        self.given = None;
        if let Some(next) = self.queued.pop_front() {
            self.offer(next);
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
            self.offer(next);
        }
    }

    /// Puts `next`, taken from the queue, in the editor: the draft given
    /// back, or a cell of an opened notebook.
    fn offer(&mut self, next: String) {
        self.load(&next, CursorMove::Bottom);
        self.given = if self.draft_queued.as_ref() == Some(&next) {
            self.draft_queued = None;
            Some(Given::Draft(next))
        } else {
            Some(Given::Copy(next))
        };
    }

    /// Another session begins: history browsing starts over (the cells it
    /// browsed are gone) and the queued cells of the notebook left are
    /// dropped; the text typed stays.
    pub fn new_session(&mut self) {
        self.history = History::default();
        self.queued.clear();
        self.draft_queued = None;
    }

    /// The queued sources not offered yet (for a switch to another pool to
    /// offer them there; the draft given back among them goes along).
    pub fn take_queued(&mut self) -> Vec<String> {
        self.draft_queued = None;
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
                self.history.given = self.given.take();
                count - 1
            }
            Some(0) => return,
            Some(p) => p - 1,
        };
        self.history.position = Some(target);
        let source = cells[target].source.clone();
        self.load(&source, CursorMove::Top);
        self.given = Some(Given::Copy(source));
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
            self.given = Some(Given::Copy(source));
        } else {
            let draft = std::mem::take(&mut self.history.draft);
            self.history.position = None;
            self.load(&draft.join("\n"), CursorMove::Bottom);
            // The text browsing began from, and how it came.
            self.given = self.history.given.take();
        }
    }
}

/// Pasted text as the editor should get it: line breaks normalised, tabs as four
/// spaces, other control characters (escape sequences included) dropped.
pub fn clean_paste(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    crate::tui::widgets::sanitize::plain(&text.replace('\t', "    "))
}
