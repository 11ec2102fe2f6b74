//! Tests of the files pane: ordering, selection and marks, and snapshots of a
//! listing with the radar's marks at 80x24 and 160x48.

use chrono::TimeZone;
use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::session::radar;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 14, 0, 0).unwrap()
}

fn file(name: &str, size: u64, modified: DateTime<Utc>) -> RemoteFile {
    RemoteFile {
        name: name.into(),
        directory: None,
        size: Some(size),
        modified: Some(modified),
        content_type: None,
        kind: FileKind::File,
    }
}

fn folder(name: &str) -> RemoteFile {
    RemoteFile {
        kind: FileKind::Directory,
        content_type: Some("application/octet-stream".into()),
        ..file(name, 4096, now() - chrono::Duration::minutes(3))
    }
}

fn before() -> Vec<RemoteFile> {
    let earlier = Utc.with_ymd_and_hms(2025, 2, 27, 9, 30, 0).unwrap();
    vec![
        file("input.csv", 1536, earlier),
        file("notes.md", 812, earlier),
        file("model.pkl", 10 * 1024 * 1024 + 300_000, earlier),
        folder("cache"),
    ]
}

fn after() -> Vec<RemoteFile> {
    let t = now() - chrono::Duration::seconds(20);
    let mut list = before();
    list[1] = file("notes.md", 2048, t);
    list.push(file("report.csv", 45_000, t));
    list.push(RemoteFile {
        content_type: Some("image/png".into()),
        ..file("plot", 120_500, t)
    });
    list.push(file("evil\u{1b}]0;pwned\u{7}\rname.txt", 3, t));
    list.push(folder("figures"));
    list.push(RemoteFile {
        directory: Some("figures".into()),
        ..file("fig1.png", 64 * 1024, t)
    });
    list.push(file(
        "a-very-long-file-name-that-an-agent-chose-for-its-intermediate-results.parquet",
        3 * 1024 * 1024 * 1024,
        t,
    ));
    list
}

fn state() -> FilesPaneState {
    let mut s = FilesPaneState::new("/mnt/data", now());
    s.set_listing(after());
    s.set_radar(&radar::scan(&before(), &after()), None);
    s.focused = true;
    s
}

fn screen(state: &FilesPaneState, width: u16, height: u16) -> TestBackend {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| render(f.area(), f.buffer_mut(), state, &Theme::dark()))
        .unwrap();
    terminal.backend().clone()
}

fn names(state: &FilesPaneState) -> Vec<String> {
    state.entries().iter().map(RemoteFile::path).collect()
}

#[test]
fn folders_first_then_names_without_case() {
    let mut s = FilesPaneState::new("/mnt/data", now());
    s.set_listing(vec![
        file("b.txt", 1, now()),
        folder("Zeta"),
        file("A.txt", 1, now()),
        folder("alpha"),
    ]);
    assert_eq!(names(&s), ["alpha", "Zeta", "A.txt", "b.txt"]);
}

#[test]
fn selection_and_marks_follow_paths_across_listings() {
    let mut s = state();
    assert!(s.select_path("report.csv"));
    s.toggle_mark();
    s.move_selection(-100);
    assert_eq!(s.selected, 0);
    let folder = s.selected_file().map(RemoteFile::path).unwrap();
    s.toggle_mark(); // a folder: marked too (downloaded or deleted whole)
    s.toggle_mark(); // and unmarked
    assert!(!s.marked.contains(&folder));
    assert!(s.select_path("notes.md"));
    s.toggle_mark();
    assert_eq!(s.marked.len(), 2);
    let targets: Vec<String> = s.targets().iter().map(|f| f.path()).collect();
    assert_eq!(targets, ["notes.md", "report.csv"]);

    // The next listing lost report.csv and gained a file before notes.md.
    let mut next = before();
    next.push(file("aaa.txt", 1, now()));
    s.set_listing(next);
    assert_eq!(
        s.selected_file().map(RemoteFile::path).as_deref(),
        Some("notes.md")
    );
    assert_eq!(s.marked.iter().collect::<Vec<_>>(), ["notes.md"]);
    s.move_selection(100);
    assert_eq!(s.selected, s.entries().len() - 1);
}

#[test]
fn targets_are_the_selected_entry_without_marks() {
    let mut s = state();
    s.selected = 0; // a folder
    assert_eq!(s.targets().len(), 1);
    assert_eq!(s.targets()[0].kind, crate::protocol::FileKind::Directory);
    assert!(s.select_path("notes.md"));
    assert_eq!(s.targets().len(), 1);
}

#[test]
fn type_labels() {
    assert_eq!(type_label(&folder("x.csv")), "folder");
    assert_eq!(type_label(&file("A.CSV", 1, now())), "csv");
    let mut f = file("blob", 1, now());
    assert_eq!(type_label(&f), "file");
    f.content_type = Some("image/png".into());
    assert_eq!(type_label(&f), "png");
}

#[test]
fn keep_visible_scrolls_just_enough() {
    let mut s = state();
    s.selected = 8;
    s.keep_visible(3);
    assert_eq!(s.scroll, 6);
    s.selected = 2;
    s.keep_visible(3);
    assert_eq!(s.scroll, 2);
}

#[test]
fn snapshot_listing_with_marks() {
    let mut s = state();
    assert!(s.select_path("report.csv"));
    s.toggle_mark();
    assert!(s.select_path("plot"));
    assert_snapshot!("listing_80x24", screen(&s, 80, 24));
    assert_snapshot!("listing_160x48", screen(&s, 160, 48));
}

#[test]
fn snapshot_narrow_listing_drops_columns() {
    let s = state();
    assert_snapshot!("listing_40x12", screen(&s, 40, 12));
}

#[test]
fn escape_sequences_in_names_never_reach_the_buffer() {
    let s = state();
    let backend = screen(&s, 80, 24);
    for cell in backend.buffer().content() {
        assert!(
            !cell.symbol().chars().any(char::is_control),
            "{:?}",
            cell.symbol()
        );
    }
}

#[test]
fn an_empty_listing_shows_the_message() {
    let mut s = FilesPaneState::new("/mnt/data", now());
    s.message = Some("listing…".into());
    let backend = screen(&s, 40, 5);
    let row: String = (0..40)
        .map(|x| backend.buffer()[(x, 2)].symbol().to_string())
        .collect();
    assert!(row.starts_with("│listing… "), "{row:?}");
}
