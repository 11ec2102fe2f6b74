//! The notebook's cursor and stopping cells: state tests, and one frame on a
//! `TestBackend` for the highlight and the scrolling.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::super::tests::test_app;
use super::*;
use crate::notebook::{CellOutcome, Output};
use crate::protocol::{Execution, ExecutionStatus};
use crate::session::SessionEvent;
use crate::tui::action::Action;
use crate::tui::app::App;
use crate::tui::notebook::SessionBoundary;

fn run(app: &mut App, code: &str) -> RunId {
    app.update(Action::Paste(code.into()), Instant::now());
    match app
        .update(Action::Notebook(NotebookAction::RunCell), Instant::now())
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("expected one Execute effect, got {other:?}"),
    }
}

fn finished(run: RunId, stderr: &str) -> SessionEvent {
    SessionEvent::ExecutionFinished {
        run,
        outcome: Ok(Execution {
            execution_count: None,
            id: None,
            status: ExecutionStatus::Failed,
            stdout: "late\n".into(),
            stderr: stderr.into(),
            result: None,
            images: vec![],
            duration: Duration::from_millis(5),
            network: Vec::new(),
        }),
        exit_code: None,
        images: vec![],
    }
}

fn evalue(app: &App, index: usize) -> String {
    match &app.notebook.book.cells[index].outputs[..] {
        [Output::Error { ename, evalue, .. }] => format!("{ename}: {evalue}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_cursor_starts_at_the_last_cell_and_stays_in_the_notebook() {
    let mut app = test_app();
    let now = Instant::now();
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    assert_eq!(app.notebook.selected, None, "no cells, no cursor");
    for code in ["a", "b", "c"] {
        run(&mut app, code);
    }
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    assert_eq!(app.notebook.selected, Some(2));
    app.update(Action::Notebook(NotebookAction::SelectCell(-1)), now);
    assert_eq!(app.notebook.selected, Some(1));
    app.update(Action::Notebook(NotebookAction::SelectCell(-5)), now);
    assert_eq!(app.notebook.selected, Some(0));
    app.update(Action::Notebook(NotebookAction::SelectCell(9)), now);
    assert_eq!(app.notebook.selected, Some(2));
    app.update(Action::FocusEditor, now);
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    assert_eq!(
        app.notebook.selected,
        Some(2),
        "the cursor is kept across focus changes"
    );
}

#[test]
fn a_queued_cell_stopped_never_runs() {
    let mut app = test_app();
    let now = Instant::now();
    let a = run(&mut app, "slow()");
    let b = run(&mut app, "next()");
    app.handle_event(SessionEvent::ExecutionStarted(a), now);
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    assert_eq!(app.notebook.selected, Some(1));
    assert_eq!(
        app.update(Action::Notebook(NotebookAction::StopCell), now),
        vec![Effect::Abandon { run: b }]
    );
    assert_eq!(
        app.notebook.book.cells[1].outcome,
        Some(CellOutcome::Failed)
    );
    assert_eq!(app.pending_of(1), None);
    assert_eq!(
        evalue(&app, 1),
        "Abandoned: stopped before it started, not run"
    );
    assert_eq!(app.pending(), 1, "the running cell still runs");
    assert_eq!(app.running().map(|(i, _)| i), Some(0));
}

#[test]
fn a_running_cell_on_the_service_is_abandoned_and_its_late_reply_dropped() {
    let mut app = test_app();
    let now = Instant::now();
    let a = run(&mut app, "import time; time.sleep(99)");
    let b = run(&mut app, "1");
    app.handle_event(SessionEvent::ExecutionStarted(a), now);
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    app.update(Action::Notebook(NotebookAction::SelectCell(-1)), now);
    assert_eq!(
        app.update(Action::Notebook(NotebookAction::StopCell), now),
        vec![Effect::Abandon { run: a }]
    );
    assert_eq!(
        app.notice.as_deref(),
        Some("abandoned: the service has no interrupt, the session may still be busy")
    );
    assert_eq!(app.running(), None);
    assert_eq!(
        evalue(&app, 0),
        "Abandoned: the service has no interrupt, the session may still be busy"
    );
    // The reply of the abandoned run arrives anyway: it must not append output.
    app.handle_event(finished(a, ""), now);
    assert_eq!(app.notebook.book.cells[0].outputs.len(), 1);
    assert!(matches!(
        &app.notebook.book.cells[0].outputs[0],
        Output::Error { ename, .. } if ename == "Abandoned"
    ));
    // The next cell runs as usual.
    app.handle_event(SessionEvent::ExecutionStarted(b), now);
    assert_eq!(app.running().map(|(i, _)| i), Some(1));
}

#[test]
fn on_the_local_pool_stop_interrupts_first_and_abandons_second() {
    let mut app = test_app();
    app.notebook.can_interrupt = true;
    let now = Instant::now();
    let a = run(&mut app, "import time; time.sleep(99)");
    app.handle_event(SessionEvent::ExecutionStarted(a), now);
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    assert_eq!(
        app.update(Action::Notebook(NotebookAction::StopCell), now),
        vec![Effect::Interrupt { run: a }]
    );
    assert_eq!(
        app.notice.as_deref(),
        Some("interrupting In [1]… (x again abandons it)")
    );
    assert_eq!(app.pending(), 1, "an interrupted run is still awaited");
    app.handle_event(
        SessionEvent::InterruptSent {
            run: a,
            delivered: false,
        },
        now,
    );
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.contains("did not acknowledge"))
    );
    assert_eq!(
        app.update(Action::Notebook(NotebookAction::StopCell), now),
        vec![Effect::Abandon { run: a }]
    );
    assert!(evalue(&app, 0).contains("the kernel did not stop"));

    // An interrupt that works: the reply (a KeyboardInterrupt) is the cell's.
    let b = run(&mut app, "import time; time.sleep(99)");
    app.handle_event(SessionEvent::ExecutionStarted(b), now);
    app.update(Action::Notebook(NotebookAction::SelectCell(1)), now);
    assert_eq!(
        app.update(Action::Notebook(NotebookAction::StopCell), now),
        vec![Effect::Interrupt { run: b }]
    );
    app.handle_event(finished(b, "KeyboardInterrupt\n"), now);
    assert_eq!(app.pending(), 0);
    assert!(matches!(
        &app.notebook.book.cells[1].outputs[..],
        [_, Output::Error { ename, .. }] if ename == "KeyboardInterrupt"
    ));
    assert_eq!(
        app.update(Action::Notebook(NotebookAction::StopCell), now),
        vec![]
    );
    assert_eq!(app.notice.as_deref(), Some("no cell is running"));
}

/// The screen's rows, and the style of the first cell of each.
fn draw(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
) -> Vec<(String, ratatui::style::Style)> {
    let now = Instant::now();
    if let Err(never) = terminal.draw(|f| crate::tui::app::view::draw(f, app, now)) {
        match never {}
    }
    let buf = terminal.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            let text: String = (0..buf.area.width)
                .filter_map(|x| buf.cell((x, y)).map(|c| c.symbol().to_string()))
                .collect();
            let style = buf
                .cell((0, y))
                .map(ratatui::buffer::Cell::style)
                .unwrap_or_default();
            (text.trim_end().to_string(), style)
        })
        .collect()
}

#[test]
fn the_selected_prompt_is_highlighted_and_scrolled_into_view() {
    let mut app = test_app();
    let now = Instant::now();
    for i in 0..12 {
        let r = run(&mut app, &format!("x{i}"));
        app.handle_event(finished(r, ""), now);
    }
    let mut terminal = match Terminal::new(TestBackend::new(40, 12)) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    draw(&mut app, &mut terminal);
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    assert_eq!(app.notebook.selected, Some(11));
    for _ in 0..11 {
        app.update(Action::Notebook(NotebookAction::SelectCell(-1)), now);
    }
    let rows = draw(&mut app, &mut terminal);
    let selection = app.theme.selection;
    let prompt = rows
        .iter()
        .find(|(text, _)| text.starts_with("In [1]: x0"))
        .unwrap_or_else(|| panic!("the first cell is scrolled into view: {rows:#?}"));
    assert!(
        selection.bg.is_some(),
        "the dark theme selects by background"
    );
    assert_eq!(
        prompt.1.bg, selection.bg,
        "the selected prompt is highlighted"
    );
    assert!(
        rows.iter()
            .filter(|(text, _)| text.starts_with("In ["))
            .filter(|(_, style)| *style == prompt.1)
            .count()
            == 1,
        "only the selected prompt is highlighted"
    );
    // Back in the editor the cursor is not shown.
    app.update(Action::FocusEditor, now);
    let rows = draw(&mut app, &mut terminal);
    let plain = rows.iter().find(|(text, _)| text.starts_with("In [1]: x0"));
    assert!(plain.is_some_and(|(_, style)| *style != prompt.1));
}

#[test]
fn a_click_focuses_the_pane_under_it_and_selects_the_cell() {
    let mut app = test_app();
    let now = Instant::now();
    for i in 0..3 {
        let r = run(&mut app, &format!("x{i}"));
        app.handle_event(finished(r, ""), now);
    }
    let mut terminal = match Terminal::new(TestBackend::new(40, 24)) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    let rows = draw(&mut app, &mut terminal);
    let y = |prefix: &str| {
        let found = rows.iter().position(|(text, _)| text.starts_with(prefix));
        u16::try_from(found.unwrap_or_else(|| panic!("{prefix} not on screen: {rows:#?}")))
            .unwrap_or(u16::MAX)
    };
    // A click on the second line of In [2] (its output) selects In [2].
    app.update(
        Action::Click {
            column: 3,
            row: y("In [2]") + 1,
        },
        now,
    );
    assert!(app.focus == crate::tui::app::Focus::Notebook);
    assert_eq!(app.notebook.selected, Some(1));
    // The last row above the status line is the editor's border.
    app.update(Action::Click { column: 5, row: 22 }, now);
    assert!(
        (app.focus != crate::tui::app::Focus::Notebook),
        "the editor has the focus again"
    );
    assert_eq!(app.notebook.selected, Some(1), "the selection is kept");
    // The status line is neither.
    app.update(Action::Click { column: 5, row: 23 }, now);
    assert!((app.focus != crate::tui::app::Focus::Notebook));
}

#[test]
fn ctrl_c_interrupts_the_running_cell_and_its_notice_ends_with_it() {
    let mut app = test_app();
    app.notebook.can_interrupt = true;
    let now = Instant::now();
    let first = run(&mut app, "import time; time.sleep(60)");
    let second = run(&mut app, "2");
    app.handle_event(SessionEvent::ExecutionStarted(first), now);
    // A queued cell selected does not change what Ctrl+C stops.
    app.notebook.selected = Some(1);
    assert_eq!(
        app.update(Action::Notebook(NotebookAction::Interrupt), now),
        vec![Effect::Interrupt { run: first }]
    );
    assert!(!app.should_quit);
    assert_eq!(
        app.quit_armed_until, None,
        "no quit warning while a cell runs"
    );
    let notice = app.notice.clone().expect("a notice");
    assert!(
        notice.starts_with("interrupting In [1]… (Ctrl+C again"),
        "{notice}"
    );
    // The cell ends (KeyboardInterrupt): the notice about it goes too.
    app.handle_event(finished(first, "KeyboardInterrupt\n"), now);
    assert_eq!(app.notice, None);
    // The next cell runs; idle again, Ctrl+C arms the quit.
    app.handle_event(SessionEvent::ExecutionStarted(second), now);
    app.handle_event(finished(second, ""), now);
    app.update(Action::Notebook(NotebookAction::Interrupt), now);
    assert!(app.quit_armed_until.is_some());
}

#[test]
fn a_notice_replaced_by_another_is_not_taken_down_by_the_run() {
    let mut app = test_app();
    app.notebook.can_interrupt = true;
    let now = Instant::now();
    let first = run(&mut app, "import time; time.sleep(60)");
    app.handle_event(SessionEvent::ExecutionStarted(first), now);
    app.update(Action::Notebook(NotebookAction::Interrupt), now);
    app.notice = Some("something else".into());
    app.handle_event(finished(first, "KeyboardInterrupt\n"), now);
    assert_eq!(app.notice.as_deref(), Some("something else"));
}

#[test]
fn running_a_cell_moves_the_cursor_back_to_the_newest() {
    let mut app = test_app();
    let now = Instant::now();
    for code in ["a", "b", "c"] {
        run(&mut app, code);
    }
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    app.update(Action::Notebook(NotebookAction::SelectCell(-2)), now);
    assert_eq!(app.notebook.selected, Some(0));
    app.update(Action::FocusEditor, now);
    run(&mut app, "d");
    app.update(Action::Notebook(NotebookAction::FocusOutputs), now);
    assert_eq!(app.notebook.selected, Some(3));
}

#[test]
fn reloaded_cells_end_at_a_boundary_and_r_replays_those_that_succeeded() {
    use crate::notebook::Cell;
    let mut app = test_app();
    let now = Instant::now();
    let cell = |source: &str, outcome| Cell {
        source: source.into(),
        execution_count: 1,
        outputs: Vec::new(),
        outcome: Some(outcome),
        duration: None,
        exit_code: None,
        stdin: None,
        quit_while: None,
        output_streams_max_length: None,
        network: Vec::new(),
    };
    app.update(Action::Notebook(NotebookAction::ReplayEarlier), now);
    assert_eq!(
        app.notice.as_deref(),
        Some("nothing to replay: every cell ran in this session")
    );
    app.load_history(
        vec![
            cell("x = 1", CellOutcome::Succeeded),
            cell("1/0", CellOutcome::Failed),
            cell("y = x", CellOutcome::Succeeded),
        ],
        Vec::new(),
    );
    assert_eq!(
        app.notebook.boundaries,
        vec![SessionBoundary {
            after: 3,
            known_new: false,
            replayed: false,
            kernel_restarted: false,
            pool_says: crate::tui::app::PoolSays::Asking,
        }]
    );
    // R asks first (issue 27 item 10), and nothing runs until the answer.
    let effects = app.update(Action::Notebook(NotebookAction::ReplayEarlier), now);
    assert!(effects.is_empty(), "{effects:?}");
    assert!(!app.notebook.boundaries[0].replayed);
    let asked = match app.overlays.prompt().map(|p| &p.ask) {
        Some(crate::tui::widgets::prompt::Ask::YesNo(q)) => q.text(200),
        other => panic!("no question: {other:?}"),
    };
    assert!(
        asked.contains(
            "Replay 2 earlier cell(s) in this session (1 that did not succeed left out)?"
        ),
        "{asked}"
    );
    let effects = app.notebook_answer(
        crate::tui::notebook::NotebookPrompt::ReplayEarlier,
        crate::tui::widgets::prompt::Answer::No,
    );
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(app.notebook.book.cells.len(), 3);
    app.overlays.take_prompt();
    let effects = app.notebook_answer(
        crate::tui::notebook::NotebookPrompt::ReplayEarlier,
        crate::tui::widgets::prompt::Answer::Yes,
    );
    let sent: Vec<&str> = effects
        .iter()
        .map(|e| match e {
            Effect::Execute { code, .. } => code.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(sent, ["x = 1", "y = x"]);
    assert!(app.notebook.boundaries[0].replayed);
    assert_eq!(app.notebook.book.cells.len(), 5);
    assert_eq!(
        app.notice.as_deref(),
        Some("replaying 2 cells (1 that did not succeed left out)")
    );
}

/// A settled cell takes the kernel's count; a count not above the last one
/// means the kernel started again, and a boundary says so there; the cells
/// still queued are numbered on from the kernel's count, and a cell never
/// run is `In [ ]` (issue 27 items 3 and 5).
#[test]
fn labels_follow_the_kernels_count_and_a_restart_is_marked() {
    let mut app = test_app();
    let now = Instant::now();
    let counted = |run, count| SessionEvent::ExecutionFinished {
        run,
        outcome: Ok(Execution {
            execution_count: Some(count),
            id: None,
            status: ExecutionStatus::Succeeded,
            stdout: String::new(),
            stderr: String::new(),
            result: None,
            images: vec![],
            duration: Duration::from_millis(5),
            network: Vec::new(),
        }),
        exit_code: None,
        images: vec![],
    };
    let a = run(&mut app, "a");
    app.handle_event(counted(a, 7), now);
    assert_eq!(app.notebook.book.cells[0].execution_count, 7);
    let b = run(&mut app, "b");
    let c = run(&mut app, "c");
    assert_eq!(app.notebook.book.cells[2].execution_count, 9, "predicted");
    app.handle_event(counted(b, 1), now);
    assert_eq!(app.notebook.book.cells[1].execution_count, 1);
    assert_eq!(app.notebook.book.cells[2].execution_count, 2, "renumbered");
    assert!(
        app.notebook
            .boundaries
            .iter()
            .any(|b| b.after == 1 && b.kernel_restarted),
        "{:?}",
        app.notebook.boundaries
    );
    app.handle_event(SessionEvent::ExecutionNotRun(c), now);
    assert_eq!(app.notebook.book.cells[2].execution_count, 0);
    assert_eq!(
        app.notebook.book.cells[2].outcome,
        Some(CellOutcome::NotRun)
    );
    assert_eq!(app.notebook.next_count(), 2, "one past the newest numbered");
}

/// A pool without an event stream (Azure's) gives stdout and stderr apart:
/// the notebook says once that their order between them is unknown (issue
/// 27 item 2), not under every cell, and not on a pool that streams them.
#[test]
fn a_pool_that_gives_streams_apart_says_so_once() {
    let both = |run| SessionEvent::ExecutionFinished {
        run,
        outcome: Ok(Execution {
            execution_count: None,
            id: None,
            status: ExecutionStatus::Succeeded,
            stdout: "step 1\nstep 3\n".into(),
            stderr: "step 2\n".into(),
            result: None,
            images: vec![],
            duration: Duration::from_millis(5),
            network: Vec::new(),
        }),
        exit_code: None,
        images: vec![],
    };
    let said = "this pool returns stdout and stderr apart";
    let azure = Some("https://pool.dynamicsessions.io/x".to_string());
    let mut app = test_app();
    app.sessions.endpoint = azure.clone();
    let first = run(&mut app, "print(1)");
    app.handle_event(both(first), Instant::now());
    assert!(
        app.notice.as_deref().is_some_and(|n| n.starts_with(said)),
        "{:?}",
        app.notice
    );
    app.notice = None;
    let second = run(&mut app, "print(2)");
    app.handle_event(both(second), Instant::now());
    assert_eq!(app.notice, None, "said once");
    // A pool that streams (a local pool, its event stream open or not yet)
    // knows the order.
    let mut app = test_app();
    let run = run(&mut app, "print(1)");
    app.handle_event(both(run), Instant::now());
    assert!(
        !app.notice.as_deref().is_some_and(|n| n.starts_with(said)),
        "{:?}",
        app.notice
    );
}
