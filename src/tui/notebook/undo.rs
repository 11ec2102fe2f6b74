//! The cell editor's undo, a word at a time: ratatui-textarea keeps one undo
//! step per character typed, so the editor keeps its own steps instead, as
//! snapshots of the text taken before each group of edits (issue 27). A
//! group is a run of typed characters (a word with the spaces before it), a
//! run of deletions by Backspace or Delete, or any other edit on its own
//! (Enter, a paste, a kill, a yank, clearing the cell, an indent); moving the
//! cursor ends a group.

use std::collections::VecDeque;

/// How many undo steps are kept; the oldest go first.
const MAX_STEPS: usize = 500;

/// The text and the cursor at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The lines of the text.
    pub lines: Vec<String>,
    /// The cursor: (row, column), from 0, the column in characters.
    pub cursor: (usize, usize),
}

/// What an edit was, for grouping edits into undo steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditKind {
    /// A character typed that is not whitespace.
    Word,
    /// A whitespace character typed (not Enter).
    Space,
    /// A character deleted by Backspace or Delete.
    Delete,
    /// Anything else: an undo step of its own.
    Other,
}

impl EditKind {
    /// Whether an edit of this kind right after one of kind `last` (the
    /// cursor not moved between) belongs to the same undo step: typed
    /// characters until a space follows a word, deletions with deletions.
    fn continues(self, last: Self) -> bool {
        matches!(
            (last, self),
            (Self::Word | Self::Space, Self::Word)
                | (Self::Space, Self::Space)
                | (Self::Delete, Self::Delete)
        )
    }
}

/// The undo and redo steps of the text.
#[derive(Debug, Default)]
pub struct Undo {
    done: VecDeque<Snapshot>,
    undone: Vec<Snapshot>,
    /// The last edit's kind and the cursor after it, while its group is open.
    last: Option<(EditKind, (usize, usize))>,
}

impl Undo {
    /// An edit of `kind` changed the text from `before`, leaving the cursor
    /// at `after`: a new undo step unless it continues the open group.
    /// Anything undone can no longer be redone.
    pub fn record(&mut self, before: Snapshot, kind: EditKind, after: (usize, usize)) {
        let continues = self
            .last
            .is_some_and(|(last, cursor)| cursor == before.cursor && kind.continues(last));
        if !continues {
            if self.done.len() == MAX_STEPS {
                self.done.pop_front();
            }
            self.done.push_back(before);
        }
        self.undone.clear();
        self.last = (kind != EditKind::Other).then_some((kind, after));
    }

    /// The cursor moved or something else happened between edits: the next
    /// edit starts a new step.
    pub fn break_group(&mut self) {
        self.last = None;
    }

    /// The text to go back to from `current`, which redo brings back; `None`
    /// when there is nothing to undo.
    pub fn undo(&mut self, current: Snapshot) -> Option<Snapshot> {
        let previous = self.done.pop_back()?;
        self.undone.push(current);
        self.last = None;
        Some(previous)
    }

    /// The text undo went back from, `current` kept to undo again; `None`
    /// when nothing was undone.
    pub fn redo(&mut self, current: Snapshot) -> Option<Snapshot> {
        let next = self.undone.pop()?;
        self.done.push_back(current);
        self.last = None;
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(text: &str, col: usize) -> Snapshot {
        Snapshot {
            lines: vec![text.to_string()],
            cursor: (0, col),
        }
    }

    /// Types `text` at the end of `state`, recording each character.
    fn type_text(undo: &mut Undo, state: &mut String, text: &str) {
        for c in text.chars() {
            let before = snap(state, state.len());
            state.push(c);
            let kind = if c.is_whitespace() {
                EditKind::Space
            } else {
                EditKind::Word
            };
            undo.record(before, kind, (0, state.len()));
        }
    }

    #[test]
    fn typed_words_are_one_step_each() {
        let mut undo = Undo::default();
        let mut text = String::new();
        type_text(&mut undo, &mut text, "hello big world");
        let back = undo.undo(snap(&text, text.len())).unwrap();
        assert_eq!(back.lines, ["hello big"]);
        let back = undo.undo(back).unwrap();
        assert_eq!(back.lines, ["hello"]);
        let back = undo.undo(back).unwrap();
        assert_eq!(back.lines, [""]);
        assert_eq!(undo.undo(back.clone()), None);
        let again = undo.redo(back).unwrap();
        assert_eq!(again.lines, ["hello"]);
    }

    #[test]
    fn a_cursor_move_or_another_kind_of_edit_starts_a_step() {
        let mut undo = Undo::default();
        let mut text = String::new();
        type_text(&mut undo, &mut text, "ab");
        undo.break_group();
        type_text(&mut undo, &mut text, "cd");
        // Deletions group with each other, not with typing.
        undo.record(snap("abcd", 4), EditKind::Delete, (0, 3));
        undo.record(snap("abc", 3), EditKind::Delete, (0, 2));
        undo.record(snap("ab", 2), EditKind::Other, (0, 4));
        undo.record(snap("abXY", 4), EditKind::Other, (0, 6));
        let mut state = snap("abXYZW", 6);
        let mut seen = Vec::new();
        while let Some(back) = undo.undo(state) {
            seen.push(back.lines[0].clone());
            state = back;
        }
        assert_eq!(seen, ["abXY", "ab", "abcd", "ab", ""]);
    }

    #[test]
    fn a_new_edit_drops_what_was_undone_and_steps_are_capped() {
        let mut undo = Undo::default();
        undo.record(snap("", 0), EditKind::Other, (0, 1));
        let back = undo.undo(snap("a", 1)).unwrap();
        undo.record(back, EditKind::Other, (0, 1));
        assert_eq!(undo.redo(snap("b", 1)), None);
        for i in 0..MAX_STEPS + 10 {
            undo.record(snap(&i.to_string(), 0), EditKind::Other, (0, 0));
        }
        assert_eq!(undo.done.len(), MAX_STEPS);
    }
}
