//! The one gate between session output and the screen. Text from a session is
//! untrusted: it may carry escape sequences that copy to the clipboard (OSC 52),
//! plant hyperlinks (OSC 8), move the cursor, clear the screen, change the window
//! title, ring the bell, or talk to the terminal (DCS). Only SGR colours and
//! attributes survive (the notebook turns them into styles, `tui::ui::sanitize`;
//! the command line writes them to a terminal as they are); every other escape
//! sequence and control character is removed here, before anything shows the
//! text. Knows no terminal library.
//!
//! The `vte` crate (alacritty's parser: the DEC/VT500 state machine) does the
//! parsing; `Gate` decides what each piece becomes. Printable text is kept, SGR is
//! re-emitted in a canonical form, and everything else (CSI, OSC, DCS, SOS/PM/APC,
//! plain ESC sequences, C0 and C1 controls) is dropped. Two things are fed to vte
//! differently from the raw text (see [`clean`]): 8-bit C1 introducers, and newlines.

use vte::{Params, Parser, Perform};

const ESC: u8 = 0x1b;
const TAB_STOP: usize = 8;
/// A final byte for any CSI or ESC sequence, fed before a newline (see [`clean`]).
const PROBE: &[u8] = b"~";

/// Session text with every escape sequence removed, SGR included.
pub fn plain(raw: &str) -> String {
    clean(raw, false)
}

/// Removes escape sequences and control characters from `raw`, keeping SGR
/// sequences (re-emitted in a canonical `ESC [ params m` form) when `keep_sgr`.
/// Tabs become spaces to the next stop; a carriage return followed by more text
/// replaces the line so far, the way a progress bar redraws itself.
///
/// vte reads 7-bit codes only: a C1 control arriving as a UTF-8 character is run
/// as a lone control, which would leave the parameters of a `U+009B` CSI as text.
/// So the C1 forms of CSI, DCS, SOS, OSC, PM, APC and ST are fed as their 7-bit
/// equivalents (`ESC [`, `ESC P`, …). And a newline ends any CSI or ESC sequence
/// it interrupts, where vte, like a terminal, would run the newline and carry on
/// with the sequence: `PROBE` is fed before a newline, unless no ESC came since
/// the parser was last seen reading text. It ends a sequence still open (and is
/// dropped with it), is not printed in text, and in a control string (OSC, DCS, …)
/// is swallowed with the rest of the string. So whatever follows a newline that
/// survives cleaning is cleaned the same with or without what came before it,
/// which lets `text_index` clean a long output piece by piece.
pub fn clean(raw: &str, keep_sgr: bool) -> String {
    let mut gate = Gate {
        out: String::with_capacity(raw.len()),
        col: 0,
        pending_cr: false,
        held: String::new(),
        keep_sgr,
        probe: None,
    };
    let mut parser = Parser::new();
    let bytes = raw.as_bytes();
    let mut from = 0;
    // The parser reads text: no ESC was fed since that was last known.
    let mut in_text = true;
    for at in memchr::memchr3_iter(b'\n', ESC, 0xc2, bytes) {
        match bytes[at] {
            ESC => in_text = false,
            b'\n' if !in_text => {
                parser.advance(&mut gate, &bytes[from..at]);
                in_text = gate.probe(&mut parser);
                from = at;
            }
            // A C1 control is U+0080..U+009F: 0xC2 then one byte. In UTF-8, 0xC2
            // only ever leads a two-byte character, so `at + 1` is in the text.
            0xc2 => {
                if let c1 @ (0x90 | 0x98 | 0x9b..=0x9f) = bytes[at + 1] {
                    parser.advance(&mut gate, &bytes[from..at]);
                    parser.advance(&mut gate, &[ESC, c1 - 0x40]);
                    from = at + 2;
                    in_text = false;
                }
            }
            _ => {}
        }
    }
    parser.advance(&mut gate, &bytes[from..]);
    let Gate { mut out, held, .. } = gate;
    out.push_str(&held);
    out
}

/// What the parser's actions become: the cleaned text.
struct Gate {
    out: String,
    /// Columns since the line's start, for tab stops.
    col: usize,
    /// A carriage return not yet applied: the next text replaces the line.
    pending_cr: bool,
    /// SGR that came after that carriage return: it styles the text that
    /// replaces the line, so it must not go with the line it replaces.
    held: String,
    keep_sgr: bool,
    /// While `PROBE` is fed: whether it fell on text (and was not printed).
    probe: Option<bool>,
}

impl Gate {
    /// Feeds `PROBE`; true when the parser was (and so is) reading text.
    fn probe(&mut self, parser: &mut Parser) -> bool {
        self.probe = Some(false);
        parser.advance(self, PROBE);
        self.probe.take() == Some(true)
    }

    /// Applies a pending carriage return: drops the current line's text, keeping
    /// the SGR that came after the carriage return.
    fn carriage_return(&mut self) {
        if std::mem::take(&mut self.pending_cr) {
            let start = self.out.rfind('\n').map_or(0, |i| i + 1);
            self.out.truncate(start);
            self.col = 0;
            // Held SGR exists only while a carriage return is pending.
            self.out.push_str(&self.held);
            self.held.clear();
        }
    }
}

impl Perform for Gate {
    // Called for every character: inlined into vte's loop, 10 MB of plain text is
    // cleaned in about 37 ms rather than 49.
    #[allow(clippy::inline_always)] // measured: see above
    #[inline(always)]
    fn print(&mut self, c: char) {
        if let Some(on_text) = &mut self.probe {
            *on_text = true;
            return;
        }
        if c.is_control() || is_bidi_control(c) {
            return;
        }
        self.carriage_return();
        self.out.push(c);
        self.col += 1;
    }

    /// C0 and C1 controls: newline, carriage return and tab have their meaning;
    /// the rest (BEL, BS, …) are dropped.
    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' => {
                // A carriage return then a newline keeps the line; SGR held
                // for its replacement still counts.
                self.out.push_str(&self.held);
                self.held.clear();
                self.out.push('\n');
                self.col = 0;
                self.pending_cr = false;
            }
            b'\r' => self.pending_cr = true,
            b'\t' => {
                self.carriage_return();
                let n = TAB_STOP - self.col % TAB_STOP;
                self.out.extend(std::iter::repeat_n(' ', n));
                self.col += n;
            }
            _ => {}
        }
    }

    /// SGR (`m`, no private marker or intermediates, no parameters cut off by
    /// vte's cap) is kept when asked for; every other CSI is dropped.
    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        if !self.keep_sgr || action != 'm' || !intermediates.is_empty() || ignore {
            return;
        }
        let out = if self.pending_cr {
            &mut self.held
        } else {
            &mut self.out
        };
        out.push_str("\x1b[");
        for (i, param) in params.iter().enumerate() {
            if i > 0 {
                out.push(';');
            }
            for (j, sub) in param.iter().enumerate() {
                if j > 0 {
                    out.push(':');
                }
                out.push_str(itoa::Buffer::new().format(*sub));
            }
        }
        out.push('m');
    }

    // OSC, DCS (hook/put/unhook) and plain ESC sequences: the defaults, which drop
    // them. SOS, PM and APC strings never reach the performer.
}

/// Bidirectional overrides and isolates, which can make text read differently from
/// what it is.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

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
    fn unterminated_sequences_at_the_end_are_dropped() {
        for tail in [
            "\x1b",
            "\x1b[31",
            "\x1b[",
            "\x1bP1$t",
            "\x1b_apc",
            "\x1b(",
            "\u{9b}1;2",
        ] {
            assert_eq!(clean(&format!("ok{tail}"), true), "ok", "{tail:?}");
        }
    }

    #[test]
    fn strings_end_at_st_in_either_form() {
        for (open, close) in [
            ("\x1b]", "\x1b\\"),
            ("\x1b]", "\u{9c}"),
            ("\u{9d}", "\x1b\\"),
            ("\x1bP", "\x1b\\"),
            ("\u{90}", "\u{9c}"),
            ("\x1bX", "\x1b\\"),
            ("\u{98}", "\u{9c}"),
            ("\x1b^", "\x1b\\"),
            ("\u{9e}", "\u{9c}"),
            ("\x1b_", "\x1b\\"),
            ("\u{9f}", "\u{9c}"),
        ] {
            let raw = format!("a{open}1;payload\té\u{85}\n{close}b");
            assert_eq!(plain(&raw), "ab", "{raw:?}");
        }
    }

    #[test]
    fn c1_controls_in_utf8_never_survive() {
        let every_c1: String = ('\u{80}'..='\u{9f}').collect();
        assert_eq!(plain(&format!("a{every_c1}\u{9c}b")), "ab");
        // A C1 CSI is a CSI: its parameters do not leak, and an SGR stays a colour.
        assert_eq!(plain("a\u{9b}10;5Hb\u{9b}?25lc"), "abc");
        assert_eq!(clean("\u{9b}31mred", true), "\x1b[31mred");
        assert_eq!(clean("x\u{7f}\u{85}y\u{200f}", true), "xy");
    }

    #[test]
    fn a_control_string_runs_over_newlines() {
        assert_eq!(plain("x\x1b]52;c;aGk=\ny\x07z\nw"), "xz\nw");
        assert_eq!(plain("x\x1bPq#0;2\n#1~-\x1b\\y"), "xy");
    }

    #[test]
    fn a_newline_ends_a_csi_or_esc_sequence() {
        assert_eq!(clean("a\x1b[31\nmb", true), "a\nmb");
        assert_eq!(clean("a\x1b\nb", true), "a\nb");
        assert_eq!(clean("a\x1b(\nb", true), "a\nb");
        assert_eq!(plain("a\n\x1b]0;t\nx\ny\x07z\x1b[31\nw\nv"), "a\nz\nw\nv");
        // So cleaning after a newline that survived gives the same as cleaning all.
        let raw = "red \x1b[1;31\nm\x1b[32mgreen\r\n\x1b]0;t\x07\tx\n";
        for (at, _) in raw.match_indices('\n') {
            let (a, b) = raw.split_at(at + 1);
            assert_eq!(clean(a, true) + &clean(b, true), clean(raw, true));
        }
    }

    #[test]
    fn an_escape_inside_a_string_ends_it_and_starts_a_sequence() {
        assert_eq!(clean("\x1b]0;t\x1b[31mred", true), "\x1b[31mred");
        assert_eq!(plain("\x1b]0;t\x1b7text"), "text");
    }

    #[test]
    fn sgr_is_rewritten_in_canonical_form() {
        assert_eq!(clean("\x1b[mx", true), "\x1b[0mx");
        assert_eq!(clean("\x1b[01;031mx", true), "\x1b[1;31mx");
        assert_eq!(clean("\x1b[38:2:1:2:3mx", true), "\x1b[38:2:1:2:3mx");
        assert_eq!(clean("\x1b[1;31mx\x1b[0m", false), "x");
    }

    #[test]
    fn huge_sequences_do_not_panic() {
        // vte keeps 32 parameters; an SGR with more is dropped, not cut short.
        let long = format!("\x1b[{}31mx", "1;".repeat(10_000));
        assert_eq!(clean(&long, true), "x");
        let ok = format!("\x1b[{}31mx", "1;".repeat(30));
        assert_eq!(clean(&ok, true), ok);
        // Values saturate; sgr.rs and ansi-to-tui ignore what does not fit a byte.
        assert_eq!(clean("\x1b[99999999999999999999mx", true), "\x1b[65535mx");
        assert_eq!(clean("\x1b[1!!!!!!mx", true), "x");
        let osc = format!("a\x1b]52;c;{}\x07b", "QUFB".repeat(1 << 18));
        assert_eq!(plain(&osc), "ab");
        let colons = format!("\x1b[{}mx\x1b[{}", ":".repeat(100_000), ";".repeat(100_000));
        assert_eq!(clean(&colons, true), "x");
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

    /// A progress bar that colours its redraw (`\r` then SGR then text) keeps
    /// the colour; SGR after a `\r` that no text follows stays too.
    #[test]
    fn sgr_after_a_carriage_return_styles_the_redrawn_line() {
        assert_eq!(clean("abc\r\x1b[31mxyz", true), "\x1b[31mxyz");
        assert_eq!(
            clean("10%\r\x1b[32m100%\x1b[0m\n", true),
            "\x1b[32m100%\x1b[0m\n"
        );
        assert_eq!(clean("abc\r\x1b[1m\nnext", true), "abc\x1b[1m\nnext");
        assert_eq!(clean("end\r\x1b[0m", true), "end\x1b[0m");
    }
}
