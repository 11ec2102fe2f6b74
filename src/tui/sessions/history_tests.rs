//! The sessions pane's history section: recorded sessions listed after the
//! pool's, with their state, and the keys that open, export and replay them.

use pretty_assertions::assert_eq;

use super::*;
use crate::ledger::read::RecordedSession;
use crate::tui::app::App;
use crate::tui::sessions::history::{RecordedList, state_of};
use crate::tui::sessions::pane::SessionRow;

fn recorded(pool: &str, id: &str, cells: u64, client: &str) -> RecordedSession {
    RecordedSession {
        pool: pool.into(),
        identifier: id.into(),
        calls: cells + 1,
        cells,
        first: now() - chrono::Duration::minutes(50),
        last: now() - chrono::Duration::minutes(3),
        client: Some(client.into()),
        first_client: Some(client.into()),
    }
}

/// The pane of `with_pane`, with three recorded sessions: one the pool
/// lists, one it no longer has, one of another pool.
fn with_history() -> App {
    let mut app = with_pane();
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Recorded(Ok(vec![
            recorded(
                "local",
                "agent-run-7",
                12,
                "langchain-azure-dynamic-sessions/1.0.4 (x)",
            ),
            recorded("local", "gone-\u{1b}]52;c;aGk=\u{7}1", 3, "curl/8.5"),
            recorded("https://pool.example.io", "far-away", 1, "autogen/0.4"),
        ]))),
        Instant::now(),
    );
    app.sessions.pane.now = now();
    app
}

fn text(app: &mut App) -> String {
    let backend = screen(app, 160, 48);
    let buffer = backend.buffer();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn recorded_sessions_are_listed_after_the_pool_with_their_state() {
    let mut app = with_history();
    let pane = &app.sessions.pane;
    assert_eq!(pane.row_count(), 2 + 2 + 3);
    assert!(matches!(pane.row(4), Some(SessionRow::Recorded(r)) if r.identifier == "agent-run-7"));
    let states: Vec<&str> = pane
        .recorded
        .sessions()
        .iter()
        .map(|r| state_of(pane, r))
        .collect();
    assert_eq!(states, ["live", "ended", "other"]);
    let screen = text(&mut app);
    assert!(screen.contains("Recorded · 3"), "{screen}");
    for state in ["live", "ended", "other"] {
        assert!(screen.contains(state), "{state}:\n{screen}");
    }
    assert!(
        !screen.contains('\u{1b}') && !screen.contains('\u{7}'),
        "{screen}"
    );
    // Before the pool answers, a recorded session's state is not guessed.
    app.sessions.pane.pool_list = PoolList::Loading;
    assert_eq!(
        state_of(&app.sessions.pane, &recorded("local", "x", 1, "a")),
        "?"
    );
}

#[test]
fn nothing_recorded_or_an_unreadable_ledger_is_said_in_the_section() {
    let mut app = with_pane();
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Recorded(Ok(vec![]))),
        Instant::now(),
    );
    assert!(text(&mut app).contains("nothing recorded yet"));
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Recorded(Err(Failure::new(
            FailureKind::Local,
            "cannot read the ledger /x/ledger.sqlite3: file is not a database",
        )))),
        Instant::now(),
    );
    let screen = text(&mut app);
    assert!(
        screen.contains("cannot read the ledger") && screen.contains("database"),
        "{screen}"
    );
    assert_eq!(
        app.sessions.pane.recorded,
        RecordedList::Failed(
            "cannot read the ledger /x/ledger.sqlite3: file is not a database".into()
        )
    );
}

#[test]
fn enter_on_a_recorded_session_reads_it_and_x_r_only_work_there() {
    let mut app = with_history();
    // On this machine's row, export and replay say where they work.
    assert!(press(&mut app, KeyCode::Char('x')).is_empty());
    assert!(
        app.notice
            .as_deref()
            .unwrap_or_default()
            .contains("Recorded")
    );
    for _ in 0..4 {
        press(&mut app, KeyCode::Char('j'));
    }
    let effects = press(&mut app, KeyCode::Enter);
    let [Effect::Sessions(SessionsCommand::OpenRecorded(request))] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(request.identifier, "agent-run-7");
    assert_eq!(request.pool.as_deref(), Some("local"));
    let effects = press(&mut app, KeyCode::Char('R'));
    assert!(matches!(
        effects.as_slice(),
        [Effect::Sessions(SessionsCommand::OpenRecorded(_))]
    ));
    // The selection stays on its session when the history is read again.
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Recorded(Ok(vec![
            recorded("local", "newest", 1, "a/1"),
            recorded("local", "agent-run-7", 13, "langchain/1"),
        ]))),
        Instant::now(),
    );
    assert_eq!(
        app.sessions
            .pane
            .selected_row()
            .map(|r| r.identifier().to_string()),
        Some("agent-run-7".into())
    );
}
