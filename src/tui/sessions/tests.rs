//! Headless tests of the sessions pane's state transitions (switch, new, end,
//! recycled-session detection and replay, the countdown) and whole-screen
//! snapshots of the pane and the pool info popup at 80x24 and 160x48.

use std::time::{Duration, Instant};

use chrono::TimeZone;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::notebook::sessions_store::SessionEntry;
use crate::notebook::{Output, StreamName};
use crate::protocol::{Execution, ExecutionStatus, KernelInfo, NameVersion};
use crate::session::{Failure, FailureKind, RunId, SessionEvent, SessionsCommand, SessionsEvent};
use crate::tui::action::Action;
use crate::tui::app::{App, SidePane};
use crate::tui::app::{AppConfig, PoolState};
use crate::tui::notebook::NotebookAction;
use crate::tui::sessions::pane::{CURRENT_MARK, RowKind, SELECTION_MARK};

fn app(version: ApiVersion) -> App {
    App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-0badc0de".into(),
            api_version: version,
            language: crate::notebook::language::Language::Python,
        },
        PoolState::Ready,
    )
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 14, 0, 0).unwrap()
}

fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    let event = Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
    let ctx = app.key_context();
    match app.keymap.action_for_event(event, ctx) {
        Some(action) => app.update(action, Instant::now()),
        None => Vec::new(),
    }
}

fn info(id: &str, created_mins_ago: i64, expires_in_secs: i64) -> SessionInfo {
    SessionInfo {
        identifier: id.into(),
        created: Some(now() - chrono::Duration::minutes(created_mins_ago)),
        last_accessed: Some(now() - chrono::Duration::seconds(5)),
        expires: Some(now() + chrono::Duration::seconds(expires_in_secs)),
        etag: None,
    }
}

fn entry(id: &str, label: Option<&str>, mins_ago: i64) -> SessionEntry {
    let last = now() - chrono::Duration::minutes(mins_ago);
    SessionEntry {
        pool: "local".into(),
        identifier: id.into(),
        label: label.map(Into::into),
        first_used: last,
        last_used: last,
        last_run: None,
        notebook: None,
        followed_seq: None,
    }
}

/// An app with the sessions pane open, two local identifiers and a pool list.
fn with_pane() -> App {
    let mut app = app(ApiVersion::V2025_10_02);
    assert_eq!(
        press(&mut app, KeyCode::F(3)),
        vec![
            Effect::Sessions(SessionsCommand::Recorded),
            Effect::Sessions(SessionsCommand::List)
        ]
    );
    app.sessions.pane.local = vec![
        entry("sessionpad-0badc0de", Some("demo"), 0),
        entry("agent-run-7", None, 120),
    ];
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![
            info("sessionpad-0badc0de", 10, 290),
            info("agent-run-7", 130, 40),
        ]))),
        Instant::now(),
    );
    app.sessions.pane.now = now();
    app
}

fn run(app: &mut App, code: &str) -> RunId {
    app.update(Action::Paste(code.into()), Instant::now());
    let run = match app
        .update(Action::Notebook(NotebookAction::RunCell), Instant::now())
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    };
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run,
            outcome: Ok(Execution {
                execution_count: None,
                id: None,
                status: ExecutionStatus::Succeeded,
                stdout: String::new(),
                stderr: String::new(),
                result: None,
                images: vec![],
                duration: Duration::from_millis(3),
                network: Vec::new(),
            }),
            exit_code: None,
            images: vec![],
        },
        Instant::now(),
    );
    run
}

#[test]
fn f3_lists_the_pool_or_says_why_not() {
    let app = with_pane();
    assert_eq!(app.sessions.pane.row_count(), 4);
    assert_eq!(app.key_context().mode, crate::tui::keymap::Mode::Sessions);

    let mut old = self::app(ApiVersion::V2024_10_02);
    assert_eq!(
        press(&mut old, KeyCode::F(3)),
        vec![Effect::Sessions(SessionsCommand::Recorded)],
        "the flight recorder's history only"
    );
    assert!(matches!(
        old.sessions.pane.pool_list,
        PoolList::Unsupported(_)
    ));
}

#[test]
fn switching_loads_another_notebook_and_runs_cells_there() {
    let mut app = with_pane();
    run(&mut app, "x = 1");
    // Row 1 is agent-run-7 (this machine's list).
    press(&mut app, KeyCode::Char('j'));
    let effects = press(&mut app, KeyCode::Enter);
    let place = crate::tui::persist::Place::new(
        None,
        "agent-run-7",
        app.config.api_version,
        app.config.language,
    );
    assert_eq!(
        effects,
        vec![
            Effect::SwitchSession {
                identifier: "agent-run-7".into()
            },
            Effect::LoadNotebook(place),
            Effect::Sessions(SessionsCommand::Info {
                identifier: "agent-run-7".into()
            }),
        ]
    );
    assert_eq!(app.config.identifier, "agent-run-7");
    assert!(
        app.notebook.book.cells.is_empty(),
        "the other notebook starts empty"
    );
    // Switching to where we are is a no-op.
    assert!(app.switch_session("agent-run-7").is_empty());
}

#[test]
fn no_switch_while_a_cell_runs() {
    let mut app = with_pane();
    app.update(
        Action::Paste("import time; time.sleep(9)".into()),
        Instant::now(),
    );
    app.update(Action::Notebook(NotebookAction::RunCell), Instant::now());
    assert!(app.switch_session("other").is_empty());
    assert_eq!(app.config.identifier, "sessionpad-0badc0de");
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.contains("still running"))
    );
}

#[test]
fn new_session_offers_a_random_identifier() {
    let mut app = with_pane();
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(app.sessions_prompt(), Some(&SessionsPrompt::New));
    let typed = app.prompt().map(|p| p.text().to_string());
    assert!(typed.is_some_and(|t| t.starts_with("sessionpad-")));
    let effects = press(&mut app, KeyCode::Enter);
    assert!(matches!(
        effects.first(),
        Some(Effect::SwitchSession { .. })
    ));
    assert!(app.config.identifier.starts_with("sessionpad-"));
    assert_ne!(app.config.identifier, "sessionpad-0badc0de");
}

#[test]
fn attach_by_typing_an_identifier() {
    let mut app = with_pane();
    press(&mut app, KeyCode::Char('a'));
    app.update(Action::Paste("agent-42".into()), Instant::now());
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.config.identifier, "agent-42");
}

#[test]
fn ending_a_session_asks_then_refreshes_the_list() {
    let mut app = with_pane();
    press(&mut app, KeyCode::Char('j'));
    assert!(press(&mut app, KeyCode::Char('e')).is_empty());
    assert!(matches!(
        app.sessions_prompt(),
        Some(SessionsPrompt::End(_))
    ));
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        vec![Effect::Sessions(SessionsCommand::End {
            identifier: "agent-run-7".into()
        })]
    );
    let effects = app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Ended {
            identifier: "agent-run-7".into(),
            result: Ok("Session agent-run-7 in session pool p stopped.\u{1b}[2J".into()),
        }),
        Instant::now(),
    );
    // The pool's own words, without the escape sequence it sent.
    assert_eq!(
        app.notice.as_deref(),
        Some("Session agent-run-7 in session pool p stopped.")
    );
    assert_eq!(effects, vec![Effect::Sessions(SessionsCommand::List)]);
    // The refreshed list no longer has it.
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![info(
            "sessionpad-0badc0de",
            10,
            290,
        )]))),
        Instant::now(),
    );
    assert!(app.sessions.pane.pool_info("agent-run-7").is_none());
}

/// The worker's failures are typed: a session the pool no longer has is
/// told apart from a pool that failed to answer.
#[test]
fn a_session_the_pool_does_not_have_is_told_apart_from_a_failure() {
    let mut app = with_pane();
    let gone = || Failure::new(FailureKind::NotFound, "404 Not Found");
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Info {
            identifier: "sessionpad-0badc0de".into(),
            result: Ok(info("sessionpad-0badc0de", 10, 290)),
        }),
        Instant::now(),
    );
    assert!(app.sessions.current.is_some());
    // A pool that did not answer: the details known are kept.
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Info {
            identifier: "sessionpad-0badc0de".into(),
            result: Err(Failure::new(FailureKind::Timeout, "no answer")),
        }),
        Instant::now(),
    );
    assert!(app.sessions.current.is_some());
    // A pool that has no such session: no countdown for it any more.
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Info {
            identifier: "sessionpad-0badc0de".into(),
            result: Err(gone()),
        }),
        Instant::now(),
    );
    assert!(app.sessions.current.is_none());
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Ended {
            identifier: "agent-run-7".into(),
            result: Err(gone()),
        }),
        Instant::now(),
    );
    assert_eq!(
        app.notice.as_deref(),
        Some("agent-run-7 was not running: the pool has no such session")
    );
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Ended {
            identifier: "agent-run-7".into(),
            result: Err(Failure::new(FailureKind::Forbidden, "403 Forbidden")),
        }),
        Instant::now(),
    );
    assert_eq!(
        app.notice.as_deref(),
        Some("cannot end agent-run-7: 403 Forbidden")
    );
}

#[test]
fn a_recycled_session_is_noticed_and_the_cells_can_be_replayed() {
    let mut app = with_pane();
    press(&mut app, KeyCode::Tab);
    let details = |created| {
        SessionEvent::Sessions(SessionsEvent::Info {
            identifier: "sessionpad-0badc0de".into(),
            result: Ok(info("sessionpad-0badc0de", created, 290)),
        })
    };
    run(&mut app, "x = 1");
    app.handle_event(details(10), Instant::now());
    run(&mut app, "y = x + 1");
    app.handle_event(details(10), Instant::now());
    assert!(app.prompt().is_none(), "same session: nothing to say");
    run(&mut app, "print(y)");
    // The pool made a new session for the identifier (created later).
    app.handle_event(details(0), Instant::now());
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.contains("fresh session"))
    );
    let last = app.notebook.book.cells.last().expect("cells");
    assert!(last.outputs.iter().any(|o| matches!(
        o,
        Output::Stream { name: StreamName::Stderr, text } if text.contains("fresh session")
    )));
    match app.sessions_prompt() {
        Some(SessionsPrompt::Replay(cells)) => assert_eq!(
            cells.iter().map(|c| c.source.as_str()).collect::<Vec<_>>(),
            ["x = 1", "y = x + 1"]
        ),
        other => panic!("{other:?}"),
    }
    let effects = press(&mut app, KeyCode::Char('y'));
    let codes: Vec<&str> = effects
        .iter()
        .map(|e| match e {
            Effect::Execute { code, .. } => code.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(codes, ["x = 1", "y = x + 1"]);
    assert_eq!(app.notebook.book.cells.len(), 5);
}

#[test]
fn the_countdown_follows_the_clock_and_wakes_the_loop() {
    let mut app = app(ApiVersion::V2025_10_02);
    let t0 = Instant::now();
    let mut details = info("sessionpad-0badc0de", 1, 0);
    details.expires = Some(Utc::now() + chrono::Duration::seconds(90));
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Info {
            identifier: "sessionpad-0badc0de".into(),
            result: Ok(details),
        }),
        t0,
    );
    let left = app.sessions.expires_in(t0).expect("a countdown");
    assert!((88..=90).contains(&left), "{left}");
    let later = t0 + Duration::from_secs(45);
    let left = app.sessions.expires_in(later).expect("a countdown");
    assert!((43..=45).contains(&left), "{left}");
    // Under a minute: every second.
    assert_eq!(
        app.sessions
            .next_wakeup(app.pane_open(SidePane::Sessions), later),
        Some(later + Duration::from_secs(1))
    );
    assert!(app.next_wakeup(later).is_some());
    assert_eq!(
        app.sessions.next_wakeup(
            app.pane_open(SidePane::Sessions),
            t0 + Duration::from_secs(200)
        ),
        None
    );
}

fn screen(app: &mut App, width: u16, height: u16) -> TestBackend {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| crate::tui::app::view::draw(f, app, Instant::now()))
        .unwrap();
    terminal.backend().clone()
}
#[test]
fn the_open_pane_refreshes_itself_one_listing_at_a_time() {
    let mut app = app(ApiVersion::V2025_10_02);
    let t0 = Instant::now();
    assert_eq!(
        press(&mut app, KeyCode::F(3)),
        vec![
            Effect::Sessions(SessionsCommand::Recorded),
            Effect::Sessions(SessionsCommand::List)
        ]
    );
    // While the listing is under way: no timer, no second request.
    assert_eq!(
        app.sessions
            .next_wakeup(app.pane_open(SidePane::Sessions), t0),
        None
    );
    assert_eq!(
        app.sessions.refresh_due(
            app.pane_open(SidePane::Sessions),
            t0 + Duration::from_secs(60)
        ),
        None
    );
    assert!(
        press(&mut app, KeyCode::Char('r')).is_empty(),
        "r does not pile up"
    );
    // The answer plans the next refresh.
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![info("a-1234", 1, 200)]))),
        t0,
    );
    let due = t0 + REFRESH_EVERY;
    assert_eq!(
        app.sessions
            .next_wakeup(app.pane_open(SidePane::Sessions), t0),
        Some(due)
    );
    assert_eq!(app.next_wakeup(t0), Some(due), "the loop wakes for it");
    assert_eq!(
        app.sessions.refresh_due(
            app.pane_open(SidePane::Sessions),
            due.checked_sub(Duration::from_millis(1)).unwrap()
        ),
        None
    );
    assert_eq!(
        app.sessions
            .refresh_due(app.pane_open(SidePane::Sessions), due),
        Some(vec![Effect::Sessions(SessionsCommand::List)])
    );
    // The list on screen stays while the new one is fetched.
    assert!(matches!(app.sessions.pane.pool_list, PoolList::Loaded(_)));
    assert_eq!(
        app.sessions
            .refresh_due(app.pane_open(SidePane::Sessions), due + REFRESH_EVERY),
        None
    );
    // Through the loop's tick, the request goes out with the other effects.
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![]))),
        due,
    );
    assert_eq!(
        app.tick(due + REFRESH_EVERY),
        vec![Effect::Sessions(SessionsCommand::List)]
    );
    // A hidden pane does not refresh.
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![]))),
        due + REFRESH_EVERY,
    );
    press(&mut app, KeyCode::F(3));
    assert!(!app.pane_open(crate::tui::app::SidePane::Sessions));
    assert_eq!(
        app.sessions
            .next_wakeup(app.pane_open(SidePane::Sessions), due),
        None
    );
    assert_eq!(
        app.sessions
            .refresh_due(app.pane_open(SidePane::Sessions), due + REFRESH_EVERY * 10),
        None
    );
}

#[test]
fn pools_that_cannot_list_refresh_this_machine_s_list_only() {
    let mut app = app(ApiVersion::V2024_10_02);
    let t0 = Instant::now();
    assert_eq!(
        press(&mut app, KeyCode::F(3)),
        vec![Effect::Sessions(SessionsCommand::Recorded)]
    );
    let due = app
        .sessions
        .next_wakeup(app.pane_open(SidePane::Sessions), t0)
        .expect("a refresh is planned");
    assert_eq!(
        app.sessions
            .refresh_due(app.pane_open(SidePane::Sessions), due),
        Some(vec![])
    );
    assert!(matches!(
        app.sessions.pane.pool_list,
        PoolList::Unsupported(_)
    ));
}

#[path = "history_tests.rs"]
mod history;
#[path = "view_tests.rs"]
mod view;

/// Issue 28 item 4: the pane asks for an Azure pool's card once (the lists
/// every refresh); a local pool's, never.
#[test]
fn an_azure_pools_card_is_asked_for_once() {
    let mut app = app(ApiVersion::V2025_10_02);
    app.sessions.endpoint = Some(
        "https://eastus.dynamicsessions.io/subscriptions/s/resourceGroups/g/sessionPools/p".into(),
    );
    let card = |effects: &[Effect]| {
        effects
            .iter()
            .filter(|e| **e == Effect::Sessions(SessionsCommand::PoolCard))
            .count()
    };
    let first = app.sessions.refresh(Instant::now());
    assert_eq!(card(&first), 1, "{first:?}");
    assert!(first.contains(&Effect::Sessions(SessionsCommand::List)));
    app.sessions.listed(Ok(vec![]), Instant::now());
    let again = app.sessions.refresh(Instant::now());
    assert_eq!(card(&again), 0, "{again:?}");
    let mut local = self::app(ApiVersion::V2025_10_02);
    assert_eq!(card(&local.sessions.refresh(Instant::now())), 0);
}
