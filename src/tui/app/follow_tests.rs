//! State tests of following (`tui/app/follow.rs`): no terminal, no network.

use std::time::Instant;

use pretty_assertions::assert_eq;

use super::super::tests::{exec, run, test_app};
use super::*;
use crate::notebook::CellOutcome;
use crate::protocol::events::StreamName as LiveStream;
use crate::protocol::record::Entry;
use crate::session::{RunId, SessionEvent};
use crate::tui::notebook::cell_view::Pending;

/// LangChain's `User-Agent`, with an escape sequence in it.
const LANGCHAIN: &str = "langchain-azure-dynamic-sessions/1.0.4 (Language=\u{1b}[31mPython)";

fn entry(code: &str, stdout: &str) -> Entry {
    entry_by(1, code, stdout, LANGCHAIN)
}

/// Call `seq` of `client` in the test app's session: `code` printed `stdout`.
pub(crate) fn entry_by(seq: i64, code: &str, stdout: &str, client: &str) -> Entry {
    Entry {
        seq,
        at: chrono::Utc::now(),
        duration_ms: 4.0,
        pool: "local".into(),
        identifier: "sessionpad-test0001".into(),
        client: Some(client.into()),
        kind: CallKind::Code,
        execution_id: Some(format!("exec-{seq}")),
        code: Some(code.into()),
        stdin: None,
        status: Some("Succeeded".into()),
        exit_code: None,
        stdout: Some(stdout.into()),
        stderr: None,
        result: None,
        images: vec![],
        file: None,
        client_gone: false,
        files: vec![],
        files_note: None,
        network: None,
    }
}

fn followed(code: &str, stdout: &str) -> SessionEvent {
    followed_entry(entry(code, stdout))
}

/// The worker's news of another client's recorded call `entry`.
pub(crate) fn followed_entry(entry: Entry) -> SessionEvent {
    let call = crate::protocol::events::RecordedCall {
        entry,
        image_data: vec![],
    };
    let execution = crate::session::follow::execution_of(&call);
    SessionEvent::Followed(Box::new(crate::session::Followed {
        entry: call.entry,
        execution,
        images: vec![],
    }))
}

fn chunk(text: &str, client: &str) -> SessionEvent {
    SessionEvent::LiveOutput {
        own: client.starts_with("sessionpad/"),
        chunk: OutputChunk {
            identifier: "sessionpad-test0001".into(),
            execution_id: "exec-1".into(),
            client: Some(client.into()),
            stream: LiveStream::Stdout,
            text: text.into(),
        },
    }
}

/// The reply to `run`: succeeded, with `text` on stdout.
fn reply(app: &mut App, run: RunId, text: &str, now: Instant) {
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run,
            outcome: Ok(exec(text, None)),
            exit_code: None,
            images: vec![],
        },
        now,
    );
}

/// A cell's outputs when it printed `text` on stdout alone.
fn stdout(text: &str) -> Vec<Output> {
    vec![Output::Stream {
        name: StreamName::Stdout,
        text: text.into(),
    }]
}

#[test]
fn another_client_s_cell_shows_only_while_following_marked_with_its_client() {
    let mut app = test_app();
    let now = Instant::now();
    app.handle_event(followed("x = 1", ""), now);
    assert!(
        app.notebook.book.cells.is_empty(),
        "not following: not shown"
    );
    app.set_following(true);
    app.handle_event(followed("print('hi')", "hi\n"), now);
    assert_eq!(app.notebook.book.cells.len(), 1);
    let cell = &app.notebook.book.cells[0];
    assert_eq!(cell.source, "print('hi')");
    assert_eq!(cell.outcome, Some(CellOutcome::Succeeded));
    assert_eq!(
        cell.outputs,
        vec![Output::Stream {
            name: StreamName::Stdout,
            text: "hi\n".into()
        }]
    );
    assert_eq!(
        app.follow.marks(),
        vec![(
            0,
            "ran by langchain-azure-dynamic-sessions/1.0.4".to_string()
        )]
    );
    // Another session's call is not this notebook's.
    let mut other = followed("y = 2", "");
    if let SessionEvent::Followed(f) = &mut other {
        f.entry.identifier = "someone-else".into();
    }
    app.handle_event(other, now);
    assert_eq!(app.notebook.book.cells.len(), 1);
    app.set_following(false);
    app.handle_event(followed("z = 3", ""), now);
    assert_eq!(app.notebook.book.cells.len(), 1);
}

#[test]
fn the_person_takes_over_with_a_cell_of_their_own() {
    let mut app = test_app();
    let now = Instant::now();
    app.set_following(true);
    app.handle_event(followed("x = 1", ""), now);
    // `run` checks that the cell is sent to the worker (the same session).
    run(&mut app, "x + 1", now);
    assert_eq!(app.notebook.book.cells.len(), 2);
    assert!(
        !app.follow.clients.contains_key(&1),
        "the person's own cell"
    );
}

#[test]
fn a_running_cell_shows_its_output_as_printed_and_the_reply_settles_it() {
    let mut app = test_app();
    let now = Instant::now();
    let run = run(&mut app, "long()", now);
    app.handle_event(SessionEvent::ExecutionStarted(run), now);
    app.handle_event(chunk("first\n", "sessionpad/0.1.0 (pid 1)"), now);
    app.handle_event(chunk("second\n", "sessionpad/0.1.0 (pid 1)"), now);
    assert_eq!(
        app.notebook.book.cells[0].outputs,
        vec![Output::Stream {
            name: StreamName::Stdout,
            text: "first\nsecond\n".into()
        }]
    );
    assert_eq!(
        app.pending_of(0),
        Some(Pending::Running { since: Some(now) })
    );
    // Not following: another client's running output is not shown.
    app.handle_event(chunk("theirs\n", "agent/1"), now);
    assert_eq!(app.notebook.book.cells.len(), 1);
    reply(&mut app, run, "first\nsecond\nthird\n", now);
    assert_eq!(
        app.notebook.book.cells[0].outputs,
        stdout("first\nsecond\nthird\n"),
        "the reply's outputs, not the streamed ones twice"
    );
}

/// A running cell printing megabytes keeps its last 256 KiB or so, from a
/// line's start, after a line saying so; the reply brings all of it.
#[test]
fn a_running_cell_keeps_the_tail_of_a_huge_output_and_the_reply_brings_it_all() {
    use super::{LIVE_CUT_MARK, LIVE_KEEP, LIVE_MAX};
    let mut app = test_app();
    let now = Instant::now();
    let run = run(&mut app, "huge()", now);
    app.handle_event(SessionEvent::ExecutionStarted(run), now);
    let mut all = String::new();
    for n in 0..200_000 {
        let line = format!("line {n}\n");
        all.push_str(&line);
        app.handle_event(chunk(&line, "sessionpad/0.1.0 (pid 1)"), now);
    }
    let outputs = &app.notebook.book.cells[0].outputs;
    let [Output::Stream { text, .. }] = &outputs[..] else {
        panic!("one output: {:?}", outputs.len());
    };
    let tail = text.strip_prefix(LIVE_CUT_MARK).expect("the mark first");
    assert!(
        tail.len() <= LIVE_MAX && tail.len() >= LIVE_KEEP / 2,
        "{}",
        tail.len()
    );
    assert!(tail.starts_with("line ") && tail.ends_with("line 199999\n"));
    assert!(all.ends_with(tail), "the tail as printed");
    reply(&mut app, run, &all, now);
    assert_eq!(app.notebook.book.cells[0].outputs, stdout(&all));
}

/// Streams taking turns (each turn its own output) are bounded together.
#[test]
fn interleaved_streams_of_a_running_cell_are_bounded_together() {
    use super::{LIVE_CUT_MARK, LIVE_MAX, LiveTail};
    let mut tail = LiveTail::default();
    let mut outputs = Vec::new();
    for n in 0..100_000 {
        let name = if n % 2 == 0 {
            StreamName::Stdout
        } else {
            StreamName::Stderr
        };
        outputs.push(Output::Stream {
            name,
            text: format!("{n:08}\n").into(),
        });
        tail.grew(0, &mut outputs, 9);
    }
    let len = |o: &Output| match o {
        Output::Stream { text, .. } => text.len(),
        _ => 0,
    };
    assert!(matches!(&outputs[0], Output::Stream { text, .. } if text.starts_with(LIVE_CUT_MARK)));
    assert!(outputs.iter().map(len).sum::<usize>() <= LIVE_MAX);
    assert!(outputs.len() < LIVE_MAX / 64, "{} outputs", outputs.len());
    assert!(matches!(outputs.last(), Some(Output::Stream { text, .. }) if &**text == "00099999\n"));
    assert_eq!(
        outputs
            .iter()
            .filter(|o| matches!(o, Output::Stream { text, .. } if text.contains(LIVE_CUT_MARK)))
            .count(),
        1,
        "one mark"
    );
}

#[test]
fn an_agent_s_running_cell_is_a_placeholder_the_recorded_call_fills_in() {
    let mut app = test_app();
    let now = Instant::now();
    app.set_following(true);
    app.handle_event(chunk("agent says\n", "agent/1"), now);
    assert_eq!(app.notebook.book.cells.len(), 1);
    assert_eq!(
        app.pending_of(0),
        Some(Pending::Running { since: None }),
        "running, since the follower does not know when"
    );
    assert_eq!(app.notebook.book.cells[0].outcome, None);
    assert!(
        app.follow.marks()[0]
            .1
            .contains("its code shows when it ends")
    );
    app.handle_event(followed("print('agent says')", "agent says\n"), now);
    assert_eq!(app.notebook.book.cells.len(), 1, "the same cell");
    assert_eq!(app.notebook.book.cells[0].source, "print('agent says')");
    assert_eq!(
        app.notebook.book.cells[0].outcome,
        Some(CellOutcome::Succeeded)
    );
    assert_eq!(app.pending_of(0), None);
    assert!(!app.follow.marks()[0].1.contains("its code shows"));
}

#[test]
fn a_service_pool_s_running_cell_says_its_output_comes_at_the_end() {
    let app = test_app();
    assert!(!app.output_arrives_at_end(), "the local pool streams");
    let mut remote = test_app();
    remote.config.pool_label = "eastus.dynamicsessions.io".into();
    assert!(remote.output_arrives_at_end());
    remote.isolation = Some(crate::protocol::Isolation::unsandboxed("test"));
    assert!(!remote.output_arrives_at_end(), "a serve says it is local");
}
