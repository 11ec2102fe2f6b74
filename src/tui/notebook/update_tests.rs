//! The notebook's reducer on its own state, without an `App`: what a key
//! changes in [`NotebookUi`] and what it hands back.

use std::time::Instant;

use pretty_assertions::assert_eq;

use super::*;
use crate::notebook::language::Language;
use crate::tui::notebook::cell_view::Pending;

fn cx(keymap: &Keymap) -> NotebookCx<'_> {
    NotebookCx {
        keymap,
        language: Language::Python,
        followed: &[],
        api_version: crate::protocol::ApiVersion::V2025_10_02,
    }
}

/// Types `code` and runs it: the run the execution names.
fn run(notebook: &mut NotebookUi, keymap: &Keymap, code: &str) -> RunId {
    notebook.editor.paste(code);
    match notebook
        .update(NotebookAction::RunCell, &cx(keymap))
        .as_slice()
    {
        [
            Out::Effect(Effect::Execute {
                run,
                code: sent,
                stdin: None,
                stop_on_error: true,
                output_streams_max_length: None,
            }),
        ] => {
            assert_eq!(sent, code);
            *run
        }
        other => panic!("expected one execution, got {other:?}"),
    }
}

#[test]
fn running_a_cell_queues_it_and_hands_the_execution_back() {
    let keymap = Keymap::default();
    let mut notebook = NotebookUi::new(Language::Python);
    assert!(
        notebook
            .update(NotebookAction::RunCell, &cx(&keymap))
            .is_empty(),
        "empty editor"
    );
    run(&mut notebook, &keymap, "1 + 1");
    assert_eq!(notebook.cells().len(), 1);
    assert_eq!(notebook.cells()[0].source, "1 + 1");
    assert!(notebook.editor.is_empty());
    assert_eq!(notebook.pending(), 1);
    let pending = notebook.pending_cells([]);
    assert_eq!(pending.get(&0), Some(&Pending::Queued));
    // A cell the follower shows while another client runs it is pending too.
    let pending = notebook.pending_cells([5]);
    assert_eq!(pending.get(&5), Some(&Pending::Running { since: None }));
}

#[test]
fn a_queued_cell_stopped_will_not_run() {
    let keymap = Keymap::default();
    let mut notebook = NotebookUi::new(Language::Python);
    let first = run(&mut notebook, &keymap, "a = 1");
    let second = run(&mut notebook, &keymap, "b = 2");
    notebook.execution_started(first, Instant::now());
    notebook.select(1);
    let outs = notebook.update(NotebookAction::StopCell, &cx(&keymap));
    match outs.as_slice() {
        [Out::Notice(notice), Out::Effect(Effect::Abandon { run })] => {
            assert_eq!(notice, "In [2] will not run");
            assert_eq!(*run, second);
        }
        other => panic!("expected a notice and an abandon, got {other:?}"),
    }
    assert_eq!(notebook.pending(), 1, "the first still runs");
    assert_eq!(notebook.cells()[1].outcome, Some(CellOutcome::Failed));
    // Its late reply is stale: nothing changes.
    let mut images = crate::tui::widgets::image::ImageStore::default();
    let failed = Err(crate::session::Failure::new(
        crate::session::FailureKind::Timeout,
        "late",
    ));
    assert!(
        notebook
            .execution_finished(second, failed, None, Vec::new(), &mut images)
            .is_empty()
    );
}

#[test]
fn the_selection_is_clamped_to_the_notebook() {
    let keymap = Keymap::default();
    let mut notebook = NotebookUi::new(Language::Python);
    notebook.update(NotebookAction::SelectCell(-1), &cx(&keymap));
    assert_eq!(notebook.selected, None, "no cell to select");
    for code in ["a", "b", "c"] {
        notebook.book.push(code.into());
    }
    notebook.select(1);
    notebook.update(NotebookAction::SelectCell(-5), &cx(&keymap));
    assert_eq!(notebook.selected, Some(0));
    notebook.update(NotebookAction::SelectCell(9), &cx(&keymap));
    assert_eq!(notebook.selected, Some(2));
}

#[test]
fn ctrl_c_with_nothing_running_is_the_apps_quit_window() {
    let keymap = Keymap::default();
    let mut notebook = NotebookUi::new(Language::Python);
    let outs = notebook.update(NotebookAction::Interrupt, &cx(&keymap));
    assert!(
        matches!(
            outs.as_slice(),
            [Out::Request(NotebookRequest::NothingToInterrupt)]
        ),
        "{outs:?}"
    );
}

#[test]
fn ctrl_c_in_the_editor_stops_the_running_cell_first_then_clears_the_cell() {
    let keymap = Keymap::default();
    let mut notebook = NotebookUi::new(Language::Python);
    // The service: no interrupt, a stop abandons the cell.
    notebook.can_interrupt = false;
    let first = run(&mut notebook, &keymap, "import time; time.sleep(60)");
    notebook.execution_started(first, Instant::now());
    notebook.editor.paste("x = 1");
    // A cell runs: Ctrl+C stops it; the text typed meanwhile stays.
    let outs = notebook.update(NotebookAction::ClearOrInterrupt, &cx(&keymap));
    assert!(
        outs.iter().any(|o| matches!(
            o,
            Out::Effect(Effect::Abandon { run } | Effect::Interrupt { run }) if *run == first
        )),
        "{outs:?}"
    );
    assert_eq!(notebook.editor.lines(), ["x = 1"]);
    // Nothing runs: Ctrl+C clears the cell, saying how to get it back.
    let outs = notebook.update(NotebookAction::ClearOrInterrupt, &cx(&keymap));
    match outs.as_slice() {
        [Out::Notice(notice), Out::Request(NotebookRequest::Cleared)] => {
            assert_eq!(notice, "cell cleared: Ctrl+Z or Ctrl+Y brings it back");
        }
        other => panic!("expected a notice and the quit window closed, got {other:?}"),
    }
    assert!(notebook.editor.is_empty());
    // The editor is empty: the app's quit window.
    let outs = notebook.update(NotebookAction::ClearOrInterrupt, &cx(&keymap));
    assert!(
        matches!(
            outs.as_slice(),
            [Out::Request(NotebookRequest::NothingToInterrupt)]
        ),
        "{outs:?}"
    );
    notebook.update(NotebookAction::Undo, &cx(&keymap));
    assert_eq!(notebook.editor.lines(), ["x = 1"]);
}

/// A finished code cell whose stdout is `len` characters.
fn finished_with_stdout(notebook: &mut NotebookUi, len: usize) -> usize {
    let index = notebook.book.push("print('x' * 10000)".to_string());
    let cell = notebook.book.cell_mut(index).expect("the cell");
    cell.execution_count = 1;
    cell.outcome = Some(CellOutcome::Succeeded);
    cell.outputs = vec![crate::notebook::Output::Stream {
        name: crate::notebook::StreamName::Stdout,
        text: "x".repeat(len).into(),
    }];
    index
}

/// Issue 28: `m` runs a cut cell again as a new cell asking for ten times
/// its output (the service's default cut is 4,096 characters); a cell that
/// is not cut, or a pool whose api-version has no outputStreamsMaxLength,
/// gets a notice and no execution.
#[test]
fn m_runs_a_cut_cell_again_asking_for_ten_times_the_output() {
    let keymap = Keymap::default();
    let mut notebook = NotebookUi::default();
    notebook.editor.paste("draft");
    finished_with_stdout(&mut notebook, 4096);
    let outs = notebook.update(NotebookAction::RunWithMoreOutput, &cx(&keymap));
    match outs.as_slice() {
        [
            Out::Effect(Effect::Execute {
                code,
                output_streams_max_length: Some(40960),
                ..
            }),
            Out::Notice(notice),
        ] => {
            assert_eq!(code, "print('x' * 10000)");
            assert_eq!(
                notice,
                "running In [1] again with outputStreamsMaxLength 40,960"
            );
        }
        other => panic!("expected the execution and a notice, got {other:?}"),
    }
    assert_eq!(notebook.book.cells.len(), 2);
    assert_eq!(
        notebook.book.cells[1].output_streams_max_length,
        Some(40960)
    );
    assert_eq!(notebook.editor.source(), "draft", "the typed text stays");

    // An older api-version cannot ask.
    let mut old = cx(&keymap);
    old.api_version = crate::protocol::ApiVersion::V2024_02_02;
    let mut notebook = NotebookUi::default();
    finished_with_stdout(&mut notebook, 4096);
    let outs = notebook.update(NotebookAction::RunWithMoreOutput, &old);
    assert!(
        matches!(outs.as_slice(), [Out::Notice(n)] if n.contains("needs api-version 2025-10-02-preview")),
        "{outs:?}"
    );
    // A whole output has nothing more to ask for.
    let mut notebook = NotebookUi::default();
    finished_with_stdout(&mut notebook, 100);
    let outs = notebook.update(NotebookAction::RunWithMoreOutput, &cx(&keymap));
    assert!(
        matches!(outs.as_slice(), [Out::Notice(n)] if n.contains("does not look cut")),
        "{outs:?}"
    );
}
