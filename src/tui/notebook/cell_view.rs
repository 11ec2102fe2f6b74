//! One notebook cell as rows of the outputs pane, console style:
//!
//! ```text
//! In [2]: print(x)
//! 42
//!   done in 4 ms
//! ```
//!
//! The code is highlighted; every piece of session output goes through the
//! sanitizer; images become blocks of rows; a long text output is collapsed to
//! its first and last rows (`long_output.rs`). Rows are computed for one width and
//! cached by the outputs pane until the cell changes. The one row that changes on
//! its own, a running cell's spinner and elapsed time, is drawn from the clock.
//!
//! Whether a cell is queued or running is not in the cell: the app derives it
//! from its runs and the follower ([`Pending`], handed over in
//! [`CellContext::pending`]); the cell holds only what its execution came to.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::notebook::{Cell, CellOutcome, Output, StreamName};
use crate::tui::theme::Theme;
use crate::tui::widgets::highlight::Highlighter;
use crate::tui::widgets::image::{ImageKey, ImageLayout, ImageStore};
use crate::tui::widgets::long_output::{LongTexts, OutputKey, collapsed_rows};
use crate::tui::widgets::sanitize;
use crate::tui::widgets::wrap::wrap;

/// One row of the outputs pane.
#[derive(Debug, Clone, PartialEq)]
pub enum Row {
    /// A line of text, already cut to the pane width.
    Text(Line<'static>),
    /// Row `row` of an image.
    Image {
        /// Which image.
        key: ImageKey,
        /// Which of its rows.
        row: u16,
    },
    /// The status row of the running cell `0`: spinner, elapsed time, limit.
    Running(usize),
}

/// Where a cell that waits for an answer is, as the app derives it from the
/// run state machine (`tui/notebook/runs.rs`) and the follower (another client's cell
/// shown while it runs). Never stored in the cell: a cell holds only what its
/// execution came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    /// Sent to the session worker, waiting for earlier cells to finish.
    Queued,
    /// Executing.
    Running {
        /// When it began executing: `None` when the app does not know (another
        /// client's cell, followed while it runs).
        since: Option<Instant>,
    },
}

impl Pending {
    /// When it began executing, when that is known (never for a queued cell).
    pub fn since(self) -> Option<Instant> {
        match self {
            Self::Queued => None,
            Self::Running { since } => since,
        }
    }
}

/// What a running cell's status row is drawn from, besides the cell's
/// [`Pending::Running`] start.
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    /// The time of the frame.
    pub now: Instant,
    /// The execution limit of a cell, when known.
    pub limit: Option<Duration>,
    /// The pool answers an execution only when it ends (a service pool): the
    /// running cell says its output arrives then.
    pub output_at_end: bool,
}

/// Spinner frames, one per 100 ms of elapsed time.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// What building a cell's rows needs besides the cell.
pub struct CellContext<'a> {
    /// The palette.
    pub theme: &'a Theme,
    /// Highlights the cell's code.
    pub highlighter: &'a mut Highlighter,
    /// The decoded images of outputs.
    pub images: &'a mut ImageStore,
    /// The line indexes of long outputs.
    pub texts: &'a mut LongTexts,
    /// The cells waiting for an answer, by index (queued, or running since
    /// when), as the app derives them (`App::pending_of`); a cell not in it
    /// is drawn from its outcome (as having no answer when it has none).
    pub pending: &'a BTreeMap<usize, Pending>,
    /// The clock of the running cell's status row.
    pub clock: RunClock,
    /// The key that opens the pager, for the note of a collapsed output.
    pub pager_key: &'a str,
    /// The key that runs a cut cell again asking for more output, for the
    /// note under a cut stream.
    pub more_key: &'a str,
}

/// The rows of cell `index` for a pane `width` columns wide, and whether they are
/// final (false while a long output is still being read: build them again next
/// frame).
pub fn cell_rows(
    cell: &Cell,
    index: usize,
    width: u16,
    ctx: &mut CellContext<'_>,
) -> (Vec<Row>, bool) {
    let theme = ctx.theme;
    let mut lines = code_lines(cell, ctx);
    let mut rows = Vec::new();
    let mut settled = true;
    for (n, output) in cell.outputs.iter().enumerate() {
        let key = OutputKey {
            cell: index,
            output: n,
        };
        if ctx.texts.is_long_output(key, output) {
            flush(&mut rows, &mut lines, width);
            match ctx.texts.index(key, output) {
                Some(text) => {
                    settled &= text.complete;
                    let (style, mut prefix) = long_style(output, theme);
                    // A result of many lines starts under its `Out[n]:`, as in
                    // Jupyter's console.
                    if let Output::ExecuteResult {
                        execution_count, ..
                    } = output
                        && text.index.line_count() > 1
                    {
                        prefix = None;
                        rows.push(Row::Text(Line::from(out_prompt(
                            *execution_count,
                            false,
                            theme,
                        ))));
                    }
                    let collapsed = collapsed_rows(
                        &text,
                        style,
                        prefix.as_ref(),
                        (width, ctx.pager_key),
                        theme,
                    );
                    rows.extend(collapsed.into_iter().map(Row::Text));
                }
                None => lines.extend(output_lines(output, theme)),
            }
            continue;
        }
        match output {
            Output::DisplayData { .. } => {
                flush(&mut rows, &mut lines, width);
                let key = ImageKey {
                    cell: index,
                    output: n,
                };
                match ctx.images.layout(key, width) {
                    ImageLayout::Rows(count) => {
                        rows.extend((0..count).map(|row| Row::Image { key, row }));
                    }
                    ImageLayout::Unavailable(reason) => lines.push(Line::styled(
                        format!("[image not shown: {}]", sanitize::plain(&reason)),
                        theme.muted,
                    )),
                }
            }
            other => lines.extend(output_lines(other, theme)),
        }
    }
    let pending = ctx.pending.get(&index).copied();
    if let Some(Pending::Running { .. }) = pending {
        flush(&mut rows, &mut lines, width);
        rows.push(Row::Running(index));
    } else {
        lines.extend(network_line(cell, theme));
        lines.extend(cut_lines(cell, ctx.more_key, theme));
        lines.push(status_line(cell, pending, theme));
    }
    lines.push(Line::default());
    flush(&mut rows, &mut lines, width);
    (rows, settled)
}

/// The style and first-line prefix of a collapsed output.
fn long_style(output: &Output, theme: &Theme) -> (Style, Option<Span<'static>>) {
    match output {
        Output::Stream {
            name: StreamName::Stderr,
            ..
        } => (theme.stderr, None),
        Output::ExecuteResult {
            execution_count, ..
        } => (
            Style::new(),
            Some(out_prompt(*execution_count, true, theme)),
        ),
        Output::Error { .. } => (theme.error, None),
        _ => (Style::new(), None),
    }
}

/// `Out[n]: ` before a one-line value (`inline`), or `Out[n]:` alone on the
/// line above a value of many lines.
fn out_prompt(execution_count: u32, inline: bool, theme: &Theme) -> Span<'static> {
    let text = if inline {
        format!("Out[{execution_count}]: ")
    } else {
        format!("Out[{execution_count}]:")
    };
    Span::styled(text, theme.prompt_out)
}

/// The status row of a running cell that began executing at `since` (`None`:
/// not known, so no elapsed time is shown):
/// `⠹ running 1.2 s (limit 3 min 40 s)`.
pub fn running_line(since: Option<Instant>, clock: &RunClock, theme: &Theme) -> Line<'static> {
    let elapsed = since.map(|since| clock.now.saturating_duration_since(since));
    let frame = elapsed.map_or(0, |e| {
        usize::try_from(e.as_millis() / 100).unwrap_or(0) % SPINNER.len()
    });
    let mut text = format!("  {} running", SPINNER[frame]);
    if let Some(e) = elapsed {
        text.push(' ');
        text.push_str(&crate::tui::notebook::format_duration(e));
    }
    if let Some(limit) = clock.limit {
        text.push_str(" (limit ");
        text.push_str(&crate::tui::notebook::format_duration(limit));
        text.push(')');
    }
    if clock.output_at_end {
        text.push_str(" · output arrives when the cell ends");
    }
    Line::styled(text, theme.warning)
}

fn flush(rows: &mut Vec<Row>, lines: &mut Vec<Line<'static>>, width: u16) {
    for line in lines.drain(..) {
        rows.extend(wrap(line, width).into_iter().map(Row::Text));
    }
}

/// `In [n]: ` and the highlighted code, continuation lines under `   ...: `.
fn code_lines(cell: &Cell, ctx: &mut CellContext<'_>) -> Vec<Line<'static>> {
    // A cell never run has no count (`In [ ]`, as Jupyter's aborted cells).
    let prompt = match cell.execution_count {
        0 => "In [ ]: ".to_string(),
        n => format!("In [{n}]: "),
    };
    let cont = format!("{:>width$}: ", "...", width = prompt.len() - 2);
    ctx.highlighter
        .lines(&cell.source)
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let head = if i == 0 {
                Span::styled(prompt.clone(), ctx.theme.prompt_in)
            } else {
                Span::styled(cont.clone(), ctx.theme.muted)
            };
            let mut spans = vec![head];
            if ctx.theme.colors {
                spans.extend(line.spans);
            } else {
                // NO_COLOR: the code keeps its text, not its syntax colours.
                spans.extend(line.spans.into_iter().map(|s| {
                    let style = s.style.fg(ratatui::style::Color::Reset);
                    Span::styled(s.content, style)
                }));
            }
            Line::from(spans)
        })
        .collect()
}

/// Session text as lines: SGR colours become styles, except under `NO_COLOR`,
/// where they are dropped with every other escape sequence.
fn session_lines(text: &str, theme: &Theme) -> Vec<Line<'static>> {
    if theme.colors {
        sanitize::to_lines(text)
    } else {
        sanitize::plain_lines(text)
    }
}

fn styled(lines: Vec<Line<'static>>, style: Style) -> Vec<Line<'static>> {
    lines.into_iter().map(|l| l.style(style)).collect()
}

/// The text lines of a non-image output.
fn output_lines(output: &Output, theme: &Theme) -> Vec<Line<'static>> {
    match output {
        Output::Stream {
            name: StreamName::Stdout,
            text,
        } => session_lines(text, theme),
        Output::Stream {
            name: StreamName::Stderr,
            text,
        } => styled(session_lines(text, theme), theme.stderr),
        Output::ExecuteResult {
            execution_count,
            text,
            ..
        } => {
            let mut lines = session_lines(text, theme);
            if lines.len() > 1 {
                // Many lines (a DataFrame, an array) start on their own line
                // under `Out[n]:`, as Jupyter's console shows them, so the first
                // is not shifted against the others.
                lines.insert(0, Line::from(out_prompt(*execution_count, false, theme)));
                return lines;
            }
            let prompt = out_prompt(*execution_count, true, theme);
            match lines.first_mut() {
                Some(first) => first.spans.insert(0, prompt),
                None => lines.push(Line::from(prompt)),
            }
            lines
        }
        Output::Error {
            ename,
            evalue,
            traceback,
        } => error_lines(ename, evalue, traceback, theme),
        Output::DisplayData { format, .. } => {
            vec![Line::styled(
                format!("[{} image]", sanitize::plain(format)),
                theme.muted,
            )]
        }
        // Escaped when made; cleaned again, as everything from a file is.
        Output::Files { line } => vec![Line::styled(sanitize::plain(line), theme.muted)],
    }
}

/// A traceback in the error style with its exception line emphasised; without a
/// traceback (a transport error), just `ename: evalue`.
fn error_lines(
    ename: &str,
    evalue: &str,
    traceback: &[String],
    theme: &Theme,
) -> Vec<Line<'static>> {
    if traceback.iter().all(|l| l.trim().is_empty()) {
        let text = if evalue.is_empty() {
            ename.to_string()
        } else {
            format!("{ename}: {evalue}")
        };
        return styled(session_lines(&text, theme), theme.error_title);
    }
    let mut lines = styled(session_lines(&traceback.join("\n"), theme), theme.error);
    if let Some(last) = lines.iter_mut().rev().find(|l| l.width() > 0) {
        last.style = theme.error_title;
    }
    lines
}

/// The muted line under a cell saying where it is: queued or running (from
/// `pending`, the app's word), else what its execution came to (done in X,
/// failed, canceled; a shell command's exit code, in the error colour when it
/// is not 0).
fn status_line(cell: &Cell, pending: Option<Pending>, theme: &Theme) -> Line<'static> {
    let took = cell.duration.map(crate::tui::notebook::format_duration);
    let outcome = match (pending, cell.outcome) {
        (Some(Pending::Queued), _) => return Line::styled("  queued", theme.muted),
        // Drawn from the clock instead (`Row::Running`); kept for completeness.
        (Some(Pending::Running { .. }), _) => return Line::styled("  running…", theme.warning),
        // Not settled, and nothing waits for its answer any more (the app
        // never leaves a cell so).
        (None, None) => return Line::styled("  no answer", theme.muted),
        (None, Some(outcome)) => outcome,
    };
    let quit = cell.quit_while.as_deref();
    // Filled in from the flight recorder: the cell ended after the notebook
    // was quit, and its outputs are the record's, not this notebook's.
    let from_record = if quit.is_some_and(|q| q.recorded_seq.is_some()) {
        FROM_RECORD
    } else {
        ""
    };
    if let Some(code) = cell.exit_code {
        let style = if code == 0 { theme.muted } else { theme.error };
        let text = match took {
            Some(t) => format!("  exit {code} in {t}{from_record}"),
            None => format!("  exit {code}{from_record}"),
        };
        return Line::styled(text, style);
    }
    let (text, style) = match (outcome, took) {
        (CellOutcome::Succeeded, Some(t)) => (format!("  done in {t}"), theme.muted),
        (CellOutcome::Succeeded, None) => ("  done".to_string(), theme.muted),
        (CellOutcome::Failed, Some(t)) => (format!("  failed in {t}"), theme.error),
        (CellOutcome::Failed, None) => ("  failed".to_string(), theme.error),
        (CellOutcome::Canceled, _) => ("  canceled by the service".to_string(), theme.warning),
        (CellOutcome::Unknown, _) => (quit_status(quit), theme.warning),
        (CellOutcome::NotRun, _) => (
            "  not run: an earlier cell failed (run it again from the history)".to_string(),
            theme.warning,
        ),
    };
    Line::styled(format!("{text}{from_record}"), style)
}

/// The line under a finished cell that says what its execution tried to
/// reach through a local pool's egress proxy (issue 29):
/// `network: pypi.org:443 allowed · 169.254.169.254:80 blocked`, in the
/// warning style when anything was blocked; none when it tried nothing.
fn network_line(cell: &Cell, theme: &Theme) -> Option<Line<'static>> {
    use crate::protocol::egress::{Decision, summary};
    let text = summary(&cell.network)?;
    let blocked = cell.network.iter().any(|a| a.decision == Decision::Denied);
    let style = if blocked { theme.warning } else { theme.muted };
    Some(Line::styled(
        format!("  network: {}", sanitize::plain(&text)),
        style,
    ))
}

/// The notes under a finished cell whose stdout or stderr the service probably
/// cut ([`Cell::probably_cut`]): a shell command's stream of 4,093 to 4,096
/// bytes (Shell pools cut there), or one of exactly the
/// `outputStreamsMaxLength` in force (2025-10-02-preview). Under them, the key
/// (`more_key`) that runs the cell again asking for more, and the command
/// line's way.
fn cut_lines(cell: &Cell, more_key: &str, theme: &Theme) -> Vec<Line<'static>> {
    let cut = cell.probably_cut();
    let Some(larger) = crate::notebook::larger_output_streams_max_length(&cut) else {
        return Vec::new();
    };
    let mut lines: Vec<Line<'static>> = cut
        .iter()
        .map(|c| Line::styled(format!("  ⚠ {}", c.note), theme.warning))
        .collect();
    lines.push(Line::styled(
        format!("    {}", more_hint(more_key, larger)),
        theme.muted,
    ));
    lines
}

/// How to get a cut output whole, the line under a cut note: `key` on the
/// selected cell runs it again with `outputStreamsMaxLength` `larger`.
pub fn more_hint(key: &str, larger: u32) -> String {
    format!(
        "for more: select the cell and press {key} (runs it again with outputStreamsMaxLength {}, 2025-10-02-preview), or sessionpad exec --output-streams-max-length N",
        crate::protocol::service_limits::thousands(larger)
    )
}

/// What a cell filled in from the flight recorder says after its outcome.
pub const FROM_RECORD: &str = " · ended after you quit: outputs from the flight recorder";

/// The status of a cell the notebook was quit while it waited, not filled in
/// from the flight recorder (yet): where it was, never as if it had finished.
fn quit_status(quit: Option<&crate::notebook::QuitWhile>) -> String {
    match quit.map(|q| q.was) {
        Some(crate::notebook::Waiting::Queued) => "  queued when you quit: never sent".to_string(),
        _ => "  running when you quit: how it ended is not known here".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// The rows of `cell` (cell 0) as text, the app saying it is `pending`
    /// (a running cell's start 1.2 s before the frame).
    fn pending_rows_text(
        cell: &Cell,
        pending: impl FnOnce(Instant) -> Option<Pending>,
        width: u16,
    ) -> Vec<String> {
        let theme = Theme::dark();
        let mut hl = Highlighter::default();
        let mut images = ImageStore::default();
        let mut texts = LongTexts::default();
        texts.begin_frame();
        let now = Instant::now();
        let pending: BTreeMap<usize, Pending> =
            pending(now.checked_sub(Duration::from_millis(1234)).unwrap())
                .map(|p| (0, p))
                .into_iter()
                .collect();
        let mut ctx = CellContext {
            theme: &theme,
            highlighter: &mut hl,
            images: &mut images,
            texts: &mut texts,
            pending: &pending,
            clock: RunClock {
                output_at_end: false,
                now,
                limit: Some(Duration::from_secs(220)),
            },
            pager_key: "Ctrl+O",
            more_key: "m",
        };
        let clock = ctx.clock;
        cell_rows(cell, 0, width, &mut ctx)
            .0
            .into_iter()
            .map(|r| match r {
                Row::Text(l) => l.to_string(),
                Row::Image { row, .. } => format!("<image row {row}>"),
                Row::Running(cell) => {
                    let since = pending.get(&cell).and_then(|p| p.since());
                    running_line(since, &clock, &theme).to_string()
                }
            })
            .collect()
    }

    /// The rows of a settled `cell` as text.
    fn rows_text(cell: &Cell, width: u16) -> Vec<String> {
        pending_rows_text(cell, |_| None, width)
    }

    /// Cell `In [1]` running `source`, not settled yet.
    fn unsettled(source: &str) -> Cell {
        Cell {
            source: source.into(),
            execution_count: 1,
            outputs: vec![],
            outcome: None,
            duration: None,
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        }
    }

    /// A shell command's stream of 4,093 to 4,096 bytes, counted over its
    /// pieces, is flagged with the way to ask for more; a longer or shorter
    /// one, and one still running, is not. A code cell's stream of exactly
    /// the service's default `outputStreamsMaxLength` is flagged too.
    #[test]
    fn a_stream_the_service_probably_cut_is_flagged() {
        let stream = |name, text: String| Output::Stream {
            name,
            text: text.into(),
        };
        let mut cell = unsettled("head -c 10240 /dev/zero | tr '\\0' x");
        cell.outputs = vec![
            stream(StreamName::Stdout, "x".repeat(4000)),
            stream(StreamName::Stdout, "x".repeat(95)),
        ];
        let flagged = |cell: &Cell| {
            rows_text(cell, 200)
                .iter()
                .any(|r| r.contains("probably cut"))
        };
        assert!(!flagged(&cell), "a cell still running is not flagged");
        cell.outcome = Some(CellOutcome::Succeeded);
        cell.exit_code = Some(0);
        let rows = rows_text(&cell, 200);
        assert!(
            rows.iter()
                .any(|r| r == "  ⚠ stdout is 4,095 bytes: the service cuts Shell output at 4,096, so it is probably cut"),
            "{rows:#?}"
        );
        assert!(
            rows.iter()
                .any(|r| r.contains("--output-streams-max-length"))
        );
        cell.outputs.push(stream(StreamName::Stdout, "x".repeat(2)));
        assert!(!flagged(&cell), "4,097 bytes is not the service's cut");
        cell.outputs = vec![stream(StreamName::Stderr, "e".repeat(4096))];
        assert!(flagged(&cell), "stderr too");
        // A code cell: 4,096 characters (the default outputStreamsMaxLength).
        cell.exit_code = None;
        cell.outputs = vec![stream(StreamName::Stdout, "é".repeat(4096))];
        assert!(flagged(&cell));
        cell.outputs = vec![stream(StreamName::Stdout, "x".repeat(4095))];
        assert!(!flagged(&cell));
        // Four bytes a character: 4,096 characters are 16,384 bytes, the most
        // a stream of the cap's length can be.
        cell.outputs = vec![stream(StreamName::Stdout, "😀".repeat(4096))];
        assert!(flagged(&cell));
        cell.outputs = vec![stream(StreamName::Stdout, "😀".repeat(4097))];
        assert!(!flagged(&cell));
    }

    /// Issue 29: what a cell's execution tried to reach through the egress
    /// proxy is one line under it, allowed and blocked alike.
    #[test]
    fn a_cells_network_attempts_are_one_line_under_it() {
        use crate::protocol::egress::{Decision, NetworkAttempt};
        let mut cell = unsettled("import urllib.request");
        cell.outcome = Some(CellOutcome::Succeeded);
        let attempt = |host: &str, port, decision| NetworkAttempt {
            host: host.into(),
            port,
            decision,
            via: crate::protocol::egress::Via::Proxy,
            bytes: 0,
            at: chrono::Utc::now(),
        };
        assert!(!rows_text(&cell, 100).iter().any(|r| r.contains("network:")));
        cell.network = vec![
            attempt("pypi.org", 443, Decision::Allowed),
            attempt("169.254.169.254", 80, Decision::Denied),
        ];
        let rows = rows_text(&cell, 100);
        assert!(
            rows.iter()
                .any(|r| r == "  network: pypi.org:443 allowed · 169.254.169.254:80 blocked"),
            "{rows:#?}"
        );
    }

    #[test]
    fn a_running_cell_shows_spinner_elapsed_and_limit() {
        let cell = unsettled("import time; time.sleep(9)");
        let running = |since| Some(Pending::Running { since: Some(since) });
        assert_eq!(
            pending_rows_text(&cell, running, 60)[1],
            "  ⠹ running 1.2 s (limit 3 min 40 s)"
        );
    }

    /// A cell not settled yet is drawn as the app says it is: queued, or
    /// running (with an elapsed time only when its start is known); with
    /// nothing waiting for its answer, it says it has none.
    #[test]
    fn an_unsettled_cell_shows_what_the_app_says_of_it() {
        let cell = unsettled("x");
        let queued = |_| Some(Pending::Queued);
        assert_eq!(pending_rows_text(&cell, queued, 60)[1], "  queued");
        let followed = |_| Some(Pending::Running { since: None });
        assert_eq!(
            pending_rows_text(&cell, followed, 60)[1],
            "  ⠋ running (limit 3 min 40 s)"
        );
        assert_eq!(rows_text(&cell, 60)[1], "  no answer");
    }

    /// A cell the notebook was quit while it ran says so, never as if it
    /// had finished, and keeps what it printed; one filled in from the
    /// flight recorder says where its outputs came from; a queued one that
    /// it was never sent.
    #[test]
    fn a_cell_quit_while_it_waited_says_so() {
        let quit = |was| crate::notebook::QuitWhile {
            was,
            identifier: "sp-1".into(),
            pool: None,
            execution_id: None,
            started_at: None,
            quit_at: None,
            recorded_seq: None,
        };
        let mut cell = unsettled("import time; time.sleep(5); print('done')");
        cell.outputs = vec![Output::Stream {
            name: StreamName::Stdout,
            text: "so far\n".into(),
        }];
        cell.quit_waiting(quit(crate::notebook::Waiting::Running));
        let rows = rows_text(&cell, 80);
        assert_eq!(rows[1].trim_end(), "so far");
        assert_eq!(
            rows[2].trim_end(),
            "  running when you quit: how it ended is not known here"
        );
        let mut recorded = unsettled("x");
        recorded.outcome = Some(CellOutcome::Succeeded);
        recorded.duration = Some(Duration::from_secs(5));
        cell.fill_from_record(recorded, 3);
        assert_eq!(
            rows_text(&cell, 80)[1].trim_end(),
            "  done in 5.0 s · ended after you quit: outputs from the flight recorder"
        );
        let mut queued = unsettled("y = 2");
        queued.quit_waiting(quit(crate::notebook::Waiting::Queued));
        assert_eq!(
            rows_text(&queued, 80)[1].trim_end(),
            "  queued when you quit: never sent"
        );
    }

    #[test]
    fn a_long_stdout_is_collapsed() {
        let text: String = (0..300).map(|i| format!("{i}\n")).collect();
        let cell = Cell {
            source: "for i in range(300): print(i)".into(),
            execution_count: 1,
            outputs: vec![Output::Stream {
                name: StreamName::Stdout,
                text: text.into(),
            }],
            outcome: Some(CellOutcome::Succeeded),
            duration: Some(Duration::from_millis(4)),
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        };
        let rows = rows_text(&cell, 80);
        assert_eq!(rows.len(), 1 + 20 + 1 + 10 + 2);
        assert_eq!(
            rows[21],
            "… 300 lines, 1 kB in all — Ctrl+O opens them in the pager"
        );
        assert_eq!(rows[31], "299");
    }

    #[test]
    fn a_cell_reads_like_a_console() {
        let cell = Cell {
            source: "print(x)\nx".into(),
            execution_count: 2,
            outputs: vec![
                Output::Stream {
                    name: StreamName::Stdout,
                    text: "42\n".into(),
                },
                Output::ExecuteResult {
                    execution_count: 2,
                    text: "42".into(),
                    json: Some(json!(42)),
                },
            ],
            outcome: Some(CellOutcome::Succeeded),
            duration: Some(Duration::from_millis(4)),
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        };
        assert_eq!(
            rows_text(&cell, 40),
            vec![
                "In [2]: print(x)",
                "   ...: x",
                "42",
                "Out[2]: 42",
                "  done in 4 ms",
                ""
            ]
        );
    }

    #[test]
    fn a_result_of_many_lines_starts_under_its_prompt() {
        let cell = Cell {
            source: "df".into(),
            execution_count: 6,
            outputs: vec![Output::ExecuteResult {
                execution_count: 6,
                text: "   a  b\n0  1  3\n1  2  4".into(),
                json: None,
            }],
            outcome: Some(CellOutcome::Succeeded),
            duration: Some(Duration::from_millis(4)),
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        };
        assert_eq!(
            rows_text(&cell, 40),
            vec![
                "In [6]: df",
                "Out[6]:",
                "   a  b",
                "0  1  3",
                "1  2  4",
                "  done in 4 ms",
                ""
            ]
        );
    }

    #[test]
    fn a_long_result_is_collapsed_under_its_prompt() {
        let text: String = (0..300).map(|i| format!("{i:>5}  row\n")).collect();
        let cell = Cell {
            source: "df".into(),
            execution_count: 7,
            outputs: vec![Output::ExecuteResult {
                execution_count: 7,
                text: text.trim_end().into(),
                json: None,
            }],
            outcome: Some(CellOutcome::Succeeded),
            duration: Some(Duration::from_millis(4)),
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        };
        let rows = rows_text(&cell, 80);
        assert_eq!(
            &rows[..4],
            ["In [7]: df", "Out[7]:", "    0  row", "    1  row"]
        );
    }

    #[test]
    fn broken_images_and_errors_are_shown_as_text() {
        let cell = Cell {
            source: "1/0".into(),
            execution_count: 1,
            outputs: vec![
                Output::DisplayData {
                    format: "png".into(),
                    data: vec![],
                },
                Output::Error {
                    ename: "SessionError".into(),
                    evalue: "cannot reach the pool\x1b]52;c;aGk=\x07".into(),
                    traceback: vec![],
                },
            ],
            outcome: Some(CellOutcome::Failed),
            duration: None,
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        };
        assert_eq!(
            rows_text(&cell, 80),
            vec![
                "In [1]: 1/0",
                "[image not shown: image not decoded]",
                "SessionError: cannot reach the pool",
                "  failed",
                ""
            ]
        );
    }

    #[test]
    fn a_service_pool_s_running_cell_says_when_its_output_comes() {
        let theme = Theme::dark();
        let mut clock = RunClock {
            now: Instant::now(),
            limit: None,
            output_at_end: true,
        };
        let line = running_line(None, &clock, &theme).to_string();
        assert!(line.contains("output arrives when the cell ends"), "{line}");
        clock.output_at_end = false;
        let line = running_line(None, &clock, &theme).to_string();
        assert!(!line.contains("output arrives"), "{line}");
    }
}
