//! State tests of recorded sessions in the notebook (`tui/app/recorded.rs`): read
//! only views, what waits meanwhile, catching up when following begins. No
//! terminal, no network, no ledger (the worker's reads are answered here).

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use super::super::tests::{exec, run, test_app};
use super::*;
use crate::notebook::language::Language;
use crate::notebook::{CellOutcome, Output, StreamName};
use crate::session::SessionsEvent;

fn cell(n: u32, source: &str, stdout: &str) -> Cell {
    Cell {
        source: source.into(),
        execution_count: n,
        outputs: vec![Output::Stream {
            name: StreamName::Stdout,
            text: stdout.into(),
        }],
        outcome: Some(CellOutcome::Succeeded),
        duration: Some(Duration::from_millis(5)),
        exit_code: None,
        stdin: None,
        quit_while: None,
        output_streams_max_length: None,
        network: Vec::new(),
    }
}

/// A recorded notebook of `cells` (source, stdout), run by `client`, with
/// ledger seqs from `first_seq`.
#[allow(clippy::unnecessary_box_returns)] // the event carries it boxed
fn recorded(cells: &[(&str, &str)], client: &str, first_seq: i64) -> Box<RecordedNotebook> {
    Box::new(RecordedNotebook {
        cells: (1..)
            .zip(cells)
            .map(|(n, (source, out))| cell(n, source, out))
            .collect(),
        calls: (first_seq..)
            .take(cells.len())
            .map(|seq| (Some(client.to_string()), seq))
            .collect(),
        language: Language::Python,
        images: vec![],
        file_calls: 0,
        missing_images: 0,
        last_seq: Some(first_seq + i64::try_from(cells.len()).unwrap() - 1),
        records: vec![],
        uploads_after: vec![],
    })
}

fn agent_session() -> RecordedSession {
    RecordedSession {
        pool: "local".into(),
        identifier: "agent-\u{1b}[2J7".into(),
        calls: 3,
        cells: 2,
        first: chrono::Utc::now(),
        last: chrono::Utc::now(),
        client: Some("langchain/1.0".into()),
        first_client: Some("langchain/1.0".into()),
    }
}

/// Asks for `recorded`'s cells then answers with `got`.
fn open(app: &mut App, then: Then, got: Box<RecordedNotebook>) -> Vec<Effect> {
    let effects = app.read_recorded(&agent_session(), then);
    let [Effect::Sessions(SessionsCommand::OpenRecorded(request))] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(request.pool.as_deref(), Some("local"));
    assert!(
        !request.others_only,
        "the whole session, the notebook's calls too"
    );
    let request = request.clone();
    answer(app, &request, got)
}

fn followed(seq: i64, code: &str) -> SessionEvent {
    super::super::follow::tests::followed_entry(super::super::follow::tests::entry_by(
        seq,
        code,
        &format!("{code}\n"),
        "agent/2",
    ))
}

/// Answers the worker's read `request` with `got`.
fn answer(app: &mut App, request: &RecordedRequest, got: Box<RecordedNotebook>) -> Vec<Effect> {
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::OpenedRecorded {
            request: request.clone(),
            result: Ok(got),
        }),
        Instant::now(),
    )
}

fn sources(app: &App) -> Vec<&str> {
    app.notebook
        .book
        .cells
        .iter()
        .map(|c| c.source.as_str())
        .collect()
}

#[test]
fn a_recorded_session_shows_read_only_and_the_live_notebook_comes_back() {
    let mut app = test_app();
    let now = Instant::now();
    let live_run = run(&mut app, "x = 1", now);
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: live_run,
            outcome: Ok(exec("", None)),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    app.follow.following = true;
    open(
        &mut app,
        Then::View,
        recorded(
            &[("a = 2", "two\n"), ("print(a)", "2\n")],
            "langchain/1.0 py",
            10,
        ),
    );
    assert_eq!(sources(&app), ["a = 2", "print(a)"]);
    assert_eq!(
        app.follow.marks(),
        vec![
            (0, "ran by langchain/1.0".to_string()),
            (1, "ran by langchain/1.0".to_string())
        ]
    );
    let view = app.recorded.view.as_ref().expect("a view");
    assert_eq!(view.identifier, "agent-\u{1b}[2J7");
    let notice = app.notice.clone().unwrap_or_default();
    assert!(notice.contains("read-only"), "{notice}");
    assert!(!notice.contains('\u{1b}'), "the identifier is sanitised");
    // News for the live notebook waits: the recorded one is not touched.
    app.handle_event(followed(40, "agent_cell()"), now);
    assert_eq!(app.notebook.book.cells.len(), 2);
    // Typing a cell brings the live notebook back (with what waited), and
    // runs there.
    let sent = run(&mut app, "y = 3", now);
    assert!(app.recorded.view.is_none());
    assert_eq!(sources(&app), ["x = 1", "agent_cell()", "y = 3"]);
    assert_ne!(sent, live_run);
    assert_eq!(app.follow.marks(), vec![(1, "ran by agent/2".to_string())]);
}

#[test]
fn no_view_opens_while_a_cell_runs() {
    let mut app = test_app();
    run(&mut app, "import time; time.sleep(9)", Instant::now());
    assert!(app.read_recorded(&agent_session(), Then::View).is_empty());
    assert!(
        app.notice
            .as_deref()
            .unwrap_or_default()
            .contains("still running")
    );
    // Export and replay need no view: they may be asked meanwhile.
    assert_eq!(app.read_recorded(&agent_session(), Then::Export).len(), 1);
}

#[test]
fn export_asks_where_with_a_safe_file_name_and_the_notebook_text() {
    let mut app = test_app();
    open(
        &mut app,
        Then::Export,
        recorded(&[("a = 2", "two\n")], "langchain/1.0", 1),
    );
    assert!(app.recorded.view.is_none(), "an export shows nothing");
    let Some(crate::tui::sessions::SessionsPrompt::ExportRecorded { bytes, cells, .. }) =
        app.sessions_prompt()
    else {
        panic!("{:?}", app.prompt());
    };
    assert_eq!(*cells, 1);
    let read = crate::notebook::ipynb::from_str(std::str::from_utf8(bytes).unwrap()).unwrap();
    assert_eq!(read.cells.len(), 1);
    assert_eq!(read.cells[0].source, "a = 2");
    assert_eq!(export_name("agent-\u{1b}[2J7"), "agent-2J7.ipynb");
    assert_eq!(export_name("../../.."), "recorded.ipynb");
}

#[test]
fn replay_asks_then_runs_the_cells_in_a_fresh_session() {
    let mut app = test_app();
    open(
        &mut app,
        Then::Replay,
        recorded(&[("a = 2", ""), ("print(a)", "2\n")], "langchain/1.0", 1),
    );
    let Some(crate::tui::sessions::SessionsPrompt::ReplayRecorded { identifier, .. }) =
        app.sessions_prompt()
    else {
        panic!("{:?}", app.prompt());
    };
    let fresh = identifier.clone();
    assert!(fresh.starts_with("replay-"), "{fresh}");
    let yes = crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('y'),
        crossterm::event::KeyModifiers::NONE,
    ));
    let action = app.keymap.action_for_event(yes, app.key_context()).unwrap();
    let effects = app.update(action, Instant::now());
    assert_eq!(app.config.identifier, fresh);
    let codes: Vec<&str> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Execute { code, .. } => Some(code.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(codes, ["a = 2", "print(a)"]);
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::SwitchSession { identifier } if *identifier == fresh))
    );
}

#[test]
fn following_catches_up_on_earlier_calls_once_each() {
    let mut app = test_app();
    let now = Instant::now();
    let effects = app.set_following(true);
    let [Effect::Sessions(SessionsCommand::OpenRecorded(request))] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(request.others_only);
    assert_eq!(request.identifier, app.config.identifier);
    assert_eq!(request.after, None, "never followed here: everything");
    // A call recorded meanwhile arrives on the stream before the catch-up.
    app.handle_event(followed(6, "later()"), now);
    let request = request.clone();
    answer(
        &mut app,
        &request,
        recorded(&[("a = 1", ""), ("later()", "")], "agent/2", 5),
    );
    assert_eq!(
        sources(&app),
        ["later()", "a = 1"],
        "seq 6 is not shown twice"
    );
    assert!(app.follow.marks()[1].1.contains("before following"));
    assert_eq!(app.notebook.book.cells[1].execution_count, 2);
    // Stopped before the answer came, the catch-up adds nothing.
    let effects = app.set_following(true);
    let [Effect::Sessions(SessionsCommand::OpenRecorded(again))] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    app.set_following(false);
    let again = again.clone();
    answer(&mut app, &again, recorded(&[("b = 1", "")], "agent/2", 9));
    assert_eq!(app.notebook.book.cells.len(), 2);
}
