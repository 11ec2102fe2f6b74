//! The line of a prompt on the bottom row of the screen (over the status
//! line), and how a prompt or question is drawn there. While one is open the keymap sends
//! every key here as `Action::Edit` (like the pager's search prompt); Enter
//! accepts, Esc, Ctrl+C or Ctrl+G cancels, other keys edit the line (arrows,
//! Home/End, Backspace, Ctrl+W…, through ratatui-textarea).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use ratatui_textarea::{CursorMove, Input, Key, TextArea};

use crate::tui::theme::Theme;
use crate::tui::widgets::sanitize;

/// What a key did to a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptKey {
    /// The line was edited (or the key meant nothing): the prompt stays.
    Typing,
    /// Enter: the text as it stands.
    Accept(String),
    /// Esc, Ctrl+C or Ctrl+G.
    Cancel,
}

/// A label and one line of text being typed.
#[derive(Debug)]
pub struct LinePrompt {
    label: String,
    line: TextArea<'static>,
}

impl LinePrompt {
    /// The same prompt holding `text` instead, the cursor at its end (after a
    /// completion).
    #[must_use]
    pub fn with_text(&self, text: &str) -> Self {
        Self::new(self.label.clone(), text)
    }

    /// A prompt saying `label`, holding `initial` with the cursor at its end.
    pub fn new(label: impl Into<String>, initial: &str) -> Self {
        let mut line = TextArea::new(vec![sanitize::plain(initial).replace('\n', " ")]);
        line.set_cursor_line_style(Style::new());
        line.move_cursor(CursorMove::End);
        Self {
            label: label.into(),
            line,
        }
    }

    /// The text typed so far.
    pub fn text(&self) -> &str {
        self.line.lines().first().map_or("", String::as_str)
    }

    /// Takes one key.
    pub fn key(&mut self, input: Input) -> PromptKey {
        match input.key {
            Key::Enter => PromptKey::Accept(self.text().to_string()),
            // Ctrl+M and Ctrl+J are Enter on many terminals.
            Key::Char('m' | 'j') if input.ctrl => PromptKey::Accept(self.text().to_string()),
            Key::Esc => PromptKey::Cancel,
            Key::Char('c' | 'g') if input.ctrl => PromptKey::Cancel,
            // No tabs or line breaks in a one-line answer.
            Key::Tab | Key::Null => PromptKey::Typing,
            _ => {
                self.line.input(input);
                PromptKey::Typing
            }
        }
    }

    /// Pasted text: its first line, without control characters.
    pub fn paste(&mut self, text: &str) {
        let first = text.lines().next().unwrap_or_default();
        self.line.insert_str(sanitize::plain(first));
    }

    /// Draws the label and the line (with its cursor) on one row.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        clear_row(area, buf, theme);
        let label = Span::styled(format!(" {} ", self.label), theme.status_accent);
        let width = u16::try_from(label.width()).unwrap_or(u16::MAX);
        buf.set_span(area.x, area.y, &label, area.width);
        let rest = Rect {
            x: area.x.saturating_add(width).min(area.right()),
            width: area.width.saturating_sub(width),
            ..area
        };
        if rest.width > 0 {
            (&self.line).render(rest, buf);
        }
    }
}

/// Draws a question on the bottom row: `question` and the answers it takes.
pub fn render_question(question: &str, answers: &str, area: Rect, buf: &mut Buffer, theme: &Theme) {
    clear_row(area, buf, theme);
    let line = Line::from(vec![
        Span::styled(
            format!(" {} ", sanitize::plain(question)),
            theme.status.patch(theme.warning),
        ),
        Span::styled(answers.to_string(), theme.status_accent),
    ]);
    buf.set_line(area.x, area.y, &line, area.width);
}

/// Blanks `area` in the status line's style: a prompt drawn over the status
/// line must not leave the status line's text showing after its own.
pub fn clear_row(area: Rect, buf: &mut Buffer, theme: &Theme) {
    ratatui::widgets::Clear.render(area, buf);
    buf.set_style(area, theme.status);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(key: Key) -> Input {
        Input {
            key,
            ..Input::default()
        }
    }

    fn ctrl(c: char) -> Input {
        Input {
            key: Key::Char(c),
            ctrl: true,
            ..Input::default()
        }
    }

    #[test]
    fn typing_editing_and_accepting() {
        let mut p = LinePrompt::new("Save to:", "out-1.txt");
        assert_eq!(p.text(), "out-1.txt");
        for _ in 0..3 {
            p.key(key(Key::Backspace));
        }
        for c in "png".chars() {
            p.key(key(Key::Char(c)));
        }
        assert_eq!(p.key(key(Key::Tab)), PromptKey::Typing);
        assert_eq!(
            p.key(key(Key::Enter)),
            PromptKey::Accept("out-1.png".into())
        );
        assert_eq!(p.key(ctrl('j')), PromptKey::Accept("out-1.png".into()));
        assert_eq!(p.key(key(Key::Esc)), PromptKey::Cancel);
        assert_eq!(p.key(ctrl('c')), PromptKey::Cancel);
    }

    #[test]
    fn paste_takes_the_first_line_without_escapes() {
        let mut p = LinePrompt::new("Save to:", "");
        p.paste("a\x1b[2Jb.txt\nsecond");
        assert_eq!(p.text(), "ab.txt");
    }

    fn row(buf: &Buffer, width: u16) -> String {
        (0..width)
            .filter_map(|x| buf.cell((x, 0)).map(|c| c.symbol().to_string()))
            .collect()
    }

    #[test]
    fn prompts_blank_what_was_under_them() {
        let area = Rect::new(0, 0, 60, 1);
        let mut buf = Buffer::empty(area);
        let under = " local │ sessionpad-1a2b3c4d │ 2025-10-02-preview │ done in 6 ms";
        buf.set_string(0, 0, under, Style::new());
        render_question("Delete a.txt?", "y/N", area, &mut buf, &Theme::dark());
        assert_eq!(row(&buf, 60).trim_end(), " Delete a.txt? y/N");
        buf.set_string(0, 0, under, Style::new());
        LinePrompt::new("Save to:", "x").render(area, &mut buf, &Theme::dark());
        assert_eq!(row(&buf, 60).trim_end(), " Save to: x");
    }

    #[test]
    fn renders_label_and_text_on_one_row() {
        let p = LinePrompt::new("Save to:", "out.txt");
        let area = Rect::new(0, 0, 30, 1);
        let mut buf = Buffer::empty(area);
        p.render(area, &mut buf, &Theme::dark());
        let row: String = (0..30)
            .filter_map(|x| buf.cell((x, 0)).map(|c| c.symbol().to_string()))
            .collect();
        assert_eq!(row.trim_end(), " Save to: out.txt");
    }
}
