//! The files a recorded cell changed and a recorded session's replay, as a
//! user drives them: the read-only view's lines above each cell, `F`, a
//! preview built from the ledger's bytes, the save's questions; the uploads
//! redone before the cell that followed them and the verdict summary. No
//! terminal, no network, no ledger: the worker's answers are given here.

use std::time::Instant;

use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::super::recorded_marks::local_time;
use super::super::tests::{exec, test_app};
use super::*;
use crate::notebook::language::Language;
use crate::notebook::{Cell, CellInput, CellOutcome};
use crate::protocol::record::{ContentKept, FileChangeKind};
use crate::session::history::CellRecord;
use crate::session::replay::{Ending, PlannedCell, RecordedUpload, ReplayPlan};
use crate::session::{RecordedNotebook, RecordedRequest, SessionEvent, SessionsEvent};
use crate::tui::app::Then;

fn at() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-05-01T12:03:22Z")
        .unwrap()
        .into()
}

fn change(path: &str, content: ContentKept, sha: &str) -> FileChange {
    FileChange {
        path: path.into(),
        change: FileChangeKind::Added,
        size: 24,
        sha256: Some(sha.into()),
        content: Some(content),
        data: None,
    }
}

fn recorded_cell(source: &str) -> Cell {
    let mut cell = Cell {
        source: source.into(),
        execution_count: 1,
        outputs: Vec::new(),
        outcome: None,
        duration: None,
        exit_code: None,
        stdin: None,
        quit_while: None,
        output_streams_max_length: None,
        network: Vec::new(),
    };
    cell.finish(exec("done\n", None), None);
    cell
}

/// An agent's session: one cell that wrote two files, one kept.
fn agent_notebook() -> Box<RecordedNotebook> {
    let record = CellRecord {
        seq: 7,
        pool: "local".into(),
        identifier: "agent-1".into(),
        at: at(),
        duration_ms: 1250.0,
        client_gone: true,
        files: vec![
            change("/mnt/data/out/report.csv", ContentKept::Kept, "aa"),
            change("/mnt/data/huge\u{1b}[2J.bin", ContentKept::TooBig, "bb"),
        ],
        files_note: None,
        uploads_before: vec![RecordedUpload {
            name: "input.csv".into(),
            sha256: Some("cc".into()),
            size: 21,
        }],
        ending: Ending::Status(crate::protocol::ExecutionStatus::Succeeded),
    };
    Box::new(RecordedNotebook {
        cells: vec![recorded_cell("write_report()")],
        calls: vec![(Some("agent/1.0".into()), 7)],
        language: Language::Python,
        images: vec![],
        file_calls: 1,
        missing_images: 0,
        last_seq: Some(7),
        records: vec![record],
        uploads_after: vec![],
    })
}

fn shown_app() -> App {
    let mut app = test_app();
    let session = crate::ledger::read::RecordedSession {
        pool: "local".into(),
        identifier: "agent-1".into(),
        calls: 2,
        cells: 1,
        first: at(),
        last: at(),
        client: Some("agent/1.0".into()),
        first_client: Some("agent/1.0".into()),
    };
    let effects = app.read_recorded(&session, Then::View);
    let [Effect::Sessions(SessionsCommand::OpenRecorded(request))] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    let request: RecordedRequest = request.clone();
    app.handle_event(
        SessionEvent::Sessions(SessionsEvent::OpenedRecorded {
            request,
            result: Ok(agent_notebook()),
        }),
        Instant::now(),
    );
    app
}

fn key(app: &mut App, c: char) -> Vec<Effect> {
    let input = Input {
        key: Key::Char(c),
        ..Input::default()
    };
    app.update(Action::Edit(input), Instant::now())
}

fn press(app: &mut App, k: Key) -> Vec<Effect> {
    let input = Input {
        key: k,
        ..Input::default()
    };
    app.update(Action::Edit(input), Instant::now())
}

/// The screen as text, the local time of the record replaced (it depends on
/// the machine's time zone).
fn screen(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| super::super::view::draw(f, app, Instant::now()))
        .unwrap();
    let buf = terminal.backend().buffer().clone();
    let rows: Vec<String> = (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .filter_map(|x| buf.cell((x, y)).map(|c| c.symbol().to_string()))
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    rows.join("\n").replace(&local_time(at()), "<local time>")
}

#[test]
fn a_recorded_cell_says_who_when_and_what_it_changed_folded_until_selected() {
    let mut app = shown_app();
    let folded = screen(&mut app, 80, 24);
    assert!(
        folded.contains("ran by agent/1.0 · <local time> · took 1.2 s · client gone"),
        "{folded}"
    );
    assert!(
        folded.contains("after upload of input.csv (21 B)"),
        "{folded}"
    );
    assert!(
        folded.contains("2 file(s) changed (select the cell"),
        "{folded}"
    );
    insta::assert_snapshot!("recorded_cell_folded_80x24", folded);
    app.notebook.selected = Some(0);
    app.focus = crate::tui::app::Focus::Notebook;
    let open = screen(&mut app, 160, 48);
    assert!(
        open.contains("added    /mnt/data/out/report.csv  24 B"),
        "{open}"
    );
    assert!(open.contains("(too big to keep)"), "{open}");
    assert!(!open.contains('\u{1b}'), "{open:?}");
    insta::assert_snapshot!("recorded_cell_open_160x48", open);
}

#[test]
fn a_changed_file_is_previewed_from_the_ledger_and_saved_after_asking() {
    let mut app = shown_app();
    app.notebook.selected = Some(0);
    app.focus = crate::tui::app::Focus::Notebook;
    assert!(app.update(Action::RecordedFiles, Instant::now()).is_empty());
    assert_eq!(app.overlay(), Some(Overlay::RecordedFiles));
    insta::assert_snapshot!("recorded_files_list_80x24", screen(&mut app, 80, 24));
    // Enter: the worker reads the bytes (the session is gone: the ledger's).
    let effects = press(&mut app, Key::Enter);
    let [Effect::Sessions(SessionsCommand::ReadRecordedFile(request))] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(
        (request.seq, request.file.path.as_str()),
        (7, "/mnt/data/out/report.csv")
    );
    let bytes = b"city,n\nOslo,3\nLima,4\n".to_vec();
    let effects = app.handle_event(
        SessionEvent::Sessions(SessionsEvent::RecordedFileRead {
            request: request.clone(),
            result: Ok(Box::new(RecordedFileRead {
                bytes: Ok(bytes),
                diff: Some("    added /mnt/data/out/report.csv\n    +city,n\n".into()),
            })),
        }),
        Instant::now(),
    );
    // The preview is built off the UI task, with the files pane's builder.
    let [Effect::BuildPreview(job)] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_ne!(job.generation & PREVIEW_BIT, 0);
    let preview = job.build();
    app.preview_built(job.generation, Ok(Box::new(preview)));
    let table = screen(&mut app, 80, 24);
    assert!(
        table.contains("Oslo") && table.contains("recorded out/report.csv"),
        "{table}"
    );
    insta::assert_snapshot!("recorded_file_preview_80x24", table);
    key(&mut app, 'd');
    let diff = screen(&mut app, 80, 24);
    assert!(
        diff.contains("+city,n") && diff.contains("diff of out/report.csv"),
        "{diff}"
    );

    // s: where to; an existing file is replaced only after a yes.
    key(&mut app, 's');
    let folder = tempfile::tempdir().unwrap();
    app.update(Action::Paste(String::new()), Instant::now());
    let Some(prompt) = app.prompt() else {
        panic!("no prompt")
    };
    assert!(matches!(
        prompt.purpose,
        Purpose::Recorded(RecordedPrompt::Folder(_))
    ));
    let Some(Layer::Prompt(prompt)) = app.overlays.close(Overlay::Prompt) else {
        panic!()
    };
    let Purpose::Recorded(asked) = prompt.purpose else {
        panic!()
    };
    let effects =
        app.recorded_file_answer(asked, Answer::Text(folder.path().display().to_string()));
    let [Effect::Sessions(SessionsCommand::SaveRecordedFile(save))] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(!save.replace);
    let there = folder.path().join("out").join("report.csv");
    app.recorded_file_saved(save.clone(), Saved::Exists(there.clone()));
    let effects = key(&mut app, 'y');
    let [Effect::Sessions(SessionsCommand::SaveRecordedFile(again))] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert!(again.replace);
    app.recorded_file_saved(again.clone(), Saved::Written(there, 21));
    assert!(
        app.notice
            .as_deref()
            .unwrap_or("")
            .contains("sha256 checked")
    );
}

#[test]
fn a_replay_redoes_uploads_before_their_cell_and_sums_up_like_the_cli() {
    let mut app = test_app();
    let upload = RecordedUpload {
        name: "input.csv".into(),
        sha256: Some("cc".into()),
        size: 21,
    };
    let late = RecordedUpload {
        name: "late.csv".into(),
        sha256: Some("dd".into()),
        size: 5,
    };
    let plan = ReplayPlan {
        source: "agent-1".into(),
        cells: vec![
            PlannedCell {
                input: CellInput {
                    source: "print(open('/mnt/data/input.csv').read())".into(),
                    stdin: None,
                },
                uploads: vec![upload.clone()],
                recorded: Ending::Status(crate::protocol::ExecutionStatus::Succeeded),
            },
            PlannedCell {
                input: CellInput {
                    source: "1/0".into(),
                    stdin: None,
                },
                uploads: vec![],
                recorded: Ending::Status(crate::protocol::ExecutionStatus::Succeeded),
            },
        ],
        uploads_after: vec![late.clone()],
        shell: false,
    };
    let effects = app.replay_recorded(plan);
    // The upload recorded after the last cell goes with it, to be redone
    // once it has run.
    assert!(
        effects.iter().any(|e| matches!(e, Effect::ReplayUploads { uploads, after, .. } if uploads.is_empty() && after == &vec![late.clone()])),
        "{effects:?}"
    );
    let runs: Vec<crate::session::RunId> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Execute { run, .. } => Some(*run),
            _ => None,
        })
        .collect();
    assert!(
        matches!(effects.as_slice(), [Effect::ReplayUploads { run, uploads, .. }, Effect::Execute { run: first, .. }, Effect::ReplayUploads { .. }, Effect::Execute { .. }] if run == first && uploads == &vec![upload.clone()]),
        "{effects:?}"
    );
    let now = Instant::now();
    app.handle_event(
        SessionEvent::UploadsRedone {
            run: runs[0],
            outcomes: vec![(upload, Ok(21))],
        },
        now,
    );
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: runs[0],
            outcome: Ok(exec("city,n\n", None)),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    let mut failed = exec("", None);
    failed.status = crate::protocol::ExecutionStatus::Failed;
    // The worker redoes the late upload after the last cell ran, and says so
    // before the cell's outcome.
    app.handle_event(
        SessionEvent::UploadsRedone {
            run: runs[1],
            outcomes: vec![(late, Ok(5))],
        },
        now,
    );
    app.handle_event(
        SessionEvent::ExecutionFinished {
            run: runs[1],
            outcome: Ok(failed),
            exit_code: None,
            images: vec![],
        },
        now,
    );
    assert_eq!(
        app.notice.as_deref(),
        Some("replay of agent-1: 1 as recorded, 1 differ")
    );
    let shown = screen(&mut app, 80, 24);
    assert!(
        shown.contains("upload of input.csv redone (21 B)"),
        "{shown}"
    );
    assert!(shown.contains("upload of late.csv redone (5 B)"), "{shown}");
    assert!(shown.contains("as recorded (Succeeded)"), "{shown}");
    assert!(
        shown.contains("DIFFERS: Failed now, Succeeded when recorded"),
        "{shown}"
    );
    assert!(!shown.contains("ran in an earlier"), "{shown}");
    insta::assert_snapshot!("replay_verdicts_80x24", shown);
    assert_eq!(
        app.notebook.book.cells[1].outcome,
        Some(CellOutcome::Failed)
    );
}
