//! The bottom-row prompt as the app holds it: the app's [`Purpose`] (which
//! pane asked, and what for), opening a prompt, what each pane is being asked,
//! and the one reducer that takes every key while a prompt is open and hands
//! the answer to the pane that asked (`tui/prompt/` holds the prompt itself and
//! its view; `impl App` lives only in `tui/app/`).

use super::App;
use super::Layer;
use super::NotebookPrompt;
use crate::tui::action::Action;
use crate::tui::action::Effect;
use crate::tui::files::FilesPrompt;
use crate::tui::sessions::SessionsPrompt;
use crate::tui::widgets::line_prompt::PromptKey;
use crate::tui::widgets::prompt::{Answer, Ask, Prompt, Purposeful};
use ratatui_textarea::Key;

/// Which feature asked, and what for.
#[derive(Debug)]
pub enum Purpose {
    /// The notebook: saving a cell's output.
    Notebook(NotebookPrompt),
    /// The files pane.
    Files(FilesPrompt),
    /// The sessions pane.
    Sessions(SessionsPrompt),
    /// The app itself: quit although a cell runs or text is typed
    /// (`quit.rs`)?
    Quit,
    /// Saving a file a recorded cell changed (`recorded_files.rs`).
    Recorded(super::recorded_files::RecordedPrompt),
}

impl Purposeful for Purpose {
    fn completion(&self) -> Option<fn(&str) -> String> {
        match self {
            Purpose::Notebook(asked) => asked.completion(),
            Purpose::Files(asked) => asked.completion(),
            Purpose::Sessions(asked) => asked.completion(),
            Purpose::Quit => None,
            // One folder, typed as it is (spaces are part of it).
            Purpose::Recorded(_) => Some(crate::tui::local_paths::complete_one),
        }
    }
}

/// The prompt of the app: its purpose names the pane that asked.
pub type AppPrompt = Prompt<Purpose>;

impl App {
    /// Opens `prompt` on top of the overlays (replacing any other prompt).
    pub fn ask(&mut self, prompt: AppPrompt) {
        self.overlays.open(Layer::Prompt(prompt));
    }

    /// The open prompt, if any.
    pub fn prompt(&self) -> Option<&AppPrompt> {
        self.overlays.prompt()
    }

    /// The open prompt's purpose when the files pane asked.
    pub fn files_prompt(&self) -> Option<&FilesPrompt> {
        match self.overlays.prompt() {
            Some(Prompt {
                purpose: Purpose::Files(p),
                ..
            }) => Some(p),
            _ => None,
        }
    }

    /// The open prompt's purpose when the sessions pane asked.
    pub fn sessions_prompt(&self) -> Option<&SessionsPrompt> {
        match self.overlays.prompt() {
            Some(Prompt {
                purpose: Purpose::Sessions(p),
                ..
            }) => Some(p),
            _ => None,
        }
    }

    /// The open prompt's purpose when the notebook asked.
    pub fn notebook_prompt(&self) -> Option<&NotebookPrompt> {
        match self.overlays.prompt() {
            Some(Prompt {
                purpose: Purpose::Notebook(p),
                ..
            }) => Some(p),
            _ => None,
        }
    }

    /// A key or paste while a prompt is open: it edits the line (Tab completes
    /// a path where the purpose does; Ctrl+O in the upload prompt opens the
    /// picker there), or answers, and the answer goes to the feature that
    /// asked. Ctrl+Q still quits: it answers the quit question yes, and over
    /// any other prompt asks it, when quitting would leave something behind
    /// ([`App::ask_to_quit`]).
    pub fn prompt_action(&mut self, action: Action) -> Vec<Effect> {
        let Some(mut taken) = self.overlays.take_prompt() else {
            return Vec::new();
        };
        let prompt = &mut taken.state;
        let completion = prompt.completion();
        let answer = match (&mut prompt.ask, action) {
            (_, Action::Quit) if matches!(prompt.purpose, Purpose::Quit) => Answer::Yes,
            (_, Action::Quit) => {
                self.ask_to_quit();
                return Vec::new();
            }
            (Ask::YesNo(_), Action::Edit(input)) => {
                if matches!(input.key, Key::Char('y' | 'Y')) {
                    Answer::Yes
                } else {
                    Answer::No
                }
            }
            (Ask::Line(line), Action::Edit(input)) if input.key == Key::Tab => {
                if let Some(complete) = completion {
                    **line = line.with_text(&complete(line.text()));
                }
                self.overlays.put_back(taken, Layer::Prompt);
                return Vec::new();
            }
            (Ask::Line(line), Action::Edit(input))
                if input.ctrl
                    && input.key == Key::Char('o')
                    && matches!(prompt.purpose, Purpose::Files(FilesPrompt::Upload)) =>
            {
                // The picker starts in the folder typed so far, if it is one.
                let start = crate::tui::local::resolve(line.text());
                self.open_picker(Some(start));
                return Vec::new();
            }
            (Ask::Line(line), Action::Edit(input)) => match line.key(input) {
                PromptKey::Typing => {
                    self.overlays.put_back(taken, Layer::Prompt);
                    return Vec::new();
                }
                PromptKey::Cancel => Answer::Cancelled,
                PromptKey::Accept(text) => Answer::Text(text),
            },
            (Ask::Line(line), Action::Paste(text)) => {
                line.paste(&text);
                self.overlays.put_back(taken, Layer::Prompt);
                return Vec::new();
            }
            // Anything else (a resize, the mouse) leaves the prompt as it is.
            _ => {
                self.overlays.put_back(taken, Layer::Prompt);
                return Vec::new();
            }
        };
        match taken.state.purpose {
            Purpose::Notebook(asked) => self.notebook_answer(asked, answer),
            Purpose::Files(asked) => self.files_answer(asked, answer),
            Purpose::Sessions(asked) => self.sessions_answer(asked, answer),
            Purpose::Quit => {
                self.quit_answer(&answer);
                Vec::new()
            }
            Purpose::Recorded(asked) => self.recorded_file_answer(asked, answer),
        }
    }
}
