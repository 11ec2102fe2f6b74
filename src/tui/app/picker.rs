//! The upload picker as the app opens it and routes its keys: a chosen file
//! is uploaded (`tui/picker/` holds the picker's state and view; `impl App`
//! lives only in `tui/app/`).

use super::App;
use super::Layer;
use crate::tui::action::Action;
use crate::tui::action::Effect;
use crate::tui::picker::shown;
use crate::tui::picker::{FilePicker, PickerKey};
use std::path::PathBuf;

impl App {
    /// Opens the picker in `dir` when it is a folder, else in the working
    /// directory. A folder that cannot be listed becomes a notice.
    pub fn open_picker(&mut self, dir: Option<PathBuf>) {
        let dir = dir
            .filter(|d| d.is_dir())
            .unwrap_or_else(|| PathBuf::from("."));
        match FilePicker::open(&dir) {
            Ok(picker) => self.overlays.open(Layer::Picker(picker)),
            Err(e) => self.notice = Some(format!("cannot list {}: {e}", shown(&dir))),
        }
    }

    /// A key (or paste, resize…) while the picker is open: keys go to
    /// [`FilePicker::key`], the quit key quits ([`App::ask_to_quit`]);
    /// anything else leaves it as it is. An upload that
    /// `App::upload` refuses (too big, a transfer under way) keeps the picker
    /// and its marks open, with the reason.
    pub fn picker_action(&mut self, action: Action) -> Vec<Effect> {
        let Some(mut taken) = self.overlays.take_picker() else {
            return Vec::new();
        };
        if action == Action::Quit {
            // The picker stays open beneath the question, if one is asked.
            self.overlays.put_back(taken, Layer::Picker);
            self.ask_to_quit();
            return Vec::new();
        }
        if let Action::Edit(input) = action {
            match taken.state.key(&input) {
                PickerKey::Stay => {}
                PickerKey::Close => return Vec::new(),
                PickerKey::Upload(paths) => {
                    let effects = self.upload(paths);
                    if !effects.is_empty() {
                        return effects;
                    }
                    taken.state.notice.clone_from(&self.notice);
                }
            }
        }
        self.overlays.put_back(taken, Layer::Picker);
        Vec::new()
    }
}
