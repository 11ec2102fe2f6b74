//! Quitting without losing a cell: the question the quit action asks, what
//! is kept when the notebook is quit anyway, and the cell filled in from the
//! flight recorder when the notebook is opened again. State tests: no
//! terminal, no network (the saver writes to a temporary folder).

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ratatui_textarea::{Input, Key};

use super::super::tests::{exec, run, test_app};
use crate::notebook::ipynb::{QUEUED_WHEN_QUIT, RUNNING_WHEN_QUIT};
use crate::notebook::{Cell, CellOutcome, Output, QuitWhile, StreamName, Waiting, store};
use crate::protocol::events::{OutputChunk, StreamName as LiveStream};
use crate::session::{FoundRecord, RecordLookup, SessionEvent, SessionsCommand, SessionsEvent};
use crate::tui::action::{Action, Effect};
use crate::tui::app::{App, Purpose};
use crate::tui::notebook::NotebookAction;
use crate::tui::widgets::prompt::Ask;

fn key(key: Key) -> Action {
    Action::Edit(Input {
        key,
        ..Input::default()
    })
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        let k = if c == '\n' { Key::Enter } else { Key::Char(c) };
        app.update(key(k), Instant::now());
    }
}

/// The quit question on screen, `width` columns wide; `None` when the open
/// prompt (if any) is not it.
fn quit_question(app: &App, width: usize) -> Option<String> {
    match app.prompt() {
        Some(prompt) if matches!(prompt.purpose, Purpose::Quit) => match &prompt.ask {
            Ask::YesNo(q) => Some(q.text(width)),
            Ask::Line(_) => None,
        },
        _ => None,
    }
}

/// A cell of this app started running, and the editor holds three typed
/// lines: the quit action asks, naming both, and says what is kept; Esc
/// stays; asked again, the quit key a second time quits.
#[test]
fn quitting_with_a_running_cell_and_typed_text_asks_first() {
    let mut app = test_app();
    let now = Instant::now();
    let sleeping = run(&mut app, "import time; time.sleep(5); print(\"done\")", now);
    app.handle_event(SessionEvent::ExecutionStarted(sleeping), now);
    type_text(&mut app, "a = 1\nb = 2\nprint(a + b)");

    app.update(Action::Quit, now);
    assert!(!app.should_quit, "asks first");
    assert_eq!(
        quit_question(&app, 200).as_deref(),
        Some(
            "A cell is running (In [1]) and the editor holds 3 lines: quit anyway? The running \
             cell is kept, marked as running when you quit; the typed text comes back when you \
             open the notebook again."
        )
    );
    assert_eq!(
        quit_question(&app, 100).as_deref(),
        Some(
            "A cell is running (In [1]) and the editor holds 3 lines: quit anyway? Both are kept."
        ),
        "a narrower row keeps the short note"
    );

    app.update(key(Key::Esc), now);
    assert!(!app.should_quit, "Esc stays");
    assert!(app.prompt().is_none(), "and takes the question down");
    assert_eq!(
        app.notebook.editor.lines(),
        ["a = 1", "b = 2", "print(a + b)"]
    );

    app.update(Action::Quit, now);
    assert!(quit_question(&app, 200).is_some());
    app.update(Action::Quit, now);
    assert!(app.should_quit, "the quit key again confirms");
}

/// `y` to the question quits; nothing at stake quits at once.
#[test]
fn y_quits_and_nothing_at_stake_needs_no_question() {
    let mut app = test_app();
    let now = Instant::now();
    app.update(Action::Quit, now);
    assert!(app.should_quit, "an empty notebook quits at once");

    let mut app = test_app();
    run(&mut app, "x = 1", now);
    run(&mut app, "y = 2", now);
    app.update(Action::Quit, now);
    assert_eq!(
        quit_question(&app, 200).as_deref(),
        Some(
            "2 cells are queued: quit anyway? The queued cells are kept, marked as queued when \
             you quit."
        )
    );
    app.update(key(Key::Char('y')), now);
    assert!(app.should_quit);

    // Once the cells settled and the editor is empty, nothing is at stake.
    let mut app = test_app();
    let only = run(&mut app, "z = 3", now);
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: only,
            outcome: Ok(exec("", None)),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    app.update(Action::Quit, now);
    assert!(app.should_quit);
}

/// A cell brought back from history, unchanged, is kept in the notebook
/// already: no question; edited, it is typed text.
#[test]
fn a_cell_recalled_from_history_is_not_typed_text_until_edited() {
    let mut app = test_app();
    let now = Instant::now();
    let done = run(&mut app, "x = 1", now);
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: done,
            outcome: Ok(exec("", None)),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    app.update(Action::Notebook(NotebookAction::HistoryPrev), now);
    assert_eq!(app.notebook.editor.lines(), ["x = 1"]);
    assert_eq!(app.notebook.at_stake().typed_lines, None);
    type_text(&mut app, "0");
    assert_eq!(app.notebook.at_stake().typed_lines, Some(1));
    app.update(Action::Quit, now);
    assert_eq!(
        quit_question(&app, 200).as_deref(),
        Some(
            "The editor holds 1 line: quit anyway? The typed text comes back when you open the \
             notebook again."
        )
    );
}

/// Ctrl+C twice with nothing running asks too when text is typed; the quit
/// question over the history search goes back to the search when answered
/// no.
#[test]
fn the_other_ways_to_quit_ask_the_same_question() {
    let mut app = test_app();
    let t0 = Instant::now();
    let earlier = run(&mut app, "x = 1", t0);
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: earlier,
            outcome: Ok(exec("", None)),
            exit_code: None,
            images: vec![],
        },
        t0,
    );
    type_text(&mut app, "unsaved = True");
    app.update(Action::Notebook(NotebookAction::Interrupt), t0);
    app.update(
        Action::Notebook(NotebookAction::Interrupt),
        t0 + Duration::from_millis(500),
    );
    assert!(!app.should_quit);
    assert!(quit_question(&app, 200).is_some());
    app.update(key(Key::Char('n')), t0);
    assert!(!app.should_quit);

    app.update(Action::Notebook(NotebookAction::HistorySearch), t0);
    assert_eq!(app.overlay(), Some(crate::tui::app::Overlay::HistorySearch));
    app.update(Action::Quit, t0);
    assert!(quit_question(&app, 200).is_some(), "asked over the search");
    app.update(key(Key::Esc), t0);
    assert!(!app.should_quit);
    assert_eq!(
        app.overlay(),
        Some(crate::tui::app::Overlay::HistorySearch),
        "the search is still open beneath"
    );
}

/// What the file holds once the app (with a saver on `path`) was quit with
/// `keep` and dropped.
fn saved_after_quit(
    mut app: App,
    thread: store::SaverThread,
    path: &std::path::Path,
) -> crate::notebook::ipynb::ReadNotebook {
    app.keep_at_quit(true, Instant::now());
    drop(app);
    thread.join();
    store::load(path).unwrap().expect("saved")
}

fn with_saver(app: &mut App) -> (tempfile::TempDir, std::path::PathBuf, store::SaverThread) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nb.ipynb");
    let place = crate::tui::persist::Place::new(
        None,
        &app.config.identifier,
        app.config.api_version,
        app.config.language,
    );
    let (saver, thread) = store::spawn_saver(path.clone(), place.meta, vec![], None).unwrap();
    app.notebook.set_saver(saver);
    (dir, path, thread)
}

/// Quit anyway: the running cell is saved with what it printed so far,
/// marked as running when you quit, with its execution id (its running
/// output named it) and session; the queued one as queued when you quit;
/// the typed text as the notebook's draft. Nothing is lost.
#[test]
fn quitting_keeps_the_running_cell_the_queued_one_and_the_typed_text() {
    let mut app = test_app();
    let (_dir, path, thread) = with_saver(&mut app);
    app.sessions.pane.ledger_pool = "local/PythonLTS/127.0.0.1:8341".into();
    let now = Instant::now();
    let sleeping = run(&mut app, "import time; time.sleep(5); print(\"done\")", now);
    app.handle_event(SessionEvent::ExecutionStarted(sleeping), now);
    app.handle_event(
        SessionEvent::LiveOutput {
            own: true,
            chunk: OutputChunk {
                identifier: app.config.identifier.clone(),
                execution_id: "exec-7".into(),
                client: Some("sessionpad/0.1.0".into()),
                stream: LiveStream::Stdout,
                text: "so far\n".into(),
            },
        },
        now,
    );
    run(&mut app, "after = 1", now);
    type_text(&mut app, "for i in range(3):\n    print(i)");

    let nb = saved_after_quit(app, thread, &path);
    assert_eq!(nb.cells.len(), 2, "{:?}", nb.cells);
    let running = &nb.cells[0];
    assert_eq!(
        running.source,
        "import time; time.sleep(5); print(\"done\")"
    );
    assert_eq!(running.outcome, Some(CellOutcome::Unknown));
    assert_eq!(
        running.outputs,
        vec![Output::Stream {
            name: StreamName::Stdout,
            text: "so far\n".into()
        }]
    );
    let quit = running.quit_while.as_deref().expect("marked");
    assert_eq!(quit.was, Waiting::Running);
    assert_eq!(quit.identifier, "sessionpad-test0001");
    assert_eq!(quit.execution_id.as_deref(), Some("exec-7"));
    assert_eq!(quit.pool.as_deref(), Some("local/PythonLTS/127.0.0.1:8341"));
    assert!(quit.started_at.is_some());
    assert!(quit.quit_at >= quit.started_at);
    assert!(running.awaits_record());
    let queued = nb.cells[1].quit_while.as_deref().expect("marked");
    assert_eq!(queued.was, Waiting::Queued);
    assert_eq!(
        nb.draft.as_deref(),
        Some("for i in range(3):\n    print(i)")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(RUNNING_WHEN_QUIT), "{text}");
    assert!(text.contains(QUEUED_WHEN_QUIT), "{text}");
}

/// The draft comes back into the editor of the reopened notebook, as it
/// was: quitting again without touching it asks nothing and keeps it.
#[test]
fn the_draft_comes_back_and_is_kept_again() {
    let mut app = test_app();
    app.notebook.editor.restore_draft("half = (");
    assert_eq!(app.notebook.editor.lines(), ["half = ("]);
    assert_eq!(app.notebook.at_stake().typed_lines, None, "kept already");
    assert_eq!(app.notebook.editor.draft().as_deref(), Some("half = ("));
    app.update(Action::Quit, Instant::now());
    assert!(app.should_quit);
}

/// A cell that was running when the notebook was quit, as it is read back.
fn left_running(execution_id: Option<&str>) -> Cell {
    let mut nb = crate::notebook::Notebook::default();
    nb.push("import time; time.sleep(5); print(\"done\")".into());
    let mut cell = nb.cells.remove(0);
    cell.quit_waiting(QuitWhile {
        was: Waiting::Running,
        identifier: "sessionpad-test0001".into(),
        pool: Some("local/PythonLTS/127.0.0.1:8341".into()),
        execution_id: execution_id.map(str::to_string),
        started_at: Some(chrono::Utc::now()),
        quit_at: Some(chrono::Utc::now()),
        recorded_seq: None,
    });
    cell
}

/// Reopened: the cell asks the flight recorder for its record, by its
/// execution id; the record fills it in (outputs, outcome), and the status
/// line says they came from the record.
#[test]
fn a_reopened_cell_is_filled_in_from_its_record() {
    let mut app = test_app();
    app.load_history(vec![left_running(Some("exec-7"))], vec![]);
    let effects = app.look_up_quit_cells();
    let lookup = match effects.as_slice() {
        [Effect::Sessions(SessionsCommand::FindRecord(lookup))] => lookup.clone(),
        other => panic!("expected one lookup, got {other:?}"),
    };
    assert_eq!(lookup.cell, 0);
    assert_eq!(lookup.execution_id.as_deref(), Some("exec-7"));
    assert_eq!(lookup.identifier, "sessionpad-test0001");

    let mut recorded = left_running(None);
    recorded.quit_while = None;
    recorded.outputs = vec![Output::Stream {
        name: StreamName::Stdout,
        text: "done\n".into(),
    }];
    recorded.outcome = Some(CellOutcome::Succeeded);
    recorded.duration = Some(Duration::from_secs(5));
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::FoundRecord {
            lookup,
            result: Ok(Some(Box::new(FoundRecord {
                cell: recorded,
                seq: 12,
                images: vec![],
                client_gone: true,
            }))),
        }),
        Instant::now(),
    );
    let cell = &app.notebook.cells()[0];
    assert_eq!(cell.outcome, Some(CellOutcome::Succeeded));
    assert_eq!(
        cell.outputs,
        vec![Output::Stream {
            name: StreamName::Stdout,
            text: "done\n".into()
        }]
    );
    assert_eq!(
        cell.quit_while.as_deref().and_then(|q| q.recorded_seq),
        Some(12)
    );
    assert_eq!(
        app.notice.as_deref(),
        Some("In [1] ended after you quit: outputs from the flight recorder")
    );
    assert!(app.look_up_quit_cells().is_empty(), "filled in: no lookup");
}

/// No record (yet): the cell stays running when you quit, and the status
/// line says the flight recorder has none.
#[test]
fn without_a_record_the_cell_stays_running_when_you_quit() {
    let mut app = test_app();
    app.load_history(vec![left_running(None)], vec![]);
    let lookup = match app.look_up_quit_cells().as_slice() {
        [Effect::Sessions(SessionsCommand::FindRecord(lookup))] => lookup.clone(),
        other => panic!("expected one lookup, got {other:?}"),
    };
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::FoundRecord {
            lookup: lookup.clone(),
            result: Ok(None),
        }),
        Instant::now(),
    );
    assert!(app.notebook.cells()[0].awaits_record());
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.contains("not in the flight recorder (yet)")),
        "{:?}",
        app.notice
    );
    // An answer about a cell that is not the one asked about changes nothing.
    let other = RecordLookup {
        code: "something else".into(),
        ..lookup
    };
    app.notice = None;
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::FoundRecord {
            lookup: other,
            result: Ok(None),
        }),
        Instant::now(),
    );
    assert_eq!(app.notice, None);
}

/// Text typed and set aside by browsing history (Up) is still typed text:
/// quitting asks about it and keeps it, not the cell shown.
#[test]
fn typed_text_set_aside_by_history_browsing_is_kept() {
    let mut app = test_app();
    let now = Instant::now();
    let done = run(&mut app, "x = 1", now);
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: done,
            outcome: Ok(exec("", None)),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    type_text(&mut app, "draft = 1");
    app.update(Action::Notebook(NotebookAction::HistoryPrev), now);
    assert_eq!(app.notebook.editor.lines(), ["x = 1"]);
    assert_eq!(app.notebook.at_stake().typed_lines, Some(1));
    assert_eq!(app.notebook.editor.draft().as_deref(), Some("draft = 1"));
    app.update(Action::Notebook(NotebookAction::HistoryNext), now);
    assert_eq!(app.notebook.editor.lines(), ["draft = 1"]);
    assert_eq!(app.notebook.at_stake().typed_lines, Some(1));
}

/// The notebook's draft given back while the editor holds other text (the
/// text carried from another pool) waits behind it: both are kept at quit,
/// and it comes into the editor after the text is run.
#[test]
fn a_draft_given_back_behind_other_text_is_kept_and_offered_next() {
    let mut app = test_app();
    let now = Instant::now();
    type_text(&mut app, "carried = 1");
    app.notebook.editor.restore_draft("own = 2");
    assert_eq!(app.notebook.editor.lines(), ["carried = 1"]);
    assert_eq!(
        app.notebook.editor.draft().as_deref(),
        Some("carried = 1\n\nown = 2")
    );
    app.update(Action::Notebook(NotebookAction::RunCell), now);
    assert_eq!(app.notebook.cells()[0].source, "carried = 1");
    assert_eq!(app.notebook.editor.lines(), ["own = 2"]);
    assert_eq!(app.notebook.at_stake().typed_lines, None, "kept already");
    assert_eq!(app.notebook.editor.draft().as_deref(), Some("own = 2"));
}

/// Ctrl+C in the editor (issue 27): with the editor empty it opens the quit
/// window; text typed in that window is cleared by the next Ctrl+C, which
/// closes the window, so a third Ctrl+C warns again instead of quitting.
#[test]
fn ctrl_c_clearing_the_cell_closes_the_quit_window() {
    let mut app = test_app();
    let t0 = Instant::now();
    let ctrl_c = || Action::Notebook(NotebookAction::ClearOrInterrupt);
    app.update(ctrl_c(), t0);
    type_text(&mut app, "x = 1");
    app.update(ctrl_c(), t0 + Duration::from_millis(300));
    assert!(app.notebook.editor.is_empty());
    app.update(ctrl_c(), t0 + Duration::from_millis(600));
    assert!(!app.should_quit, "quit without a second warning");
    assert!(quit_question(&app, 200).is_none());
    app.update(Action::Notebook(NotebookAction::Undo), t0);
    assert_eq!(app.notebook.editor.lines(), ["x = 1"]);
}
