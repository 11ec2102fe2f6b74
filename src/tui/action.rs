//! User intents ([`Action`]) and the side effects the UI state asks its driver to
//! carry out ([`Effect`]). Keys become actions in `keymap.rs`; `App::update` turns
//! actions into state changes and effects; the loop in `runner.rs` executes effects.
//!
//! Keymap files name actions by their `snake_case` name (`run = "run_cell"`,
//! `run = "scroll_lines -1"`), through `Deserialize`; variants that only the
//! terminal produces (typed keys, paste, resize) are `#[serde(skip)]`, and so
//! is [`Action::Notebook`], whose actions keep their flat names
//! (`run = "run_cell"`: `keymap::parse_run`).

use ratatui_textarea::Input;
use serde::Deserialize;

use super::files::FilesAction;
use super::files::preview::PreviewJob;
use super::help::HelpAction;
use super::local::LocalWork;
use super::notebook::NotebookAction;
use super::pager::PagerAction;
use super::persist::Place;
use super::pools::PoolChoice;
use super::sessions::SessionsAction;
use crate::session::{FileCommand, RunId, SessionsCommand};

/// Something the user wants.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A key for the text editor itself (characters, arrows, Backspace…).
    #[serde(skip)]
    Edit(Input),
    /// Text pasted with bracketed paste.
    #[serde(skip)]
    Paste(String),
    /// The help overlay: open (built from the keymap), close, scroll
    /// (`run = "help open"`; `help`, `close_help`, `help_scroll N` still parse).
    Help(HelpAction),
    /// Show the files pane with the focus, or hide it (F2; `f` in the notebook).
    ToggleFiles,
    /// A key of the files pane (`run = "files down"`).
    Files(FilesAction),
    /// Show the sessions pane with the focus, or hide it (F3).
    ToggleSessions,
    /// A key of the sessions pane (`run = "sessions down"`).
    Sessions(SessionsAction),
    /// Scroll the outputs one page up.
    PageUp,
    /// Scroll the outputs one page down.
    PageDown,
    /// Scroll the outputs by this many lines (negative: up), from the mouse wheel.
    ScrollLines(i32),
    /// Quit now (Ctrl+Q anywhere, `q` with the notebook focused).
    Quit,
    /// Move the keyboard focus back to the cell editor (Esc, Enter or `i`).
    FocusEditor,
    /// Tab in the cell editor: ask the kernel to complete after a name or
    /// `.` (`notebook/completion.rs`); elsewhere, or on a pool without
    /// completion, the editor's own Tab (indent).
    Complete,
    /// In a recorded session shown read-only: the files the selected cell
    /// changed, to preview, diff or save one (`F`).
    RecordedFiles,
    /// A left click at this screen position: focuses the pane under it and
    /// selects the cell clicked in the notebook.
    #[serde(skip)]
    Click {
        /// Column, from 0.
        column: u16,
        /// Row, from 0.
        row: u16,
    },
    /// The terminal changed size: only a redraw is needed.
    #[serde(skip)]
    Resize,
    /// The pager: opening it on an output, and its own keys while it is open
    /// (`run = "pager scroll 1"`; `open_pager`, `pager_scroll 1`… still parse).
    Pager(PagerAction),
    /// A key of the notebook: the editor's and the outputs' own actions
    /// (`run_cell`, `select_cell -1`, `stop_cell`…, named without a prefix
    /// as they always were: `keymap::parse_run` reads a name of
    /// [`NotebookAction`] as this variant, so it is not a name of its own).
    #[serde(skip)]
    Notebook(NotebookAction),
}

/// A side effect requested by the state, carried out by the UI loop: the
/// reducers ([`App::update`](super::app::App::update),
/// [`App::handle_event`](super::app::App::handle_event) and
/// [`App::tick`](super::app::App::tick)) return them, and the loop's one
/// `match` carries each out (`runner.rs`). The first six go to the session
/// worker; the others need the terminal or the loop itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Ask the session worker to execute `code` (queued behind earlier runs).
    Execute {
        /// The run the reply will name.
        run: RunId,
        /// The source: code, or a shell command on a Shell pool.
        code: String,
        /// A shell command's standard input, if it was given one.
        stdin: Option<String>,
        /// If it fails, the runs queued after it are not run (Jupyter's
        /// `stop_on_error`); false for a recorded session's replay.
        stop_on_error: bool,
        /// The `outputStreamsMaxLength` to send (2025-10-02-preview); `None`
        /// sends nothing.
        output_streams_max_length: Option<u32>,
    },
    /// Before `run` executes, redo these recorded uploads (a replay of a
    /// recorded session, from the ledger's bytes), in order, and `after` it
    /// those recorded after the last cell; sent just before `run`'s
    /// [`Effect::Execute`].
    ReplayUploads {
        /// The run they come before (or after).
        run: RunId,
        /// The uploads before it.
        uploads: Vec<crate::session::replay::RecordedUpload>,
        /// The uploads after it (the replay's last cell's only).
        after: Vec<crate::session::replay::RecordedUpload>,
    },
    /// Ask the local pool to interrupt `run` (a `KeyboardInterrupt` in the cell);
    /// its reply still arrives as usual.
    Interrupt {
        /// The running run.
        run: RunId,
    },
    /// Run the next cells (and file work) in session `identifier`.
    SwitchSession {
        /// The session identifier.
        identifier: String,
    },
    /// Work on the session's files, for the session worker.
    Files(FileCommand),
    /// Work on the pool's sessions, for the session worker.
    Sessions(SessionsCommand),
    /// Stop waiting for `run`: the worker drops the request (or skips it if it has
    /// not started) and reports nothing more about it.
    Abandon {
        /// The run given up.
        run: RunId,
    },
    /// Hand the terminal to `$VISUAL`/`$EDITOR` to edit this cell text; the
    /// outcome comes back through `App::finish_external_edit`.
    EditExternally {
        /// The cell text.
        source: String,
        /// Its language (the temporary file's extension).
        language: crate::notebook::language::Language,
    },
    /// Copy to the clipboard (OSC 52) or save a file, on the loop (which owns
    /// the terminal); the outcome comes back through `App::finish_local_work`.
    Local(LocalWork),
    /// Build a file's preview from its head on a blocking thread; it comes
    /// back as `AppEvent::PreviewBuilt`.
    BuildPreview(PreviewJob),
    /// Load the stored notebook of the session switched to (off the UI task).
    LoadNotebook(Place),
    /// End this pool's run of the loop and start one for the chosen pool.
    SwitchPool(PoolChoice),
}

/// What a feature's reducer hands back besides the change to its own state:
/// an [`Effect`] for the loop, or a request only the app may carry out (the
/// status line, the bottom-row prompt, the focus, and the feature's own
/// requests `R`: another overlay, another session…). `Q` is the feature's
/// prompt (`Prompt<FilesPrompt>`); the app wraps its purpose into its own
/// before opening it. The app carries these out in order.
#[derive(Debug)]
pub enum Out<Q, R> {
    /// An effect for the loop (the worker, the terminal, a blocking thread).
    Effect(Effect),
    /// A one-off message for the status line.
    Notice(String),
    /// A line or a question on the bottom row; its answer comes back to the
    /// feature that asked.
    Ask(Q),
    /// Give the keys back to the cell editor.
    FocusEditor,
    /// What only the app can do for this feature (it names the feature's
    /// request type).
    Request(R),
}

impl<Q, R> From<Effect> for Out<Q, R> {
    fn from(effect: Effect) -> Self {
        Self::Effect(effect)
    }
}
