//! The life of a cell's execution requests, as a pure state machine: a run is
//! queued, then running, maybe interrupting, then done (and forgotten). The
//! table [`next`] says, for a run's state and an event, which state follows and
//! what must happen outside; [`Runs`] keeps every run that is not done, and is
//! where the app reads whether its own cells are queued or running
//! ([`RunState::pending`]; the cells themselves hold only what their execution
//! came to). No clock is read here: times come with the events.
//!
//! Stopping is honest about the service: its API has no interrupt, so a running
//! cell there can only be abandoned (the UI stops waiting, the worker drops the
//! request, the session may still be busy). On the embedded local pool the
//! kernel is interrupted for real; a second stop abandons the cell there too.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::session::RunId;
use crate::tui::notebook::cell_view::Pending;

/// Where a run is. A run that is done is no longer kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Sent to the worker, waiting for earlier runs.
    Queued,
    /// Executing since `since`.
    Running {
        /// When the worker began executing it.
        since: Instant,
    },
    /// Executing, and an interrupt was asked for.
    Interrupting {
        /// When the worker began executing it.
        since: Instant,
    },
}

/// Something that happens to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEvent {
    /// The worker began executing it, at this instant.
    Started(Instant),
    /// The user asked to stop it (`x`, or Ctrl+C on the running cell).
    Stop,
    /// The worker has its answer (or why there is none).
    Finished,
}

/// What a transition asks of the app besides the new state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEffect {
    /// Ask the local pool to interrupt the kernel.
    Interrupt,
    /// Tell the worker to drop the run; settle the cell as given up, saying why.
    Abandon(Abandoned),
    /// Settle the cell with the worker's answer.
    Settle,
}

/// Why a run was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abandoned {
    /// Stopped before it started: it never ran.
    BeforeStart,
    /// Running on a pool with no interrupt (the service).
    NoInterrupt,
    /// Stopped again while the kernel was being interrupted.
    InterruptIgnored,
}

impl Abandoned {
    /// The reason, as the cell's error output and the status line say it.
    pub fn reason(self) -> &'static str {
        match self {
            Self::BeforeStart => "stopped before it started, not run",
            Self::NoInterrupt => "the service has no interrupt, the session may still be busy",
            Self::InterruptIgnored => {
                "the kernel did not stop for the interrupt, the session may still be busy"
            }
        }
    }
}

/// The transition table: the state after `event` in state `state` (`None`: the
/// run is done) and what must happen. `can_interrupt`: the pool interrupts
/// kernels (the embedded local pool). An event that means nothing in a state
/// (a second start, say) leaves it as it is.
pub fn next(
    state: RunState,
    event: RunEvent,
    can_interrupt: bool,
) -> (Option<RunState>, Option<RunEffect>) {
    use RunEffect::{Abandon, Interrupt, Settle};
    use RunState::{Interrupting, Queued, Running};
    match (state, event) {
        (Queued, RunEvent::Started(since)) => (Some(Running { since }), None),
        (_, RunEvent::Finished) => (None, Some(Settle)),
        (Queued, RunEvent::Stop) => (None, Some(Abandon(Abandoned::BeforeStart))),
        (Running { since }, RunEvent::Stop) if can_interrupt => {
            (Some(Interrupting { since }), Some(Interrupt))
        }
        (Running { .. }, RunEvent::Stop) => (None, Some(Abandon(Abandoned::NoInterrupt))),
        (Interrupting { .. }, RunEvent::Stop) => (None, Some(Abandon(Abandoned::InterruptIgnored))),
        (Running { .. } | Interrupting { .. }, RunEvent::Started(_)) => (Some(state), None),
    }
}

impl RunState {
    /// Where a cell whose run is in this state is, as the views draw it.
    pub fn pending(self) -> Pending {
        match self {
            Self::Queued => Pending::Queued,
            Self::Running { since } | Self::Interrupting { since } => {
                Pending::Running { since: Some(since) }
            }
        }
    }

    /// When it began executing, if it has.
    pub fn since(self) -> Option<Instant> {
        match self {
            Self::Queued => None,
            Self::Running { since } | Self::Interrupting { since } => Some(since),
        }
    }
}

/// One run that is not done: the cell it answers and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// The cell's index in the notebook.
    pub cell: usize,
    /// Where it is.
    pub state: RunState,
}

/// What [`Runs::apply`] did: the run's cell, its new state (`None`: done, and
/// forgotten) and what must happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The cell's index in the notebook.
    pub cell: usize,
    /// The state after the event.
    pub state: Option<RunState>,
    /// What the app must do.
    pub effect: Option<RunEffect>,
}

/// Every run that is not done, by id (ids grow, so the map is in queue order).
#[derive(Debug, Default)]
pub struct Runs {
    runs: BTreeMap<RunId, Run>,
    next_id: u64,
}

impl Runs {
    /// A new queued run for cell `cell`.
    pub fn queue(&mut self, cell: usize) -> RunId {
        self.next_id += 1;
        let id = RunId(self.next_id);
        self.runs.insert(
            id,
            Run {
                cell,
                state: RunState::Queued,
            },
        );
        id
    }

    /// Applies `event` to run `id`; `None` for a run that is not known (done
    /// already, or never sent by this app: a stale reply).
    pub fn apply(&mut self, id: RunId, event: RunEvent, can_interrupt: bool) -> Option<Step> {
        let run = self.runs.get_mut(&id)?;
        let cell = run.cell;
        let (state, effect) = next(run.state, event, can_interrupt);
        match state {
            Some(s) => run.state = s,
            None => {
                self.runs.remove(&id);
            }
        }
        Some(Step {
            cell,
            state,
            effect,
        })
    }

    /// Forgets every run (the session changed).
    pub fn clear(&mut self) {
        self.runs.clear();
    }

    /// How many runs are not done.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// True when no run is pending.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The executing run: its id, cell and since when.
    pub fn running(&self) -> Option<(RunId, usize, Instant)> {
        self.runs
            .iter()
            .find_map(|(id, r)| r.state.since().map(|since| (*id, r.cell, since)))
    }

    /// Every run that is not done, in queue order.
    pub fn iter(&self) -> impl Iterator<Item = Run> + '_ {
        self.runs.values().copied()
    }

    /// The run of cell `cell`, if it is pending.
    pub fn of_cell(&self, cell: usize) -> Option<RunId> {
        self.runs
            .iter()
            .find_map(|(id, r)| (r.cell == cell).then_some(*id))
    }

    /// The state of run `id`, if it is pending.
    pub fn state(&self, id: RunId) -> Option<RunState> {
        self.runs.get(&id).map(|r| r.state)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use RunEffect::{Abandon, Interrupt, Settle};
    use RunState::{Interrupting, Queued, Running};

    #[test]
    fn the_transition_table() {
        let t = Instant::now();
        let later = t + Duration::from_secs(1);
        let run = Running { since: t };
        let int = Interrupting { since: t };
        // (state, event, can interrupt) -> (state, effect)
        let table = [
            (Queued, RunEvent::Started(t), true, Some(run), None),
            (Queued, RunEvent::Finished, true, None, Some(Settle)),
            (
                Queued,
                RunEvent::Stop,
                true,
                None,
                Some(Abandon(Abandoned::BeforeStart)),
            ),
            (run, RunEvent::Stop, true, Some(int), Some(Interrupt)),
            (
                run,
                RunEvent::Stop,
                false,
                None,
                Some(Abandon(Abandoned::NoInterrupt)),
            ),
            (run, RunEvent::Finished, false, None, Some(Settle)),
            (run, RunEvent::Started(later), true, Some(run), None),
            (
                int,
                RunEvent::Stop,
                true,
                None,
                Some(Abandon(Abandoned::InterruptIgnored)),
            ),
            (int, RunEvent::Finished, true, None, Some(Settle)),
            (int, RunEvent::Started(later), true, Some(int), None),
        ];
        for (state, event, can, want_state, want_effect) in table {
            assert_eq!(
                next(state, event, can),
                (want_state, want_effect),
                "{state:?} + {event:?} (interrupt: {can})"
            );
        }
    }

    #[test]
    fn runs_keep_what_is_pending_and_forget_what_is_done() {
        let t = Instant::now();
        let mut runs = Runs::default();
        let a = runs.queue(0);
        let b = runs.queue(1);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs.running(), None);
        runs.apply(a, RunEvent::Started(t), true);
        assert_eq!(runs.running(), Some((a, 0, t)));
        assert_eq!(runs.of_cell(1), Some(b));
        let step = runs.apply(a, RunEvent::Finished, true).expect("known");
        assert_eq!(step.cell, 0);
        assert_eq!(step.effect, Some(Settle));
        assert_eq!(runs.apply(a, RunEvent::Finished, true), None, "stale");
        assert_eq!(runs.state(b), Some(Queued));
        assert_eq!(Queued.pending(), Pending::Queued);
        assert_eq!(
            Interrupting { since: t }.pending(),
            Pending::Running { since: Some(t) }
        );
    }
}
