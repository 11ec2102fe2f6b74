//! Session output is untrusted: escape sequences in it must never reach the
//! terminal. A cell whose stdout, stderr, result, traceback and even source carry
//! OSC 52 (set the clipboard), OSC 8 (a hyperlink), a title change, DCS, C1
//! controls, a screen clear and cursor moves is drawn through the real
//! crossterm backend into a byte buffer, in the notebook, the pager and the
//! history search; none of those sequences may be among the bytes written.
//!
//! The screen is 40x8, so that the backend itself never writes `ESC [10;10H`
//! (it moves the cursor only within the screen) and never clears it: any such
//! bytes could only have come from the session. The one OSC 52 the app ever
//! writes is its own copy (`y`), which this test does not do.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;
use std::time::{Duration, Instant};

use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use ratatui_textarea::{Input, Key};
use sessionpad::protocol::{ApiVersion, Execution, ExecutionStatus};
use sessionpad::session::SessionEvent;
use sessionpad::tui::action::{Action, Effect};
use sessionpad::tui::app::view::draw;
use sessionpad::tui::app::{App, AppConfig, PoolState};
use sessionpad::tui::notebook::NotebookAction;

const OSC52: &str = "\x1b]52;c;aGk=\x07";
const OSC8: &str = "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\";
const CLEAR: &str = "\x1b[2J";
const MOVE: &str = "\x1b[10;10H";
const TITLE: &str = "\x1b]0;pwned\x07";
const DCS: &str = "\x1bP+q544e\x1b\\";
const C1_OSC: &str = "\u{9d}52;c;aGk=\u{9c}";

/// Byte sequences that must not be written, with what they are.
const FORBIDDEN: [(&[u8], &str); 7] = [
    (b"\x1b]52", "OSC 52 (clipboard)"),
    (b"\x1b]8;", "OSC 8 (hyperlink)"),
    (b"\x1b]", "any OSC (title, colours…)"),
    (b"\x1b[2J", "clear screen"),
    (b"\x1b[10;10H", "cursor move to 10;10"),
    (b"\x1bP", "DCS"),
    ("\u{9d}".as_bytes(), "C1 OSC"),
];

fn hostile(tag: &str) -> String {
    format!("{tag}{OSC52}{OSC8}{CLEAR}{MOVE}{TITLE}{DCS}{C1_OSC}!\n")
}

/// What the backend writes, kept where the test can take it.
#[derive(Clone, Default)]
struct Bytes(Rc<RefCell<Vec<u8>>>);

impl Write for Bytes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

type VecTerminal = Terminal<CrosstermBackend<Bytes>>;

fn terminal(bytes: &Bytes) -> VecTerminal {
    let options = TerminalOptions {
        viewport: Viewport::Fixed(Rect::new(0, 0, 40, 8)),
    };
    Terminal::with_options(CrosstermBackend::new(bytes.clone()), options).expect("terminal")
}

/// Draws one frame and returns the bytes it wrote.
fn frame(terminal: &mut VecTerminal, bytes: &Bytes, app: &mut App) -> Vec<u8> {
    terminal
        .draw(|f| draw(f, app, Instant::now()))
        .expect("draw");
    std::mem::take(&mut *bytes.0.borrow_mut())
}

fn assert_clean(bytes: &[u8], screen: &str) {
    for (seq, what) in FORBIDDEN {
        assert!(
            !bytes.windows(seq.len()).any(|w| w == seq),
            "{what} reached the terminal ({screen}): {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
}

fn app_with_a_hostile_cell() -> App {
    let mut app = App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-hostile0".into(),
            api_version: ApiVersion::V2025_10_02,
            language: sessionpad::notebook::language::Language::Python,
        },
        PoolState::Ready,
    );
    let now = Instant::now();
    app.update(Action::Paste(format!("x = 1 # {}", hostile("src"))), now);
    let run = match app
        .update(Action::Notebook(NotebookAction::RunCell), now)
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    };
    app.handle_event(SessionEvent::ExecutionStarted(run), now);
    let traceback = format!(
        "Traceback (most recent call last):\n  File \"<stdin>\", line 1\n{}ValueError: {}",
        hostile("tb"),
        hostile("ev")
    );
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run,
            outcome: Ok(Execution {
                execution_count: None,
                id: None,
                status: ExecutionStatus::Failed,
                stdout: hostile("out"),
                stderr: traceback,
                result: Some(sessionpad::protocol::ExecutionValue::text(hostile("res"))),
                images: vec![],
                duration: Duration::from_millis(3),
                network: Vec::new(),
            }),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    app
}

#[test]
fn escape_sequences_in_session_output_never_reach_the_terminal() {
    let mut app = app_with_a_hostile_cell();
    let bytes = Bytes::default();
    let mut terminal = terminal(&bytes);
    let mut written = Vec::new();
    // The notebook, from its bottom up to its top, a line at a time.
    written.extend(frame(&mut terminal, &bytes, &mut app));
    for _ in 0..30 {
        app.update(Action::ScrollLines(-1), Instant::now());
        written.extend(frame(&mut terminal, &bytes, &mut app));
    }
    assert_clean(&written, "notebook");
    let text = String::from_utf8_lossy(&written);
    assert!(
        text.contains("link"),
        "the text of the hyperlink is kept: {text:?}"
    );

    // The pager on the output.
    app.update(
        Action::Pager(sessionpad::tui::pager::PagerAction::Open),
        Instant::now(),
    );
    let pager = frame(&mut terminal, &bytes, &mut app);
    assert_clean(&pager, "pager");
    app.update(
        Action::Pager(sessionpad::tui::pager::PagerAction::Close),
        Instant::now(),
    );

    // The history search lists the hostile source.
    app.update(
        Action::Notebook(NotebookAction::HistorySearch),
        Instant::now(),
    );
    let history = frame(&mut terminal, &bytes, &mut app);
    assert_clean(&history, "history search");
    app.update(
        Action::Edit(Input {
            key: Key::Enter,
            ..Input::default()
        }),
        Instant::now(),
    );
    // …and the editor, where it is loaded for editing.
    let editor = frame(&mut terminal, &bytes, &mut app);
    assert_clean(&editor, "editor");
}
