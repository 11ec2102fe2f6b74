//! Styling of sanitized text one line at a time. The sanitizer leaves only SGR
//! sequences in the canonical `ESC [ params m` form; this module turns a line of
//! that text into spans, starting from the style in force at the line's start.
//!
//! Long outputs are styled only for the lines on screen (see `text_index.rs`), so
//! the style carried over from earlier lines must be known without parsing them
//! into spans: [`apply`] moves a style across a piece of text cheaply. The codes
//! follow ansi-to-tui's reading (which styles short outputs), so a long output
//! looks the same as a short one.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

const ESC: char = '\x1b';

/// The style after every SGR sequence in `text`, starting from `style`.
pub fn apply(mut style: Style, text: &str) -> Style {
    let mut rest = text;
    while let Some(at) = rest.find(ESC) {
        let Some((params, after)) = sequence(&rest[at..]) else {
            break;
        };
        style = apply_params(style, params);
        rest = after;
    }
    style
}

/// `text` (one line, no newline) as spans, starting from `style`.
pub fn line(mut style: Style, text: &str) -> Line<'static> {
    if !text.contains(ESC) {
        return Line::from(Span::styled(text.to_string(), style));
    }
    let mut spans = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let at = rest.find(ESC).unwrap_or(rest.len());
        if at > 0 {
            spans.push(Span::styled(rest[..at].to_string(), style));
        }
        rest = &rest[at..];
        if rest.is_empty() {
            break;
        }
        match sequence(rest) {
            Some((params, after)) => {
                style = apply_params(style, params);
                rest = after;
            }
            // Not a sequence the sanitizer writes: drop the ESC, keep the text.
            None => rest = &rest[ESC.len_utf8()..],
        }
    }
    Line::from(spans)
}

/// `text` without its SGR sequences.
pub fn strip(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(ESC) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(ESC) {
        out.push_str(&rest[..at]);
        rest = sequence(&rest[at..]).map_or(&rest[at + 1..], |(_, after)| after);
    }
    out.push_str(rest);
    out.into()
}

/// Splits `ESC [ params m` off the front of `text`: the params and what follows.
fn sequence(text: &str) -> Option<(&str, &str)> {
    let body = text.strip_prefix("\x1b[")?;
    let end = body.find('m')?;
    let params = &body[..end];
    params
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b';' || b == b':')
        .then(|| (params, &body[end + 1..]))
}

/// Applies one SGR parameter list. A list with a part that does not parse is
/// ignored whole, as ansi-to-tui ignores it.
fn apply_params(style: Style, params: &str) -> Style {
    if params.is_empty() {
        return Style::reset();
    }
    let mut codes = Vec::new();
    for part in params.split([';', ':']) {
        match part.parse::<u8>() {
            Ok(n) => codes.push(n),
            Err(_) => return style,
        }
    }
    let mut style = style;
    let mut it = codes.into_iter();
    while let Some(code) = it.next() {
        style = match code {
            38 => extended(&mut it).map_or(style, |c| style.fg(c)),
            48 => extended(&mut it).map_or(style, |c| style.bg(c)),
            code => apply_code(style, code),
        };
    }
    style
}

/// The colour of `38;5;n` or `38;2;r;g;b` after the `38` (or `48`).
fn extended(it: &mut impl Iterator<Item = u8>) -> Option<Color> {
    match it.next()? {
        5 => it.next().map(Color::Indexed),
        2 => Some(Color::Rgb(it.next()?, it.next()?, it.next()?)),
        _ => None,
    }
}

fn apply_code(style: Style, code: u8) -> Style {
    const NAMED: [Color; 8] = [
        Color::Black,
        Color::Red,
        Color::Green,
        Color::Yellow,
        Color::Blue,
        Color::Magenta,
        Color::Cyan,
        Color::Gray,
    ];
    const BRIGHT: [Color; 8] = [
        Color::DarkGray,
        Color::LightRed,
        Color::LightGreen,
        Color::LightYellow,
        Color::LightBlue,
        Color::LightMagenta,
        Color::LightCyan,
        Color::White,
    ];
    let on = |m| style.add_modifier(m);
    let off = |m| style.remove_modifier(m);
    match code {
        0 => Style::reset(),
        1 => on(Modifier::BOLD),
        2 => on(Modifier::DIM),
        3 => on(Modifier::ITALIC),
        4 => on(Modifier::UNDERLINED),
        5 => on(Modifier::SLOW_BLINK),
        6 => on(Modifier::RAPID_BLINK),
        7 => on(Modifier::REVERSED),
        8 => on(Modifier::HIDDEN),
        9 => on(Modifier::CROSSED_OUT),
        22 => off(Modifier::BOLD | Modifier::DIM),
        23 => off(Modifier::ITALIC),
        24 => off(Modifier::UNDERLINED),
        25 => off(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK),
        27 => off(Modifier::REVERSED),
        28 => off(Modifier::HIDDEN),
        29 => off(Modifier::CROSSED_OUT),
        30..=37 => style.fg(NAMED[usize::from(code - 30)]),
        39 => style.fg(Color::Reset),
        40..=47 => style.bg(NAMED[usize::from(code - 40)]),
        49 => style.bg(Color::Reset),
        90..=97 => style.fg(BRIGHT[usize::from(code - 90)]),
        100..=107 => style.bg(BRIGHT[usize::from(code - 100)]),
        _ => style,
    }
}

#[cfg(test)]
mod tests {
    use ansi_to_tui::IntoText;
    use pretty_assertions::assert_eq;

    use super::*;

    /// The same text styled by ansi-to-tui and by this module, cell by cell.
    fn same_as_ansi_to_tui(text: &str) {
        let theirs = text.into_text().map(|t| t.lines).unwrap_or_default();
        let mut style = Style::new();
        for (n, raw) in text.split('\n').enumerate() {
            let ours = line(style, raw);
            style = apply(style, raw);
            let flat = |l: &Line<'_>| -> Vec<(String, Style)> {
                l.spans
                    .iter()
                    .flat_map(|s| s.content.chars().map(move |c| (c.to_string(), s.style)))
                    .map(|(c, s)| (c, Style::new().patch(s)))
                    .collect()
            };
            assert_eq!(flat(&ours), flat(&theirs[n]), "line {n} of {text:?}");
        }
    }

    #[test]
    fn reads_sgr_like_ansi_to_tui() {
        same_as_ansi_to_tui("\x1b[31mred\x1b[0m plain");
        same_as_ansi_to_tui("\x1b[1;4;38;5;200mbold\x1b[22m under\x1b[m x");
        same_as_ansi_to_tui("\x1b[48;2;1;2;3;97mrgb\x1b[39;49m back");
        same_as_ansi_to_tui("\x1b[32mgreen\ncarried\x1b[0m\nplain");
    }

    #[test]
    fn apply_carries_across_text() {
        let s = apply(Style::new(), "a\x1b[31mb\x1b[1mc");
        assert_eq!(s.fg, Some(Color::Red));
        assert!(s.add_modifier.contains(Modifier::BOLD));
        assert_eq!(apply(s, "\x1b[0m"), Style::reset());
    }

    #[test]
    fn strip_removes_sequences_only() {
        assert_eq!(strip("a\x1b[31mb\x1b[0mc"), "abc");
        assert_eq!(strip("plain"), "plain");
    }
}
