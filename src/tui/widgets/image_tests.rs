//! The image cache: layout and drawing inline (no sender), encodings made off the
//! UI task and matched back by generation, and graphics protocols drawn only
//! when the whole image is on screen.

use image::{Rgba, RgbaImage};
use ratatui_image::picker::{Picker, ProtocolType};

use super::*;
use crate::tui::event::AppEvent;

fn sample() -> DynamicImage {
    DynamicImage::ImageRgba8(RgbaImage::from_pixel(200, 100, Rgba([255, 0, 0, 255])))
}

const KEY: ImageKey = ImageKey { cell: 0, output: 0 };

fn rows(layout: ImageLayout) -> u16 {
    match layout {
        ImageLayout::Rows(rows) => rows,
        other @ ImageLayout::Unavailable(_) => panic!("{other:?}"),
    }
}

#[test]
fn layout_fits_the_width_and_caps_rows() {
    let mut store = ImageStore::default();
    store.insert(KEY, Ok(sample()));
    let n = rows(store.layout(KEY, 10));
    assert!((1..=MAX_IMAGE_ROWS).contains(&n));
    let area = Rect::new(0, 0, 10, 2);
    let mut buf = Buffer::empty(area);
    store.render_rows(KEY, 1, area, &mut buf);
    let red = ratatui::style::Color::Rgb(255, 0, 0);
    assert_eq!(buf.cell((0, 0)).map(|c| c.bg), Some(red));
}

/// A tall image: white, with its bottom eighth blue.
fn tall() -> DynamicImage {
    let mut image = RgbaImage::from_pixel(100, 800, Rgba([255, 255, 255, 255]));
    for y in 700..800 {
        for x in 0..100 {
            image.put_pixel(x, y, Rgba([0, 0, 255, 255]));
        }
    }
    DynamicImage::ImageRgba8(image)
}

#[test]
fn a_box_of_few_rows_gets_the_whole_image_scaled_down_never_cropped() {
    let mut store = ImageStore::default();
    store.insert(KEY, Ok(tall()));
    // The outputs' box: the image is cut to MAX_IMAGE_ROWS there.
    assert_eq!(rows(store.layout(KEY, 40)), MAX_IMAGE_ROWS);
    // A preview of 6 rows: the whole image in 6 rows, its bottom drawn.
    let n = rows(store.layout_in(KEY, 40, 6));
    assert!((1..=6).contains(&n), "{n}");
    let area = Rect::new(0, 0, 40, 6);
    let mut buf = Buffer::empty(area);
    store.render_rows(KEY, 0, area, &mut buf);
    let blue = |c: ratatui::style::Color| matches!(c, ratatui::style::Color::Rgb(r, g, b) if b > 150 && r < 100 && g < 100);
    let last = n - 1;
    assert!(
        (0..40).any(|x| buf
            .cell((x, last))
            .is_some_and(|c| blue(c.fg) || blue(c.bg))),
        "the bottom of the image is in its last row"
    );
    // Both boxes stay cached: going back to the outputs' box does not encode again.
    assert_eq!(rows(store.layout(KEY, 40)), MAX_IMAGE_ROWS);
    assert_eq!(rows(store.layout_in(KEY, 40, 6)), n);
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

#[test]
fn the_estimate_matches_what_ratatui_image_makes() {
    for (w, h, width) in [
        (200, 100, 10),
        (640, 480, 80),
        (50, 400, 100),
        (30, 20, 100),
    ] {
        let image = DynamicImage::ImageRgba8(RgbaImage::new(w, h));
        let made =
            encode(&Picker::halfblocks(), image, width, MAX_IMAGE_ROWS).map(|p| p.size().height);
        let estimate = estimate_rows(
            w,
            h,
            Picker::halfblocks().font_size(),
            width,
            MAX_IMAGE_ROWS,
        );
        assert_eq!(made.ok(), Some(estimate), "{w}x{h} in {width} columns");
    }
}

fn kitty() -> Picker {
    let mut picker = Picker::halfblocks();
    picker.set_protocol_type(ProtocolType::Kitty);
    picker
}

fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width)
        .filter_map(|x| buf.cell((x, y)).map(|c| c.symbol().to_string()))
        .collect()
}

#[test]
fn graphics_only_when_whole_and_half_blocks_when_cut() {
    let mut store = ImageStore::default();
    store.set_picker(kitty());
    store.insert(KEY, Ok(sample()));
    let n = rows(store.layout(KEY, 10));
    // All rows on screen: the kitty protocol (its escape sequence is in a cell).
    let area = Rect::new(0, 0, 10, n);
    let mut buf = Buffer::empty(area);
    store.render_rows(KEY, 0, area, &mut buf);
    assert!(
        row_text(&buf, 0).contains("\x1b_G"),
        "{:?}",
        row_text(&buf, 0)
    );
    // Scrolled by a row: half-blocks, no escape sequence at all.
    let cut = Rect::new(0, 0, 10, n - 1);
    let mut buf = Buffer::empty(cut);
    store.render_rows(KEY, 1, cut, &mut buf);
    let text: String = (0..cut.height).map(|y| row_text(&buf, y)).collect();
    assert!(!text.contains('\x1b'), "{text:?}");
    let red = ratatui::style::Color::Rgb(255, 0, 0);
    assert_eq!(buf.cell((0, 0)).map(|c| c.bg), Some(red), "half-blocks");
    // Cut at the bottom of the pane: half-blocks too.
    let mut buf = Buffer::empty(cut);
    store.render_rows(KEY, 0, cut, &mut buf);
    let text: String = (0..cut.height).map(|y| row_text(&buf, y)).collect();
    assert!(!text.contains('\x1b'), "{text:?}");
}

/// The kitty image id a frame transmits (`i=ID,a=T`), if any.
fn transmitted_id(text: &str) -> Option<u32> {
    let rest = &text[text.find("\x1b_G")?..];
    let rest = &rest[rest.find("i=")? + 2..];
    rest[..rest.find(',')?].parse().ok()
}

/// The kitty image id the Unicode placeholder in a frame's first cell names:
/// its foreground colour holds the low 24 bits, a third diacritic the high 8.
fn placeholder_id(buf: &Buffer) -> u32 {
    let cell = buf.cell((0, 0)).expect("a first cell");
    let ratatui::style::Color::Rgb(r, g, b) = cell.fg else {
        panic!("no image id in {cell:?}");
    };
    u32::from_be_bytes([0, r, g, b])
}

/// The files pane narrows the outputs and widens them again when it closes
/// (F2 twice). With kitty nothing is sent again then, and nothing needs to
/// be: the full-width encoding kept in the cache draws placeholders naming
/// the image id it transmitted before, which sessionpad never deletes (no
/// `a=d`) and kitty keeps through screen clears (a virtual placement, `U=1`).
#[test]
fn with_kitty_a_width_met_again_names_the_image_it_sent_before() {
    let mut store = ImageStore::default();
    store.set_picker(kitty());
    store.insert(KEY, Ok(sample()));
    let mut frame = |width: u16| {
        let n = rows(store.layout(KEY, width));
        let area = Rect::new(0, 0, width, n);
        let mut buf = Buffer::empty(area);
        store.render_rows(KEY, 0, area, &mut buf);
        let text: String = (0..n).map(|y| row_text(&buf, y)).collect();
        assert!(!text.contains("a=d"), "an image deleted: {text:?}");
        (transmitted_id(&text), placeholder_id(&buf) & 0x00ff_ffff)
    };
    let (wide, wide_named) = frame(10);
    let wide = wide.expect("the first frame transmits the image");
    assert_eq!(wide_named, wide & 0x00ff_ffff);
    let (narrow, narrow_named) = frame(6);
    let narrow = narrow.expect("the narrow box is a new image");
    assert_ne!(narrow, wide);
    assert_eq!(narrow_named, narrow & 0x00ff_ffff);
    let (again, again_named) = frame(10);
    assert_eq!(again, None, "nothing transmitted again");
    assert_eq!(again_named, wide & 0x00ff_ffff, "the image sent first");
}

#[tokio::test]
async fn encodings_are_made_off_the_ui_task_and_stale_ones_dropped() {
    let (sender, mut events) = AppEventSender::channel();
    let mut store = ImageStore::default();
    store.connect(sender);
    store.insert(KEY, Ok(sample()));
    let n = rows(store.layout(KEY, 10));
    // Nothing encoded yet: the rows hold a placeholder.
    let area = Rect::new(0, 0, 20, n);
    let mut buf = Buffer::empty(area);
    store.render_rows(KEY, 0, area, &mut buf);
    assert!(row_text(&buf, 0).starts_with(PLACEHOLDER));
    store.dispatch();
    let Some(AppEvent::ImageEncoded(done)) = events.recv().await else {
        panic!("no encoding came back");
    };
    assert_eq!(store.encoded(done), None, "the estimate was right");
    let mut buf = Buffer::empty(area);
    store.render_rows(KEY, 0, area, &mut buf);
    let red = ratatui::style::Color::Rgb(255, 0, 0);
    assert_eq!(
        buf.cell((0, 0)).map(|c| c.bg),
        Some(red),
        "the image is drawn"
    );

    // A result for an image since replaced is dropped.
    store.insert(KEY, Ok(sample()));
    rows(store.layout(KEY, 12));
    store.dispatch();
    store.insert(KEY, Ok(sample()));
    let Some(AppEvent::ImageEncoded(late)) = events.recv().await else {
        panic!("no encoding came back");
    };
    assert_eq!(store.encoded(late), None);
    let mut buf = Buffer::empty(area);
    rows(store.layout(KEY, 12));
    store.render_rows(KEY, 0, area, &mut buf);
    assert!(
        row_text(&buf, 0).starts_with(PLACEHOLDER),
        "still to be made"
    );
}

/// A store drawing with `protocol` that holds `sample()` laid out 10 columns
/// wide, and the rows it takes.
fn drawing_with(protocol: ProtocolType) -> (ImageStore, u16) {
    let mut store = ImageStore::default();
    let mut picker = Picker::halfblocks();
    picker.set_protocol_type(protocol);
    store.set_picker(picker);
    store.insert(KEY, Ok(sample()));
    let n = rows(store.layout(KEY, 10));
    (store, n)
}

/// Two frames through ratatui's diff, as a terminal receives them (issue 23):
/// a graphics-protocol image keeps its escape sequence in one cell, and the
/// text drawn after it (to its right, and in the rows below) must still reach
/// the terminal on the next frame, whatever the protocol.
#[test]
fn text_after_a_graphics_image_reaches_the_terminal_on_later_frames() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    for protocol in [
        ProtocolType::Sixel,
        ProtocolType::Kitty,
        ProtocolType::Iterm2,
    ] {
        let (mut store, n) = drawing_with(protocol);
        let mut terminal = Terminal::new(TestBackend::new(30, n + 2)).expect("a test terminal");
        for text in ["first", "second", "third"] {
            terminal
                .draw(|f| {
                    let buf = f.buffer_mut();
                    store.render_rows(KEY, 0, Rect::new(0, 0, 10, n), buf);
                    buf.set_string(12, 0, text, Style::new());
                    buf.set_string(0, n + 1, text, Style::new());
                })
                .expect("a frame");
            let shown = terminal.backend().buffer();
            assert_eq!(
                row_text(shown, n + 1).trim_end(),
                text,
                "{protocol:?}: the row under the image"
            );
            assert!(
                row_text(shown, 0).contains(text),
                "{protocol:?}: the text beside the image"
            );
        }
    }
}

/// Counts the bytes a terminal receives (shared: the backend owns its writer).
#[derive(Default, Clone)]
struct Sent(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl std::io::Write for Sent {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An overlay (the help) drawn over part of a sixel or iTerm2 image, but not
/// over its first cell, then closed (issue 23: its text stayed on screen over
/// the plot in xterm). The image's other cells are skipped by ratatui's diff,
/// so the overlay's text is only covered again when the image itself is sent
/// again, in the frame the overlay closes; and not in the frames after.
#[test]
fn an_image_uncovered_by_an_overlay_is_sent_again_once() {
    use ratatui::backend::CrosstermBackend;
    use ratatui::widgets::Clear;
    use ratatui::{Terminal, TerminalOptions, Viewport};

    for (protocol, start) in [
        (ProtocolType::Sixel, &b"\x1bP"[..]),
        (ProtocolType::Iterm2, &b"\x1b]1337"[..]),
    ] {
        let (mut store, n) = drawing_with(protocol);
        let sent = Sent::default();
        let mut terminal = Terminal::with_options(
            CrosstermBackend::new(sent.clone()),
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, 0, 30, n + 2)),
            },
        )
        .expect("a terminal");
        let mut frame = |overlay: bool| {
            sent.0.borrow_mut().clear();
            terminal
                .draw(|f| {
                    let buf = f.buffer_mut();
                    store.render_rows(KEY, 0, Rect::new(0, 0, 10, n), buf);
                    if overlay {
                        let over = Rect::new(3, 1, 20, n);
                        Clear.render(over, buf);
                        buf.set_string(4, 1, "Keys", Style::new());
                    }
                    store.settle(buf);
                })
                .expect("a frame");
            let bytes = sent.0.borrow().clone();
            contains(&bytes, start)
        };
        assert!(frame(false), "{protocol:?}: the image is sent");
        assert!(!frame(true), "{protocol:?}: the overlay is drawn over it");
        assert!(
            frame(false),
            "{protocol:?}: the image is sent again as the overlay closes"
        );
        assert!(!frame(false), "{protocol:?}: and not again after that");
        assert!(!frame(false), "{protocol:?}: nor after that");
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
