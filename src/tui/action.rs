//! User intents ([`Action`]) and the side effects the UI state asks its driver to
//! carry out ([`Effect`]). Keys become actions in `keymap.rs`; `App::update` turns
//! actions into state changes and effects; the loop in `runner.rs` executes effects.

use ratatui_textarea::Input;

use super::event::RunId;

/// Something the user wants.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run the editor's contents as a new cell (F5, Alt+Enter, Ctrl+Enter).
    RunCell,
    /// Replace the editor with the previous cell's source (Up on the first line).
    HistoryPrev,
    /// Go forward in history, back to the draft after the newest (Down on the last
    /// line while browsing history).
    HistoryNext,
    /// A key for the text editor itself (characters, Enter, arrows, Backspace…).
    Edit(Input),
    /// Text pasted with bracketed paste.
    Paste(String),
    /// Scroll the outputs one page up.
    PageUp,
    /// Scroll the outputs one page down.
    PageDown,
    /// Scroll the outputs by this many lines (negative: up), from the mouse wheel.
    ScrollLines(i32),
    /// Ctrl+C: the first press warns, a second within two seconds quits.
    Interrupt,
    /// Quit now (Ctrl+Q anywhere, `q` with the notebook focused).
    Quit,
    /// Move the keyboard focus to the notebook (Esc in the editor), where single
    /// keys scroll and `q` quits.
    FocusOutputs,
    /// Move the keyboard focus back to the cell editor (Esc, Enter or `i`).
    FocusEditor,
    /// The terminal changed size: only a redraw is needed.
    Resize,
}

/// A side effect requested by the state, carried out by the UI loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Ask the session worker to execute `code` (queued behind earlier runs).
    Execute {
        /// The run the reply will name.
        run: RunId,
        /// The Python source.
        code: String,
    },
}
