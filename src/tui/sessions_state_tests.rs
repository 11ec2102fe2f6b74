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
use crate::client::{Execution, ExecutionStatus, KernelInfo, NameVersion};
use crate::notebook::sessions_store::SessionEntry;
use crate::tui::app::{AppConfig, PoolState};
use crate::tui::event::{AppEvent, RunId};

fn app(version: ApiVersion) -> App {
    App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-0badc0de".into(),
            api_version: version,
        },
        PoolState::Ready,
    )
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 14, 0, 0).unwrap()
}

fn press(app: &mut App, code: KeyCode) -> Vec<Effect> {
    let event = Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
    let ctx = app.editor_context();
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
        notebook: None,
    }
}

/// An app with the sessions pane open, two local identifiers and a pool list.
fn with_pane() -> App {
    let mut app = app(ApiVersion::V2025_10_02);
    assert_eq!(
        press(&mut app, KeyCode::F(3)),
        vec![Effect::Files(FilesCommand::ListSessions)]
    );
    app.sessions.pane.local = vec![
        entry("sessionpad-0badc0de", Some("demo"), 0),
        entry("agent-run-7", None, 120),
    ];
    app.handle_event(
        AppEvent::Files(FilesEvent::Sessions(Ok(vec![
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
    let run = match app.update(Action::RunCell, Instant::now()).as_slice() {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    };
    app.handle_event(
        AppEvent::ExecutionFinished {
            run,
            outcome: Ok(Execution {
                id: None,
                status: ExecutionStatus::Succeeded,
                stdout: String::new(),
                stderr: String::new(),
                result: None,
                images: vec![],
                duration: Duration::from_millis(3),
            }),
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
    assert_eq!(
        app.editor_context().mode(),
        crate::tui::keymap::Mode::Sessions
    );

    let mut old = self::app(ApiVersion::V2024_10_02);
    assert!(press(&mut old, KeyCode::F(3)).is_empty());
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
    assert_eq!(
        effects,
        vec![
            Effect::SwitchSession {
                identifier: "agent-run-7".into()
            },
            Effect::Files(FilesCommand::SessionInfo {
                identifier: "agent-run-7".into()
            }),
        ]
    );
    assert_eq!(app.config.identifier, "agent-run-7");
    assert!(
        app.notebook.cells.is_empty(),
        "the other notebook starts empty"
    );
    let place = app.take_switch().expect("a place to load");
    assert_eq!(place.meta.identifier, "agent-run-7");
    assert!(app.take_switch().is_none());
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
    app.update(Action::RunCell, Instant::now());
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
    match &app.sessions.prompt {
        Some(SessionsPrompt::New(p)) => assert!(p.text().starts_with("sessionpad-")),
        other => panic!("{other:?}"),
    }
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
    assert!(matches!(app.sessions.prompt, Some(SessionsPrompt::End(_))));
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        vec![Effect::Files(FilesCommand::EndSession {
            identifier: "agent-run-7".into()
        })]
    );
    app.handle_event(
        AppEvent::Files(FilesEvent::SessionEnded {
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
    assert_eq!(
        app.take_effects(),
        vec![Effect::Files(FilesCommand::ListSessions)]
    );
    // The refreshed list no longer has it.
    app.handle_event(
        AppEvent::Files(FilesEvent::Sessions(Ok(vec![info(
            "sessionpad-0badc0de",
            10,
            290,
        )]))),
        Instant::now(),
    );
    assert!(app.sessions.pane.pool_info("agent-run-7").is_none());
}

#[test]
fn a_recycled_session_is_noticed_and_the_cells_can_be_replayed() {
    let mut app = with_pane();
    press(&mut app, KeyCode::Tab);
    let details = |created| {
        AppEvent::Files(FilesEvent::Session {
            identifier: "sessionpad-0badc0de".into(),
            result: Ok(info("sessionpad-0badc0de", created, 290)),
        })
    };
    run(&mut app, "x = 1");
    app.handle_event(details(10), Instant::now());
    run(&mut app, "y = x + 1");
    app.handle_event(details(10), Instant::now());
    assert!(
        app.sessions.prompt.is_none(),
        "same session: nothing to say"
    );
    run(&mut app, "print(y)");
    // The pool made a new session for the identifier (created later).
    app.handle_event(details(0), Instant::now());
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.contains("fresh session"))
    );
    let last = app.notebook.cells.last().expect("cells");
    assert!(last.outputs.iter().any(|o| matches!(
        o,
        Output::Stream { name: StreamName::Stderr, text } if text.contains("fresh session")
    )));
    match &app.sessions.prompt {
        Some(SessionsPrompt::Replay(sources)) => assert_eq!(sources, &["x = 1", "y = x + 1"]),
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
    assert_eq!(app.notebook.cells.len(), 5);
}

#[test]
fn the_countdown_follows_the_clock_and_wakes_the_loop() {
    let mut app = app(ApiVersion::V2025_10_02);
    let t0 = Instant::now();
    let mut details = info("sessionpad-0badc0de", 1, 0);
    details.expires = Some(Utc::now() + chrono::Duration::seconds(90));
    app.handle_event(
        AppEvent::Files(FilesEvent::Session {
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
        app.sessions.next_wakeup(later),
        Some(later + Duration::from_secs(1))
    );
    assert!(app.next_wakeup(later).is_some());
    assert_eq!(
        app.sessions.next_wakeup(t0 + Duration::from_secs(200)),
        None
    );
}

fn screen(app: &mut App, width: u16, height: u16) -> TestBackend {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| crate::tui::ui::draw(f, app, Instant::now()))
        .unwrap();
    terminal.backend().clone()
}

#[test]
fn snapshot_sessions_pane() {
    let mut app = with_pane();
    press(&mut app, KeyCode::Char('j'));
    assert_snapshot!("sessions_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("sessions_160x48", screen(&mut app, 160, 48));
}

#[test]
fn snapshot_pool_info() {
    let mut app = with_pane();
    assert_eq!(
        press(&mut app, KeyCode::Char('i')),
        vec![Effect::Files(FilesCommand::PoolInfo)]
    );
    let nv = |n: &str, v: &str| NameVersion {
        name: n.into(),
        version: v.into(),
    };
    app.handle_event(
        AppEvent::Files(FilesEvent::PoolInfo(Ok(PoolMetadata {
            runtimes: vec![nv("python", "3.12.3")],
            packages: vec![
                nv("numpy", "2.1.0"),
                nv("pandas", "2.2.3"),
                nv("matplotlib", "3.9.2"),
            ],
            kernel: Some(KernelInfo {
                name: "IPython".into(),
                version: "9.0.2".into(),
                project_url: None,
                description: None,
            }),
            created: None,
            updated: None,
            isolation: None,
        }))),
        Instant::now(),
    );
    assert_snapshot!("pool_info_160x48", screen(&mut app, 160, 48));
    press(&mut app, KeyCode::Esc);
    assert!(app.sessions.pool_info.is_none());
    assert!(app.sessions.focused);
}

/// A local pool's isolation heads the pool info: from the metadata when it
/// carries it, else what the app learnt at start (here with metadata that
/// could not be read).
#[test]
fn snapshot_pool_info_with_isolation() {
    use crate::pool::isolation::{Isolation, Limit};
    let mut app = with_pane();
    press(&mut app, KeyCode::Char('i'));
    let limit = |what: &str, value: &str, mechanism: &str| Limit {
        what: what.into(),
        value: value.into(),
        mechanism: mechanism.into(),
    };
    let sandboxed = Isolation {
        unsandboxed: None,
        limits: vec![
            limit("memory", "2 GiB", "cgroup v2"),
            limit("processes", "256", "rlimit"),
        ],
        notes: vec!["kernels run as uid 65534".into(), "no network".into()],
    };
    app.handle_event(
        AppEvent::Files(FilesEvent::PoolInfo(Ok(PoolMetadata {
            runtimes: vec![NameVersion {
                name: "python".into(),
                version: "3.12.3".into(),
            }],
            packages: vec![],
            kernel: None,
            created: None,
            updated: None,
            isolation: Some(sandboxed),
        }))),
        Instant::now(),
    );
    let shown = format!("{:?}", screen(&mut app, 80, 24));
    assert!(shown.contains("sandbox") && shown.contains("bubblewrap"));
    assert_snapshot!("pool_info_isolated_80x24", screen(&mut app, 80, 24));

    app.handle_event(
        AppEvent::PoolIsolation(Isolation::unsandboxed(
            "bubblewrap (bwrap) is not installed: sessions are NOT isolated from this machine",
        )),
        Instant::now(),
    );
    app.handle_event(
        AppEvent::Files(FilesEvent::PoolInfo(Err("the pool did not answer".into()))),
        Instant::now(),
    );
    assert_snapshot!("pool_info_not_isolated_80x24", screen(&mut app, 80, 24));
    assert_snapshot!("pool_info_not_isolated_160x48", screen(&mut app, 160, 48));
}

#[test]
fn the_status_line_warns_in_the_last_minute() {
    let mut app = app(ApiVersion::V2025_10_02);
    let t0 = Instant::now();
    let mut details = info("sessionpad-0badc0de", 1, 0);
    details.expires = Some(Utc::now() + chrono::Duration::seconds(300));
    app.handle_event(
        AppEvent::Files(FilesEvent::Session {
            identifier: "sessionpad-0badc0de".into(),
            result: Ok(details),
        }),
        t0,
    );
    let status = |app: &mut App, at: Instant| {
        let mut terminal = Terminal::new(TestBackend::new(100, 10)).unwrap();
        terminal.draw(|f| crate::tui::ui::draw(f, app, at)).unwrap();
        let buf = terminal.backend().buffer().clone();
        (0..100)
            .filter_map(|x| buf.cell((x, 9)).map(|c| c.symbol().to_string()))
            .collect::<String>()
    };
    let calm = status(&mut app, t0);
    assert!(calm.contains("idle ends in 4 min"), "{calm}");
    let late = status(&mut app, t0 + Duration::from_secs(270));
    assert!(
        late.contains("idle ends in 30 s") || late.contains("idle ends in 29 s"),
        "{late}"
    );
    let gone = status(&mut app, t0 + Duration::from_secs(400));
    assert!(gone.contains("session idle-expired"), "{gone}");
}
