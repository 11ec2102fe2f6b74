//! Whole-screen tests of the sessions pane: snapshots of the pane and the
//! pool info popup at 80x24 and 160x48, the marks, the selection following
//! its identifier, "last used", the status line's countdown warning and the
//! pool info's scrolling.

use pretty_assertions::assert_eq;

use super::*;
use crate::tui::app::App;
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
        vec![Effect::Sessions(SessionsCommand::PoolInfo)]
    );
    let nv = |n: &str, v: &str| NameVersion {
        name: n.into(),
        version: v.into(),
    };
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::PoolInfo(Ok(PoolMetadata {
            runtimes: vec![nv("python", "3.12.3")],
            packages: vec![
                nv("ipykernel", "6.29.5"),
                nv("ipython", "9.0.2"),
                nv("numpy", "2.1.0"),
                nv("pandas", "2.2.3"),
                nv("matplotlib", "3.9.2"),
            ],
            kernel: Some(KernelInfo {
                name: "ipykernel".into(),
                version: "6.29.5".into(),
                project_url: Some("https://github.com/ipython/ipykernel".into()),
                description: None,
            }),
            created: None,
            updated: None,
            isolation: None,
            container_type: None,
            service_limits: Vec::new(),
            image: None,
        }))),
        Instant::now(),
    );
    assert_snapshot!("pool_info_160x48", screen(&mut app, 160, 48));
    press(&mut app, KeyCode::Esc);
    assert!(app.sessions.pool_info.is_none());
    assert!(app.pane_focused(crate::tui::app::SidePane::Sessions));
}

/// A local pool's isolation heads the pool info: from the metadata when it
/// carries it, else what the app learnt at start (here with metadata that
/// could not be read).
#[test]
fn snapshot_pool_info_with_isolation() {
    use crate::protocol::isolation::{Isolation, Limit};
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
        SessionEvent::Sessions(SessionsEvent::PoolInfo(Ok(PoolMetadata {
            runtimes: vec![NameVersion {
                name: "python".into(),
                version: "3.12.3".into(),
            }],
            packages: vec![],
            kernel: None,
            created: None,
            updated: None,
            isolation: Some(sandboxed),
            container_type: None,
            service_limits: Vec::new(),
            image: Some(crate::protocol::image::Image::PythonLts),
        }))),
        Instant::now(),
    );
    let shown = format!("{:?}", screen(&mut app, 80, 24));
    assert!(shown.contains("sandbox") && shown.contains("built in"));
    assert_snapshot!("pool_info_isolated_80x24", screen(&mut app, 80, 24));

    app.handle_event(
        SessionEvent::PoolIsolation(Isolation::unsandboxed(
            "the sandbox cannot be built here: user namespaces are switched off (user.max_user_namespaces = 0) (new user namespace: No space left on device (os error 28)): sessions are NOT isolated",
        )),
        Instant::now(),
    );
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::PoolInfo(Err(Failure::new(
            FailureKind::Timeout,
            "the pool did not answer",
        )))),
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
        SessionEvent::Sessions(SessionsEvent::Info {
            identifier: "sessionpad-0badc0de".into(),
            result: Ok(details),
        }),
        t0,
    );
    let status = |app: &mut App, at: Instant| {
        let mut terminal = Terminal::new(TestBackend::new(100, 10)).unwrap();
        terminal
            .draw(|f| crate::tui::app::view::draw(f, app, at))
            .unwrap();
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

/// A store in `dir` with `ids` used at `now()` minus their minutes.
fn store_with(dir: &std::path::Path, ids: &[(&str, i64)]) -> SessionsStore {
    let mut store = SessionsStore::load_in(dir).store;
    for (id, mins_ago) in ids {
        store
            .record_use("local", id, now() - chrono::Duration::minutes(*mins_ago))
            .unwrap();
    }
    store
}

/// The text of the screen's line that holds `needle`.
fn line_with(screen: &TestBackend, needle: &str) -> String {
    let buf = screen.buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .filter_map(|x| buf.cell((x, y)).map(|c| c.symbol().to_string()))
                .collect::<String>()
        })
        .find(|l| l.contains(needle))
        .unwrap_or_default()
}

#[test]
fn the_selection_follows_its_identifier_when_the_lists_reorder() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(ApiVersion::V2025_10_02);
    app.sessions.store = Some(store_with(
        dir.path(),
        &[("sessionpad-0badc0de", 0), ("agent-run-7", 120)],
    ));
    press(&mut app, KeyCode::F(3));
    let ids = |app: &App| -> Vec<String> {
        app.sessions
            .pane
            .local
            .iter()
            .map(|e| e.identifier.clone())
            .collect()
    };
    assert_eq!(ids(&app), ["sessionpad-0badc0de", "agent-run-7"]);
    // Select agent-run-7 (row 1) and switch to it: it moves to the top of
    // this machine's list, and the selection goes with it.
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Enter);
    assert_eq!(ids(&app), ["agent-run-7", "sessionpad-0badc0de"]);
    assert_eq!(
        app.sessions.pane.selected_key(),
        Some((RowKind::Local, "agent-run-7".into()))
    );
    // A refresh: the pool's list comes in another order; still the same row.
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![
            info("sessionpad-0badc0de", 10, 290),
            info("agent-run-7", 130, 40),
        ]))),
        Instant::now(),
    );
    assert_eq!(
        app.sessions.pane.selected_key(),
        Some((RowKind::Local, "agent-run-7".into()))
    );
    // Select the pool's row of sessionpad-0badc0de (rows: 2 local, then the
    // pool's); the pool then lists it second: the selection follows.
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(
        app.sessions.pane.selected_key(),
        Some((RowKind::Pool, "sessionpad-0badc0de".into()))
    );
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![
            info("agent-run-7", 130, 40),
            info("langchain-a1b2", 1, 100),
            info("sessionpad-0badc0de", 10, 290),
        ]))),
        Instant::now(),
    );
    assert_eq!(
        app.sessions.pane.selected_key(),
        Some((RowKind::Pool, "sessionpad-0badc0de".into()))
    );
    // `e` asks about the marked identifier, by name.
    press(&mut app, KeyCode::Char('e'));
    match app.sessions_prompt() {
        Some(SessionsPrompt::End(id)) => assert_eq!(id, "sessionpad-0badc0de"),
        other => panic!("{other:?}"),
    }
    let shown = screen(&mut app, 160, 48);
    assert!(
        line_with(&shown, "End session").contains("End session sessionpad-0badc0de?"),
        "{shown:?}"
    );
    // Gone from the pool's list, the identifier is still this machine's: the
    // selection goes to its row there.
    press(&mut app, KeyCode::Char('n'));
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![info(
            "agent-run-7",
            130,
            40,
        )]))),
        Instant::now(),
    );
    assert_eq!(
        app.sessions.pane.selected_key(),
        Some((RowKind::Local, "sessionpad-0badc0de".into()))
    );
    // Gone from both lists: the row at its place.
    let pane = &mut app.sessions.pane;
    pane.set_local(vec![
        entry("a-1234", None, 1),
        entry("b-1234", None, 2),
        entry("c-1234", None, 3),
    ]);
    pane.set_pool_list(PoolList::Loaded(vec![]));
    pane.select_row(1);
    pane.set_local(vec![entry("a-1234", None, 1), entry("c-1234", None, 3)]);
    assert_eq!(pane.selected_key(), Some((RowKind::Local, "c-1234".into())));
    pane.set_local(vec![]);
    assert_eq!(pane.selected_key(), None);
}

#[test]
fn the_current_session_and_the_selection_have_their_own_marks() {
    let mut app = with_pane();
    press(&mut app, KeyCode::Char('j'));
    let shown = screen(&mut app, 160, 48);
    let current = line_with(&shown, "sessionpad-0badc0de ");
    let selected = line_with(&shown, "agent-run-7 ");
    assert!(
        current.contains(&format!(" {CURRENT_MARK} sessionpad-0badc0de")),
        "{current}"
    );
    assert!(!current.contains(SELECTION_MARK), "{current}");
    assert!(
        selected.contains(&format!("{SELECTION_MARK}  agent-run-7")),
        "{selected}"
    );
    // Selecting the current session shows both marks.
    press(&mut app, KeyCode::Char('k'));
    let shown = screen(&mut app, 160, 48);
    let both = line_with(&shown, "sessionpad-0badc0de ");
    assert!(
        both.contains(&format!(
            "{SELECTION_MARK}{CURRENT_MARK} sessionpad-0badc0de"
        )),
        "{both}"
    );
}

#[test]
fn last_used_is_the_last_run_or_the_pool_s_last_access_never_the_opening() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(ApiVersion::V2025_10_02);
    app.sessions.store = Some(store_with(dir.path(), &[("agent-run-7", 120)]));
    // Opening the notebook is recorded, not shown as a use.
    app.sessions.record_use("sessionpad-0badc0de");
    press(&mut app, KeyCode::F(3));
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![]))),
        Instant::now(),
    );
    let shown = screen(&mut app, 160, 48);
    let opened = line_with(&shown, "sessionpad-0badc0de");
    assert!(opened.contains("no run yet"), "{opened}");
    assert!(!opened.contains("in the future"), "{opened}");
    // A finished cell: just now.
    press(&mut app, KeyCode::Tab);
    run(&mut app, "x = 1");
    let shown = screen(&mut app, 160, 48);
    let ran = line_with(&shown, "sessionpad-0badc0de");
    assert!(ran.contains("just now"), "{ran}");
    let entry = app
        .sessions
        .store
        .as_ref()
        .unwrap()
        .get("local", "sessionpad-0badc0de")
        .cloned();
    assert!(entry.and_then(|e| e.last_run).is_some());
    // The pool's own field wins where the pool lists the session.
    let mut listed = info("agent-run-7", 130, 40);
    listed.last_accessed = Some(Utc::now() - chrono::Duration::minutes(7));
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::Listed(Ok(vec![listed]))),
        Instant::now(),
    );
    let shown = screen(&mut app, 160, 48);
    let agent = line_with(&shown, "agent-run-7");
    assert!(
        agent.contains("7 min 00 s ago") || agent.contains("7 min 01 s ago"),
        "{agent}"
    );
}

#[test]
fn the_pool_info_scrolls_to_its_last_package_and_no_further() {
    let mut app = with_pane();
    press(&mut app, KeyCode::Char('i'));
    let packages: Vec<NameVersion> = (0..120)
        .map(|i| NameVersion {
            name: format!("package-{i:03}"),
            version: "1.0".into(),
        })
        .collect();
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::PoolInfo(Ok(PoolMetadata {
            runtimes: vec![],
            packages,
            kernel: None,
            created: None,
            updated: None,
            isolation: None,
            container_type: None,
            service_limits: Vec::new(),
            image: None,
        }))),
        Instant::now(),
    );
    let text = |app: &mut App| format!("{:?}", screen(app, 80, 24));
    let top = text(&mut app);
    assert!(
        top.contains("package-000") && !top.contains("package-119"),
        "{top}"
    );
    assert!(top.contains(" of "), "the border says which lines: {top}");
    for _ in 0..50 {
        press(&mut app, KeyCode::PageDown);
    }
    let end = text(&mut app);
    assert!(end.contains("package-119"), "{end}");
    // Clamped at the end: one step up shows something else.
    press(&mut app, KeyCode::Up);
    assert_ne!(text(&mut app), end);
    press(&mut app, KeyCode::Char('k'));
    for _ in 0..50 {
        press(&mut app, KeyCode::PageUp);
    }
    assert_eq!(text(&mut app), top);
}
