//! Terminal UI benchmarks (issue 5, Performance): figures for BENCHMARKS.md.
//!
//! - one frame of the notebook with a 1,000,000-line output (`TestBackend` 160x48),
//!   the content unchanged and scrolled by a line, and the pager on it;
//! - keystroke to frame (`App::update` + draw) with a 10 MB output in the
//!   notebook, in the frame the output arrives in and in a frame while it is
//!   still being read;
//! - keystroke to frame with a plot on screen (issue 23), with each image
//!   protocol: through `TestBackend`, and through crossterm's backend into a
//!   byte counter (what a terminal would receive; the image's escape sequence
//!   must not be sent again for a keystroke);
//! - the first frame: building the `App` and drawing it (warm, and once cold at
//!   the start of the run, printed);
//! - the sanitizer (`sanitize::clean`) on 1 MB of coloured output and on 10 MB of
//!   mixed output (colours, progress bars, tabs, OSC, non-ASCII text).
//!
//! Idle CPU is measured on the real binary by `scripts/idle_cpu.sh`; that the loop
//! requests no frame when idle is a unit test in `src/tui/runner.rs`.
//!
//! Run with `cargo bench --bench tui`.
#![allow(clippy::unwrap_used)] // benchmark set-up unwraps: a failure there stops the run with its location

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend, TestBackend};
use ratatui_image::picker::{Picker, ProtocolType};
use ratatui_textarea::{Input, Key};
use sessionpad::protocol::{ApiVersion, Execution, ExecutionStatus};
use sessionpad::session::{RunId, SessionEvent};
use sessionpad::tui::action::{Action, Effect};
use sessionpad::tui::app::view::draw;
use sessionpad::tui::app::{App, AppConfig, PoolState};
use sessionpad::tui::notebook::NotebookAction;
use sessionpad::tui::widgets::sanitize;

const WIDTH: u16 = 160;
const HEIGHT: u16 = 48;

fn new_app() -> App {
    App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-bench000".into(),
            api_version: ApiVersion::V2025_10_02,
            language: sessionpad::notebook::language::Language::Python,
        },
        PoolState::Ready,
    )
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("terminal")
}

fn frame(terminal: &mut Terminal<TestBackend>, app: &mut App) {
    terminal
        .draw(|f| draw(f, app, Instant::now()))
        .expect("draw");
}

/// `lines` numbered lines of about 7 bytes each.
fn lines_text(lines: usize) -> String {
    (0..lines).map(|i| format!("line {i}\n")).collect()
}

/// About `bytes` of 100-column lines, like a big printed table.
fn megabytes_text(bytes: usize) -> String {
    let line = format!("{}\n", "0123456789".repeat(10));
    line.repeat(bytes / line.len())
}

/// Queues one cell and returns its run; the output is delivered separately.
fn queue_cell(app: &mut App) -> RunId {
    let now = Instant::now();
    app.update(Action::Paste("print(big)".into()), now);
    match app
        .update(Action::Notebook(NotebookAction::RunCell), now)
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    }
}

fn finished(run: RunId, stdout: String) -> SessionEvent {
    finished_with(run, stdout, None)
}

/// As [`finished`], the cell also showing `picture` (the pool's PNG, and the
/// image the session decoded from it) when given.
fn finished_with(run: RunId, stdout: String, picture: Option<image::DynamicImage>) -> SessionEvent {
    let (images, decoded) = match picture {
        Some(picture) => {
            let mut png = Vec::new();
            picture
                .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
                .expect("encode the PNG");
            let image = sessionpad::protocol::ExecutionImage {
                format: "png".into(),
                data: png,
            };
            (vec![image], vec![Ok(picture)])
        }
        None => (vec![], vec![]),
    };
    SessionEvent::ExecutionFinished {
        run,
        outcome: Ok(Execution {
            execution_count: None,
            id: None,
            status: ExecutionStatus::Succeeded,
            stdout,
            stderr: String::new(),
            result: None,
            images,
            duration: Duration::from_millis(1500),
            network: Vec::new(),
        }),
        exit_code: None,
        images: decoded,
    }
}

/// An app with one cell that printed `stdout`, drawn until the output is read.
fn app_with(stdout: String, terminal: &mut Terminal<TestBackend>) -> App {
    let mut app = new_app();
    let run = queue_cell(&mut app);
    app.handle_event(SessionEvent::ExecutionStarted(run), Instant::now());
    let bytes = stdout.len();
    let started = Instant::now();
    app.handle_event(finished(run, stdout), Instant::now());
    frame(terminal, &mut app);
    let mut frames = 1;
    while app.views.pending_work() {
        frame(terminal, &mut app);
        frames += 1;
    }
    eprintln!(
        "an output of {bytes} bytes: read in {frames} frames, {:.1} ms of work in all",
        started.elapsed().as_secs_f64() * 1e3
    );
    app
}

fn key(c: char) -> Action {
    Action::Edit(Input {
        key: Key::Char(c),
        ..Input::default()
    })
}

fn backspace() -> Action {
    Action::Edit(Input {
        key: Key::Backspace,
        ..Input::default()
    })
}

fn million_lines(c: &mut Criterion) {
    let mut term = terminal();
    let mut app = app_with(lines_text(1_000_000), &mut term);
    let mut group = c.benchmark_group("notebook with a 1,000,000-line output");
    group.bench_function("frame", |b| b.iter(|| frame(&mut term, &mut app)));
    let mut up = true;
    group.bench_function("scroll a line + frame", |b| {
        b.iter(|| {
            app.update(Action::ScrollLines(if up { -1 } else { 1 }), Instant::now());
            up = !up;
            frame(&mut term, &mut app);
        });
    });
    app.update(
        Action::Pager(sessionpad::tui::pager::PagerAction::Open),
        Instant::now(),
    );
    let opened = Instant::now();
    frame(&mut term, &mut app);
    eprintln!(
        "pager on 1,000,000 lines: first frame (counting every line's rows) {:.1} ms",
        opened.elapsed().as_secs_f64() * 1e3
    );
    app.update(
        Action::Pager(sessionpad::tui::pager::PagerAction::Page(5000)),
        Instant::now(),
    );
    let mut down = true;
    group.bench_function("pager: page + frame", |b| {
        b.iter(|| {
            app.update(
                Action::Pager(sessionpad::tui::pager::PagerAction::Page(if down {
                    1
                } else {
                    -1
                })),
                Instant::now(),
            );
            down = !down;
            frame(&mut term, &mut app);
        });
    });
    group.finish();
}

fn keystroke_10mb(c: &mut Criterion) {
    let text = megabytes_text(10 * 1024 * 1024);
    let mut group = c.benchmark_group("keystroke to frame, 10 MB output");
    group.sample_size(30);
    let mut term = terminal();
    let mut app = app_with(text.clone(), &mut term);
    let mut typed = false;
    group.bench_function("output in the notebook", |b| {
        b.iter(|| {
            app.update(if typed { backspace() } else { key('x') }, Instant::now());
            typed = !typed;
            frame(&mut term, &mut app);
        });
    });
    // The frame in which the whole 10 MB arrives: the event is applied, a key is
    // typed, one frame is drawn (it reads the first slice of the output).
    group.bench_function("frame the output arrives in", |b| {
        b.iter_batched(
            || {
                let mut app = new_app();
                let run = queue_cell(&mut app);
                app.handle_event(SessionEvent::ExecutionStarted(run), Instant::now());
                let mut term = terminal();
                frame(&mut term, &mut app);
                (app, term, finished(run, text.clone()))
            },
            |(mut app, mut term, event)| {
                app.handle_event(event, Instant::now());
                app.update(key('x'), Instant::now());
                frame(&mut term, &mut app);
                (app, term)
            },
            BatchSize::PerIteration,
        );
    });
    // A frame while the output is still being read (a cell also running).
    group.bench_function("frame while the output is read", |b| {
        b.iter_batched(
            || {
                let mut app = new_app();
                let run = queue_cell(&mut app);
                let busy = queue_cell(&mut app);
                app.handle_event(SessionEvent::ExecutionStarted(run), Instant::now());
                app.handle_event(finished(run, text.clone()), Instant::now());
                app.handle_event(SessionEvent::ExecutionStarted(busy), Instant::now());
                let mut term = terminal();
                for _ in 0..5 {
                    frame(&mut term, &mut app);
                }
                assert!(app.views.pending_work());
                (app, term)
            },
            |(mut app, mut term)| {
                app.update(key('x'), Instant::now());
                frame(&mut term, &mut app);
                (app, term)
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// A 640x480 picture like a matplotlib plot: white, a frame, a blue line.
fn plot_picture() -> image::DynamicImage {
    let mut picture = image::RgbImage::from_pixel(640, 480, image::Rgb([255, 255, 255]));
    for x in 80..576 {
        for y in [57, 427] {
            picture.put_pixel(x, y, image::Rgb([0, 0, 0]));
        }
        let t = f64::from(x - 80) / 496.0;
        // In range: 57 + up to 370.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let y = 427 - (t * t * 370.0) as u32;
        for dy in 0..3 {
            picture.put_pixel(x, (y + dy).min(479), image::Rgb([31, 119, 180]));
        }
    }
    image::DynamicImage::ImageRgb8(picture)
}

/// An app with one cell that showed `plot_picture`, drawn with `protocol`
/// (encoded inline: the bench's store has no sender).
fn app_with_plot(protocol: ProtocolType, terminal: &mut Terminal<impl Backend>) -> App {
    let mut app = new_app();
    let mut picker = Picker::halfblocks();
    picker.set_protocol_type(protocol);
    app.views.images.set_picker(picker);
    let run = queue_cell(&mut app);
    app.handle_event(SessionEvent::ExecutionStarted(run), Instant::now());
    app.handle_event(
        finished_with(run, String::new(), Some(plot_picture())),
        Instant::now(),
    );
    terminal
        .draw(|f| draw(f, &mut app, Instant::now()))
        .expect("draw");
    app
}

/// Counts the bytes a terminal would receive (shared: the backend owns its
/// writer).
#[derive(Default, Clone)]
struct Counter(std::rc::Rc<std::cell::Cell<usize>>);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.set(self.0.get() + buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn keystroke_with_a_plot(c: &mut Criterion) {
    let mut group = c.benchmark_group("keystroke to frame, a plot on screen");
    for protocol in [
        ProtocolType::Halfblocks,
        ProtocolType::Sixel,
        ProtocolType::Kitty,
        ProtocolType::Iterm2,
    ] {
        let mut term = terminal();
        let mut app = app_with_plot(protocol, &mut term);
        let mut typed = false;
        group.bench_function(format!("{protocol:?}, TestBackend"), |b| {
            b.iter(|| {
                app.update(if typed { backspace() } else { key('x') }, Instant::now());
                typed = !typed;
                frame(&mut term, &mut app);
            });
        });
        let sent = Counter::default();
        let mut term = Terminal::with_options(
            CrosstermBackend::new(sent.clone()),
            ratatui::TerminalOptions {
                viewport: ratatui::Viewport::Fixed(ratatui::layout::Rect::new(0, 0, WIDTH, HEIGHT)),
            },
        )
        .expect("terminal");
        let mut app = app_with_plot(protocol, &mut term);
        let first = sent.0.get();
        for _ in 0..2 {
            app.update(if typed { backspace() } else { key('x') }, Instant::now());
            typed = !typed;
            term.draw(|f| draw(f, &mut app, Instant::now()))
                .expect("draw");
        }
        eprintln!(
            "{protocol:?}: the frame with the plot sent {first} bytes; two keystrokes after it {} bytes",
            sent.0.get() - first
        );
        group.bench_function(
            format!("{protocol:?}, crossterm into a byte counter"),
            |b| {
                b.iter(|| {
                    app.update(if typed { backspace() } else { key('x') }, Instant::now());
                    typed = !typed;
                    term.draw(|f| draw(f, &mut app, Instant::now()))
                        .expect("draw");
                });
            },
        );
    }
    group.finish();
}

fn first_frame(c: &mut Criterion) {
    c.bench_function("first frame: App::new + draw (160x48)", |b| {
        b.iter(|| {
            let mut app = new_app();
            let mut term = terminal();
            frame(&mut term, &mut app);
            black_box(term);
        });
    });
}

/// The first frame of the process, with syntect's syntaxes still to load: what a
/// user waits for at start (the rest of start-up is terminal setup).
fn cold_first_frame() {
    let started = Instant::now();
    let mut app = new_app();
    let mut term = terminal();
    frame(&mut term, &mut app);
    let first = started.elapsed();
    app.update(key('x'), Instant::now());
    frame(&mut term, &mut app);
    eprintln!(
        "cold first frame (App::new + draw, first in the process): {:.1} ms; \
         with the first highlighted keystroke: {:.1} ms",
        first.as_secs_f64() * 1e3,
        started.elapsed().as_secs_f64() * 1e3
    );
}

/// About `bytes` of test-runner style output: coloured status, a 256-colour and a
/// truecolour span on every line.
fn coloured_text(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 200);
    let mut i = 0;
    while out.len() < bytes {
        out.push_str(&format!(
            "\x1b[1;32m  PASSED \x1b[0m tests/test_module.py::test_case_{i} \
             \x1b[38;5;244m({}.{:03}s)\x1b[0m \x1b[38;2;255;128;0mwarn\x1b[39m\n",
            i % 7,
            i % 1000
        ));
        i += 1;
    }
    out
}

/// About `bytes` of mixed output: colours, a progress bar redrawn with CR, tabs, a
/// title and a hyperlink (OSC), a cursor move, and non-ASCII text.
fn mixed_text(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 400);
    let mut i = 0;
    while out.len() < bytes {
        out.push_str(&format!(
            " 10%|#   |\r 50%|##  |\r100%|####|\n\
             epoch\t{i}\tloss\t0.{i:04}\t\x1b[31mné\x1b[0m 学習 ✓\n\
             \x1b]0;title {i}\x07\x1b]8;;https://example.com/{i}\x1b\\link\x1b]8;;\x1b\\ \
             \x1b[2K\x1b[1A\x1b[1;4;38;5;{}mstyled\x1b[m plain text line {i}\n",
            i % 256
        ));
        i += 1;
    }
    out
}

fn sanitizer(c: &mut Criterion) {
    let mut group = c.benchmark_group("sanitize");
    group.sample_size(10);
    let coloured = coloured_text(1 << 20);
    group.bench_function("clean 1 MB coloured, keep SGR", |b| {
        b.iter(|| black_box(sanitize::clean(black_box(&coloured), true)));
    });
    let mixed = mixed_text(10 << 20);
    group.bench_function("clean 10 MB mixed, keep SGR", |b| {
        b.iter(|| black_box(sanitize::clean(black_box(&mixed), true)));
    });
    group.bench_function("clean 10 MB mixed, plain", |b| {
        b.iter(|| black_box(sanitize::clean(black_box(&mixed), false)));
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    cold_first_frame();
    first_frame(c);
    million_lines(c);
    keystroke_10mb(c);
    keystroke_with_a_plot(c);
    sanitizer(c);
}

criterion_group!(tui, benches);
criterion_main!(tui);
