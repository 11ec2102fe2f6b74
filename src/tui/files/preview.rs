//! The preview of a file from `/mnt/data`, built from its first bytes: text
//! highlighted by extension, CSV and TSV as a table of the first rows, JSON
//! pretty-printed, PNG/JPEG/GIF decoded into an image for the image path, and
//! anything else as a hex head; with a note when only the start of a large file
//! is shown.
//!
//! File contents are untrusted (an agent, or a hostile pool, wrote them): every
//! string taken from the file or its name goes through [`sanitize`] before it
//! becomes a [`Line`], so no escape sequence or control character reaches the
//! terminal. Building is pure CPU work (highlighting, image decoding) with no
//! I/O: do it off the UI task (the session worker or a blocking task) and hand
//! the [`Preview`] to the view, which only draws it.

use std::fmt::Write as _;
use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Paragraph, Widget};

use crate::session::FileHead;
use crate::session::radar::{ArtifactKind, content_type_essence, extension, kind_of};
use crate::tui::theme::Theme;
use crate::tui::widgets::fit::{self, human_size};
use crate::tui::widgets::sanitize;

/// The most of a file a text, table or hex preview looks at: 64 KiB.
pub const PREVIEW_BYTES: usize = 64 * 1024;
/// The most of a file decoded as an image (images cannot be shown from their
/// first bytes): 16 MiB. Fetch the whole file up to this size for images.
pub const IMAGE_BYTES: usize = 16 * 1024 * 1024;
/// How many bytes of file `name` (with the listing's `content_type`) a
/// preview needs: the whole image up to [`IMAGE_BYTES`], else
/// [`PREVIEW_BYTES`].
pub fn head_limit(name: &str, content_type: Option<&str>) -> usize {
    match kind_of(name, content_type) {
        Some(ArtifactKind::Image) => IMAGE_BYTES,
        _ => PREVIEW_BYTES,
    }
}

/// A preview to build from a file's head, off the UI task
/// ([`crate::tui::action::Effect::BuildPreview`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewJob {
    /// The generation of the preview request (stale results are dropped).
    pub generation: u64,
    /// The file's first bytes and what its listing said.
    pub head: FileHead,
    /// Columns the preview will be drawn in.
    pub width: u16,
    /// Rows of content to keep.
    pub height: u16,
    /// False under `NO_COLOR`.
    pub colors: bool,
}

impl PreviewJob {
    /// Builds the preview (CPU work: decoding, highlighting; run it on a
    /// blocking thread).
    pub fn build(&self) -> Preview {
        Preview::build(&PreviewRequest {
            name: &self.head.name,
            content_type: self.head.content_type.as_deref(),
            bytes: &self.head.bytes,
            total_size: self.head.size,
            width: self.width,
            height: self.height,
            colors: self.colors,
        })
    }
}

/// Bytes per row of the hex head.
pub const HEX_ROW: usize = 16;

/// Largest width or height of an image the preview decodes, in pixels.
const MAX_IMAGE_SIDE: u32 = 8192;
/// Largest allocation an image decoder may make (guards against bombs).
const MAX_IMAGE_ALLOC: u64 = 256 * 1024 * 1024;
/// Characters of one line kept for highlighting (the view cuts at its width
/// anyway; this bounds syntect's work on minified files).
const MAX_LINE_CHARS: usize = 1000;
/// Deepest JSON indentation shown (deeper levels stay at this indent).
const MAX_JSON_DEPTH: usize = 24;

/// What the caller knows of the file to preview.
#[derive(Debug, Clone, Copy)]
pub struct PreviewRequest<'a> {
    /// The remote name (untrusted; shown sanitised).
    pub name: &'a str,
    /// The content type the listing gave, if any.
    pub content_type: Option<&'a str>,
    /// The file's first bytes: at least [`PREVIEW_BYTES`] when the file is that
    /// large; the whole file (up to [`IMAGE_BYTES`]) for an image.
    pub bytes: &'a [u8],
    /// The file's size, when known (for the "first N of M" note).
    pub total_size: Option<u64>,
    /// Columns the preview will be drawn in (tables are fitted to it).
    pub width: u16,
    /// Rows of content to keep (text lines, table rows, hex rows).
    pub height: u16,
    /// False under `NO_COLOR`: no syntax colours.
    pub colors: bool,
}

/// A file's preview, ready to draw.
#[derive(Debug, Clone)]
pub struct Preview {
    /// The file name, sanitised.
    pub name: String,
    /// What is shown.
    pub body: Body,
    /// What was left out (`first 64 KiB of 3.2 MiB shown`), if anything.
    pub note: Option<String>,
}

/// What a preview shows.
#[derive(Debug, Clone)]
pub enum Body {
    /// The file has no bytes.
    Empty,
    /// Text (highlighted when the extension is known) or pretty-printed JSON.
    Text(Vec<Line<'static>>),
    /// Delimited data: the first row as the header, then the next rows.
    Table(TablePreview),
    /// A decoded image, for the caller's image path (this view only shows a
    /// placeholder line).
    Image(ImageInfo),
    /// A hex head of binary data: offset, hex and ASCII, [`HEX_ROW`] bytes a row.
    Hex(Vec<u8>),
}

/// A decoded image and what it was.
#[derive(Debug, Clone)]
pub struct ImageInfo {
    /// The decoded image.
    pub image: DynamicImage,
    /// `PNG`, `JPEG` or `GIF`.
    pub format: &'static str,
}

/// The first rows of a CSV or TSV file, each cell sanitised and on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TablePreview {
    /// The rows; the first is shown as the header.
    pub rows: Vec<Vec<String>>,
    /// The column widths, fitted to the requested width where possible.
    pub widths: Vec<usize>,
}

impl Preview {
    /// Builds the preview of a file (see the module docs for the kinds).
    pub fn build(req: &PreviewRequest<'_>) -> Self {
        let name = crate::text::names::escape(req.name);
        let head = &req.bytes[..req.bytes.len().min(PREVIEW_BYTES)];
        let total = req
            .total_size
            .unwrap_or(req.bytes.len() as u64)
            .max(req.bytes.len() as u64);
        // Without a size, a full 64 KiB head may be the start of something larger.
        let complete = head.len() as u64 == total
            && (req.total_size.is_some() || req.bytes.len() < PREVIEW_BYTES);
        let mut notes = Vec::new();
        let body = body(req, head, complete, &mut notes);
        match &body {
            Body::Image(_) => {}
            Body::Hex(shown) if shown.len() < head.len() || !complete => {
                notes.insert(0, bytes_note(shown.len(), req.total_size));
            }
            _ if !complete => notes.insert(0, bytes_note(head.len(), req.total_size)),
            _ => {}
        }
        Self {
            name,
            body,
            note: (!notes.is_empty()).then(|| notes.join(" · ")),
        }
    }

    /// The decoded image, when the preview is one.
    pub fn image(&self) -> Option<&DynamicImage> {
        match &self.body {
            Body::Image(info) => Some(&info.image),
            _ => None,
        }
    }

    /// The preview as styled text, the note last.
    pub fn text(&self, theme: &Theme) -> Text<'static> {
        let mut lines = match &self.body {
            Body::Empty => vec![Line::styled("(empty file)", theme.muted)],
            Body::Text(lines) => lines.clone(),
            Body::Table(table) => table_lines(table, theme),
            Body::Image(info) => vec![Line::styled(
                format!(
                    "{} image, {} × {} pixels",
                    info.format,
                    info.image.width(),
                    info.image.height()
                ),
                theme.muted,
            )],
            Body::Hex(bytes) => hex_lines(bytes, theme),
        };
        if let Some(note) = &self.note {
            lines.push(Line::styled(format!("({note})"), theme.muted));
        }
        Text::from(lines)
    }

    /// Draws the preview in a bordered block titled with the file name,
    /// scrolled down by `scroll` rows. Lines wider than the area are cut.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, scroll: u16) {
        let title = format!(
            " {} ",
            fit::truncate(&self.name, usize::from(area.width.saturating_sub(4)))
        );
        let block = Block::bordered()
            .border_style(theme.border)
            .title(Span::styled(title, theme.accent));
        Paragraph::new(self.text(theme))
            .block(block)
            .scroll((scroll, 0))
            .render(area, buf);
    }
}

/// `first 64 KiB of 3.2 MiB shown`, or `first 64 KiB shown` without a size.
fn bytes_note(shown: usize, total: Option<u64>) -> String {
    let shown = human_size(shown as u64);
    match total {
        Some(total) => format!("first {shown} of {} shown", human_size(total)),
        None => format!("first {shown} shown"),
    }
}

/// Chooses and builds the body; pushes notes about what was left out.
fn body(req: &PreviewRequest<'_>, head: &[u8], complete: bool, notes: &mut Vec<String>) -> Body {
    if req.bytes.is_empty() {
        return Body::Empty;
    }
    let rows = usize::from(req.height.max(1));
    if let Some(format) = image_format(req.bytes) {
        match decode_image(req.bytes, format) {
            Ok(image) => {
                return Body::Image(ImageInfo {
                    image,
                    format: format_name(format),
                });
            }
            Err(e) => notes.push(format!(
                "{} image not decoded: {}",
                format_name(format),
                sanitize::plain(&e).replace('\n', " ")
            )),
        }
        return hex_body(head, rows);
    }
    let Some(text) = as_text(head, complete) else {
        return hex_body(head, rows);
    };
    let ext = extension(req.name);
    let essence = req.content_type.map(content_type_essence);
    if let Some(delimiter) = delimiter_of(ext.as_deref(), essence.as_deref())
        && let Some(table) = table(
            text,
            delimiter,
            complete,
            rows,
            usize::from(req.width),
            notes,
        )
    {
        return Body::Table(table);
    }
    if is_json(ext.as_deref(), essence.as_deref()) {
        let valid = !complete || serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
        if valid {
            let pretty = pretty_json(text, rows);
            return Body::Text(text_lines(&pretty, Some("json"), rows, req.colors, notes));
        }
        notes.push("not valid JSON; shown as text".into());
    }
    Body::Text(text_lines(text, ext.as_deref(), rows, req.colors, notes))
}

/// The hex body of the first `rows` rows of `head` (the caller notes the cut).
fn hex_body(head: &[u8], rows: usize) -> Body {
    let keep = head.len().min(rows.saturating_mul(HEX_ROW));
    Body::Hex(head[..keep].to_vec())
}

// ---- images ----------------------------------------------------------------

/// The image format of `bytes` by its magic number, when it is one this
/// preview decodes.
fn image_format(bytes: &[u8]) -> Option<ImageFormat> {
    match image::guess_format(bytes) {
        Ok(f @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif)) => Some(f),
        _ => None,
    }
}

fn format_name(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "PNG",
        ImageFormat::Jpeg => "JPEG",
        ImageFormat::Gif => "GIF",
        _ => "image",
    }
}

/// Decodes with limits on size and memory, so a small hostile file cannot ask
/// for gigabytes.
fn decode_image(bytes: &[u8], format: ImageFormat) -> Result<DynamicImage, String> {
    let bytes = &bytes[..bytes.len().min(IMAGE_BYTES)];
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(MAX_IMAGE_ALLOC);
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits);
    reader.decode().map_err(|e| e.to_string())
}

// ---- text ------------------------------------------------------------------

/// `head` as UTF-8 text, or `None` when it looks binary (a NUL byte, invalid
/// UTF-8, or many control characters). A character cut by the end of a partial
/// head is dropped.
fn as_text(head: &[u8], complete: bool) -> Option<&str> {
    if head.contains(&0) {
        return None;
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) if !complete && e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).ok()?
        }
        Err(_) => return None,
    };
    let odd = text
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x1b' | '\x0c'))
        .count();
    (odd * 20 <= text.chars().count()).then_some(text)
}

/// The first `rows` lines of sanitised `text`, highlighted for `ext` when it is
/// known and `colors`.
fn text_lines(
    text: &str,
    ext: Option<&str>,
    rows: usize,
    colors: bool,
    notes: &mut Vec<String>,
) -> Vec<Line<'static>> {
    let clean = sanitize::plain(text);
    let clean = clean.strip_suffix('\n').unwrap_or(&clean);
    let all = clean.split('\n').count();
    let kept: Vec<String> = clean
        .split('\n')
        .take(rows)
        .map(|l| l.chars().take(MAX_LINE_CHARS).collect())
        .collect();
    if all > rows {
        notes.push(format!("first {rows} lines shown"));
    }
    if colors && let Some(lines) = crate::tui::widgets::highlight::highlight_as(&kept, ext) {
        return lines;
    }
    kept.into_iter().map(Line::raw).collect()
}

// ---- JSON ------------------------------------------------------------------

fn is_json(ext: Option<&str>, essence: Option<&str>) -> bool {
    matches!(ext, Some("json" | "ipynb" | "geojson"))
        || essence.is_some_and(|e| e == "application/json" || e.ends_with("+json"))
}

/// Re-indents JSON text token by token, keeping the members in file order and
/// working on a truncated head too. Stops after `max_lines` lines, so a deeply
/// nested or huge file costs no more than what is shown.
pub fn pretty_json(src: &str, max_lines: usize) -> String {
    let mut out = String::with_capacity(src.len().min(PREVIEW_BYTES) * 2);
    let mut depth = 0usize;
    let mut lines = 1usize;
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = src.chars().peekable();
    let newline = |out: &mut String, depth: usize, lines: &mut usize| {
        out.push('\n');
        *lines += 1;
        out.extend(std::iter::repeat_n(' ', 2 * depth.min(MAX_JSON_DEPTH)));
    };
    while let Some(c) = chars.next() {
        if lines > max_lines {
            break;
        }
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                while chars.peek().is_some_and(|n| n.is_whitespace()) {
                    chars.next();
                }
                let close = if c == '{' { '}' } else { ']' };
                out.push(c);
                if chars.peek() == Some(&close) {
                    chars.next();
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth, &mut lines);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth, &mut lines);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth, &mut lines);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

// ---- hex -------------------------------------------------------------------

/// `hexdump -C` rows: `00000010  89 50 4e 47 0d 0a 1a 0a  00 00 …  |.PNG....|`.
fn hex_lines(bytes: &[u8], theme: &Theme) -> Vec<Line<'static>> {
    bytes
        .chunks(HEX_ROW)
        .enumerate()
        .map(|(row, chunk)| {
            let mut hex = String::with_capacity(HEX_ROW * 3 + 1);
            for i in 0..HEX_ROW {
                if i == HEX_ROW / 2 {
                    hex.push(' ');
                }
                match chunk.get(i) {
                    Some(b) => {
                        let _ = write!(hex, "{b:02x} ");
                    }
                    None => hex.push_str("   "),
                }
            }
            let ascii: String = chunk
                .iter()
                .map(|&b| {
                    if b.is_ascii_graphic() || b == b' ' {
                        char::from(b)
                    } else {
                        '.'
                    }
                })
                .collect();
            Line::from(vec![
                Span::styled(format!("{:08x}  ", row * HEX_ROW), theme.muted),
                Span::raw(hex),
                Span::styled(format!(" |{ascii}|"), theme.muted),
            ])
        })
        .collect()
}

#[path = "preview_table.rs"]
mod table;
use table::{delimiter_of, table, table_lines};

#[cfg(test)]
#[path = "preview_tests.rs"]
mod tests;
