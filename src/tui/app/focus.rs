//! Who gets a key, a part of [`App`] kept apart from `app.rs`: the focus (the
//! editor, the notebook or the side pane), which side pane is shown, the
//! overlays that take the keys before the focus does, and the one resolver of
//! the key context the keymap reads ([`App::key_context`]) and `App::update`
//! dispatches on ([`App::overlay`]).

use super::App;
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

/// What is open over the screen and takes the keys before the focus does,
/// as [`App::overlay`] resolves it (the first that is open, in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    /// A prompt or question on the bottom row: every key is typed into it.
    Prompt,
    /// The history search (Ctrl+R): every key is typed into it.
    HistorySearch,
    /// The local file picker of uploads: every key goes to it.
    Picker,
    /// The pools chooser: every key goes to it.
    PoolsMenu,
    /// The help overlay: its own bindings.
    Help,
    /// The pager: its own bindings (its search line takes every key).
    Pager,
}

impl Overlay {
    /// Every key is typed into this overlay (no binding, no mouse).
    pub fn takes_every_key(self) -> bool {
        matches!(
            self,
            Self::Prompt | Self::HistorySearch | Self::Picker | Self::PoolsMenu
        )
    }
}

impl App {
    /// The overlay that takes the keys now, if any: the first open of
    /// [`Overlay`]'s variants, in their order.
    pub fn overlay(&self) -> Option<Overlay> {
        if self.prompt.is_some() {
            Some(Overlay::Prompt)
        } else if self.modal.is_some() {
            Some(Overlay::HistorySearch)
        } else if self.files.picker.is_some() {
            Some(Overlay::Picker)
        } else if self.pools.menu.is_some() {
            Some(Overlay::PoolsMenu)
        } else if self.help_open {
            Some(Overlay::Help)
        } else if self.views.pager_mode().is_some() {
            Some(Overlay::Pager)
        } else {
            None
        }
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
        let row = self.editor.cursor().0;
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
                || (overlay == Some(Overlay::Pager) && self.views.pager_mode() == Some(true)),
            empty: self.editor.is_empty(),
            on_first_line: row == 0,
            on_last_line: row + 1 >= self.editor.lines().len(),
        }
    }
}
