//! The files pane's reducer: its keys (open, parent, download, delete, back),
//! the answers to what it asked (download folder, creating it, upload paths,
//! delete, replace), uploads from the prompt, a paste or the picker, and the
//! worker's news (listings, previews, transfers, what a cell left). Each
//! changes only [`FilesUi`] and hands back [`FilesOut`]s: effects for the loop,
//! notices and prompts for the app. What it reads of the rest of the app
//! comes in a [`FilesCx`].

use std::path::PathBuf;

use super::preview::{Body, Preview};
use super::{DATA_ROOT, FOLDER_LABEL, FilesAction, FilesPrompt, FilesUi, Transfer, UPLOAD_LABEL};
use super::{files_key, fresh_pane};
use crate::client::MAX_UPLOAD;
use crate::protocol::{FileKind, RemoteFile};
use crate::session::{FileCommand, FileEvent, radar};
use crate::text::names::escape;
use crate::tui::action::{Effect, Out};
use crate::tui::keymap::Keymap;
use crate::tui::local_paths::{expand_paths, pasted_paths};
use crate::tui::widgets::fit::human_size;
use crate::tui::widgets::prompt::{Answer, Prompt, Question};

/// Remote names (relative to `/mnt/data`), each with something of its own.
type Named<T> = Vec<(String, T)>;

/// What the pane says when a folder is to be downloaded or deleted on an
/// api-version that cannot list one recursively.
const NO_FOLDERS: &str = "this api-version cannot list a folder recursively (2025-10-02-preview \
     can): open the folder and mark its files";

/// What the files pane's reducer hands back (see [`Out`]).
pub type FilesOut = Out<Prompt<FilesPrompt>, FilesRequest>;

/// What only the app can do for the files pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilesRequest {
    /// Open the local file picker of uploads in this folder (else the
    /// working folder).
    OpenPicker(Option<PathBuf>),
}

/// What the files pane reads of the rest of the app, read-only.
#[derive(Debug, Clone, Copy)]
pub struct FilesCx<'a> {
    /// The terminal shows colours (previews are built with them).
    pub colors: bool,
    /// The pane is shown (a cell's new files are previewed at once, else
    /// announced on the status line).
    pub pane_open: bool,
    /// The keys (to name the key that shows the pane).
    pub keymap: &'a Keymap,
}

impl FilesUi {
    /// The pane was just shown: preview what a cell left while it was closed
    /// (the listing it is in came with the cell), and list the folder.
    pub fn opened(&mut self, colors: bool) -> Vec<Effect> {
        let mut effects = Vec::new();
        if let Some(path) = self.pending_preview.take()
            && self.relative_folder().is_none()
            && self.pane.select_path(&path)
            && let Some(file) = self.pane.selected_file().cloned()
        {
            self.select_after_list = Some(path);
            effects.push(self.preview_of(&file, colors));
        }
        effects.push(self.list());
        effects
    }

    /// The files pane's reducer: a key of the pane.
    pub fn update(&mut self, action: FilesAction, cx: &FilesCx<'_>) -> Vec<FilesOut> {
        let page = isize::try_from(self.view_size.1.max(2) - 1).unwrap_or(1);
        match action {
            FilesAction::Down => self.pane.move_selection(1),
            FilesAction::Up => self.pane.move_selection(-1),
            FilesAction::PageDown => self.pane.move_selection(page),
            FilesAction::PageUp => self.pane.move_selection(-page),
            FilesAction::PreviewDown => self.preview_scroll = self.preview_scroll.saturating_add(3),
            FilesAction::PreviewUp => self.preview_scroll = self.preview_scroll.saturating_sub(3),
            FilesAction::Refresh => return vec![self.list().into()],
            FilesAction::Mark => {
                self.pane.toggle_mark();
                self.pane.move_selection(1);
            }
            FilesAction::Open => return self.open_selected(cx.colors),
            FilesAction::Preview => {
                if let Some(file) = self.pane.selected_file().cloned()
                    && file.kind == FileKind::File
                {
                    return vec![self.preview_of(&file, cx.colors).into()];
                }
            }
            FilesAction::Parent => return self.parent(),
            FilesAction::Download => return self.download(),
            FilesAction::DownloadTo => {
                let folder = self.download_folder.display().to_string();
                let ask = Prompt::line(FilesPrompt::Folder, FOLDER_LABEL, &folder);
                return vec![Out::Ask(ask)];
            }
            FilesAction::Upload => {
                return vec![Out::Ask(Prompt::line(
                    FilesPrompt::Upload,
                    UPLOAD_LABEL,
                    "",
                ))];
            }
            FilesAction::Pick => return vec![Out::Request(FilesRequest::OpenPicker(None))],
            FilesAction::Delete => return self.delete(),
            FilesAction::Back => return self.back(),
        }
        Vec::new()
    }

    /// Text pasted while the pane has the keys: an existing local file's path
    /// (a file dropped on the terminal) is uploaded.
    pub fn paste(&mut self, text: &str) -> Vec<FilesOut> {
        let paths = pasted_paths(text);
        if paths.is_empty() {
            return vec![Out::Notice("paste a local file's path to upload it".into())];
        }
        self.upload(paths)
    }

    /// Uploads local `paths` into the listed folder, unless one is not a
    /// readable file or is over [`MAX_UPLOAD`] bytes (then a notice and no
    /// effect), or a transfer is under way.
    pub fn upload(&mut self, paths: Vec<PathBuf>) -> Vec<FilesOut> {
        for path in &paths {
            match std::fs::metadata(path) {
                Ok(m) if m.is_file() && m.len() > MAX_UPLOAD => {
                    return vec![Out::Notice(format!(
                        "{} is {}: uploads are limited to {}",
                        path.display(),
                        human_size(m.len()),
                        human_size(MAX_UPLOAD)
                    ))];
                }
                Ok(m) if m.is_file() => {}
                _ => {
                    let why = format!("{} is not a readable file", path.display());
                    return vec![Out::Notice(why)];
                }
            }
        }
        let folder = self.relative_folder();
        self.start_transfer(FileCommand::Upload { paths, folder })
    }

    /// The question whether to create the missing download folder `folder`
    /// (and download into it).
    pub fn ask_create_folder(folder: PathBuf) -> FilesOut {
        let question = Question::new(
            "Create folder ",
            folder.display().to_string(),
            " and download into it?",
        );
        Out::Ask(Prompt::question(
            FilesPrompt::CreateFolder(folder),
            question,
        ))
    }

    /// The answer to what the pane asked: where to download, what to upload,
    /// whether to delete, create the folder or replace local files.
    pub fn answer(&mut self, asked: FilesPrompt, answer: Answer) -> Vec<FilesOut> {
        let notice = |text: String| vec![Out::Notice(text)];
        match (asked, answer) {
            (FilesPrompt::Folder, Answer::Text(text)) => {
                if text.trim().is_empty() {
                    return notice("no folder given: nothing downloaded".into());
                }
                let typed = crate::tui::local::resolve(&text);
                // Named in full in the question, and created as named even
                // if the working folder changed meanwhile.
                let folder = std::path::absolute(&typed).unwrap_or(typed);
                if folder.is_dir() {
                    self.download_folder = folder;
                    return self.download();
                }
                if std::fs::symlink_metadata(&folder).is_err() {
                    return vec![Self::ask_create_folder(folder)];
                }
                notice(format!("{} is not a folder", folder.display()))
            }
            (FilesPrompt::Upload, Answer::Text(text)) => {
                let paths = match expand_paths(&text) {
                    Ok(paths) => paths,
                    Err(why) => return notice(why),
                };
                if paths.is_empty() {
                    return notice("nothing to upload".into());
                }
                self.upload(paths)
            }
            (FilesPrompt::Delete(names), Answer::Yes) => {
                self.start_transfer(FileCommand::Delete { names })
            }
            (FilesPrompt::DeleteFolders { folders, files }, Answer::Yes) => {
                self.start_transfer(FileCommand::DeleteFolders { folders, files })
            }
            (FilesPrompt::Delete(_) | FilesPrompt::DeleteFolders { .. }, _) => {
                notice("nothing deleted".into())
            }
            (FilesPrompt::CreateFolder(folder), Answer::Yes) => {
                self.download_folder.clone_from(&folder);
                self.download_into(Some(folder))
            }
            (FilesPrompt::CreateFolder(folder), _) => notice(format!(
                "{} not created: nothing downloaded",
                folder.display()
            )),
            (FilesPrompt::Overwrite(files, _), Answer::Yes) => {
                self.start_transfer(FileCommand::Download {
                    files,
                    overwrite: true,
                    create_folder: None,
                })
            }
            // The transfer's summary (what failed) stays in view.
            (FilesPrompt::Overwrite(_, summary), _) => {
                notice(format!("existing files kept; {summary}"))
            }
            // A line given up (Esc).
            (FilesPrompt::Folder | FilesPrompt::Upload, _) => Vec::new(),
        }
    }

    fn open_selected(&mut self, colors: bool) -> Vec<FilesOut> {
        let Some(file) = self.pane.selected_file().cloned() else {
            return Vec::new();
        };
        if file.kind == FileKind::File {
            return vec![self.preview_of(&file, colors).into()];
        }
        if !self.can_manage {
            return vec![Out::Notice("this api-version cannot list folders".into())];
        }
        let folder = format!("{}/{}", self.pane.folder, file.path());
        self.pane = fresh_pane(&self.pane, &folder);
        vec![self.list().into()]
    }

    fn parent(&mut self) -> Vec<FilesOut> {
        let Some(rel) = self.relative_folder() else {
            return Vec::new();
        };
        let (parent, child) = match rel.rsplit_once('/') {
            Some((p, c)) => (format!("{DATA_ROOT}/{p}"), c.to_string()),
            None => (DATA_ROOT.to_string(), rel.clone()),
        };
        self.select_after_list = Some(child);
        self.pane = fresh_pane(&self.pane, &parent);
        vec![self.list().into()]
    }

    /// Downloads the marked (else the selected) files into the download
    /// folder; asks first when the folder does not exist, refuses when the
    /// name is something else than a folder.
    fn download(&mut self) -> Vec<FilesOut> {
        let folder = self.download_folder.clone();
        match std::fs::symlink_metadata(&folder) {
            // A link to a folder is the folder the user named.
            Ok(_) if folder.is_dir() => self.download_into(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if self.pane.targets().is_empty() {
                    vec![Out::Notice("nothing selected".into())]
                } else {
                    vec![Self::ask_create_folder(folder)]
                }
            }
            Ok(_) => vec![Out::Notice(format!("{} is not a folder", folder.display()))],
            Err(e) => vec![Out::Notice(format!("cannot use {}: {e}", folder.display()))],
        }
    }

    /// Starts the download of the marked (else the selected) files into the
    /// download folder, creating it first when `create` is set.
    /// A folder among them is downloaded with everything in it, into a local
    /// folder of its (safe) name, where the api-version lists recursively.
    pub fn download_into(&mut self, create: Option<PathBuf>) -> Vec<FilesOut> {
        let (folders, files) =
            self.split_targets(|f| crate::localname::local_path(&self.download_folder, &f.name));
        if folders.is_empty() && files.is_empty() {
            return vec![Out::Notice("nothing selected".into())];
        }
        if !folders.is_empty() && !self.can_recurse {
            return vec![Out::Notice(NO_FOLDERS.into())];
        }
        self.pane.marked.clear();
        if folders.is_empty() {
            return self.start_transfer(FileCommand::Download {
                files,
                overwrite: false,
                create_folder: create,
            });
        }
        self.start_transfer(FileCommand::DownloadFolders {
            folders,
            files,
            create_folder: create,
        })
    }

    /// The targets split into folders and files, each with `dest` of it.
    fn split_targets<T>(&self, dest: impl Fn(&RemoteFile) -> T) -> (Named<T>, Named<T>) {
        let (folders, files): (Vec<_>, Vec<_>) = self
            .pane
            .targets()
            .into_iter()
            .partition(|f| f.kind == FileKind::Directory);
        let pairs = |list: Vec<&RemoteFile>| -> Vec<(String, T)> {
            list.into_iter()
                .map(|f| (self.remote_name(f), dest(f)))
                .collect()
        };
        (pairs(folders), pairs(files))
    }

    fn delete(&mut self) -> Vec<FilesOut> {
        if !self.can_manage {
            return vec![Out::Notice("this api-version cannot delete files".into())];
        }
        let (folders, files) = self.split_targets(|_| ());
        let folders: Vec<String> = folders.into_iter().map(|(n, ())| n).collect();
        let files: Vec<String> = files.into_iter().map(|(n, ())| n).collect();
        if !folders.is_empty() {
            if !self.can_recurse {
                return vec![Out::Notice(NO_FOLDERS.into())];
            }
            // Counted first, so the question can say how many files go.
            return vec![
                Out::Notice("counting the files to delete…".into()),
                Effect::Files(FileCommand::CountFolders { folders, files }).into(),
            ];
        }
        let what = match files.as_slice() {
            [] => return vec![Out::Notice("nothing selected".into())],
            [one] => escape(one),
            many => format!("{} files", many.len()),
        };
        vec![Out::Ask(Prompt::question(
            FilesPrompt::Delete(files),
            Question::new("Delete ", what, " from the session?"),
        ))]
    }

    /// The question before deleting `folders` (holding `count` files in all)
    /// and `files`.
    fn ask_delete_folders(folders: Vec<String>, files: Vec<String>, count: usize) -> FilesOut {
        let all = count + files.len();
        let noun = if all == 1 { "file" } else { "files" };
        let what = match (folders.as_slice(), files.len()) {
            ([one], 0) => format!("{}/ ({all} {noun})", escape(one)),
            (many, _) => format!("{} folders ({all} {noun})", many.len()),
        };
        Out::Ask(Prompt::question(
            FilesPrompt::DeleteFolders { folders, files },
            Question::new("Delete ", what, " with everything in it from the session?"),
        ))
    }

    /// Esc: cancels the transfer, else closes the preview, else gives the
    /// keys back to the editor.
    fn back(&mut self) -> Vec<FilesOut> {
        if self.transfer.is_some() {
            return vec![Effect::Files(FileCommand::Cancel).into()];
        }
        if self.preview.is_some() || self.preview_loading.is_some() {
            self.preview = None;
            self.preview_loading = None;
            self.preview_generation += 1;
            return Vec::new();
        }
        vec![Out::FocusEditor]
    }

    fn start_transfer(&mut self, command: FileCommand) -> Vec<FilesOut> {
        if self.transfer.is_some() {
            return vec![Out::Notice(
                "a transfer is under way (Esc cancels it)".into(),
            )];
        }
        let label = match &command {
            FileCommand::Download { .. } | FileCommand::DownloadFolders { .. } => "downloading…",
            FileCommand::Upload { .. } => "uploading…",
            _ => "deleting…",
        };
        self.transfer = Some(Transfer {
            label: label.into(),
            done: 0,
            total: None,
        });
        vec![Effect::Files(command).into()]
    }

    /// Whether a preview built for `generation` is still the one wanted (no
    /// other preview was asked for since).
    pub fn is_current_preview(&self, generation: u64) -> bool {
        generation == self.preview_generation
    }

    /// A preview built off the UI task from the head of a file: shown, unless
    /// another preview was asked for since.
    pub fn preview_built(
        &mut self,
        generation: u64,
        result: Result<Box<Preview>, String>,
    ) -> Vec<FilesOut> {
        if !self.is_current_preview(generation) {
            return Vec::new();
        }
        self.preview_loading = None;
        self.preview_scroll = 0;
        match result {
            Ok(preview) => {
                self.preview = Some(*preview);
                Vec::new()
            }
            Err(e) => vec![Out::Notice(format!("cannot preview: {e}"))],
        }
    }

    /// News from the session worker's file work.
    pub fn event(&mut self, event: FileEvent, cx: &FilesCx<'_>) -> Vec<FilesOut> {
        match event {
            FileEvent::Listed { generation, result } => {
                if generation != self.list_generation {
                    return Vec::new();
                }
                match result {
                    Ok(list) => {
                        self.pane.set_listing(list);
                        if let Some(path) = self.select_after_list.take() {
                            self.pane.select_path(&path);
                        }
                    }
                    Err(e) => self.pane.message = Some(format!("cannot list: {e}")),
                }
                Vec::new()
            }
            FileEvent::CellListing { before, after } => self.cell_listing(&before, after, cx),
            FileEvent::Head { generation, result } => {
                if generation != self.preview_generation {
                    return Vec::new();
                }
                match result {
                    Ok(head) => vec![self.build_preview(generation, head).into()],
                    Err(e) => {
                        self.preview_loading = None;
                        vec![Out::Notice(format!("cannot preview: {e}"))]
                    }
                }
            }
            FileEvent::Counted {
                folders,
                files,
                count,
            } => match count {
                Ok(count) => vec![Self::ask_delete_folders(folders, files, count)],
                Err(why) => vec![Out::Notice(format!("{why}; nothing deleted"))],
            },
            FileEvent::Progress { label, done, total } => {
                self.transfer = Some(Transfer { label, done, total });
                Vec::new()
            }
            FileEvent::Done { summary, exists } => {
                self.transfer = None;
                let mut outs = Vec::new();
                if !exists.is_empty() {
                    let question = match exists.as_slice() {
                        [(_, path)] => {
                            Question::new("", path.display().to_string(), " exists. Replace?")
                        }
                        many => {
                            Question::new("", format!("{} files", many.len()), " exist. Replace?")
                        }
                    };
                    outs.push(Out::Ask(Prompt::question(
                        FilesPrompt::Overwrite(exists, summary.clone()),
                        question,
                    )));
                }
                outs.push(Out::Notice(summary));
                outs.push(self.list().into());
                outs
            }
        }
    }

    /// The data root before and after a cell: radar marks, the new listing, and
    /// the automatic preview of the first new image or table (the effects that
    /// fetch them); with the pane closed, a notice of what the cell left.
    fn cell_listing(
        &mut self,
        before: &[RemoteFile],
        after: Vec<RemoteFile>,
        cx: &FilesCx<'_>,
    ) -> Vec<FilesOut> {
        let mut outs = Vec::new();
        let radar = radar::scan(before, &after);
        self.radar = radar.clone();
        let folder = self.relative_folder();
        self.pane.set_radar(&radar, folder.as_deref());
        if folder.is_none() {
            // The listings may be recursive: the root shows its own entries.
            let top = after
                .into_iter()
                .filter(|f| {
                    f.directory
                        .as_deref()
                        .is_none_or(|d| d.trim_matches('/').is_empty())
                })
                .collect();
            self.pane.set_listing(top);
        } else {
            outs.push(self.list().into());
        }
        self.pane.now = chrono::Utc::now();
        self.pending_preview = None;
        if !cx.pane_open && !radar.is_empty() {
            // The pane is closed: say what the cell left, and preview its first
            // table or image when the pane opens.
            self.pending_preview = radar.preview().map(|a| a.path.clone());
            let (new, changed) = radar.counts();
            let what = match (new, changed) {
                (n, 0) => format!("{n} new"),
                (0, c) => format!("{c} changed"),
                (n, c) => format!("{n} new and {c} changed"),
            };
            let noun = if new + changed == 1 { "file" } else { "files" };
            let key = files_key(cx.keymap);
            outs.push(Out::Notice(format!(
                "{what} {noun} in {DATA_ROOT}: {key} shows them"
            )));
        }
        if cx.pane_open
            && let Some(artifact) = radar.preview()
            && self.relative_folder().is_none()
            && self.pane.select_path(&artifact.path)
            && let Some(file) = self.pane.selected_file().cloned()
        {
            outs.push(self.preview_of(&file, cx.colors).into());
        }
        outs
    }
}

/// The image of a built preview, if it is one (the app puts it in the image
/// store, which the views share).
pub fn preview_image(preview: &Preview) -> Option<&image::DynamicImage> {
    match &preview.body {
        Body::Image(info) => Some(&info.image),
        _ => None,
    }
}
