//! The files pane's transfers: downloads (never replacing without a yes,
//! hostile names kept inside the folder, a missing folder created only after
//! a yes naming it), uploads from the prompt or a pasted path, deletes.

use pretty_assertions::assert_eq;

use super::*;
use crate::session::FileEvent;
use crate::tui::app::App;
use crate::tui::local_paths::expand_paths;
#[test]
fn download_never_replaces_without_a_yes() {
    let mut app = after_a_cell();
    let dir = tempfile::tempdir().unwrap();
    let dl = dir.path().to_path_buf();
    app.files.download_folder = dl.clone();
    app.files.pane.select_path("input.csv");
    press(&mut app, KeyCode::Char(' '));
    app.files.pane.select_path("report.csv");
    press(&mut app, KeyCode::Char(' '));
    let expected = vec![
        ("input.csv".to_string(), dl.join("input.csv")),
        ("report.csv".to_string(), dl.join("report.csv")),
    ];
    match press(&mut app, KeyCode::Char('d')).as_slice() {
        [
            Effect::Files(FileCommand::Download {
                files,
                overwrite,
                create_folder,
            }),
        ] => {
            assert_eq!(files, &expected);
            assert!(!overwrite);
            assert_eq!(create_folder, &None);
        }
        other => panic!("{other:?}"),
    }
    assert!(app.files.transfer.is_some());
    // Esc during the transfer cancels it.
    assert_eq!(
        press(&mut app, KeyCode::Esc),
        vec![Effect::Files(FileCommand::Cancel)]
    );
    let effects = app.files_event(FileEvent::Done {
        summary: "downloaded input.csv".into(),
        exists: expected[1..].to_vec(),
    });
    assert!(app.files.transfer.is_none());
    assert!(matches!(
        app.files_prompt(),
        Some(FilesPrompt::Overwrite(..))
    ));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Files(FileCommand::List { .. })]
    ));
    // Any key but y keeps the file.
    assert!(press(&mut app, KeyCode::Char('n')).is_empty());
    assert!(app.prompt().is_none());
    app.ask(crate::tui::widgets::prompt::Prompt::question(
        crate::tui::app::Purpose::Files(FilesPrompt::Overwrite(
            expected[1..].to_vec(),
            String::new(),
        )),
        crate::tui::widgets::prompt::Question::new("", "input.csv", " exists. Replace?"),
    ));
    match press(&mut app, KeyCode::Char('y')).as_slice() {
        [
            Effect::Files(FileCommand::Download {
                overwrite: true,
                files,
                ..
            }),
        ] => {
            assert_eq!(files.len(), 1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn hostile_names_download_inside_the_folder() {
    let mut app = after_a_cell();
    let dir = tempfile::tempdir().unwrap();
    app.files.download_folder = dir.path().to_path_buf();
    listed(&mut app, vec![file("../evil.txt", 1)]);
    match press(&mut app, KeyCode::Char('d')).as_slice() {
        [Effect::Files(FileCommand::Download { files, .. })] => {
            assert_eq!(files[0].1, dir.path().join("evil.txt"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn delete_asks_first() {
    let mut app = after_a_cell();
    app.files.pane.select_path("notes.md");
    assert!(press(&mut app, KeyCode::Char('x')).is_empty());
    assert!(matches!(app.files_prompt(), Some(FilesPrompt::Delete(..))));
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert_eq!(app.notice.as_deref(), Some("nothing deleted"));
    press(&mut app, KeyCode::Char('x'));
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        vec![Effect::Files(FileCommand::Delete {
            names: vec!["notes.md".into()]
        })]
    );
}

#[test]
fn upload_prompt_completes_and_a_pasted_path_uploads() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data-2025.csv");
    std::fs::write(&data, b"a,b\n1,2\n").unwrap();
    std::fs::write(dir.path().join("data-2024.csv"), b"x").unwrap();
    let base = format!("{}/", dir.path().display());
    assert_eq!(
        crate::tui::local_paths::complete_path(&format!("{base}dat")),
        format!("{base}data-202")
    );
    assert_eq!(
        crate::tui::local_paths::complete_path(&format!("{base}data-2025")),
        format!("{base}data-2025.csv")
    );
    assert_eq!(expand_paths(&format!("{base}*.csv")).unwrap().len(), 2);

    let mut app = after_a_cell();
    press(&mut app, KeyCode::Char('u'));
    assert!(matches!(app.files_prompt(), Some(FilesPrompt::Upload)));
    app.update(Action::Paste(format!("{base}data-2025")), Instant::now());
    press(&mut app, KeyCode::Tab);
    match press(&mut app, KeyCode::Enter).as_slice() {
        [
            Effect::Files(FileCommand::Upload {
                paths,
                folder: None,
            }),
        ] => {
            assert_eq!(paths, &vec![data.clone()]);
        }
        other => panic!("{other:?}"),
    }
    app.files_event(FileEvent::Done {
        summary: "uploaded".into(),
        exists: vec![],
    });
    // A file dropped on the terminal arrives as a bracketed paste of its path.
    let pasted = app.update(
        Action::Paste(format!("'{}'\n", data.display())),
        Instant::now(),
    );
    assert!(matches!(
        pasted.as_slice(),
        [Effect::Files(FileCommand::Upload { .. })]
    ));
}

#[test]
fn wildcards() {
    assert!(wildcard("*.csv", "a.csv"));
    assert!(!wildcard("*.csv", "a.csvx"));
    assert!(wildcard("a*b*c", "aXXbYYc"));
    assert!(!wildcard("a*b*c", "ac"));
    assert!(wildcard("plain", "plain"));
}

/// Types `text` into the open prompt and presses Enter.
fn type_and_enter(app: &mut App, text: &str) -> Vec<Effect> {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter)
}

#[test]
fn a_missing_download_folder_is_created_only_after_a_yes_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("new").join("sub");
    let mut app = after_a_cell();
    app.files.pane.select_path("input.csv");

    // D, a folder that does not exist: a question naming it, nothing sent.
    press(&mut app, KeyCode::Char('D'));
    assert_eq!(app.files_prompt(), Some(&FilesPrompt::Folder));
    let typed = app.prompt().map_or(0, |p| p.text().chars().count());
    for _ in 0..typed {
        press(&mut app, KeyCode::Backspace);
    }
    assert!(type_and_enter(&mut app, &missing.display().to_string()).is_empty());
    match app.files_prompt() {
        Some(FilesPrompt::CreateFolder(folder)) => assert_eq!(folder, &missing),
        other => panic!("{other:?}"),
    }
    let text = format!("{:?}", screen(&mut app, 160, 48));
    assert!(
        text.contains(&format!(
            "Create folder {} and download into it? y/N",
            missing.display()
        )),
        "{text}"
    );

    // No (any key but y): nothing created, nothing downloaded, the folder kept.
    assert!(press(&mut app, KeyCode::Char('n')).is_empty());
    assert!(app.prompt().is_none());
    assert!(app.notice.as_deref().unwrap_or("").contains("not created"));
    assert_ne!(app.files.download_folder, missing);

    // Yes: one download that creates the folder, into it and nowhere else.
    let crate::tui::action::Out::Ask(question) =
        crate::tui::files::FilesUi::ask_create_folder(missing.clone())
    else {
        panic!("the files pane asks a question");
    };
    app.ask(question.map_purpose(crate::tui::app::Purpose::Files));
    match press(&mut app, KeyCode::Char('y')).as_slice() {
        [
            Effect::Files(FileCommand::Download {
                files,
                overwrite: false,
                create_folder: Some(folder),
            }),
        ] => {
            assert_eq!(folder, &missing);
            assert_eq!(
                files,
                &[("input.csv".to_string(), missing.join("input.csv"))]
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(app.files.download_folder, missing);
    assert!(!missing.exists(), "the worker creates it, not the reducer");
}

#[test]
fn a_download_folder_that_is_a_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_folder = dir.path().join("notes.txt");
    std::fs::write(&not_a_folder, "x").unwrap();
    let mut app = after_a_cell();
    app.files.pane.select_path("input.csv");
    app.files.download_folder = not_a_folder.clone();
    assert!(press(&mut app, KeyCode::Char('d')).is_empty());
    assert!(app.prompt().is_none());
    assert_eq!(
        app.notice.as_deref(),
        Some(format!("{} is not a folder", not_a_folder.display()).as_str())
    );
}

#[test]
fn upload_paths_are_read_and_completed_as_shell_words() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("my notes.txt"), b"x").unwrap();
    std::fs::write(dir.path().join("it's.txt"), b"x").unwrap();
    let base = format!("{}/", dir.path().display());
    let complete = crate::tui::local_paths::complete_path;
    // Completed quoted; completing again keeps it; an open quote completes too.
    assert_eq!(
        complete(&format!("{base}my")),
        format!("'{base}my notes.txt'")
    );
    assert_eq!(
        complete(&format!("'{base}my")),
        format!("'{base}my notes.txt'")
    );
    assert_eq!(
        complete(&format!("{base}my\\ n")),
        format!("'{base}my notes.txt'")
    );
    assert_eq!(
        complete(&format!("a.txt '{base}my notes.txt' {base}it")),
        format!("a.txt '{base}my notes.txt' \"{base}it's.txt\"")
    );
    // Each quoting of a name with spaces reads as the one file.
    let want = vec![dir.path().join("my notes.txt")];
    for typed in [
        format!("'{base}my notes.txt'"),
        format!("\"{base}my notes.txt\""),
        format!("{base}my\\ notes.txt"),
    ] {
        assert_eq!(expand_paths(&typed).unwrap(), want, "{typed}");
    }
    assert_eq!(
        expand_paths(&format!("{base}it\\'s.txt  '{base}my notes.txt'")).unwrap(),
        vec![dir.path().join("it's.txt"), dir.path().join("my notes.txt")]
    );
    assert!(expand_paths("'open quote").is_err());
}
