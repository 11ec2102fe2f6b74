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

/// Asks `question` (on standard error, ending in `[y/N]`) and reads the
/// answer from standard input: `Some(true)` for `y` or `yes` (any case),
/// `Some(false)` for anything else or end of input; `None` without asking
/// when standard input is not a terminal (nobody to ask: the caller refuses
/// and names the flag that skips the question).
///
/// # Errors
///
/// Standard input cannot be read.
pub fn confirm(question: &str) -> std::io::Result<Option<bool>> {
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question} [y/N] ").and_then(|()| err.flush());
    drop(err);
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(Some(is_yes(&line)))
}

/// Whether an answer typed to [`confirm`] means yes.
fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
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
    fn only_y_or_yes_is_yes() {
        for yes in ["y\n", "Y", " yes \n", "YES"] {
            assert!(is_yes(yes), "{yes:?}");
        }
        for no in ["", "\n", "n", "no", "yess", "ja"] {
            assert!(!is_yes(no), "{no:?}");
        }
    }

    #[test]
    fn sizes_are_human() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(3 * 1024 * 1024), "3.0 MiB");
    }
}
