//! A session's file names as a person reads them: escaped the way GNU
//! `ls -b` (`--escape`) shows them, so a name written by code (an agent, a
//! hostile pool) can neither reach the terminal raw nor pass for another name.
//! `evil\x1b]0;pwned\x07title.txt` shows as `evil\033]0;pwned\007title.txt`,
//! a tab as `\t`, a line break as `\n`, a backslash as `\\`; every other
//! character that does not print (C0 and C1 controls, DEL, bidirectional
//! overrides, zero-width and line-separator characters) as the octal of each
//! of its UTF-8 bytes. Printable text, spaces and Unicode letters included,
//! is kept. The escaped form is one line and holds only printable characters,
//! and different names give different escaped forms.
//!
//! Knows no terminal library: the notebook, the command line and the session
//! worker's summaries all call it.

/// `name` escaped as `ls -b` shows it (see the module notes). Pure; never
/// fails.
pub fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if hidden(c) => {
                let mut bytes = [0u8; 4];
                for b in c.encode_utf8(&mut bytes).bytes() {
                    out.push_str(&format!("\\{b:03o}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether `name` shows differently once escaped (it holds a character that
/// [`escape`] rewrites).
pub fn needs_escape(name: &str) -> bool {
    name.chars()
        .any(|c| c == '\\' || c.is_control() || hidden(c))
}

/// `items` joined with `, `, at most `most` of them, the rest said as
/// `… and N more`.
pub fn listed(items: &[String], most: usize) -> String {
    let mut out = items
        .iter()
        .take(most)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > most {
        out.push_str(&format!(" … and {} more", items.len() - most));
    }
    out
}

/// A character that does not print, or prints as something else.
fn hidden(c: char) -> bool {
    c.is_control()
        || super::sanitize::is_bidi_control(c)
        || matches!(
            c,
            '\u{200b}'..='\u{200d}' | '\u{2028}' | '\u{2029}' | '\u{2060}' | '\u{feff}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_escape_as_ls_b_shows_them() {
        assert_eq!(
            escape("evil\x1b]0;pwned\x07title.txt"),
            "evil\\033]0;pwned\\007title.txt"
        );
        assert_eq!(escape("tab\tname.txt"), "tab\\tname.txt");
        assert_eq!(escape("line\nbreak.txt"), "line\\nbreak.txt");
        assert_eq!(escape("back\\slash"), "back\\\\slash");
        assert_eq!(escape("del\u{7f}"), "del\\177");
        assert_eq!(escape("c1\u{9b}x"), "c1\\302\\233x");
        assert_eq!(escape("rtl\u{202e}txt.exe"), "rtl\\342\\200\\256txt.exe");
        assert_eq!(escape("naïve café #1.csv"), "naïve café #1.csv");
        assert_eq!(escape("my notes.txt"), "my notes.txt");
        assert_eq!(escape(".hidden"), ".hidden");
    }

    #[test]
    fn escaped_names_print_and_stay_apart() {
        let names = ["a\tb", "a\\tb", "a\\\tb", "a\u{1b}b", "a\\033b"];
        let escaped: Vec<String> = names.iter().map(|n| escape(n)).collect();
        for e in &escaped {
            assert!(!e.chars().any(char::is_control), "{e:?}");
        }
        let distinct: std::collections::BTreeSet<&String> = escaped.iter().collect();
        assert_eq!(distinct.len(), names.len(), "{escaped:?}");
        assert!(needs_escape("a\tb") && needs_escape("a\\b") && !needs_escape("a b"));
    }

    #[test]
    fn long_lists_are_cut_with_how_many_more() {
        let items: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(listed(&items[..2], 3), "a, b");
        assert_eq!(listed(&items, 3), "a, b, c … and 2 more");
    }
}
