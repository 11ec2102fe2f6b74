//! Published dynamic-sessions clients, unchanged, against the real `sessionpad serve`
//! binary: the compatibility bar of the local pool. The test builds the client's
//! own virtual environment (once, in the cache directory) from
//! `tests/compat/requirements-*.txt`.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::serve;

/// Builds (once) a venv with the client's requirements; returns its python.
fn client_env(name: &str) -> PathBuf {
    let root = sessionpad::dirs::cache_dir().join("compat");
    std::fs::create_dir_all(&root).unwrap();
    let req =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/compat/requirements-{name}.txt"));
    let wanted = std::fs::read_to_string(&req).unwrap();
    let dir = root.join(name);
    let lock = std::fs::File::create(root.join(format!("{name}.lock"))).unwrap();
    lock.lock().unwrap();
    let marker = dir.join(".sessionpad-ready");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str()) {
        let _ = std::fs::remove_dir_all(&dir);
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(ok.success(), "python3 -m venv");
        let ok = Command::new(dir.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&req)
            .status()
            .unwrap();
        assert!(ok.success(), "pip install -r {}", req.display());
        std::fs::write(&marker, &wanted).unwrap();
    }
    dir.join("bin/python")
}

#[test]
fn langchain_sessions_python_repl_tool_works_unchanged() {
    let python = client_env("langchain");
    let data = tempfile::tempdir().unwrap();
    let token = "compat-token-1234";
    let (mut server, endpoint) = serve(data.path(), token);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/compat/langchain_client.py");
    let out = Command::new(python)
        .arg(script)
        .env("ENDPOINT", &endpoint)
        .env("TOKEN", token)
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("LANGCHAIN OK"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
}
