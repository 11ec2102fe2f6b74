//! Copy, save and the history search, on the state alone: what is queued for the
//! loop, what the prompts take, what ends in the editor.

use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ratatui_textarea::{Input, Key};

use super::super::tests::test_app;
use super::*;
use crate::protocol::{Execution, ExecutionImage, ExecutionStatus};
use crate::session::SessionEvent;
use crate::tui::local::{LocalOutcome, LocalWork, SaveRequest};
use crate::tui::notebook::{NotebookAction, NotebookPrompt};

fn key(app: &mut App, key: Key) -> Vec<Effect> {
    app.update(
        Action::Edit(Input {
            key,
            ..Input::default()
        }),
        Instant::now(),
    )
}

/// The copies and saves among `effects`.
fn local(effects: Vec<Effect>) -> Vec<LocalWork> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Local(work) => Some(work),
            _ => None,
        })
        .collect()
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, Key::Char(c));
    }
}

/// Runs `code` and finishes it with `stdout` (and a PNG when `image`).
fn ran(app: &mut App, code: &str, stdout: &str, image: bool) {
    let now = Instant::now();
    app.update(Action::Paste(code.into()), now);
    let run = match app
        .update(Action::Notebook(NotebookAction::RunCell), now)
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    };
    let images = if image {
        vec![ExecutionImage {
            format: "png".into(),
            data: vec![0x89, b'P', b'N', b'G'],
        }]
    } else {
        vec![]
    };
    let decoded = images.iter().map(|_| Err("test".to_string())).collect();
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run,
            outcome: Ok(Execution {
                execution_count: None,
                id: None,
                status: ExecutionStatus::Succeeded,
                stdout: stdout.into(),
                stderr: String::new(),
                result: None,
                images,
                duration: Duration::from_millis(2),
                network: Vec::new(),
            }),
            exit_code: None,
            images: decoded,
        },
        now,
    );
}

#[test]
fn copy_queues_the_plain_output_or_the_code() {
    let mut app = test_app();
    let now = Instant::now();
    app.update(Action::Notebook(NotebookAction::CopyOutput), now);
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.starts_with("no cell selected"))
    );
    ran(
        &mut app,
        "print('hi')",
        "\x1b[1mhi\x1b[0m\x1b]8;;http://x\x1b\\\n",
        false,
    );
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    let mut effects = app.update(Action::Notebook(NotebookAction::CopyOutput), now);
    effects.extend(app.update(Action::Notebook(NotebookAction::CopyInput), now));
    assert_eq!(
        local(effects),
        vec![
            LocalWork::Copy {
                text: "hi\n".into(),
                what: "In [1]'s output".into()
            },
            LocalWork::Copy {
                text: "print('hi')".into(),
                what: "In [1]".into()
            },
        ]
    );
    app.finish_local_work(LocalOutcome::Copied {
        what: "In [1]'s output".into(),
        bytes: 3,
        result: Ok(()),
    });
    assert_eq!(
        app.notice.as_deref(),
        Some("copied In [1]'s output (3 B) to the clipboard")
    );
}

/// Tab completes the save path against the local folders (spaces are part of
/// the one path; a folder gets its `/`).
#[test]
fn tab_completes_the_save_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("my plots")).unwrap();
    let mut app = test_app();
    let now = Instant::now();
    ran(&mut app, "plot()", "drawn\n", true);
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    app.update(Action::Notebook(NotebookAction::SaveOutput), now);
    for _ in 0.."out-1.png".len() {
        key(&mut app, Key::Backspace);
    }
    app.update(Action::Paste(format!("{}/my", dir.path().display())), now);
    key(&mut app, Key::Tab);
    assert!(matches!(
        app.notebook_prompt(),
        Some(NotebookPrompt::SavePath { .. })
    ));
    assert_eq!(
        app.prompt().map(|p| p.text().to_string()),
        Some(format!("{}/my plots/", dir.path().display()))
    );
    typed(&mut app, "a.txt");
    let work = local(key(&mut app, Key::Enter));
    let [LocalWork::Save(request)] = work.as_slice() else {
        panic!("{work:?}");
    };
    assert_eq!(request.path, dir.path().join("my plots/a.txt"));
}

#[test]
fn save_asks_for_a_path_and_never_replaces_a_file_unasked() {
    let mut app = test_app();
    let now = Instant::now();
    ran(&mut app, "plot()", "drawn\n", true);
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    app.update(Action::Notebook(NotebookAction::SaveOutput), now);
    assert!(app.key_context().typing, "the prompt takes the keys");
    assert!(matches!(
        app.notebook_prompt(),
        Some(NotebookPrompt::SavePath { .. })
    ));
    assert_eq!(
        app.prompt().map(crate::tui::widgets::prompt::Prompt::text),
        Some("out-1.png")
    );
    // `q` is typed into the prompt, not a quit.
    for _ in 0.."png".len() {
        key(&mut app, Key::Backspace);
    }
    typed(&mut app, "txt");
    assert!(!app.should_quit);
    let work = local(key(&mut app, Key::Enter));
    assert!(app.prompt().is_none());
    let [LocalWork::Save(request)] = work.as_slice() else {
        panic!("{work:?}");
    };
    assert_eq!(request.path, PathBuf::from("out-1.txt"));
    assert_eq!(request.bytes, b"drawn\n".to_vec());
    assert!(!request.overwrite);
    // The file exists: the user is asked, and `n` keeps it.
    let exists = |request: &SaveRequest| LocalOutcome::Saved {
        request: request.clone(),
        result: Err(io::Error::from(io::ErrorKind::AlreadyExists)),
    };
    app.finish_local_work(exists(request));
    assert!(matches!(
        app.notebook_prompt(),
        Some(NotebookPrompt::Overwrite(_))
    ));
    assert!(key(&mut app, Key::Char('n')).is_empty());
    assert!(app.prompt().is_none());
    assert_eq!(app.notice.as_deref(), Some("not saved: out-1.txt is kept"));
    // Asked again, `y` replaces it.
    app.finish_local_work(exists(request));
    let work = local(key(&mut app, Key::Char('y')));
    assert!(matches!(work.as_slice(), [LocalWork::Save(r)] if r.overwrite));
    app.finish_local_work(LocalOutcome::Saved {
        request: request.clone(),
        result: Ok(()),
    });
    assert_eq!(
        app.notice.as_deref(),
        Some("saved In [1]'s text (6 B) to out-1.txt")
    );
}

#[test]
fn saving_an_image_the_cell_lacks_says_why_and_esc_cancels() {
    let mut app = test_app();
    let now = Instant::now();
    ran(&mut app, "print(1)", "1\n", false);
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    app.update(Action::Notebook(NotebookAction::SaveOutput), now);
    for _ in 0.."txt".len() {
        key(&mut app, Key::Backspace);
    }
    typed(&mut app, "png");
    key(&mut app, Key::Enter);
    assert_eq!(
        app.notice.as_deref(),
        Some("not saved: In [1] has no image")
    );
    app.update(Action::Notebook(NotebookAction::SaveOutput), now);
    key(&mut app, Key::Esc);
    assert!(app.overlays.history_search().is_none());
    assert_eq!(app.notice.as_deref(), Some("not saved"));
}

#[test]
fn history_search_brings_a_cell_back_and_running_it_appends() {
    let mut app = test_app();
    let now = Instant::now();
    ran(&mut app, "import math", "", false);
    ran(&mut app, "math.pi", "", false);
    ran(&mut app, "x = 2", "", false);
    app.update(Action::Paste("draft".into()), now);
    app.update(Action::Notebook(NotebookAction::HistorySearch), now);
    typed(&mut app, "MATH");
    let search = app.overlays.history_search().expect("the search is open");
    assert_eq!(search.matches(), &[1, 0]);
    key(&mut app, Key::Down);
    key(&mut app, Key::Enter);
    assert!(app.overlays.history_search().is_none());
    assert_eq!(app.notebook.editor.lines(), ["import math"]);
    assert!(
        (app.focus != crate::tui::app::Focus::Notebook),
        "the editor has the keys"
    );
    let effects = app.update(Action::Notebook(NotebookAction::RunCell), now);
    assert!(matches!(effects.as_slice(), [Effect::Execute { code, .. }] if code == "import math"));
    assert_eq!(
        app.notebook.book.cells.len(),
        4,
        "a new cell, the record untouched"
    );
    assert_eq!(
        app.notebook.book.cells[0].outcome,
        Some(crate::notebook::CellOutcome::Succeeded)
    );
}
