//! Tests of the upload picker's reducer on real temporary folders: moving in
//! and out of folders, marks across folders, hidden files, lists the crate
//! would panic on, folders that cannot be read, and the App's glue (`U`,
//! Ctrl+O in the upload prompt, Esc).

use std::fs;
use std::path::Path;
use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

use super::*;
use crate::protocol::ApiVersion;
use crate::session::FileCommand;
use crate::tui::action::{Action, Effect};
use crate::tui::app::App;
use crate::tui::app::{AppConfig, PoolState};
use crate::tui::files::FilesPrompt;

/// `root/{a.txt, b.txt, .hidden, sub/{c.txt}}`, canonical paths.
fn tree() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::write(root.join("a.txt"), "alpha").unwrap();
    fs::write(root.join("b.txt"), "bravo!").unwrap();
    fs::write(root.join(".hidden"), "h").unwrap();
    fs::create_dir(root.join("sub")).unwrap();
    fs::write(root.join("sub/c.txt"), "charlie").unwrap();
    (dir, root)
}

fn key(key: Key) -> Input {
    Input {
        key,
        ..Input::default()
    }
}

fn ch(c: char) -> Input {
    key(Key::Char(c))
}

fn names(p: &FilePicker) -> Vec<String> {
    p.entries().map(|e| e.name.to_string()).collect()
}

fn selected_name(p: &FilePicker) -> String {
    p.entries()
        .nth(p.selected())
        .map(|e| e.name.to_string())
        .unwrap_or_default()
}

/// Moves down to the entry named `name`.
fn go_to(p: &mut FilePicker, name: &str) {
    for _ in 0..names(p).len() {
        if selected_name(p) == name {
            return;
        }
        p.key(&key(Key::Down));
    }
    panic!("{name} not listed: {:?}", names(p));
}

#[test]
fn lists_folders_first_with_the_parent_and_sizes() {
    let (_dir, root) = tree();
    let p = FilePicker::open(&root).unwrap();
    assert_eq!(p.cwd(), root);
    assert_eq!(names(&p), ["../", "sub/", "a.txt", "b.txt"]);
    let sizes: Vec<Option<u64>> = p.entries().map(|e| e.size).collect();
    assert_eq!(sizes, [None, None, Some(5), Some(6)]);
}

#[test]
fn into_a_subfolder_and_back_selects_the_folder_left() {
    let (_dir, root) = tree();
    let mut p = FilePicker::open(&root).unwrap();
    go_to(&mut p, "sub/");
    assert_eq!(p.key(&key(Key::Right)), PickerKey::Stay);
    assert_eq!(p.cwd(), root.join("sub"));
    assert_eq!(names(&p), ["../", "c.txt"]);
    // Going down, the cursor is on the folder's first entry, not on `../`.
    assert_eq!(selected_name(&p), "c.txt");
    p.key(&key(Key::Left));
    assert_eq!(p.cwd(), root);
    assert_eq!(selected_name(&p), "sub/");
    // Enter opens a folder too, Backspace goes up, `../` with Enter as well.
    p.key(&key(Key::Enter));
    assert_eq!(p.cwd(), root.join("sub"));
    p.key(&key(Key::Backspace));
    assert_eq!(p.cwd(), root);
    p.key(&key(Key::Enter));
    p.key(&key(Key::Home));
    assert_eq!(selected_name(&p), "../");
    p.key(&key(Key::Enter));
    assert_eq!(p.cwd(), root);
    assert_eq!(selected_name(&p), "sub/");
}

#[test]
fn marks_in_two_folders_upload_together() {
    let (_dir, root) = tree();
    let mut p = FilePicker::open(&root).unwrap();
    go_to(&mut p, "b.txt");
    p.key(&ch(' '));
    assert!(p.entries().any(|e| e.name == "b.txt" && e.marked));
    go_to(&mut p, "sub/");
    // A folder is not marked.
    p.key(&ch(' '));
    assert!(p.notice.is_some());
    p.key(&key(Key::Right));
    go_to(&mut p, "c.txt");
    p.key(&ch(' '));
    assert_eq!(p.marked().len(), 2);
    // Enter on a file uploads the marks (not just the selected file).
    assert_eq!(
        p.key(&key(Key::Enter)),
        PickerKey::Upload(vec![root.join("b.txt"), root.join("sub/c.txt")])
    );
}

#[test]
fn space_twice_unmarks_and_enter_without_marks_uploads_the_selected_file() {
    let (_dir, root) = tree();
    let mut p = FilePicker::open(&root).unwrap();
    go_to(&mut p, "a.txt");
    p.key(&ch(' '));
    assert_eq!(selected_name(&p), "b.txt");
    p.key(&key(Key::Up));
    p.key(&ch(' '));
    assert!(p.marked().is_empty());
    go_to(&mut p, "a.txt");
    assert_eq!(
        p.key(&key(Key::Enter)),
        PickerKey::Upload(vec![root.join("a.txt")])
    );
}

#[test]
fn a_marks_every_file_of_the_folder_then_none() {
    let (_dir, root) = tree();
    let mut p = FilePicker::open(&root).unwrap();
    p.key(&ch('a'));
    let marked: Vec<&PathBuf> = p.marked().iter().collect();
    assert_eq!(marked, [&root.join("a.txt"), &root.join("b.txt")]);
    p.key(&ch('a'));
    assert!(p.marked().is_empty());
}

#[test]
fn dot_shows_and_hides_hidden_files_keeping_the_selection() {
    let (_dir, root) = tree();
    let mut p = FilePicker::open(&root).unwrap();
    go_to(&mut p, "b.txt");
    p.key(&ch('.'));
    assert!(p.show_hidden());
    assert_eq!(names(&p), ["../", "sub/", ".hidden", "a.txt", "b.txt"]);
    assert_eq!(selected_name(&p), "b.txt");
    p.key(&ch('.'));
    assert_eq!(names(&p), ["../", "sub/", "a.txt", "b.txt"]);
}

#[test]
fn files_over_the_limit_are_not_marked() {
    let (_dir, root) = tree();
    // Sparse: no disk space used.
    let big = fs::File::create(root.join("huge.bin")).unwrap();
    big.set_len(MAX_UPLOAD + 1).unwrap();
    let mut p = FilePicker::open(&root).unwrap();
    go_to(&mut p, "huge.bin");
    p.key(&ch(' '));
    assert!(p.marked().is_empty());
    assert!(p.notice.as_deref().unwrap().contains("limited to 128 MiB"));
    p.key(&ch('a'));
    assert!(!p.marked().contains(&root.join("huge.bin")));
}

const ALL_KEYS: [Key; 13] = [
    Key::Up,
    Key::Down,
    Key::End,
    Key::PageDown,
    Key::PageUp,
    Key::Home,
    Key::Right,
    Key::Left,
    Key::Enter,
    Key::Char(' '),
    Key::Char('a'),
    Key::Char('.'),
    Key::Char('j'),
];

#[test]
fn an_empty_folder_and_an_empty_list_take_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let mut p = FilePicker::open(&empty).unwrap();
    assert_eq!(names(&p), ["../"]);
    for k in ALL_KEYS {
        p.key(&key(k));
        // Always back into the empty folder.
        if p.cwd() != fs::canonicalize(&empty).unwrap() {
            p.explorer
                .set_cwd(fs::canonicalize(&empty).unwrap())
                .unwrap();
            p.listed();
        }
    }
    // An empty list (the crate's `files.len() - 1` would underflow).
    p.explorer.set_filter_map(|_| None).unwrap();
    p.listed();
    assert_eq!(p.entries().len(), 0);
    for k in ALL_KEYS {
        assert!(matches!(p.key(&key(k)), PickerKey::Stay), "{k:?}");
    }
}

#[test]
fn a_folder_deleted_after_listing_gives_a_notice_and_the_list_again() {
    let (_dir, root) = tree();
    fs::create_dir(root.join("gone")).unwrap();
    let mut p = FilePicker::open(&root).unwrap();
    go_to(&mut p, "gone/");
    fs::remove_dir(root.join("gone")).unwrap();
    p.key(&key(Key::Right));
    assert_eq!(p.cwd(), root);
    assert!(
        p.notice.as_deref().unwrap().starts_with("cannot open"),
        "{:?}",
        p.notice
    );
    assert_eq!(names(&p), ["../", "sub/", "a.txt", "b.txt"]);
    for k in ALL_KEYS {
        p.key(&key(k));
    }
}

#[test]
fn the_listed_folder_deleted_climbs_to_a_folder_that_lists() {
    let (_dir, root) = tree();
    let mut p = FilePicker::open(&root.join("sub")).unwrap();
    fs::remove_dir_all(root.join("sub")).unwrap();
    p.key(&ch('.'));
    assert_eq!(p.cwd(), root);
    assert!(p.notice.as_deref().unwrap().starts_with("cannot list"));
    for k in ALL_KEYS {
        p.key(&key(k));
    }
}

/// Runs `f` on this thread without the capabilities that let root read any
/// folder (Linux keeps capabilities per thread), so that permissions apply as
/// they do to everyone else. They come back when `f` returns or panics.
fn without_root_reading<T>(f: impl FnOnce() -> T) -> T {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    struct Restore(Header, [Data; 2]);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: a v3 header and two data structs, as capset(2) wants.
            unsafe { libc::syscall(libc::SYS_capset, &raw const self.0, self.1.as_ptr()) };
        }
    }
    const VERSION_3: u32 = 0x2008_0522;
    // CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH.
    const READ_ANY: u32 = (1 << 1) | (1 << 2);
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: a v3 header and room for two data structs, as capget(2) wants.
    unsafe { libc::syscall(libc::SYS_capget, &raw mut header, data.as_mut_ptr()) };
    let _restore = Restore(
        Header {
            version: VERSION_3,
            pid: 0,
        },
        data,
    );
    data[0].effective &= !READ_ANY;
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_capset, &raw const header, data.as_ptr()) };
    f()
}

#[test]
fn unreadable_folders_give_a_notice_and_the_list_stays_whole() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path, mode: u32| {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    };
    let (_dir, root) = tree();
    without_root_reading(|| {
        mode(&root.join("sub"), 0o000);
        if fs::read_dir(root.join("sub")).is_ok() {
            mode(&root.join("sub"), 0o755);
            eprintln!("skipped: this process reads any folder");
            return;
        }
        // Into a folder that cannot be read: the crate has removed the entry
        // before it fails; the picker lists the folder again.
        let mut p = FilePicker::open(&root).unwrap();
        go_to(&mut p, "sub/");
        p.key(&key(Key::Right));
        assert_eq!(p.cwd(), root);
        assert!(p.notice.as_deref().unwrap().starts_with("cannot open sub"));
        assert_eq!(names(&p), ["../", "sub/", "a.txt", "b.txt"]);
        assert_eq!(selected_name(&p), "sub/");
        for k in ALL_KEYS {
            p.key(&key(k));
        }
        mode(&root.join("sub"), 0o755);

        // Up to a parent that can be passed through but not read.
        let mut p = FilePicker::open(&root.join("sub")).unwrap();
        mode(&root, 0o300);
        p.key(&key(Key::Left));
        mode(&root, 0o755);
        assert_eq!(p.cwd(), root.join("sub"));
        assert!(p.notice.as_deref().unwrap().starts_with("cannot open"));
        assert_eq!(names(&p), ["../", "c.txt"]);
    });
}

#[test]
fn esc_and_ctrl_c_close_without_uploading() {
    let (_dir, root) = tree();
    let mut p = FilePicker::open(&root).unwrap();
    p.key(&ch('a'));
    assert_eq!(p.key(&key(Key::Esc)), PickerKey::Close);
    let ctrl_c = Input {
        key: Key::Char('c'),
        ctrl: true,
        ..Input::default()
    };
    assert_eq!(p.key(&ctrl_c), PickerKey::Close);
}

// The App's glue.

fn app() -> App {
    App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-0badc0de".into(),
            api_version: ApiVersion::V2025_10_02,
            language: crate::notebook::language::Language::Python,
        },
        PoolState::Ready,
    )
}

/// Presses `code` (with `mods`) through the keymap, as the loop does.
fn press_with(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    let event = Event::Key(KeyEvent::new(code, mods));
    let ctx = app.key_context();
    match app.keymap.action_for_event(event, ctx) {
        Some(action) => app.update(action, Instant::now()),
        None => Vec::new(),
    }
}

fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    press_with(app, code, KeyModifiers::NONE)
}

#[test]
fn shift_u_opens_the_picker_and_marked_files_upload_through_the_app() {
    let (_dir, root) = tree();
    let mut app = app();
    press(&mut app, KeyCode::F(2));
    app.open_picker(Some(root.clone()));
    assert!(app.key_context().typing);
    for k in [KeyCode::Down, KeyCode::Down, KeyCode::Char(' ')] {
        press(&mut app, k);
    }
    press(&mut app, KeyCode::Right); // on b.txt: nothing
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Right); // into sub/, on c.txt
    press(&mut app, KeyCode::Char(' '));
    // A resize or a paste leaves the picker as it is.
    app.update(Action::Resize, Instant::now());
    app.update(Action::Paste("x".into()), Instant::now());
    match press(&mut app, KeyCode::Enter).as_slice() {
        [
            Effect::Files(FileCommand::Upload {
                paths,
                folder: None,
            }),
        ] => {
            assert_eq!(paths, &vec![root.join("a.txt"), root.join("sub/c.txt")]);
        }
        other => panic!("{other:?}"),
    }
    assert!(app.overlays.picker().is_none());
    assert!(app.files.transfer.is_some());

    // A transfer is under way: Enter keeps the picker and its marks, saying why.
    app.open_picker(Some(root.clone()));
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::End);
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    let picker = app.overlays.picker().expect("still open");
    assert_eq!(picker.marked().len(), 2);
    assert!(
        picker
            .notice
            .as_deref()
            .unwrap()
            .contains("transfer is under way")
    );
    press(&mut app, KeyCode::Esc);

    // `U` in the pane opens it in the working directory.
    press_with(&mut app, KeyCode::Char('U'), KeyModifiers::SHIFT);
    let picker = app.overlays.picker().expect("U opens the picker");
    assert_eq!(picker.cwd(), std::env::current_dir().unwrap());
}

#[test]
fn esc_closes_the_picker_without_effects() {
    let (_dir, root) = tree();
    let mut app = app();
    press(&mut app, KeyCode::F(2));
    app.open_picker(Some(root));
    press(&mut app, KeyCode::Char('a'));
    assert!(press(&mut app, KeyCode::Esc).is_empty());
    assert!(app.overlays.picker().is_none());
    assert!(app.files.transfer.is_none());
    assert!(
        app.pane_focused(crate::tui::app::SidePane::Files),
        "the pane keeps the keys"
    );
}

#[test]
fn ctrl_o_in_the_upload_prompt_opens_the_picker_in_the_typed_folder() {
    let (_dir, root) = tree();
    let mut app = app();
    press(&mut app, KeyCode::F(2));
    press(&mut app, KeyCode::Char('u'));
    assert!(matches!(app.files_prompt(), Some(FilesPrompt::Upload)));
    app.update(
        Action::Paste(root.join("sub").display().to_string()),
        Instant::now(),
    );
    press_with(&mut app, KeyCode::Char('o'), KeyModifiers::CONTROL);
    assert!(app.prompt().is_none());
    let picker = app.overlays.picker().expect("Ctrl+O opens the picker");
    assert_eq!(picker.cwd(), root.join("sub"));

    // Not a folder: the working directory.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('u'));
    app.update(Action::Paste("no-such-thing".into()), Instant::now());
    press_with(&mut app, KeyCode::Char('o'), KeyModifiers::CONTROL);
    let picker = app.overlays.picker().expect("Ctrl+O opens the picker");
    assert_eq!(picker.cwd(), std::env::current_dir().unwrap());
}

#[test]
fn enter_uploads_the_marked_files_even_on_a_folder_or_the_parent() {
    let (_dir, root) = tree();
    let mut p = FilePicker::open(&root).unwrap();
    go_to(&mut p, "a.txt");
    p.key(&ch(' '));
    p.key(&key(Key::Home));
    assert_eq!(selected_name(&p), "../");
    assert_eq!(
        p.key(&key(Key::Enter)),
        PickerKey::Upload(vec![root.join("a.txt")])
    );
    go_to(&mut p, "sub/");
    assert_eq!(
        p.key(&key(Key::Enter)),
        PickerKey::Upload(vec![root.join("a.txt")])
    );
}
