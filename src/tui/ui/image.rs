//! Images of cell outputs (plots): the decoded image of each output and the
//! ratatui-image protocol made from it for the current pane width, cached so a
//! redraw never decodes or resizes again. This slice renders with half-blocks
//! (`Picker::halfblocks()`: no terminal probing); graphics protocols come later.

use std::collections::HashMap;

use image::DynamicImage;
use image::imageops::FilterType;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use ratatui_image::picker::Picker;
use ratatui_image::protocol::Protocol;
use ratatui_image::{Image, Resize};

use crate::tui::event::DecodedImage;

/// Rows an image may take at most in the outputs pane.
pub const MAX_IMAGE_ROWS: u16 = 20;

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

enum Entry {
    Decoded {
        image: DynamicImage,
        /// The protocol for a pane of the given inner width.
        protocol: Option<(u16, Protocol)>,
    },
    Broken(String),
}

/// Every image of the notebook, decoded once.
pub struct ImageStore {
    picker: Picker,
    entries: HashMap<ImageKey, Entry>,
}

impl std::fmt::Debug for ImageStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageStore")
            .field("images", &self.entries.len())
            .finish()
    }
}

impl Default for ImageStore {
    fn default() -> Self {
        Self {
            picker: Picker::halfblocks(),
            entries: HashMap::new(),
        }
    }
}

impl ImageStore {
    /// Keeps the decoded image (or why it did not decode) of an output.
    pub fn insert(&mut self, key: ImageKey, decoded: DecodedImage) {
        let entry = match decoded {
            Ok(image) => Entry::Decoded {
                image,
                protocol: None,
            },
            Err(reason) => Entry::Broken(reason),
        };
        self.entries.insert(key, entry);
    }

    /// Prepares the image for a pane `width` columns wide and says how many rows it
    /// takes. The protocol is made once per width.
    pub fn layout(&mut self, key: ImageKey, width: u16) -> ImageLayout {
        let picker = &self.picker;
        match self.entries.get_mut(&key) {
            None => ImageLayout::Unavailable("image not decoded".into()),
            Some(Entry::Broken(reason)) => ImageLayout::Unavailable(reason.clone()),
            Some(Entry::Decoded { image, protocol }) => {
                if protocol.as_ref().is_none_or(|(w, _)| *w != width) {
                    let size = Rect::new(0, 0, width.max(1), MAX_IMAGE_ROWS);
                    let resize = Resize::Fit(Some(FilterType::Triangle));
                    match picker.new_protocol(image.clone(), size, resize) {
                        Ok(p) => *protocol = Some((width, p)),
                        Err(e) => return ImageLayout::Unavailable(e.to_string()),
                    }
                }
                match protocol {
                    Some((_, p)) => ImageLayout::Rows(p.area().height),
                    None => ImageLayout::Unavailable("no protocol".into()),
                }
            }
        }
    }

    /// Draws rows `first..first + area.height` of the image at `area` (the image may
    /// be partly scrolled out of the pane).
    pub fn render_rows(&self, key: ImageKey, first: u16, area: Rect, buf: &mut Buffer) {
        let Some(Entry::Decoded {
            protocol: Some((_, protocol)),
            ..
        }) = self.entries.get(&key)
        else {
            return;
        };
        let size = protocol.area();
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
}

#[cfg(test)]
mod tests {
    use image::{Rgba, RgbaImage};

    use super::*;

    fn sample() -> DynamicImage {
        DynamicImage::ImageRgba8(RgbaImage::from_pixel(200, 100, Rgba([255, 0, 0, 255])))
    }

    #[test]
    fn layout_fits_the_width_and_caps_rows() {
        let mut store = ImageStore::default();
        let key = ImageKey { cell: 0, output: 0 };
        store.insert(key, Ok(sample()));
        match store.layout(key, 10) {
            ImageLayout::Rows(rows) => assert!((1..=MAX_IMAGE_ROWS).contains(&rows)),
            other => panic!("{other:?}"),
        }
        let area = Rect::new(0, 0, 10, 2);
        let mut buf = Buffer::empty(area);
        store.render_rows(key, 1, area, &mut buf);
        let red = ratatui::style::Color::Rgb(255, 0, 0);
        assert_eq!(buf.cell((0, 0)).map(|c| c.bg), Some(red));
    }

    #[test]
    fn broken_images_say_why() {
        let mut store = ImageStore::default();
        let key = ImageKey { cell: 1, output: 2 };
        store.insert(key, Err("bad png".into()));
        assert_eq!(
            store.layout(key, 40),
            ImageLayout::Unavailable("bad png".into())
        );
    }
}
