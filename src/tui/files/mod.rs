//! The files pane's part of the app state and its reducers: browsing
//! `/mnt/data` (folders where the api-version has `path`), the artifact radar
//! after each cell, previews, downloads (to a chosen folder, never replacing a
//! file without a yes), uploads (a path prompt with Tab completion, or a pasted
//! path, or the local file picker of `picker/`), deletes (after a yes),
//! and the progress of the transfer under way.
//!
//! Like the rest of [`App`]'s reducers these are pure: what must happen outside
//! goes out as [`Effect::Files`] commands for the session worker's file work
//! ([`crate::session::files`]), and its news comes back as [`FileEvent`]s,
//! whose reducer returns the effects that follow (a refresh after a
//! transfer, the automatic preview after a cell). A preview is made in two
//! steps: the worker fetches the file's head, then a blocking thread builds
//! the preview from it ([`Effect::BuildPreview`]).

pub mod pane;
pub mod preview;
pub mod view;

use std::path::PathBuf;

use serde::Deserialize;

use crate::client::MAX_UPLOAD;

use crate::protocol::{FileKind, RemoteFile};
use crate::session::radar::{self, Radar};
use crate::session::{FileCommand, FileEvent, FileHead, HeadRequest};
use crate::tui::action::Effect;
use crate::tui::app::App;
use crate::tui::app::{Focus, SidePane};
use crate::tui::files::pane::FilesPaneState;
use crate::tui::files::preview::{Body, Preview, PreviewJob, head_limit};
use crate::tui::local_paths::{expand_paths, pasted_paths};
use crate::tui::prompt::{Answer, Prompt, Purpose, Question};
use crate::tui::ui::fit::human_size;
use crate::tui::ui::image::ImageKey;

/// The session's data folder.
pub const DATA_ROOT: &str = "/mnt/data";
/// The image key of the preview's image (no cell has this index).
pub const PREVIEW_IMAGE: ImageKey = ImageKey {
    cell: usize::MAX,
    output: 0,
};
const UPLOAD_LABEL: &str = "Upload (paths, space-separated; Tab completes; Ctrl+O picks):";
const FOLDER_LABEL: &str = "Download to folder:";

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
    /// Mark or unmark the selected file.
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

/// What the files pane asks on the bottom row (a [`Prompt`]'s purpose).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilesPrompt {
    /// The folder to download into.
    Folder,
    /// Local paths to upload.
    Upload,
    /// Delete these remote files?
    Delete(Vec<String>),
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
    /// The local file picker of uploads, while it is open (it takes the keys).
    pub picker: Option<crate::tui::picker::FilePicker>,
    /// Where downloads go.
    pub download_folder: PathBuf,
    /// Folders can be listed (the api-version has `path`) and files deleted.
    pub can_manage: bool,
    /// The size the preview was last drawn in (columns, rows).
    pub view_size: (u16, u16),
    /// The last radar (marks of the last cell).
    pub radar: Radar,
    list_generation: u64,
    preview_generation: u64,
    /// Columns, rows and colours of the preview asked for last.
    preview_frame: (u16, u16, bool),
    /// The entry to select when the next listing arrives (the folder left).
    select_after_list: Option<String>,
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
            picker: None,
            download_folder: PathBuf::from("."),
            can_manage,
            view_size: (60, 20),
            radar: Radar::default(),
            list_generation: 0,
            select_after_list: None,
            pending_preview: None,
            preview_generation: 0,
            preview_frame: (60, 20, true),
        }
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

    fn list(&mut self) -> Effect {
        self.list_generation += 1;
        if self.pane.entries().is_empty() {
            self.pane.message = Some("loading…".into());
        }
        Effect::Files(FileCommand::List {
            generation: self.list_generation,
            path: self.relative_folder().map(|f| format!("{DATA_ROOT}/{f}")),
        })
    }

    fn preview_of(&mut self, file: &RemoteFile, colors: bool) -> Effect {
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
    fn build_preview(&self, generation: u64, head: FileHead) -> Effect {
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

impl App {
    /// Shows the files pane with the focus, or hides it (F2, `f`).
    pub fn toggle_files(&mut self) -> Vec<Effect> {
        if self.pane_focused(SidePane::Files) {
            self.hide_pane();
            return Vec::new();
        }
        let first = !self.pane_open(SidePane::Files);
        self.show_pane(SidePane::Files);
        let files = &mut self.files;
        let mut effects = Vec::new();
        if first {
            // A table or image a cell made while the pane was closed: select and
            // preview it now (the listing it is in came with the cell).
            if let Some(path) = files.pending_preview.take()
                && files.relative_folder().is_none()
                && files.pane.select_path(&path)
                && let Some(file) = files.pane.selected_file().cloned()
            {
                files.select_after_list = Some(path);
                effects.push(files.preview_of(&file, self.theme.colors));
            }
            effects.push(files.list());
        }
        effects
    }

    /// A key of the files pane.
    pub fn files_action(&mut self, action: FilesAction) -> Vec<Effect> {
        let colors = self.theme.colors;
        let files = &mut self.files;
        let page = isize::try_from(files.view_size.1.max(2) - 1).unwrap_or(1);
        match action {
            FilesAction::Down => files.pane.move_selection(1),
            FilesAction::Up => files.pane.move_selection(-1),
            FilesAction::PageDown => files.pane.move_selection(page),
            FilesAction::PageUp => files.pane.move_selection(-page),
            FilesAction::PreviewDown => {
                files.preview_scroll = files.preview_scroll.saturating_add(3);
            }
            FilesAction::PreviewUp => files.preview_scroll = files.preview_scroll.saturating_sub(3),
            FilesAction::Refresh => return vec![files.list()],
            FilesAction::Mark => {
                files.pane.toggle_mark();
                files.pane.move_selection(1);
            }
            FilesAction::Open => return self.files_open(colors),
            FilesAction::Preview => {
                if let Some(file) = files.pane.selected_file().cloned()
                    && file.kind == FileKind::File
                {
                    return vec![files.preview_of(&file, colors)];
                }
            }
            FilesAction::Parent => return self.files_parent(),
            FilesAction::Download => return self.files_download(),
            FilesAction::DownloadTo => {
                let folder = files.download_folder.display().to_string();
                self.ask(Prompt::line(
                    Purpose::Files(FilesPrompt::Folder),
                    FOLDER_LABEL,
                    &folder,
                ));
            }
            FilesAction::Upload => {
                self.ask(Prompt::line(
                    Purpose::Files(FilesPrompt::Upload),
                    UPLOAD_LABEL,
                    "",
                ));
            }
            FilesAction::Pick => self.open_picker(None),
            FilesAction::Delete => self.files_delete(),
            FilesAction::Back => return self.files_back(),
        }
        Vec::new()
    }

    fn files_open(&mut self, colors: bool) -> Vec<Effect> {
        let files = &mut self.files;
        let Some(file) = files.pane.selected_file().cloned() else {
            return Vec::new();
        };
        if file.kind == FileKind::File {
            return vec![files.preview_of(&file, colors)];
        }
        if !files.can_manage {
            self.notice = Some("this api-version cannot list folders".into());
            return Vec::new();
        }
        let folder = format!("{}/{}", files.pane.folder, file.path());
        files.pane = fresh_pane(&files.pane, &folder);
        vec![files.list()]
    }

    fn files_parent(&mut self) -> Vec<Effect> {
        let files = &mut self.files;
        let Some(rel) = files.relative_folder() else {
            return Vec::new();
        };
        let (parent, child) = match rel.rsplit_once('/') {
            Some((p, c)) => (format!("{DATA_ROOT}/{p}"), c.to_string()),
            None => (DATA_ROOT.to_string(), rel.clone()),
        };
        files.select_after_list = Some(child);
        files.pane = fresh_pane(&files.pane, &parent);
        vec![files.list()]
    }

    /// Downloads the marked (else the selected) files into the download
    /// folder; asks first when the folder does not exist, refuses when the
    /// name is something else than a folder.
    fn files_download(&mut self) -> Vec<Effect> {
        let folder = self.files.download_folder.clone();
        match std::fs::symlink_metadata(&folder) {
            // A link to a folder is the folder the user named.
            Ok(_) if folder.is_dir() => self.download_into(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if self.files.pane.targets().is_empty() {
                    self.notice = Some("no file selected (folders are not downloaded)".into());
                } else {
                    self.ask_create_folder(folder);
                }
                Vec::new()
            }
            Ok(_) => {
                self.notice = Some(format!("{} is not a folder", folder.display()));
                Vec::new()
            }
            Err(e) => {
                self.notice = Some(format!("cannot use {}: {e}", folder.display()));
                Vec::new()
            }
        }
    }

    /// Starts the download of the marked (else the selected) files into the
    /// download folder, creating it first when `create` is set.
    pub(crate) fn download_into(&mut self, create: Option<PathBuf>) -> Vec<Effect> {
        let files = &self.files;
        let targets: Vec<(String, PathBuf)> = files
            .pane
            .targets()
            .into_iter()
            .map(|f| {
                let dest = crate::localname::local_path(&files.download_folder, &f.name);
                (files.remote_name(f), dest)
            })
            .collect();
        if targets.is_empty() {
            self.notice = Some("no file selected (folders are not downloaded)".into());
            return Vec::new();
        }
        self.files.pane.marked.clear();
        self.start_transfer(FileCommand::Download {
            files: targets,
            overwrite: false,
            create_folder: create,
        })
    }

    fn files_delete(&mut self) {
        if !self.files.can_manage {
            self.notice = Some("this api-version cannot delete files".into());
            return;
        }
        let names: Vec<String> = self
            .files
            .pane
            .targets()
            .into_iter()
            .map(|f| self.files.remote_name(f))
            .collect();
        if names.is_empty() {
            self.notice = Some("no file selected".into());
        } else {
            let what = match names.as_slice() {
                [one] => one.clone(),
                many => format!("{} files", many.len()),
            };
            self.ask(Prompt::question(
                Purpose::Files(FilesPrompt::Delete(names)),
                Question::new("Delete ", what, " from the session?"),
            ));
        }
    }

    fn files_back(&mut self) -> Vec<Effect> {
        let files = &mut self.files;
        if files.transfer.is_some() {
            return vec![Effect::Files(FileCommand::Cancel)];
        }
        if files.preview.is_some() || files.preview_loading.is_some() {
            files.preview = None;
            files.preview_loading = None;
            files.preview_generation += 1;
            return Vec::new();
        }
        self.focus = Focus::Editor;
        Vec::new()
    }

    fn start_transfer(&mut self, command: FileCommand) -> Vec<Effect> {
        if self.files.transfer.is_some() {
            self.notice = Some("a transfer is under way (Esc cancels it)".into());
            return Vec::new();
        }
        let label = match &command {
            FileCommand::Download { .. } => "downloading…",
            FileCommand::Upload { .. } => "uploading…",
            _ => "deleting…",
        };
        self.files.transfer = Some(Transfer {
            label: label.into(),
            done: 0,
            total: None,
        });
        vec![Effect::Files(command)]
    }

    /// A preview built off the UI task from the head of a file: shown, unless
    /// another preview was asked for since.
    pub fn preview_built(&mut self, generation: u64, result: Result<Box<Preview>, String>) {
        if generation != self.files.preview_generation {
            return;
        }
        self.files.preview_loading = None;
        self.files.preview_scroll = 0;
        match result {
            Ok(preview) => {
                if let Body::Image(info) = &preview.body {
                    self.views
                        .images
                        .insert(PREVIEW_IMAGE, Ok(info.image.clone()));
                }
                self.files.preview = Some(*preview);
            }
            Err(e) => self.notice = Some(format!("cannot preview: {e}")),
        }
    }

    /// News from the session worker's file work; returns the effects that
    /// follow from it.
    pub fn files_event(&mut self, event: FileEvent) -> Vec<Effect> {
        self.dirty = true;
        match event {
            FileEvent::Listed { generation, result } => {
                if generation != self.files.list_generation {
                    return Vec::new();
                }
                match result {
                    Ok(list) => {
                        self.files.pane.set_listing(list);
                        if let Some(path) = self.files.select_after_list.take() {
                            self.files.pane.select_path(&path);
                        }
                    }
                    Err(e) => self.files.pane.message = Some(format!("cannot list: {e}")),
                }
            }
            FileEvent::CellListing { before, after } => return self.cell_listing(&before, after),
            FileEvent::Head { generation, result } => {
                if generation != self.files.preview_generation {
                    return Vec::new();
                }
                match result {
                    Ok(head) => return vec![self.files.build_preview(generation, head)],
                    Err(e) => {
                        self.files.preview_loading = None;
                        self.notice = Some(format!("cannot preview: {e}"));
                    }
                }
            }
            FileEvent::Progress { label, done, total } => {
                self.files.transfer = Some(Transfer { label, done, total });
            }
            FileEvent::Done { summary, exists } => {
                self.files.transfer = None;
                if !exists.is_empty() {
                    let question = match exists.as_slice() {
                        [(_, path)] => {
                            Question::new("", path.display().to_string(), " exists. Replace?")
                        }
                        many => {
                            Question::new("", format!("{} files", many.len()), " exist. Replace?")
                        }
                    };
                    self.ask(Prompt::question(
                        Purpose::Files(FilesPrompt::Overwrite(exists, summary.clone())),
                        question,
                    ));
                }
                self.notice = Some(summary);
                return vec![self.files.list()];
            }
        }
        Vec::new()
    }

    /// The data root before and after a cell: radar marks, the new listing, and
    /// the automatic preview of the first new image or table (the effects that
    /// fetch them).
    fn cell_listing(&mut self, before: &[RemoteFile], after: Vec<RemoteFile>) -> Vec<Effect> {
        let mut effects = Vec::new();
        let radar = radar::scan(before, &after);
        let files = &mut self.files;
        files.pane.set_radar(&radar);
        if files.relative_folder().is_none() {
            files.pane.set_listing(after);
        } else {
            effects.push(files.list());
        }
        files.pane.now = chrono::Utc::now();
        files.pending_preview = None;
        let open = self.side == Some(SidePane::Files);
        if !open && !radar.is_empty() {
            // The pane is closed: say what the cell left, and preview its first
            // table or image when the pane opens.
            files.pending_preview = radar.preview().map(|a| a.path.clone());
            let (new, changed) = radar.counts();
            let what = match (new, changed) {
                (n, 0) => format!("{n} new"),
                (0, c) => format!("{c} changed"),
                (n, c) => format!("{n} new and {c} changed"),
            };
            let noun = if new + changed == 1 { "file" } else { "files" };
            let key = files_key(&self.keymap);
            self.notice = Some(format!("{what} {noun} in {DATA_ROOT}: {key} shows them"));
        }
        if open
            && let Some(artifact) = radar.preview()
            && files.relative_folder().is_none()
            && files.pane.select_path(&artifact.path)
            && let Some(file) = files.pane.selected_file().cloned()
        {
            effects.push(files.preview_of(&file, self.theme.colors));
        }
        files.radar = radar;
        effects
    }
}

/// The key that shows the files pane, as the keymap names it.
fn files_key(keymap: &crate::tui::keymap::Keymap) -> String {
    use crate::tui::keymap::Mode;
    keymap
        .key_for(
            &crate::tui::action::Action::ToggleFiles,
            &[Mode::Editor, Mode::Outputs],
        )
        .unwrap_or_else(|| "F2".into())
}

/// A new pane on `folder` that keeps the old one's focus and clock.
fn fresh_pane(old: &FilesPaneState, folder: &str) -> FilesPaneState {
    let mut pane = FilesPaneState::new(folder, old.now);
    pane.focused = old.focused;
    pane.tz = old.tz;
    pane
}

mod prompts;

#[cfg(test)]
mod tests;
