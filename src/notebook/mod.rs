//! The notebook model: cells and their outputs, named after nbformat v4 so that
//! saving a notebook as `.ipynb` later is a plain mapping.
//!
//! It owns what a cell *is* (source, execution count, outputs, what its execution
//! came to, duration) and how an [`Execution`] of the session client becomes
//! outputs. Whether a cell is queued or running is not part of it: that is the
//! front end's live knowledge (the TUI derives it from its runs); a cell here is
//! settled or not yet. It knows nothing of
//! the terminal, HTTP or time-of-day: no ratatui, no crossterm, no clocks.
//! [`ipynb`] maps it to and from nbformat JSON; [`store`] keeps it on disk (the
//! only file I/O here, on a thread of its own).

pub mod ipynb;
mod ipynb_read;
mod ipynb_write;
pub mod language;
mod output;
pub mod recorded;
pub mod sessions_store;
pub mod store;

use std::time::Duration;

pub use output::{Output, SharedText, StreamName, outputs_from_execution};

use crate::protocol::{Execution, ExecutionStatus};
/// What a cell's execution came to, once it is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellOutcome {
    /// The code ran to the end.
    Succeeded,
    /// The code raised, timed out, or the pool could not be reached; or the
    /// cell was given up (stopped, abandoned), or saved before its answer came.
    Failed,
    /// The service cancelled the execution.
    Canceled,
    /// Never run: it was queued behind a cell that failed, and the queue
    /// stopped there, as Jupyter's does on an error. Its source is kept, to
    /// run again.
    NotRun,
    /// Not known here: the notebook was quit while the cell was queued or
    /// running ([`Cell::quit_while`] says which, and what identifies its
    /// execution). The pool may have run it to its end after the notebook
    /// was gone, and its flight recorder may hold what it came to.
    Unknown,
}

/// Where a cell was when the notebook was quit before its answer came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// Sent and waiting for earlier cells: it was never sent to the pool.
    Queued,
    /// Executing on the pool, which goes on without the notebook.
    Running,
}

/// What the notebook knew of a cell it was quit while waiting for (kept in
/// the cell's `metadata.sessionpad` of the `.ipynb`), so that reopening it can
/// say so and find what the cell came to in the flight recorder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuitWhile {
    /// Queued or running.
    pub was: Waiting,
    /// The session identifier the cell ran in.
    pub identifier: String,
    /// The flight recorder's key of the pool (`local/PythonLTS/127.0.0.1:8341`,
    /// an endpoint), when the notebook knew it.
    pub pool: Option<String>,
    /// The pool's execution id, when the notebook had heard it (a local
    /// pool's running output names it; the reply would have).
    pub execution_id: Option<String>,
    /// When the cell began executing (wall clock, UTC), when it had; as
    /// the notebook saw it, which may be a little after the pool did.
    pub started_at: Option<chrono::DateTime<chrono::Utc>>,
    /// When the notebook was quit (wall clock, UTC): a cell running then
    /// had reached the pool before.
    pub quit_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The ledger `seq` of the recorded call the cell's outputs were filled
    /// in from, once they were (the cell ended after the notebook was quit).
    pub recorded_seq: Option<i64>,
}

/// One code cell of the notebook.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The source exactly as the user ran it (Python, a shell command or
    /// JavaScript: the notebook's [`language::Language`]).
    pub source: String,
    /// The `In [n]` number: given when the cell is queued (one past the
    /// cell before's), then the kernel's own count once the pool told it
    /// ([`Execution::execution_count`]); 0 for a cell never run (`In [ ]`).
    pub execution_count: u32,
    /// What the execution produced, in display order.
    pub outputs: Vec<Output>,
    /// What its execution came to; `None` until it is settled (sent, and no
    /// answer yet). Whether an unsettled cell is queued or running is not kept
    /// here: the front end that sent it knows (the TUI's runs).
    pub outcome: Option<CellOutcome>,
    /// Execution time the service reported, once finished.
    pub duration: Option<Duration>,
    /// A shell command's exit code (Shell pools, `aca-api.md` §4.7), once
    /// finished; `None` for code cells.
    pub exit_code: Option<i32>,
    /// What the cell was given on standard input (Shell pools), if anything.
    pub stdin: Option<String>,
    /// The notebook was quit while the cell waited for its answer (its
    /// outcome is then [`CellOutcome::Unknown`] until the flight recorder's
    /// record of it fills it in); `None` for every other cell.
    pub quit_while: Option<Box<QuitWhile>>,
    /// The `outputStreamsMaxLength` the cell was run with (2025-10-02-preview,
    /// `aca-api.md` §13: the most characters of stdout and of stderr the answer
    /// carries), when it asked for one; `None`: the pool's default (the
    /// service's is 4,096).
    pub output_streams_max_length: Option<u32>,
    /// What its execution tried to reach through a local pool's egress proxy
    /// (issue 29, [`Execution::network`]), shown under the cell as
    /// `network: pypi.org:443 allowed · 169.254.169.254:80 blocked`; kept in
    /// the `.ipynb` (`metadata.sessionpad.network`).
    pub network: Vec<crate::protocol::egress::NetworkAttempt>,
}

/// What a cell was run with, which is what running it again sends: its
/// source and, for a shell command, its standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellInput {
    /// The source.
    pub source: String,
    /// A shell command's standard input.
    pub stdin: Option<String>,
}

/// A stream of a finished cell that the service probably cut
/// ([`Cell::probably_cut`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutStream {
    /// `stdout` or `stderr`.
    pub stream: &'static str,
    /// What to say under the cell
    /// ([`crate::protocol::service_limits::cut_note`]).
    pub note: String,
    /// The stream's length in characters, its pieces counted together.
    pub chars: usize,
}

/// The most `outputStreamsMaxLength` asks for (the 2025-10-02-preview spec's
/// field is an int32).
const MAX_OUTPUT_STREAMS_LENGTH: u64 = i32::MAX as u64;

/// The `outputStreamsMaxLength` to run a cell again with when `cut` (its
/// [`Cell::probably_cut`]) is not empty: ten times the longest cut stream's
/// length in characters (4,096 → 40,960), at most the field's int32 range;
/// `None` when nothing was cut.
#[must_use]
pub fn larger_output_streams_max_length(cut: &[CutStream]) -> Option<u32> {
    let longest = cut.iter().map(|c| c.chars).max()?;
    let larger = (longest.max(1) as u64).saturating_mul(10);
    u32::try_from(larger.min(MAX_OUTPUT_STREAMS_LENGTH)).ok()
}

impl Cell {
    /// The streams of this finished cell that the service probably cut: a
    /// shell command's of 4,093 to 4,096 bytes (Shell pools cut there), or
    /// one of exactly the `outputStreamsMaxLength` in force (the one the cell
    /// was run with, else the service's default of 4,096 characters for
    /// code). Empty while the cell has no outcome.
    #[must_use]
    pub fn probably_cut(&self) -> Vec<CutStream> {
        use crate::protocol::service_limits::{SHELL_STREAM_BYTES, cut_note};
        if self.outcome.is_none() {
            return Vec::new();
        }
        // Asked for a length, the service cuts there, by characters, Shell
        // pools too.
        let shell = self.exit_code.is_some() && self.output_streams_max_length.is_none();
        let cap = match self.output_streams_max_length {
            Some(n) => Some(u64::from(n)),
            None => (!shell).then_some(SHELL_STREAM_BYTES as u64),
        };
        [
            (StreamName::Stdout, "stdout"),
            (StreamName::Stderr, "stderr"),
        ]
        .into_iter()
        .filter_map(|(which, stream)| {
            let texts = || {
                self.outputs.iter().filter_map(move |o| match o {
                    Output::Stream { name, text } if *name == which => Some(text.as_str()),
                    _ => None,
                })
            };
            let bytes: usize = texts().map(str::len).sum();
            // A stream of `bytes` holds bytes/4 to bytes characters, so it can
            // be `cap` characters long only when `cap` ≤ bytes ≤ 4·cap; only
            // then (or in the Shell window) are they counted, not at every
            // draw of a long output. Elsewhere `bytes` stands in: it is as
            // far from the cap as the count would be.
            let near = |cap: u64| (cap..=cap.saturating_mul(4)).contains(&(bytes as u64));
            let chars = if cap.is_some_and(near) || (shell && bytes <= SHELL_STREAM_BYTES) {
                texts().map(|t| t.chars().count()).sum()
            } else {
                bytes
            };
            cut_note(stream, bytes, chars, shell, cap).map(|note| CutStream {
                stream,
                note,
                chars,
            })
        })
        .collect()
    }

    /// What the cell was run with.
    pub fn input(&self) -> CellInput {
        CellInput {
            source: self.source.clone(),
            stdin: self.stdin.clone(),
        }
    }

    /// Records a finished execution: its outputs, outcome and duration (its
    /// stdout and stderr in the order they were streamed, where the live
    /// stream says it: [`output::keep_live_order`]); with
    /// `exit_code` (a shell command's), its output streams as they are, with
    /// no traceback to find in them. The execution's output moves into the
    /// cell (megabytes of stdout are not copied).
    pub fn finish(&mut self, mut exec: Execution, exit_code: Option<i32>) {
        self.network = std::mem::take(&mut exec.network);
        // The kernel's own count, where the pool told it, is the cell's
        // `In [n]`: the one its tracebacks name (`Cell In[n]`).
        if let Some(count) = exec.execution_count {
            self.execution_count = count;
        }
        let (status, duration) = (exec.status, exec.duration);
        // The chunks streamed while it ran, in the kernel's order.
        let live: Vec<Output> = std::mem::take(&mut self.outputs)
            .into_iter()
            .filter(|o| matches!(o, Output::Stream { .. }))
            .collect();
        self.outputs = match exit_code {
            Some(_) => output::outputs_from_command(exec),
            None => outputs_from_execution(exec, self.execution_count),
        };
        output::keep_live_order(&mut self.outputs, live);
        self.exit_code = exit_code;
        self.outcome = Some(match status {
            ExecutionStatus::Succeeded => CellOutcome::Succeeded,
            ExecutionStatus::Canceled => CellOutcome::Canceled,
            // A synchronous execution should never come back running; treat it as a
            // failure rather than leave the cell unsettled forever.
            ExecutionStatus::Failed | ExecutionStatus::Running => CellOutcome::Failed,
        });
        self.duration = Some(duration);
    }

    /// Records that the execution could not be carried out at all (the pool was
    /// unreachable, refused the token, …): the cell keeps its source and shows the
    /// reason as an error output.
    pub fn fail(&mut self, reason: &str) {
        self.outputs = vec![Output::Error {
            ename: "SessionError".to_string(),
            evalue: reason.to_string(),
            traceback: Vec::new(),
        }];
        self.outcome = Some(CellOutcome::Failed);
        self.duration = None;
    }

    /// Records that the cell was never run: it was queued behind a cell
    /// that failed ([`CellOutcome::NotRun`]); it has no outputs.
    pub fn not_run(&mut self) {
        // Numbered like Jupyter's aborted cells: `In [ ]`.
        self.execution_count = 0;
        self.outputs.clear();
        self.outcome = Some(CellOutcome::NotRun);
        self.duration = None;
    }

    /// Records that the notebook was quit while the cell waited (`quit`
    /// says how): what it came to is [`CellOutcome::Unknown`]; the outputs
    /// streamed so far stay.
    pub fn quit_waiting(&mut self, quit: QuitWhile) {
        self.outcome = Some(CellOutcome::Unknown);
        self.quit_while = Some(Box::new(quit));
    }

    /// The cell waits for what the flight recorder holds of it: the notebook
    /// was quit while it ran, and no record has filled it in yet.
    pub fn awaits_record(&self) -> bool {
        self.outcome == Some(CellOutcome::Unknown)
            && self
                .quit_while
                .as_ref()
                .is_some_and(|q| q.was == Waiting::Running)
    }

    /// Fills in a cell the notebook was quit while it ran from `recorded`,
    /// the same execution as the flight recorder's call `seq` holds it (the
    /// cell ended after the notebook was gone): its outputs, outcome,
    /// duration and exit code, the result numbered as this cell. The cell
    /// keeps [`Cell::quit_while`], now naming the record.
    pub fn fill_from_record(&mut self, recorded: Cell, seq: i64) {
        let count = self.execution_count;
        self.outputs = recorded
            .outputs
            .into_iter()
            .map(|o| match o {
                Output::ExecuteResult { text, json, .. } => Output::ExecuteResult {
                    execution_count: count,
                    text,
                    json,
                },
                other => other,
            })
            .collect();
        self.outcome = recorded.outcome;
        self.duration = recorded.duration;
        self.exit_code = recorded.exit_code;
        if let Some(quit) = self.quit_while.as_mut() {
            quit.recorded_seq = Some(seq);
        }
    }
}

/// An ordered list of cells and the counter that numbers them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Notebook {
    /// The cells, oldest first.
    pub cells: Vec<Cell>,
}

impl Notebook {
    /// Appends `source` as a new cell, not settled yet (no outputs, no
    /// outcome), and returns its index.
    pub fn push(&mut self, source: String) -> usize {
        let execution_count = self.next_count();
        self.cells.push(Cell {
            source,
            execution_count,
            outputs: Vec::new(),
            outcome: None,
            duration: None,
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        });
        self.cells.len() - 1
    }

    /// The execution count the next cell will get: one past the newest
    /// numbered cell's (cells never run have none), 1 for the first.
    pub fn next_count(&self) -> u32 {
        self.cells
            .iter()
            .rev()
            .find(|c| c.execution_count > 0)
            .map_or(1, |c| c.execution_count.saturating_add(1))
    }

    /// The cell at `index`, mutably.
    pub fn cell_mut(&mut self, index: usize) -> Option<&mut Cell> {
        self.cells.get_mut(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// stdout and stderr streamed in turns stay in that order once the
    /// answer (stdout and stderr apart) settles the cell (issue 27 item 2);
    /// a live output that differs from the answer (cut short) gives way.
    #[test]
    fn streams_keep_the_order_they_were_printed_in() {
        let chunk = |name, text: &str| Output::Stream {
            name,
            text: text.to_string().into(),
        };
        let live = |cell: &mut Cell| {
            cell.outputs = vec![
                chunk(StreamName::Stdout, "step 1\n"),
                chunk(StreamName::Stderr, "step 2\n"),
                chunk(StreamName::Stdout, "step 3\n"),
                chunk(StreamName::Stderr, "step 4\n"),
                chunk(StreamName::Stdout, "step 5\n"),
            ];
        };
        let answer = || {
            exec(
                ExecutionStatus::Succeeded,
                "step 1\nstep 3\nstep 5\n",
                "step 2\nstep 4\n",
            )
        };
        let mut nb = Notebook::default();
        let i = nb.push("print()".into());
        let cell = nb.cell_mut(i).unwrap();
        live(cell);
        cell.finish(answer(), None);
        let texts: Vec<&str> = cell
            .outputs
            .iter()
            .filter_map(|o| match o {
                Output::Stream { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            texts,
            ["step 1\n", "step 2\n", "step 3\n", "step 4\n", "step 5\n"]
        );
        // A live output cut short: the answer's order.
        let i = nb.push("print()".into());
        let cell = nb.cell_mut(i).unwrap();
        live(cell);
        cell.outputs.pop();
        cell.finish(answer(), None);
        assert_eq!(cell.outputs.len(), 2, "{:?}", cell.outputs);
    }

    fn exec(status: ExecutionStatus, stdout: &str, stderr: &str) -> Execution {
        Execution {
            execution_count: None,
            id: None,
            status,
            stdout: stdout.into(),
            stderr: stderr.into(),
            result: None,
            images: vec![],
            duration: Duration::from_millis(7),
            network: Vec::new(),
        }
    }

    #[test]
    fn push_numbers_cells_from_one() {
        let mut nb = Notebook::default();
        assert_eq!(nb.next_count(), 1);
        assert_eq!(nb.push("a".into()), 0);
        assert_eq!(nb.push("b".into()), 1);
        assert_eq!(nb.cells[1].execution_count, 2);
        assert_eq!(nb.cells[1].outcome, None, "not settled");
    }

    #[test]
    fn finish_maps_outcome_and_duration() {
        let mut nb = Notebook::default();
        let i = nb.push("1/0".into());
        let cell = &mut nb.cells[i];
        cell.finish(
            exec(
                ExecutionStatus::Failed,
                "",
                "ZeroDivisionError: division by zero\n",
            ),
            None,
        );
        assert_eq!(cell.outcome, Some(CellOutcome::Failed));
        assert_eq!(cell.duration, Some(Duration::from_millis(7)));
        assert!(
            matches!(&cell.outputs[0], Output::Error { ename, .. } if ename == "ZeroDivisionError")
        );
    }

    /// The execution's stdout becomes the cell's output itself, not a copy of
    /// it; a clone of the cell (the saver's) shares it.
    #[test]
    fn a_finished_cell_holds_its_stdout_once() {
        let mut nb = Notebook::default();
        let i = nb.push("print(1)".into());
        let e = exec(ExecutionStatus::Succeeded, "1\n2\n", "");
        let at = e.stdout.as_ptr();
        nb.cells[i].finish(e, None);
        let Output::Stream { text, .. } = &nb.cells[i].outputs[0] else {
            panic!("{:?}", nb.cells[i].outputs);
        };
        assert_eq!(text.as_ptr(), at);
        assert_eq!(*text, "1\n2\n");
        let saved = nb.cells[i].clone();
        let Output::Stream { text: copy, .. } = &saved.outputs[0] else {
            panic!("{:?}", saved.outputs);
        };
        assert!(copy.is_shared_with(text));
    }

    /// A shell command that failed keeps its streams as they are (a line
    /// saying `Traceback` is only text) and its exit code.
    #[test]
    fn a_commands_streams_and_exit_code_are_kept_as_they_are() {
        let mut nb = Notebook::default();
        let i = nb.push("grep -c x missing.txt".into());
        let cell = &mut nb.cells[i];
        cell.finish(
            exec(
                ExecutionStatus::Failed,
                "0\n",
                "Traceback (most recent call last):\ngrep: missing.txt: No such file\n",
            ),
            Some(2),
        );
        assert_eq!(cell.outcome, Some(CellOutcome::Failed));
        assert_eq!(cell.exit_code, Some(2));
        assert_eq!(
            cell.outputs,
            vec![
                Output::Stream {
                    name: StreamName::Stdout,
                    text: "0\n".into()
                },
                Output::Stream {
                    name: StreamName::Stderr,
                    text: "Traceback (most recent call last):\ngrep: missing.txt: No such file\n"
                        .into()
                },
            ]
        );
    }

    #[test]
    fn fail_keeps_source_and_shows_reason() {
        let mut nb = Notebook::default();
        let i = nb.push("x".into());
        nb.cells[i].fail("cannot reach the session pool");
        assert_eq!(nb.cells[i].source, "x");
        assert_eq!(nb.cells[i].outcome, Some(CellOutcome::Failed));
        assert!(
            matches!(&nb.cells[i].outputs[0], Output::Error { evalue, .. } if evalue.contains("cannot reach"))
        );
    }
}
