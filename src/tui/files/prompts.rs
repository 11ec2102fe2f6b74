//! The files pane's answers to its prompts and questions (download folder,
//! creating it when it does not exist, upload paths, delete, replace; the keys
//! of the prompt itself are `prompt/`'s) and uploads, from the prompt, a paste
//! or the picker.

use std::path::PathBuf;

use super::{
    Answer, App, Effect, FileCommand, FilesPrompt, MAX_UPLOAD, Prompt, Purpose, Question,
    expand_paths, human_size, pasted_paths,
};

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
