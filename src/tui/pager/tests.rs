//! Long outputs end to end: the collapsed cell in the notebook and the pager
//! opened on it, as snapshots of the whole screen (80x24 and 160x48), and the
//! pager's scrolling and search.

use std::time::{Duration, Instant};

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use ratatui_textarea::{Input, Key};

use super::*;
use crate::protocol::{ApiVersion, Execution, ExecutionStatus};
use crate::session::SessionEvent;
use crate::tui::action::Action;
use crate::tui::action::Effect;
use crate::tui::app::App;
use crate::tui::app::view::draw;
use crate::tui::app::{AppConfig, PoolState};
use crate::tui::notebook::NotebookAction;

fn app() -> App {
    App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-0badc0de".into(),
            api_version: ApiVersion::V2025_10_02,
            language: crate::notebook::language::Language::Python,
        },
        PoolState::Ready,
    )
}

/// An app whose one cell printed `lines` numbered lines.
fn app_with_output(lines: usize) -> App {
    let now = Instant::now();
    let mut app = app();
    app.update(
        Action::Paste(format!("for i in range({lines}): print(f'line {{i}}')")),
        now,
    );
    let run = match app
        .update(Action::Notebook(NotebookAction::RunCell), now)
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    };
    let stdout: String = (0..lines).map(|i| format!("line {i}\n")).collect();
    app.handle_event(SessionEvent::ExecutionStarted(run), now);
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run,
            outcome: Ok(Execution {
                execution_count: None,
                id: None,
                status: ExecutionStatus::Succeeded,
                stdout,
                stderr: String::new(),
                result: None,
                images: vec![],
                duration: Duration::from_millis(42),
                network: Vec::new(),
            }),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    app
}

fn screen(app: &mut App, width: u16, height: u16) -> TestBackend {
    let mut terminal = match Terminal::new(TestBackend::new(width, height)) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    if let Err(e) = terminal.draw(|f| draw(f, app, Instant::now())) {
        panic!("{e}");
    }
    terminal.backend().clone()
}

fn type_keys(app: &mut App, text: &str) {
    for c in text.chars() {
        let key = if c == '\n' { Key::Enter } else { Key::Char(c) };
        app.update(
            Action::Edit(Input {
                key,
                ..Input::default()
            }),
            Instant::now(),
        );
    }
}

#[test]
fn collapsed_large_output_80x24() {
    let mut app = app_with_output(5000);
    assert_snapshot!(screen(&mut app, 80, 24));
}

#[test]
fn collapsed_large_output_160x48() {
    let mut app = app_with_output(5000);
    assert_snapshot!(screen(&mut app, 160, 48));
}

/// Opens the pager on the collapsed output and searches for `line 4321`.
fn pager_with_hit(width: u16, height: u16) -> TestBackend {
    let mut app = app_with_output(5000);
    let _ = screen(&mut app, width, height);
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Open),
        Instant::now(),
    );
    assert!(app.overlays.pager().is_some());
    let _ = screen(&mut app, width, height);
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Search),
        Instant::now(),
    );
    type_keys(&mut app, "line 4321\n");
    screen(&mut app, width, height)
}

#[test]
fn pager_with_a_search_hit_80x24() {
    let backend = pager_with_hit(80, 24);
    let hit = (0..24).find(|&y| {
        let row: String = (0..80)
            .filter_map(|x| {
                backend
                    .buffer()
                    .cell((x, y))
                    .map(|c| c.symbol().to_string())
            })
            .collect();
        row.contains("line 4321")
    });
    let Some(y) = hit else {
        panic!("no hit on screen");
    };
    let x = (0..80)
        .find(|&x| {
            backend
                .buffer()
                .cell((x, y))
                .is_some_and(|c| c.symbol() == "l")
        })
        .unwrap_or(0);
    let style = backend
        .buffer()
        .cell((x, y))
        .map(ratatui::buffer::Cell::style);
    assert!(
        style.is_some_and(|s| s.add_modifier.contains(Modifier::REVERSED) || s.bg.is_some()),
        "the hit is highlighted: {style:?}"
    );
    assert_snapshot!(backend);
}

#[test]
fn pager_with_a_search_hit_160x48() {
    assert_snapshot!(pager_with_hit(160, 48));
}

#[test]
fn pager_scrolls_pages_and_ends_and_closes() {
    let mut app = app_with_output(1000);
    let _ = screen(&mut app, 80, 24);
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Open),
        Instant::now(),
    );
    let text = |app: &mut App| format!("{:?}", screen(app, 80, 24));
    assert!(text(&mut app).contains("lines 1–22 of 1,000"));
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Bottom),
        Instant::now(),
    );
    assert!(text(&mut app).contains("line 999"));
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Page(-1)),
        Instant::now(),
    );
    assert!(text(&mut app).contains("lines 958–979"));
    app.update(Action::ScrollLines(-3), Instant::now());
    assert!(text(&mut app).contains("lines 955–976"));
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Top),
        Instant::now(),
    );
    assert!(text(&mut app).contains("lines 1–22"));
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Close),
        Instant::now(),
    );
    assert!(app.overlays.pager().is_none());
    assert!(text(&mut app).contains("opens them in the pager"));
}

#[test]
fn n_and_shift_n_walk_the_matches_and_wrap() {
    let mut app = app_with_output(1000);
    let _ = screen(&mut app, 80, 24);
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Open),
        Instant::now(),
    );
    let _ = screen(&mut app, 80, 24);
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Search),
        Instant::now(),
    );
    type_keys(&mut app, "line 99\n");
    let hit = |app: &App| app.overlays.pager().and_then(|p| p.hit);
    assert_eq!(hit(&app), Some(99));
    for expected in [990, 991, 992] {
        let _ = screen(&mut app, 80, 24);
        app.update(
            Action::Pager(crate::tui::pager::PagerAction::Next),
            Instant::now(),
        );
        assert_eq!(hit(&app), Some(expected));
    }
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Prev),
        Instant::now(),
    );
    assert_eq!(hit(&app), Some(991));
    for _ in 0..9 {
        let _ = screen(&mut app, 80, 24);
        app.update(
            Action::Pager(crate::tui::pager::PagerAction::Next),
            Instant::now(),
        );
    }
    assert_eq!(hit(&app), Some(99), "wrapped to the top");
    let bottom = format!("{:?}", screen(&mut app, 80, 24));
    assert!(bottom.contains("search wrapped to the top"), "{bottom}");
}

#[test]
fn a_search_without_a_match_says_so() {
    let mut app = app_with_output(300);
    let _ = screen(&mut app, 80, 24);
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Open),
        Instant::now(),
    );
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Search),
        Instant::now(),
    );
    assert_eq!(app.overlays.pager().map(Pager::is_typing), Some(true));
    type_keys(&mut app, "nowhere\n");
    assert_eq!(app.overlays.pager().map(Pager::is_typing), Some(false));
    assert!(format!("{:?}", screen(&mut app, 80, 24)).contains("not found: nowhere"));
}

#[test]
fn paste_goes_to_the_prompt_and_not_to_the_editor() {
    let mut app = app_with_output(300);
    let _ = screen(&mut app, 80, 24);
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Open),
        Instant::now(),
    );
    app.update(Action::Paste("ignored".into()), Instant::now());
    app.update(
        Action::Pager(crate::tui::pager::PagerAction::Search),
        Instant::now(),
    );
    app.update(
        Action::Paste("line 2\x1b]52;c;aGk=\x07\nrest".into()),
        Instant::now(),
    );
    type_keys(&mut app, "9\n");
    assert!(app.notebook.editor.is_empty());
    assert_eq!(app.overlays.pager().and_then(|p| p.hit), Some(29));
}

#[test]
fn highlight_splits_spans_at_matches() {
    let line = Line::from(vec![Span::raw("abcab"), Span::raw("cab")]);
    let out = highlight(line, "ab", Style::new().add_modifier(Modifier::BOLD));
    let parts: Vec<(String, bool)> = out
        .spans
        .iter()
        .map(|s| {
            (
                s.content.to_string(),
                s.style.add_modifier.contains(Modifier::BOLD),
            )
        })
        .collect();
    assert_eq!(
        parts,
        vec![
            ("ab".into(), true),
            ("c".into(), false),
            ("ab".into(), true),
            ("c".into(), false),
            ("ab".into(), true),
        ]
    );
}

#[test]
fn the_pager_opens_the_selected_cell_else_the_last_one() {
    use crate::notebook::{CellOutcome, StreamName};
    use crate::tui::notebook::outputs::OutputsView;
    use crate::tui::widgets::long_output::LongTexts;
    let cell = |text: &str| Cell {
        source: "print()".into(),
        execution_count: 1,
        outputs: vec![Output::Stream {
            name: StreamName::Stdout,
            text: text.into(),
        }],
        outcome: Some(CellOutcome::Succeeded),
        duration: None,
        exit_code: None,
        stdin: None,
        quit_while: None,
        output_streams_max_length: None,
        network: Vec::new(),
    };
    let cells = vec![cell("first\n"), cell("second\n")];
    let texts = LongTexts::default();
    let mut view = OutputsView::default();
    let key = |cell| Some(OutputKey { cell, output: 0 });
    assert_eq!(view.pager_target(&cells, &texts), key(1));
    view.select(Some(0));
    assert_eq!(view.pager_target(&cells, &texts), key(0));
}

#[test]
fn the_note_names_the_key_the_keymap_binds() {
    use crate::tui::keymap::Keymap;
    assert_eq!(super::pager_key(&Keymap::default()), "Ctrl+O");
}
