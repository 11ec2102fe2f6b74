//! The session worker's queue of runs: runs waiting their turn, in the order
//! they were asked for, and runs given up before they started (skipped).

use std::collections::{HashMap, HashSet, VecDeque};

use super::event::RunId;
use super::worker::{Cell, Command};

/// Runs waiting their turn, and runs given up before they started.
#[derive(Default)]
pub(super) struct Queue {
    waiting: VecDeque<(RunId, Cell)>,
    abandoned: HashSet<RunId>,
    /// Recorded uploads to redo before a run (a replay's), by run.
    uploads: HashMap<RunId, Vec<super::replay::RecordedUpload>>,
    /// Recorded uploads to redo after a run (a replay's last cell's).
    after: HashMap<RunId, Vec<super::replay::RecordedUpload>>,
}

impl Queue {
    /// Takes a command that arrived while no run (or another run) executes.
    pub(super) fn accept(&mut self, command: Command) {
        match command {
            Command::Execute { run, cell } => self.waiting.push_back((run, cell)),
            // Not running: an interrupt can only mean "do not run it" (or comes
            // after the run ended, when it changes nothing).
            Command::Interrupt { run } | Command::Abandon { run } => {
                self.abandoned.insert(run);
            }
            Command::Uploads { run, before, after } => {
                self.uploads.entry(run).or_default().extend(before);
                self.after.entry(run).or_default().extend(after);
            }
        }
    }

    /// The recorded uploads to redo before `run` (none for most runs).
    pub(super) fn take_uploads(&mut self, run: RunId) -> Vec<super::replay::RecordedUpload> {
        self.uploads.remove(&run).unwrap_or_default()
    }

    /// The recorded uploads to redo after `run` (none for most runs).
    pub(super) fn take_uploads_after(&mut self, run: RunId) -> Vec<super::replay::RecordedUpload> {
        self.after.remove(&run).unwrap_or_default()
    }

    /// Takes every waiting run off the queue (an earlier run failed and
    /// stops on error) and returns those not abandoned, in order; their
    /// uploads are dropped with them.
    pub(super) fn skip_waiting(&mut self) -> Vec<RunId> {
        let mut skipped = Vec::new();
        while let Some((run, _)) = self.waiting.pop_front() {
            self.uploads.remove(&run);
            self.after.remove(&run);
            if !self.abandoned.remove(&run) {
                skipped.push(run);
            }
        }
        self.abandoned.clear();
        skipped
    }

    /// The next run to execute, skipping abandoned ones.
    pub(super) fn next(&mut self) -> Option<(RunId, Cell)> {
        while let Some((run, cell)) = self.waiting.pop_front() {
            // Runs execute in the order of their ids: older marks are moot.
            let abandoned = self.abandoned.remove(&run);
            self.abandoned.retain(|r| *r > run);
            if abandoned {
                self.uploads.remove(&run);
                self.after.remove(&run);
            } else {
                return Some((run, cell));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abandoned_runs_are_skipped_and_forgotten() {
        let mut queue = Queue::default();
        let execute = |n: u64| Command::Execute {
            run: RunId(n),
            cell: Cell::from(format!("{n}").as_str()),
        };
        queue.accept(execute(1));
        queue.accept(execute(2));
        queue.accept(execute(3));
        queue.accept(Command::Abandon { run: RunId(2) });
        // An interrupt of a run that is not running means "do not run it".
        queue.accept(Command::Interrupt { run: RunId(3) });
        assert_eq!(queue.next().map(|(r, _)| r), Some(RunId(1)));
        assert_eq!(queue.next(), None);
        assert!(
            queue.abandoned.is_empty(),
            "marks of skipped runs are dropped"
        );
    }

    #[test]
    fn skipping_the_queue_names_the_runs_not_abandoned() {
        let mut queue = Queue::default();
        for n in 1..=3 {
            queue.accept(Command::Execute {
                run: RunId(n),
                cell: Cell::from("x"),
            });
        }
        queue.accept(Command::Abandon { run: RunId(2) });
        assert_eq!(queue.skip_waiting(), vec![RunId(1), RunId(3)]);
        assert_eq!(queue.next(), None);
        assert!(queue.abandoned.is_empty());
    }
}
