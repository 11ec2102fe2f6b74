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
//!
//! The index keeps no copy of text that sanitizing left as it was (plain
//! output, the usual case): it reads such text from the output itself, which
//! its reader passes in ([`TextIndex::view`]). Only text that sanitizing
//! changed is kept, sanitized. Line starts are kept sparsely: a 32-bit
//! offset every [`STRIDE`] lines (a million lines cost 250 KB, not 4 MB); a
//! line between two is found by stepping over at most `STRIDE - 1` lines,
//! each no longer than [`LINE_CAP`].

use std::borrow::Cow;
use std::ops::Range;

use ratatui::style::Style;
use ratatui::text::Line;

use super::{sanitize, sgr};

/// Longest line kept whole, in bytes; longer lines become several index lines.
pub const LINE_CAP: usize = 16 * 1024;
/// A style checkpoint every this many lines, for styling any line cheaply (a
/// multiple of [`STRIDE`]).
const CHECKPOINT: usize = 256;
/// A line start is kept for every this many lines.
const STRIDE: usize = 16;
/// Bytes of the raw text compared to tell an appended text from a replaced one.
const PROBE: usize = 16;

/// Sanitized text indexed by line. It is read through a [`TextView`] made with
/// the raw text it indexes ([`TextIndex::view`]).
#[derive(Debug, Default)]
pub struct TextIndex {
    /// The sanitized text (SGR sequences kept in canonical form), once it
    /// differs from the raw text; `None` while it is the raw text's first
    /// `clean_len` bytes themselves.
    own: Option<String>,
    /// Bytes of sanitized text indexed.
    clean_len: usize,
    /// Lines recorded (a final newline records the empty line after it).
    lines: usize,
    /// Byte offset in the sanitized text where line `k * STRIDE` starts
    /// (always starts with 0).
    marks: Vec<u32>,
    /// Where the last line recorded starts.
    last_start: u32,
    /// The style in force at the start of line `k * CHECKPOINT`.
    carry: Vec<Style>,
    /// The sanitized text holds an SGR sequence somewhere.
    has_sgr: bool,
    /// The sanitized text may hold a non-ASCII character (false: it surely
    /// does not).
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

/// An offset into the sanitized text as kept in the index. Texts are capped
/// well below 4 GiB (8 MiB per stream on the local pool), so this never
/// saturates in practice; if it did, lines past it would read empty.
fn offset(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
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
        // Printable ASCII and newlines (most output) are what sanitizing
        // leaves as they are: no cleaned copy is made of them.
        let mut segment: Cow<'_, str> = if is_printable_ascii(&raw[from..cut]) {
            Cow::Borrowed(&raw[from..cut])
        } else {
            Cow::Owned(sanitize::clean(&raw[from..cut], true))
        };
        if cut < raw.len() && newlines(&raw[from..cut]) != newlines(&segment) {
            // A newline went into an escape string that may end further on: the
            // sanitizer cannot restart inside it, so take the rest in one go.
            cut = raw.len();
            segment = Cow::Owned(sanitize::clean(&raw[from..], true));
        }
        let restartable =
            raw[..cut].ends_with('\n') && newlines(&raw[from..cut]) == newlines(&segment);
        self.lines = self.safe.lines;
        self.marks.truncate(self.lines.div_ceil(STRIDE));
        self.carry.truncate(self.lines.div_ceil(CHECKPOINT));
        // A safe point follows a newline: the last line kept starts there.
        self.last_start = offset(self.safe.clean);
        if self.lines == 0 {
            self.record(0, Style::new());
        }
        self.has_sgr |= segment.contains('\x1b');
        self.non_ascii |= !segment.is_ascii();
        match &mut self.own {
            Some(own) => {
                own.truncate(self.safe.clean);
                own.push_str(&segment);
            }
            // Sanitizing left the text as it was: keep none of it (while
            // nothing was kept, `safe.clean == safe.raw == from`).
            None if segment == raw[from..cut] => {}
            None => {
                let mut own = String::with_capacity(self.safe.clean + segment.len());
                own.push_str(&raw[..self.safe.clean]);
                own.push_str(&segment);
                self.own = Some(own);
            }
        }
        self.clean_len = self.safe.clean + segment.len();
        drop(segment);
        let own = self.own.take();
        let text = match &own {
            Some(own) => own.as_str(),
            None => &raw[..self.clean_len],
        };
        let style = self.index_from(text, self.safe.clean, self.safe.style);
        self.own = own;
        self.raw_seen = cut;
        if restartable {
            self.safe = SafePoint {
                raw: cut,
                clean: self.clean_len,
                lines: self.lines,
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

    /// True when the index keeps a sanitized copy of the text (sanitizing
    /// changed it); false when it reads the raw text itself.
    pub fn keeps_a_copy(&self) -> bool {
        self.own.is_some()
    }

    /// The index read with `raw`, the text it was built from (or that text
    /// grown since). A `raw` that is not that text (replaced, and not read
    /// again yet) reads as no lines.
    pub fn view<'a>(&'a self, raw: &'a str) -> TextView<'a> {
        static EMPTY: TextIndex = TextIndex {
            own: None,
            clean_len: 0,
            lines: 0,
            marks: Vec::new(),
            last_start: 0,
            carry: Vec::new(),
            has_sgr: false,
            non_ascii: false,
            safe: SafePoint {
                raw: 0,
                clean: 0,
                lines: 0,
                style: Style::new(),
            },
            raw_seen: 0,
            probes: Vec::new(),
        };
        let text = match &self.own {
            Some(own) => Some(own.as_str()),
            None => raw.get(..self.clean_len),
        };
        match text {
            Some(text) if self.continues(raw) => TextView { index: self, text },
            _ => TextView {
                index: &EMPTY,
                text: "",
            },
        }
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

    /// Records the line starts (and style checkpoints) of `text[from..]`, where
    /// `from` starts a line (already recorded) in `style`. Returns the style at the
    /// start of the last line.
    fn index_from(&mut self, text: &str, from: usize, mut style: Style) -> Style {
        let mut line_start = from;
        loop {
            let newline = text[line_start..].find('\n').map(|i| line_start + i);
            let end = newline.unwrap_or(text.len());
            let mut piece = line_start;
            while end - piece > LINE_CAP {
                let cut = piece_end(text, piece + LINE_CAP);
                style = self.next_line(&text[piece..cut], cut, style);
                piece = cut;
            }
            let Some(newline) = newline else {
                return style;
            };
            style = self.next_line(&text[piece..=newline], newline + 1, style);
            line_start = newline + 1;
        }
    }

    /// Moves the style over `line` and records a line at `next`.
    fn next_line(&mut self, line: &str, next: usize, style: Style) -> Style {
        let style = if self.has_sgr {
            sgr::apply(style, line)
        } else {
            style
        };
        self.record(next, style);
        style
    }

    /// Records that a line starts at `at` in `style`.
    fn record(&mut self, at: usize, style: Style) {
        if self.lines.is_multiple_of(CHECKPOINT) {
            self.carry.push(style);
        }
        if self.lines.is_multiple_of(STRIDE) {
            self.marks.push(offset(at));
        }
        self.lines += 1;
        self.last_start = offset(at);
    }
}

/// A [`TextIndex`] and the sanitized text it indexes: what the collapsed
/// cell view and the pager read lines from. Cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct TextView<'a> {
    index: &'a TextIndex,
    /// The sanitized text: the index's own copy, or the raw text's start.
    text: &'a str,
}

impl<'a> TextView<'a> {
    /// Raw bytes indexed so far.
    pub fn raw_seen(&self) -> usize {
        self.index.raw_seen
    }

    /// Lines that will not change when more text arrives (all but the last).
    pub fn stable_lines(&self) -> usize {
        self.index.stable_lines()
    }

    /// The start of line `n` in the sanitized text (its end past the last line).
    fn start(&self, n: usize) -> usize {
        let marks = &self.index.marks;
        match marks.get(n / STRIDE) {
            Some(&mark) if n < self.index.lines => {
                (0..n % STRIDE).fold(mark as usize, |at, _| next_start(self.text, at))
            }
            _ => self.text.len(),
        }
    }

    /// Number of lines (a final newline does not start another line).
    pub fn line_count(&self) -> usize {
        let (lines, last) = (self.index.lines, self.index.last_start as usize);
        if lines > 0 && last == self.text.len() && last > 0 {
            lines - 1
        } else {
            lines
        }
    }

    /// The byte range of line `n` in the sanitized text, without its newline.
    fn range(&self, n: usize) -> Range<usize> {
        let start = self.start(n);
        let end = if n + 1 < self.index.lines {
            let next = next_start(self.text, start);
            if self.text.as_bytes().get(next.wrapping_sub(1)) == Some(&b'\n') {
                next - 1
            } else {
                next
            }
        } else {
            self.text.strip_suffix('\n').unwrap_or(self.text).len()
        };
        start..end.max(start)
    }

    /// The line holding byte `at` of the sanitized text.
    fn line_of(&self, at: usize) -> usize {
        let marks = &self.index.marks;
        let k = marks
            .partition_point(|&s| s as usize <= at)
            .saturating_sub(1);
        let (mut n, mut start) = (k * STRIDE, marks.get(k).map_or(0, |&s| s as usize));
        while n + 1 < self.index.lines {
            let next = next_start(self.text, start);
            if next > at {
                break;
            }
            (n, start) = (n + 1, next);
        }
        n
    }

    /// Line `n` as sanitized text (it may hold SGR sequences).
    ///
    /// Read from the raw text itself (sanitizing left it as it was), a line is
    /// still checked for control characters: should the text have been
    /// replaced by one that [`TextIndex::continues`]'s samples did not tell
    /// apart, such a line is sanitized here, so that no escape sequence
    /// reaches the terminal whatever the text.
    pub fn raw_line(&self, n: usize) -> Cow<'a, str> {
        if self.index.lines == 0 || n >= self.line_count() {
            return Cow::Borrowed("");
        }
        let line = self.text.get(self.range(n)).unwrap_or("");
        if self.index.own.is_none() && line.chars().any(|c| c.is_control() && c != '\x1b') {
            return Cow::Owned(sanitize::clean(line, true));
        }
        Cow::Borrowed(line)
    }

    /// True when every line is plain ASCII (no SGR, no wide characters), so a
    /// line's columns are its bytes.
    pub fn is_plain_ascii(&self) -> bool {
        !self.index.has_sgr && !self.index.non_ascii
    }

    /// Line `n` as plain text, SGR sequences removed.
    pub fn plain_line(&self, n: usize) -> Cow<'a, str> {
        match self.raw_line(n) {
            Cow::Borrowed(line) => sgr::strip(line),
            Cow::Owned(line) => Cow::Owned(sgr::strip(&line).into_owned()),
        }
    }

    /// Lines `range` as styled lines.
    pub fn lines(&self, range: Range<usize>) -> Vec<Line<'static>> {
        let end = range.end.min(self.line_count());
        let start = range.start.min(end);
        let mut style = self.style_at(start);
        (start..end)
            .map(|n| {
                let text = self.raw_line(n);
                let line = sgr::line(style, &text);
                if self.index.has_sgr {
                    let whole = self.text.get(self.start(n)..self.start(n + 1));
                    style = sgr::apply(style, whole.unwrap_or(""));
                }
                line
            })
            .collect()
    }

    /// The style in force at the start of line `n`.
    fn style_at(&self, n: usize) -> Style {
        if !self.index.has_sgr {
            return Style::new();
        }
        let carry = &self.index.carry;
        let k = (n / CHECKPOINT).min(carry.len().saturating_sub(1));
        let style = carry.get(k).copied().unwrap_or_default();
        let from = self.start(k * CHECKPOINT).min(self.text.len());
        let to = self.start(n).min(self.text.len()).max(from);
        sgr::apply(style, self.text.get(from..to).unwrap_or(""))
    }

    /// The next line after `from` (or before it, when `!forward`) whose plain text
    /// contains `query`, wrapping around the ends. Case-sensitive, like `less`.
    pub fn find(&self, query: &str, from: usize, forward: bool) -> Option<usize> {
        let count = self.line_count();
        if query.is_empty() || count == 0 {
            return None;
        }
        let from = from.min(count - 1);
        if !self.index.has_sgr {
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
        let text = self.text;
        let after = self.start(from + 1);
        let before = self.start(from);
        let (Some(head), Some(tail)) = (text.get(..after), text.get(after..)) else {
            return None;
        };
        let (Some(above), Some(below)) = (text.get(..before), text.get(before..)) else {
            return None;
        };
        let hit = if forward {
            tail.find(query)
                .map(|i| after + i)
                .or_else(|| head.find(query))
        } else {
            above
                .rfind(query)
                .or_else(|| below.rfind(query).map(|i| before + i))
        };
        hit.map(|at| self.line_of(at))
            .filter(|&n| n < self.line_count())
    }
}

/// Where the line after the one starting at `at` starts, as
/// [`TextIndex::index_from`] cut it: just past the next newline, or after
/// [`LINE_CAP`] bytes when the line is longer ([`piece_end`]), or the end of
/// `text`. Looks at no more than `LINE_CAP + 1` bytes.
fn next_start(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let window = &bytes[at.min(bytes.len())..bytes.len().min(at.saturating_add(LINE_CAP + 1))];
    match memchr::memchr(b'\n', window) {
        Some(i) => at + i + 1,
        None if bytes.len() - at.min(bytes.len()) > LINE_CAP => piece_end(text, at + LINE_CAP),
        None => text.len(),
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

/// True when `text` holds only printable ASCII and newlines, which
/// sanitizing leaves as they are (no tab, carriage return, escape or other
/// control; no character beyond ASCII).
fn is_printable_ascii(text: &str) -> bool {
    text.bytes().all(|b| matches!(b, b' '..=b'~' | b'\n'))
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
