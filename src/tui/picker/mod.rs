//! The local file picker of uploads (`U` in the files pane, or Ctrl+O in the
//! upload prompt): a popup listing one local folder, where the user walks
//! folders, marks files (marks survive changing folders) and uploads them.
//!
//! The listing, its order (folders first, then by name), the `../` entry, the
//! hidden-files toggle and the moves are `ratatui-explorer`'s
//! [`FileExplorer`]; its widget is not used (the popup is drawn by
//! `picker/view.rs`, with marks, sizes and the upload limit). Listing a
//! folder is synchronous `std::fs` on the UI task, like the upload prompt's Tab
//! completion: fine for local folders, slow only on a hung network mount.
//!
//! The crate panics in two places this module guards: its moves compute
//! `files.len() - 1` (and `% len`), so no move is handed to it on an empty list;
//! entering a folder removes the entry before listing it, so a folder that
//! cannot be read leaves the list short: the picker then says why and lists
//! its folder again (or the nearest ancestor that can still be listed).
//!
//! Uploading is not done here: [`PickerKey::Upload`] hands the paths to
//! `App::upload`, the one path of size checks, progress and the refresh.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use ratatui_explorer::{FileExplorer, FileExplorerBuilder, Input as Move};
use ratatui_textarea::{Input, Key};

pub mod view;

use crate::client::MAX_UPLOAD;
use crate::tui::widgets::fit::human_size;

/// What a key did to the picker, for `App::picker_action` (`tui/app/picker.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerKey {
    /// The picker stays open (a move, a mark, or a key that means nothing).
    Stay,
    /// Esc, Ctrl+C or Ctrl+G: close without uploading.
    Close,
    /// Upload these local files (absolute paths, sorted): the marked ones, or
    /// the selected file when none is marked.
    Upload(Vec<PathBuf>),
}

/// One row of the listing, as the view draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PickerEntry<'a> {
    /// The name as read from disk (untrusted: sanitise before drawing);
    /// folders end in `/`, the parent folder is `../`.
    pub name: &'a str,
    /// The entry is a folder (or the parent entry).
    pub is_dir: bool,
    /// The size in bytes of a regular file; `None` for folders and for
    /// entries whose size could not be read.
    pub size: Option<u64>,
    /// The file is marked for upload.
    pub marked: bool,
}

/// The picker's state: the listed folder, the selection, the marks (absolute
/// paths, across folders), a notice about the last key, and its scroll.
#[derive(Debug)]
pub struct FilePicker {
    explorer: FileExplorer,
    /// Per entry of the listing: the size of regular files (read when listed,
    /// so drawing never touches the disk).
    sizes: Vec<Option<u64>>,
    marked: BTreeSet<PathBuf>,
    /// What went wrong with the last key (a folder that cannot be read, a file
    /// over the limit), shown in the popup until the next key.
    pub notice: Option<String>,
    /// The first row shown (view state, moved by the view to keep the
    /// selection visible).
    pub scroll: usize,
}

impl FilePicker {
    /// A picker listing `dir` (made absolute, symbolic links resolved), hidden
    /// files not shown, the first entry selected.
    ///
    /// # Errors
    ///
    /// `dir` does not exist or cannot be read.
    pub fn open(dir: &Path) -> io::Result<Self> {
        let dir = std::fs::canonicalize(dir)?;
        let explorer = FileExplorerBuilder::build_with_working_dir(dir)?;
        let mut picker = Self {
            explorer,
            sizes: Vec::new(),
            marked: BTreeSet::new(),
            notice: None,
            scroll: 0,
        };
        picker.listed();
        Ok(picker)
    }

    /// The listed folder (absolute).
    pub fn cwd(&self) -> &Path {
        self.explorer.cwd()
    }

    /// The index of the selected row (0 on an empty list).
    pub fn selected(&self) -> usize {
        self.explorer.selected_idx()
    }

    /// Hidden files (names starting with `.`) are listed.
    pub fn show_hidden(&self) -> bool {
        self.explorer.show_hidden()
    }

    /// The marked files (absolute paths, in any folder), in path order.
    pub fn marked(&self) -> &BTreeSet<PathBuf> {
        &self.marked
    }

    /// The rows of the listing, in display order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = PickerEntry<'_>> {
        self.explorer
            .files()
            .iter()
            .enumerate()
            .map(|(i, f)| PickerEntry {
                name: &f.name,
                is_dir: f.is_dir,
                size: self.sizes.get(i).copied().flatten(),
                marked: self.marked.contains(&f.path),
            })
    }

    /// Takes one key (raw, as the keymap hands keys to open prompts).
    pub fn key(&mut self, input: &Input) -> PickerKey {
        self.notice = None;
        if input.ctrl || input.alt {
            return match input.key {
                Key::Char('c' | 'g') if input.ctrl => PickerKey::Close,
                // Ctrl+M and Ctrl+J are Enter on many terminals.
                Key::Char('m' | 'j') if input.ctrl => self.enter(),
                _ => PickerKey::Stay,
            };
        }
        match input.key {
            Key::Esc => return PickerKey::Close,
            Key::Enter => return self.enter(),
            Key::Up | Key::Char('k') => self.step(Move::Up),
            Key::Down | Key::Char('j') => self.step(Move::Down),
            Key::PageUp => self.step(Move::PageUp),
            Key::PageDown => self.step(Move::PageDown),
            Key::Home | Key::Char('g') => self.step(Move::Home),
            Key::End | Key::Char('G') => self.step(Move::End),
            Key::Right | Key::Char('l') => self.open_selected(),
            Key::Left | Key::Backspace | Key::Char('h') => self.parent(),
            Key::Char(' ') => self.toggle_mark(),
            Key::Char('a') => self.mark_all(),
            Key::Char('.') => self.toggle_hidden(),
            _ => {}
        }
        PickerKey::Stay
    }

    /// The selected entry's path, folder flag and regular-file flag.
    fn current(&self) -> Option<(&Path, bool, bool)> {
        self.explorer
            .files()
            .get(self.explorer.selected_idx())
            .map(|f| (f.path.as_path(), f.is_dir, f.is_file()))
    }

    /// A move within the listing; never on an empty list (the crate would
    /// compute `len - 1` or `% 0`).
    fn step(&mut self, step: Move) {
        if self.explorer.files().is_empty() {
            return;
        }
        // These moves only change the selection; they cannot fail.
        let _ = self.explorer.handle(step);
    }

    /// Enter: upload the marked files when there are any (as the footer
    /// says, wherever the cursor is); else into a folder, or upload this file.
    fn enter(&mut self) -> PickerKey {
        if !self.marked.is_empty() {
            return PickerKey::Upload(self.marked.iter().cloned().collect());
        }
        match self.current() {
            Some((_, true, _)) => {
                self.open_selected();
                PickerKey::Stay
            }
            Some((path, false, true)) => PickerKey::Upload(vec![path.to_path_buf()]),
            Some((path, false, false)) => {
                self.notice = Some(format!("{} is not a regular file", shown(path)));
                PickerKey::Stay
            }
            None => PickerKey::Stay,
        }
    }

    /// Into the selected folder (`../` included).
    fn open_selected(&mut self) {
        let Some((path, true, _)) = self.current() else {
            return;
        };
        let (target, from) = (path.to_path_buf(), self.cwd().to_path_buf());
        match self.explorer.handle(Move::Right) {
            // The crate looks again: a folder deleted since the listing is
            // left alone.
            Ok(()) if self.cwd() == from && target != from => {
                let why = format!("cannot open {}: it is no longer a folder", shown(&target));
                self.recover(why, &from, &target);
            }
            Ok(()) => self.listed_from(&from),
            Err(e) => self.recover(
                format!("cannot open {}: {e}", shown(&target)),
                &from,
                &target,
            ),
        }
    }

    /// To the parent folder, selecting the folder left.
    fn parent(&mut self) {
        let from = self.cwd().to_path_buf();
        let keep = self.current().map(|(p, ..)| p.to_path_buf());
        match self.explorer.handle(Move::Left) {
            Ok(()) => self.listed_from(&from),
            Err(e) => {
                let parent = from.parent().unwrap_or(&from);
                let why = format!("cannot open {}: {e}", shown(parent));
                self.recover(why, &from, &keep.unwrap_or_default());
            }
        }
    }

    /// Shows or hides hidden files, keeping the selection on the same path.
    fn toggle_hidden(&mut self) {
        let keep = self.current().map(|(p, ..)| p.to_path_buf());
        let cwd = self.cwd().to_path_buf();
        match self.explorer.set_show_hidden(!self.explorer.show_hidden()) {
            Ok(()) => {
                self.listed();
                self.select(&keep.unwrap_or_default());
            }
            Err(e) => {
                let why = format!("cannot list {}: {e}", shown(&cwd));
                self.recover(why, &cwd, &keep.unwrap_or_default());
            }
        }
    }

    /// Marks or unmarks the selected file, then selects the next row. Folders
    /// are not marked, nor files over the upload limit (said in the notice).
    fn toggle_mark(&mut self) {
        let i = self.explorer.selected_idx();
        let Some((path, is_dir, is_file)) = self.current() else {
            return;
        };
        let path = path.to_path_buf();
        if is_dir {
            self.notice = Some("folders are not uploaded: open it and mark its files".into());
            return;
        }
        if !self.marked.remove(&path) {
            match self.sizes.get(i).copied().flatten() {
                Some(size) if size > MAX_UPLOAD => {
                    self.notice = Some(too_big(&path, size));
                    return;
                }
                Some(_) if is_file => {
                    self.marked.insert(path);
                }
                _ => {
                    self.notice = Some(format!("{} is not a regular file", shown(&path)));
                    return;
                }
            }
        }
        if i + 1 < self.explorer.files().len() {
            self.step(Move::Down);
        }
    }

    /// Marks every file of the folder that can be uploaded; when all of them
    /// already are, unmarks them.
    fn mark_all(&mut self) {
        let files: Vec<PathBuf> = self
            .explorer
            .files()
            .iter()
            .zip(&self.sizes)
            .filter(|(f, size)| f.is_file() && size.is_some_and(|s| s <= MAX_UPLOAD))
            .map(|(f, _)| f.path.clone())
            .collect();
        if files.iter().all(|p| self.marked.contains(p)) {
            for path in &files {
                self.marked.remove(path);
            }
        } else {
            self.marked.extend(files);
        }
    }

    /// After a listing changed: the sizes of its files, a valid selection.
    fn listed(&mut self) {
        self.sizes = self
            .explorer
            .files()
            .iter()
            .map(|f| {
                let meta = f.is_file().then(|| std::fs::metadata(&f.path).ok());
                meta.flatten().map(|m| m.len())
            })
            .collect();
        self.scroll = 0;
        let len = self.explorer.files().len();
        if len > 0 && self.explorer.selected_idx() >= len {
            self.explorer.set_selected_idx(len - 1);
        }
    }

    /// After moving from folder `from`: select it if it is listed (going up),
    /// else (going down) the first entry after `../`.
    fn listed_from(&mut self, from: &Path) {
        self.listed();
        // Going down, `from` is listed too: as the `../` entry.
        let went_up = from.parent() == Some(self.cwd());
        if !(went_up && self.select(from))
            && let Some(first) = self.explorer.files().iter().position(|f| f.name != "../")
        {
            self.explorer.set_selected_idx(first);
        }
    }

    /// Selects the entry at `path`; false when it is not listed.
    fn select(&mut self, path: &Path) -> bool {
        let found = self.explorer.files().iter().position(|f| f.path == path);
        if let Some(i) = found {
            self.explorer.set_selected_idx(i);
        }
        found.is_some()
    }

    /// A listing failed: say why, and list `cwd` again (the crate may have
    /// removed an entry already), else its nearest ancestor that can be listed
    /// (selecting the way back to `cwd`); then select `keep` if it is listed.
    fn recover(&mut self, why: String, cwd: &Path, keep: &Path) {
        self.notice = Some(why);
        for dir in cwd.ancestors() {
            if self.explorer.set_cwd(dir).is_ok() {
                break;
            }
        }
        self.listed();
        for path in [keep].into_iter().chain(cwd.ancestors()) {
            if self.select(path) {
                break;
            }
        }
    }
}

/// A path for a notice: its last component (the title shows the folder), or
/// the whole path at the root. The view sanitises it.
pub(crate) fn shown(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn too_big(path: &Path, size: u64) -> String {
    format!(
        "{} is {}: uploads are limited to {}",
        shown(path),
        human_size(size),
        human_size(MAX_UPLOAD)
    )
}

#[cfg(test)]
mod tests;
