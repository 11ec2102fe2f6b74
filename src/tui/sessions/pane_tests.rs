//! Tests of the sessions pane: rows across both lists, countdowns, and snapshots
//! with this machine's identifiers and the pool's list at 80x24 and 160x48.

use chrono::TimeZone;
use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 14, 0, 0).unwrap()
}

fn mins(m: i64) -> chrono::Duration {
    chrono::Duration::minutes(m)
}

fn entry(id: &str, label: Option<&str>, last: DateTime<Utc>) -> SessionEntry {
    SessionEntry {
        pool: "local".into(),
        identifier: id.into(),
        label: label.map(Into::into),
        first_used: last - mins(90),
        last_used: last,
        last_run: Some(last),
        notebook: None,
        followed_seq: None,
    }
}

fn info(id: &str, created: i64, accessed: i64, expires_in_secs: i64) -> SessionInfo {
    SessionInfo {
        identifier: id.into(),
        created: Some(now() - mins(created)),
        last_accessed: Some(now() - mins(accessed)),
        expires: Some(now() + chrono::Duration::seconds(expires_in_secs)),
        etag: None,
    }
}

fn state() -> SessionsPaneState {
    let mut s = SessionsPaneState::new("local", "sessionpad-0badc0de", now());
    s.local = vec![
        entry(
            "sessionpad-0badc0de",
            Some("demo"),
            now() - chrono::Duration::seconds(3),
        ),
        entry(
            "agent-run-7",
            Some("agent \u{1b}[2Jrun 7"),
            now() - mins(123),
        ),
        SessionEntry {
            // Opened two days ago, never ran a cell here.
            last_run: None,
            ..entry(
                "sessionpad-1f2e3d4c",
                None,
                now() - chrono::Duration::days(2),
            )
        },
    ];
    s.pool_list = PoolList::Loaded(vec![
        info("sessionpad-0badc0de", 40, 0, 245),
        info("agent-run-7", 130, 4, 42),
        info("langchain-\u{1b}]0;x\u{7}a1b2", 300, 6, -12),
    ]);
    s.focused = true;
    s
}

fn screen(state: &SessionsPaneState, width: u16, height: u16) -> TestBackend {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| render(f.area(), f.buffer_mut(), state, &Theme::dark()))
        .unwrap();
    terminal.backend().clone()
}

#[test]
fn one_selection_runs_through_both_lists() {
    let mut s = state();
    assert_eq!(s.row_count(), 6);
    assert!(
        matches!(s.selected_row(), Some(SessionRow::Local(e)) if e.identifier == "sessionpad-0badc0de")
    );
    s.move_selection(3);
    assert!(
        matches!(s.selected_row(), Some(SessionRow::Pool(i)) if i.identifier == "sessionpad-0badc0de")
    );
    s.move_selection(10);
    assert_eq!(s.selected, 5);
    assert_eq!(
        s.selected_row()
            .map(|r| r.identifier().to_string())
            .as_deref(),
        Some("langchain-\u{1b}]0;x\u{7}a1b2")
    );
    s.move_selection(-10);
    assert_eq!(s.selected, 0);

    s.pool_list = PoolList::Unsupported("listSessions needs 2025-02-02-preview or later".into());
    assert_eq!(s.row_count(), 3);
    assert!(s.row(3).is_none());
}

#[test]
fn countdowns_warn_then_say_ended() {
    let theme = Theme::dark();
    let (text, style) = idle_countdown(now() + chrono::Duration::seconds(245), now(), &theme);
    assert_eq!((text.as_str(), style), ("ends in 4 min 05 s", theme.muted));
    let (text, style) = idle_countdown(now() + chrono::Duration::seconds(42), now(), &theme);
    assert_eq!((text.as_str(), style), ("ends in 42 s", theme.warning));
    let (text, style) = idle_countdown(now() - chrono::Duration::seconds(12), now(), &theme);
    assert_eq!((text.as_str(), style), ("ended 12 s ago", theme.error));
}

#[test]
fn snapshot_both_lists() {
    let mut s = state();
    s.selected = 4;
    assert_snapshot!("sessions_80x24", screen(&s, 80, 24));
    assert_snapshot!("sessions_160x48", screen(&s, 160, 48));
}

#[test]
fn snapshot_without_list_sessions() {
    let mut s = state();
    s.pool_list =
        PoolList::Unsupported("this api-version (2024-10-02-preview) has no listSessions".into());
    assert_snapshot!("sessions_unsupported_80x24", screen(&s, 80, 24));
}

#[test]
fn a_small_pane_scrolls_to_the_selection() {
    let mut s = state();
    s.selected = 5;
    let backend = screen(&s, 60, 6);
    let text: String = backend
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol().to_string())
        .collect();
    assert!(text.contains("langchain-a1b2"), "{text}");
    assert!(!text.chars().any(char::is_control));
}

/// The screen's text, line by line.
fn text(backend: &TestBackend) -> String {
    let buf = backend.buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect()
}

/// Issue 28 item 4: an Azure pool's card (from ARM) heads the pool's list in
/// short, "N of max alive" counting the sessions listed; when ARM gave none,
/// the pane says why (a 403 names the role).
#[test]
fn the_pool_title_is_the_cards_summary_or_why_there_is_none() {
    let mut s = state();
    let card: crate::client::arm::SessionPoolResource = serde_json::from_value(serde_json::json!({
        "properties": {
            "sessionNetworkConfiguration": {"status": "EgressDisabled"},
            "dynamicPoolConfiguration": {"lifecycleConfiguration": {
                "lifecycleType": "Timed", "cooldownPeriodInSeconds": 300}},
            "scaleConfiguration": {"maxConcurrentSessions": 100}
        }
    }))
    .unwrap();
    let before = text(&screen(&s, 100, 24));
    assert!(before.contains("Pool · 3"), "{before}");
    s.card = Some(Ok(card));
    let shown = text(&screen(&s, 100, 24));
    assert!(
        shown.contains("Pool · egress off · cooldown 300 s · 3 of 100 alive"),
        "{shown}"
    );
    s.card = Some(Err(
        "ARM refused (403 AuthorizationFailed): reading session pool p needs the \"Reader\" role"
            .into(),
    ));
    let refused = text(&screen(&s, 160, 24));
    assert!(refused.contains("Pool · 3"), "{refused}");
    assert!(
        refused.contains("pool card: ARM refused (403 AuthorizationFailed): reading session pool p needs the \"Reader\" role"),
        "{refused}"
    );
}
