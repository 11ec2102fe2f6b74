//! Syntax highlighting with syntect of the notebook's language (Python, shell,
//! JavaScript), for the editor and for the code shown in the outputs. Loading syntect's syntax and theme sets takes tens of
//! milliseconds, so they are loaded once per process; highlighted sources are
//! cached so a redraw never re-highlights text that did not change.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::notebook::language::Language;

/// The syntect theme used for code unless the UI theme names another.
pub const DEFAULT_THEME: &str = "base16-ocean.dark";
/// Spaces a tab in code is shown as.
const TAB: &str = "    ";
/// Sources kept in the cache before it is emptied (a crude but bounded cache).
const CACHE_LIMIT: usize = 512;

/// Syntect's syntaxes, loaded once per process: by [`preload`] beside the
/// start, so the first frame does not wait for them (issue 27, launch to
/// `1+1`), or when first needed. The themes (smaller) load when the UI's
/// theme is set, before the first frame.
fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(|| {
        let started = std::time::Instant::now();
        let set = SyntaxSet::load_defaults_newlines();
        tracing::debug!(took = ?started.elapsed(), "syntect's syntaxes loaded");
        set
    })
}

fn themes() -> &'static ThemeSet {
    static THEMES: OnceLock<ThemeSet> = OnceLock::new();
    THEMES.get_or_init(ThemeSet::load_defaults)
}

/// Starts loading syntect's syntaxes on a thread of their own (tens of
/// milliseconds, once per process), so that the first frame is drawn without
/// them and the first cell typed finds them loaded; a highlight asked for
/// before they are loaded waits for them.
pub fn preload() {
    let spawned = std::thread::Builder::new()
        .name("syntaxes".into())
        .spawn(|| {
            syntaxes();
        });
    if let Err(e) = spawned {
        tracing::debug!("syntaxes not preloaded ({e}): loaded when first needed");
    }
}

/// The name of the syntect theme code is highlighted with, process-wide (the
/// UI has one theme at a time).
static CODE_THEME: RwLock<String> = RwLock::new(String::new());

/// Highlights code with syntect's theme `name` from now on (the UI theme's
/// `syntax`, e.g. `base16-ocean.light`).
///
/// # Errors
///
/// Syntect has no such theme (the message lists the known ones); the theme in
/// use stays.
pub fn set_theme(name: &str) -> Result<(), String> {
    let themes = &themes().themes;
    if !has_theme(name) {
        let known: Vec<&str> = themes.keys().map(String::as_str).collect();
        return Err(format!(
            "unknown syntax theme {name:?} (known: {})",
            known.join(", ")
        ));
    }
    if let Ok(mut current) = CODE_THEME.write() {
        *current = name.to_string();
    }
    Ok(())
}

/// True when syntect has a theme called `name`.
pub fn has_theme(name: &str) -> bool {
    themes().themes.contains_key(name)
}

/// The name of the syntect theme in use.
pub fn theme_name() -> String {
    CODE_THEME
        .read()
        .ok()
        .map(|n| n.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| DEFAULT_THEME.to_string())
}

fn current_theme() -> Option<&'static Theme> {
    let themes = &themes().themes;
    themes
        .get(&theme_name())
        .or_else(|| themes.get(DEFAULT_THEME))
}

/// Highlights the notebook's code into styled lines, with a cache keyed by the
/// source.
#[derive(Default)]
pub struct Highlighter {
    /// The language code is highlighted as.
    language: Language,
    cache: HashMap<String, Vec<Line<'static>>>,
    /// The syntect theme the cached lines were highlighted with.
    theme: String,
}

impl std::fmt::Debug for Highlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Highlighter")
            .field("cached", &self.cache.len())
            .finish_non_exhaustive()
    }
}

impl Highlighter {
    /// The language code is highlighted as.
    pub fn language(&self) -> Language {
        self.language
    }

    /// Highlights code as `language` from now on.
    pub fn set_language(&mut self, language: Language) {
        if language != self.language {
            self.language = language;
            self.cache.clear();
        }
    }

    /// The highlighted lines of `source` (one per source line; an empty source is
    /// one empty line).
    pub fn lines(&mut self, source: &str) -> Vec<Line<'static>> {
        let theme = theme_name();
        if theme != self.theme {
            self.cache.clear();
            self.theme = theme;
        }
        if let Some(hit) = self.cache.get(source) {
            return hit.clone();
        }
        let lines = highlight(source, self.language);
        if self.cache.len() >= CACHE_LIMIT {
            self.cache.clear();
        }
        self.cache.insert(source.to_string(), lines.clone());
        lines
    }
}

fn syntax_of(syntaxes: &SyntaxSet, language: Language) -> &SyntaxReference {
    syntaxes
        .find_syntax_by_extension(language.extension())
        .unwrap_or_else(|| syntaxes.find_syntax_plain_text())
}

/// Highlights `source` as `language` without caching; falls back to plain text
/// when the theme is missing or syntect fails on a line.
pub fn highlight(source: &str, language: Language) -> Vec<Line<'static>> {
    if source.is_empty() {
        // The empty editor of the first frame needs no syntaxes (they may
        // still be loading, [`preload`]).
        return vec![Line::default()];
    }
    let syntaxes = syntaxes();
    let Some(theme) = current_theme() else {
        return plain(source);
    };
    let mut hl = HighlightLines::new(syntax_of(syntaxes, language), theme);
    let mut lines = Vec::new();
    for line in LinesWithEndings::from(source) {
        let spans = match hl.highlight_line(line, syntaxes) {
            Ok(ranges) => ranges
                .into_iter()
                .filter_map(|(style, text)| {
                    let text = printable(text);
                    (!text.is_empty()).then(|| Span::styled(text, convert(style)))
                })
                .collect(),
            Err(_) => vec![Span::raw(printable(line))],
        };
        lines.push(Line::from(spans));
    }
    if source.is_empty() || source.ends_with('\n') {
        lines.push(Line::default());
    }
    lines
}

/// Highlights already-printable `lines` (no control characters, no newlines) as
/// the language of the extension `ext`, or of the first line (a shebang), with
/// the same syntaxes and theme as the editor. `None` when no syntax fits or the
/// theme is missing (the caller shows plain text). Used by file previews.
pub fn highlight_as(lines: &[String], ext: Option<&str>) -> Option<Vec<Line<'static>>> {
    let theme = current_theme()?;
    let syntaxes = syntaxes();
    let syntax = ext
        .and_then(|e| syntaxes.find_syntax_by_extension(e))
        .or_else(|| syntaxes.find_syntax_by_first_line(lines.first()?))
        .filter(|s| s.name != "Plain Text")?;
    let mut hl = HighlightLines::new(syntax, theme);
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let with_end = format!("{line}\n");
        let spans = match hl.highlight_line(&with_end, syntaxes) {
            Ok(ranges) => ranges
                .into_iter()
                .filter_map(|(style, text)| {
                    let text = text.trim_end_matches('\n');
                    (!text.is_empty()).then(|| Span::styled(text.to_string(), convert(style)))
                })
                .collect(),
            Err(_) => vec![Span::raw(line.clone())],
        };
        out.push(Line::from(spans));
    }
    Some(out)
}

fn plain(source: &str) -> Vec<Line<'static>> {
    source
        .split('\n')
        .map(|l| Line::raw(printable(l)))
        .collect()
}

/// Code text safe to put on screen: tabs as spaces, other control characters
/// (including the line's own newline) dropped.
fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push_str(TAB),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    let mut out = Style::new().fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn keeps_text_and_line_structure() {
        let mut h = Highlighter::default();
        let lines = h.lines("def f(x):\n\treturn x\n");
        assert_eq!(text(&lines), vec!["def f(x):", "    return x", ""]);
        assert!(lines[0].spans.len() > 1, "keywords are styled apart");
        assert_eq!(text(&h.lines("")), vec![""]);
    }

    /// Shell and JavaScript cells are highlighted as their language: the
    /// keywords of each are styled apart, in the cache of one language only.
    #[test]
    fn each_language_has_its_syntax() {
        let keyword_style = |language, source: &str, word: &str| {
            let lines = highlight(source, language);
            lines[0]
                .spans
                .iter()
                .find(|s| s.content.trim() == word)
                .map(|s| s.style)
        };
        let plain = |language, source: &str| highlight(source, language)[0].spans.len();
        // `function` is a keyword of JavaScript, not of Python.
        let js = keyword_style(Language::JavaScript, "function f() {}", "function");
        let py = keyword_style(Language::Python, "function f() {}", "function");
        assert!(js.is_some() && js != py, "{js:?} {py:?}");
        // `fi` closes a block in shell.
        assert!(plain(Language::Shell, "if true; then echo a; fi") > 3);
        let mut h = Highlighter::default();
        let python = h.lines("for f in *.csv; do echo $f; done");
        h.set_language(Language::Shell);
        let shell = h.lines("for f in *.csv; do echo $f; done");
        assert_ne!(python, shell, "the cache does not hand back Python's lines");
    }

    #[test]
    fn control_characters_never_reach_the_screen() {
        let lines = highlight("print('\x1b]52;c;aGk=\x07')", Language::Python);
        assert!(!text(&lines)[0].contains('\x1b'));
        assert!(!text(&lines)[0].contains('\x07'));
    }
}
