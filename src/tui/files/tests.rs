//! Headless tests of the files pane's state transitions (keys in, effects out,
//! the worker's news delivered by hand) and whole-screen snapshots of the pane
//! with the radar's marks and its previews at 80x24 and 160x48.

use std::time::Instant;

use chrono::{DateTime, TimeZone, Utc};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::protocol::ApiVersion;
use crate::protocol::FileKind;
use crate::session::FileEvent;
use crate::session::{HeadRequest, SessionEvent};
use crate::tui::action::Action;
use crate::tui::app::{App, AppConfig, PoolState};
use crate::tui::files::preview::Body;
use crate::tui::files::preview::PreviewRequest;
use crate::tui::local_paths::wildcard;

fn app(version: ApiVersion) -> App {
    App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-0badc0de".into(),
            api_version: version,
            language: crate::notebook::language::Language::Python,
        },
        PoolState::Ready,
    )
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 14, 0, 0).unwrap()
}

fn file(name: &str, size: u64) -> RemoteFile {
    RemoteFile {
        name: name.into(),
        directory: None,
        size: Some(size),
        modified: Some(now() - chrono::Duration::seconds(20)),
        content_type: None,
        kind: FileKind::File,
    }
}

fn folder(name: &str) -> RemoteFile {
    RemoteFile {
        kind: FileKind::Directory,
        ..file(name, 4096)
    }
}

fn before() -> Vec<RemoteFile> {
    vec![
        file("input.csv", 1536),
        file("notes.md", 812),
        folder("cache"),
    ]
}

fn after() -> Vec<RemoteFile> {
    let mut list = before();
    list[1] = file("notes.md", 2048);
    list.push(file("report.csv", 45_000));
    list.push(file("plot.png", 120_500));
    list
}

/// Presses `code` through the keymap, as the loop does.
fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    let event = Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
    let ctx = app.key_context();
    match app.keymap.action_for_event(event, ctx) {
        Some(action) => app.update(action, Instant::now()),
        None => Vec::new(),
    }
}

fn listed(app: &mut App, files: Vec<RemoteFile>) {
    let generation = app.files.list_generation;
    app.files_event(FileEvent::Listed {
        generation,
        result: Ok(files),
    });
}

/// An app with the pane open on the listing after a cell, marks from the radar.
fn after_a_cell() -> App {
    after_a_cell_with_effects().0
}

/// The app after a cell, and the effects its listing asked for.
fn after_a_cell_with_effects() -> (App, Vec<Effect>) {
    let mut app = app(ApiVersion::V2025_10_02);
    app.files.pane.now = now();
    let effects = press(&mut app, KeyCode::F(2));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Files(FileCommand::List { .. })]
    ));
    listed(&mut app, before());
    let effects = app.handle_event(
        SessionEvent::Files(FileEvent::CellListing {
            before: before(),
            after: after(),
        }),
        Instant::now(),
    );
    app.files.pane.now = now();
    (app, effects)
}

#[test]
fn f2_opens_focuses_and_hides_the_pane() {
    let mut app = app(ApiVersion::V2025_10_02);
    let effects = press(&mut app, KeyCode::F(2));
    assert!(app.pane_focused(crate::tui::app::SidePane::Files));
    assert_eq!(
        effects,
        vec![Effect::Files(FileCommand::List {
            generation: 1,
            path: None
        })]
    );
    assert_eq!(app.key_context().mode, crate::tui::keymap::Mode::Files);
    // Tab goes back to the editor with the pane still shown; F2 there focuses it.
    press(&mut app, KeyCode::Tab);
    assert!(
        app.pane_open(crate::tui::app::SidePane::Files)
            && !app.pane_focused(crate::tui::app::SidePane::Files)
    );
    assert!(press(&mut app, KeyCode::F(2)).is_empty());
    assert!(app.pane_focused(crate::tui::app::SidePane::Files));
    press(&mut app, KeyCode::F(2));
    assert!(!app.pane_open(crate::tui::app::SidePane::Files));
}

#[test]
fn a_cell_marks_new_and_changed_files_and_previews_the_first_table() {
    let (app, effects) = after_a_cell_with_effects();
    assert_eq!(app.files.pane.changes.len(), 3);
    assert_eq!(
        app.files
            .pane
            .selected_file()
            .map(RemoteFile::path)
            .as_deref(),
        Some("report.csv")
    );
    match effects.as_slice() {
        [Effect::Files(FileCommand::Head(HeadRequest { name, size, .. }))] => {
            assert_eq!(name, "report.csv");
            assert_eq!(*size, Some(45_000));
        }
        other => panic!("{other:?}"),
    }
}

/// Issue 6 (radar): a cell that makes a table while the pane is closed gets a
/// notice naming the key, and the table is previewed when the pane opens.
#[test]
fn a_table_made_while_the_pane_was_closed_is_previewed_when_it_opens() {
    let mut app = app(ApiVersion::V2025_10_02);
    let effects = app.handle_event(
        SessionEvent::Files(FileEvent::CellListing {
            before: before(),
            after: after(),
        }),
        Instant::now(),
    );
    assert!(effects.is_empty(), "nothing to preview while closed");
    assert_eq!(
        app.notice.as_deref(),
        Some("2 new and 1 changed files in /mnt/data: F2 shows them")
    );
    let effects = press(&mut app, KeyCode::F(2));
    match effects.as_slice() {
        [
            Effect::Files(FileCommand::Head(HeadRequest { name, .. })),
            Effect::Files(FileCommand::List { .. }),
        ] => assert_eq!(name, "report.csv"),
        other => panic!("{other:?}"),
    }
    // The refreshed listing keeps the previewed file selected.
    listed(&mut app, after());
    assert_eq!(
        app.files
            .pane
            .selected_file()
            .map(RemoteFile::path)
            .as_deref(),
        Some("report.csv")
    );
    // Only once: hiding and showing the pane again previews nothing new.
    press(&mut app, KeyCode::F(2));
    let effects = press(&mut app, KeyCode::F(2));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Files(FileCommand::List { .. })]
    ));
}

/// A later cell that makes nothing new forgets the earlier cell's preview.
#[test]
fn a_quiet_cell_forgets_the_pending_preview() {
    let mut app = app(ApiVersion::V2025_10_02);
    for (b, a) in [(before(), after()), (after(), after())] {
        app.handle_event(
            SessionEvent::Files(FileEvent::CellListing {
                before: b,
                after: a,
            }),
            Instant::now(),
        );
    }
    assert_eq!(app.files.pending_preview, None);
    let effects = press(&mut app, KeyCode::F(2));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Files(FileCommand::List { .. })]
    ));
}

#[test]
fn stale_listings_and_previews_are_dropped() {
    let mut app = after_a_cell();
    press(&mut app, KeyCode::Char('r'));
    let stale = app.files.list_generation - 1;
    app.files_event(FileEvent::Listed {
        generation: stale,
        result: Ok(vec![]),
    });
    assert_eq!(app.files.pane.entries().len(), 5);
    app.files_event(FileEvent::Head {
        generation: 0,
        result: Err(crate::session::Failure::unreachable("old")),
    });
    app.preview_built(0, Err("old".into()));
    assert!(app.notice.is_none());
}

/// A preview comes in two steps: the worker fetches the file's head (the
/// whole image, else the first 64 KiB), then the preview is built off the UI
/// task in the frame it was asked for; a newer request drops both steps of an
/// older one.
#[test]
fn a_preview_is_fetched_as_a_head_then_built_off_the_ui_task() {
    let (mut app, effects) = after_a_cell_with_effects();
    let (generation, name) = match effects.as_slice() {
        [Effect::Files(FileCommand::Head(request))] => {
            assert_eq!(request.limit, crate::tui::files::preview::PREVIEW_BYTES);
            (request.generation, request.name.clone())
        }
        other => panic!("{other:?}"),
    };
    let head = crate::session::FileHead {
        name,
        content_type: Some("text/csv".into()),
        size: Some(45_000),
        bytes: b"a,b\n1,2\n".to_vec(),
    };
    let effects = app.files_event(FileEvent::Head {
        generation,
        result: Ok(head.clone()),
    });
    let job = match effects.as_slice() {
        [Effect::BuildPreview(job)] => job.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!((job.generation, &job.head), (generation, &head));
    assert!(job.width >= 10 && job.height >= 5, "{job:?}");
    assert!(
        app.files.preview.is_none(),
        "nothing shown before it is built"
    );
    app.preview_built(job.generation, Ok(Box::new(job.build())));
    let preview = app.files.preview.as_ref().expect("shown");
    assert_eq!(preview.name, "report.csv");
    assert!(app.files.preview_loading.is_none());

    // An image's head is the whole image (up to 16 MiB).
    app.files.pane.select_path("plot.png");
    let effects = press(&mut app, KeyCode::Char('p'));
    match effects.as_slice() {
        [Effect::Files(FileCommand::Head(request))] => {
            assert_eq!(request.limit, crate::tui::files::preview::IMAGE_BYTES);
            // The older request's head no longer builds anything.
            let stale = app.files_event(FileEvent::Head {
                generation,
                result: Ok(head),
            });
            assert!(stale.is_empty(), "{stale:?}");
            assert!(request.generation > generation);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn folders_open_and_backspace_goes_up() {
    let mut app = after_a_cell();
    app.files.pane.select_path("cache");
    match press(&mut app, KeyCode::Enter).as_slice() {
        [Effect::Files(FileCommand::List { path, .. })] => {
            assert_eq!(path.as_deref(), Some("/mnt/data/cache"));
        }
        other => panic!("{other:?}"),
    }
    listed(&mut app, vec![file("x.txt", 1)]);
    assert_eq!(app.files.remote_name(&file("x.txt", 1)), "cache/x.txt");
    match press(&mut app, KeyCode::Backspace).as_slice() {
        [Effect::Files(FileCommand::List { path: None, .. })] => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(app.files.pane.folder, DATA_ROOT);
    // Back in the parent, the folder we left is selected again.
    listed(&mut app, after());
    assert_eq!(
        app.files
            .pane
            .selected_file()
            .map(RemoteFile::path)
            .as_deref(),
        Some("cache")
    );
}

#[test]
fn old_api_versions_do_not_open_folders_or_delete() {
    let mut app = app(ApiVersion::V2024_02_02);
    press(&mut app, KeyCode::F(2));
    listed(&mut app, vec![folder("sub"), file("a.txt", 1)]);
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert!(app.notice.is_some());
    app.files.pane.select_path("a.txt");
    press(&mut app, KeyCode::Char('x'));
    assert!(app.prompt().is_none());
}

fn preview_of(name: &str, bytes: &[u8]) -> Preview {
    Preview::build(&PreviewRequest {
        name,
        content_type: None,
        bytes,
        total_size: Some(bytes.len() as u64),
        width: 60,
        height: 20,
        colors: false,
    })
}

fn screen(app: &mut App, width: u16, height: u16) -> TestBackend {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| crate::tui::app::view::draw(f, app, Instant::now()))
        .unwrap();
    terminal.backend().clone()
}

fn with_preview(preview: Preview) -> App {
    let mut app = after_a_cell();
    let generation = app.files.preview_generation;
    app.preview_built(generation, Ok(Box::new(preview)));
    app
}

#[test]
fn snapshot_listing_with_marks() {
    let mut app = after_a_cell();
    app.files.pane.select_path("input.csv");
    press(&mut app, KeyCode::Char(' '));
    app.files.preview_loading = None;
    assert_snapshot!("listing_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("listing_160x48", screen(&mut app, 160, 48));
}

#[test]
fn snapshot_csv_preview() {
    let csv = b"region,units,revenue\nnorth,12,340.50\nsouth,7,120.00\neast,30,999.99\n";
    let mut app = with_preview(preview_of("report.csv", csv));
    assert_snapshot!("csv_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("csv_160x48", screen(&mut app, 160, 48));
}

#[test]
fn snapshot_text_preview() {
    let text = b"# Notes\n\nThe agent wrote these.\n- first\n- second\n";
    let mut app = with_preview(preview_of("notes.md", text));
    assert_snapshot!("text_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("text_160x48", screen(&mut app, 160, 48));
}

#[test]
fn snapshot_image_preview() {
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
        400,
        200,
        image::Rgb([200, 30, 30]),
    ))
    .write_to(&mut png, image::ImageFormat::Png)
    .unwrap();
    let mut app = with_preview(preview_of("plot.png", png.get_ref()));
    assert!(matches!(
        app.files.preview.as_ref().map(|p| &p.body),
        Some(Body::Image(_))
    ));
    let backend = screen(&mut app, 80, 24);
    let red = ratatui::style::Color::Rgb(200, 30, 30);
    let painted = backend
        .buffer()
        .content()
        .iter()
        .filter(|c| c.bg == red || c.fg == red)
        .count();
    assert!(painted > 100, "the image is drawn ({painted} cells)");
    assert_snapshot!("image_80x24", backend);
    assert_snapshot!("image_160x48", screen(&mut app, 160, 48));
}

#[test]
fn on_narrow_terminals_a_focused_pane_sits_under_the_outputs() {
    use ratatui::layout::Rect;
    let split = |app: &App, area| {
        crate::tui::files::view::split(
            area,
            app.side.is_some(),
            app.focus == crate::tui::app::Focus::Pane,
        )
    };
    let mut app = app(ApiVersion::V2025_10_02);
    press(&mut app, KeyCode::F(2));
    assert!(app.pane_focused(crate::tui::app::SidePane::Files));
    // 80x24: 20 rows above the editor; the pane takes the lower three fifths.
    let area = Rect::new(0, 0, 80, 20);
    let (outputs, pane) = split(&app, area);
    let pane = pane.expect("a pane");
    assert_eq!((outputs.height, pane.y, pane.height), (8, 8, 12));
    assert_eq!((outputs.width, pane.width), (80, 80));
    // Too short to share: the pane takes it all.
    let (outputs, pane) = split(&app, Rect::new(0, 0, 80, 10));
    assert_eq!(pane, Some(outputs));
    // Wide: beside the outputs.
    let (outputs, pane) = split(&app, Rect::new(0, 0, 160, 40));
    assert_eq!((outputs.width, pane.map(|p| p.width)), (96, Some(64)));
    // The editor has the keys: the narrow pane hides, the wide one stays.
    press(&mut app, KeyCode::Tab);
    assert_eq!(split(&app, area), (area, None));
    assert!(split(&app, Rect::new(0, 0, 160, 40)).1.is_some());
}

#[path = "transfer_tests.rs"]
mod transfers;

fn inside(dir: &str, f: RemoteFile) -> RemoteFile {
    RemoteFile {
        directory: Some(dir.into()),
        ..f
    }
}

#[test]
fn marks_of_subfolders_survive_browsing_in_and_out() {
    let (mut app, _) = after_a_cell_with_effects();
    // A second cell writes into a new subfolder (a recursive listing).
    let mut later = after();
    later.push(folder("reports"));
    later.push(inside("reports", file("describe.csv", 9)));
    app.handle_event(
        SessionEvent::Files(FileEvent::CellListing {
            before: after(),
            after: later,
        }),
        Instant::now(),
    );
    // The root shows its own entries only, the folder marked new.
    assert!(
        app.files
            .pane
            .entries()
            .iter()
            .all(|f| f.directory.is_none())
    );
    assert_eq!(
        app.files.pane.changes.get("reports"),
        Some(&crate::session::radar::Change::New)
    );
    assert!(app.files.pane.select_path("reports"));
    press(&mut app, KeyCode::Enter);
    listed(&mut app, vec![file("describe.csv", 9)]);
    assert_eq!(
        app.files.pane.changes.get("describe.csv"),
        Some(&crate::session::radar::Change::New)
    );
    press(&mut app, KeyCode::Backspace);
    listed(&mut app, {
        let mut root = after();
        root.push(folder("reports"));
        root
    });
    assert_eq!(
        app.files.pane.changes.get("reports"),
        Some(&crate::session::radar::Change::New),
        "the marks belong to the last cell, not to a listing"
    );
}

#[test]
fn folders_on_an_api_version_without_recursive_listing_say_so() {
    let mut app = app(ApiVersion::V2025_02_02);
    app.files.pane.now = now();
    press(&mut app, KeyCode::F(2));
    listed(&mut app, before());
    assert!(app.files.pane.select_path("cache"));
    assert!(press(&mut app, KeyCode::Char('x')).is_empty());
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.contains("cannot list a folder recursively")),
        "{:?}",
        app.notice
    );
}
