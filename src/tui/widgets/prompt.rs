//! One prompt model for the bottom row: every line the user types there and
//! every yes/no question (save a cell's output and replace a file; the
//! download folder, creating it, uploads, deletes, replacing downloads; a new
//! or attached session, ending one, replaying cells) is a [`Prompt`]: what is
//! asked ([`Ask`]: a line with its text, or a [`Question`]) and what the answer
//! is for (a [`Purposeful`] purpose: a feature asks with its own purpose type,
//! the app's `Purpose` names the feature that asked). It is a widget any
//! feature may build; the app holds at most one open, as a layer of its
//! overlays; one reducer (`App::prompt_action`, in `tui/app/prompt.rs`) takes
//! every key while it is open and hands the [`Answer`] to the feature that
//! asked; one view ([`render`]) draws it, blanking the row first. (The history
//! search is an overlay over the notebook, not a prompt.)

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::tui::theme::Theme;
use crate::tui::widgets::fit;
use crate::tui::widgets::line_prompt::LinePrompt;

/// What a prompt asks.
#[derive(Debug)]
pub enum Ask {
    /// A line to type (a path, an identifier), with its label.
    Line(Box<LinePrompt>),
    /// A yes/no question; any key but `y` answers no.
    YesNo(Question),
}

/// A yes/no question: `before`, the `subject` (a path or a name, shortened
/// from its start when the row is narrow, so the answers stay in view), then
/// `after`, then the first of its `notes` that fits the row whole (none when
/// none does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The text before the subject.
    pub before: String,
    /// The path or name asked about.
    pub subject: String,
    /// The text after the subject.
    pub after: String,
    /// What the answer does, longest first: the first that fits is shown.
    pub notes: Vec<String>,
}

impl Question {
    /// A question about `subject`.
    pub fn new(before: &str, subject: impl Into<String>, after: &str) -> Self {
        Self {
            before: before.to_string(),
            subject: subject.into(),
            after: after.to_string(),
            notes: Vec::new(),
        }
    }

    /// The question with `notes` after it, longest first: the first that
    /// fits the row whole is shown, none when none does.
    #[must_use]
    pub fn with_notes(mut self, notes: Vec<String>) -> Self {
        self.notes = notes;
        self
    }

    /// The whole question in one line, the subject shortened to fit `width`
    /// columns with room for the answers; then the first note that fits.
    pub fn text(&self, width: usize) -> String {
        let fixed = fit::columns(&self.before) + fit::columns(&self.after) + ANSWERS.len() + 3;
        let subject = keep_end(&fit::one_line(&self.subject), width.saturating_sub(fixed));
        let text = format!("{}{subject}{}", self.before, self.after);
        let room = width.saturating_sub(fit::columns(&text) + ANSWERS.len() + 3);
        let note = self
            .notes
            .iter()
            .map(|n| fit::one_line(n))
            .find(|n| fit::columns(n) <= room)
            .unwrap_or_default();
        format!("{text}{note}")
    }
}

/// The answers a question takes, as drawn after it.
const ANSWERS: &str = "y/N";

/// What a prompt's answer is for, as far as the prompt needs to know: how
/// Tab completes the typed text. The app's purposes (`tui::app::Purpose`)
/// name the pane that asked; the prompt knows no pane.
pub trait Purposeful {
    /// How Tab completes the typed text for this purpose, if it does.
    fn completion(&self) -> Option<fn(&str) -> String>;
}

/// How a prompt was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Enter on a line: its text.
    Text(String),
    /// `y` to a question.
    Yes,
    /// Any other key to a question.
    No,
    /// Esc, Ctrl+C or Ctrl+G on a line.
    Cancelled,
}

/// A prompt on the bottom row.
#[derive(Debug)]
pub struct Prompt<P> {
    /// What is asked.
    pub ask: Ask,
    /// What the answer is for.
    pub purpose: P,
}

impl<P> Prompt<P> {
    /// The same prompt with its purpose wrapped by `wrap` (a feature's
    /// purpose into the app's).
    pub fn map_purpose<Q>(self, wrap: impl FnOnce(P) -> Q) -> Prompt<Q> {
        Prompt {
            ask: self.ask,
            purpose: wrap(self.purpose),
        }
    }
}

impl<P: Purposeful> Prompt<P> {
    /// A line to type for `purpose`, labelled `label`, holding `initial`.
    pub fn line(purpose: P, label: &str, initial: &str) -> Self {
        Self {
            ask: Ask::Line(Box::new(LinePrompt::new(label, initial))),
            purpose,
        }
    }

    /// A yes/no `question` for `purpose`.
    pub fn question(purpose: P, question: Question) -> Self {
        Self {
            ask: Ask::YesNo(question),
            purpose,
        }
    }

    /// The text typed so far (empty for a question).
    pub fn text(&self) -> &str {
        match &self.ask {
            Ask::Line(line) => line.text(),
            Ask::YesNo(_) => "",
        }
    }

    /// How Tab completes the typed text, if it does for this purpose.
    pub(crate) fn completion(&self) -> Option<fn(&str) -> String> {
        self.purpose.completion()
    }
}

/// Draws `prompt` on the bottom row `area` (blanked first): a line with its
/// label and cursor, or a question with its answers.
pub fn render<P>(prompt: &Prompt<P>, area: Rect, buf: &mut Buffer, theme: &Theme) {
    match &prompt.ask {
        Ask::Line(line) => line.render(area, buf, theme),
        Ask::YesNo(question) => crate::tui::widgets::line_prompt::render_question(
            &question.text(usize::from(area.width)),
            ANSWERS,
            area,
            buf,
            theme,
        ),
    }
}

/// `text` when it fits in `width` columns, else `…` and as much of its end as
/// fits (a folder's own name is at the end of its path).
fn keep_end(text: &str, width: usize) -> String {
    if fit::columns(text) <= width {
        return text.to_string();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = fit::columns(c.encode_utf8(&mut [0; 4]));
        if used + w > width {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_subject_loses_its_start_so_the_answers_stay_in_view() {
        let q = Question::new(
            "Create folder ",
            "/home/someone/a/very/long/path/to/plots",
            " and download into it?",
        );
        assert_eq!(
            q.text(200),
            "Create folder /home/someone/a/very/long/path/to/plots and download into it?"
        );
        let short = q.text(60);
        assert!(short.starts_with("Create folder …"), "{short}");
        assert!(short.ends_with("/plots and download into it?"), "{short}");
        assert!(fit::columns(&short) + ANSWERS.len() + 3 <= 60, "{short}");
    }

    /// A note is shown whole or not at all: the longest that fits.
    #[test]
    fn the_longest_note_that_fits_is_shown() {
        let q = Question::new("", "In [2] is running", ": quit anyway?").with_notes(vec![
            " It is kept, marked as running when you quit.".into(),
            " It is kept.".into(),
        ]);
        assert_eq!(
            q.text(200),
            "In [2] is running: quit anyway? It is kept, marked as running when you quit."
        );
        assert_eq!(q.text(50), "In [2] is running: quit anyway? It is kept.");
        assert_eq!(q.text(40), "In [2] is running: quit anyway?");
    }
}
