//! The UI loop: the one task that owns the terminal. It waits on three things at
//! once: terminal input (crossterm's `EventStream`), news from the session worker,
//! and a deadline that is armed only when something needs it (a pending frame
//! under the frame cap, the 100 ms tick while a cell runs or the pool starts, the
//! end of the Ctrl+C window). It applies everything queued before drawing once,
//! and draws only when the state changed.

use std::task::Poll;
use std::time::{Duration, Instant};

use crossterm::event::EventStream;
use futures::StreamExt;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::sleep_until;

use super::action::Effect;
use super::app::App;
use super::event::AppEvent;
use super::keymap::action_for_event;
use super::terminal::{self, Tui};
use super::ui;
use super::worker::SessionWorker;

/// The shortest time between two frames (about 60 per second).
const FRAME: Duration = Duration::from_millis(16);
/// Events of one source applied before a draw, so a burst from one cannot starve
/// the other.
const DRAIN_LIMIT: usize = 256;

/// Runs until the user quits (or the process is told to terminate).
///
/// # Errors
///
/// The terminal failed (input or drawing), or a task panicked.
pub async fn run_loop(
    terminal: &mut Tui,
    app: &mut App,
    events: &mut UnboundedReceiver<AppEvent>,
    worker: &SessionWorker,
) -> anyhow::Result<()> {
    let mut input = EventStream::new();
    let mut last_draw: Option<Instant> = None;
    let terminated = termination();
    tokio::pin!(terminated);
    loop {
        if terminal::panicked() {
            anyhow::bail!("a task panicked; see the log");
        }
        if app.dirty {
            let now = Instant::now();
            if last_draw.is_none_or(|t| now.duration_since(t) >= FRAME) {
                terminal.draw(|frame| ui::draw(frame, app, now))?;
                app.dirty = false;
                last_draw = Some(now);
            }
        }
        let now = Instant::now();
        let frame_due = (app.dirty).then(|| last_draw.map_or(now, |t| t + FRAME));
        let wake = [frame_due, app.next_wakeup(now)]
            .into_iter()
            .flatten()
            .min();
        tokio::select! {
            maybe = input.next() => match maybe {
                Some(Ok(event)) => apply_input(app, worker, event),
                Some(Err(e)) => return Err(e.into()),
                None => anyhow::bail!("the terminal input ended"),
            },
            Some(event) = events.recv() => app.handle_event(event, Instant::now()),
            () = sleep_until(wake.unwrap_or(now).into()), if wake.is_some() => {}
            // SIGTERM or SIGHUP (the terminal closed): leave the normal way, so the
            // embedded pool still stops its kernels.
            () = &mut terminated => return Ok(()),
        }
        drain(app, worker, &mut input, events).await?;
        app.tick(Instant::now());
        if app.should_quit {
            return Ok(());
        }
    }
}

/// Resolves when the process is asked to terminate (SIGTERM) or its terminal hangs
/// up (SIGHUP); never where those signals do not exist or cannot be watched.
async fn termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            tokio::select! {
                _ = term.recv() => return,
                _ = hup.recv() => return,
            }
        }
    }
    std::future::pending::<()>().await;
}

/// Applies whatever else is already waiting, a bounded number from each source.
///
/// Input is polled with this task's own waker (not `now_or_never`, whose no-op
/// waker crossterm would keep, so that later input would not wake the loop).
async fn drain(
    app: &mut App,
    worker: &SessionWorker,
    input: &mut EventStream,
    events: &mut UnboundedReceiver<AppEvent>,
) -> anyhow::Result<()> {
    for _ in 0..DRAIN_LIMIT {
        let ready = std::future::poll_fn(|cx| Poll::Ready(input.poll_next_unpin(cx))).await;
        match ready {
            Poll::Ready(Some(Ok(event))) => apply_input(app, worker, event),
            Poll::Ready(Some(Err(e))) => return Err(e.into()),
            Poll::Ready(None) | Poll::Pending => break,
        }
        if app.should_quit {
            return Ok(());
        }
    }
    for _ in 0..DRAIN_LIMIT {
        match events.try_recv() {
            Ok(event) => app.handle_event(event, Instant::now()),
            Err(_) => break,
        }
    }
    Ok(())
}

fn apply_input(app: &mut App, worker: &SessionWorker, event: crossterm::event::Event) {
    let Some(action) = action_for_event(event, app.editor_context()) else {
        return;
    };
    for effect in app.update(action, Instant::now()) {
        match effect {
            Effect::Execute { run, code } => worker.execute(run, code),
        }
    }
}
