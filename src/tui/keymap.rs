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
    let action = match key.code {
        KeyCode::F(5) => Action::RunCell,
        KeyCode::Enter if ctrl || alt => Action::RunCell,
        // Terminals without the kitty protocol often send Ctrl+Enter as a line feed,
        // which raw mode reports as Ctrl+J.
        KeyCode::Char('j') if ctrl && !alt => Action::RunCell,
        KeyCode::Char('q' | 'Q') if ctrl => Action::Quit,
        KeyCode::Char('c' | 'C') if ctrl => Action::Interrupt,
        KeyCode::Char('q') if plain && editor.empty => Action::Quit,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Up if plain && (editor.empty || editor.on_first_line) => Action::HistoryPrev,
        KeyCode::Down if plain && editor.on_last_line => Action::HistoryNext,
        _ => Action::Edit(Input::from(key)),
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
    };
    const MIDDLE: EditorContext = EditorContext {
        empty: false,
        on_first_line: false,
        on_last_line: false,
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
    fn q_quits_only_in_an_empty_editor() {
        let q = key(KeyCode::Char('q'), KeyModifiers::NONE);
        assert_eq!(action_for_key(q, EMPTY), Some(Action::Quit));
        assert!(matches!(action_for_key(q, MIDDLE), Some(Action::Edit(_))));
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
