//! The semantic palette the views draw with: roles, not widgets (style.md §11).
//! Only a dark default exists in this slice; theme files come later.

use ratatui::style::{Color, Modifier, Style};

/// Styles by role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Secondary text: hints, durations, continuation prompts.
    pub muted: Style,
    /// The `In [n]:` prompt.
    pub prompt_in: Style,
    /// The `Out[n]:` prompt.
    pub prompt_out: Style,
    /// Error outputs and failed runs.
    pub error: Style,
    /// The exception line (`ZeroDivisionError: …`) of a traceback.
    pub error_title: Style,
    /// Text a cell wrote to standard error.
    pub stderr: Style,
    /// A run that finished well.
    pub success: Style,
    /// Something in progress or that needs attention.
    pub warning: Style,
    /// The border of the focused pane.
    pub border_focused: Style,
    /// The status line background and text.
    pub status: Style,
    /// The emphasised part of the status line (pool, identifier).
    pub status_accent: Style,
}

impl Theme {
    /// The default palette for dark terminals, using the terminal's own
    /// foreground for ordinary text.
    pub fn dark() -> Self {
        Self {
            muted: Style::new().fg(Color::DarkGray),
            prompt_in: Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            prompt_out: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            error: Style::new().fg(Color::Red),
            error_title: Style::new()
                .fg(Color::LightRed)
                .add_modifier(Modifier::BOLD),
            stderr: Style::new().fg(Color::LightRed),
            success: Style::new().fg(Color::Green),
            warning: Style::new().fg(Color::Yellow),
            border_focused: Style::new().fg(Color::Cyan),
            status: Style::new().bg(Color::DarkGray).fg(Color::White),
            status_accent: Style::new()
                .bg(Color::DarkGray)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD),
        }
    }
}

impl Default for Theme {
    fn default() -> Self {
        Self::dark()
    }
}
