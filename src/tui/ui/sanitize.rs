//! The one gate between session output and the screen. Text from a session is
//! untrusted: it may carry escape sequences that copy to the clipboard (OSC 52),
//! plant hyperlinks (OSC 8), move the cursor, clear the screen, change the window
//! title, ring the bell, or talk to the terminal (DCS). Only SGR colours and
//! attributes survive, and they become ratatui styles through ansi-to-tui; every
//! other escape sequence and control character is removed here, before any view
//! sees the text.

use ansi_to_tui::IntoText;
use ratatui::text::Line;

const ESC: char = '\x1b';
const TAB_STOP: usize = 8;

/// Session text as styled lines: SGR sequences become styles, everything else that
/// could drive the terminal is gone. A single trailing newline ends the last line
/// rather than adding an empty one.
pub fn to_lines(raw: &str) -> Vec<Line<'static>> {
    let cleaned = clean(raw, true);
    let cleaned = cleaned.strip_suffix('\n').unwrap_or(&cleaned);
    match cleaned.into_text() {
        Ok(text) => text.lines,
        Err(_) => plain_lines(raw),
    }
}

/// Session text with every escape sequence removed, SGR included, as lines.
pub fn plain_lines(raw: &str) -> Vec<Line<'static>> {
    let cleaned = clean(raw, false);
    let cleaned = cleaned.strip_suffix('\n').unwrap_or(&cleaned);
    cleaned
        .split('\n')
        .map(|l| Line::raw(l.to_string()))
        .collect()
}

/// Session text with every escape sequence removed, SGR included.
pub fn plain(raw: &str) -> String {
    clean(raw, false)
}

/// Removes escape sequences and control characters from `raw`, keeping SGR
/// sequences (re-emitted in a canonical `ESC [ params m` form) when `keep_sgr`.
/// Tabs become spaces to the next stop; a carriage return followed by more text
/// replaces the line so far, the way a progress bar redraws itself.
pub fn clean(raw: &str, keep_sgr: bool) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut col = 0usize;
    let mut pending_cr = false;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ESC => escape(&mut chars, &mut out, keep_sgr),
            // C1 forms of CSI, and of DCS, SOS, OSC, PM, APC.
            '\u{9b}' => {
                let _ = csi(&mut chars);
            }
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\n' => {
                out.push('\n');
                col = 0;
                pending_cr = false;
            }
            '\r' => pending_cr = true,
            '\t' => {
                carriage_return(&mut out, &mut col, &mut pending_cr);
                let n = TAB_STOP - col % TAB_STOP;
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            c if c.is_control() || is_bidi_control(c) => {}
            c => {
                carriage_return(&mut out, &mut col, &mut pending_cr);
                out.push(c);
                col += 1;
            }
        }
    }
    out
}

/// Applies a pending carriage return: drops the current line's text.
fn carriage_return(out: &mut String, col: &mut usize, pending: &mut bool) {
    if std::mem::take(pending) {
        let start = out.rfind('\n').map_or(0, |i| i + 1);
        out.truncate(start);
        *col = 0;
    }
}

/// Handles what follows an ESC.
fn escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut String, keep_sgr: bool) {
    match chars.next() {
        Some('[') => {
            if let Some(params) = csi(chars).filter(|_| keep_sgr) {
                out.push(ESC);
                out.push('[');
                out.push_str(&params);
                out.push('m');
            }
        }
        // OSC, DCS, SOS, PM, APC: a string up to its terminator, all dropped.
        Some(']' | 'P' | 'X' | '^' | '_') => skip_string(chars),
        // nF sequences (ESC ( B and friends): intermediates, then one final byte.
        Some(c) if is_intermediate(c) => {
            for n in chars.by_ref() {
                if !is_intermediate(n) {
                    break;
                }
            }
        }
        // Two-character sequences (ESC 7, ESC c, ESC =) or a lone ESC: dropped.
        Some(_) | None => {}
    }
}

/// Consumes a CSI sequence after its introducer. Returns its parameters when it is
/// a well-formed SGR sequence (`m` final, digits and separators only).
fn csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
    let mut params = String::new();
    let mut sgr_ok = true;
    while let Some(&c) = chars.peek() {
        match c {
            '\x30'..='\x3f' => {
                sgr_ok &= c.is_ascii_digit() || c == ';' || c == ':';
                params.push(c);
            }
            '\x20'..='\x2f' => sgr_ok = false,
            '\x40'..='\x7e' => {
                chars.next();
                return (sgr_ok && c == 'm').then_some(params);
            }
            // Malformed: end the sequence here and let the caller see this char.
            _ => return None,
        }
        chars.next();
    }
    None
}

/// Skips a control string up to BEL or ST (`ESC \` or U+009C). Any other ESC ends
/// the string too, together with the character after it.
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\x07' | '\u{9c}' => return,
            ESC => {
                chars.next();
                return;
            }
            _ => {}
        }
    }
}

fn is_intermediate(c: char) -> bool {
    ('\x20'..='\x2f').contains(&c)
}

/// Bidirectional overrides and isolates, which can make text read differently from
/// what it is.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use ratatui::style::Color;

    use super::*;

    fn text_of(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn osc52_clipboard_write_is_removed() {
        assert_eq!(plain("a\x1b]52;c;aGk=\x07b"), "ab");
        assert_eq!(plain("a\x1b]52;c;aGk=\x1b\\b"), "ab");
    }

    #[test]
    fn osc8_hyperlink_keeps_only_its_text() {
        let raw = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ here";
        assert_eq!(plain(raw), "click here");
    }

    #[test]
    fn cursor_moves_and_clears_are_removed() {
        assert_eq!(
            plain("a\x1b[2Jb\x1b[Hc\x1b[10;5Hd\x1b[?25le\x1b[1Af"),
            "abcdef"
        );
    }

    #[test]
    fn dcs_title_bell_and_lone_esc_are_removed() {
        assert_eq!(plain("a\x1bP1$tx\x1b\\b"), "ab");
        assert_eq!(plain("a\x1b]0;pwned\x07b"), "ab");
        assert_eq!(plain("a\x07b\x1b"), "ab");
        assert_eq!(plain("a\x1b7b\x1bcc\x1b(Bd"), "abcd");
    }

    #[test]
    fn c1_controls_and_bidi_overrides_are_removed() {
        assert_eq!(plain("a\u{9b}2Jb\u{9d}0;t\u{9c}c\u{202e}d"), "abcd");
    }

    #[test]
    fn unterminated_strings_swallow_the_rest() {
        assert_eq!(plain("ok\x1b]52;c;aGk="), "ok");
    }

    #[test]
    fn sgr_colours_become_styles() {
        let lines = to_lines("\x1b[31mred\x1b[0m plain\n");
        assert_eq!(text_of(&lines), vec!["red plain"]);
        let red = &lines[0].spans[0];
        assert_eq!(red.content, "red");
        assert_eq!(red.style.fg, Some(Color::Red));
        assert!(lines[0].spans.iter().all(|s| !s.content.contains('\x1b')));
    }

    #[test]
    fn sgr_with_intermediates_or_private_params_is_dropped() {
        assert_eq!(clean("\x1b[?1mx", true), "x");
        assert_eq!(clean("\x1b[1;31mx", true), "\x1b[1;31mx");
    }

    #[test]
    fn tabs_expand_and_carriage_returns_redraw() {
        assert_eq!(plain("a\tb"), "a       b");
        assert_eq!(plain(" 10%\r 50%\r100%\ndone"), "100%\ndone");
        assert_eq!(plain("keep\r\nnext"), "keep\nnext");
        assert_eq!(plain("end\r"), "end");
    }

    #[test]
    fn trailing_newline_does_not_add_a_line() {
        assert_eq!(text_of(&to_lines("42\n")), vec!["42"]);
        assert_eq!(text_of(&to_lines("a\n\nb")), vec!["a", "", "b"]);
    }
}
