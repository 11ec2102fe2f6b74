//! Printing what sessions return: session text reaches a terminal only through
//! the same sanitizer as the TUI (SGR colours kept, every other escape sequence
//! removed); piped output is passed on as the session wrote it.

use std::io::{IsTerminal, Write};

use crate::text::sanitize;

/// `println!` that never panics: a line on standard output, dropped when
/// standard output is closed (`sessionpad serve | head -3`), where
/// `println!` would panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}
pub(crate) use outln;

/// Writes session text to standard output, sanitized when it is a terminal.
pub fn out(text: &str) {
    write(
        &mut std::io::stdout(),
        std::io::stdout().is_terminal(),
        text,
    );
}

/// Writes session text to standard error, sanitized when it is a terminal.
pub fn err(text: &str) {
    write(
        &mut std::io::stderr(),
        std::io::stderr().is_terminal(),
        text,
    );
}

fn write(w: &mut dyn Write, terminal: bool, text: &str) {
    let result = if terminal {
        w.write_all(sanitize::clean(text, true).as_bytes())
    } else {
        w.write_all(text.as_bytes())
    };
    let _ = result.and_then(|()| w.flush());
}

/// Prints a JSON document (for `--json`) on standard output.
pub fn json(value: &serde_json::Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    outln!("{text}");
}

/// A short human size (`512 B`, `1.5 KiB`, `3.0 MiB`): the same as the TUI shows.
pub use crate::text::human_size;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_output_loses_escapes_but_pipes_keep_them() {
        let hostile = "a\x1b]52;c;aGk=\x07b\x1b[2J\x1b[31mred\x1b[0m\n";
        let mut tty = Vec::new();
        write(&mut tty, true, hostile);
        assert_eq!(String::from_utf8(tty).unwrap(), "ab\x1b[31mred\x1b[0m\n");
        let mut pipe = Vec::new();
        write(&mut pipe, false, hostile);
        assert_eq!(pipe, hostile.as_bytes());
    }

    #[test]
    fn sizes_are_human() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(3 * 1024 * 1024), "3.0 MiB");
    }
}
