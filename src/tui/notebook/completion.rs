//! Tab completion in the cell editor (issue 27 item 1): its state, its
//! reducer and what it hands back. Tab after a name or `.` asks the session's
//! kernel ([`SessionsCommand::Complete`], an effect: the UI never awaits);
//! the answer ([`Completion`], `cursorStart`/`cursorEnd` in code points of
//! the whole cell) is dropped when the text or the cursor changed since (the
//! ticket); one match replaces the typed part, several insert their longest
//! common prefix and open a list to choose from ([`super::completion_popup`],
//! which takes the keys while it is open). A pool without
//! completion (`Ok(None)`: the service, Shell and NodeLTS pools) is said
//! once, and from then on Tab just indents.

use ratatui_textarea::Input;

use super::cell_editor::CellEditor;
use super::completion_popup::{Popup, PopupKey};
use crate::protocol::Completion;
use crate::session::{CompletionRequest, Failure, SessionsCommand};
use crate::tui::action::Effect;

/// The notice when the pool has no completion (said once per app run).
pub const NO_POOL_COMPLETION: &str =
    "completion: this pool has none (Azure's data-plane API has no completion call)";

/// The notice when the kernel is busy running a cell.
pub const BUSY: &str = "completion: the kernel is busy running a cell";

/// What a Tab asked and whether the pool can answer at all.
#[derive(Debug, Default)]
pub struct CompletionState {
    /// The last ticket handed out.
    ticket: u64,
    /// The request awaiting its answer (the text and cursor it was for).
    asked: Option<CompletionRequest>,
    /// The pool answered that it has no completion: Tab indents.
    none_here: bool,
    /// The list of candidates, while it is open.
    popup: Option<Popup>,
}

/// What the completion reducer hands back.
#[derive(Debug, PartialEq)]
pub enum CompletionOut {
    /// Send this to the sessions worker.
    Effect(Effect),
    /// Show this on the status line.
    Notice(String),
}

impl CompletionState {
    /// A Tab in the editor: the completion request when one should be asked
    /// (after a name or `.`, no selection, a pool that completes); `None`
    /// means Tab does what it always did (the caller indents).
    pub fn tab(&mut self, editor: &CellEditor, identifier: &str) -> Option<CompletionOut> {
        if self.none_here || !editor.wants_completion() {
            return None;
        }
        self.ticket += 1;
        let request = CompletionRequest {
            identifier: identifier.to_string(),
            code: editor.source(),
            cursor: editor.cursor_offset(),
            ticket: self.ticket,
        };
        self.asked = Some(request.clone());
        Some(CompletionOut::Effect(Effect::Sessions(
            SessionsCommand::Complete(request),
        )))
    }

    /// The worker's answer: applied to `editor` when it is the one awaited
    /// and the text and cursor are as they were asked; else dropped.
    pub fn answered(
        &mut self,
        editor: &mut CellEditor,
        request: &CompletionRequest,
        result: Result<Option<Completion>, Failure>,
    ) -> Option<CompletionOut> {
        if self.asked.as_ref() != Some(request) {
            return None;
        }
        self.asked = None;
        if editor.source() != request.code || editor.cursor_offset() != request.cursor {
            return None;
        }
        match result {
            Err(failure) => Some(CompletionOut::Notice(format!(
                "completion: {}",
                failure.message
            ))),
            Ok(None) => {
                self.none_here = true;
                Some(CompletionOut::Notice(NO_POOL_COMPLETION.to_string()))
            }
            Ok(Some(found)) if found.busy => Some(CompletionOut::Notice(BUSY.to_string())),
            Ok(Some(found)) => {
                let (out, popup) = apply(editor, &found);
                self.popup = popup;
                out
            }
        }
    }

    /// The list of candidates, while it is open (for the view).
    pub fn popup(&self) -> Option<&Popup> {
        self.popup.as_ref()
    }

    /// Closes the list (another action came: a click, a paste).
    pub fn close_popup(&mut self) {
        self.popup = None;
    }

    /// A key while the list may be open: `true` when the list took it
    /// (moved, took a candidate into `editor`, or closed on Esc); `false`
    /// when no list is open, or the key closed it and should now act as it
    /// always does.
    pub fn popup_key(&mut self, editor: &mut CellEditor, input: &Input) -> bool {
        let Some(popup) = self.popup.as_mut() else {
            return false;
        };
        match popup.key(input) {
            PopupKey::Moved => true,
            PopupKey::Take { start, end, text } => {
                self.popup = None;
                editor.replace_range(start, end, &text);
                true
            }
            PopupKey::Closed => {
                self.popup = None;
                true
            }
            PopupKey::Type => {
                let start = popup.start();
                editor.input(input.clone());
                let cursor = editor.cursor_offset();
                if !popup.narrow(&text_between(editor, start, cursor), cursor) {
                    self.popup = None;
                }
                true
            }
            PopupKey::Pass => {
                self.popup = None;
                false
            }
        }
    }
}

/// The candidates applied: none is a notice, one replaces the typed part,
/// several insert their longest common prefix and open the list (with a
/// count on the status line).
fn apply(editor: &mut CellEditor, found: &Completion) -> (Option<CompletionOut>, Option<Popup>) {
    let (start, end) = (found.cursor_start, found.cursor_end);
    let out = match found.matches.as_slice() {
        [] => Some(CompletionOut::Notice("no completions".to_string())),
        [one] => {
            editor.replace_range(start, end, one);
            None
        }
        many => {
            let prefix = common_prefix(many);
            let typed = text_between(editor, start, end);
            let mut end = end;
            if prefix.chars().count() > typed.chars().count() && prefix.starts_with(&typed) {
                editor.replace_range(start, end, &prefix);
                end = start + prefix.chars().count();
            }
            return match Popup::open(many, start, end) {
                Some(popup) => (
                    Some(CompletionOut::Notice(format!(
                        "{} completions (Up/Down choose, Enter takes, Esc closes)",
                        popup.items().len()
                    ))),
                    Some(popup),
                ),
                None => (None, None),
            };
        }
    };
    (out, None)
}

/// Code points `start..end` of the cell's source (empty when `end` is not
/// past `start`): what was typed of the part a completion replaces.
fn text_between(editor: &CellEditor, start: usize, end: usize) -> String {
    editor
        .source()
        .chars()
        .skip(start)
        .take(end.saturating_sub(start))
        .collect()
}

/// The longest prefix all `words` share (whole characters).
fn common_prefix(words: &[String]) -> String {
    let Some(first) = words.first() else {
        return String::new();
    };
    let mut len = first.len();
    for w in &words[1..] {
        len = first
            .char_indices()
            .zip(w.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8())
            .min(len);
    }
    first[..len].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui_textarea::Key;

    fn editor_with(text: &str) -> CellEditor {
        let mut e = CellEditor::default();
        e.paste(text);
        e
    }

    fn found(matches: &[&str], start: usize, end: usize) -> Completion {
        Completion {
            matches: matches.iter().map(ToString::to_string).collect(),
            cursor_start: start,
            cursor_end: end,
            busy: false,
        }
    }

    fn ask(state: &mut CompletionState, editor: &CellEditor) -> CompletionRequest {
        match state.tab(editor, "s1") {
            Some(CompletionOut::Effect(Effect::Sessions(SessionsCommand::Complete(r)))) => r,
            other => panic!("expected a completion request, got {other:?}"),
        }
    }

    #[test]
    fn one_match_replaces_the_typed_part() {
        let mut state = CompletionState::default();
        let mut editor = editor_with("import os\nos.pa");
        let request = ask(&mut state, &editor);
        assert_eq!(request.cursor, 15);
        let out = state.answered(&mut editor, &request, Ok(Some(found(&["path"], 13, 15))));
        assert_eq!(out, None);
        assert_eq!(editor.source(), "import os\nos.path");
    }

    #[test]
    fn several_insert_the_common_prefix_and_open_the_list() {
        let mut state = CompletionState::default();
        let mut editor = editor_with("os.ge");
        let request = ask(&mut state, &editor);
        let out = state.answered(
            &mut editor,
            &request,
            Ok(Some(found(&["getcwd", "getenv"], 3, 5))),
        );
        assert_eq!(editor.source(), "os.get");
        assert!(matches!(out, Some(CompletionOut::Notice(n)) if n.starts_with("2 completions")));
        let popup = state.popup().expect("the list is open");
        assert_eq!(popup.items(), ["getcwd", "getenv"]);
    }

    fn key(key: Key) -> Input {
        Input {
            key,
            ..Input::default()
        }
    }

    /// `os.ge` + Tab, answered with three candidates: the list is open.
    fn open_list() -> (CompletionState, CellEditor) {
        let mut state = CompletionState::default();
        let mut editor = editor_with("import os\nos.ge");
        let request = ask(&mut state, &editor);
        state.answered(
            &mut editor,
            &request,
            Ok(Some(found(&["getcwd", "getcwdb", "getenv"], 13, 15))),
        );
        assert!(state.popup().is_some());
        (state, editor)
    }

    #[test]
    fn down_then_enter_takes_the_second_candidate() {
        let (mut state, mut editor) = open_list();
        assert!(state.popup_key(&mut editor, &key(Key::Down)));
        assert!(state.popup_key(&mut editor, &key(Key::Enter)));
        assert_eq!(editor.source(), "import os\nos.getcwdb");
        assert_eq!(editor.cursor_offset(), 20);
        assert!(state.popup().is_none());
        // Ctrl+Z takes the candidate back out.
        editor.undo();
        assert_eq!(editor.source(), "import os\nos.get");
    }

    #[test]
    fn esc_closes_the_list_and_is_taken() {
        let (mut state, mut editor) = open_list();
        assert!(
            state.popup_key(&mut editor, &key(Key::Esc)),
            "the Esc is the list's: the editor keeps the focus"
        );
        assert!(state.popup().is_none());
        assert_eq!(editor.source(), "import os\nos.get");
        // With the list closed, keys are no longer the list's.
        assert!(!state.popup_key(&mut editor, &key(Key::Esc)));
    }

    #[test]
    fn another_key_closes_the_list_and_acts() {
        let (mut state, mut editor) = open_list();
        assert!(!state.popup_key(&mut editor, &key(Key::Char('('))));
        assert!(state.popup().is_none());
        assert_eq!(editor.source(), "import os\nos.get", "nothing taken");
    }

    #[test]
    fn typing_narrows_the_list_and_backspace_widens_it() {
        let (mut state, mut editor) = open_list();
        let shown = |state: &CompletionState| state.popup().map(|p| p.items().to_vec());
        // `os.get` + `c`: getcwd and getcwdb stay, typed into the cell.
        assert!(state.popup_key(&mut editor, &key(Key::Char('c'))));
        assert_eq!(editor.source(), "import os\nos.getc");
        assert_eq!(shown(&state), Some(vec!["getcwd".into(), "getcwdb".into()]));
        // The selection follows its candidate; Enter takes it whole.
        assert!(state.popup_key(&mut editor, &key(Key::Down)));
        assert!(state.popup_key(&mut editor, &key(Key::Char('w'))));
        assert_eq!(state.popup().map(Popup::selected), Some(1));
        assert!(state.popup_key(&mut editor, &key(Key::Backspace)));
        assert!(state.popup_key(&mut editor, &key(Key::Backspace)));
        assert_eq!(editor.source(), "import os\nos.get");
        assert_eq!(shown(&state).map(|v| v.len()), Some(3), "widened again");
        assert!(state.popup_key(&mut editor, &key(Key::Char('c'))));
        assert!(state.popup_key(&mut editor, &key(Key::Char('w'))));
        assert!(state.popup_key(&mut editor, &key(Key::Char('d'))));
        assert!(state.popup_key(&mut editor, &key(Key::Char('b'))));
        assert_eq!(
            shown(&state),
            Some(vec!["getcwdb".into()]),
            "one left stays open"
        );
        assert!(state.popup_key(&mut editor, &key(Key::Enter)));
        assert_eq!(editor.source(), "import os\nos.getcwdb");
        assert!(state.popup().is_none());
    }

    #[test]
    fn typing_what_nothing_matches_or_backspace_past_the_start_closes_it() {
        let (mut state, mut editor) = open_list();
        assert!(state.popup_key(&mut editor, &key(Key::Char('x'))));
        assert_eq!(editor.source(), "import os\nos.getx", "the key is typed");
        assert!(state.popup().is_none());
        let (mut state, mut editor) = open_list();
        for _ in 0..4 {
            assert!(state.popup_key(&mut editor, &key(Key::Backspace)));
        }
        assert_eq!(editor.source(), "import os\nos");
        assert!(
            state.popup().is_none(),
            "the cursor is before the replaced part"
        );
    }

    #[test]
    fn tab_moves_in_the_open_list() {
        let (mut state, mut editor) = open_list();
        assert!(state.popup_key(&mut editor, &key(Key::Tab)));
        assert_eq!(state.popup().map(Popup::selected), Some(1));
    }

    #[test]
    fn a_stale_answer_is_dropped() {
        let mut state = CompletionState::default();
        let mut editor = editor_with("os.pa");
        let request = ask(&mut state, &editor);
        editor.paste("x");
        let out = state.answered(&mut editor, &request, Ok(Some(found(&["path"], 3, 5))));
        assert_eq!(out, None);
        assert_eq!(editor.source(), "os.pax");
    }

    #[test]
    fn a_pool_without_completion_is_said_once_then_tab_indents() {
        let mut state = CompletionState::default();
        let mut editor = editor_with("os.pa");
        let request = ask(&mut state, &editor);
        let out = state.answered(&mut editor, &request, Ok(None));
        assert_eq!(
            out,
            Some(CompletionOut::Notice(NO_POOL_COMPLETION.to_string()))
        );
        assert_eq!(state.tab(&editor, "s1"), None);
    }

    #[test]
    fn tab_after_a_space_does_not_ask() {
        let mut state = CompletionState::default();
        let editor = editor_with("x = ");
        assert_eq!(state.tab(&editor, "s1"), None);
    }
}
