//! Who gets a key: the focus (the editor, the notebook or the side pane),
//! which side pane is shown, and the one resolver of the key context the
//! keymap reads ([`App::key_context`]), from the focus and the overlay on top
//! (`overlay.rs`).

use super::App;
use super::overlay::Overlay;
use crate::tui::keymap::{KeyContext, Mode};

/// Who has the keys when nothing over the screen takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    /// The cell editor (keys type text).
    #[default]
    Editor,
    /// The notebook (single keys select, scroll, copy…).
    Notebook,
    /// The side pane that is shown ([`App::side`]).
    Pane,
}

/// The pane beside the notebook (under it on a narrow terminal); one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SidePane {
    /// The files of `/mnt/data`.
    Files,
    /// The sessions of the pool.
    Sessions,
}

impl App {
    /// The overlay that takes the keys now, if any: the newest open
    /// ([`super::Overlays::top`]).
    pub fn overlay(&self) -> Option<Overlay> {
        self.overlays.top()
    }

    /// Whether side pane `pane` is shown.
    pub fn pane_open(&self, pane: SidePane) -> bool {
        self.side == Some(pane)
    }

    /// Whether side pane `pane` is shown and has the keys.
    pub fn pane_focused(&self, pane: SidePane) -> bool {
        self.side == Some(pane) && self.focus == Focus::Pane
    }

    /// Shows side pane `pane` (in place of the other) and gives it the keys.
    pub(crate) fn show_pane(&mut self, pane: SidePane) {
        self.side = Some(pane);
        self.focus = Focus::Pane;
    }

    /// Hides the side pane; the keys go back to the editor if it had them.
    pub(crate) fn hide_pane(&mut self) {
        self.side = None;
        if self.focus == Focus::Pane {
            self.focus = Focus::Editor;
        }
    }

    /// The one resolver of who gets a key: the mode whose bindings apply (an
    /// overlay's, else the focus's), whether every key is typed into an open
    /// overlay, and where the editor's cursor is (for the history keys).
    pub fn key_context(&self) -> KeyContext {
        let row = self.notebook.editor.cursor().0;
        let overlay = self.overlay();
        let mode = match (overlay, self.focus, self.side) {
            (Some(Overlay::Help), ..) => Mode::Help,
            (Some(Overlay::Pager), ..) => Mode::Pager,
            (_, Focus::Pane, Some(SidePane::Files)) => Mode::Files,
            (_, Focus::Pane, Some(SidePane::Sessions)) => Mode::Sessions,
            (_, Focus::Notebook, _) => Mode::Outputs,
            _ => Mode::Editor,
        };
        KeyContext {
            mode,
            typing: overlay.is_some_and(Overlay::takes_every_key)
                || (overlay == Some(Overlay::Pager)
                    && self
                        .overlays
                        .pager()
                        .is_some_and(crate::tui::pager::Pager::is_typing)),
            empty: self.notebook.editor.is_empty(),
            on_first_line: row == 0,
            on_last_line: row + 1 >= self.notebook.editor.lines().len(),
        }
    }
}
