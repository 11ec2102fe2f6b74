//! A recorded session (the flight recorder's ledger, [`crate::ledger`]) as
//! notebook cells: each recorded execution of code or of a shell command
//! becomes a finished [`Cell`] with the outputs it had (stdout, stderr, the
//! images with their bytes, the value, the traceback as an `error`), as if it
//! had run in the notebook; file calls are not cells and are counted apart.
//! What `sessionpad log ID --ipynb FILE` writes and what replaying a recorded
//! session runs again.

use super::language::Language;
use super::{Cell, CellOutcome};
use crate::protocol::ExecutionImage;
use crate::protocol::record::{CallKind, Entry, RecordedImage};
/// The cells of a recorded session.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCells {
    /// One per recorded execution, oldest first, numbered from 1.
    pub cells: Vec<Cell>,
    /// Per cell: the client that ran it (its `User-Agent`, as recorded;
    /// untrusted text) and the call's ledger `seq`.
    pub calls: Vec<(Option<String>, i64)>,
    /// The language the cells are in: Shell when the executions were shell
    /// commands, else the one the caller named.
    pub language: Language,
    /// File calls (uploads, downloads, deletes) left out.
    pub file_calls: usize,
    /// Images whose bytes the ledger no longer had (pruned): left out.
    pub missing_images: usize,
}

/// The cells of `entries` (one session's recorded calls, oldest first);
/// `code_language` is the language of code executions (the ledger does not
/// say whether a pool ran Python or JavaScript); `image` gives a recorded
/// image's bytes (from [`crate::ledger::read::image_bytes`]), `None` when gone.
pub fn cells(
    entries: &[Entry],
    code_language: Language,
    image: &mut dyn FnMut(&RecordedImage) -> Option<Vec<u8>>,
) -> RecordedCells {
    let mut out = RecordedCells {
        cells: Vec::new(),
        calls: Vec::new(),
        language: code_language,
        file_calls: 0,
        missing_images: 0,
    };
    for e in entries {
        if !matches!(e.kind, CallKind::Code | CallKind::Shell) {
            out.file_calls += 1;
            continue;
        }
        if e.kind == CallKind::Shell {
            out.language = Language::Shell;
        }
        let mut images = Vec::new();
        for recorded in &e.images {
            match image(recorded) {
                Some(data) => images.push(ExecutionImage {
                    format: recorded.format.clone(),
                    data,
                }),
                None => out.missing_images += 1,
            }
        }
        let Some(exec) = e.execution(images) else {
            continue;
        };
        let mut cell = Cell {
            source: e.code.clone().unwrap_or_default(),
            execution_count: u32::try_from(out.cells.len() + 1).unwrap_or(u32::MAX),
            outputs: Vec::new(),
            outcome: None,
            duration: None,
            exit_code: None,
            stdin: e.stdin.clone(),
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        };
        let exit_code = (e.kind == CallKind::Shell).then_some(e.exit_code).flatten();
        cell.finish(exec, exit_code);
        if e.kind == CallKind::Shell && exit_code.is_none() {
            // A command that did not finish (timed out, killed) has no code.
            cell.outcome = Some(CellOutcome::Failed);
        }
        out.cells.push(cell);
        out.calls.push((e.client.clone(), e.seq));
    }
    out
}

/// The cells of `entries` with their images read from the ledger `conn`
/// they came from ([`crate::ledger::read::image_bytes`]); as [`cells`].
///
/// # Errors
///
/// SQLite's error reading an image (an image merely pruned is counted in
/// [`RecordedCells::missing_images`], not an error).
pub fn read(
    conn: &rusqlite::Connection,
    entries: &[Entry],
    code_language: Language,
) -> rusqlite::Result<RecordedCells> {
    let mut failed = None;
    let got = cells(
        entries,
        code_language,
        &mut |image| match crate::ledger::read::image_bytes(conn, &image.sha256) {
            Ok(bytes) => bytes,
            Err(e) => {
                failed.get_or_insert(e);
                None
            }
        },
    );
    match failed {
        Some(e) => Err(e),
        None => Ok(got),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::Utc;
    use serde_json::json;

    use super::*;
    use crate::notebook::{Output, StreamName};

    fn entry(kind: CallKind, code: &str) -> Entry {
        Entry {
            seq: 1,
            at: Utc::now(),
            duration_ms: 12.5,
            pool: "local".into(),
            identifier: "agent-1".into(),
            client: Some("agent/1.0".into()),
            kind,
            execution_id: None,
            code: Some(code.into()),
            stdin: None,
            status: Some("Succeeded".into()),
            exit_code: None,
            stdout: Some(String::new()),
            stderr: Some(String::new()),
            result: None,
            images: Vec::new(),
            file: None,
            client_gone: false,
            files: vec![],
            files_note: None,
            network: None,
        }
    }

    #[test]
    fn executions_become_finished_cells_and_file_calls_are_counted() {
        let mut ok = entry(CallKind::Code, "print('hi'); 6*7");
        ok.stdout = Some("hi\n".into());
        ok.result = Some(json!({"text": "42", "json": 42}));
        ok.images = vec![
            RecordedImage {
                format: "png".into(),
                sha256: "aa".into(),
                size: 3,
            },
            RecordedImage {
                format: "png".into(),
                sha256: "gone".into(),
                size: 3,
            },
        ];
        let mut failed = entry(CallKind::Code, "1/0");
        failed.status = Some("Failed".into());
        failed.stderr = Some(
            "Traceback (most recent call last):\n  File \"<cell>\", line 1\nZeroDivisionError: division by zero\n"
                .into(),
        );
        let upload = Entry {
            code: None,
            ..entry(CallKind::Upload, "")
        };
        let got = cells(&[ok, upload, failed], Language::Python, &mut |i| {
            (i.sha256 == "aa").then(|| b"png".to_vec())
        });
        assert_eq!((got.file_calls, got.missing_images), (1, 1));
        assert_eq!(got.language, Language::Python);
        let [first, second] = got.cells.as_slice() else {
            panic!("{got:?}")
        };
        assert_eq!(
            (first.execution_count, first.outcome),
            (1, Some(CellOutcome::Succeeded))
        );
        assert_eq!(first.duration, Some(Duration::from_micros(12_500)));
        assert_eq!(
            first.outputs,
            vec![
                Output::Stream {
                    name: StreamName::Stdout,
                    text: "hi\n".into()
                },
                Output::DisplayData {
                    format: "png".into(),
                    data: b"png".to_vec()
                },
                Output::ExecuteResult {
                    execution_count: 1,
                    text: "42".into(),
                    json: Some(json!(42))
                },
            ]
        );
        assert_eq!(
            (second.execution_count, second.outcome),
            (2, Some(CellOutcome::Failed))
        );
        assert!(
            matches!(&second.outputs[..], [Output::Error { ename, .. }] if ename == "ZeroDivisionError"),
            "{:?}",
            second.outputs
        );
    }

    #[test]
    fn shell_commands_keep_their_exit_code_and_stdin() {
        let mut cmd = entry(CallKind::Shell, "cat; exit 3");
        cmd.stdin = Some("abc\n".into());
        cmd.stdout = Some("abc\n".into());
        cmd.exit_code = Some(3);
        cmd.status = Some("Failed".into());
        let got = cells(&[cmd], Language::Python, &mut |_| None);
        assert_eq!(got.language, Language::Shell);
        let cell = &got.cells[0];
        assert_eq!(
            (cell.exit_code, cell.stdin.as_deref(), cell.outcome),
            (Some(3), Some("abc\n"), Some(CellOutcome::Failed))
        );
    }
}
