//! What the notebook does with its selected cell and the questions it asks,
//! for its reducer: copying the cell (to the clipboard, through the loop),
//! saving its output or image (a path prompt, then a question before
//! replacing a file: [`NotebookPrompt`]s of the one prompt model), the
//! standard input of a shell command, and the answers to all of these.

use super::NotebookUi;
use super::update::{NotebookOut, NotebookPrompt};
use crate::notebook::Cell;
use crate::notebook::language::Language;
use crate::tui::action::{Effect, Out};
use crate::tui::cell_export;
use crate::tui::local::{self, CLIPBOARD_LIMIT, LocalOutcome, LocalWork, SaveRequest};
use crate::tui::widgets::fit::human_size;
use crate::tui::widgets::prompt::{Answer, Prompt, Question};

/// What `copy` and `save` say with no cell selected.
const NO_SELECTION: &str = "no cell selected: Esc goes to the notebook, j/k select";

/// The standard input typed on the prompt's one line: `\n` and `\t` stand
/// for a new line and a tab, `\\` for a backslash (as `printf` reads them);
/// any other backslash stays. Ends with a new line, as a typed line does.
pub(super) fn stdin_from_typed(typed: &str) -> String {
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

impl NotebookUi {
    /// The selected cell, or why there is none (for the status line).
    fn selected_cell(&self) -> Result<&Cell, String> {
        self.selected
            .and_then(|i| self.book.cells.get(i))
            .ok_or_else(|| NO_SELECTION.to_string())
    }

    /// Copies the selected cell's output (or its `input`) to the clipboard:
    /// the effect that does it, or a notice saying why not.
    pub(super) fn copy_cell(&self, input: bool) -> NotebookOut {
        let (text, what) = match self.selected_cell() {
            Ok(cell) if input => (
                cell.source.clone(),
                format!("In [{}]", cell.execution_count),
            ),
            Ok(cell) => (
                cell_export::output_text(cell),
                format!("In [{}]'s output", cell.execution_count),
            ),
            Err(why) => return Out::Notice(why),
        };
        if text.is_empty() {
            Out::Notice(format!("{what}: no text to copy"))
        } else if text.len() > CLIPBOARD_LIMIT {
            Out::Notice(format!(
                "{what} is {}, too long for the clipboard: save it to a file instead",
                human_size(text.len() as u64)
            ))
        } else {
            Out::Effect(Effect::Local(LocalWork::Copy { text, what }))
        }
    }

    /// Asks for the path to save the selected cell's output to.
    pub(super) fn start_save(&self) -> Option<NotebookOut> {
        let index = self.selected;
        let cell = match self.selected_cell() {
            Ok(cell) => cell,
            Err(why) => return Some(Out::Notice(why)),
        };
        let Some(name) = cell_export::default_name(cell) else {
            return Some(Out::Notice(format!(
                "In [{}] has no output to save",
                cell.execution_count
            )));
        };
        let label = format!(
            "Save In [{}]'s output to (.png: the image):",
            cell.execution_count
        );
        index.map(|cell| {
            Out::Ask(Prompt::line(
                NotebookPrompt::SavePath { cell },
                &label,
                &name,
            ))
        })
    }

    /// Alt+I: asks for the standard input of the shell command in the editor
    /// (Shell pools only: code has no standard input to give).
    pub(super) fn ask_stdin(&self, language: Language) -> Vec<NotebookOut> {
        let out = if language != Language::Shell {
            Out::Notice("standard input is for shell commands (Shell pools)".to_string())
        } else if self.editor.source().trim().is_empty() {
            Out::Notice("type a command first, then Alt+I gives it its input".to_string())
        } else {
            Out::Ask(Prompt::line(
                NotebookPrompt::Stdin,
                "Standard input (\\n: new line, \\t: tab, \\\\: backslash):",
                "",
            ))
        };
        vec![out]
    }

    /// The answer to a notebook prompt: the path to save to (the save, or a
    /// notice why not), whether to replace the file that is there, or the
    /// standard input to run the editor's command with. The app brings the
    /// live notebook back before a typed standard input runs the cell.
    pub fn answer(&mut self, asked: NotebookPrompt, answer: Answer) -> Vec<NotebookOut> {
        let out = match (asked, answer) {
            (NotebookPrompt::SavePath { cell }, Answer::Text(path)) => self.save_to(cell, &path),
            (NotebookPrompt::SavePath { .. }, _) => Some(Out::Notice("not saved".to_string())),
            (NotebookPrompt::Overwrite(mut request), Answer::Yes) => {
                request.overwrite = true;
                Some(Out::Effect(Effect::Local(LocalWork::Save(request))))
            }
            (NotebookPrompt::Overwrite(request), _) => Some(Out::Notice(format!(
                "not saved: {} is kept",
                request.path.display()
            ))),
            (NotebookPrompt::Stdin, Answer::Text(text)) => {
                self.run_cell(Some(stdin_from_typed(&text)))
            }
            (NotebookPrompt::Stdin, _) => Some(Out::Notice(
                "not run: the command stays in the editor".to_string(),
            )),
            (NotebookPrompt::ReplayEarlier, Answer::Yes) => return self.replay_earlier_now(),
            (NotebookPrompt::ReplayEarlier, _) => {
                Some(Out::Notice("not replayed: R asks again".to_string()))
            }
        };
        out.into_iter().collect()
    }

    /// The save of cell `cell`'s output to the typed path, or a notice saying
    /// why there is none.
    fn save_to(&self, cell: usize, typed: &str) -> Option<NotebookOut> {
        if typed.trim().is_empty() {
            return Some(Out::Notice("not saved: no file name".to_string()));
        }
        let path = local::resolve(typed);
        let c = self.book.cells.get(cell)?;
        Some(match cell_export::content_for(c, &path) {
            Ok((bytes, kind)) => Out::Effect(Effect::Local(LocalWork::Save(SaveRequest {
                path,
                bytes,
                overwrite: false,
                what: format!("In [{}]'s {kind}", c.execution_count),
            }))),
            Err(why) => Out::Notice(format!("not saved: {why}")),
        })
    }

    /// How a copy or save the loop carried out went: a notice, or the
    /// question before replacing a file.
    pub fn local_work_done(outcome: LocalOutcome) -> NotebookOut {
        Out::Notice(match outcome {
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
                    return Out::Ask(Prompt::question(
                        NotebookPrompt::Overwrite(request),
                        question,
                    ));
                }
                Err(e) => format!("cannot save {}: {e}", request.path.display()),
            },
        })
    }
}
