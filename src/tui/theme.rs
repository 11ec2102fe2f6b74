//! The semantic palette the views draw with: roles, not widgets (style.md §11).
//! The themes are TOML files in `themes/` (`dark`, the default, and `light`),
//! embedded in the binary and chosen with `theme = "…"` in the config file. With
//! `NO_COLOR` set (<https://no-color.org>) the colours are dropped and only the
//! modifiers (bold, reversed, …) remain.

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The built-in themes: name and TOML text.
const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
];

/// The theme used when the config names none.
pub const DEFAULT_THEME: &str = "dark";

/// Styles by role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Emphasis: headings, keys in the help.
    pub accent: Style,
    /// Secondary text: hints, durations, continuation prompts.
    pub muted: Style,
    /// The selected item of a list.
    pub selection: Style,
    /// The border of a pane without the focus.
    pub border: Style,
    /// The border of the focused pane.
    pub border_focused: Style,
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
    /// Something in progress or that needs attention.
    pub warning: Style,
    /// A run that finished well.
    pub success: Style,
    /// The status line background and text.
    pub status: Style,
    /// The emphasised part of the status line (pool, identifier).
    pub status_accent: Style,
    /// False under `NO_COLOR`: views that colour text by other means (syntax
    /// highlighting) must drop those colours too.
    pub colors: bool,
    /// The syntect theme code is highlighted with (`syntax = "…"` in the file).
    pub syntax: String,
}

/// A theme file: one style per role, every role present.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    accent: StyleSpec,
    muted: StyleSpec,
    selection: StyleSpec,
    border: StyleSpec,
    border_focused: StyleSpec,
    prompt_in: StyleSpec,
    prompt_out: StyleSpec,
    error: StyleSpec,
    error_title: StyleSpec,
    stderr: StyleSpec,
    warning: StyleSpec,
    success: StyleSpec,
    status: StyleSpec,
    status_accent: StyleSpec,
    /// A syntect theme name for code.
    syntax: String,
}

/// One role's style as written in a theme file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StyleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    modifiers: Vec<String>,
}

impl StyleSpec {
    fn style(&self, role: &str) -> Result<Style, String> {
        let color = |c: &Option<String>| -> Result<Option<Color>, String> {
            c.as_deref()
                .map(|name| {
                    name.parse::<Color>()
                        .map_err(|_| format!("{role}: unknown colour {name:?}"))
                })
                .transpose()
        };
        let mut style = Style::new();
        if let Some(fg) = color(&self.fg)? {
            style = style.fg(fg);
        }
        if let Some(bg) = color(&self.bg)? {
            style = style.bg(bg);
        }
        for name in &self.modifiers {
            style = style.add_modifier(modifier(name).ok_or_else(|| {
                format!(
                    "{role}: unknown modifier {name:?} (bold, dim, italic, underlined, reversed, crossed_out)"
                )
            })?);
        }
        Ok(style)
    }
}

fn modifier(name: &str) -> Option<Modifier> {
    Some(match name.to_ascii_lowercase().as_str() {
        "bold" => Modifier::BOLD,
        "dim" => Modifier::DIM,
        "italic" => Modifier::ITALIC,
        "underlined" | "underline" => Modifier::UNDERLINED,
        "reversed" | "reverse" => Modifier::REVERSED,
        "crossed_out" | "strikethrough" => Modifier::CROSSED_OUT,
        "slow_blink" | "blink" => Modifier::SLOW_BLINK,
        _ => return None,
    })
}

/// True when the environment asks for no colours: `NO_COLOR` set and not empty.
pub fn no_color_from_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// The names of the built-in themes.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|(name, _)| *name)
}

impl Theme {
    /// The built-in theme `name`, without colours when `no_color`.
    ///
    /// # Errors
    ///
    /// No theme has that name (the message lists the known ones), or the
    /// embedded file is broken (a test makes sure none is).
    pub fn named(name: &str, no_color: bool) -> Result<Self, String> {
        let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) else {
            let known: Vec<&str> = names().collect();
            return Err(format!(
                "unknown theme {name:?} (known: {})",
                known.join(", ")
            ));
        };
        let theme = Self::parse(text).map_err(|e| format!("theme {name}: {e}"))?;
        Ok(if no_color {
            theme.without_colors()
        } else {
            theme
        })
    }

    /// Parses a theme file.
    fn parse(text: &str) -> Result<Self, String> {
        let f: ThemeFile = toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
        Ok(Self {
            accent: f.accent.style("accent")?,
            muted: f.muted.style("muted")?,
            selection: f.selection.style("selection")?,
            border: f.border.style("border")?,
            border_focused: f.border_focused.style("border_focused")?,
            prompt_in: f.prompt_in.style("prompt_in")?,
            prompt_out: f.prompt_out.style("prompt_out")?,
            error: f.error.style("error")?,
            error_title: f.error_title.style("error_title")?,
            stderr: f.stderr.style("stderr")?,
            warning: f.warning.style("warning")?,
            success: f.success.style("success")?,
            status: f.status.style("status")?,
            status_accent: f.status_accent.style("status_accent")?,
            colors: true,
            syntax: f.syntax,
        })
    }

    /// The default palette for dark terminals, using the terminal's own
    /// foreground for ordinary text.
    pub fn dark() -> Self {
        Self::named(DEFAULT_THEME, false).unwrap_or_else(|e| {
            tracing::error!("{e}");
            Self::plain()
        })
    }

    /// The same theme with every colour dropped: modifiers only. Roles that stood
    /// out by their background (the status line, the selection) are reversed
    /// instead, so they still stand out.
    #[must_use]
    pub fn without_colors(&self) -> Self {
        let strip = |s: Style| {
            let mut plain = Style::new()
                .add_modifier(s.add_modifier)
                .remove_modifier(s.sub_modifier);
            if s.bg.is_some_and(|c| c != Color::Reset) {
                plain = plain.add_modifier(Modifier::REVERSED);
            }
            plain
        };
        Self {
            accent: strip(self.accent),
            muted: strip(self.muted),
            selection: strip(self.selection),
            border: strip(self.border),
            border_focused: strip(self.border_focused),
            prompt_in: strip(self.prompt_in),
            prompt_out: strip(self.prompt_out),
            error: strip(self.error),
            error_title: strip(self.error_title),
            stderr: strip(self.stderr),
            warning: strip(self.warning),
            success: strip(self.success),
            status: strip(self.status),
            status_accent: strip(self.status_accent),
            colors: false,
            syntax: self.syntax.clone(),
        }
    }

    /// A theme without colours, for when even the embedded files fail.
    fn plain() -> Self {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let reversed = Style::new().add_modifier(Modifier::REVERSED);
        Self {
            accent: bold,
            muted: Style::new(),
            selection: reversed,
            border: Style::new(),
            border_focused: bold,
            prompt_in: bold,
            prompt_out: bold,
            error: bold,
            error_title: bold,
            stderr: Style::new(),
            warning: Style::new(),
            success: Style::new(),
            status: reversed,
            status_accent: reversed.add_modifier(Modifier::BOLD),
            colors: false,
            syntax: crate::tui::widgets::highlight::DEFAULT_THEME.to_string(),
        }
    }
}

impl Default for Theme {
    fn default() -> Self {
        Self::dark()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme(name: &str, no_color: bool) -> Theme {
        match Theme::named(name, no_color) {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn every_builtin_theme_parses() {
        for name in names() {
            let t = theme(name, false);
            assert_ne!(t, Theme::plain(), "{name}");
        }
        assert_ne!(theme("dark", false), theme("light", false));
    }

    #[test]
    fn every_builtin_theme_names_a_syntect_theme_for_code() {
        for name in names() {
            let t = theme(name, false);
            assert!(
                crate::tui::widgets::highlight::has_theme(&t.syntax),
                "{name}: {}",
                t.syntax
            );
        }
        assert_eq!(theme("dark", false).syntax, "base16-ocean.dark");
        assert_eq!(theme("light", false).syntax, "InspiredGitHub");
    }

    #[test]
    fn dark_keeps_the_terminal_foreground_for_text() {
        let t = theme("dark", false);
        assert_eq!(t, Theme::dark());
        assert_eq!(t.muted, Style::new().fg(Color::DarkGray));
        assert_eq!(
            t.prompt_in,
            Style::new().fg(Color::Green).add_modifier(Modifier::BOLD)
        );
        assert_eq!(t.status, Style::new().fg(Color::White).bg(Color::DarkGray));
        assert_eq!(t.accent.fg, Some(Color::Cyan));
    }

    #[test]
    fn light_uses_indexed_colours() {
        let t = theme("light", false);
        assert_eq!(t.muted.fg, Some(Color::Indexed(243)));
        assert_eq!(t.status.bg, Some(Color::Indexed(254)));
    }

    #[test]
    fn no_color_keeps_only_modifiers() {
        for name in names() {
            let t = theme(name, true);
            let roles = [
                t.accent,
                t.muted,
                t.selection,
                t.border,
                t.border_focused,
                t.prompt_in,
                t.prompt_out,
                t.error,
                t.error_title,
                t.stderr,
                t.warning,
                t.success,
                t.status,
                t.status_accent,
            ];
            for style in roles {
                assert_eq!((style.fg, style.bg), (None, None), "{name}: {style:?}");
            }
            assert!(t.prompt_in.add_modifier.contains(Modifier::BOLD));
            assert!(t.status.add_modifier.contains(Modifier::REVERSED));
            assert!(t.selection.add_modifier.contains(Modifier::REVERSED));
            assert!(!t.colors);
        }
        assert!(theme("dark", false).colors);
    }

    #[test]
    fn unknown_names_and_broken_files_are_explained() {
        let e = Theme::named("solarized", false).unwrap_err();
        assert!(e.contains("solarized") && e.contains("dark, light"), "{e}");
        let e = Theme::parse("accent = { fg = \"blurple\" }").unwrap_err();
        assert!(e.contains("missing field"), "{e}");
        let mut text = BUILTIN[0].1.replace("\"cyan\"", "\"blurple\"");
        let e = Theme::parse(&text).unwrap_err();
        assert!(e.contains("accent") && e.contains("blurple"), "{e}");
        text = BUILTIN[0].1.replace("\"bold\"", "\"loud\"");
        let e = Theme::parse(&text).unwrap_err();
        assert!(e.contains("loud"), "{e}");
    }
}
