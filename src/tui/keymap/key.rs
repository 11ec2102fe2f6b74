//! One key press as the keymap compares it ([`KeyPress`]): parsed from the
//! notation of the keymap files (`q`, `?`, `<C-q>`, `<A-Enter>`, `<F5>`,
//! `<PageUp>`, `<S-Tab>`), made from crossterm's `KeyEvent`s, and shown to people
//! as `Ctrl+Q`, `Alt+Enter`, `PgUp`.
//!
//! Both sides are normalised the same way, so that a binding matches whatever
//! the terminal sends for it: the case of a character carries Shift (`<S-x>` is
//! `X`), Shift+Tab is `BackTab`, Ctrl+7 (the byte 0x1F) is Ctrl+_, and only
//! Ctrl, Alt and Shift count.

use std::fmt;
use std::str::FromStr;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The modifiers a binding can name.
const MODIFIERS: KeyModifiers = KeyModifiers::CONTROL
    .union(KeyModifiers::ALT)
    .union(KeyModifiers::SHIFT);

/// A key with its modifiers, normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyPress {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, Alt and Shift only; never Shift with a character.
    pub modifiers: KeyModifiers,
}

impl KeyPress {
    /// The normalised form of `code` with `modifiers`.
    pub fn new(code: KeyCode, modifiers: KeyModifiers) -> Self {
        let mut modifiers = modifiers & MODIFIERS;
        let code = match code {
            KeyCode::Char(c) if modifiers.contains(KeyModifiers::SHIFT) => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::Char(c.to_uppercase().next().unwrap_or(c))
            }
            KeyCode::Tab if modifiers.contains(KeyModifiers::SHIFT) => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::BackTab => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            // Terminals send Ctrl+_ (and Ctrl+/) as the byte 0x1F, which
            // crossterm reads as Ctrl+7: the key people pressed is Ctrl+_.
            KeyCode::Char('7') if modifiers == KeyModifiers::CONTROL => KeyCode::Char('_'),
            other => other,
        };
        Self { code, modifiers }
    }

    /// The same key with a lower-case character, for terminals that report
    /// Ctrl+Q as `Q` when Caps Lock or Shift is down.
    pub fn lowercase(self) -> Option<Self> {
        match self.code {
            KeyCode::Char(c) if c.is_uppercase() && !self.modifiers.is_empty() => Some(Self {
                code: KeyCode::Char(c.to_lowercase().next().unwrap_or(c)),
                modifiers: self.modifiers,
            }),
            _ => None,
        }
    }
}

impl From<KeyEvent> for KeyPress {
    fn from(key: KeyEvent) -> Self {
        Self::new(key.code, key.modifiers)
    }
}

/// Named keys as written between angle brackets (lower case), with their codes.
const NAMES: &[(&str, KeyCode)] = &[
    ("enter", KeyCode::Enter),
    ("cr", KeyCode::Enter),
    ("return", KeyCode::Enter),
    ("esc", KeyCode::Esc),
    ("escape", KeyCode::Esc),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("backspace", KeyCode::Backspace),
    ("bs", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("del", KeyCode::Delete),
    ("insert", KeyCode::Insert),
    ("ins", KeyCode::Insert),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("pageup", KeyCode::PageUp),
    ("pgup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("pgdn", KeyCode::PageDown),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("space", KeyCode::Char(' ')),
    ("lt", KeyCode::Char('<')),
    ("gt", KeyCode::Char('>')),
];

impl FromStr for KeyPress {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut chars = s.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            return Ok(Self::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        let Some(inner) = s.strip_prefix('<').and_then(|r| r.strip_suffix('>')) else {
            return Err(format!(
                "key {s:?}: write one character (`q`) or a key in angle brackets (`<Esc>`, `<C-q>`)"
            ));
        };
        let (modifiers, name) = split_modifiers(inner);
        let code = key_code(name).ok_or_else(|| {
            format!(
                "key {s:?}: unknown key name {name:?} (a character, F1-F24, or one of {})",
                NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            )
        })?;
        Ok(Self::new(code, modifiers))
    }
}

/// Splits `C-A-x` into its modifiers and the key name (`x`); `C--` is Ctrl+minus.
fn split_modifiers(mut inner: &str) -> (KeyModifiers, &str) {
    let mut modifiers = KeyModifiers::NONE;
    loop {
        let mut chars = inner.chars();
        let (Some(m), Some('-'), true) = (chars.next(), chars.next(), inner.len() > 2) else {
            return (modifiers, inner);
        };
        let modifier = match m.to_ascii_uppercase() {
            'C' => KeyModifiers::CONTROL,
            'A' | 'M' => KeyModifiers::ALT,
            'S' => KeyModifiers::SHIFT,
            _ => return (modifiers, inner),
        };
        modifiers |= modifier;
        inner = &inner[2..];
    }
}

fn key_code(name: &str) -> Option<KeyCode> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(KeyCode::Char(c));
    }
    let lower = name.to_ascii_lowercase();
    if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
        return (1..=24).contains(&n).then_some(KeyCode::F(n));
    }
    NAMES
        .iter()
        .find(|(n, _)| *n == lower)
        .map(|(_, code)| *code)
}

impl fmt::Display for KeyPress {
    /// The way people read a key: `Ctrl+Q`, `Alt+Enter`, `F5`, `PgUp`, `q`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            f.write_str("Ctrl+")?;
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            f.write_str("Alt+")?;
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            f.write_str("Shift+")?;
        }
        let chorded = !self.modifiers.is_empty();
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) if chorded && c.is_lowercase() => {
                write!(f, "{}", c.to_uppercase())
            }
            // An upper-case letter carries Shift: `<C-Z>` is Ctrl+Shift+Z,
            // not to be read as Ctrl+Z.
            KeyCode::Char(c) if chorded && c.is_uppercase() => write!(f, "Shift+{c}"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::BackTab => f.write_str("Shift+Tab"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Delete => f.write_str("Del"),
            KeyCode::Insert => f.write_str("Ins"),
            // Spelled out here: crossterm names some of these differently on macOS.
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Backspace => f.write_str("Backspace"),
            other => write!(f, "{other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> KeyPress {
        match s.parse() {
            Ok(k) => k,
            Err(e) => panic!("{e}"),
        }
    }

    fn kp(code: KeyCode, modifiers: KeyModifiers) -> KeyPress {
        KeyPress::new(code, modifiers)
    }

    #[test]
    fn notation_parses() {
        let c = KeyModifiers::CONTROL;
        let a = KeyModifiers::ALT;
        let none = KeyModifiers::NONE;
        assert_eq!(parse("q"), kp(KeyCode::Char('q'), none));
        assert_eq!(parse("?"), kp(KeyCode::Char('?'), none));
        assert_eq!(parse("<"), kp(KeyCode::Char('<'), none));
        assert_eq!(parse("<C-q>"), kp(KeyCode::Char('q'), c));
        assert_eq!(parse("<c-q>"), kp(KeyCode::Char('q'), c));
        assert_eq!(parse("<A-Enter>"), kp(KeyCode::Enter, a));
        assert_eq!(parse("<M-cr>"), kp(KeyCode::Enter, a));
        assert_eq!(parse("<C-A-x>"), kp(KeyCode::Char('x'), c | a));
        assert_eq!(parse("<F5>"), kp(KeyCode::F(5), none));
        assert_eq!(parse("<f12>"), kp(KeyCode::F(12), none));
        assert_eq!(parse("<Esc>"), kp(KeyCode::Esc, none));
        assert_eq!(parse("<PageUp>"), kp(KeyCode::PageUp, none));
        assert_eq!(parse("<Space>"), kp(KeyCode::Char(' '), none));
        assert_eq!(parse("<C-->"), kp(KeyCode::Char('-'), c));
        assert_eq!(parse("<S-Up>"), kp(KeyCode::Up, KeyModifiers::SHIFT));
    }

    #[test]
    fn shift_lives_in_the_character() {
        assert_eq!(parse("<S-x>"), parse("X"));
        assert_eq!(parse("<S-Tab>"), parse("<BackTab>"));
        let from_terminal = KeyPress::from(KeyEvent::new(KeyCode::Char('X'), KeyModifiers::SHIFT));
        assert_eq!(from_terminal, parse("X"));
        let backtab = KeyPress::from(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
        assert_eq!(backtab, parse("<S-Tab>"));
    }

    #[test]
    fn bad_keys_are_explained() {
        for bad in ["", "qq", "<C-nope>", "<F99>", "Esc", "<>"] {
            let e = bad.parse::<KeyPress>().unwrap_err();
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn keys_display_for_people() {
        let shown: Vec<String> = ["<C-q>", "<A-Enter>", "<F5>", "<PageDown>", "q", "<Space>"]
            .iter()
            .map(|s| parse(s).to_string())
            .collect();
        assert_eq!(shown, ["Ctrl+Q", "Alt+Enter", "F5", "PgDn", "q", "Space"]);
    }
}
