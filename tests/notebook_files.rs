//! Notebook files: what sessionpad writes is a valid nbformat v4.5 notebook to the
//! real `nbformat` package, a notebook Jupyter saved reads back the same, and
//! `sessionpad export` writes the stored notebook of a session as `.ipynb` or as a
//! `# %%` script.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::path::Path;
use std::process::{Command, Output as ProcessOutput};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use sessionpad::notebook::ipynb::{self, NotebookMeta};
use sessionpad::notebook::{Cell, CellOutcome, Output, StreamName, store};

mod nbformat;

fn meta(identifier: &str) -> NotebookMeta {
    NotebookMeta {
        pool: "local".into(),
        identifier: identifier.into(),
        api_version: "2025-10-02-preview".into(),
        language: sessionpad::notebook::language::Language::Python,
    }
}

fn png() -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(4, 3)
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode png");
    out.into_inner()
}

/// Cells with every kind of output: streams, an image, JSON and text results, an
/// error, and a cell with nothing.
fn cells() -> Vec<Cell> {
    let cell = |n: u32, source: &str, outputs: Vec<Output>, outcome: CellOutcome| Cell {
        source: source.into(),
        execution_count: n,
        outputs,
        outcome: Some(outcome),
        duration: Some(Duration::from_millis(u64::from(n) * 10)),
        exit_code: None,
        stdin: None,
        quit_while: None,
        output_streams_max_length: None,
        network: Vec::new(),
    };
    vec![
        cell(
            1,
            "import sys\nprint('out')\nprint('err', file=sys.stderr)",
            vec![
                Output::Stream {
                    name: StreamName::Stdout,
                    text: "out\n".into(),
                },
                Output::Stream {
                    name: StreamName::Stderr,
                    text: "err\n".into(),
                },
            ],
            CellOutcome::Succeeded,
        ),
        cell(
            2,
            "plt.plot([1, 2]); plt.show()",
            vec![Output::DisplayData {
                format: "png".into(),
                data: png(),
            }],
            CellOutcome::Succeeded,
        ),
        cell(
            3,
            "{'a': [1, 2.5, None]}",
            vec![Output::ExecuteResult {
                execution_count: 3,
                text: "{'a': [1, 2.5, None]}".into(),
                json: Some(json!({"a": [1, 2.5, null]})),
            }],
            CellOutcome::Succeeded,
        ),
        cell(
            4,
            "object()",
            vec![Output::ExecuteResult {
                execution_count: 4,
                text: "<object object at 0x7f>".into(),
                json: None,
            }],
            CellOutcome::Succeeded,
        ),
        cell(
            5,
            "1/0",
            vec![Output::Error {
                ename: "ZeroDivisionError".into(),
                evalue: "division by zero".into(),
                traceback: vec![
                    "Traceback (most recent call last):".into(),
                    "  File \"<cell>\", line 1, in <module>".into(),
                    "ZeroDivisionError: division by zero".into(),
                ],
            }],
            CellOutcome::Failed,
        ),
        cell(6, "pass", vec![], CellOutcome::Succeeded),
    ]
}

#[test]
fn written_notebooks_are_valid_to_nbformat() {
    let dir = tempfile::tempdir().unwrap();
    let path = store::notebook_path(dir.path(), "local", "../../hostile id");
    assert!(path.starts_with(dir.path().join("notebooks")));
    store::save(&path, &cells(), &meta("../../hostile id")).unwrap();

    let summary = nbformat::validate(&path);
    assert_eq!(summary["nbformat_minor"], 5);
    assert_eq!(summary["kernel"], "python3");
    let got: Vec<_> = summary["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].clone(), c["outputs"].clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (json!("cell-1"), json!(["stream", "stream"])),
            (json!("cell-2"), json!(["display_data"])),
            (json!("cell-3"), json!(["execute_result"])),
            (json!("cell-4"), json!(["execute_result"])),
            (json!("cell-5"), json!(["error"])),
            (json!("cell-6"), json!([])),
        ]
    );
    assert_eq!(
        summary["cells"][0]["source"],
        "import sys\nprint('out')\nprint('err', file=sys.stderr)"
    );
}

#[test]
fn a_notebook_saved_by_jupyter_reads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("ours.ipynb");
    let theirs = dir.path().join("theirs.ipynb");
    store::save(&ours, &cells(), &meta("sp-1")).unwrap();
    nbformat::rewrite(&ours, &theirs);
    let back = ipynb::from_str(&std::fs::read_to_string(&theirs).unwrap()).unwrap();
    assert_eq!(back.cells, cells());
    assert_eq!(back.meta, Some(meta("sp-1")));
}

fn sessionpad(data: &Path, args: &[&str]) -> ProcessOutput {
    Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args(args)
        .current_dir(data)
        .env("SESSIONPAD_DATA_DIR", data)
        .env("SESSIONPAD_CONFIG", data.join("no-config.toml"))
        .env_remove("POOL_MANAGEMENT_ENDPOINT")
        .output()
        .expect("run sessionpad")
}

#[test]
fn export_writes_the_stored_notebook_as_ipynb_or_script() {
    let data = tempfile::tempdir().unwrap();
    let id = "agent/run 7";
    let stored = store::notebook_path(data.path(), "local", id);
    store::save(&stored, &cells(), &meta(id)).unwrap();

    let out_file = data.path().join("exported.ipynb");
    let out = sessionpad(
        data.path(),
        &[
            "--identifier",
            id,
            "export",
            "-o",
            out_file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote 6 cells"));
    let summary = nbformat::validate(&out_file);
    assert_eq!(summary["cells"].as_array().unwrap().len(), 6);

    // `.py` picks the script format; standard output without -o.
    let py_file = data.path().join("exported.py");
    let out = sessionpad(
        data.path(),
        &[
            "--identifier",
            id,
            "export",
            "-o",
            py_file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let py = std::fs::read_to_string(&py_file).unwrap();
    assert_eq!(py.matches("\n# %% In [").count(), 6, "{py}");
    let out = sessionpad(
        data.path(),
        &["--identifier", id, "export", "--format", "py"],
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), py);
    let compiles = Command::new(nbformat::python())
        .args(["-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())"])
        .arg(&py_file)
        .status()
        .unwrap();
    assert!(compiles.success(), "the script parses as Python:\n{py}");
}

#[test]
fn export_without_a_stored_notebook_says_where_it_looked() {
    let data = tempfile::tempdir().unwrap();
    let out = sessionpad(data.path(), &["--identifier", "never-used", "export"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no notebook for session never-used"),
        "{stderr}"
    );
}

#[test]
fn open_refuses_what_is_not_a_notebook() {
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("x.ipynb");
    std::fs::write(&file, "{\"nbformat\": 4, \"cells\": []}").unwrap();
    let out = sessionpad(data.path(), &["open", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no code cells"));
}
