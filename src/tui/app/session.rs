//! Switching the app to another session, a part of [`App`]'s reducer kept apart
//! from `app.rs`: the notebook, its views and the files pane start empty for the
//! new identifier (its stored notebook is then loaded by the loop, and the old
//! notebook's saver finishes on its own once dropped).

use super::App;
use crate::tui::app::view::Views;
use crate::tui::files::FilesUi;

impl App {
    /// Forgets the current session's notebook and views and makes `identifier`
    /// the session cells run in. No run may be pending (the caller checks).
    /// Returns the effects that follow (the open files pane lists the new
    /// session's folder).
    pub(crate) fn begin_session(&mut self, identifier: &str) -> Vec<crate::tui::action::Effect> {
        self.config.identifier = identifier.to_string();
        // The notebook forgets its cells, runs, saver and views (dropping the
        // saver lets its thread write what it has and end).
        self.notebook.new_session(self.config.language);
        self.follow.new_session();
        // A replay's verdicts were about the session left.
        self.recorded.replay = None;
        // Fresh views, but the same terminal: its image protocol and the
        // encoders off the UI task stay, and so does the cells' language.
        self.views = Views {
            images: self.views.images.sibling(),
            ..Views::default()
        };
        self.views.set_language(self.config.language);
        let files_open = self.pane_open(super::SidePane::Files);
        self.files = FilesUi::new(self.config.api_version.has_file_management())
            .with_recursion(self.config.api_version.has_recursive_listing());
        self.dirty = true;
        if files_open {
            return self.files_action(crate::tui::files::FilesAction::Refresh);
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use ratatui_image::picker::{Picker, ProtocolType};

    use crate::notebook::language::Language;
    use crate::protocol::ApiVersion;
    use crate::tui::app::{App, AppConfig, PoolState};

    #[test]
    fn a_switched_session_keeps_the_terminals_image_protocol_and_the_language() {
        let mut app = App::new(
            AppConfig {
                pool_label: "local".into(),
                identifier: "first".into(),
                api_version: ApiVersion::V2025_10_02,
                language: Language::Shell,
            },
            PoolState::Ready,
        );
        let mut picker = Picker::halfblocks();
        picker.set_protocol_type(ProtocolType::Kitty);
        app.views.images.set_picker(picker);
        app.begin_session("second");
        assert_eq!(app.views.images.protocol(), ProtocolType::Kitty);
        assert_eq!(app.views.highlighter.language(), Language::Shell);
    }
}
