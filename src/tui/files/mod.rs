//! The files pane's part of the app state and its reducers: browsing
//! `/mnt/data` (folders where the api-version has `path`), the artifact radar
//! after each cell, previews, downloads (to a chosen folder, never replacing a
//! file without a yes), uploads (a path prompt with Tab completion, or a pasted
//! path, or the local file picker of `picker/`), deletes (after a yes),
//! and the progress of the transfer under way.
//!
//! Like the rest of `App`'s reducers these are pure: what must happen outside
//! goes out as [`Effect::Files`] commands for the session worker's file work
//! ([`crate::session::files`]), and its news comes back as [`crate::session::FileEvent`]s,
//! whose reducer returns the effects that follow (a refresh after a
//! transfer, the automatic preview after a cell). A preview is made in two
//! steps: the worker fetches the file's head, then a blocking thread builds
//! the preview from it ([`Effect::BuildPreview`]).

pub mod pane;
pub mod preview;
pub mod update;
pub mod view;

use std::path::PathBuf;

use serde::Deserialize;

use crate::protocol::RemoteFile;
use crate::session::radar::Radar;
use crate::session::{FileCommand, FileHead, HeadRequest};
use crate::tui::action::Effect;
use crate::tui::files::pane::FilesPaneState;
use crate::tui::files::preview::{Preview, PreviewJob, head_limit};
use crate::tui::widgets::image::ImageKey;

/// The session's data folder.
pub const DATA_ROOT: &str = "/mnt/data";
/// The image key of the preview's image (no cell has this index).
pub const PREVIEW_IMAGE: ImageKey = ImageKey {
    cell: usize::MAX,
    output: 0,
};
pub(crate) const UPLOAD_LABEL: &str =
    "Upload (paths, space-separated; Tab completes; Ctrl+O picks):";
pub(crate) const FOLDER_LABEL: &str = "Download to folder:";

/// A key of the files pane (`run = "files down"` in the keymap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilesAction {
    /// Select the next entry.
    Down,
    /// Select the previous entry.
    Up,
    /// Down a page.
    PageDown,
    /// Up a page.
    PageUp,
    /// Open the selected folder, or preview the selected file.
    Open,
    /// Go to the parent folder.
    Parent,
    /// List the folder again.
    Refresh,
    /// Mark or unmark the selected file or folder.
    Mark,
    /// Preview the selected file.
    Preview,
    /// Download the marked (else the selected) files to the download folder.
    Download,
    /// Ask for the download folder, then download.
    DownloadTo,
    /// Ask for local paths to upload.
    Upload,
    /// Pick local files to upload in the file picker (`picker/`).
    Pick,
    /// Delete the marked (else the selected) files, after a yes.
    Delete,
    /// Cancel the transfer, else close the preview, else back to the editor.
    Back,
    /// Scroll the preview down.
    PreviewDown,
    /// Scroll the preview up.
    PreviewUp,
}

impl crate::tui::widgets::prompt::Purposeful for FilesPrompt {
    fn completion(&self) -> Option<fn(&str) -> String> {
        match self {
            // Tab completes local paths, each of several.
            Self::Upload => Some(crate::tui::local_paths::complete_path),
            _ => None,
        }
    }
}

/// What the files pane asks on the bottom row (a [`crate::tui::widgets::prompt::Prompt`]'s purpose).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilesPrompt {
    /// The folder to download into.
    Folder,
    /// Local paths to upload.
    Upload,
    /// Delete these remote files?
    Delete(Vec<String>),
    /// Delete these remote folders, with everything in them, and files?
    DeleteFolders {
        /// The folders (relative to `/mnt/data`).
        folders: Vec<String>,
        /// The files marked beside them.
        files: Vec<String>,
    },
    /// These local files exist: replace them? (With the summary of the transfer
    /// that found them, kept in view after the answer.)
    Overwrite(Vec<(String, PathBuf)>, String),
    /// The download folder does not exist: create it (and its parents), then
    /// download into it?
    CreateFolder(PathBuf),
}

/// A transfer under way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// What moves (`report.csv (1 of 2)`).
    pub label: String,
    /// Bytes done.
    pub done: u64,
    /// Bytes in all, when known.
    pub total: Option<u64>,
}

/// The files pane's state in the app.
#[derive(Debug)]
pub struct FilesUi {
    /// The listing and its view state.
    pub pane: FilesPaneState,
    /// The open preview.
    pub preview: Option<Preview>,
    /// The preview's scroll.
    pub preview_scroll: u16,
    /// The file whose preview is on its way.
    pub preview_loading: Option<String>,
    /// The transfer under way.
    pub transfer: Option<Transfer>,
    /// Where downloads go.
    pub download_folder: PathBuf,
    /// Folders can be listed (the api-version has `path`) and files deleted.
    pub can_manage: bool,
    /// Folders can be listed recursively (2025-10-02 and later), so they can
    /// be downloaded and deleted with everything in them.
    pub can_recurse: bool,
    /// The size the preview was last drawn in (columns, rows).
    pub view_size: (u16, u16),
    /// The last radar (marks of the last cell).
    pub radar: Radar,
    pub(crate) list_generation: u64,
    pub(crate) preview_generation: u64,
    /// Columns, rows and colours of the preview asked for last.
    preview_frame: (u16, u16, bool),
    /// The entry to select when the next listing arrives (the folder left).
    pub(crate) select_after_list: Option<String>,
    /// The last cell's first new image or table, found while the pane was
    /// closed: previewed when the pane opens next.
    pub pending_preview: Option<String>,
}

impl FilesUi {
    /// A closed pane on `/mnt/data`, downloading to the working directory.
    pub fn new(can_manage: bool) -> Self {
        Self {
            pane: FilesPaneState::new(DATA_ROOT, chrono::Utc::now()),
            preview: None,
            preview_scroll: 0,
            preview_loading: None,
            transfer: None,
            download_folder: PathBuf::from("."),
            can_manage,
            can_recurse: false,
            view_size: (60, 20),
            radar: Radar::default(),
            list_generation: 0,
            select_after_list: None,
            pending_preview: None,
            preview_generation: 0,
            preview_frame: (60, 20, true),
        }
    }

    /// The same pane, saying whether folders can be listed recursively
    /// ([`Self::can_recurse`]).
    #[must_use]
    pub fn with_recursion(mut self, can_recurse: bool) -> Self {
        self.can_recurse = can_recurse;
        self
    }

    /// The listed folder relative to `/mnt/data` (`None` at the root).
    pub fn relative_folder(&self) -> Option<String> {
        let rel = self
            .pane
            .folder
            .strip_prefix(DATA_ROOT)
            .unwrap_or(&self.pane.folder)
            .trim_matches('/');
        (!rel.is_empty()).then(|| rel.to_string())
    }

    /// The name of `file` relative to `/mnt/data`.
    pub fn remote_name(&self, file: &RemoteFile) -> String {
        match self.relative_folder() {
            Some(folder) => format!("{folder}/{}", file.path()),
            None => file.path(),
        }
    }

    pub(crate) fn list(&mut self) -> Effect {
        self.list_generation += 1;
        // The marks belong to the last cell, not to a listing: the folder
        // shown now gets its part of them.
        let folder = self.relative_folder();
        self.pane.set_radar(&self.radar, folder.as_deref());
        if self.pane.entries().is_empty() {
            self.pane.message = Some("loading…".into());
        }
        Effect::Files(FileCommand::List {
            generation: self.list_generation,
            path: self.relative_folder().map(|f| format!("{DATA_ROOT}/{f}")),
        })
    }

    pub(crate) fn preview_of(&mut self, file: &RemoteFile, colors: bool) -> Effect {
        self.preview_generation += 1;
        let name = self.remote_name(file);
        self.preview_loading = Some(name.clone());
        let (width, height) = self.view_size;
        self.preview_frame = (
            width.saturating_sub(2).max(10),
            height.saturating_sub(2).max(5),
            colors,
        );
        Effect::Files(FileCommand::Head(HeadRequest {
            generation: self.preview_generation,
            limit: head_limit(&name, file.content_type.as_deref()),
            name,
            content_type: file.content_type.clone(),
            size: file.size,
        }))
    }
}

impl FilesUi {
    /// The effect that builds the preview of `head`, in the frame the preview
    /// was asked for in.
    pub(crate) fn build_preview(&self, generation: u64, head: FileHead) -> Effect {
        let (width, height, colors) = self.preview_frame;
        Effect::BuildPreview(PreviewJob {
            generation,
            head,
            width,
            height,
            colors,
        })
    }
}

/// The key that shows the files pane, as the keymap names it.
pub(crate) fn files_key(keymap: &crate::tui::keymap::Keymap) -> String {
    use crate::tui::keymap::Mode;
    keymap
        .key_for(
            &crate::tui::action::Action::ToggleFiles,
            &[Mode::Editor, Mode::Outputs],
        )
        .unwrap_or_else(|| "F2".into())
}

/// A new pane on `folder` that keeps the old one's focus and clock.
pub(crate) fn fresh_pane(old: &FilesPaneState, folder: &str) -> FilesPaneState {
    let mut pane = FilesPaneState::new(folder, old.now);
    pane.focused = old.focused;
    pane.tz = old.tz;
    pane
}

#[cfg(test)]
mod tests;
