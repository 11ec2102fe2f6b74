//! What [`App`] does for the files pane: showing and hiding it, handing its
//! keys, pastes, answers and the worker's news to its reducer
//! (`tui/files/update.rs`, which changes only the pane's state), and carrying
//! out what the reducer hands back ([`Out`]): effects for the loop, notices,
//! prompts, the picker, the focus.

use super::App;
use crate::notebook::Output;
use crate::session::FileEvent;
use crate::tui::action::Effect;
use crate::tui::app::{Purpose, SidePane};
use crate::tui::files::preview::Preview;
use crate::tui::files::update::{FilesCx, FilesOut, FilesRequest, preview_image};
use crate::tui::files::{FilesAction, FilesPrompt, PREVIEW_IMAGE};
use crate::tui::keymap::Keymap;
use crate::tui::theme::Theme;
use crate::tui::widgets::prompt::Answer;
use std::path::PathBuf;

impl App {
    /// Carries out what the files pane's reducer handed back; returns the
    /// effects for the loop.
    fn apply_files(&mut self, outs: Vec<FilesOut>) -> Vec<Effect> {
        self.apply(outs, Purpose::Files, |app, request| match request {
            FilesRequest::OpenPicker(dir) => {
                app.open_picker(dir);
                Vec::new()
            }
        })
    }

    /// Text pasted while the files pane has the focus: an existing local file's
    /// path (a file dropped on the terminal) is uploaded.
    pub fn files_paste(&mut self, text: &str) -> Vec<Effect> {
        let outs = self.files.paste(text);
        self.apply_files(outs)
    }

    /// Uploads local `paths` into the listed folder (from the picker).
    pub(crate) fn upload(&mut self, paths: Vec<PathBuf>) -> Vec<Effect> {
        let outs = self.files.upload(paths);
        self.apply_files(outs)
    }

    /// The answer to a files prompt, for the pane's reducer.
    pub(crate) fn files_answer(&mut self, asked: FilesPrompt, answer: Answer) -> Vec<Effect> {
        let outs = self.files.answer(asked, answer);
        self.apply_files(outs)
    }

    /// Shows the files pane with the focus, or hides it (F2, `f`).
    pub fn toggle_files(&mut self) -> Vec<Effect> {
        if self.pane_focused(SidePane::Files) {
            self.hide_pane();
            return Vec::new();
        }
        let first = !self.pane_open(SidePane::Files);
        self.show_pane(SidePane::Files);
        if first {
            return self.files.opened(self.theme.colors);
        }
        Vec::new()
    }

    /// A key of the files pane, for its reducer.
    pub fn files_action(&mut self, action: FilesAction) -> Vec<Effect> {
        let cx = files_cx(&self.theme, self.side, &self.keymap);
        let outs = self.files.update(action, &cx);
        self.apply_files(outs)
    }

    /// A preview built off the UI task from the head of a file: its image goes
    /// to the image store, the preview to the pane (unless another preview
    /// was asked for since).
    pub fn preview_built(&mut self, generation: u64, result: Result<Box<Preview>, String>) {
        if generation & super::recorded_files::PREVIEW_BIT != 0 {
            self.recorded_preview_built(generation, result);
            return;
        }
        if self.files.is_current_preview(generation)
            && let Ok(preview) = &result
            && let Some(image) = preview_image(preview)
        {
            self.views.images.insert(PREVIEW_IMAGE, Ok(image.clone()));
        }
        let outs = self.files.preview_built(generation, result);
        self.apply_files(outs);
    }

    /// News from the session worker's file work; returns the effects that
    /// follow from it.
    pub fn files_event(&mut self, event: FileEvent) -> Vec<Effect> {
        self.dirty = true;
        let after_cell = matches!(event, FileEvent::CellListing { .. });
        let cx = files_cx(&self.theme, self.side, &self.keymap);
        let outs = self.files.event(event, &cx);
        if after_cell {
            self.files_line_under_last_cell();
        }
        self.apply_files(outs)
    }

    /// Puts the radar's line (`files: wrote …`) under the cell it was taken
    /// for: the last settled cell (the listing after a cell comes on the
    /// worker's one channel after the cell's answer, and holds up the next
    /// cell), and saves the cell again with it.
    fn files_line_under_last_cell(&mut self) {
        let Some(line) = self.files.radar.files_line() else {
            return;
        };
        let cells = self.notebook.cells();
        let Some(index) = cells.iter().rposition(|c| c.outcome.is_some()) else {
            return;
        };
        let Some(cell) = self.notebook.book.cell_mut(index) else {
            return;
        };
        // The same listing seen twice (an own cell that is also followed)
        // gives one line.
        if cell
            .outputs
            .iter()
            .any(|o| matches!(o, Output::Files { line: l } if *l == line))
        {
            return;
        }
        cell.outputs.push(Output::Files { line });
        self.notebook.outputs.invalidate(index);
        self.notebook.save_cell(index);
    }
}

/// What the files pane reads of the app (built from the fields, so the pane's
/// state can be borrowed for change beside it).
fn files_cx<'a>(theme: &Theme, side: Option<SidePane>, keymap: &'a Keymap) -> FilesCx<'a> {
    FilesCx {
        colors: theme.colors,
        pane_open: side == Some(SidePane::Files),
        keymap,
    }
}
