//! The loop's redraw policy, on a `TestBackend` with tokio's clock paused: idle,
//! it draws nothing; news draws one frame; a running cell ticks its spinner; a
//! long output is read a slice per frame and then the loop is idle again.

use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc::UnboundedSender;

use super::*;
use crate::protocol::{ApiVersion, Execution, ExecutionStatus};
use crate::session::SessionEvent;
use crate::tui::action::Action;
use crate::tui::app::{AppConfig, PoolState};
use crate::tui::notebook::NotebookAction;

/// A screen that counts its frames (and notes when each was drawn).
struct Counting {
    terminal: Terminal<TestBackend>,
    frames: usize,
    drawn_at: Vec<Instant>,
}

impl Screen for Counting {
    fn draw_frame(&mut self, app: &mut App, now: Instant) -> io::Result<()> {
        self.frames += 1;
        self.drawn_at.push(now);
        match self.terminal.draw(|f| ui::draw(f, app, now)) {
            Ok(_) => Ok(()),
            Err(never) => match never {},
        }
    }

    async fn edit_externally(
        &mut self,
        source: &str,
        _language: crate::notebook::language::Language,
    ) -> io::Result<Result<String, String>> {
        Ok(Ok(source.to_string()))
    }
}

fn counting() -> Counting {
    match Terminal::new(TestBackend::new(80, 24)) {
        Ok(terminal) => Counting {
            terminal,
            frames: 0,
            drawn_at: Vec::new(),
        },
        Err(e) => panic!("{e}"),
    }
}

fn app(pool: PoolState) -> App {
    App::new(
        AppConfig {
            pool_label: "local".into(),
            identifier: "sessionpad-test0001".into(),
            api_version: ApiVersion::V2025_10_02,
            language: crate::notebook::language::Language::Python,
        },
        pool,
    )
}

/// Runs the loop for `duration` of (paused) time with no input at all.
async fn run_for(
    screen: &mut Counting,
    app: &mut App,
    events: &mut UnboundedReceiver<AppEvent>,
    effects: &mut Vec<Effect>,
    duration: Duration,
) {
    let mut execute = |e| effects.push(e);
    let input = || futures::stream::pending::<io::Result<Event>>();
    let run = drive(
        screen,
        app,
        events,
        input,
        &mut execute,
        Vec::new(),
        std::future::pending(),
    );
    let outcome = tokio::time::timeout(duration, run).await;
    assert!(outcome.is_err(), "the loop ended: {outcome:?}");
}

fn channel() -> (UnboundedSender<AppEvent>, UnboundedReceiver<AppEvent>) {
    tokio::sync::mpsc::unbounded_channel()
}

#[tokio::test(start_paused = true)]
async fn idle_draws_the_first_frame_and_then_nothing() {
    let mut screen = counting();
    let mut app = app(PoolState::Ready);
    let (_tx, mut rx) = channel();
    let mut effects = Vec::new();
    run_for(
        &mut screen,
        &mut app,
        &mut rx,
        &mut effects,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(screen.frames, 1);
    assert!(!app.dirty);
    assert!(app.next_wakeup(now()).is_none(), "no timer is armed");
}

#[tokio::test(start_paused = true)]
async fn news_draws_one_frame() {
    let mut screen = counting();
    let mut app = app(PoolState::Ready);
    let (tx, mut rx) = channel();
    let mut effects = Vec::new();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let _ = tx.send(AppEvent::Session(SessionEvent::PoolProgress(
            "hello".into(),
        )));
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    run_for(
        &mut screen,
        &mut app,
        &mut rx,
        &mut effects,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(screen.frames, 2);
}

#[tokio::test(start_paused = true)]
async fn a_running_cell_ticks_about_ten_times_a_second() {
    let mut screen = counting();
    let mut app = app(PoolState::Ready);
    let (_tx, mut rx) = channel();
    let mut effects = Vec::new();
    app.update(Action::Paste("import time; time.sleep(60)".into()), now());
    app.update(Action::Notebook(NotebookAction::RunCell), now());
    run_for(
        &mut screen,
        &mut app,
        &mut rx,
        &mut effects,
        Duration::from_secs(1),
    )
    .await;
    assert!((9..=12).contains(&screen.frames), "{}", screen.frames);
}

#[tokio::test(start_paused = true)]
async fn a_long_output_is_read_over_frames_and_then_the_loop_idles() {
    let mut screen = counting();
    let mut app = app(PoolState::Ready);
    let (tx, mut rx) = channel();
    let mut effects = Vec::new();
    app.update(Action::Paste("print(big)".into()), now());
    let run = match app
        .update(Action::Notebook(NotebookAction::RunCell), now())
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    };
    let _ = tx.send(AppEvent::Session(SessionEvent::ExecutionFinished {
        run,
        outcome: Ok(Execution {
            execution_count: None,
            id: None,
            status: ExecutionStatus::Succeeded,
            stdout: "0123456789\n".repeat(400_000),
            stderr: String::new(),
            result: None,
            images: vec![],
            duration: Duration::from_millis(5),
            network: Vec::new(),
        }),
        exit_code: None,
        images: vec![],
    }));
    run_for(
        &mut screen,
        &mut app,
        &mut rx,
        &mut effects,
        Duration::from_secs(2),
    )
    .await;
    let after_reading = screen.frames;
    // 4.4 MB at a slice per frame: several frames, then nothing.
    assert!(after_reading > 5, "{after_reading}");
    assert!(!app.views.pending_work());
    run_for(
        &mut screen,
        &mut app,
        &mut rx,
        &mut effects,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(screen.frames, after_reading);
}

/// The keys the graphics probe reads reach the loop as they come, while the
/// probe still runs (issue 27: the loop waited for the probe's end, 150 ms
/// inside tmux, before its first key); the terminal's own reader is made
/// only once the probe is done.
#[tokio::test]
async fn keys_read_by_the_probe_come_at_once_and_the_terminal_after_it() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use futures::StreamExt;
    let key = |c| Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let made = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = made.clone();
    let mut input = probed_then(Some(rx), move || {
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        futures::stream::iter(vec![Ok(key('z'))])
    });
    tx.send(key('1')).unwrap();
    let first = input.next().await.unwrap().unwrap();
    assert_eq!(
        first,
        key('1'),
        "a key the probe read, while it still reads"
    );
    assert!(!made.load(std::sync::atomic::Ordering::SeqCst));
    tx.send(key('+')).unwrap();
    assert_eq!(input.next().await.unwrap().unwrap(), key('+'));
    drop(tx);
    assert_eq!(input.next().await.unwrap().unwrap(), key('z'));
    assert!(made.load(std::sync::atomic::Ordering::SeqCst));
    assert!(input.next().await.is_none());
    // No probe (a later run's): the terminal at once.
    let mut input = probed_then(None, || futures::stream::iter(vec![Ok(key('q'))]));
    assert_eq!(input.next().await.unwrap().unwrap(), key('q'));
}

/// Issue 27 (launch to `1+1` showing 2): a cell's answer is drawn as soon as
/// it arrives, not at the next frame's time 16 ms after the last frame. The
/// clock is paused, so the times below are exact.
#[tokio::test(start_paused = true)]
async fn a_cells_answer_is_drawn_at_once() {
    let mut screen = counting();
    let mut app = app(PoolState::Ready);
    let (tx, mut rx) = channel();
    let mut effects = Vec::new();
    app.update(Action::Paste("1+1".into()), now());
    let run = match app
        .update(Action::Notebook(NotebookAction::RunCell), now())
        .as_slice()
    {
        [Effect::Execute { run, .. }] => *run,
        other => panic!("{other:?}"),
    };
    let start = now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let _ = tx.send(AppEvent::Session(SessionEvent::ExecutionFinished {
            run,
            outcome: Ok(Execution {
                execution_count: Some(1),
                id: None,
                status: ExecutionStatus::Succeeded,
                stdout: "2\n".into(),
                stderr: String::new(),
                result: None,
                images: vec![],
                duration: Duration::from_millis(4),
                network: Vec::new(),
            }),
            exit_code: None,
            images: vec![],
        }));
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    run_for(
        &mut screen,
        &mut app,
        &mut rx,
        &mut effects,
        Duration::from_millis(50),
    )
    .await;
    let at: Vec<Duration> = screen
        .drawn_at
        .iter()
        .map(|t| t.duration_since(start))
        .collect();
    // The running cell's frame at once, the answer's when it came.
    assert_eq!(
        at.get(..2),
        Some(&[Duration::ZERO, Duration::from_millis(5)][..]),
        "{at:?}"
    );
}
