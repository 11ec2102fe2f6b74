//! The files pane's prompts and questions (download folder, creating it when it
//! does not exist, upload paths with Tab completion and Ctrl+O for the picker,
//! delete, replace) and uploads, from the prompt, a paste or the picker: the
//! reducers behind [`FilesPrompt`].

use super::*;
use crate::tui::action::Action;

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
        self.start_transfer(FilesCommand::Upload { paths, folder })
    }

    /// A key or paste while a files prompt is open.
    pub fn files_prompt_action(&mut self, action: Action) -> Vec<Effect> {
        let Some(prompt) = self.files.prompt.take() else {
            return Vec::new();
        };
        match (prompt, action) {
            (FilesPrompt::Folder(mut p), Action::Edit(input)) => match p.key(input) {
                PromptKey::Typing => self.files.prompt = Some(FilesPrompt::Folder(p)),
                PromptKey::Cancel => {}
                PromptKey::Accept(text) => {
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
                        self.files.prompt = Some(FilesPrompt::CreateFolder(folder));
                    } else {
                        self.notice = Some(format!("{} is not a folder", folder.display()));
                    }
                }
            },
            (FilesPrompt::Upload(p), Action::Edit(input))
                if input.ctrl && input.key == Key::Char('o') =>
            {
                // The picker starts in the folder typed so far, if it is one.
                self.open_picker(Some(crate::tui::local::resolve(p.text())));
            }
            (FilesPrompt::Upload(p), Action::Edit(input)) if input.key == Key::Tab => {
                let completed = complete_path(p.text());
                self.files.prompt = Some(FilesPrompt::Upload(LinePrompt::new(
                    UPLOAD_LABEL,
                    &completed,
                )));
            }
            (FilesPrompt::Upload(mut p), Action::Edit(input)) => match p.key(input) {
                PromptKey::Typing => self.files.prompt = Some(FilesPrompt::Upload(p)),
                PromptKey::Cancel => {}
                PromptKey::Accept(text) => {
                    let paths = expand_paths(&text);
                    if paths.is_empty() {
                        self.notice = Some("nothing to upload".into());
                    } else {
                        return self.upload(paths);
                    }
                }
            },
            (FilesPrompt::Folder(mut p), Action::Paste(text)) => {
                p.paste(&text);
                self.files.prompt = Some(FilesPrompt::Folder(p));
            }
            (FilesPrompt::Upload(mut p), Action::Paste(text)) => {
                p.paste(&text);
                self.files.prompt = Some(FilesPrompt::Upload(p));
            }
            (FilesPrompt::Delete(names), Action::Edit(input)) => {
                if yes(input) {
                    return self.start_transfer(FilesCommand::Delete { names });
                }
                self.notice = Some("nothing deleted".into());
            }
            (FilesPrompt::CreateFolder(folder), Action::Edit(input)) => {
                if yes(input) {
                    self.files.download_folder = folder.clone();
                    return self.download_into(Some(folder));
                }
                self.notice = Some(format!(
                    "{} not created: nothing downloaded",
                    folder.display()
                ));
            }
            (FilesPrompt::Overwrite(files, summary), Action::Edit(input)) => {
                if yes(input) {
                    return self.start_transfer(FilesCommand::Download {
                        files,
                        overwrite: true,
                        create_folder: None,
                    });
                }
                // The transfer's summary (what failed) stays in view.
                self.notice = Some(format!("existing files kept; {summary}"));
            }
            (_, Action::Quit) => self.should_quit = true,
            (prompt, _) => self.files.prompt = Some(prompt),
        }
        Vec::new()
    }
}
