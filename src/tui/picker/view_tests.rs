//! Snapshot of the upload picker over a fixed temporary tree, and checks that
//! hostile names lose their escapes and that the selection stays in view.

use std::fs;
use std::path::{Path, PathBuf};

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui_textarea::{Input, Key};
use tempfile::TempDir;

use super::*;

fn key(key: Key) -> Input {
    Input {
        key,
        ..Input::default()
    }
}

/// `<tmp>/tree/{docs/, .secret, notes.md, report.csv, huge.bin (sparse,
/// 200 MiB), bad<ESC>[2Jname}`.
fn tree() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap().join("tree");
    fs::create_dir_all(root.join("docs")).unwrap();
    fs::write(root.join(".secret"), "s").unwrap();
    fs::write(root.join("notes.md"), "# twelve b\n\n").unwrap();
    fs::write(root.join("report.csv"), "x".repeat(1536)).unwrap();
    fs::write(root.join("bad\u{1b}[2Jname"), "x").unwrap();
    let huge = fs::File::create(root.join("huge.bin")).unwrap();
    huge.set_len(200 * 1024 * 1024).unwrap();
    (dir, root)
}

fn draw(picker: &mut FilePicker, width: u16, height: u16) -> TestBackend {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| render(picker, f.area(), f.buffer_mut(), &Theme::dark()))
        .unwrap();
    terminal.backend().clone()
}

/// The screen as text, the random temporary folder in the title replaced by
/// `<tmp>` (and the border made as long as before).
fn text(backend: &TestBackend, tmp: &Path) -> String {
    let tmp = tmp.display().to_string();
    let extra = "─".repeat(fit::columns(&tmp).saturating_sub(5));
    backend
        .to_string()
        .replace(&format!("{tmp}/tree "), &format!("<tmp>/tree {extra}"))
}

#[test]
fn snapshot_of_the_picker() {
    let (_dir, root) = tree();
    let mut picker = FilePicker::open(&root).unwrap();
    // Mark report.csv (the last file), then select notes.md.
    picker.key(&key(Key::End));
    picker.key(&key(Key::Char(' ')));
    picker.key(&key(Key::Up));
    // huge.bin is over the limit: a notice, no mark.
    picker.key(&key(Key::Up));
    picker.key(&key(Key::Char(' ')));
    let backend = draw(&mut picker, 80, 20);
    let screen = text(&backend, root.parent().unwrap());
    assert!(!screen.contains('\u{1b}'), "{screen}");
    assert!(screen.contains("badname"), "{screen}");
    assert_snapshot!("picker_80x20", screen);
    // The selection (huge.bin) is drawn in the theme's selection style.
    let theme = Theme::dark();
    let row = screen.lines().position(|l| l.contains("huge.bin")).unwrap();
    let cell = backend
        .buffer()
        .cell((10, u16::try_from(row).unwrap()))
        .unwrap();
    assert_eq!(cell.bg, theme.selection.bg.unwrap_or_default());
}

#[test]
fn a_long_listing_scrolls_to_keep_the_selection_visible() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        fs::write(dir.path().join(format!("file-{i:02}.txt")), "x").unwrap();
    }
    let mut picker = FilePicker::open(dir.path()).unwrap();
    picker.key(&key(Key::End));
    let screen = draw(&mut picker, 60, 12).to_string();
    assert!(screen.contains("file-39.txt"), "{screen}");
    assert!(!screen.contains("file-00.txt"), "{screen}");
    picker.key(&key(Key::Home));
    let screen = draw(&mut picker, 60, 12).to_string();
    assert!(screen.contains("../"), "{screen}");
    assert!(!screen.contains("file-39.txt"), "{screen}");
}

#[test]
fn tiny_areas_do_not_panic() {
    let (_dir, root) = tree();
    let mut picker = FilePicker::open(&root).unwrap();
    for (w, h) in [(0, 0), (1, 1), (5, 3), (12, 4), (30, 6)] {
        draw(&mut picker, w, h);
    }
}

#[test]
fn long_paths_keep_their_end() {
    assert_eq!(keep_tail("/home/someone/projects/data", 10), "…ects/data");
    assert_eq!(keep_tail("/short", 10), "/short");
    assert_eq!(keep_tail("/x", 0), "");
}
