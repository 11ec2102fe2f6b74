//! The notebook, the central feature: its state ([`NotebookUi`] in
//! `state.rs`: the cells, the cell editor, the selection, the runs and their
//! state machine (`runs.rs`), the session boundaries, the saver, and its own
//! view state), its reducer (`update.rs`: [`NotebookUi::update`] over its
//! actions, and the methods the app calls with the worker's news about runs
//! and with the answers to what it asked), and its views: the cells and their
//! outputs, the editor and the history search (Ctrl+R). Like every feature it
//! imports no other feature and never the app; what only the app can do comes
//! back as [`NotebookRequest`]s.

use std::time::Duration;

use serde::Deserialize;

pub mod cell_editor;
pub mod cell_view;
pub mod completion;
pub mod completion_popup;
pub mod editor;
pub mod history_search;
pub mod indent;
pub mod outputs;
pub mod quit;
mod run_news;
pub mod runs;
mod selected;
pub mod state;
pub mod undo;
pub mod update;

pub use self::quit::{AtStake, QuitCx};
pub use self::state::{Areas, NotebookUi, PoolSays, SessionBoundary};
pub use self::update::{NotebookCx, NotebookOut, NotebookPrompt, NotebookRequest};

/// A key of the notebook: the editor's and the outputs' own actions. The
/// keymap names them as they always were (`run = "run_cell"`,
/// `"select_cell -1"`): `keymap::parse_run` reads a name of this enum as
/// `Action::Notebook(..)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotebookAction {
    /// Run the editor's contents as a new cell (F5, Alt+Enter, Ctrl+Enter).
    RunCell,
    /// Ask for a shell command's standard input, then run the editor's
    /// contents with it (Alt+I; Shell pools).
    RunCellWithStdin,
    /// Replace the editor with the previous cell's source (Up on the first line).
    HistoryPrev,
    /// Go forward in history, back to the draft after the newest (Down on the last
    /// line while browsing history).
    HistoryNext,
    /// Enter in the editor: a new line with the current line's indentation, four
    /// spaces more after a line ending in `:`.
    Newline,
    /// Undo the last edit of the cell, a word or a whole edit at a time
    /// (Ctrl+Z, Ctrl+_).
    Undo,
    /// Redo what was undone (Alt+Z; Ctrl+Shift+Z where the terminal reports it).
    Redo,
    /// Kill from the cursor to the start of the line, into the kill buffer
    /// (Ctrl+U, as readline); at the start of a line, join it to the one above.
    KillToStart,
    /// Kill from the cursor to the end of the line, into the kill buffer
    /// (Ctrl+K, as readline); at the end of a line, join the next one.
    KillToEnd,
    /// Insert the kill buffer at the cursor (Ctrl+Y, as readline): the text
    /// last killed or cleared.
    Yank,
    /// Dedent the cursor's line, or the selected lines, by one level
    /// (Shift+Tab).
    Dedent,
    /// Ctrl+C in the editor: while a cell of this app runs, interrupt it as
    /// [`NotebookAction::Interrupt`] does (the running cell comes first, so
    /// its interrupt is always one key away); else, when the editor holds
    /// text, clear the cell as IPython does, the text kept in the kill buffer
    /// (Ctrl+Y) and one undo away (Ctrl+Z); else the app's quit rule.
    ClearOrInterrupt,
    /// Edit the cell in `$VISUAL` / `$EDITOR` (Ctrl+E); the terminal is handed
    /// over until the editor exits.
    ExternalEditor,
    /// Ctrl+C: while a cell runs, stop it as [`NotebookAction::StopCell`]
    /// stops the running cell (Jupyter's habit: the local pool interrupts the
    /// kernel, a second press abandons the cell); with nothing running, the
    /// app's rule applies (the first press warns and a second within two
    /// seconds quits: [`NotebookRequest::NothingToInterrupt`]).
    Interrupt,
    /// Move the keyboard focus to the notebook (Esc in the editor), where single
    /// keys scroll and `q` quits.
    FocusOutputs,
    /// Move the selected cell of the notebook by this many cells (negative: up),
    /// scrolling to keep it in view.
    SelectCell(i32),
    /// Stop the selected cell if it waits or runs, else the running one: on the
    /// local pool the kernel is interrupted (a second press abandons it); on the
    /// service, which has no interrupt, the UI stops waiting for it.
    StopCell,
    /// Copy the selected cell's output text to the clipboard (OSC 52).
    CopyOutput,
    /// Copy the selected cell's source to the clipboard (OSC 52).
    CopyInput,
    /// Save the selected cell's output (text, or its image) to a file: asks for
    /// the path, and before replacing a file.
    SaveOutput,
    /// Search the earlier cells and bring one into the editor (Ctrl+R).
    HistorySearch,
    /// Run again, in this session, the cells that succeeded above the newest
    /// session boundary (`R` in the notebook): the state a reopened notebook
    /// or a recycled session lost.
    ReplayEarlier,
    /// Run the selected cell again, as a new cell, asking for ten times the
    /// output the service cut it at (`outputStreamsMaxLength`,
    /// 2025-10-02-preview: `m` in the notebook); said why not when its output
    /// is not cut or the pool's api-version has no such field.
    RunWithMoreOutput,
}

/// The pool, as far as the UI knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolState {
    /// The embedded pool is starting (maybe building its Python environment).
    Starting,
    /// Executions can be sent.
    Ready,
    /// The pool could not be started or reached.
    Failed(String),
}

/// A duration the way people read it: `12 ms`, `1.2 s`, `3 min 5 s`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        let secs = d.as_secs();
        format!("{} min {} s", secs / 60, secs % 60)
    }
}
