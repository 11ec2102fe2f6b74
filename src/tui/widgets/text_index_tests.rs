//! Tests of the line index: it must read exactly like `sanitize::to_lines` would,
//! however the text arrives.

use pretty_assertions::assert_eq;
use ratatui::style::Color;

use super::*;

fn text_of(index: &TextIndex, raw: &str) -> Vec<String> {
    let view = index.view(raw);
    view.lines(0..view.line_count())
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn reference(raw: &str) -> Vec<String> {
    sanitize::to_lines(raw)
        .iter()
        .map(ToString::to_string)
        .collect()
}

const SAMPLES: [&str; 6] = [
    "a\nb\nc\n",
    "one\n\ntwo",
    " 10%\r 50%\r100%\ndone\n",
    "x\x1b]52;c;aGk=\ny\x07z\nw\n",
    "\x1b[31mred\nstill red\x1b[0m\nplain\n",
    "tab\there\x1b[2Jcleared\x1b[10;5H\n",
];

#[test]
fn reads_like_to_lines() {
    for raw in SAMPLES {
        assert_eq!(
            text_of(&TextIndex::build(raw), raw),
            reference(raw),
            "{raw:?}"
        );
    }
}

#[test]
fn growing_text_reads_like_the_whole() {
    for raw in SAMPLES {
        for step in 1..raw.len() {
            let mut index = TextIndex::default();
            let mut end = 0;
            while end < raw.len() {
                end = (end + step).min(raw.len());
                while !raw.is_char_boundary(end) {
                    end += 1;
                }
                while !index.advance(&raw[..end], 2) {}
            }
            assert_eq!(text_of(&index, raw), reference(raw), "{raw:?} by {step}");
        }
    }
}

#[test]
fn small_budgets_take_several_calls() {
    let raw: String = (0..1000).map(|i| format!("line {i}\n")).collect();
    let mut index = TextIndex::default();
    let mut calls = 1;
    while !index.advance(&raw, 1000) {
        calls += 1;
    }
    assert!(calls > 5, "{calls}");
    let view = index.view(&raw);
    assert_eq!(view.line_count(), 1000);
    assert_eq!(view.raw_line(999), "line 999");
    assert_eq!(view.raw_seen(), raw.len());
}

#[test]
fn a_replaced_text_is_indexed_again() {
    let mut index = TextIndex::build("first text\nhere\n");
    assert!(index.advance("other\n", usize::MAX));
    assert_eq!(text_of(&index, "other\n"), vec!["other"]);
}

#[test]
fn long_lines_are_cut_into_pieces() {
    let raw = "x".repeat(LINE_CAP * 2 + 10) + "\nend\n";
    let built = TextIndex::build(&raw);
    let index = built.view(&raw);
    assert_eq!(index.line_count(), 4);
    assert_eq!(index.raw_line(0).len(), LINE_CAP);
    assert_eq!(index.raw_line(2).len(), 10);
    assert_eq!(index.raw_line(3), "end");
}

#[test]
fn styles_carry_over_checkpoints() {
    let mut raw = String::from("\x1b[31m");
    for i in 0..1000 {
        raw.push_str(&format!("line {i}\n"));
        if i == 600 {
            raw.push_str("\x1b[0m");
        }
    }
    let built = TextIndex::build(&raw);
    let index = built.view(&raw);
    let red = &index.lines(500..501)[0];
    assert_eq!(red.spans[0].style.fg, Some(Color::Red));
    let after = &index.lines(700..701)[0];
    assert_eq!(after.spans[0].style.fg, Some(Color::Reset));
}

#[test]
fn find_walks_forward_and_back_and_wraps() {
    let raw: String = (0..100).map(|i| format!("row {i}\n")).collect();
    let built = TextIndex::build(&raw);
    let index = built.view(&raw);
    assert_eq!(index.find("row 5", 0, true), Some(5));
    assert_eq!(index.find("row 5", 5, true), Some(50));
    assert_eq!(index.find("row 5", 59, true), Some(5), "wraps");
    assert_eq!(index.find("row 5", 50, false), Some(5));
    assert_eq!(index.find("row 5", 3, false), Some(59), "wraps back");
    assert_eq!(index.find("absent", 0, true), None);
}

#[test]
fn find_ignores_sgr_parameters() {
    let raw = "\x1b[31mred\x1b[0m\nabc 31\n";
    let built = TextIndex::build(raw);
    let index = built.view(raw);
    assert_eq!(index.find("31", 1, true), Some(1));
    assert_eq!(index.find("red", 1, true), Some(0));
}

#[test]
fn no_escape_sequence_reaches_a_span() {
    let hostile = "a\x1b]52;c;aGk=\x07b\x1b]8;;https://x/\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x1b[10;5H\x1b[31mred\x1b[0m\u{9b}2J\x1bP1$tx\x1b\\\n";
    let raw = hostile.repeat(5000);
    let mut built = TextIndex::default();
    while !built.advance(&raw, 4096) {}
    let index = built.view(&raw);
    assert_eq!(index.line_count(), 5000);
    for line in index.lines(0..index.line_count()) {
        for span in &line.spans {
            assert!(
                !span.content.chars().any(char::is_control),
                "{:?}",
                span.content
            );
        }
    }
    assert_eq!(index.plain_line(4999), "ablinkred");
}

/// Plain text (what sanitizing leaves as it is) is read from the output
/// itself: the index keeps no copy of it, only line starts.
#[test]
fn plain_text_is_indexed_without_a_copy() {
    let raw: String = (0..100_000).map(|i| format!("{i}\n")).collect();
    let mut index = TextIndex::default();
    while !index.advance(&raw, 64 * 1024) {}
    assert!(!index.keeps_a_copy());
    let view = index.view(&raw);
    assert_eq!(view.line_count(), 100_000);
    assert_eq!(view.raw_line(99_999), "99999");
    assert_eq!(view.find("5000", 0, true), Some(5000));
    // Growing text (a running cell's) stays without a copy.
    let more = raw.clone() + "100000\n";
    assert!(index.advance(&more, usize::MAX));
    assert!(!index.keeps_a_copy());
    assert_eq!(index.view(&more).raw_line(100_000), "100000");
}

/// Text that sanitizing changes is kept sanitized, from the first change on,
/// and reads like the whole text sanitized at once.
#[test]
fn text_that_sanitizing_changes_is_kept_sanitized() {
    let mut raw: String = (0..5000).map(|i| format!("{i}\n")).collect();
    raw.push_str("\x1b]52;c;aGk=\x07boom\n");
    raw.extend((0..5000).map(|i| format!("{i}\n")));
    let mut index = TextIndex::default();
    while !index.advance(&raw, 4096) {}
    assert!(index.keeps_a_copy());
    assert_eq!(text_of(&index, &raw), reference(&raw));
}

/// A text replaced by one the samples do not tell apart, whose new lines hold
/// control characters, still reads without them.
#[test]
fn a_line_read_from_raw_text_never_carries_a_control_character() {
    let raw = "line\n".repeat(1000);
    let index = TextIndex::build(&raw);
    assert!(!index.keeps_a_copy());
    // Line 20 forged, away from the samples, the same length.
    let forged = format!("{}l\x07\u{9b}\n{}", &raw[..100], &raw[105..]);
    assert_eq!(forged.len(), raw.len());
    let view = index.view(&forged);
    assert_eq!(view.line_count(), 1000);
    for n in 0..view.line_count() {
        assert!(!view.raw_line(n).chars().any(char::is_control), "{n}");
    }
    assert_eq!(view.raw_line(20), "l");
    // A text that is not the indexed one at all reads as no lines.
    assert_eq!(index.view("zz").line_count(), 0);
}

/// Line starts are kept every `STRIDE` lines: every line between two, long
/// lines cut into pieces among them, reads like the reference, built at once
/// or grown in pieces; and a search lands on the right line.
#[test]
fn sparse_line_starts_read_every_line() {
    let mut raw = String::new();
    for i in 0..700 {
        match i % 97 {
            5 => raw.push_str(&"y".repeat(LINE_CAP * 2 + 3)),
            50 => raw.push_str(&"z".repeat(LINE_CAP)),
            51 => raw.push_str(&"w".repeat(LINE_CAP + 1)),
            _ => raw.push_str(&format!("line {i}")),
        }
        raw.push('\n');
    }
    raw.push_str("unterminated");
    // The reference, with lines over LINE_CAP cut into pieces (ASCII here).
    let want: Vec<String> = reference(&raw)
        .iter()
        .flat_map(|line| {
            let pieces: Vec<String> = line
                .as_bytes()
                .chunks(LINE_CAP)
                .map(|c| String::from_utf8(c.to_vec()).unwrap())
                .collect();
            if pieces.is_empty() {
                vec![String::new()]
            } else {
                pieces
            }
        })
        .collect();
    let built = TextIndex::build(&raw);
    assert_eq!(text_of(&built, &raw), want);
    let mut grown = TextIndex::default();
    for end in (0..raw.len()).step_by(7919).chain([raw.len()]) {
        while !grown.advance(&raw[..end], 4096) {}
    }
    assert_eq!(text_of(&grown, &raw), want);
    let view = built.view(&raw);
    for query in ["line 300", "line 17\n", "unterminated", "line 696"] {
        let query = query.trim_end();
        let hit = view.find(query, 0, true).expect(query);
        assert!(
            want[hit].contains(query),
            "{query}: line {hit} is {:?}",
            want[hit]
        );
        assert!(
            !want[..hit].iter().any(|l| l.contains(query)) || hit == 0,
            "{query}"
        );
    }
}

/// What the index takes without sanitizing (printable ASCII and newlines)
/// is what sanitizing leaves as it is.
#[test]
fn printable_ascii_is_what_sanitizing_leaves_alone() {
    let all: String = (b' '..=b'~').map(char::from).chain(['\n']).collect();
    assert!(is_printable_ascii(&all));
    assert_eq!(sanitize::clean(&all, true), all);
    for other in ["\t", "\r", "\x1b[0m", "\x7f", "é", "\u{9b}"] {
        assert!(!is_printable_ascii(other), "{other:?}");
    }
}
