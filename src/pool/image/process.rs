//! Running the interpreter and pip: streamed output for progress, quiet runs for
//! queries.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::{ImageError, TAIL_LINES};

/// Runs `cmd` to the end, sending each non-empty line of its stdout and stderr to
/// `progress` as it comes. Returns how it ended and its last [`TAIL_LINES`] lines
/// (indented, one per line) for an error message. The child is killed if the
/// future is dropped.
pub(super) async fn run_streaming(
    mut cmd: Command,
    program: &Path,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<(ExitStatus, String), ImageError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(ImageError::spawn(program))?;
    let mut out = child.stdout.take().map(BufReader::new);
    let mut err = child.stderr.take().map(BufReader::new);
    let (mut out_buf, mut err_buf) = (Vec::new(), Vec::new());
    let mut tail: VecDeque<String> = VecDeque::with_capacity(TAIL_LINES + 1);
    let mut emit = |buf: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(buf);
        let line = text.trim_end();
        if !line.trim().is_empty() {
            progress(line);
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line.to_string());
        }
        buf.clear();
    };
    while out.is_some() || err.is_some() {
        tokio::select! {
            r = read_line(&mut out, &mut out_buf), if out.is_some() => {
                let more = matches!(r, Ok(n) if n > 0);
                emit(&mut out_buf);
                if !more { out = None; }
            }
            r = read_line(&mut err, &mut err_buf), if err.is_some() => {
                let more = matches!(r, Ok(n) if n > 0);
                emit(&mut err_buf);
                if !more { err = None; }
            }
        }
    }
    let status = child.wait().await.map_err(ImageError::spawn(program))?;
    let tail = tail
        .iter()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n");
    Ok((status, tail))
}

/// Reads up to the next newline (cancel safe: a partial line stays in `buf`).
pub(super) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut Option<R>,
    buf: &mut Vec<u8>,
) -> io::Result<usize> {
    match reader {
        Some(r) => r.read_until(b'\n', buf).await,
        None => std::future::pending().await,
    }
}

/// `python -m pip install` with what every install here wants: no version
/// check, no prompt, no progress bars (lines only), unbuffered output, and no
/// user-wide `--user` default (pip would refuse a venv or `--target` with it).
/// The caller adds what to install and where.
pub(super) fn pip_install(python: &Path) -> Command {
    let mut pip = Command::new(python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        "off",
    ])
    .env("PIP_USER", "0")
    .env("PYTHONUNBUFFERED", "1");
    pip
}

/// Runs `python args…` with no input and collects its output.
pub(super) async fn run_quiet(
    python: &Path,
    args: &[&str],
) -> Result<std::process::Output, ImageError> {
    Command::new(python)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(ImageError::spawn(python))
}

/// The stdout of a successful run, or a [`ImageError::Query`] with its status and
/// the end of its stderr.
pub(super) fn ok_stdout(
    python: &Path,
    what: &'static str,
    out: &std::process::Output,
) -> Result<String, ImageError> {
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(5)..].join("\n");
    Err(ImageError::Query {
        python: python.to_path_buf(),
        what,
        detail: format!("{}\n{tail}", out.status).trim_end().to_string(),
    })
}

pub(super) fn last_line(bytes: &[u8]) -> Option<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

pub(super) fn parse_package_list(
    python: &Path,
    json: &[u8],
) -> Result<Vec<(String, String)>, ImageError> {
    #[derive(serde::Deserialize)]
    struct Package {
        name: String,
        version: String,
    }
    let list: Vec<Package> = serde_json::from_slice(json).map_err(|e| ImageError::Query {
        python: python.to_path_buf(),
        what: "its installed packages",
        detail: format!("unexpected output: {e}"),
    })?;
    Ok(list.into_iter().map(|p| (p.name, p.version)).collect())
}
