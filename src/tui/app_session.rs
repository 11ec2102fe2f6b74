//! Switching the app to another session, a part of [`App`]'s reducer kept apart
//! from `app.rs`: the notebook, its views and the files pane start empty for the
//! new identifier (its stored notebook is then loaded by the loop, and the old
//! notebook's saver finishes on its own once dropped).

use super::App;
use crate::notebook::Notebook;
use crate::tui::files::FilesUi;
use crate::tui::ui::Views;

impl App {
    /// Forgets the current session's notebook and views and makes `identifier`
    /// the session cells run in. No run may be pending (the caller checks).
    /// Returns the effects that follow (the open files pane lists the new
    /// session's folder).
    pub(crate) fn begin_session(&mut self, identifier: &str) -> Vec<crate::tui::action::Effect> {
        self.config.identifier = identifier.to_string();
        self.notebook = Notebook::default();
        self.follow.new_session();
        self.boundaries.clear();
        self.loaded_cells = 0;
        self.views = Views::default();
        self.history = super::History::default();
        self.runs.clear();
        self.selected = None;
        self.queued.clear();
        // Dropping the saver lets its thread write what it has and end.
        self.saver = None;
        let files_open = self.pane_open(super::SidePane::Files);
        self.files = FilesUi::new(self.config.api_version.has_file_management());
        self.dirty = true;
        if files_open {
            return self.files_action(crate::tui::files::FilesAction::Refresh);
        }
        Vec::new()
    }
}
