//! The status line's warning when the local pool's sessions are not isolated:
//! where it goes at 80 and 160 columns, that nothing else covers it, and that
//! isolated or unknown pools show none.

use std::time::Instant;

use insta::assert_snapshot;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::*;
use crate::protocol::ApiVersion;
use crate::protocol::Isolation;
use crate::tui::app::AppConfig;

fn app(isolation: Option<Isolation>) -> App {
    let mut app = App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sp-0123456789abcdef".into(),
            api_version: ApiVersion::V2025_10_02,
            language: crate::notebook::language::Language::Python,
        },
        PoolState::Ready,
    );
    app.isolation = isolation;
    app
}

fn unsandboxed() -> Isolation {
    Isolation::unsandboxed(
        "the sandbox cannot be built here: user namespaces are switched off (user.max_user_namespaces = 0) (new user namespace: No space left on device (os error 28)): sessions are NOT isolated",
    )
}

fn line(app: &App, width: u16) -> (String, Buffer) {
    let area = Rect::new(0, 0, width, 1);
    let mut buf = Buffer::empty(area);
    render(app, Instant::now(), area, &mut buf);
    let text = (0..width)
        .filter_map(|x| buf.cell((x, 0)).map(|c| c.symbol().to_string()))
        .collect::<String>();
    (text.trim_end().to_string(), buf)
}

#[test]
fn the_warning_follows_the_pool_at_80_and_160_columns() {
    let app = app(Some(unsandboxed()));
    let (at80, buf) = line(&app, 80);
    let (at160, _) = line(&app, 160);
    assert_snapshot!([at80.as_str(), at160.as_str()].join("\n"));
    // In the error colour, the whole of it.
    let start = u16::try_from(" local ".chars().count()).unwrap();
    for x in start..start + u16::try_from(NOT_ISOLATED.chars().count()).unwrap() {
        assert_eq!(buf[(x, 0)].fg, app.theme.error.fg.unwrap(), "column {x}");
    }
}

#[test]
fn a_notice_never_covers_the_warning() {
    let mut app = app(Some(unsandboxed()));
    app.notice = Some("a long notice that would fill the whole status line by itself".into());
    let (at80, _) = line(&app, 80);
    assert!(
        at80.starts_with(&format!(" local {NOT_ISOLATED}")),
        "{at80}"
    );
    assert!(at80.contains("a long notice"), "{at80}");
    assert_snapshot!(at80);
    // Narrower than pool, warning and notice together: the notice is cut.
    let (at30, _) = line(&app, 30);
    assert!(
        at30.starts_with(&format!(" local {NOT_ISOLATED}")),
        "{at30}"
    );
}

#[test]
fn isolated_or_unknown_pools_show_no_warning() {
    let sandboxed = |network: &str| Isolation {
        unsandboxed: None,
        limits: Vec::new(),
        notes: vec![format!("network: {network}")],
    };
    for (isolation, said) in [
        (None, None),
        (Some(sandboxed("none")), Some("│ sandboxed · no network")),
        (
            Some(sandboxed("allowed (--egress)")),
            Some("│ sandboxed · network on"),
        ),
    ] {
        let (at100, _) = line(&app(isolation), 100);
        assert!(!at100.contains(NOT_ISOLATED), "{at100}");
        assert!(
            at100.starts_with(" local │ sp-0123456789abcdef │"),
            "{at100}"
        );
        match said {
            Some(said) => assert!(at100.trim_end().ends_with(said), "{at100}"),
            None => assert!(!at100.contains("sandboxed"), "{at100}"),
        }
    }
}

#[test]
fn the_warning_comes_with_the_pool_s_isolation() {
    let mut app = app(None);
    assert!(!not_isolated(&app));
    app.handle_event(
        crate::session::SessionEvent::PoolIsolation(unsandboxed()),
        Instant::now(),
    );
    assert!(not_isolated(&app));
    assert!(line(&app, 80).0.contains(NOT_ISOLATED));
}

#[test]
fn parts_give_way_whole_instead_of_being_drawn_over() {
    let mut app = app(None);
    app.notice = Some("interrupting In [9]… (Ctrl+C again abandons it)".into());
    // The notice and the pool whole; the api-version, then the identifier
    // made room; nothing is cut in the middle.
    let (at100, _) = line(&app, 100);
    assert_eq!(
        at100,
        " local │ sp-0123456789abcdef │ ready                \
         interrupting In [9]… (Ctrl+C again abandons it)"
    );
    let (at80, _) = line(&app, 80);
    assert_eq!(
        at80,
        " local │ ready                  interrupting In [9]… (Ctrl+C again abandons it)"
    );
    // Without a notice everything fits at 80 columns.
    app.notice = None;
    let (at80, _) = line(&app, 80);
    assert_eq!(
        at80,
        " local │ sp-0123456789abcdef │ 2025-10-02-preview │ ready"
    );
}

/// A pool that does not run Python says what it runs, right after its name.
#[test]
fn a_shell_or_node_pool_says_what_it_runs() {
    use crate::notebook::language::Language;
    let mut app = app(None);
    app.config.language = Language::Shell;
    assert!(
        line(&app, 80).0.starts_with(" local shell │ "),
        "{:?}",
        line(&app, 80).0
    );
    app.config.language = Language::JavaScript;
    assert!(line(&app, 80).0.starts_with(" local javascript │ "));
}
