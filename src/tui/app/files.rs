//! What [`App`] does for the files pane (`tui/files/` holds its state and
//! views; `impl App` lives only in `tui/app/`): opening and closing the pane,
//! its keys (open, parent, download, delete, back), listings and previews as
//! the worker answers, transfers and their progress, pasted paths uploaded,
//! and the listing refreshed after a cell ran.
//!
//! The files pane's answers to its prompts and questions (download folder,
//! creating it when it does not exist, upload paths, delete, replace; the keys
//! of the prompt itself are `prompt/`'s) and uploads, from the prompt, a paste
//! or the picker.

use super::App;
use crate::client::MAX_UPLOAD;
use crate::protocol::FileKind;
use crate::protocol::RemoteFile;
use crate::session::FileCommand;
use crate::session::FileEvent;
use crate::session::radar;
use crate::tui::action::Effect;
use crate::tui::app::Focus;
use crate::tui::app::Purpose;
use crate::tui::app::SidePane;
use crate::tui::files::FilesPrompt;
use crate::tui::files::preview::Body;
use crate::tui::files::preview::Preview;
use crate::tui::files::{DATA_ROOT, FilesAction, PREVIEW_IMAGE, Transfer};
use crate::tui::files::{FOLDER_LABEL, UPLOAD_LABEL, files_key, fresh_pane};
use crate::tui::local_paths::expand_paths;
use crate::tui::local_paths::pasted_paths;
use crate::tui::prompt::Answer;
use crate::tui::prompt::Prompt;
use crate::tui::prompt::Question;
use crate::tui::widgets::fit::human_size;
use std::path::PathBuf;

impl App {
    /// Text pasted while the files pane has the focus: an existing local file's
    /// path (a file dropped on the terminal) is uploaded.
    pub fn files_paste(&mut self, text: &str) -> Vec<Effect> {
        let paths = pasted_paths(text);
        if paths.is_empty() {
            self.notice = Some("paste a local file's path to upload it".into());
            return Vec::new();
        }
        self.upload(paths)
    }

    /// Uploads local `paths` into the listed folder, unless one is not a
    /// readable file or is over [`MAX_UPLOAD`] (then a notice and no effect),
    /// or a transfer is under way.
    pub(crate) fn upload(&mut self, paths: Vec<PathBuf>) -> Vec<Effect> {
        for path in &paths {
            match std::fs::metadata(path) {
                Ok(m) if m.is_file() && m.len() > MAX_UPLOAD => {
                    self.notice = Some(format!(
                        "{} is {}: uploads are limited to {}",
                        path.display(),
                        human_size(m.len()),
                        human_size(MAX_UPLOAD)
                    ));
                    return Vec::new();
                }
                Ok(m) if m.is_file() => {}
                _ => {
                    self.notice = Some(format!("{} is not a readable file", path.display()));
                    return Vec::new();
                }
            }
        }
        let folder = self.files.relative_folder();
        self.start_transfer(FileCommand::Upload { paths, folder })
    }

    /// Asks whether to create the missing download folder `folder` (and
    /// download into it).
    pub(crate) fn ask_create_folder(&mut self, folder: PathBuf) {
        let question = Question::new(
            "Create folder ",
            folder.display().to_string(),
            " and download into it?",
        );
        self.ask(Prompt::question(
            Purpose::Files(FilesPrompt::CreateFolder(folder)),
            question,
        ));
    }

    /// The answer to a files prompt: where to download, what to upload,
    /// whether to delete, create the folder or replace local files.
    pub(crate) fn files_answer(&mut self, asked: FilesPrompt, answer: Answer) -> Vec<Effect> {
        match (asked, answer) {
            (FilesPrompt::Folder, Answer::Text(text)) => {
                if text.trim().is_empty() {
                    self.notice = Some("no folder given: nothing downloaded".into());
                    return Vec::new();
                }
                let typed = crate::tui::local::resolve(&text);
                // Named in full in the question, and created as named even
                // if the working folder changed meanwhile.
                let folder = std::path::absolute(&typed).unwrap_or(typed);
                if folder.is_dir() {
                    self.files.download_folder = folder;
                    return self.files_download();
                }
                if std::fs::symlink_metadata(&folder).is_err() {
                    self.ask_create_folder(folder);
                } else {
                    self.notice = Some(format!("{} is not a folder", folder.display()));
                }
            }
            (FilesPrompt::Upload, Answer::Text(text)) => {
                let paths = expand_paths(&text);
                if paths.is_empty() {
                    self.notice = Some("nothing to upload".into());
                } else {
                    return self.upload(paths);
                }
            }
            (FilesPrompt::Delete(names), Answer::Yes) => {
                return self.start_transfer(FileCommand::Delete { names });
            }
            (FilesPrompt::Delete(_), _) => self.notice = Some("nothing deleted".into()),
            (FilesPrompt::CreateFolder(folder), Answer::Yes) => {
                self.files.download_folder.clone_from(&folder);
                return self.download_into(Some(folder));
            }
            (FilesPrompt::CreateFolder(folder), _) => {
                self.notice = Some(format!(
                    "{} not created: nothing downloaded",
                    folder.display()
                ));
            }
            (FilesPrompt::Overwrite(files, _), Answer::Yes) => {
                return self.start_transfer(FileCommand::Download {
                    files,
                    overwrite: true,
                    create_folder: None,
                });
            }
            // The transfer's summary (what failed) stays in view.
            (FilesPrompt::Overwrite(_, summary), _) => {
                self.notice = Some(format!("existing files kept; {summary}"));
            }
            // A line given up (Esc).
            (FilesPrompt::Folder | FilesPrompt::Upload, _) => {}
        }
        Vec::new()
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
