//! Keys typed while the terminal was being asked about its graphics.
//!
//! The graphics probe (`graphics.rs`) reads the terminal's input to find the
//! answers to its question; whatever a person typed meanwhile (a cell typed
//! right after launching, or a key pressed as the first frame appears: the
//! probe runs after it) arrives in the same bytes.
//! Those bytes are split here with vte (alacritty's parser, which the
//! sanitizer uses too): the probe's answers (device attributes, cell size,
//! status and cursor reports, kitty's APC reply) are dropped, and the rest
//! become the key events crossterm would have made of them, to be handled
//! before the first key crossterm reads. Nothing typed is lost.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use vte::{Params, Parser, Perform};

/// The key events in `bytes` (terminal input in a raw-mode terminal), in order,
/// without the answers to the graphics probe. Sequences this does not know are
/// dropped rather than typed as text.
pub fn key_events(bytes: &[u8]) -> Vec<Event> {
    Typeahead::default().feed(bytes)
}

/// Typed keys read in chunks, as they arrive: a sequence cut between two
/// chunks (an answer, or a key's escape sequence) is finished by the next.
#[derive(Default)]
pub struct Typeahead {
    keys: Keys,
    parser: Parser,
    /// The last chunk ended with an Esc that may start an Alt+key.
    esc_pending: bool,
}

impl Typeahead {
    /// The key events that `bytes` (one read of the terminal), read after
    /// every chunk fed so far, complete, in order. A read of Esc alone is
    /// the Esc key.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        // Esc pressed alone is one read of one byte; as a sequence's start it
        // would wait for the next key (crossterm reads it the same way).
        if bytes == b"\x1b" && !self.esc_pending {
            self.parser = Parser::new();
            self.keys.1 = Ss3::default();
            return vec![Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE))];
        }
        let mut rest = bytes;
        // Esc before a control key (Enter, Backspace, Tab, Ctrl+letter) is
        // that key with Alt, as crossterm reads it: Alt+Enter runs the cell.
        // vte would run the control key and forget the Esc.
        if self.esc_pending
            && let Some((&first, tail)) = rest.split_first()
            && alt_control(first)
        {
            self.alt_key(first);
            rest = tail;
        }
        while let Some(at) = rest
            .windows(2)
            .position(|pair| pair[0] == 0x1b && alt_control(pair[1]))
        {
            self.parser.advance(&mut self.keys, &rest[..at]);
            self.alt_key(rest[at + 1]);
            rest = &rest[at + 2..];
        }
        self.parser.advance(&mut self.keys, rest);
        self.esc_pending = rest.last() == Some(&0x1b);
        std::mem::take(&mut self.keys.0)
            .into_iter()
            .map(Event::Key)
            .collect()
    }

    /// The control key `byte` pressed with Alt; whatever sequence was open
    /// (the Esc) is done.
    fn alt_key(&mut self, byte: u8) {
        self.parser = Parser::new();
        self.keys.1 = Ss3::default();
        let start = self.keys.0.len();
        if byte == 0x7f {
            self.keys.print('\x7f');
        } else {
            self.keys.execute(byte);
        }
        for key in &mut self.keys.0[start..] {
            key.modifiers |= KeyModifiers::ALT;
        }
    }
}

/// Whether `byte` after Esc makes an Alt+key of a control key: C0 controls
/// but Esc itself, and Delete (Backspace).
fn alt_control(byte: u8) -> bool {
    (byte < 0x20 && byte != 0x1b) || byte == 0x7f
}

#[derive(Default)]
struct Keys(Vec<KeyEvent>, Ss3);

/// Whether the last thing read was `ESC O`, which makes the next character an
/// SS3 key (F1 to F4, and the arrows, Home and End in application mode).
#[derive(Default)]
struct Ss3(bool);

impl Keys {
    fn push(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        self.0.push(KeyEvent::new(code, modifiers));
    }

    /// The SS3 key that `c` ends, if `ESC O` came just before it (the flag is
    /// cleared either way).
    fn ss3(&mut self, c: char) -> Option<KeyCode> {
        if !std::mem::take(&mut self.1.0) {
            return None;
        }
        Some(match c {
            'P' => KeyCode::F(1),
            'Q' => KeyCode::F(2),
            'R' => KeyCode::F(3),
            'S' => KeyCode::F(4),
            'A' => KeyCode::Up,
            'B' => KeyCode::Down,
            'C' => KeyCode::Right,
            'D' => KeyCode::Left,
            'H' => KeyCode::Home,
            'F' => KeyCode::End,
            // Not a key crossterm knows: dropped, not typed.
            _ => KeyCode::Null,
        })
    }
}

impl Perform for Keys {
    fn print(&mut self, c: char) {
        if let Some(code) = self.ss3(c) {
            if code != KeyCode::Null {
                self.push(code, KeyModifiers::NONE);
            }
            return;
        }
        match c {
            '\x7f' => self.push(KeyCode::Backspace, KeyModifiers::NONE),
            c if c.is_uppercase() => self.push(KeyCode::Char(c), KeyModifiers::SHIFT),
            c => self.push(KeyCode::Char(c), KeyModifiers::NONE),
        }
    }

    fn execute(&mut self, byte: u8) {
        self.1.0 = false;
        match byte {
            b'\r' | b'\n' => self.push(KeyCode::Enter, KeyModifiers::NONE),
            b'\t' => self.push(KeyCode::Tab, KeyModifiers::NONE),
            0x08 => self.push(KeyCode::Backspace, KeyModifiers::NONE),
            0x00 => self.push(KeyCode::Char(' '), KeyModifiers::CONTROL),
            // Ctrl+A … Ctrl+Z (those above are Enter, Tab and Backspace).
            0x01..=0x1a => self.push(
                KeyCode::Char(char::from(b'a' + byte - 1)),
                KeyModifiers::CONTROL,
            ),
            // Ctrl+\ … Ctrl+_, read as crossterm reads them: Ctrl+4 … Ctrl+7.
            0x1c..=0x1f => self.push(
                KeyCode::Char(char::from(b'4' + byte - 0x1c)),
                KeyModifiers::CONTROL,
            ),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        self.1.0 = false;
        if ignore || !intermediates.is_empty() {
            // `?` and the like: device attributes and other answers.
            return;
        }
        let first = params.iter().next().and_then(|p| p.first().copied());
        let modifiers = params
            .iter()
            .nth(1)
            .and_then(|p| p.first().copied())
            .map_or(KeyModifiers::NONE, modifiers_of);
        let code = match (action, first) {
            ('A', _) => KeyCode::Up,
            ('B', _) => KeyCode::Down,
            ('C', _) => KeyCode::Right,
            ('D', _) => KeyCode::Left,
            ('H', _) => KeyCode::Home,
            ('F', _) => KeyCode::End,
            ('Z', _) => KeyCode::BackTab,
            ('~', Some(1 | 7)) => KeyCode::Home,
            ('~', Some(2)) => KeyCode::Insert,
            ('~', Some(3)) => KeyCode::Delete,
            ('~', Some(4 | 8)) => KeyCode::End,
            ('~', Some(5)) => KeyCode::PageUp,
            ('~', Some(6)) => KeyCode::PageDown,
            ('~', Some(n @ 11..=15)) => KeyCode::F(u8::try_from(n - 10).unwrap_or(1)),
            ('~', Some(n @ 17..=21)) => KeyCode::F(u8::try_from(n - 11).unwrap_or(6)),
            ('~', Some(n @ 23..=24)) => KeyCode::F(u8::try_from(n - 12).unwrap_or(11)),
            // `t` (cell size), `n` (status), `R` (cursor position), `c`
            // (device attributes): answers, not keys.
            _ => return,
        };
        self.push(code, modifiers);
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _ignore: bool, byte: u8) {
        // Esc then a key: Alt+key, as terminals send it. `ESC O` starts an SS3
        // key such as F1, whose letter comes next as text.
        self.1.0 = intermediates.is_empty() && byte == b'O';
        if !intermediates.is_empty() || byte == b'O' || byte == b'\\' {
            return;
        }
        if byte.is_ascii_graphic() {
            self.push(KeyCode::Char(char::from(byte)), KeyModifiers::ALT);
        }
    }
}

/// The modifiers of an xterm-style modified key (`CSI 1 ; 5 A` is Ctrl+Up).
fn modifiers_of(param: u16) -> KeyModifiers {
    let bits = param.saturating_sub(1);
    let mut m = KeyModifiers::NONE;
    if bits & 1 != 0 {
        m |= KeyModifiers::SHIFT;
    }
    if bits & 2 != 0 {
        m |= KeyModifiers::ALT;
    }
    if bits & 4 != 0 {
        m |= KeyModifiers::CONTROL;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(bytes: &[u8]) -> Vec<(KeyCode, KeyModifiers)> {
        key_events(bytes)
            .into_iter()
            .filter_map(|e| match e {
                Event::Key(k) => Some((k.code, k.modifiers)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn typed_text_survives_the_probe_answers_around_it() {
        let bytes = b"6*\x1b_Gi=31;OK\x1b\\7\x1b[?62;4;22c+1\x1b[6;20;10t\x1b[A\r\x7fx\x1b[0n";
        let none = KeyModifiers::NONE;
        assert_eq!(
            codes(bytes),
            vec![
                (KeyCode::Char('6'), none),
                (KeyCode::Char('*'), none),
                (KeyCode::Char('7'), none),
                (KeyCode::Char('+'), none),
                (KeyCode::Char('1'), none),
                (KeyCode::Up, none),
                (KeyCode::Enter, none),
                (KeyCode::Backspace, none),
                (KeyCode::Char('x'), none),
            ]
        );
    }

    #[test]
    fn ctrl_underscore_and_its_neighbours_are_keys_as_crossterm_reads_them() {
        // 0x1c to 0x1f are Ctrl+\, Ctrl+], Ctrl+^ and Ctrl+_ (Ctrl+/ sends
        // 0x1f too): crossterm reads them as Ctrl+4 to Ctrl+7, which the
        // keymap takes as undo (Ctrl+_). Typed while the graphics probe read
        // the input, Ctrl+_ was dropped (CI saw undo do nothing).
        let ctrl = KeyModifiers::CONTROL;
        assert_eq!(
            codes(b"\x1c\x1d\x1e\x1f"),
            vec![
                (KeyCode::Char('4'), ctrl),
                (KeyCode::Char('5'), ctrl),
                (KeyCode::Char('6'), ctrl),
                (KeyCode::Char('7'), ctrl),
            ]
        );
    }

    #[test]
    fn alt_enter_and_alt_backspace_keep_their_alt() {
        // Typed right after launching, `1+1` Alt+Enter must run the cell, not
        // add a line (vte ran the Enter and forgot the Esc).
        let alt = KeyModifiers::ALT;
        let none = KeyModifiers::NONE;
        assert_eq!(
            codes(b"1\x1b\r\x1b\x7f\x1b\x03\x1b[A"),
            vec![
                (KeyCode::Char('1'), none),
                (KeyCode::Enter, alt),
                (KeyCode::Backspace, alt),
                (KeyCode::Char('c'), KeyModifiers::CONTROL | alt),
                (KeyCode::Up, none),
            ]
        );
        // The Esc and the Enter read apart.
        let mut typeahead = Typeahead::default();
        assert!(typeahead.feed(b"2\x1b").len() == 1);
        let events = typeahead.feed(b"\r");
        assert!(
            matches!(&events[..], [Event::Key(k)] if k.code == KeyCode::Enter && k.modifiers == alt),
            "{events:?}"
        );
    }

    #[test]
    fn control_keys_function_keys_and_alt() {
        assert_eq!(
            codes(b"\x03\x1b[15~\x1b[1;5C\x1bx\t"),
            vec![
                (KeyCode::Char('c'), KeyModifiers::CONTROL),
                (KeyCode::F(5), KeyModifiers::NONE),
                (KeyCode::Right, KeyModifiers::CONTROL),
                (KeyCode::Char('x'), KeyModifiers::ALT),
                (KeyCode::Tab, KeyModifiers::NONE),
            ]
        );
    }

    #[test]
    fn ss3_function_keys_and_arrows_are_keys_not_letters() {
        // F2 (what the files pane opens with), F1, an arrow in application
        // mode, then text: typed while the graphics probe reads the input.
        assert_eq!(
            codes(b"\x1bOQ\x1bOP\x1bOAQ"),
            vec![
                (KeyCode::F(2), KeyModifiers::NONE),
                (KeyCode::F(1), KeyModifiers::NONE),
                (KeyCode::Up, KeyModifiers::NONE),
                (KeyCode::Char('Q'), KeyModifiers::SHIFT),
            ]
        );
    }

    /// Fed in chunks cut anywhere, the same keys come out, each as soon as it
    /// is whole.
    #[test]
    fn chunks_cut_anywhere_give_the_same_keys() {
        let bytes: &[u8] =
            b"6*\x1b_Gi=31;OK\x1b\\7\x1b[?62;4;22c+1\x1b[6;20;10t\x1b[A\r\x1b[15~\x1b[0n";
        let whole = key_events(bytes);
        for cut in 1..bytes.len() {
            let mut t = Typeahead::default();
            let mut events = t.feed(&bytes[..cut]);
            events.extend(t.feed(&bytes[cut..]));
            assert_eq!(events, whole, "cut at {cut}");
        }
        let mut t = Typeahead::default();
        assert_eq!(t.feed(b"1+").len(), 2, "typed text is a key at once");
        assert!(t.feed(b"\x1b[1").is_empty(), "half a sequence waits");
        assert_eq!(t.feed(b"5~").len(), 1, "F5 once whole");
        let esc = Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        assert_eq!(t.feed(b"\x1b"), [esc], "Esc pressed alone");
        assert_eq!(t.feed(b"q").len(), 1, "and the next key is itself");
    }

    #[test]
    fn utf8_text_and_capitals() {
        assert_eq!(
            codes("é R".as_bytes()),
            vec![
                (KeyCode::Char('é'), KeyModifiers::NONE),
                (KeyCode::Char(' '), KeyModifiers::NONE),
                (KeyCode::Char('R'), KeyModifiers::SHIFT),
            ]
        );
    }
}
