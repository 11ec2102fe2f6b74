//! Following a session (issue 13) and running cells' output (issue 14): a
//! part of [`App`]'s reducer kept apart from `app.rs`.
//!
//! While the notebook follows its session ([`FollowUi::following`]: started by
//! `sessionpad --follow ID` or `f` in the sessions pane, stopped by `f`
//! again), each call another client makes in the session (an agent through
//! the local pool) becomes a settled cell of the notebook as it finishes,
//! marked with the client's `User-Agent` (shortened, sanitised), with its
//! outputs and images, and the files it created or changed marked by the
//! artifact radar (the listing after its previous call against the one after
//! it); a file call is said on the status line. The person can
//! take over at any time: the cells they type run in the same session, in the
//! same kernel.
//!
//! Running cells' output from a local pool's event stream goes into the
//! running cell as it is printed: the notebook's own cell, and, while
//! following, a placeholder for the agent's cell that the recorded call fills
//! in when it ends. The reply to an execution stays what settles a cell: its
//! outputs replace what was streamed. On a service pool nothing streams, and
//! the running cell says so ([`App::output_arrives_at_end`]).

use std::collections::{HashMap, HashSet};

use super::App;
use crate::notebook::{Output, StreamName};
use crate::protocol::events::{OutputChunk, StreamName as LiveStream};
use crate::protocol::record::CallKind;
use crate::session::{FollowNews, Followed};
use crate::tui::action::Effect;

/// The notebook's following state.
#[derive(Debug, Default)]
pub struct FollowUi {
    /// Other clients' cells in the session are shown as they finish.
    pub following: bool,
    /// The session whose event stream is open (`None` before it opens, or
    /// when the pool has none: a service pool).
    pub subscribed: Option<String>,
    /// The cells other clients ran: cell index → the client, shortened and
    /// sanitised.
    pub clients: HashMap<usize, String>,
    /// Cells showing another client's running output: execution id → cell.
    /// Such a cell is running ([`App::pending_of`]) until its recorded call
    /// settles it.
    live_cells: HashMap<String, usize>,
    /// The ledger `seq`s of the calls shown as cells (followed, or caught up
    /// on when following began), so that none is shown twice.
    pub applied: HashSet<i64>,
    /// Running cells' streamed output, kept to its tail.
    pub live_tail: LiveTail,
    /// The notebook said once that this pool gives stdout and stderr apart
    /// (no event stream: their order between them is unknown).
    pub said_streams_apart: bool,
}

impl FollowUi {
    /// Forgets the cells of the notebook left (the notebook switched
    /// sessions); following goes on in the new session.
    pub fn new_session(&mut self) {
        self.clients.clear();
        self.live_cells.clear();
        self.applied.clear();
        self.live_tail.forget(None);
    }

    /// The cells showing another client's running cell while it runs (until
    /// its recorded call settles them), in no order.
    pub fn live_cells(&self) -> impl Iterator<Item = usize> + '_ {
        self.live_cells.values().copied()
    }

    /// The marks the outputs pane draws above other clients' cells: (cell,
    /// text), by cell.
    pub fn marks(&self) -> Vec<(usize, String)> {
        let mut marks: Vec<(usize, String)> = self
            .clients
            .iter()
            .map(|(cell, client)| (*cell, format!("ran by {client}")))
            .collect();
        marks.sort();
        marks
    }
}

impl App {
    /// Starts following the session cells run in (`sessionpad --follow`, `f`
    /// in the sessions pane), or stops. Starting asks the flight recorder for
    /// the calls other clients made there since the last one this notebook
    /// showed ([`App::catch_up_request`]): the returned effects.
    pub fn set_following(&mut self, on: bool) -> Vec<Effect> {
        self.follow.following = on;
        self.dirty = true;
        self.notice = Some(if on {
            "following: type a cell to take over".to_string()
        } else {
            format!("stopped following {}", self.config.identifier)
        });
        if on {
            self.catch_up_request()
        } else {
            Vec::new()
        }
    }

    /// True when the pool cannot stream a running cell's output (a service
    /// pool: it answers an execution only when it ends), so the running cell
    /// should say so.
    pub fn output_arrives_at_end(&self) -> bool {
        self.config.pool_label != "local" && self.isolation.is_none()
    }

    /// News of the event stream's subscription.
    pub(super) fn follow_news(&mut self, news: FollowNews) -> Vec<Effect> {
        match news {
            // Another client's cell changed the session's files: the radar
            // marks them (and previews the first new image or table).
            FollowNews::Radar { before, after } if self.follow.following => {
                return self.files_event(crate::session::FileEvent::CellListing { before, after });
            }
            FollowNews::Radar { .. } => {}
            FollowNews::Subscribed { identifier } => self.follow.subscribed = Some(identifier),
            FollowNews::Unavailable(reason) => {
                self.follow.subscribed = None;
                if self.follow.following {
                    self.notice = Some(format!("not following: {reason}"));
                }
            }
            FollowNews::Missed(n) => {
                if self.follow.following {
                    self.notice = Some(format!(
                        "missed {n} event(s) of the session (sessionpad log has every call)"
                    ));
                }
            }
        }
        Vec::new()
    }

    /// Another client's call in the session: a settled cell while following.
    pub(super) fn followed(&mut self, followed: Followed) -> Vec<Effect> {
        let Followed {
            entry,
            execution,
            images,
        } = followed;
        if !self.follow.following
            || entry.identifier != self.config.identifier
            || !self.follow.applied.insert(entry.seq)
        {
            return Vec::new();
        }
        let identifier = self.config.identifier.clone();
        self.sessions.record_followed(&identifier, entry.seq);
        let client = crate::tui::widgets::sanitize::plain(&crate::session::follow::short_agent(
            entry.client.as_deref(),
        ));
        let Some(exec) = execution else {
            if entry.kind == CallKind::End {
                self.notice = Some(format!(
                    "the session ended ({}): its variables and /mnt/data files are gone",
                    crate::tui::widgets::sanitize::plain(entry.status.as_deref().unwrap_or("?"))
                ));
                return Vec::new();
            }
            // A file call: said, and the files pane lists again.
            if let Some(file) = &entry.file {
                let verb = match entry.kind {
                    CallKind::Upload => "uploaded",
                    CallKind::Download => "downloaded",
                    _ => "deleted",
                };
                self.notice = Some(format!(
                    "{client} {verb} {}",
                    crate::tui::widgets::sanitize::plain(&file.name)
                ));
            }
            return Vec::new();
        };
        let placeholder = exec
            .id
            .as_ref()
            .and_then(|id| self.follow.live_cells.remove(id));
        let index = match placeholder {
            Some(index) => index,
            None => self.notebook.book.push(String::new()),
        };
        self.follow.live_tail.forget(Some(index));
        if let Some(cell) = self.notebook.book.cell_mut(index) {
            cell.source = entry.code.clone().unwrap_or_default();
            cell.stdin.clone_from(&entry.stdin);
            cell.finish(exec, entry.exit_code);
        }
        self.follow.clients.insert(index, client);
        self.show_images(index, images);
        self.notebook.outputs.invalidate(index);
        self.notebook.save_cell(index);
        Vec::new()
    }

    /// A running cell printed: into this notebook's running cell (`own`), or
    /// while following into the placeholder of another client's running cell.
    pub(super) fn live_output(&mut self, own: bool, chunk: OutputChunk) {
        if chunk.identifier != self.config.identifier {
            return;
        }
        let index = if own {
            let Some((index, _)) = self.running() else {
                return;
            };
            // What finds the cell's record should the notebook be quit
            // before it ends.
            self.notebook.note_execution_id(index, &chunk.execution_id);
            index
        } else {
            if !self.follow.following {
                return;
            }
            match self.follow.live_cells.get(&chunk.execution_id) {
                Some(&index) => index,
                None => {
                    // Running while it is in `live_cells` (`App::pending_of`).
                    let index = self.notebook.book.push(String::new());
                    let client = crate::session::follow::short_agent(chunk.client.as_deref());
                    self.follow.clients.insert(
                        index,
                        crate::tui::widgets::sanitize::plain(&format!(
                            "{client} (its code shows when it ends)"
                        )),
                    );
                    self.follow
                        .live_cells
                        .insert(chunk.execution_id.clone(), index);
                    index
                }
            }
        };
        let name = match chunk.stream {
            LiveStream::Stdout => StreamName::Stdout,
            LiveStream::Stderr => StreamName::Stderr,
        };
        let chunk_len = chunk.text.len();
        let Some(cell) = self.notebook.book.cell_mut(index) else {
            return;
        };
        if cell.outcome.is_some() {
            // The reply came first: it holds everything.
            return;
        }
        match cell.outputs.last_mut() {
            Some(Output::Stream { name: last, text }) if *last == name => {
                text.make_mut().push_str(&chunk.text);
            }
            _ => cell.outputs.push(Output::Stream {
                name,
                text: chunk.text.into(),
            }),
        }
        self.follow
            .live_tail
            .grew(index, &mut cell.outputs, chunk_len);
        self.notebook.outputs.invalidate(index);
    }
}

/// Bytes of a running cell's streamed output kept once it is cut ([`LiveTail`]).
pub const LIVE_KEEP: usize = 256 * 1024;

/// Bytes a running cell's streamed output may reach before its start is cut.
pub const LIVE_MAX: usize = 2 * LIVE_KEEP;

/// What one output costs beyond its text, as [`LiveTail`] counts it: a
/// cell whose stdout and stderr take turns a byte at a time makes an output
/// per byte, and those are bounded too.
const OUTPUT_COST: usize = 64;

/// The line a running cell's output starts with once it was cut.
pub const LIVE_CUT_MARK: &str =
    "\u{2026} earlier output shows when the cell ends (a running cell keeps its last 256 KiB)\n";

/// Keeps running cells' streamed outputs (stdout and stderr, as printed) at
/// most [`LIVE_MAX`] bytes each: past it, the oldest are dropped, and the
/// oldest kept is cut from a line's start, so that about [`LIVE_KEEP`] bytes
/// stay, starting with a line saying so ([`LIVE_CUT_MARK`]). A cell printing
/// megabytes, or printing for hours, costs the notebook little while it runs;
/// the reply, or the followed call, brings the whole output when it ends.
///
/// Counts what each running cell took in since it was last cut, so that a
/// chunk costs its own size, not a pass over the cell's outputs.
#[derive(Debug, Default)]
pub struct LiveTail {
    /// Cell index → bytes counted (at least the cell's streamed bytes).
    counted: HashMap<usize, usize>,
}

impl LiveTail {
    /// `outputs` (of cell `cell`) grew by a chunk of `added` bytes: cuts them
    /// when they are over [`LIVE_MAX`].
    pub fn grew(&mut self, cell: usize, outputs: &mut Vec<Output>, added: usize) {
        let counted = self.counted.entry(cell).or_default();
        *counted += added + OUTPUT_COST;
        if *counted > LIVE_MAX {
            *counted = cut_to_tail(outputs);
        }
    }

    /// Forgets cell `cell` (it ended), or every cell (`None`: another notebook).
    pub fn forget(&mut self, cell: Option<usize>) {
        match cell {
            Some(cell) => {
                self.counted.remove(&cell);
            }
            None => self.counted.clear(),
        }
    }
}

/// Cuts `outputs` to their last [`LIVE_KEEP`] bytes or so when they are over
/// [`LIVE_MAX`]; returns what they count afterwards.
fn cut_to_tail(outputs: &mut Vec<Output>) -> usize {
    let cost = |o: &Output| match o {
        Output::Stream { text, .. } => text.len() + OUTPUT_COST,
        _ => OUTPUT_COST,
    };
    let total: usize = outputs.iter().map(cost).sum();
    if total <= LIVE_MAX {
        return total;
    }
    let mut excess = total - LIVE_KEEP;
    let mut drop_to = 0;
    while drop_to + 1 < outputs.len() && cost(&outputs[drop_to]) <= excess {
        excess -= cost(&outputs[drop_to]);
        drop_to += 1;
    }
    outputs.drain(..drop_to);
    if let Some(Output::Stream { text, .. }) = outputs.first_mut() {
        let mut cut = excess.min(text.len());
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        // From the next line's start, unless the rest holds no line break.
        if let Some(newline) = text[cut..].find('\n')
            && cut + newline + 1 < text.len()
        {
            cut += newline + 1;
        }
        let rest = &text[cut..];
        if !rest.starts_with(LIVE_CUT_MARK) {
            let mut kept = String::with_capacity(LIVE_CUT_MARK.len() + rest.len());
            kept.push_str(LIVE_CUT_MARK);
            kept.push_str(rest);
            *text = kept.into();
        }
    }
    outputs.iter().map(cost).sum()
}

#[cfg(test)]
#[path = "follow_tests.rs"]
pub(crate) mod tests;
