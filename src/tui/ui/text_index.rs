//! Session text too long to turn into styled lines all at once (megabytes of
//! stdout): sanitized once, split into lines by offset, and styled only for the
//! lines someone looks at. The collapsed cell view and the pager both read it.
//!
//! Building the index is incremental and bounded: [`TextIndex::advance`] sanitizes
//! at most a budget of new bytes per call, so the UI loop can spread a 10 MB
//! output over several frames and keep answering keys. Text that grows (streamed
//! output) is picked up where the last call stopped: the sanitizer restarts after
//! the last newline it saw outside an escape sequence, so only the unfinished last
//! line is sanitized twice.
//!
//! Lines longer than [`LINE_CAP`] bytes are cut into pieces here, so that no
//! later step (wrapping, styling, searching) ever works on one huge line.

use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::Line;

use super::{sanitize, sgr};

/// Longest line kept whole, in bytes; longer lines become several index lines.
pub const LINE_CAP: usize = 16 * 1024;
/// A style checkpoint every this many lines, for styling any line cheaply.
const CHECKPOINT: usize = 256;
/// Bytes of the raw text compared to tell an appended text from a replaced one.
const PROBE: usize = 16;

/// Sanitized text indexed by line.
#[derive(Debug, Default)]
pub struct TextIndex {
    /// The sanitized text (SGR sequences kept in canonical form).
    clean: String,
    /// Byte offset in `clean` where each line starts (always starts with 0).
    starts: Vec<usize>,
    /// The style in force at the start of line `k * CHECKPOINT`.
    carry: Vec<Style>,
    /// `clean` holds an SGR sequence somewhere.
    has_sgr: bool,
    /// `clean` may hold a non-ASCII character (false: it surely does not).
    non_ascii: bool,
    /// Where the sanitizer can restart: the raw offset, and the index state there.
    safe: SafePoint,
    /// Raw bytes taken in so far.
    raw_seen: usize,
    /// Samples of the raw text before `safe.raw`, to notice a replaced text.
    probes: Vec<(usize, Vec<u8>)>,
}

#[derive(Debug, Clone, Copy, Default)]
struct SafePoint {
    raw: usize,
    clean: usize,
    lines: usize,
    style: Style,
}

impl TextIndex {
    /// An index of `raw` built to the end at once (tests, benchmarks, small texts).
    pub fn build(raw: &str) -> Self {
        let mut index = Self::default();
        while !index.advance(raw, usize::MAX) {}
        index
    }

    /// Takes in up to about `budget` more bytes of `raw` (a text that only grows, or
    /// is replaced: a replaced text is indexed from the start again). Returns true
    /// when all of `raw` is indexed.
    pub fn advance(&mut self, raw: &str, budget: usize) -> bool {
        if !self.continues(raw) {
            *self = Self::default();
        }
        if self.is_complete(raw) {
            return true;
        }
        let from = self.safe.raw;
        let mut cut = cut_after_newline(raw, from.saturating_add(budget));
        let mut segment = sanitize::clean(&raw[from..cut], true);
        if cut < raw.len() && newlines(&raw[from..cut]) != newlines(&segment) {
            // A newline went into an escape string that may end further on: the
            // sanitizer cannot restart inside it, so take the rest in one go.
            cut = raw.len();
            segment = sanitize::clean(&raw[from..], true);
        }
        let restartable =
            raw[..cut].ends_with('\n') && newlines(&raw[from..cut]) == newlines(&segment);
        self.clean.truncate(self.safe.clean);
        self.starts.truncate(self.safe.lines);
        self.carry.truncate(self.safe.lines.div_ceil(CHECKPOINT));
        if self.starts.is_empty() {
            self.starts.push(0);
            self.carry.push(Style::new());
        }
        self.has_sgr |= segment.contains('\x1b');
        self.non_ascii |= !segment.is_ascii();
        self.clean.push_str(&segment);
        let style = self.index_from(self.safe.clean, self.safe.style);
        self.raw_seen = cut;
        if restartable {
            self.safe = SafePoint {
                raw: cut,
                clean: self.clean.len(),
                lines: self.starts.len(),
                style,
            };
            self.probes = probes(raw, cut);
        }
        self.is_complete(raw)
    }

    /// True when all of `raw` is indexed.
    pub fn is_complete(&self, raw: &str) -> bool {
        self.raw_seen == raw.len() && self.continues(raw)
    }

    /// Raw bytes indexed so far.
    pub fn raw_seen(&self) -> usize {
        self.raw_seen
    }

    /// Lines that will not change when more text arrives (all but the last).
    pub fn stable_lines(&self) -> usize {
        self.safe.lines.saturating_sub(1)
    }

    /// True when `raw` still starts with the text this index was built from.
    fn continues(&self, raw: &str) -> bool {
        raw.len() >= self.safe.raw
            && raw.is_char_boundary(self.safe.raw)
            && self
                .probes
                .iter()
                .all(|(at, bytes)| raw.as_bytes().get(*at..*at + bytes.len()) == Some(bytes))
    }

    /// Records the line starts (and style checkpoints) of `clean[from..]`, where
    /// `from` starts a line (already recorded) in `style`. Returns the style at the
    /// start of the last line.
    fn index_from(&mut self, from: usize, mut style: Style) -> Style {
        let mut line_start = from;
        loop {
            let newline = self.clean[line_start..].find('\n').map(|i| line_start + i);
            let end = newline.unwrap_or(self.clean.len());
            let mut piece = line_start;
            while end - piece > LINE_CAP {
                let cut = piece_end(&self.clean, piece + LINE_CAP);
                style = self.next_line(piece, cut, style);
                piece = cut;
            }
            let Some(newline) = newline else {
                return style;
            };
            style = self.next_line(piece, newline + 1, style);
            line_start = newline + 1;
        }
    }

    /// Moves the style over `clean[start..next]` and records a line at `next`.
    fn next_line(&mut self, start: usize, next: usize, style: Style) -> Style {
        let style = if self.has_sgr {
            sgr::apply(style, &self.clean[start..next])
        } else {
            style
        };
        if self.starts.len().is_multiple_of(CHECKPOINT) {
            self.carry.push(style);
        }
        self.starts.push(next);
        style
    }

    /// Number of lines (a final newline does not start another line).
    pub fn line_count(&self) -> usize {
        match self.starts.last() {
            Some(&last) if last == self.clean.len() && last > 0 => self.starts.len() - 1,
            Some(_) => self.starts.len(),
            None => 0,
        }
    }

    /// The byte range of line `n` in the sanitized text, without its newline.
    fn range(&self, n: usize) -> Range<usize> {
        let start = self.starts[n];
        let end = match self.starts.get(n + 1) {
            Some(&next) if self.clean.as_bytes()[next - 1] == b'\n' => next - 1,
            Some(&next) => next,
            None => self.clean.strip_suffix('\n').unwrap_or(&self.clean).len(),
        };
        start..end.max(start)
    }

    /// Line `n` as sanitized text (it may hold SGR sequences).
    pub fn raw_line(&self, n: usize) -> &str {
        if self.starts.is_empty() || n >= self.line_count() {
            return "";
        }
        &self.clean[self.range(n)]
    }

    /// True when every line is plain ASCII (no SGR, no wide characters), so a
    /// line's columns are its bytes.
    pub fn is_plain_ascii(&self) -> bool {
        !self.has_sgr && !self.non_ascii
    }

    /// Line `n` as plain text, SGR sequences removed.
    pub fn plain_line(&self, n: usize) -> std::borrow::Cow<'_, str> {
        sgr::strip(self.raw_line(n))
    }

    /// Lines `range` as styled lines.
    pub fn lines(&self, range: Range<usize>) -> Vec<Line<'static>> {
        let end = range.end.min(self.line_count());
        let start = range.start.min(end);
        let mut style = self.style_at(start);
        (start..end)
            .map(|n| {
                let text = self.raw_line(n);
                let line = sgr::line(style, text);
                if self.has_sgr {
                    style = sgr::apply(style, &self.clean[self.starts[n]..self.next_start(n)]);
                }
                line
            })
            .collect()
    }

    fn next_start(&self, n: usize) -> usize {
        self.starts.get(n + 1).copied().unwrap_or(self.clean.len())
    }

    /// The style in force at the start of line `n`.
    fn style_at(&self, n: usize) -> Style {
        if !self.has_sgr {
            return Style::new();
        }
        let k = (n / CHECKPOINT).min(self.carry.len().saturating_sub(1));
        let style = self.carry.get(k).copied().unwrap_or_default();
        let from = self.starts.get(k * CHECKPOINT).copied().unwrap_or(0);
        let to = self.starts.get(n).copied().unwrap_or(self.clean.len());
        sgr::apply(style, &self.clean[from..to])
    }

    /// The next line after `from` (or before it, when `!forward`) whose plain text
    /// contains `query`, wrapping around the ends. Case-sensitive, like `less`.
    pub fn find(&self, query: &str, from: usize, forward: bool) -> Option<usize> {
        let count = self.line_count();
        if query.is_empty() || count == 0 {
            return None;
        }
        let from = from.min(count - 1);
        if !self.has_sgr {
            return self.find_plain(query, from, forward);
        }
        let hit = |n: &usize| self.plain_line(*n).contains(query);
        if forward {
            (from + 1..count).chain(0..=from).find(hit)
        } else {
            (0..from).rev().chain((from..count).rev()).find(hit)
        }
    }

    /// [`Self::find`] over text without SGR: one substring search over the whole
    /// text rather than one per line.
    fn find_plain(&self, query: &str, from: usize, forward: bool) -> Option<usize> {
        let text = &self.clean;
        let line_of = |at: usize| self.starts.partition_point(|&s| s <= at) - 1;
        let after = self.next_start(from);
        let before = self.starts[from];
        let hit = if forward {
            text[after..]
                .find(query)
                .map(|i| after + i)
                .or_else(|| text[..after].find(query))
        } else {
            text[..before]
                .rfind(query)
                .or_else(|| text[before..].rfind(query).map(|i| before + i))
        };
        hit.map(line_of).filter(|&n| n < self.line_count())
    }
}

/// The end of the first line that ends at or after `at` (just past its newline),
/// or the end of `raw`.
fn cut_after_newline(raw: &str, at: usize) -> usize {
    if at >= raw.len() {
        return raw.len();
    }
    raw.as_bytes()[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(raw.len(), |i| at + i + 1)
}

/// Where to cut a long line near `at`: on a character boundary, and not inside an
/// SGR sequence.
fn piece_end(text: &str, at: usize) -> usize {
    let mut cut = at.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let window = &text[cut.saturating_sub(32)..cut];
    match window.rfind('\x1b') {
        Some(esc) if !window[esc..].contains('m') => cut - (window.len() - esc),
        _ => cut,
    }
}

fn newlines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

/// Samples of `raw[..end]`: its last bytes and a few spread over it.
fn probes(raw: &str, end: usize) -> Vec<(usize, Vec<u8>)> {
    let bytes = &raw.as_bytes()[..end];
    let mut out: Vec<(usize, Vec<u8>)> = (1..8)
        .map(|k| end / 8 * k)
        .map(|at| (at, bytes[at..(at + PROBE).min(end)].to_vec()))
        .collect();
    let tail = end.saturating_sub(PROBE);
    out.push((tail, bytes[tail..].to_vec()));
    out
}

#[cfg(test)]
#[path = "text_index_tests.rs"]
mod tests;
