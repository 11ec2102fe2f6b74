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

use ratatui_textarea::{CursorMove, DataCursor, Input, Key, TextArea};

use crate::notebook::Cell;
use crate::notebook::language::Language;
use crate::tui::notebook::editor;
use crate::tui::notebook::indent;
use crate::tui::notebook::undo::{EditKind, Snapshot, Undo};

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
    /// The undo steps of the text (the text area keeps none of its own).
    undo: Undo,
}

impl Default for CellEditor {
    fn default() -> Self {
        Self {
            area: text_area(vec![String::new()]),
            history: History::default(),
            queued: VecDeque::new(),
            given: None,
            draft_queued: None,
            undo: Undo::default(),
        }
    }
}

/// A text area holding `lines`, with Tab as four spaces and no undo history
/// of its own (the cell editor keeps it, a word at a time: [`Undo`]).
fn text_area(lines: Vec<String>) -> TextArea<'static> {
    let mut area = TextArea::new(lines);
    area.set_tab_length(4);
    area.set_max_histories(0);
    area
}

/// The undo group a key of the text area belongs to.
fn kind_of(input: &Input) -> EditKind {
    match input {
        Input {
            key: Key::Char(c),
            ctrl: false,
            alt: false,
            ..
        } if c.is_whitespace() => EditKind::Space,
        Input {
            key: Key::Char(_),
            ctrl: false,
            alt: false,
            ..
        } => EditKind::Word,
        Input {
            key: Key::Backspace | Key::Delete,
            ctrl: false,
            alt: false,
            ..
        } => EditKind::Delete,
        _ => EditKind::Other,
    }
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

    /// A key for the text area itself (characters, arrows, Backspace…):
    /// Backspace in the indentation removes a level ([`indent::backspace_width`]),
    /// Tab with a selection indents the selected lines; typed characters
    /// are undone a word at a time.
    pub fn input(&mut self, input: Input) {
        let plain = !input.ctrl && !input.alt;
        if plain && input.key == Key::Backspace && self.area.selection_range().is_none() {
            let (row, col) = self.cursor_pair();
            let line = self.area.lines().get(row).map_or("", String::as_str);
            if let Some(n) = indent::backspace_width(line, col) {
                self.edit(EditKind::Delete, |area| {
                    area.move_cursor(jump(row, col - n));
                    area.delete_str(n);
                });
                return;
            }
        }
        if plain && input.key == Key::Tab && self.area.selection_range().is_some() {
            self.indent_lines(true);
            return;
        }
        let kind = kind_of(&input);
        self.edit(kind, |area| {
            area.input(input);
        });
    }

    /// The cursor as a code-point offset into [`Self::source`] (what the
    /// kernel's completion takes).
    pub fn cursor_offset(&self) -> usize {
        let (row, col) = self.cursor_pair();
        let lines = self.area.lines();
        lines
            .iter()
            .take(row)
            .map(|l| l.chars().count() + 1)
            .sum::<usize>()
            + col
    }

    /// Tab should ask for completions: no selection, and the character left
    /// of the cursor is an identifier character or `.`.
    pub fn wants_completion(&self) -> bool {
        if self.area.selection_range().is_some() {
            return false;
        }
        let (row, col) = self.cursor_pair();
        let line = self.area.lines().get(row).map_or("", String::as_str);
        col > 0
            && line
                .chars()
                .nth(col - 1)
                .is_some_and(|c| c == '.' || c == '_' || c.is_alphanumeric())
    }

    /// Replaces code points `start..end` of [`Self::source`] with `text`
    /// (a completion), as one edit that Ctrl+Z undoes; the cursor ends after
    /// `text`. Offsets past the end are clamped.
    pub fn replace_range(&mut self, start: usize, end: usize, text: &str) {
        let at = |offset: usize, lines: &[String]| {
            let mut left = offset;
            for (row, line) in lines.iter().enumerate() {
                let n = line.chars().count();
                if left <= n {
                    return (row, left);
                }
                left -= n + 1;
            }
            let last = lines.len().saturating_sub(1);
            (last, lines.get(last).map_or(0, |l| l.chars().count()))
        };
        let total = self.source().chars().count();
        let (start, end) = (start.min(total), end.min(total).max(start.min(total)));
        let (row, col) = at(start, self.area.lines());
        self.edit(EditKind::Other, |area| {
            area.cancel_selection();
            area.move_cursor(jump(row, col));
            area.delete_str(end - start);
            area.insert_str(text);
        });
    }

    /// The cursor as (row, column).
    fn cursor_pair(&self) -> (usize, usize) {
        let DataCursor(row, col) = self.area.cursor();
        (row, col)
    }

    /// The text and cursor now, to come back to.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            lines: self.area.lines().to_vec(),
            cursor: self.cursor_pair(),
        }
    }

    /// Does `change` to the text area as one edit of `kind`: an undo step
    /// unless it continues the open group; a change of the cursor alone
    /// closes the group.
    fn edit(&mut self, kind: EditKind, change: impl FnOnce(&mut TextArea<'static>)) {
        let before = self.snapshot();
        change(&mut self.area);
        if self.area.lines() != before.lines.as_slice() {
            let after = self.cursor_pair();
            self.undo.record(before, kind, after);
        } else if self.cursor_pair() != before.cursor {
            self.undo.break_group();
        }
    }

    /// Puts `snapshot` in the text area, the kill buffer kept.
    fn restore(&mut self, snapshot: Snapshot) {
        let yank = self.area.yank_text();
        self.area = text_area(snapshot.lines);
        self.area.set_yank_text(yank);
        let (row, col) = snapshot.cursor;
        self.area.move_cursor(jump(row, col));
    }

    /// Pasted text at the cursor: line breaks normalised, tabs as four spaces,
    /// other control characters (escape sequences included) dropped.
    pub fn paste(&mut self, text: &str) {
        let text = clean_paste(text);
        self.edit(EditKind::Other, |area| {
            area.insert_str(text);
        });
    }

    /// Enter: a new line with the current line's indentation, four spaces
    /// more after a line ending in `:` (in `language`).
    pub fn newline(&mut self, language: Language) {
        self.edit(EditKind::Other, |area| editor::newline(area, language));
    }

    /// Undoes the last edit (a word typed, a run of deletions, or one other
    /// edit).
    pub fn undo(&mut self) {
        if let Some(previous) = self.undo.undo(self.snapshot()) {
            self.restore(previous);
        }
    }

    /// Redoes what was undone.
    pub fn redo(&mut self) {
        if let Some(next) = self.undo.redo(self.snapshot()) {
            self.restore(next);
        }
    }

    /// Ctrl+U: kills from the cursor to the start of the line (at its start,
    /// joins the line to the one above), into the kill buffer.
    pub fn kill_to_start(&mut self) {
        self.edit(EditKind::Other, |area| {
            area.delete_line_by_head();
        });
    }

    /// Ctrl+K: kills from the cursor to the end of the line (at its end,
    /// joins the next line), into the kill buffer.
    pub fn kill_to_end(&mut self) {
        self.edit(EditKind::Other, |area| {
            area.delete_line_by_end();
        });
    }

    /// Ctrl+Y: inserts the kill buffer at the cursor.
    pub fn yank(&mut self) {
        self.edit(EditKind::Other, |area| {
            area.paste();
        });
    }

    /// Clears the cell (Ctrl+C with text, IPython's habit), never losing
    /// it: the text goes to the kill buffer (Ctrl+Y puts it back) and the
    /// clearing is one undo step (Ctrl+Z). False when there was nothing to
    /// clear.
    pub fn clear(&mut self) -> bool {
        if self.area.is_empty() {
            return false;
        }
        let text = self.source();
        self.edit(EditKind::Other, |area| {
            area.select_all();
            area.cut();
        });
        self.area.set_yank_text(text);
        self.given = None;
        true
    }

    /// Shift+Tab: dedents the cursor's line, or the selected lines, by one
    /// level, wherever the cursor is.
    pub fn dedent(&mut self) {
        self.indent_lines(false);
    }

    /// Indents (`grow`) or dedents the selected lines, or the cursor's line,
    /// by one level as one undo step; the cursor and the selection move
    /// with the text.
    fn indent_lines(&mut self, grow: bool) {
        let selection = self.area.selection_range();
        let cursor = self.cursor_pair();
        let (first, last) = indent::rows(selection, cursor.0);
        let mut lines = self.area.lines().to_vec();
        let deltas = if grow {
            indent::indent(&mut lines, first, last)
        } else {
            indent::dedent(&mut lines, first, last)
        };
        if deltas.iter().all(|d| *d == 0) {
            return;
        }
        // The selection's other end, where the cursor is not.
        let anchor = selection.map(|(start, end)| if start == cursor { end } else { start });
        let moved = |pos| indent::shift(pos, first, &deltas, grow);
        let before = self.snapshot();
        self.restore(Snapshot {
            lines,
            cursor: moved(cursor),
        });
        if let Some(anchor) = anchor {
            let (row, col) = moved(anchor);
            let here = self.cursor_pair();
            self.area.move_cursor(jump(row, col));
            self.area.start_selection();
            self.area.move_cursor(jump(here.0, here.1));
        }
        let after = self.cursor_pair();
        self.undo.record(before, EditKind::Other, after);
    }

    /// Replaces the whole text with `text` as it is, as one edit that Ctrl+Z
    /// undoes; it counts as typed.
    pub fn replace(&mut self, text: &str) {
        self.edit(EditKind::Other, |area| editor::replace_text(area, text));
        self.given = None;
    }

    /// Replaces the whole text with `source`, a copy of a cell kept in the
    /// notebook (the history search chose it), as one edit that Ctrl+Z
    /// undoes; until it is edited, quitting leaves nothing typed behind.
    pub fn replace_with_copy(&mut self, source: &str) {
        self.edit(EditKind::Other, |area| editor::replace_text(area, source));
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
        self.undo = Undo::default();
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
        let yank = self.area.yank_text();
        self.area = text_area(source.split('\n').map(str::to_string).collect());
        self.area.set_yank_text(yank);
        self.undo = Undo::default();
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

/// A cursor move to (`row`, `col`), clamped to what the text area can take.
fn jump(row: usize, col: usize) -> CursorMove {
    let clamp = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    CursorMove::Jump(clamp(row), clamp(col))
}

/// Pasted text as the editor should get it: line breaks normalised, tabs as four
/// spaces, other control characters (escape sequences included) dropped.
pub fn clean_paste(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    crate::tui::widgets::sanitize::plain(&text.replace('\t', "    "))
}

#[cfg(test)]
mod tests {
    use ratatui_textarea::{Input, Key};

    use super::*;

    fn key(key: Key) -> Input {
        Input {
            key,
            ctrl: false,
            alt: false,
            shift: false,
        }
    }

    fn typed(text: &str) -> CellEditor {
        let mut editor = CellEditor::default();
        for c in text.chars() {
            if c == '\n' {
                editor.newline(Language::Python);
            } else {
                editor.input(key(Key::Char(c)));
            }
        }
        editor
    }

    #[test]
    fn clearing_keeps_the_text_for_undo_and_yank() {
        let mut editor = typed("a = 1\nb = 2");
        assert!(editor.clear());
        assert!(editor.is_empty());
        assert!(!editor.clear(), "nothing left to clear");
        editor.undo();
        assert_eq!(editor.lines(), ["a = 1", "b = 2"]);
        editor.clear();
        editor.yank();
        assert_eq!(editor.lines(), ["a = 1", "b = 2"]);
        // Undo and redo keep the kill buffer.
        editor.undo();
        editor.redo();
        editor.clear();
        editor.yank();
        assert_eq!(editor.lines(), ["a = 1", "b = 2"]);
    }

    #[test]
    fn kills_go_to_the_kill_buffer() {
        let mut editor = typed("abc def");
        for _ in 0..3 {
            editor.input(key(Key::Left));
        }
        editor.kill_to_start();
        assert_eq!(editor.lines(), ["def"]);
        editor.kill_to_end();
        assert!(editor.is_empty());
        editor.yank();
        assert_eq!(editor.lines(), ["def"]);
        editor.undo();
        editor.undo();
        assert_eq!(editor.lines(), ["def"]);
        editor.undo();
        assert_eq!(editor.lines(), ["abc def"]);
    }

    #[test]
    fn undo_goes_a_word_at_a_time_and_a_cursor_move_ends_a_step() {
        let mut editor = typed("print(x) + y");
        editor.undo();
        assert_eq!(editor.lines(), ["print(x) +"]);
        editor.undo();
        assert_eq!(editor.lines(), ["print(x)"]);
        editor.undo();
        assert!(editor.is_empty());
        let mut editor = typed("ab");
        editor.input(key(Key::Left));
        editor.input(key(Key::Char('X')));
        editor.input(key(Key::Backspace));
        editor.input(key(Key::Backspace));
        assert_eq!(editor.lines(), ["b"]);
        editor.undo();
        assert_eq!(editor.lines(), ["aXb"]);
        editor.undo();
        assert_eq!(editor.lines(), ["ab"]);
        editor.redo();
        assert_eq!(editor.lines(), ["aXb"]);
    }

    #[test]
    fn backspace_in_the_indentation_removes_a_level() {
        let mut editor = typed("if x:\nif y:\n");
        assert_eq!(editor.lines(), ["if x:", "    if y:", "        "]);
        editor.input(key(Key::Backspace));
        assert_eq!(editor.lines(), ["if x:", "    if y:", "    "]);
        editor.input(key(Key::Char('z')));
        editor.input(key(Key::Backspace));
        assert_eq!(editor.lines(), ["if x:", "    if y:", "    "]);
        editor.input(key(Key::Backspace));
        assert_eq!(editor.lines(), ["if x:", "    if y:", ""]);
        editor.input(key(Key::Backspace));
        assert_eq!(editor.lines(), ["if x:", "    if y:"]);
    }

    #[test]
    fn shift_tab_dedents_the_line_wherever_the_cursor_is() {
        let mut editor = typed("if x:\nprint(x)");
        editor.input(key(Key::Left));
        editor.dedent();
        assert_eq!(editor.lines(), ["if x:", "print(x)"]);
        assert_eq!(editor.cursor(), DataCursor(1, 7));
        editor.undo();
        assert_eq!(editor.lines(), ["if x:", "    print(x)"]);
        // Nothing to dedent: nothing changes, no undo step.
        let mut editor = typed("x");
        editor.dedent();
        assert_eq!(editor.lines(), ["x"]);
    }

    #[test]
    fn tab_and_shift_tab_with_a_selection_indent_and_dedent_its_lines() {
        let mut editor = typed("a\nb\nc");
        // Select from the end of `c` up into `a`.
        let shift_up = Input {
            key: Key::Up,
            ctrl: false,
            alt: false,
            shift: true,
        };
        editor.input(shift_up.clone());
        editor.input(shift_up);
        editor.input(key(Key::Tab));
        assert_eq!(editor.lines(), ["    a", "    b", "    c"]);
        assert!(editor.area.selection_range().is_some(), "still selected");
        editor.input(key(Key::Tab));
        editor.dedent();
        assert_eq!(editor.lines(), ["    a", "    b", "    c"]);
        editor.dedent();
        assert_eq!(editor.lines(), ["a", "b", "c"]);
        editor.undo();
        assert_eq!(editor.lines(), ["    a", "    b", "    c"]);
    }

    #[test]
    fn a_paste_is_one_undo_step() {
        let mut editor = typed("x = ");
        editor.paste("[1, 2,\n 3]");
        assert_eq!(editor.lines(), ["x = [1, 2,", " 3]"]);
        editor.undo();
        assert_eq!(editor.lines(), ["x = "]);
    }
}
