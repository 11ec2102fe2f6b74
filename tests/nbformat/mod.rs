//! The real `nbformat` Python package, in a virtual environment built once in the
//! cache directory (`compat/nbformat`, guarded by a file lock like the client
//! environments of `compat_clients.rs`), to validate the notebooks sessionpad
//! writes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// What is installed; the environment is rebuilt when this changes.
const REQUIREMENTS: &str = "nbformat\n";

/// Checks a notebook with `nbformat.read` + `nbformat.validate` (failing on
/// nbformat's own warnings, such as a missing cell id) and prints a summary:
/// `nbformat_minor`, then per cell its id, source and output types.
const CHECK: &str = r#"
import json, sys, warnings
import nbformat
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    nb = nbformat.read(sys.argv[1], as_version=4)
    nbformat.validate(nb)
ours = [str(w.message) for w in caught if w.category.__module__.startswith("nbformat")]
if ours:
    sys.exit("nbformat warned: " + "; ".join(ours))
print(json.dumps({
    "nbformat_minor": nb.nbformat_minor,
    "kernel": nb.metadata.kernelspec.name,
    "cells": [
        {"id": c.id, "source": c.source,
         "outputs": [o.output_type for o in c.get("outputs", [])]}
        for c in nb.cells
    ],
}))
"#;

/// The environment's python, built on first use.
pub fn python() -> PathBuf {
    let root = sessionpad::dirs::cache_dir().join("compat");
    std::fs::create_dir_all(&root).expect("cache dir");
    let dir = root.join("nbformat");
    let lock = std::fs::File::create(root.join("nbformat.lock")).expect("lock file");
    lock.lock().expect("lock");
    let marker = dir.join(".sessionpad-ready");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(REQUIREMENTS) {
        let _ = std::fs::remove_dir_all(&dir);
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&dir)
            .status()
            .expect("python3");
        assert!(ok.success(), "python3 -m venv {}", dir.display());
        let ok = Command::new(dir.join("bin/python"))
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(REQUIREMENTS.split_whitespace())
            .status()
            .expect("pip");
        assert!(ok.success(), "pip install nbformat");
        std::fs::write(&marker, REQUIREMENTS).expect("marker");
    }
    dir.join("bin/python")
}

/// Validates `notebook` with nbformat; returns its summary (see [`CHECK`]), or
/// panics with what nbformat said.
pub fn validate(notebook: &Path) -> serde_json::Value {
    let out = Command::new(python())
        .arg("-c")
        .arg(CHECK)
        .arg(notebook)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "nbformat rejected {}:\n{}\n{stdout}",
        notebook.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).expect("summary JSON")
}

/// Reads `input` with nbformat and writes it to `output` as Jupyter would save it.
pub fn rewrite(input: &Path, output: &Path) {
    let script = "import sys, nbformat\n\
                  nb = nbformat.read(sys.argv[1], as_version=4)\n\
                  nbformat.write(nb, sys.argv[2])\n";
    let out = Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(input)
        .arg(output)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "nbformat could not rewrite {}: {}",
        input.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
