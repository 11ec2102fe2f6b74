//! The notebook's cell actions, a part of [`App`]'s reducer kept apart from
//! `app.rs`: copying the selected cell (to the clipboard, through the loop),
//! saving its output or image (a path prompt, then a question before replacing
//! a file: [`NotebookPrompt`]s of the one prompt model, `prompt/`), and the
//! history search (Ctrl+R), an overlay that takes every key while it is open
//! ([`App::key_context`] says so to the keymap).

use super::App;
use super::Layer;
use crate::notebook::Cell;
use crate::notebook::language::Language;
use crate::tui::action::{Action, Effect};
use crate::tui::app::Purpose;
use crate::tui::cell_export;
use crate::tui::local::{self, CLIPBOARD_LIMIT, LocalOutcome, LocalWork, SaveRequest};
use crate::tui::notebook::history_search::{HistorySearch, SearchKey};
use crate::tui::widgets::fit::human_size;
use crate::tui::widgets::prompt::{Answer, Prompt, Question};

/// What the notebook asks on the bottom row (a [`Prompt`]'s purpose).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotebookPrompt {
    /// The path to save cell `cell`'s output to.
    SavePath {
        /// The cell.
        cell: usize,
    },
    /// The file exists: replace it (`y`) or not?
    Overwrite(SaveRequest),
    /// The standard input to run the editor's shell command with.
    Stdin,
}

/// The standard input typed on the prompt's one line: `\n` and `\t` stand
/// for a new line and a tab, `\\` for a backslash (as `printf` reads them);
/// any other backslash stays. Ends with a new line, as a typed line does.
fn stdin_from_typed(typed: &str) -> String {
    let mut out = String::with_capacity(typed.len() + 1);
    let mut chars = typed.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out.push('\n');
    out
}

/// What `stop`, `copy` and `save` say with no cell selected.
const NO_SELECTION: &str = "no cell selected: Esc goes to the notebook, j/k select";

impl App {
    /// The selected cell, or why there is none (for the status line).
    fn selected_cell(&self) -> Result<&Cell, String> {
        self.selected
            .and_then(|i| self.notebook.cells.get(i))
            .ok_or_else(|| NO_SELECTION.to_string())
    }

    /// Copies the selected cell's output (or its input) to the clipboard: the
    /// effect that does it, or a notice saying why not.
    pub(super) fn copy_cell(&mut self, input: bool) -> Option<Effect> {
        let (text, what) = match self.selected_cell() {
            Ok(cell) if input => (
                cell.source.clone(),
                format!("In [{}]", cell.execution_count),
            ),
            Ok(cell) => (
                cell_export::output_text(cell),
                format!("In [{}]'s output", cell.execution_count),
            ),
            Err(why) => {
                self.notice = Some(why);
                return None;
            }
        };
        if text.is_empty() {
            self.notice = Some(format!("{what}: no text to copy"));
        } else if text.len() > CLIPBOARD_LIMIT {
            self.notice = Some(format!(
                "{what} is {}, too long for the clipboard: save it to a file instead",
                human_size(text.len() as u64)
            ));
        } else {
            return Some(Effect::Local(LocalWork::Copy { text, what }));
        }
        None
    }

    /// Opens the path prompt to save the selected cell's output.
    pub(super) fn start_save(&mut self) {
        let index = self.selected;
        let cell = match self.selected_cell() {
            Ok(cell) => cell,
            Err(why) => {
                self.notice = Some(why);
                return;
            }
        };
        let Some(name) = cell_export::default_name(cell) else {
            self.notice = Some(format!(
                "In [{}] has no output to save",
                cell.execution_count
            ));
            return;
        };
        let label = format!(
            "Save In [{}]'s output to (.png: the image):",
            cell.execution_count
        );
        if let Some(cell) = index {
            self.ask(Prompt::line(
                Purpose::Notebook(NotebookPrompt::SavePath { cell }),
                &label,
                &name,
            ));
        }
    }

    /// Opens the history search.
    pub(super) fn start_history_search(&mut self) {
        if self.notebook.cells.is_empty() {
            self.notice = Some("no earlier cells yet".to_string());
            return;
        }
        let search = HistorySearch::new(&self.notebook.cells);
        self.overlays.open(Layer::HistorySearch(search));
    }

    /// An action while the history search is open: it goes to the search.
    pub(super) fn modal_action(&mut self, action: Action) -> Vec<Effect> {
        let Some(mut taken) = self.overlays.take_history_search() else {
            return Vec::new();
        };
        match action {
            Action::Edit(input) => match taken.state.key(input, &self.notebook.cells) {
                SearchKey::Searching => self.overlays.put_back(taken, Layer::HistorySearch),
                SearchKey::Cancel => {}
                SearchKey::Take(index) => self.take_from_history(index),
            },
            Action::Paste(text) => {
                taken.state.paste(&text, &self.notebook.cells);
                self.overlays.put_back(taken, Layer::HistorySearch);
            }
            Action::Quit => self.should_quit = true,
            // Anything else (a resize, the mouse) leaves the search as it is.
            _ => self.overlays.put_back(taken, Layer::HistorySearch),
        }
        Vec::new()
    }

    /// The answer to a notebook prompt: the path to save to (the save, or a
    /// notice why not), or whether to replace the file that is there.
    pub(crate) fn notebook_answer(&mut self, asked: NotebookPrompt, answer: Answer) -> Vec<Effect> {
        match (asked, answer) {
            (NotebookPrompt::SavePath { cell }, Answer::Text(path)) => {
                self.save_to(cell, &path).into_iter().collect()
            }
            (NotebookPrompt::SavePath { .. }, _) => {
                self.notice = Some("not saved".to_string());
                Vec::new()
            }
            (NotebookPrompt::Overwrite(mut request), Answer::Yes) => {
                request.overwrite = true;
                vec![Effect::Local(LocalWork::Save(request))]
            }
            (NotebookPrompt::Overwrite(request), _) => {
                self.notice = Some(format!("not saved: {} is kept", request.path.display()));
                Vec::new()
            }
            (NotebookPrompt::Stdin, Answer::Text(text)) => {
                let mut effects = self.leave_recorded(std::time::Instant::now());
                effects.extend(self.run_cell(Some(stdin_from_typed(&text))));
                effects
            }
            (NotebookPrompt::Stdin, _) => {
                self.notice = Some("not run: the command stays in the editor".to_string());
                Vec::new()
            }
        }
    }

    /// Alt+I: asks for the standard input of the shell command in the editor
    /// (Shell pools only: code has no standard input to give).
    pub(super) fn ask_stdin(&mut self) {
        if self.config.language != Language::Shell {
            self.notice = Some("standard input is for shell commands (Shell pools)".to_string());
            return;
        }
        if self.editor.source().trim().is_empty() {
            self.notice = Some("type a command first, then Alt+I gives it its input".to_string());
            return;
        }
        self.ask(Prompt::line(
            Purpose::Notebook(NotebookPrompt::Stdin),
            "Standard input (\\n: new line, \\t: tab, \\\\: backslash):",
            "",
        ));
    }

    /// Brings cell `index`'s source into the editor, as one edit Ctrl+Z undoes.
    fn take_from_history(&mut self, index: usize) {
        let Some(cell) = self.notebook.cells.get(index) else {
            return;
        };
        let source = cell.source.clone();
        let count = cell.execution_count;
        self.editor.replace(&source);
        self.focus = super::Focus::Editor;
        self.notice = Some(format!(
            "In [{count}] is in the editor; running it adds a new cell"
        ));
    }

    /// The save of cell `cell`'s output to the typed path, or a notice saying
    /// why there is none.
    fn save_to(&mut self, cell: usize, typed: &str) -> Option<Effect> {
        if typed.trim().is_empty() {
            self.notice = Some("not saved: no file name".to_string());
            return None;
        }
        let path = local::resolve(typed);
        let c = self.notebook.cells.get(cell)?;
        match cell_export::content_for(c, &path) {
            Ok((bytes, kind)) => Some(Effect::Local(LocalWork::Save(SaveRequest {
                path,
                bytes,
                overwrite: false,
                what: format!("In [{}]'s {kind}", c.execution_count),
            }))),
            Err(why) => {
                self.notice = Some(format!("not saved: {why}"));
                None
            }
        }
    }

    /// How a copy or save went: a notice, or the question before replacing a
    /// file.
    pub fn finish_local_work(&mut self, outcome: LocalOutcome) {
        self.dirty = true;
        self.notice = Some(match outcome {
            LocalOutcome::Copied {
                what,
                bytes,
                result: Ok(()),
            } => format!(
                "copied {what} ({}) to the clipboard",
                human_size(bytes as u64)
            ),
            LocalOutcome::Copied {
                what,
                result: Err(e),
                ..
            } => format!("{what} not copied: {e}"),
            LocalOutcome::Saved { request, result } => match result {
                Ok(()) => format!(
                    "saved {} ({}) to {}",
                    request.what,
                    human_size(request.bytes.len() as u64),
                    request.path.display()
                ),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && !request.overwrite => {
                    let question = Question::new(
                        "",
                        request.path.display().to_string(),
                        " exists. Replace it?",
                    );
                    self.ask(Prompt::question(
                        Purpose::Notebook(NotebookPrompt::Overwrite(request)),
                        question,
                    ));
                    return;
                }
                Err(e) => format!("cannot save {}: {e}", request.path.display()),
            },
        });
    }
}

#[cfg(test)]
#[path = "modal_tests.rs"]
mod tests;
