//! Long text outputs (megabytes of stdout, a huge result): the line indexes that
//! stand for them, built a frame's budget at a time, and the collapsed rows the
//! notebook shows for them: the first rows, a muted note saying how to see the
//! rest, the last rows. The pager reads the same indexes.
//!
//! Indexes are keyed by (cell, output). A stream's index reads the cell's own
//! text each time and notices by itself when the text grew or was replaced;
//! an index of text made from the output (a result that is not a string) keeps
//! that text and is dropped when its cell changes.

use std::collections::HashMap;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::notebook::Output;
use crate::tui::theme::Theme;
use crate::tui::widgets::text_index::{TextIndex, TextView};
use crate::tui::widgets::wrap::{wrap, wrap_at_most};

/// Texts longer than this many bytes are collapsed.
pub const LONG_BYTES: usize = 64 * 1024;
/// Texts with more lines than this are collapsed.
pub const LONG_LINES: usize = 200;
/// Rows a collapsed output shows from its start.
pub const HEAD_ROWS: usize = 20;
/// Rows a collapsed output shows from its end.
pub const TAIL_ROWS: usize = 10;
/// Bytes of long outputs sanitized per frame: a few milliseconds of work, so a
/// frame that also reads a 10 MB output stays well under the frame interval.
pub const FRAME_BUDGET: usize = 512 * 1024;
/// Which output of which cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OutputKey {
    /// Index of the cell in the notebook.
    pub cell: usize,
    /// Index of the output in the cell.
    pub output: usize,
}

struct Entry {
    index: TextIndex,
    /// The text indexed, when it is not the output's own string.
    owned: Option<String>,
    /// The pool's marker line of a cut stream ([`CUT_MARKER`]), made plain,
    /// and the length of the text it was looked for in (looked for again only
    /// when the text changed length).
    cut: Option<(usize, Option<String>)>,
}

/// How the local pool's marker line starts, in a stream it cut (its head,
/// this line, its tail; `src/pool/kernel/outputs.rs`): the collapsed view
/// shows the line, which would otherwise sit among the rows it leaves out.
pub const CUT_MARKER: &str = "\n[output truncated by the local pool: ";

/// The marker line in `raw` (without its line breaks, control characters
/// made visible), if the pool cut it.
fn cut_marker(raw: &str) -> Option<String> {
    let at = raw.find(CUT_MARKER)? + 1;
    let end = raw[at..].find('\n').map_or(raw.len(), |i| at + i);
    Some(crate::tui::widgets::fit::one_line(&raw[at..end]))
}

/// An index as far as it is built.
pub struct Indexed<'a> {
    /// The lines read so far.
    pub index: TextView<'a>,
    /// All of the text is read.
    pub complete: bool,
    /// Bytes of the raw text.
    pub total_bytes: usize,
    /// The pool's marker line, when it cut the text (looked for once the text
    /// is all read).
    pub cut: Option<&'a str>,
}

/// The line indexes of long outputs, and this frame's budget for building them.
#[derive(Default)]
pub struct LongTexts {
    entries: HashMap<OutputKey, Entry>,
    budget: usize,
    pending: bool,
}

impl std::fmt::Debug for LongTexts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LongTexts")
            .field("entries", &self.entries.len())
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

/// The output's text when the output holds it as one string.
fn own_text(output: &Output) -> Option<&str> {
    match output {
        Output::Stream { text, .. } => Some(text),
        Output::ExecuteResult { text, .. } => Some(text),
        _ => None,
    }
}

/// The text of an output that does not hold it as one string (images: none).
fn made_text(output: &Output) -> Option<String> {
    match output {
        Output::ExecuteResult { .. } => None,
        Output::Error {
            ename,
            evalue,
            traceback,
        } if traceback.iter().all(|l| l.trim().is_empty()) => Some(format!("{ename}: {evalue}")),
        Output::Error { traceback, .. } => Some(traceback.join("\n")),
        Output::Stream { .. } | Output::DisplayData { .. } | Output::Files { .. } => None,
    }
}

/// True when `text` is too long to show whole in the notebook.
pub fn is_long(text: &str) -> bool {
    text.len() > LONG_BYTES || text.bytes().filter(|&b| b == b'\n').count() > LONG_LINES
}

impl LongTexts {
    /// Starts a frame: a fresh budget, nothing pending yet.
    pub fn begin_frame(&mut self) {
        self.budget = FRAME_BUDGET;
        self.pending = false;
    }

    /// True when an index drawn this frame is not complete: another frame should
    /// follow to read on.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// Cell `cell` changed: forget the indexes made from copies of its outputs.
    pub fn invalidate(&mut self, cell: usize) {
        self.entries
            .retain(|k, e| k.cell != cell || e.owned.is_none());
    }

    /// The index of `key` (whose output is `output`) as far as it is built,
    /// without reading on.
    pub fn get<'a>(&'a self, key: OutputKey, output: &'a Output) -> Option<TextView<'a>> {
        let entry = self.entries.get(&key)?;
        let raw = match &entry.owned {
            Some(text) => text.as_str(),
            None => own_text(output)?,
        };
        Some(entry.index.view(raw))
    }

    /// True when `output` should be collapsed (or is already indexed as long).
    pub fn is_long_output(&self, key: OutputKey, output: &Output) -> bool {
        if self.entries.contains_key(&key) {
            return true;
        }
        own_text(output).is_some_and(is_long)
    }

    /// The index of `output`, read on as far as this frame's budget allows.
    pub fn index<'a>(&'a mut self, key: OutputKey, output: &'a Output) -> Option<Indexed<'a>> {
        let entry = match self.entries.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let owned = match own_text(output) {
                    Some(_) => None,
                    None => Some(made_text(output)?),
                };
                v.insert(Entry {
                    index: TextIndex::default(),
                    owned,
                    cut: None,
                })
            }
        };
        let raw = match &entry.owned {
            Some(text) => text.as_str(),
            None => own_text(output)?,
        };
        let before = entry.index.raw_seen();
        let mut complete = entry.index.is_complete(raw);
        if !complete && self.budget > 0 {
            complete = entry.index.advance(raw, self.budget);
            let used = entry.index.raw_seen().saturating_sub(before);
            self.budget = self.budget.saturating_sub(used.max(1));
        }
        self.pending |= !complete;
        if complete && entry.cut.as_ref().is_none_or(|(len, _)| *len != raw.len()) {
            entry.cut = Some((raw.len(), cut_marker(raw)));
        }
        Some(Indexed {
            index: entry.index.view(raw),
            complete,
            total_bytes: raw.len(),
            cut: entry.cut.as_ref().and_then(|(_, m)| m.as_deref()),
        })
    }
}

/// The rows (already cut to `width`) of a collapsed output: its first rows, a
/// note naming `key` (which opens the pager), and (once it is all read) its last
/// rows. `style` is the output's own style (stderr); `prefix` goes in front of
/// the first line (`Out[n]: `).
pub fn collapsed_rows(
    text: &Indexed<'_>,
    style: Style,
    prefix: Option<&Span<'static>>,
    (width, key): (u16, &str),
    theme: &Theme,
) -> Vec<Line<'static>> {
    let index = text.index;
    let count = index.line_count();
    let mut rows = Vec::new();
    let mut head_lines = 0;
    for (n, line) in index.lines(0..HEAD_ROWS).into_iter().enumerate() {
        if rows.len() >= HEAD_ROWS {
            break;
        }
        let mut line = line.style(style);
        if n == 0
            && let Some(prefix) = prefix
        {
            line.spans.insert(0, prefix.clone());
        }
        rows.extend(wrap_at_most(line, width, HEAD_ROWS - rows.len()));
        head_lines = n + 1;
    }
    let note = if text.complete {
        format!(
            "… {} {}, {} in all — {key} opens {} in the pager",
            crate::protocol::service_limits::thousands(count),
            if count == 1 { "line" } else { "lines" },
            size(text.total_bytes),
            if count == 1 { "it" } else { "them" },
        )
    } else {
        format!(
            "… reading the output: {} of {} so far — {key} opens the pager",
            size(index.raw_seen()),
            size(text.total_bytes)
        )
    };
    rows.extend(wrap(Line::styled(note, theme.muted), width));
    if let (true, Some(cut)) = (text.complete, text.cut) {
        rows.extend(wrap(Line::styled(cut.to_string(), theme.muted), width));
    }
    if text.complete {
        let first = head_lines.max(count.saturating_sub(TAIL_ROWS));
        let tail: Vec<Line<'static>> = index
            .lines(first..count)
            .into_iter()
            .flat_map(|l| wrap(l.style(style), width))
            .collect();
        rows.extend(tail[tail.len().saturating_sub(TAIL_ROWS)..].iter().cloned());
    }
    rows
}

/// A byte count the way people read it: `812 B`, `64 kB`, `10.5 MB`.
#[allow(clippy::cast_precision_loss)] // a display figure
pub fn size(bytes: usize) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.0} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::notebook::StreamName;

    fn stdout(text: String) -> Output {
        Output::Stream {
            name: StreamName::Stdout,
            text: text.into(),
        }
    }

    const KEY: OutputKey = OutputKey { cell: 0, output: 0 };

    #[test]
    fn long_means_many_lines_or_many_bytes() {
        assert!(!is_long("short\n"));
        assert!(is_long(&"x\n".repeat(LONG_LINES + 1)));
        assert!(is_long(&"x".repeat(LONG_BYTES + 1)));
    }

    #[test]
    fn collapsed_shows_head_note_and_tail() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let output = stdout(text);
        let mut texts = LongTexts::default();
        texts.begin_frame();
        let theme = Theme::dark();
        let Some(indexed) = texts.index(KEY, &output) else {
            panic!("no index");
        };
        let rows: Vec<String> =
            collapsed_rows(&indexed, Style::new(), None, (80, "Ctrl+O"), &theme)
                .iter()
                .map(ToString::to_string)
                .collect();
        assert_eq!(rows.len(), HEAD_ROWS + 1 + TAIL_ROWS);
        assert_eq!(rows[0], "line 0");
        assert_eq!(rows[HEAD_ROWS - 1], "line 19");
        assert_eq!(
            rows[HEAD_ROWS],
            "… 1,000 lines, 9 kB in all — Ctrl+O opens them in the pager"
        );
        assert_eq!(rows[HEAD_ROWS + 1], "line 990");
        assert_eq!(rows.last().map(String::as_str), Some("line 999"));
    }

    /// Issue 27 item 11: a stream the pool cut shows the pool's marker line
    /// under the note (it sits among the rows left out), then the last rows.
    #[test]
    fn a_cut_stream_shows_the_pools_marker() {
        let head: String = (0..300).map(|i| format!("line {i}\n")).collect();
        let tail: String = (900..1000).map(|i| format!("line {i}\n")).collect();
        let marker = "[output truncated by the local pool: 11.9 MB printed; 3.9 MB (1 lines) dropped here, the first and last 4 MiB kept]";
        let output = stdout(format!("{head}{marker}\n{tail}"));
        let mut texts = LongTexts::default();
        texts.begin_frame();
        let theme = Theme::dark();
        let Some(indexed) = texts.index(KEY, &output) else {
            panic!("no index");
        };
        let rows: Vec<String> =
            collapsed_rows(&indexed, Style::new(), None, (200, "Ctrl+O"), &theme)
                .iter()
                .map(ToString::to_string)
                .collect();
        assert_eq!(rows.len(), HEAD_ROWS + 2 + TAIL_ROWS);
        assert_eq!(rows[HEAD_ROWS + 1], marker);
        assert_eq!(rows[HEAD_ROWS + 2], "line 990");
        assert_eq!(rows.last().map(String::as_str), Some("line 999"));
    }

    #[test]
    fn a_big_output_is_read_over_several_frames() {
        let output = stdout("0123456789abcdef\n".repeat(200_000));
        let mut texts = LongTexts::default();
        let mut frames = 0;
        loop {
            texts.begin_frame();
            frames += 1;
            let done = texts.index(KEY, &output).is_some_and(|i| i.complete);
            if done {
                break;
            }
            assert!(texts.pending());
        }
        assert!(frames > 3, "{frames}");
        texts.begin_frame();
        let _ = texts.index(KEY, &output);
        assert!(!texts.pending());
    }

    #[test]
    fn numbers_read_naturally() {
        assert_eq!(
            crate::protocol::service_limits::thousands(1_000_000),
            "1,000,000"
        );
        assert_eq!(crate::protocol::service_limits::thousands(999), "999");
        assert_eq!(crate::protocol::service_limits::thousands(-4096), "-4,096");
        assert_eq!(size(10_485_760), "10.5 MB");
        assert_eq!(size(65_536), "66 kB");
    }
}
