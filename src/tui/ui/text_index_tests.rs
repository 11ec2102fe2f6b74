//! Tests of the line index: it must read exactly like `sanitize::to_lines` would,
//! however the text arrives.

use pretty_assertions::assert_eq;
use ratatui::style::Color;

use super::*;

fn text_of(index: &TextIndex) -> Vec<String> {
    index
        .lines(0..index.line_count())
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
        assert_eq!(text_of(&TextIndex::build(raw)), reference(raw), "{raw:?}");
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
            assert_eq!(text_of(&index), reference(raw), "{raw:?} by {step}");
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
    assert_eq!(index.line_count(), 1000);
    assert_eq!(index.raw_line(999), "line 999");
    assert_eq!(index.raw_seen(), raw.len());
}

#[test]
fn a_replaced_text_is_indexed_again() {
    let mut index = TextIndex::build("first text\nhere\n");
    assert!(index.advance("other\n", usize::MAX));
    assert_eq!(text_of(&index), vec!["other"]);
}

#[test]
fn long_lines_are_cut_into_pieces() {
    let raw = "x".repeat(LINE_CAP * 2 + 10) + "\nend\n";
    let index = TextIndex::build(&raw);
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
    let index = TextIndex::build(&raw);
    let red = &index.lines(500..501)[0];
    assert_eq!(red.spans[0].style.fg, Some(Color::Red));
    let after = &index.lines(700..701)[0];
    assert_eq!(after.spans[0].style.fg, Some(Color::Reset));
}

#[test]
fn find_walks_forward_and_back_and_wraps() {
    let raw: String = (0..100).map(|i| format!("row {i}\n")).collect();
    let index = TextIndex::build(&raw);
    assert_eq!(index.find("row 5", 0, true), Some(5));
    assert_eq!(index.find("row 5", 5, true), Some(50));
    assert_eq!(index.find("row 5", 59, true), Some(5), "wraps");
    assert_eq!(index.find("row 5", 50, false), Some(5));
    assert_eq!(index.find("row 5", 3, false), Some(59), "wraps back");
    assert_eq!(index.find("absent", 0, true), None);
}

#[test]
fn find_ignores_sgr_parameters() {
    let index = TextIndex::build("\x1b[31mred\x1b[0m\nabc 31\n");
    assert_eq!(index.find("31", 1, true), Some(1));
    assert_eq!(index.find("red", 1, true), Some(0));
}

#[test]
fn no_escape_sequence_reaches_a_span() {
    let hostile = "a\x1b]52;c;aGk=\x07b\x1b]8;;https://x/\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x1b[10;5H\x1b[31mred\x1b[0m\u{9b}2J\x1bP1$tx\x1b\\\n";
    let raw = hostile.repeat(5000);
    let mut index = TextIndex::default();
    while !index.advance(&raw, 4096) {}
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
