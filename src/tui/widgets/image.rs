//! Images of cell outputs (plots) and of file previews: the decoded image of
//! each, and the ratatui-image protocols made from it, cached per (image, box:
//! pane width and most rows) so a redraw never resizes or encodes again. An
//! image is fitted inside its box whole, never cropped: outputs use
//! [`MAX_IMAGE_ROWS`], a file preview the rows of its pane.
//!
//! The protocol comes from the [`Picker`] probed once at start (`graphics.rs`):
//! kitty, sixel or iTerm2 where the terminal has them, half-blocks otherwise.
//! Resizing and encoding run off the UI task: drawing asks for what it lacks,
//! the loop hands those requests to blocking threads ([`ImageStore::dispatch`])
//! and the results come back as [`AppEvent::ImageEncoded`]; until then the
//! image's rows hold a placeholder. A store with no sender (tests, benches)
//! encodes inline instead.
//!
//! Scrolling: a graphics-protocol image is drawn only when all of it is on
//! screen, since it cannot be cut; one partly scrolled out of the pane is drawn
//! with half-blocks, row by row, so nothing of it is left behind as garbage.
//! Every result carries the generation of the image it was made from, so a late
//! result for an image since replaced (a new file preview) is dropped.
//!
//! [`AppEvent::ImageEncoded`]: crate::tui::event::AppEvent::ImageEncoded

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use image::DynamicImage;
use image::imageops::FilterType;
use ratatui::buffer::{Buffer, CellDiffOption};
use ratatui::layout::{Rect, Size};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Widget;
use ratatui_image::picker::{Picker, ProtocolType};
use ratatui_image::protocol::Protocol;
use ratatui_image::{FontSize, Image, Resize};

use crate::session::DecodedImage;
use crate::tui::event::AppEventSender;

/// Rows an image may take at most in the outputs pane.
pub const MAX_IMAGE_ROWS: u16 = 20;
/// Boxes kept per image (a resize back and forth does not encode again).
const KEPT_SIZES: usize = 4;
/// What the rows of an image say while it is being drawn.
const PLACEHOLDER: &str = "[drawing the image…]";

/// Which output of which cell an image belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImageKey {
    /// Index of the cell in the notebook.
    pub cell: usize,
    /// Index of the output in the cell.
    pub output: usize,
}

/// How an image takes space in the outputs pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageLayout {
    /// Drawn as a block of `rows` rows.
    Rows(u16),
    /// Cannot be drawn; say why instead.
    Unavailable(String),
}

/// Which of an image's two encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// The picker's protocol (kitty, sixel, iTerm2, or half-blocks).
    Main,
    /// Half-blocks, for an image partly scrolled out of view.
    Halfblocks,
}

/// A protocol made off the UI task, on its way back.
pub struct Encoded {
    key: ImageKey,
    generation: u64,
    width: u16,
    max_rows: u16,
    encoding: Encoding,
    result: Result<Protocol, String>,
}

impl std::fmt::Debug for Encoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoded")
            .field("key", &self.key)
            .field("generation", &self.generation)
            .field("width", &self.width)
            .field("encoding", &self.encoding)
            .field("ok", &self.result.is_ok())
            .finish_non_exhaustive()
    }
}

enum Slot {
    Missing,
    Pending,
    Ready(Protocol),
    Failed(String),
}

/// The encodings of one image for one box (width and most rows).
struct Sized {
    width: u16,
    max_rows: u16,
    /// Rows the image takes: estimated until the main encoding is ready.
    rows: u16,
    main: Slot,
    half: Slot,
    /// Whether the first cell of the image's graphics starts with
    /// [`RESEND`]: flipped each time the image must be sent to the terminal
    /// again (see [`ImageStore::settle`]), and kept until the next time.
    resend: bool,
}

enum Entry {
    Decoded {
        image: Arc<DynamicImage>,
        generation: u64,
        /// Newest last; at most [`KEPT_SIZES`].
        sizes: Vec<Sized>,
        /// The box (width, most rows) of the last layout (what
        /// `render_rows` draws).
        current: (u16, u16),
    },
    Broken(String),
}

/// The generations of decoded images, unique in the process.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(0);

/// An encoding to make.
struct Request {
    key: ImageKey,
    generation: u64,
    width: u16,
    max_rows: u16,
    encoding: Encoding,
    image: Arc<DynamicImage>,
}

/// Every image of the notebook (and the file preview), decoded once.
pub struct ImageStore {
    picker: Picker,
    entries: HashMap<ImageKey, Entry>,
    next_generation: u64,
    /// Where results go; `None`: encode inline.
    sender: Option<AppEventSender>,
    requests: Vec<Request>,
    /// The images drawn with a graphics protocol in the frame being composed,
    /// and where.
    drawn: Vec<(ImageKey, Rect)>,
    /// The images something else was drawn over in the last frame.
    covered: HashSet<ImageKey>,
}

impl std::fmt::Debug for ImageStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageStore")
            .field("protocol", &self.picker.protocol_type())
            .field("images", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl Default for ImageStore {
    fn default() -> Self {
        Self {
            picker: Picker::halfblocks(),
            entries: HashMap::new(),
            next_generation: 0,
            sender: None,
            requests: Vec::new(),
            drawn: Vec::new(),
            covered: HashSet::new(),
        }
    }
}

/// Makes one encoding of `image` for a pane `width` columns wide.
fn encode(
    picker: &Picker,
    image: DynamicImage,
    width: u16,
    max_rows: u16,
) -> Result<Protocol, String> {
    let size = Size::new(width.max(1), max_rows.max(1));
    picker
        .new_protocol(image, size, Resize::Fit(Some(FilterType::Triangle)))
        .map_err(|e| e.to_string())
}

/// Rows an image of `w` x `h` pixels takes, fitted (never enlarged) into `width`
/// columns and `max_rows` rows of `font` (cell width, height) pixels, the way
/// ratatui-image fits it (up to rounding).
fn estimate_rows(w: u32, h: u32, font: FontSize, width: u16, max_rows: u16) -> u16 {
    let (fw, fh) = (f64::from(font.width.max(1)), f64::from(font.height.max(1)));
    let (w, h) = (f64::from(w.max(1)), f64::from(h.max(1)));
    let max_rows = max_rows.max(1);
    let box_w = f64::from(width.max(1)) * fw;
    let box_h = f64::from(max_rows) * fh;
    let scale = (box_w / w).min(box_h / h).min(1.0);
    let rows = (h * scale / fh).ceil();
    // In range by construction: at most max_rows.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rows = rows.clamp(1.0, f64::from(max_rows)) as u16;
    rows
}

impl ImageStore {
    /// An empty store drawing with the same protocol and sending its
    /// encodings the same way: for another notebook on the same terminal.
    #[must_use]
    pub fn sibling(&self) -> Self {
        Self {
            picker: self.picker.clone(),
            sender: self.sender.clone(),
            ..Self::default()
        }
    }

    /// From now on encodings run off the UI task and come back through `sender`.
    pub fn connect(&mut self, sender: AppEventSender) {
        self.sender = Some(sender);
    }

    /// Uses `picker` (the probed protocol) from now on: every encoding is made
    /// again. The caller must lay the notebook out again (rows may change).
    pub fn set_picker(&mut self, picker: Picker) {
        self.picker = picker;
        for entry in self.entries.values_mut() {
            if let Entry::Decoded { sizes, .. } = entry {
                sizes.clear();
            }
        }
        self.requests.clear();
    }

    /// The protocol images are drawn with.
    pub fn protocol(&self) -> ProtocolType {
        self.picker.protocol_type()
    }

    fn graphics(&self) -> bool {
        self.picker.protocol_type() != ProtocolType::Halfblocks
    }

    /// Keeps the decoded image (or why it did not decode) of an output,
    /// replacing (and forgetting the encodings of) any image under `key`.
    pub fn insert(&mut self, key: ImageKey, decoded: DecodedImage) {
        let entry = match decoded {
            Ok(image) => {
                // Unique across stores: a late encoding for another
                // notebook's image under the same key is dropped.
                self.next_generation = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed) + 1;
                Entry::Decoded {
                    image: Arc::new(image),
                    generation: self.next_generation,
                    sizes: Vec::new(),
                    current: (0, 0),
                }
            }
            Err(reason) => Entry::Broken(reason),
        };
        self.entries.insert(key, entry);
    }

    /// Prepares the image for a pane `width` columns wide and says how many rows it
    /// takes (an estimate while its encoding is being made).
    pub fn layout(&mut self, key: ImageKey, width: u16) -> ImageLayout {
        self.layout_in(key, width, MAX_IMAGE_ROWS)
    }

    /// As [`ImageStore::layout`], fitted into `max_rows` rows instead of
    /// [`MAX_IMAGE_ROWS`] (a file preview fits its pane): the whole image,
    /// scaled down, never cropped.
    pub fn layout_in(&mut self, key: ImageKey, width: u16, max_rows: u16) -> ImageLayout {
        let max_rows = max_rows.max(1);
        let font = self.picker.font_size();
        let inline = self.sender.is_none();
        let Some(entry) = self.entries.get_mut(&key) else {
            return ImageLayout::Unavailable("image not decoded".into());
        };
        let (image, generation, sizes, current) = match entry {
            Entry::Broken(reason) => return ImageLayout::Unavailable(reason.clone()),
            Entry::Decoded {
                image,
                generation,
                sizes,
                current,
            } => (image, *generation, sizes, current),
        };
        *current = (width, max_rows);
        let index = match sizes
            .iter()
            .position(|s| (s.width, s.max_rows) == (width, max_rows))
        {
            Some(i) => i,
            None => {
                if sizes.len() >= KEPT_SIZES {
                    sizes.remove(0);
                }
                sizes.push(Sized {
                    width,
                    max_rows,
                    rows: estimate_rows(image.width(), image.height(), font, width, max_rows),
                    main: Slot::Missing,
                    half: Slot::Missing,
                    resend: false,
                });
                sizes.len() - 1
            }
        };
        let entry = &mut sizes[index];
        if matches!(entry.main, Slot::Missing) {
            if inline {
                let result = encode(&self.picker, (**image).clone(), width, max_rows);
                fill(entry, Encoding::Main, result);
            } else {
                entry.main = Slot::Pending;
                self.requests.push(Request {
                    key,
                    generation,
                    width,
                    max_rows,
                    encoding: Encoding::Main,
                    image: image.clone(),
                });
            }
        }
        match &entry.main {
            Slot::Failed(reason) => ImageLayout::Unavailable(reason.clone()),
            _ => ImageLayout::Rows(entry.rows),
        }
    }

    /// Draws rows `first..first + area.height` of the image at `area` (the image
    /// may be partly scrolled out of the pane), at the width of its last layout.
    pub fn render_rows(&mut self, key: ImageKey, first: u16, area: Rect, buf: &mut Buffer) {
        let graphics = self.graphics();
        let inline = self.sender.is_none();
        let Some(Entry::Decoded {
            image,
            generation,
            sizes,
            current,
        }) = self.entries.get_mut(&key)
        else {
            return;
        };
        let Some(sized) = sizes.iter_mut().find(|s| (s.width, s.max_rows) == *current) else {
            return;
        };
        let whole = first == 0 && area.height >= sized.rows;
        if graphics
            && whole
            && let Slot::Ready(protocol) = &sized.main
        {
            let size = protocol.size();
            let at = Rect::new(area.x, area.y, size.width.min(area.width), size.height);
            Image::new(protocol).render(at, buf);
            if sized.resend {
                flip_resend(at, buf);
            }
            self.drawn.push((key, at));
            return;
        }
        // Half-blocks: the main encoding when that is what the picker makes,
        // else the fallback for an image partly out of view.
        let encoding = if graphics {
            Encoding::Halfblocks
        } else {
            Encoding::Main
        };
        let slot = match encoding {
            Encoding::Main => &mut sized.main,
            Encoding::Halfblocks => &mut sized.half,
        };
        if matches!(slot, Slot::Missing) {
            if inline {
                let mut half = self.picker.clone();
                half.set_protocol_type(ProtocolType::Halfblocks);
                *slot = match encode(&half, (**image).clone(), sized.width, sized.max_rows) {
                    Ok(p) => Slot::Ready(p),
                    Err(e) => Slot::Failed(e),
                };
            } else {
                *slot = Slot::Pending;
                self.requests.push(Request {
                    key,
                    generation: *generation,
                    width: sized.width,
                    max_rows: sized.max_rows,
                    encoding,
                    image: image.clone(),
                });
            }
        }
        if let Slot::Ready(protocol) = slot {
            copy_rows(protocol, first, area, buf);
        } else {
            placeholder(first, area, buf);
        }
    }

    /// Starts the encodings drawing asked for, each on a blocking thread; their
    /// results come back as events. Called by the loop after each frame.
    pub fn dispatch(&mut self) {
        let Some(sender) = &self.sender else {
            self.requests.clear();
            return;
        };
        for request in self.requests.drain(..) {
            let mut picker = self.picker.clone();
            if request.encoding == Encoding::Halfblocks {
                picker.set_protocol_type(ProtocolType::Halfblocks);
            }
            let sender = sender.clone();
            tokio::task::spawn_blocking(move || {
                let result = encode(
                    &picker,
                    (*request.image).clone(),
                    request.width,
                    request.max_rows,
                );
                sender.image_encoded(Encoded {
                    key: request.key,
                    generation: request.generation,
                    width: request.width,
                    max_rows: request.max_rows,
                    encoding: request.encoding,
                    result,
                });
            });
        }
    }

    /// Takes an encoding made off the UI task. Returns the image's key when its
    /// row count changed (the cell must be laid out again); a result for an image
    /// since replaced, or a width no longer kept, is dropped.
    pub fn encoded(&mut self, done: Encoded) -> Option<ImageKey> {
        let Some(Entry::Decoded {
            generation, sizes, ..
        }) = self.entries.get_mut(&done.key)
        else {
            return None;
        };
        if *generation != done.generation {
            return None;
        }
        let sized = sizes
            .iter_mut()
            .find(|s| (s.width, s.max_rows) == (done.width, done.max_rows))?;
        let before = (sized.rows, matches!(sized.main, Slot::Failed(_)));
        fill(sized, done.encoding, done.result);
        let after = (sized.rows, matches!(sized.main, Slot::Failed(_)));
        (before != after).then_some(done.key)
    }
}

/// Puts an encoding into its slot; the main one fixes the row count.
fn fill(sized: &mut Sized, encoding: Encoding, result: Result<Protocol, String>) {
    let slot = match result {
        Ok(protocol) => {
            if encoding == Encoding::Main {
                sized.rows = protocol.size().height.max(1);
            }
            Slot::Ready(protocol)
        }
        Err(reason) => Slot::Failed(reason),
    };
    match encoding {
        Encoding::Main => sized.main = slot,
        Encoding::Halfblocks => sized.half = slot,
    }
}

/// Copies rows `first..` of a half-blocks protocol into `area`.
fn copy_rows(protocol: &Protocol, first: u16, area: Rect, buf: &mut Buffer) {
    let size = protocol.size();
    let full = Rect::new(0, 0, size.width, size.height);
    let mut scratch = Buffer::empty(full);
    Image::new(protocol).render(full, &mut scratch);
    for dy in 0..area.height {
        let sy = first + dy;
        if sy >= size.height {
            break;
        }
        for dx in 0..size.width.min(area.width) {
            if let (Some(src), Some(dst)) = (
                scratch.cell((dx, sy)),
                buf.cell_mut((area.x + dx, area.y + dy)),
            ) {
                *dst = src.clone();
            }
        }
    }
}

/// A no-op (save the cursor, restore it) put before an image's escape
/// sequence to make its first cell differ from the last frame's, so that
/// ratatui's diff sends the image again.
const RESEND: &str = "\x1b7\x1b8";

/// Puts [`RESEND`] before the escape sequence in the first cell of the image
/// drawn at `area`, or takes it away. The cell keeps its diff option (one
/// column wide).
fn flip_resend(area: Rect, buf: &mut Buffer) {
    let Some(cell) = buf.cell_mut((area.x, area.y)) else {
        return;
    };
    let symbol = match cell.symbol().strip_prefix(RESEND) {
        Some(rest) => rest.to_string(),
        None => format!("{RESEND}{}", cell.symbol()),
    };
    cell.set_symbol(&symbol);
}

impl ImageStore {
    /// Called once the whole frame is composed, overlays included, before
    /// ratatui's diff: sends again each image that something was drawn over in
    /// the last frame and nothing is now.
    ///
    /// ratatui-image marks the cells an image covers, but its first, to be
    /// skipped by the diff (the terminal keeps the picture there), so what an
    /// overlay drew over part of an image stays on the terminal when the
    /// overlay closes, as long as the image's first cell is unchanged: the help
    /// stayed over a sixel plot in xterm (issue 23). An image is covered when
    /// any of its cells was written since it was drawn (a widget that writes a
    /// cell resets it first, as `Clear` and blocks do).
    pub fn settle(&mut self, buf: &mut Buffer) {
        let covered_before = std::mem::take(&mut self.covered);
        for (key, area) in std::mem::take(&mut self.drawn) {
            let intact = area.positions().all(|at| {
                buf.cell(at)
                    .is_some_and(|c| c.diff_option != CellDiffOption::None)
            });
            if !intact {
                self.covered.insert(key);
            } else if covered_before.contains(&key) {
                if let Some(Entry::Decoded { sizes, current, .. }) = self.entries.get_mut(&key)
                    && let Some(sized) =
                        sizes.iter_mut().find(|s| (s.width, s.max_rows) == *current)
                {
                    sized.resend = !sized.resend;
                }
                flip_resend(area, buf);
            }
        }
    }
}

/// What an image's rows show while its encoding is being made.
fn placeholder(first: u16, area: Rect, buf: &mut Buffer) {
    if first == 0 && area.height > 0 {
        let line = Line::styled(PLACEHOLDER, Style::new().dim());
        buf.set_line(area.x, area.y, &line, area.width);
    }
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
