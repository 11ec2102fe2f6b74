//! The history search (Ctrl+R) as the app holds it: an overlay that takes
//! every key while it is open ([`App::key_context`] says so to the keymap);
//! the cell it chooses goes to the notebook's editor
//! ([`NotebookUi::take_from_history`]).
//!
//! [`NotebookUi::take_from_history`]: crate::tui::notebook::NotebookUi::take_from_history

use std::time::Instant;

use super::App;
use super::Layer;
use crate::tui::action::{Action, Effect};
use crate::tui::notebook::history_search::SearchKey;

impl App {
    /// An action while the history search is open: it goes to the search.
    pub(super) fn modal_action(&mut self, action: Action) -> Vec<Effect> {
        let Some(mut taken) = self.overlays.take_history_search() else {
            return Vec::new();
        };
        match action {
            Action::Edit(input) => match taken.state.key(input, self.notebook.cells()) {
                SearchKey::Searching => self.overlays.put_back(taken, Layer::HistorySearch),
                SearchKey::Cancel => {}
                SearchKey::Take(index) => {
                    let outs = self.notebook.take_from_history(index);
                    return self.apply_notebook(outs, Instant::now());
                }
            },
            Action::Paste(text) => {
                taken.state.paste(&text, self.notebook.cells());
                self.overlays.put_back(taken, Layer::HistorySearch);
            }
            Action::Quit => {
                // The search stays open beneath the question, if one is asked.
                self.overlays.put_back(taken, Layer::HistorySearch);
                self.ask_to_quit();
            }
            // Anything else (a resize, the mouse) leaves the search as it is.
            _ => self.overlays.put_back(taken, Layer::HistorySearch),
        }
        Vec::new()
    }
}

#[cfg(test)]
#[path = "modal_tests.rs"]
mod tests;
