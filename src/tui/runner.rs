//! The UI loop: the one task that owns the terminal. It waits on three things at
//! once: terminal input (crossterm's `EventStream`), news from the session worker,
//! and a deadline that is armed only when something needs it (a pending frame
//! under the frame cap, the 100 ms tick while a cell runs or the pool starts, the
//! end of the Ctrl+C window). It applies everything queued before drawing once,
//! and draws only when the state changed (or a long output is still being read,
//! a slice per frame). Idle, it sleeps: no timer is armed and nothing is drawn.
//!
//! The loop is generic over where it draws (`Screen`) and where input comes
//! from, so tests can run it on a `TestBackend` with tokio's clock paused; its
//! clock is tokio's for the same reason.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::task::Poll;
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream};
use futures::{Stream, StreamExt};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::sleep_until;

use super::action::Effect;
use super::app::App;
use super::app::view as ui;
use super::event::{AppEvent, AppEventSender};
use super::external_editor;
use super::keymap::action_for_event;
use super::local;
use super::pools::PoolChoice;
use super::terminal::{self, Tui};
use crate::notebook::language::Language;
use crate::session::SessionWorker;

/// The shortest time between two frames (about 60 per second).
const FRAME: Duration = Duration::from_millis(16);
/// Events of one source applied before a draw, so a burst from one cannot starve
/// the other.
const DRAIN_LIMIT: usize = 256;

/// What the loop draws on: the terminal, or a test double.
pub(crate) trait Screen {
    /// Draws one frame of `app`.
    fn draw_frame(&mut self, app: &mut App, now: Instant) -> io::Result<()>;

    /// Hands the screen to `$EDITOR` to edit `source`, written in `language`
    /// (see `external_editor`).
    fn edit_externally(
        &mut self,
        source: &str,
        language: Language,
    ) -> impl Future<Output = io::Result<Result<String, String>>>;

    /// Asks the terminal to put `text` on the clipboard (OSC 52). Test screens
    /// have no clipboard.
    fn copy_to_clipboard(&mut self, text: &str) -> io::Result<()> {
        let _ = text;
        Ok(())
    }
}

impl Screen for Tui {
    fn draw_frame(&mut self, app: &mut App, now: Instant) -> io::Result<()> {
        self.draw(|frame| ui::draw(frame, app, now)).map(|_| ())
    }

    fn edit_externally(
        &mut self,
        source: &str,
        language: Language,
    ) -> impl Future<Output = io::Result<Result<String, String>>> {
        external_editor::edit(self, source, language)
    }

    fn copy_to_clipboard(&mut self, text: &str) -> io::Result<()> {
        terminal::copy_to_clipboard(self, text)
    }
}

/// The loop's clock: tokio's, so that tests with a paused clock control it.
fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// How a run of the loop ended.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopEnd {
    /// The user quit, or the process was told to terminate.
    Quit,
    /// The user chose another pool: the caller builds the app again for it.
    SwitchPool(Box<PoolChoice>),
}

/// Runs until the user quits (or the process is told to terminate) or
/// switches pools. `typed` are the keys the graphics probe reads while the
/// loop runs, handled as they come and before anything crossterm reads
/// (crossterm starts reading once it closes); `pending` are
/// effects of the run's start that only the loop can carry out, carried out
/// first.
///
/// # Errors
///
/// The terminal failed (input or drawing), or a task panicked.
pub async fn run_loop(
    terminal: &mut Tui,
    app: &mut App,
    events: &mut UnboundedReceiver<AppEvent>,
    worker: &SessionWorker,
    ui_events: &AppEventSender,
    typed: Option<UnboundedReceiver<Event>>,
    pending: Vec<Effect>,
) -> anyhow::Result<LoopEnd> {
    let mut offload = |effect| {
        if let Some(other) = offload_to(worker, ui_events, effect) {
            // The loop carries out the others itself (`drive`).
            tracing::error!(?other, "not an effect to carry out off the loop");
        }
    };
    let typed = std::cell::RefCell::new(typed);
    // The first input stream starts with the keys the graphics probe reads,
    // as they come, and reads the terminal itself once the probe is done
    // (the receiver closed): crossterm's reader must not start before. One
    // made again after `$EDITOR` had the terminal has none left to give.
    let input = || probed_then(typed.borrow_mut().take(), EventStream::new);
    drive(
        terminal,
        app,
        events,
        input,
        &mut offload,
        pending,
        terminal_gone(),
    )
    .await
}

/// An input stream: the keys of `probed` (the graphics probe's, as it reads
/// them) until it closes, then the stream `terminal` makes, made only then
/// (crossterm's reader must not read the terminal while the probe does).
fn probed_then<T>(
    mut probed: Option<UnboundedReceiver<Event>>,
    terminal: impl FnOnce() -> T + Unpin,
) -> impl Stream<Item = io::Result<Event>> + Unpin
where
    T: Stream<Item = io::Result<Event>> + Unpin,
{
    let keys = futures::stream::poll_fn(move |cx| match probed.as_mut() {
        Some(keys) => keys.poll_recv(cx).map(|key| key.map(Ok)),
        None => Poll::Ready(None),
    });
    keys.chain(futures::stream::once(futures::future::lazy(|_| terminal())).flatten())
}

/// Resolves when the terminal on standard input has gone away (its other side
/// was closed: `POLLHUP`, `POLLERR` or `POLLNVAL` on a poll, checked twice a
/// second); never when standard input is not a terminal. A terminal that goes
/// away without a SIGHUP (the notebook started with `setsid` or `nohup`, a
/// closed multiplexer pane) would otherwise leave the notebook running
/// forever: crossterm's reader keeps reading end-of-file and says nothing.
async fn terminal_gone() {
    // SAFETY: isatty only inspects descriptor 0.
    if unsafe { libc::isatty(0) } != 1 {
        return std::future::pending().await;
    }
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut fd = libc::pollfd {
            fd: 0,
            events: 0,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no wait.
        let ready = unsafe { libc::poll(&raw mut fd, 1, 0) };
        if ready > 0 && fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            tracing::info!("the terminal has gone away: quitting");
            return;
        }
    }
}

/// Carries out `effect` off the loop when it is the session worker's (sent to
/// it) or blocking work (spawned); gives it back when the loop itself must
/// carry it out (it owns the terminal: the external editor, the clipboard, a
/// pool switch). The one mapping of effects to the worker, for the loop and
/// for the effects of a run's start (`lifecycle`).
pub(crate) fn offload_to(
    worker: &SessionWorker,
    ui_events: &AppEventSender,
    effect: Effect,
) -> Option<Effect> {
    match effect {
        Effect::Execute {
            run,
            code,
            stdin,
            stop_on_error,
            output_streams_max_length,
        } => worker.execute(
            run,
            crate::session::Cell {
                source: code,
                stdin,
                stop_on_error,
                output_streams_max_length,
            },
        ),
        Effect::ReplayUploads {
            run,
            uploads,
            after,
        } => worker.uploads_around(run, uploads, after),
        Effect::Interrupt { run } => worker.interrupt(run),
        Effect::Abandon { run } => worker.abandon(run),
        Effect::Files(command) => worker.files(command),
        Effect::Sessions(command) => worker.sessions(command),
        Effect::SwitchSession { identifier } => worker.switch(identifier),
        Effect::BuildPreview(job) => build_preview(job, ui_events.clone()),
        other => return Some(other),
    }
    None
}

/// Builds a file's preview on a blocking thread and hands it back as
/// [`AppEvent::PreviewBuilt`].
fn build_preview(job: super::files::preview::PreviewJob, ui_events: AppEventSender) {
    tokio::spawn(async move {
        let generation = job.generation;
        let built = tokio::task::spawn_blocking(move || job.build()).await;
        ui_events.preview_built(
            generation,
            built
                .map(Box::new)
                .map_err(|e| format!("preview failed: {e}")),
        );
    });
}

/// The loop itself: `input` makes the input stream (again after an external
/// editor had the terminal), `offload` carries out the effects that run off
/// the loop (the session worker's, and blocking work such as previews),
/// `gone` resolves when the terminal has gone away (the loop then quits).
/// Every effect the reducers return goes through one queue and one `match`
/// here, in the order they were returned.
pub(crate) async fn drive<S, I>(
    screen: &mut S,
    app: &mut App,
    events: &mut UnboundedReceiver<AppEvent>,
    input: impl Fn() -> I,
    offload: &mut impl FnMut(Effect),
    pending: Vec<Effect>,
    gone: impl Future<Output = ()>,
) -> anyhow::Result<LoopEnd>
where
    S: Screen,
    I: Stream<Item = io::Result<Event>> + Unpin,
{
    let new_input = input;
    let mut input = new_input();
    let mut last_draw: Option<Instant> = None;
    // A keystroke's frame and a cell's answer are drawn at once; the frame cap
    // paces the other redraws (output arriving, spinners).
    let mut key_pending = false;
    let terminated = termination();
    tokio::pin!(terminated);
    tokio::pin!(gone);
    let mut effects: VecDeque<Effect> = pending.into();
    loop {
        while let Some(effect) = effects.pop_front() {
            match effect {
                Effect::Execute { .. }
                | Effect::ReplayUploads { .. }
                | Effect::Interrupt { .. }
                | Effect::Abandon { .. }
                | Effect::Files(_)
                | Effect::Sessions(_)
                | Effect::SwitchSession { .. }
                | Effect::BuildPreview(_) => offload(effect),
                Effect::EditExternally { source, language } => {
                    // The editor reads the keys while it runs: stop reading them here.
                    drop(input);
                    let outcome = screen.edit_externally(&source, language).await?;
                    input = new_input();
                    app.finish_external_edit(outcome);
                }
                // A switched session's notebook loads off this task (it is awaited).
                Effect::LoadNotebook(place) => {
                    let thread = super::persist::attach(app, place).await;
                    app.sessions.keep_saver(thread);
                    effects.extend(app.look_up_quit_cells());
                }
                Effect::Local(work) => {
                    let outcome = local::perform(screen, work).await;
                    app.finish_local_work(outcome);
                }
                // The caller builds the app again for the chosen pool.
                Effect::SwitchPool(choice) => return Ok(LoopEnd::SwitchPool(Box::new(choice))),
            }
        }
        if app.should_quit {
            return Ok(LoopEnd::Quit);
        }
        if terminal::panicked() {
            anyhow::bail!("a task panicked; see the log");
        }
        if app.dirty {
            let now = now();
            if key_pending || last_draw.is_none_or(|t| now.duration_since(t) >= FRAME) {
                key_pending = false;
                screen.draw_frame(app, now)?;
                // Images the frame lacked are encoded off this task.
                app.views.images.dispatch();
                // A long output read in part asks for the next frame itself.
                app.dirty = app.views.pending_work();
                last_draw = Some(now);
            }
        }
        let now = now();
        let frame_due = (app.dirty).then(|| last_draw.map_or(now, |t| t + FRAME));
        let wake = [frame_due, app.next_wakeup(now)]
            .into_iter()
            .flatten()
            .min();
        tokio::select! {
            maybe = input.next() => match maybe {
                Some(Ok(event)) => {
                    effects.extend(apply_input(app, event));
                    key_pending = true;
                }
                Some(Err(e)) => return Err(e.into()),
                None => anyhow::bail!("the terminal input ended"),
            },
            Some(event) = events.recv() => key_pending |= apply_event(app, &mut effects, event),
            () = sleep_until(wake.unwrap_or(now).into()), if wake.is_some() => {}
            // SIGTERM or SIGHUP (the terminal closed): leave the normal way, so the
            // embedded pool still stops its kernels.
            () = &mut terminated => return Ok(LoopEnd::Quit),
            // The terminal went away without a signal: the same.
            () = &mut gone => return Ok(LoopEnd::Quit),
        }
        key_pending |= drain(app, &mut effects, &mut input, events).await?;
        effects.extend(app.tick(self::now()));
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

/// Whether `event` is a cell's answer, whose frame is drawn at once (issue 27:
/// launch to `1+1` showing 2), not at the next frame's time.
fn answers_a_cell(event: &AppEvent) -> bool {
    matches!(
        event,
        AppEvent::Session(crate::session::SessionEvent::ExecutionFinished { .. })
    )
}

/// Applies one event of the session or of blocking work, queueing its
/// effects; true when it is a cell's answer (drawn at once).
fn apply_event(app: &mut App, effects: &mut VecDeque<Effect>, event: AppEvent) -> bool {
    let urgent = answers_a_cell(&event);
    effects.extend(app.handle_event(event, now()));
    urgent
}

/// Applies whatever else is already waiting, a bounded number from each source,
/// queueing the effects that follow. True when a key or a cell's answer was
/// among them (its frame is then drawn at once).
///
/// Input is polled with this task's own waker (not `now_or_never`, whose no-op
/// waker crossterm would keep, so that later input would not wake the loop).
async fn drain(
    app: &mut App,
    effects: &mut VecDeque<Effect>,
    input: &mut (impl Stream<Item = io::Result<Event>> + Unpin),
    events: &mut UnboundedReceiver<AppEvent>,
) -> anyhow::Result<bool> {
    let mut urgent = false;
    for _ in 0..DRAIN_LIMIT {
        let ready = std::future::poll_fn(|cx| Poll::Ready(input.poll_next_unpin(cx))).await;
        match ready {
            Poll::Ready(Some(Ok(event))) => {
                effects.extend(apply_input(app, event));
                urgent = true;
            }
            Poll::Ready(Some(Err(e))) => return Err(e.into()),
            Poll::Ready(None) | Poll::Pending => break,
        }
        if app.should_quit {
            return Ok(urgent);
        }
    }
    for _ in 0..DRAIN_LIMIT {
        match events.try_recv() {
            Ok(event) => urgent |= apply_event(app, effects, event),
            Err(_) => break,
        }
    }
    Ok(urgent)
}

/// The effects of one terminal event (none when no key binding takes it).
fn apply_input(app: &mut App, event: Event) -> Vec<Effect> {
    // The completion list, while open over the editor, takes its keys first.
    if let Event::Key(key) = event
        && key.kind != crossterm::event::KeyEventKind::Release
        && let Some(effects) = app.completion_key(key)
    {
        return effects;
    }
    match action_for_event(&app.keymap, event, app.key_context()) {
        Some(action) => app.update(action, now()),
        None => Vec::new(),
    }
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;
