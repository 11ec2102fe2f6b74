//! Terminal input to [`Action`]s. The keymap is fixed in this first slice; it reads
//! only what the editor looks like (empty, cursor on the first or last line), so it
//! can decide between "move in the text" and "walk the history".
//!
//! Running a cell must work on every terminal: F5 and Alt+Enter always arrive;
//! Ctrl+Enter arrives only where the terminal reports it (kitty keyboard protocol,
//! which the terminal guard asks for).

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};
use ratatui_textarea::Input;

use super::action::Action;

/// What the keymap needs to know about the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditorContext {
    /// The editor holds no text.
    pub empty: bool,
    /// The cursor is on the first line.
    pub on_first_line: bool,
    /// The cursor is on the last line.
    pub on_last_line: bool,
    /// The notebook (outputs) has the keyboard focus, not the editor.
    pub outputs_focused: bool,
}

/// Lines the mouse wheel scrolls per notch.
const WHEEL_LINES: i32 = 3;

/// The action for a terminal event, if it means anything.
pub fn action_for_event(event: Event, editor: EditorContext) -> Option<Action> {
    match event {
        Event::Key(key) => action_for_key(key, editor),
        Event::Mouse(mouse) => action_for_mouse(mouse),
        Event::Paste(text) => Some(Action::Paste(text)),
        Event::Resize(..) => Some(Action::Resize),
        Event::FocusGained | Event::FocusLost => None,
    }
}

/// The action for a key press.
pub fn action_for_key(key: KeyEvent, editor: EditorContext) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let plain = !ctrl && !alt;
    // Shift+Up/Down select text; only bare arrows walk the history.
    let bare = key.modifiers.is_empty();
    if ctrl {
        match key.code {
            KeyCode::Char('q' | 'Q') => return Some(Action::Quit),
            KeyCode::Char('c' | 'C') => return Some(Action::Interrupt),
            _ => {}
        }
    }
    if editor.outputs_focused {
        return notebook_key(key.code, plain);
    }
    let action = match key.code {
        KeyCode::F(5) => Action::RunCell,
        KeyCode::Esc => Action::FocusOutputs,
        KeyCode::Enter if ctrl || alt => Action::RunCell,
        // Terminals without the kitty protocol often send Ctrl+Enter as a line feed,
        // which raw mode reports as Ctrl+J.
        KeyCode::Char('j') if ctrl && !alt => Action::RunCell,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Up if bare && (editor.empty || editor.on_first_line) => Action::HistoryPrev,
        KeyCode::Down if bare && editor.on_last_line => Action::HistoryNext,
        _ => Action::Edit(Input::from(key)),
    };
    Some(action)
}

/// Keys while the notebook has the focus: no text is typed here, so single keys
/// are safe to bind.
fn notebook_key(code: KeyCode, plain: bool) -> Option<Action> {
    let action = match code {
        KeyCode::Char('q') if plain => Action::Quit,
        KeyCode::Esc | KeyCode::Enter | KeyCode::Tab => Action::FocusEditor,
        KeyCode::Char('i') if plain => Action::FocusEditor,
        KeyCode::Char('j') | KeyCode::Down if plain => Action::ScrollLines(1),
        KeyCode::Char('k') | KeyCode::Up if plain => Action::ScrollLines(-1),
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown | KeyCode::Char(' ') => Action::PageDown,
        KeyCode::F(5) => Action::RunCell,
        _ => return None,
    };
    Some(action)
}

fn action_for_mouse(mouse: MouseEvent) -> Option<Action> {
    match mouse.kind {
        MouseEventKind::ScrollUp => Some(Action::ScrollLines(-WHEEL_LINES)),
        MouseEventKind::ScrollDown => Some(Action::ScrollLines(WHEEL_LINES)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY: EditorContext = EditorContext {
        empty: true,
        on_first_line: true,
        on_last_line: true,
        outputs_focused: false,
    };
    const MIDDLE: EditorContext = EditorContext {
        empty: false,
        on_first_line: false,
        on_last_line: false,
        outputs_focused: false,
    };
    const NOTEBOOK: EditorContext = EditorContext {
        empty: true,
        on_first_line: true,
        on_last_line: true,
        outputs_focused: true,
    };

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn run_keys() {
        for k in [
            key(KeyCode::F(5), KeyModifiers::NONE),
            key(KeyCode::Enter, KeyModifiers::ALT),
            key(KeyCode::Enter, KeyModifiers::CONTROL),
        ] {
            assert_eq!(action_for_key(k, MIDDLE), Some(Action::RunCell), "{k:?}");
        }
        let enter = action_for_key(key(KeyCode::Enter, KeyModifiers::NONE), MIDDLE);
        assert!(matches!(enter, Some(Action::Edit(_))));
    }

    #[test]
    fn q_quits_only_with_the_notebook_focused() {
        let q = key(KeyCode::Char('q'), KeyModifiers::NONE);
        // In the editor `q` is text, even in an empty editor (`q = 1`).
        assert!(matches!(action_for_key(q, EMPTY), Some(Action::Edit(_))));
        assert!(matches!(action_for_key(q, MIDDLE), Some(Action::Edit(_))));
        let esc = key(KeyCode::Esc, KeyModifiers::NONE);
        assert_eq!(action_for_key(esc, MIDDLE), Some(Action::FocusOutputs));
        assert_eq!(action_for_key(q, NOTEBOOK), Some(Action::Quit));
        assert_eq!(action_for_key(esc, NOTEBOOK), Some(Action::FocusEditor));
        let ctrl_q = key(KeyCode::Char('q'), KeyModifiers::CONTROL);
        assert_eq!(action_for_key(ctrl_q, MIDDLE), Some(Action::Quit));
    }

    #[test]
    fn up_recalls_history_only_from_the_first_line() {
        let up = key(KeyCode::Up, KeyModifiers::NONE);
        assert_eq!(action_for_key(up, EMPTY), Some(Action::HistoryPrev));
        assert!(matches!(action_for_key(up, MIDDLE), Some(Action::Edit(_))));
    }

    #[test]
    fn releases_are_ignored() {
        let mut k = key(KeyCode::F(5), KeyModifiers::NONE);
        k.kind = KeyEventKind::Release;
        assert_eq!(action_for_key(k, EMPTY), None);
    }
}
