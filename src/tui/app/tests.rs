//! State tests of `App::update` and `App::handle_event`: no terminal, no network.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ratatui_textarea::{Input, Key};
use serde_json::json;

use super::*;
use crate::notebook::{CellOutcome, Output};
use crate::protocol::{Execution, ExecutionStatus};
use crate::session::RunId;
use crate::session::SessionEvent;
use crate::tui::notebook::NotebookAction;

pub(crate) fn test_app() -> App {
    App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-test0001".into(),
            api_version: ApiVersion::V2025_10_02,
            language: crate::notebook::language::Language::Python,
        },
        PoolState::Ready,
    )
}

fn type_text(app: &mut App, text: &str, now: Instant) {
    for c in text.chars() {
        let key = if c == '\n' { Key::Enter } else { Key::Char(c) };
        app.update(
            Action::Edit(Input {
                key,
                ..Input::default()
            }),
            now,
        );
    }
}

pub(crate) fn run(app: &mut App, code: &str, now: Instant) -> RunId {
    type_text(app, code, now);
    match app
        .update(Action::Notebook(NotebookAction::RunCell), now)
        .as_slice()
    {
        [
            Effect::Execute {
                run,
                code: sent,
                stdin: None,
                stop_on_error: true,
                output_streams_max_length: None,
            },
        ] => {
            assert_eq!(sent, code);
            *run
        }
        other => panic!("expected one Execute effect, got {other:?}"),
    }
}

pub(crate) fn exec(stdout: &str, result: Option<serde_json::Value>) -> Execution {
    Execution {
        execution_count: None,
        id: None,
        status: ExecutionStatus::Succeeded,
        stdout: stdout.into(),
        stderr: String::new(),
        result: result.map(|json| crate::protocol::ExecutionValue {
            text: crate::protocol::python_repr::python_literal(&json),
            json: Some(json),
        }),
        images: vec![],
        duration: Duration::from_millis(3),
        network: Vec::new(),
    }
}

#[test]
fn running_a_cell_moves_it_to_the_notebook_and_empties_the_editor() {
    let mut app = test_app();
    let now = Instant::now();
    run(&mut app, "x = 6*7", now);
    assert!(app.notebook.editor.is_empty());
    assert_eq!(app.notebook.book.cells.len(), 1);
    assert_eq!(app.notebook.book.cells[0].source, "x = 6*7");
    assert_eq!(app.notebook.book.cells[0].outcome, None, "not settled");
    assert_eq!(app.pending_of(0), Some(Pending::Queued));
    assert_eq!(app.pending(), 1);
    assert!(app.notebook.outputs.is_following());
}

#[test]
fn multi_line_cells_keep_their_lines() {
    let mut app = test_app();
    run(&mut app, "for i in range(2):\n    print(i)", Instant::now());
    assert_eq!(
        app.notebook.book.cells[0].source,
        "for i in range(2):\n    print(i)"
    );
}

#[test]
fn an_empty_editor_runs_nothing() {
    let mut app = test_app();
    type_text(&mut app, "  \n", Instant::now());
    assert_eq!(
        app.update(Action::Notebook(NotebookAction::RunCell), Instant::now()),
        vec![]
    );
    assert!(app.notebook.book.cells.is_empty());
}

#[test]
fn results_go_to_the_cell_that_asked_even_out_of_order() {
    let mut app = test_app();
    let now = Instant::now();
    let a = run(&mut app, "print(x)", now);
    let b = run(&mut app, "x", now);
    app.handle_event(SessionEvent::ExecutionStarted(a), now);
    assert_eq!(
        app.pending_of(0),
        Some(Pending::Running { since: Some(now) })
    );
    assert_eq!(app.pending_of(1), Some(Pending::Queued));
    assert_eq!(app.running().map(|(i, _)| i), Some(0));
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: b,
            outcome: Ok(exec("", Some(json!(42)))),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: a,
            outcome: Ok(exec("42\n", None)),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    assert_eq!(
        app.notebook.book.cells[0].outputs,
        vec![Output::Stream {
            name: crate::notebook::StreamName::Stdout,
            text: "42\n".into()
        }]
    );
    assert_eq!(
        app.notebook.book.cells[1].outputs,
        vec![Output::ExecuteResult {
            execution_count: 2,
            text: "42".into(),
            json: Some(json!(42)),
        }]
    );
    assert_eq!(app.pending(), 0);
    assert_eq!(app.running(), None);
    assert!(!app.busy());
}

#[test]
fn a_transport_error_becomes_an_error_output_on_its_cell() {
    let mut app = test_app();
    let now = Instant::now();
    let r = run(&mut app, "x", now);
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: r,
            outcome: Err(crate::session::Failure::unreachable(
                "cannot reach the session pool",
            )),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    let cell = &app.notebook.book.cells[0];
    assert_eq!(cell.source, "x");
    assert_eq!(cell.outcome, Some(CellOutcome::Failed));
    assert_eq!(app.pending_of(0), None);
    assert!(
        matches!(&cell.outputs[..], [Output::Error { evalue, .. }] if evalue.contains("cannot reach"))
    );
}

#[test]
fn stale_replies_are_ignored() {
    let mut app = test_app();
    let now = Instant::now();
    let r = run(&mut app, "x", now);
    let finished = |run| SessionEvent::ExecutionFinished {
        run,
        outcome: Ok(exec("1\n", None)),
        exit_code: None,
        images: vec![],
    };
    app.handle_event(finished(RunId(999)), now);
    assert_eq!(app.pending_of(0), Some(Pending::Queued));
    assert_eq!(app.notebook.book.cells[0].outcome, None);
    app.handle_event(finished(r), now);
    app.handle_event(finished(r), now);
    assert_eq!(app.notebook.book.cells[0].outputs.len(), 1);
}

#[test]
fn images_are_keyed_by_their_output() {
    let mut app = test_app();
    let now = Instant::now();
    let r = run(&mut app, "plot()", now);
    let mut e = exec("hi\n", None);
    e.images = vec![crate::protocol::ExecutionImage {
        format: "png".into(),
        data: vec![0],
    }];
    let img = image::DynamicImage::new_rgba8(4, 4);
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: r,
            outcome: Ok(e),
            exit_code: None,
            images: vec![Ok(img)],
        },
        now,
    );
    let key = ImageKey { cell: 0, output: 1 };
    assert!(matches!(
        app.views.images.layout(key, 40),
        crate::tui::widgets::image::ImageLayout::Rows(_)
    ));
}

#[test]
fn up_recalls_previous_cells_and_down_comes_back_to_the_draft() {
    let mut app = test_app();
    let now = Instant::now();
    run(&mut app, "a = 1", now);
    run(&mut app, "b = 2\nb", now);
    type_text(&mut app, "dra", now);
    app.update(Action::Notebook(NotebookAction::HistoryPrev), now);
    assert_eq!(app.notebook.editor.lines(), ["b = 2", "b"]);
    assert_eq!(
        app.notebook.editor.cursor().0,
        0,
        "cursor on the first line: Up again walks on"
    );
    app.update(Action::Notebook(NotebookAction::HistoryPrev), now);
    assert_eq!(app.notebook.editor.lines(), ["a = 1"]);
    app.update(Action::Notebook(NotebookAction::HistoryPrev), now);
    assert_eq!(
        app.notebook.editor.lines(),
        ["a = 1"],
        "stays at the oldest"
    );
    app.update(Action::Notebook(NotebookAction::HistoryNext), now);
    assert_eq!(app.notebook.editor.lines(), ["b = 2", "b"]);
    assert_eq!(
        app.notebook.editor.cursor().0,
        1,
        "cursor on the last line: Down again walks on"
    );
    app.update(Action::Notebook(NotebookAction::HistoryNext), now);
    assert_eq!(app.notebook.editor.lines(), ["dra"]);
    app.update(Action::Notebook(NotebookAction::HistoryNext), now);
    assert_eq!(app.notebook.editor.lines(), ["dra"]);
}

#[test]
fn a_recalled_cell_can_be_run_again() {
    let mut app = test_app();
    let now = Instant::now();
    run(&mut app, "x", now);
    app.update(Action::Notebook(NotebookAction::HistoryPrev), now);
    assert!(
        matches!(app.update(Action::Notebook(NotebookAction::RunCell), now).as_slice(), [Effect::Execute { code, .. }] if code == "x")
    );
    assert_eq!(app.notebook.book.cells.len(), 2);
    assert!(app.notebook.editor.is_empty());
}

#[test]
fn history_in_an_empty_notebook_does_nothing() {
    let mut app = test_app();
    app.update(
        Action::Notebook(NotebookAction::HistoryPrev),
        Instant::now(),
    );
    assert!(app.notebook.editor.is_empty());
}

#[test]
fn ctrl_c_twice_within_the_window_quits() {
    let mut app = test_app();
    let t0 = Instant::now();
    app.update(Action::Notebook(NotebookAction::Interrupt), t0);
    assert!(!app.should_quit);
    assert!(app.quit_armed_until.is_some());
    app.update(
        Action::Notebook(NotebookAction::Interrupt),
        t0 + Duration::from_millis(500),
    );
    assert!(app.should_quit);
}

#[test]
fn ctrl_c_after_the_window_only_warns_again() {
    let mut app = test_app();
    let t0 = Instant::now();
    app.update(Action::Notebook(NotebookAction::Interrupt), t0);
    app.tick(t0 + QUIT_WINDOW);
    assert_eq!(app.quit_armed_until, None);
    app.update(
        Action::Notebook(NotebookAction::Interrupt),
        t0 + QUIT_WINDOW + Duration::from_millis(1),
    );
    assert!(!app.should_quit);
}

#[test]
fn paste_drops_escapes_and_keeps_lines() {
    let mut app = test_app();
    app.update(Action::Paste("a\r\nb\x1b[2J\tc".into()), Instant::now());
    assert_eq!(app.notebook.editor.lines(), ["a", "b    c"]);
}

#[test]
fn busy_only_while_something_runs() {
    let mut app = App::new(test_app().config, PoolState::Starting);
    let now = Instant::now();
    assert!(app.busy());
    assert!(app.next_wakeup(now).is_some());
    app.handle_event(SessionEvent::PoolReady, now);
    assert!(!app.busy());
    assert_eq!(app.next_wakeup(now), None);
}

#[test]
fn pool_progress_is_kept_for_the_banner() {
    let mut app = App::new(test_app().config, PoolState::Starting);
    app.handle_event(
        SessionEvent::PoolProgress("creating venv".into()),
        Instant::now(),
    );
    assert_eq!(app.pool_log, vec!["creating venv".to_string()]);
}

/// Presses `key` through the app's keymap, as the loop does.
fn press(app: &mut App, code: crossterm::event::KeyCode, mods: crossterm::event::KeyModifiers) {
    let event = crossterm::event::Event::Key(crossterm::event::KeyEvent::new(code, mods));
    if let Some(action) = app.keymap.action_for_event(event, app.key_context()) {
        app.update(action, Instant::now());
    }
}

#[test]
fn enter_auto_indents_and_ctrl_z_undoes() {
    use crossterm::event::{KeyCode, KeyModifiers};
    let mut app = test_app();
    for c in "if x:".chars() {
        press(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
    }
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    for c in "pass".chars() {
        press(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
    }
    assert_eq!(app.notebook.editor.lines(), ["if x:", "    pass"]);
    // A word at a time (issue 27): the word typed, then Enter with its indent.
    press(&mut app, KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(app.notebook.editor.lines(), ["if x:", "    "]);
    press(&mut app, KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert_eq!(app.notebook.editor.lines(), ["if x:"]);
    press(&mut app, KeyCode::Char('z'), KeyModifiers::ALT);
    assert_eq!(app.notebook.editor.lines(), ["if x:", "    "]);
}

#[test]
fn the_help_overlay_opens_takes_the_keys_and_closes() {
    use crossterm::event::{KeyCode, KeyModifiers};
    let mut app = test_app();
    press(&mut app, KeyCode::F(1), KeyModifiers::NONE);
    assert!(app.overlays.is_open(crate::tui::app::Overlay::Help));
    // `q` closes the help; it neither quits nor types.
    press(&mut app, KeyCode::Char('q'), KeyModifiers::NONE);
    assert!(!app.overlays.is_open(crate::tui::app::Overlay::Help) && !app.should_quit);
    assert!(app.notebook.editor.is_empty());
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert!(app.focus == crate::tui::app::Focus::Notebook);
    press(&mut app, KeyCode::Char('?'), KeyModifiers::NONE);
    assert!(app.overlays.is_open(crate::tui::app::Overlay::Help));
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert!(
        !app.overlays.is_open(crate::tui::app::Overlay::Help)
            && app.focus == crate::tui::app::Focus::Notebook
    );
}

#[test]
fn external_edits_replace_the_cell_or_leave_it_alone() {
    let mut app = test_app();
    let now = Instant::now();
    type_text(&mut app, "x = 1", now);
    assert_eq!(
        app.update(Action::Notebook(NotebookAction::ExternalEditor), now),
        vec![Effect::EditExternally {
            source: "x = 1".into(),
            language: crate::notebook::language::Language::Python,
        }]
    );
    app.finish_external_edit(Err("the editor \"vim\" failed".into()));
    assert_eq!(app.notebook.editor.lines(), ["x = 1"]);
    assert!(app.notice.as_deref().is_some_and(|n| n.contains("vim")));
    // The next key takes the notice down.
    app.update(Action::PageUp, now);
    assert_eq!(app.notice, None);
    app.finish_external_edit(Ok("for i in range(3):\r\n\tprint(i)".into()));
    assert_eq!(
        app.notebook.editor.lines(),
        ["for i in range(3):", "    print(i)"]
    );
    // The replacement is one undo step.
    app.update(Action::Notebook(NotebookAction::Undo), now);
    assert_eq!(app.notebook.editor.lines(), ["x = 1"]);
}
