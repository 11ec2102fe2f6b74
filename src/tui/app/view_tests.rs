//! Snapshot tests of the views on ratatui's `TestBackend` at 80x24. The test data
//! is fixed (identifier, durations, elapsed times measured against a given `now`),
//! so nothing in the snapshots needs masking.

use std::time::{Duration, Instant};

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use serde_json::json;

use super::*;
use crate::protocol::{Execution, ExecutionStatus};
use crate::session::{RunId, SessionEvent};
use crate::tui::action::{Action, Effect};
use crate::tui::app::{AppConfig, PoolState};
use crate::tui::notebook::NotebookAction;
use crate::tui::notebook::format_duration;

fn app(pool: PoolState) -> App {
    App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-0badc0de".into(),
            api_version: crate::protocol::ApiVersion::V2025_10_02,
            language: crate::notebook::language::Language::Python,
        },
        pool,
    )
}

/// Types `code`, runs it, and delivers `exec` as its outcome.
fn run_cell(app: &mut App, code: &str, exec: Option<Execution>, now: Instant) -> RunId {
    app.update(Action::Paste(code.into()), now);
    let run = match app
        .update(Action::Notebook(NotebookAction::RunCell), now)
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    };
    if let Some(exec) = exec {
        app.handle_event(SessionEvent::ExecutionStarted(run), now);
        app.handle_event(
            SessionEvent::ExecutionFinished {
                run,
                outcome: Ok(exec),
                exit_code: None,
                images: vec![],
            },
            now,
        );
    }
    run
}

fn done(stdout: &str, result: Option<serde_json::Value>, ms: u64) -> Execution {
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
        duration: Duration::from_millis(ms),
        network: Vec::new(),
    }
}

/// A finished execution whose value came in Jupyter's `text/plain` form.
fn done_text(text: &str, ms: u64) -> Execution {
    Execution {
        result: Some(crate::protocol::ExecutionValue::text(text)),
        ..done("", None, ms)
    }
}

fn screen(app: &mut App, now: Instant, width: u16, height: u16) -> TestBackend {
    let mut terminal = match Terminal::new(TestBackend::new(width, height)) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    if let Err(e) = terminal.draw(|f| draw(f, app, now)) {
        panic!("{e}");
    }
    terminal.backend().clone()
}

#[test]
fn whole_screen_with_printed_output() {
    let now = Instant::now();
    let mut app = app(PoolState::Ready);
    run_cell(&mut app, "x = 6*7", Some(done("", None, 2)), now);
    run_cell(&mut app, "print(x)", Some(done("42\n", None, 3)), now);
    run_cell(&mut app, "x", Some(done("", Some(json!(42)), 1)), now);
    app.update(
        Action::Paste("for i in range(3):\n    print(i)".into()),
        now,
    );
    assert_snapshot!(screen(&mut app, now, 80, 24));
    assert_snapshot!(
        "whole_screen_with_printed_output_160x48",
        screen(&mut app, now, 160, 48)
    );
}

/// Results as Python shows them: a dict and a tuple on their `Out[n]:` line, a
/// DataFrame of many lines starting on the line under it, every column where
/// pandas put it (issue 11, points 1 and 3).
#[test]
fn whole_screen_with_python_results() {
    let now = Instant::now();
    let mut app = app(PoolState::Ready);
    let dict = json!({"a": 1, "b": null});
    run_cell(
        &mut app,
        "{'a': 1, 'b': None}",
        Some(done("", Some(dict), 2)),
        now,
    );
    run_cell(
        &mut app,
        "(1, 2.5, 'x')",
        Some(done_text("(1, 2.5, 'x')", 1)),
        now,
    );
    run_cell(
        &mut app,
        "pd.DataFrame({'a': [1, 2], 'b': [3.5, 4.25]})",
        Some(done_text("   a     b\n0  1  3.50\n1  2  4.25", 3)),
        now,
    );
    assert_snapshot!(
        "whole_screen_with_python_results_80x24",
        screen(&mut app, now, 80, 24)
    );
    assert_snapshot!(
        "whole_screen_with_python_results_160x48",
        screen(&mut app, now, 160, 48)
    );
}

/// A plot in the notebook, drawn in half-blocks (the fallback every terminal has):
/// a fixed 64x32 gradient.
#[tokio::test]
async fn whole_screen_with_an_image_in_half_blocks() {
    let now = Instant::now();
    let mut app = app(PoolState::Ready);
    let (sender, mut events) = crate::tui::event::AppEventSender::channel();
    app.views.images.connect(sender);
    let picture = ::image::RgbImage::from_fn(64, 32, |x, y| {
        let (x, y) = (
            u8::try_from(x * 4).unwrap_or(255),
            u8::try_from(y * 8).unwrap_or(255),
        );
        ::image::Rgb([x, y, 128])
    });
    let png = {
        let mut bytes = Vec::new();
        ::image::DynamicImage::ImageRgb8(picture.clone())
            .write_to(
                &mut std::io::Cursor::new(&mut bytes),
                ::image::ImageFormat::Png,
            )
            .unwrap();
        bytes
    };
    let mut exec = done("", None, 40);
    exec.images = vec![crate::protocol::ExecutionImage {
        format: "png".into(),
        data: png,
    }];
    app.update(Action::Paste("plt.plot([1, 3, 2]); plt.show()".into()), now);
    let run = match app
        .update(Action::Notebook(NotebookAction::RunCell), now)
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    };
    app.handle_event(SessionEvent::ExecutionStarted(run), now);
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run,
            outcome: Ok(exec),
            exit_code: None,
            images: vec![Ok(::image::DynamicImage::ImageRgb8(picture))],
        },
        now,
    );
    // The first frame asks for the encodings (made off the UI task); deliver
    // them as the loop would, once per width drawn.
    for (w, h) in [(80, 24), (160, 48)] {
        screen(&mut app, now, w, h);
        app.views.images.dispatch();
        if let Some(event) = events.recv().await {
            app.handle_event(event, now);
        }
    }
    let small = screen(&mut app, now, 80, 24);
    assert!(
        format!("{small:?}").contains('▀') || format!("{small:?}").contains('▄'),
        "the image is drawn in half-blocks"
    );
    assert_snapshot!("whole_screen_with_an_image_80x24", small);
    assert_snapshot!(
        "whole_screen_with_an_image_160x48",
        screen(&mut app, now, 160, 48)
    );
}

#[test]
fn whole_screen_with_a_traceback() {
    let now = Instant::now();
    let mut app = app(PoolState::Ready);
    let failed = Execution { execution_count: None,
        id: None,
        status: ExecutionStatus::Failed,
        stdout: String::new(),
        stderr: "Traceback (most recent call last):\n  File \"<ipython-input-4>\", line 1, in <module>\n    1/0\n    ~^~\nZeroDivisionError: division by zero\n".into(),
        result: None,
        images: vec![],
        duration: Duration::from_millis(5),
        network: Vec::new(),
    };
    run_cell(&mut app, "1/0", Some(failed), now);
    assert_snapshot!(screen(&mut app, now, 80, 24));
    assert_snapshot!(
        "whole_screen_with_a_traceback_160x48",
        screen(&mut app, now, 160, 48)
    );
}

#[test]
fn banner_while_the_pool_starts() {
    let now = Instant::now();
    let mut app = app(PoolState::Starting);
    app.handle_event(
        SessionEvent::PoolProgress("creating the Python environment".into()),
        now,
    );
    app.handle_event(
        SessionEvent::PoolProgress("installing ipykernel, numpy\x1b]0;t\x07".into()),
        now,
    );
    assert_snapshot!(screen(&mut app, now, 80, 24));
}

#[test]
fn outputs_scroll_with_page_up() {
    let now = Instant::now();
    let mut app = app(PoolState::Ready);
    let many: String = (0..40).map(|i| format!("line {i}\n")).collect();
    run_cell(
        &mut app,
        "for i in range(40): print(f'line {i}')",
        Some(done(&many, None, 9)),
        now,
    );
    let bottom = screen(&mut app, now, 80, 24);
    assert!(format!("{bottom:?}").contains("line 39"));
    app.update(Action::PageUp, now);
    let up = format!("{:?}", screen(&mut app, now, 80, 24));
    assert!(!up.contains("line 39"), "{up}");
    assert!(up.contains("line 20"), "{up}");
}

fn status_line(app: &App, now: Instant) -> String {
    let area = Rect::new(0, 0, 80, 1);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    status::render(app, now, area, &mut buf);
    (0..80)
        .filter_map(|x| buf.cell((x, 0)).map(|c| c.symbol().to_string()))
        .collect()
}

#[test]
fn status_line_states() {
    let now = Instant::now();
    let mut starting = app(PoolState::Starting);
    starting.handle_event(
        SessionEvent::PoolProgress("pip install ipykernel".into()),
        now,
    );
    let mut ready = app(PoolState::Ready);
    let ready_line = status_line(&ready, now);
    run_cell(&mut ready, "x", Some(done("", Some(json!(1)), 12)), now);
    let done_line = status_line(&ready, now);
    let mut running = app(PoolState::Ready);
    let first = run_cell(&mut running, "import time; time.sleep(5)", None, now);
    run_cell(&mut running, "x", None, now);
    running.handle_event(
        SessionEvent::ExecutionStarted(first),
        now.checked_sub(Duration::from_millis(1234)).unwrap(),
    );
    let running_line = status_line(&running, now);
    ready.update(Action::Notebook(NotebookAction::Interrupt), now);
    let notice_line = status_line(&ready, now);
    assert_snapshot!(
        [
            status_line(&starting, now),
            ready_line,
            done_line,
            running_line,
            notice_line
        ]
        .join("\n")
    );
}

#[test]
fn durations_read_naturally() {
    assert_eq!(format_duration(Duration::from_millis(12)), "12 ms");
    assert_eq!(format_duration(Duration::from_millis(1234)), "1.2 s");
    assert_eq!(format_duration(Duration::from_secs(185)), "3 min 5 s");
}

/// Under `NO_COLOR` the session's own SGR colours and the code's syntax colours
/// are dropped too, not only the theme's.
#[test]
fn no_color_drops_session_and_syntax_colours() {
    let now = Instant::now();
    let mut app = app(PoolState::Ready);
    app.theme = crate::tui::theme::Theme::named("dark", true).unwrap();
    run_cell(
        &mut app,
        "print('\\x1b[31mred\\x1b[0m')",
        Some(done("\x1b[31mred\x1b[0m\n", None, 1)),
        now,
    );
    let backend = screen(&mut app, now, 80, 24);
    let buf = backend.buffer();
    let coloured = buf.content().iter().any(|c| {
        !matches!(c.fg, ratatui::style::Color::Reset)
            || !matches!(c.bg, ratatui::style::Color::Reset)
    });
    assert!(!coloured, "a colour reached the screen under NO_COLOR");
    assert!(format!("{backend:?}").contains("red"));
}

/// Cells reloaded from an earlier run do not stand for this run's state: the
/// status line says `ready`, not the old cell's `done in …`.
#[test]
fn reloaded_cells_leave_the_status_ready() {
    let now = Instant::now();
    let mut earlier = app(PoolState::Ready);
    run_cell(&mut earlier, "x = 1", Some(done("", None, 7)), now);
    let mut app = app(PoolState::Ready);
    app.load_history(earlier.notebook.book.cells.clone(), vec![]);
    let text = format!("{:?}", screen(&mut app, now, 80, 24));
    assert!(text.contains("│ ready"), "{text}");
    assert!(
        !text.contains("done in 7 ms │") && !text.contains("│ done in 7 ms"),
        "{text}"
    );
    run_cell(&mut app, "y = 2", Some(done("", None, 3)), now);
    let text = format!("{:?}", screen(&mut app, now, 80, 24));
    assert!(text.contains("│ done in 3 ms"), "{text}");
}

#[test]
fn a_reopened_notebook_shows_where_its_session_ended() {
    let now = Instant::now();
    let mut earlier = app(PoolState::Ready);
    run_cell(&mut earlier, "x = 6*7", Some(done("", None, 2)), now);
    run_cell(&mut earlier, "print(x)", Some(done("42\n", None, 3)), now);
    let cells = earlier.notebook.book.cells.clone();
    for (width, height) in [(80, 24), (160, 48)] {
        let mut app = app(PoolState::Ready);
        app.load_history(cells.clone(), Vec::new());
        // Until the pool says, the notebook says it asked.
        let unsure = format!("{:?}", screen(&mut app, now, width, height));
        assert!(unsure.contains("reopened: asking the pool"), "{unsure}");
        // The pool has no such session: the reopened notebook's is certainly new.
        let identifier = app.config.identifier.clone();
        app.handle_event(
            crate::session::SessionEvent::Sessions(crate::session::SessionsEvent::Info {
                identifier,
                result: Err(crate::session::Failure::new(
                    crate::session::FailureKind::NotFound,
                    "no such session",
                )),
            }),
            now,
        );
        assert_snapshot!(
            format!("reopened_{width}x{height}"),
            format!("{:?}", screen(&mut app, now, width, height))
        );
    }
}

#[test]
fn boundaries_say_what_is_known() {
    use crate::tui::app::{PoolSays, SessionBoundary};
    let b = |after, known_new, replayed| SessionBoundary {
        after,
        known_new,
        replayed,
        kernel_restarted: false,
        pool_says: PoolSays::CannotAsk,
    };
    // A pool that cannot be asked: it says so, and what an end would take.
    let texts = boundary_texts(&[b(2, false, false)], 2);
    assert!(
        texts[0].1.starts_with("reopened: this pool cannot say")
            && texts[0].1.contains("/mnt/data files are gone"),
        "{texts:?}"
    );
    // The pool said the session is new (it recycled it, or the pool restarted).
    let texts = boundary_texts(&[b(2, true, false)], 3);
    assert_eq!(
        texts,
        [(
            2,
            "new session: the variables and /mnt/data files of the cells above are gone; \
             R replays them"
                .to_string()
        )]
    );
    // Asked about a reopened notebook's session: asking, live, ended.
    let asking = SessionBoundary {
        pool_says: PoolSays::Asking,
        ..b(2, false, false)
    };
    let texts = boundary_texts(&[asking], 2);
    assert!(
        texts[0].1.starts_with("reopened: asking the pool"),
        "{texts:?}"
    );
    let live = SessionBoundary {
        pool_says: PoolSays::Live { created: None },
        ..b(2, false, false)
    };
    let texts = boundary_texts(&[live], 2);
    assert_eq!(
        texts[0].1,
        "reopened · session live: variables and files kept"
    );
    let ended = SessionBoundary {
        pool_says: PoolSays::Ended,
        ..b(2, true, false)
    };
    let texts = boundary_texts(&[ended], 2);
    assert_eq!(
        texts[0].1,
        "session ended: variables and /mnt/data files are gone; R replays them"
    );
    // Only the newest boundary says how to get the state back, or that it
    // was replayed.
    let texts = boundary_texts(&[b(1, true, false), b(3, true, true)], 4);
    assert_eq!(
        texts,
        [
            (1, "new session".to_string()),
            (
                3,
                "new session: the cells above ran in an earlier one; replayed below".to_string()
            )
        ]
    );
}

/// A reopened notebook asks the pool about its session (issue 27 item 9):
/// a session created before the notebook file was written is live and ran
/// the cells (R then asks whether to run them again anyway); one created
/// after it is a new session, as is none at all.
#[test]
fn a_reopened_notebook_says_whether_its_session_is_live() {
    use chrono::{TimeDelta, Utc};
    let now = Instant::now();
    let mut earlier = app(PoolState::Ready);
    run_cell(&mut earlier, "x = 6*7", Some(done("", None, 2)), now);
    let cells = earlier.notebook.book.cells.clone();
    let written = Utc::now() - TimeDelta::minutes(5);
    let answer = |app: &mut App, created| {
        let identifier = app.config.identifier.clone();
        app.handle_event(
            crate::session::SessionEvent::Sessions(crate::session::SessionsEvent::Info {
                identifier: identifier.clone(),
                result: Ok(crate::protocol::SessionInfo {
                    identifier,
                    created: Some(created),
                    last_accessed: None,
                    expires: None,
                    etag: None,
                }),
            }),
            now,
        );
    };
    let mut app = app(PoolState::Ready);
    app.notebook.loaded_at = Some(written);
    app.load_history(cells.clone(), Vec::new());
    answer(&mut app, written - TimeDelta::minutes(10));
    let text = format!("{:?}", screen(&mut app, now, 120, 24));
    assert!(
        text.contains("reopened · session live (created")
            && text.contains("variables and files kept"),
        "{text}"
    );
    assert_eq!(
        app.notice.as_deref(),
        Some("session live: variables and files kept")
    );
    app.update(
        crate::tui::action::Action::Notebook(crate::tui::notebook::NotebookAction::ReplayEarlier),
        now,
    );
    let asked = match app.overlays.prompt().map(|p| &p.ask) {
        Some(crate::tui::widgets::prompt::Ask::YesNo(q)) => q.text(200),
        other => panic!("no question: {other:?}"),
    };
    assert!(
        asked.contains("The session is live and ran them"),
        "{asked}"
    );
    // A later answer (the countdown's) changes nothing.
    answer(&mut app, written + TimeDelta::minutes(1));
    let text = format!("{:?}", screen(&mut app, now, 120, 24));
    assert!(text.contains("session live"), "{text}");

    let mut app = self::app(PoolState::Ready);
    app.notebook.loaded_at = Some(written);
    app.load_history(cells, Vec::new());
    answer(&mut app, written + TimeDelta::minutes(1));
    let text = format!("{:?}", screen(&mut app, now, 120, 24));
    assert!(
        text.contains("session ended: variables and /mnt/data files are gone"),
        "{text}"
    );
    assert_eq!(
        app.notice.as_deref(),
        Some("session ended: variables and /mnt/data files are gone")
    );
}

/// The rows of the screen as text.
fn screen_rows(app: &mut App, now: Instant) -> Vec<String> {
    let backend = screen(app, now, 80, 24);
    let buf = backend.buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .filter_map(|x| buf.cell((x, y)).map(|c| c.symbol().to_string()))
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

/// The row under cell `n`'s first line (`In [n]: …`): its status row when
/// the cell has one line of code and no output.
fn row_under(rows: &[String], n: u32) -> String {
    let at = rows
        .iter()
        .position(|r| r.contains(&format!("In [{n}]:")))
        .unwrap_or_else(|| panic!("no In [{n}] in {rows:#?}"));
    rows[at + 1].trim_start_matches('│').to_string()
}

/// A cell's queued and running states come from its run (`App::pending_of`),
/// never from the cell: the screen says `queued` while the run is queued and
/// `running` once the worker began it, and the reply settles it, while the
/// cell itself (what is saved) changes only when it settles. Its saved form
/// marks it unsettled (`queued`, as files always did) exactly while the run
/// state machine says it is pending, and the saver is handed it only once it
/// is settled: the file never holds a cell waiting for an answer.
#[test]
fn a_cells_pending_state_is_derived_from_its_run() {
    use crate::notebook::CellOutcome;
    use crate::notebook::ipynb::{self, NotebookMeta};
    use crate::tui::notebook::cell_view::Pending;

    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nb.ipynb");
    let meta = NotebookMeta {
        pool: "local".into(),
        identifier: "sessionpad-0badc0de".into(),
        api_version: "2025-10-02-preview".into(),
        language: crate::notebook::language::Language::Python,
    };
    let (saver, thread) =
        crate::notebook::store::spawn_saver(path.clone(), meta.clone(), Vec::new(), None).unwrap();
    let mut app = app(PoolState::Ready);
    app.notebook.set_saver(saver);
    // What the file would say of cell 0 if the notebook were written now.
    let written = |app: &App| {
        ipynb::to_value(&app.notebook.book.cells, &meta)["cells"][0]["metadata"]["sessionpad"]["status"]
            .clone()
    };
    let unsettled_only_while_pending = |app: &App| {
        assert_eq!(
            written(app) == json!("queued"),
            app.pending_of(0).is_some(),
            "written as {} while the runs say {:?}",
            written(app),
            app.pending_of(0)
        );
    };

    let first = run_cell(&mut app, "slow()", None, t0);
    run_cell(&mut app, "next()", None, t0);
    assert_eq!(app.pending_of(0), Some(Pending::Queued));
    assert_eq!(row_under(&screen_rows(&mut app, t0), 1), "  queued");
    assert_eq!(app.notebook.book.cells[0].outcome, None);
    unsettled_only_while_pending(&app);
    let queued = app.notebook.book.cells[0].clone();

    app.handle_event(SessionEvent::ExecutionStarted(first), t0);
    let later = t0 + Duration::from_millis(1234);
    assert_eq!(
        app.pending_of(0),
        Some(Pending::Running { since: Some(t0) })
    );
    assert_eq!(
        row_under(&screen_rows(&mut app, later), 1),
        "  ⠹ running 1.2 s"
    );
    assert_eq!(app.pending_of(1), Some(Pending::Queued), "the next waits");
    assert_eq!(row_under(&screen_rows(&mut app, later), 2), "  queued");
    assert_eq!(
        app.notebook.book.cells[0], queued,
        "the run starting writes nothing into the cell"
    );
    unsettled_only_while_pending(&app);

    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: first,
            outcome: Ok(done("", None, 3)),
            exit_code: None,
            images: vec![],
        },
        later,
    );
    assert_eq!(app.pending_of(0), None);
    assert_eq!(
        app.notebook.book.cells[0].outcome,
        Some(CellOutcome::Succeeded)
    );
    assert_eq!(
        row_under(&screen_rows(&mut app, later), 1),
        "  done in 3 ms"
    );
    assert_eq!(written(&app), json!("succeeded"));
    unsettled_only_while_pending(&app);

    // The file holds the settled cell, not the one still queued.
    drop(app);
    thread.join();
    let text = std::fs::read_to_string(&path).unwrap();
    let file = ipynb::from_str(&text).unwrap();
    assert_eq!(file.cells.len(), 1, "{text}");
    assert_eq!(file.cells[0].source, "slow()");
    assert!(
        !text.contains("\"queued\"") && !text.contains("\"running\""),
        "{text}"
    );
}

/// Another client's cell followed while it runs is running as the follower
/// says (since an unknown time: no elapsed time shown) until its recorded
/// call settles it.
#[test]
fn a_followed_running_cell_is_running_as_the_follower_says() {
    use crate::protocol::events::{OutputChunk, StreamName};
    use crate::tui::notebook::cell_view::Pending;

    let now = Instant::now();
    let mut app = app(PoolState::Ready);
    app.set_following(true);
    app.handle_event(
        SessionEvent::LiveOutput {
            own: false,
            chunk: OutputChunk {
                identifier: "sessionpad-0badc0de".into(),
                execution_id: "exec-1".into(),
                client: Some("agent/1".into()),
                stream: StreamName::Stdout,
                text: "working\n".into(),
            },
        },
        now,
    );
    assert_eq!(app.pending_of(0), Some(Pending::Running { since: None }));
    assert_eq!(app.notebook.book.cells[0].outcome, None);
    let rows = screen_rows(&mut app, now + Duration::from_secs(5));
    let at = rows.iter().position(|r| r.contains("working")).unwrap();
    assert_eq!(rows[at + 1], "  ⠋ running", "{rows:#?}");
}
