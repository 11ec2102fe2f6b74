use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn meta() -> NotebookMeta {
    NotebookMeta {
        pool: "local".into(),
        identifier: "sp-0123".into(),
        api_version: "2025-10-02-preview".into(),
        language: crate::notebook::language::Language::Python,
    }
}

fn cell(source: &str, count: u32, outputs: Vec<Output>, outcome: CellOutcome) -> Cell {
    Cell {
        source: source.into(),
        execution_count: count,
        outputs,
        outcome: Some(outcome),
        duration: Some(Duration::from_millis(12)),
        exit_code: None,
        stdin: None,
        quit_while: None,
        output_streams_max_length: None,
        network: Vec::new(),
    }
}

/// One cell of each output kind, and one that failed.
fn every_kind() -> Vec<Cell> {
    vec![
        cell(
            "print('a')\nimport sys; print('w', file=sys.stderr)\nx",
            1,
            vec![
                Output::Stream {
                    name: StreamName::Stdout,
                    text: "a\nb".into(),
                },
                Output::Stream {
                    name: StreamName::Stderr,
                    text: "w\n".into(),
                },
                Output::DisplayData {
                    format: "png".into(),
                    data: vec![0x89, b'P', b'N', b'G', 0, 255],
                },
                Output::ExecuteResult {
                    execution_count: 1,
                    text: "{'a': [1, 2.5, None, True]}".into(),
                    json: Some(json!({"a": [1, 2.5, null, true]})),
                },
                Output::Files {
                    line: "files: wrote hist.png, reports/describe.csv; changed notes.md".into(),
                },
            ],
            CellOutcome::Succeeded,
        ),
        cell(
            "'text'",
            2,
            vec![Output::ExecuteResult {
                execution_count: 2,
                text: "line 1\nline 2".into(),
                json: None,
            }],
            CellOutcome::Succeeded,
        ),
        cell(
            "1/0",
            3,
            vec![Output::Error {
                ename: "ZeroDivisionError".into(),
                evalue: "division by zero".into(),
                traceback: vec![
                    "Traceback (most recent call last):".into(),
                    "ZeroDivisionError: division by zero".into(),
                ],
            }],
            CellOutcome::Failed,
        ),
        Cell {
            duration: None,
            exit_code: None,
            stdin: None,
            ..cell("", 4, vec![], CellOutcome::Canceled)
        },
    ]
}

#[test]
fn every_output_kind_round_trips() {
    let cells = every_kind();
    let text = to_string(&cells, &meta());
    let back = from_str(&text).expect("reads what it wrote");
    assert_eq!(back.cells, cells);
    assert_eq!(back.meta, Some(meta()));
    assert_eq!(back.skipped, 0);
}

#[test]
fn the_document_has_the_nbformat_4_5_shape() {
    let doc = to_value(&every_kind(), &meta());
    assert_eq!(doc["nbformat"], 4);
    assert_eq!(doc["nbformat_minor"], 5);
    assert_eq!(doc["metadata"]["kernelspec"]["name"], "python3");
    assert_eq!(doc["metadata"]["language_info"]["name"], "python");
    assert_eq!(doc["metadata"]["sessionpad"]["identifier"], "sp-0123");
    let first = &doc["cells"][0];
    assert_eq!(first["id"], "cell-1");
    assert_eq!(
        first["source"],
        json!([
            "print('a')\n",
            "import sys; print('w', file=sys.stderr)\n",
            "x"
        ])
    );
    let outputs = first["outputs"].as_array().unwrap();
    assert_eq!(outputs[0]["output_type"], "stream");
    assert_eq!(outputs[0]["text"], json!(["a\n", "b"]));
    assert_eq!(outputs[2]["output_type"], "display_data");
    assert_eq!(outputs[2]["data"]["image/png"], "iVBORwD/");
    assert_eq!(outputs[3]["output_type"], "execute_result");
    assert_eq!(outputs[3]["execution_count"], 1);
    assert_eq!(outputs[3]["data"]["application/json"]["a"][1], 2.5);
    // text/plain holds what Python shows, not the JSON.
    assert_eq!(
        outputs[3]["data"]["text/plain"],
        json!(["{'a': [1, 2.5, None, True]}"])
    );
    // A string result is text only: it may be the repr of something that is not JSON.
    let text_result = &doc["cells"][1]["outputs"][0]["data"];
    assert_eq!(text_result["text/plain"], json!(["line 1\n", "line 2"]));
    assert!(text_result.get("application/json").is_none());
    assert_eq!(doc["cells"][2]["outputs"][0]["output_type"], "error");
    assert_eq!(
        doc["cells"][2]["metadata"]["sessionpad"]["status"],
        "failed"
    );
    assert!(to_string(&every_kind(), &meta()).ends_with("}\n"));
}

#[test]
fn jupyter_written_notebooks_are_read() {
    // Strings instead of line lists, markdown cells, a null count, base64 with line
    // breaks, an HTML display with a text fallback, no sessionpad metadata.
    let text = r##"{
     "nbformat": 4, "nbformat_minor": 4, "metadata": {},
     "cells": [
      {"cell_type": "markdown", "metadata": {}, "source": "# Title"},
      {"cell_type": "code", "execution_count": null, "metadata": {},
       "source": "x = 1\nx", "outputs": [
        {"output_type": "execute_result", "execution_count": 7, "metadata": {},
         "data": {"text/plain": ["1"]}},
        {"output_type": "display_data", "metadata": {},
         "data": {"image/png": "iVBO\nRwD/\n", "text/plain": "<Figure>"}},
        {"output_type": "display_data", "metadata": {},
         "data": {"text/html": "<b>hi</b>", "text/plain": "hi"}},
        {"output_type": "error", "ename": "E", "evalue": "v", "traceback": []}
       ]},
      {"cell_type": "raw", "metadata": {}, "source": []}
     ]
    }"##;
    let nb = from_str(text).expect("a Jupyter notebook");
    assert_eq!(nb.skipped, 2);
    assert_eq!(nb.meta, None);
    let c = &nb.cells[0];
    assert_eq!(c.source, "x = 1\nx");
    assert_eq!(c.execution_count, 1);
    assert_eq!(c.outcome, Some(CellOutcome::Failed));
    assert_eq!(
        c.outputs,
        vec![
            Output::ExecuteResult {
                execution_count: 7,
                text: "1".into(),
                json: None,
            },
            Output::DisplayData {
                format: "png".into(),
                data: vec![0x89, b'P', b'N', b'G', 0, 255]
            },
            Output::Stream {
                name: StreamName::Stdout,
                text: "hi".into()
            },
            Output::Error {
                ename: "E".into(),
                evalue: "v".into(),
                traceback: vec![]
            },
        ]
    );
}

#[test]
fn what_is_not_a_v4_notebook_is_refused() {
    assert!(matches!(from_str("{"), Err(IpynbError::Json(_))));
    assert!(matches!(
        from_str(r#"{"nbformat": 3, "worksheets": []}"#),
        Err(IpynbError::Shape(_))
    ));
    assert!(matches!(
        from_str(r#"{"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}"#),
        Err(IpynbError::Shape(m)) if m.starts_with("cell 1")
    ));
}

/// A Shell or Node.js pool's notebook says its language to Jupyter and
/// exports as a script in it; reading it back gives the language again.
#[test]
fn the_language_is_written_read_back_and_exported() {
    use crate::notebook::language::Language;
    let mut m = meta();
    m.language = Language::JavaScript;
    let cells = &every_kind()[..1];
    let text = to_string(cells, &m);
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["metadata"]["kernelspec"]["name"], "javascript");
    assert_eq!(doc["metadata"]["language_info"]["file_extension"], ".js");
    let read = from_str(&text).unwrap();
    assert_eq!(read.language, Language::JavaScript);
    assert_eq!(read.meta.unwrap().language, Language::JavaScript);
    assert!(
        to_script(cells, &m).starts_with("// sessionpad notebook: pool local")
            && to_script(cells, &m).contains("\n// %% In [1]\n"),
        "{}",
        to_script(cells, &m)
    );
    m.language = Language::Shell;
    let doc: Value = serde_json::from_str(&to_string(cells, &m)).unwrap();
    assert_eq!(doc["metadata"]["kernelspec"]["name"], "bash");
    assert_eq!(doc["metadata"]["language_info"]["name"], "bash");
    // A notebook of a language sessionpad does not run reads as Python's.
    let other = r#"{"nbformat": 4, "nbformat_minor": 5, "cells": [],
        "metadata": {"language_info": {"name": "R"}}}"#;
    assert_eq!(from_str(other).unwrap().language, Language::Python);
}

#[test]
fn python_export_marks_each_cell() {
    let py = to_script(&every_kind()[..3], &meta());
    assert_eq!(
        py,
        "# sessionpad notebook: pool local, identifier sp-0123\n\
         \n# %% In [1]\nprint('a')\nimport sys; print('w', file=sys.stderr)\nx\n\
         \n# %% In [2]\n'text'\n\
         \n# %% In [3]\n1/0\n"
    );
}

#[test]
fn a_hostile_identifier_cannot_leave_the_header_comment() {
    let mut m = meta();
    m.identifier = "x\nimport os; os.system('rm -rf ~')".into();
    let py = to_script(&[], &m);
    assert_eq!(py.lines().count(), 1);
}

#[test]
fn a_saved_result_is_the_python_form_of_the_execution() {
    use crate::protocol::{Execution, ExecutionStatus};
    // A reply without the Jupyter format: the JSON of `{'a': 1, 'b': None}`,
    // read from a Python pool.
    let (value, _) = crate::protocol::api::result_from_wire(
        Some(&json!({"a": 1, "b": null})),
        crate::protocol::api::ValueForm {
            jupyter: false,
            python: true,
        },
    );
    let exec = Execution {
        execution_count: None,
        id: None,
        status: ExecutionStatus::Succeeded,
        stdout: String::new(),
        stderr: String::new(),
        result: value,
        images: vec![],
        duration: Duration::from_millis(3),
        network: Vec::new(),
    };
    let mut c = cell("{'a': 1, 'b': None}", 1, vec![], CellOutcome::Succeeded);
    c.outcome = None;
    c.outputs = crate::notebook::outputs_from_execution(exec, 1);
    let doc = to_value(&[c], &meta());
    let data = &doc["cells"][0]["outputs"][0]["data"];
    assert_eq!(data["text/plain"], json!(["{'a': 1, 'b': None}"]));
    assert_eq!(data["application/json"], json!({"a": 1, "b": null}));
}

#[test]
fn a_result_saved_as_json_text_by_an_earlier_version_reads_as_python() {
    let text = r#"{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
      {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": "d",
       "outputs": [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
         "data": {"text/plain": "{\"a\":1,\"b\":null}", "application/json": {"a": 1, "b": null}}}]}
    ]}"#;
    let nb = from_str(text).expect("a notebook");
    assert_eq!(
        nb.cells[0].outputs,
        vec![Output::ExecuteResult {
            execution_count: 1,
            text: "{'a': 1, 'b': None}".into(),
            json: Some(json!({"a": 1, "b": null})),
        }]
    );
}

/// A cell not settled yet (sent, no answer) is written exactly as sessionpad
/// wrote a queued cell before the model stopped keeping queued and running
/// (these bytes are what the earlier writer produced), and read back as
/// failed: its answer never came.
#[test]
fn an_unsettled_cell_is_written_as_before_and_read_as_failed() {
    let mut nb = crate::notebook::Notebook::default();
    nb.push("x = 1".into());
    assert_eq!(nb.cells[0].outcome, None);
    let text = to_string(&nb.cells, &meta());
    assert_eq!(text, UNSETTLED_AS_BEFORE);
    let back = from_str(&text).expect("reads what it wrote");
    assert_eq!(back.cells[0].outcome, Some(CellOutcome::Failed));
    // A file an earlier version wrote while a cell ran reads the same way.
    let running = UNSETTLED_AS_BEFORE.replace("\"queued\"", "\"running\"");
    let back = from_str(&running).expect("a notebook");
    assert_eq!(back.cells[0].outcome, Some(CellOutcome::Failed));
}

/// What a notebook knew of a cell it was quit while the cell ran.
fn quit_running(execution_id: Option<&str>) -> QuitWhile {
    QuitWhile {
        was: Waiting::Running,
        identifier: "sp-0123".into(),
        pool: Some("local/PythonLTS/127.0.0.1:8341".into()),
        execution_id: execution_id.map(str::to_string),
        started_at: Some(
            chrono::DateTime::parse_from_rfc3339("2025-11-02T10:20:30.456Z")
                .unwrap()
                .with_timezone(&chrono::Utc),
        ),
        quit_at: Some(
            chrono::DateTime::parse_from_rfc3339("2025-11-02T10:20:32Z")
                .unwrap()
                .with_timezone(&chrono::Utc),
        ),
        recorded_seq: None,
    }
}

/// A cell the notebook was quit while it ran is written with its outputs
/// so far, `status` "running when you quit" and what identifies its
/// execution, and read back as such: not finished, not failed.
#[test]
fn a_cell_running_when_you_quit_keeps_its_outputs_and_how_to_find_it() {
    let mut nb = crate::notebook::Notebook::default();
    nb.push("import time; time.sleep(5); print('done')".into());
    nb.push("y = 2".into());
    let running = &mut nb.cells[0];
    running.outputs = vec![Output::Stream {
        name: StreamName::Stdout,
        text: "so far\n".into(),
    }];
    running.quit_waiting(quit_running(Some("exec-1")));
    nb.cells[1].quit_waiting(QuitWhile {
        was: Waiting::Queued,
        started_at: None,
        ..quit_running(None)
    });
    let doc = to_value(&nb.cells, &meta());
    assert_eq!(
        doc["cells"][0]["metadata"]["sessionpad"],
        json!({
            "status": "running when you quit",
            "quit_while": "running",
            "identifier": "sp-0123",
            "pool": "local/PythonLTS/127.0.0.1:8341",
            "execution_id": "exec-1",
            "started_at": "2025-11-02T10:20:30.456Z",
            "quit_at": "2025-11-02T10:20:32.000Z",
        })
    );
    assert_eq!(
        doc["cells"][0]["outputs"][0]["text"],
        json!(["so far\n"]),
        "the outputs so far are kept"
    );
    assert_eq!(
        doc["cells"][1]["metadata"]["sessionpad"]["status"],
        "queued when you quit"
    );
    let back = from_str(&to_string(&nb.cells, &meta())).expect("reads what it wrote");
    assert_eq!(back.cells, nb.cells);
    assert_eq!(back.cells[0].outcome, Some(CellOutcome::Unknown));
    assert!(back.cells[0].awaits_record());
    assert!(!back.cells[1].awaits_record(), "a queued cell never ran");
}

/// Once the flight recorder's record filled the cell in, it is written with
/// the record's outcome, still saying it was running when you quit and
/// which record it came from; it no longer waits for one.
#[test]
fn a_cell_filled_in_from_the_record_says_so() {
    let mut nb = crate::notebook::Notebook::default();
    nb.push("print('done')".into());
    nb.push("x".into());
    nb.cells[1].quit_waiting(quit_running(None));
    let mut recorded = cell(
        "x",
        1,
        vec![Output::ExecuteResult {
            execution_count: 1,
            text: "done".into(),
            json: None,
        }],
        CellOutcome::Succeeded,
    );
    recorded.duration = Some(Duration::from_secs(5));
    nb.cells[1].fill_from_record(recorded, 42);
    let back = from_str(&to_string(&nb.cells, &meta())).expect("reads what it wrote");
    let filled = &back.cells[1];
    assert_eq!(filled.outcome, Some(CellOutcome::Succeeded));
    assert_eq!(filled.duration, Some(Duration::from_secs(5)));
    assert!(matches!(
        &filled.outputs[..],
        [Output::ExecuteResult { execution_count: 2, text, .. }] if text == "done"
    ));
    let quit = filled
        .quit_while
        .as_deref()
        .expect("still says it was quit");
    assert_eq!(quit.recorded_seq, Some(42));
    assert_eq!(quit.was, Waiting::Running);
    assert!(!filled.awaits_record());
}

/// The text typed and not run is kept in the notebook's metadata and read
/// back; a blank one is as none.
#[test]
fn the_draft_is_written_and_read_back() {
    let mut out = Vec::new();
    write_with_draft(&every_kind(), &meta(), Some("a = 1\nb = ("), &mut out).unwrap();
    let back = from_str(std::str::from_utf8(&out).unwrap()).unwrap();
    assert_eq!(back.draft.as_deref(), Some("a = 1\nb = ("));
    assert_eq!(back.cells, every_kind());
    assert_eq!(
        from_str(&to_string(&every_kind(), &meta())).unwrap().draft,
        None
    );
    let mut out = Vec::new();
    write_with_draft(&[], &meta(), Some("  \n"), &mut out).unwrap();
    assert_eq!(
        from_str(std::str::from_utf8(&out).unwrap()).unwrap().draft,
        None
    );
}

const UNSETTLED_AS_BEFORE: &str = r#"{
 "cells": [
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "cell-1",
   "metadata": {
    "sessionpad": {
     "status": "queued"
    }
   },
   "outputs": [],
   "source": [
    "x = 1"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3 (sessionpad)",
   "language": "python",
   "name": "python3"
  },
  "language_info": {
   "file_extension": ".py",
   "mimetype": "text/x-python",
   "name": "python"
  },
  "sessionpad": {
   "api_version": "2025-10-02-preview",
   "identifier": "sp-0123",
   "pool": "local"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"#;

#[test]
fn the_files_line_is_a_display_line_other_tools_read_as_text() {
    let cells = every_kind();
    let doc = to_value(&cells, &meta());
    let outputs = &doc["cells"][0]["outputs"];
    let files = outputs
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["metadata"]["sessionpad"] == "files")
        .expect("the files line is written");
    assert_eq!(files["output_type"], "display_data");
    assert_eq!(
        files["data"]["text/plain"],
        json!(["files: wrote hist.png, reports/describe.csv; changed notes.md"])
    );
}
