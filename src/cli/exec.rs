//! `sessionpad exec`: run code in the session and print what it returned.
//! Standard output and error go to the matching streams, the result value to
//! standard output as Python shows it (`{'a': 1, 'b': None}`); exit 0 on
//! success, 1 on a failed execution, 2 otherwise. On a Shell pool
//! (`--container-type shell`) the code is a shell command and `exec` exits
//! with the command's exit code (modulo 256: a command that did not finish,
//! exit code -1, gives 255); `--stdin-file` gives the command its input.
//! On a local pool whose sessions are not isolated (no sandbox), one line
//! `warning: local pool: …` goes to standard error first.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use super::output;
use super::target::{TargetOpt, connect};
use crate::client::ShellRequest;
use crate::protocol::Isolation;
use crate::protocol::{Execution, ExecutionImage, ShellExecution};

/// How long `exec` waits for a local pool's metadata to learn whether its
/// sessions are isolated (beside the execution, so this is only ever extra when
/// the execution is faster).
pub(super) const ISOLATION_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Options of `sessionpad exec`.
#[derive(Debug, Args)]
pub struct ExecOpt {
    /// The code to run.
    #[arg(short = 'c', long = "code", conflicts_with = "file")]
    pub code: Option<String>,
    /// A file of Python code to run, or `-` for standard input.
    pub file: Option<PathBuf>,
    /// Save images the code displays into this folder (never overwriting files).
    #[arg(long)]
    pub save_images: Option<PathBuf>,
    /// On a Shell pool: a file whose text the command reads on standard input.
    #[arg(long, value_name = "FILE")]
    pub stdin_file: Option<PathBuf>,
    /// Most characters of stdout and of stderr the answer may carry
    /// (outputStreamsMaxLength, api-version 2025-10-02-preview; the service's
    /// default is 4096): to get an output the service cut whole.
    #[arg(long, value_name = "N")]
    pub output_streams_max_length: Option<u32>,
}

/// The notes on stderr (and in `--json`, `probably_cut`) for the streams the
/// service probably cut ([`crate::protocol::service_limits::cut_note`]): a
/// Shell pool's stream of 4,093 to 4,096 bytes when no maximum was sent, or a
/// stream of exactly the `outputStreamsMaxLength` in force (`sent`, else the
/// service's default of 4096 on 2025-10-02-preview).
fn cut_notes(
    stdout: &str,
    stderr: &str,
    shell: bool,
    sent: Option<u32>,
    version: crate::protocol::ApiVersion,
) -> Vec<String> {
    use crate::protocol::service_limits::{SHELL_STREAM_BYTES, cut_note};
    let cap = match sent {
        Some(n) => Some(u64::from(n)),
        None if version >= crate::protocol::ApiVersion::V2025_10_02 && !shell => {
            Some(SHELL_STREAM_BYTES as u64)
        }
        None => None,
    };
    [("stdout", stdout), ("stderr", stderr)]
        .into_iter()
        .filter_map(|(word, text)| {
            cut_note(
                word,
                text.len(),
                text.chars().count(),
                shell && sent.is_none(),
                cap,
            )
        })
        .collect()
}

/// Prints each of `notes` on stderr with how to ask for more.
fn print_cut_notes(notes: &[String]) {
    for note in notes {
        eprintln!("note: {note}; run it again with --output-streams-max-length N for more");
    }
}

/// Runs `sessionpad exec`.
pub async fn run(opt: ExecOpt, target: &TargetOpt) -> anyhow::Result<ExitCode> {
    let code = read_code(&opt)?;
    let settings = target.settings()?;
    if settings.derived_identifier && std::io::stderr().is_terminal() && !target.json {
        eprintln!(
            "session identifier: {} (this directory's; --identifier to choose another)",
            settings.identifier
        );
    }
    let conn = connect(&settings).await?;
    if conn.client.container_type().is_shell() {
        if settings.empty_kernel {
            bail!(
                "--empty-kernel (useEmptyKernel) is for code: a Shell pool runs each command in a shell, without a kernel"
            );
        }
        return run_shell(&opt, code, target, &settings, &conn).await;
    }
    if opt.stdin_file.is_some() {
        bail!("--stdin-file is for shell commands: give --container-type shell for a Shell pool");
    }
    // Asked beside the execution, so a pool's first (slow) metadata costs nothing.
    let (isolation, exec) = tokio::join!(
        conn.local_isolation(ISOLATION_WAIT),
        conn.client.execute_capped(
            &settings.identifier,
            &code,
            settings.timeout,
            opt.output_streams_max_length
        )
    );
    if let Some(line) = isolation.as_ref().and_then(warning_line) {
        eprintln!("{line}{}", restart_hint(&conn).await);
    }
    let exec = exec?;
    let saved = match &opt.save_images {
        Some(dir) => save_images(dir, &exec.images)?,
        None => Vec::new(),
    };
    let notes = cut_notes(
        &exec.stdout,
        &exec.stderr,
        false,
        opt.output_streams_max_length,
        settings.api_version,
    );
    if target.json {
        let mut doc = to_json(&exec, &settings.identifier, &saved);
        doc["probably_cut"] = json!(notes);
        output::json(&doc);
    } else {
        print_human(&exec, &saved, opt.save_images.is_some());
        print_cut_notes(&notes);
        print_network(&exec.network);
    }
    Ok(if exec.succeeded() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `exec` on a Shell pool: runs `line` as a `shellCommand` with the text of
/// `--stdin-file`, prints its output and returns its exit code (see the
/// module doc).
async fn run_shell(
    opt: &ExecOpt,
    line: String,
    target: &TargetOpt,
    settings: &super::target::Settings,
    conn: &super::target::Connection,
) -> anyhow::Result<ExitCode> {
    if opt.save_images.is_some() {
        bail!("--save-images is for code: shell commands display no images");
    }
    let stdin = match &opt.stdin_file {
        Some(p) => Some(std::fs::read_to_string(p).with_context(|| {
            format!("reading {} for the command's standard input", p.display())
        })?),
        None => None,
    };
    let request = ShellRequest {
        stdin,
        output_streams_max_length: opt.output_streams_max_length,
        ..ShellRequest::line(line, settings.timeout)
    };
    let (isolation, exec) = tokio::join!(
        conn.local_isolation(ISOLATION_WAIT),
        conn.client.execute_shell(&settings.identifier, &request)
    );
    if let Some(line) = isolation.as_ref().and_then(warning_line) {
        eprintln!("{line}{}", restart_hint(conn).await);
    }
    let exec = exec?;
    let notes = cut_notes(
        &exec.stdout,
        &exec.stderr,
        true,
        opt.output_streams_max_length,
        settings.api_version,
    );
    if target.json {
        let mut doc = shell_json(&exec, &settings.identifier);
        doc["probably_cut"] = json!(notes);
        output::json(&doc);
    } else {
        output::out(&exec.stdout);
        output::err(&exec.stderr);
        print_cut_notes(&notes);
        print_network(&exec.network);
        if exec.exit_code.is_none() {
            eprintln!(
                "the pool gave no exit code (status {})",
                exec.state.as_deref().unwrap_or("missing")
            );
        }
    }
    Ok(ExitCode::from(shell_exit_status(&exec)))
}

/// The process exit status for a shell outcome: the exit code modulo 256
/// (-1, a command that did not finish, is 255); 1 when the pool gave none.
fn shell_exit_status(exec: &ShellExecution) -> u8 {
    exec.exit_code
        .map_or(1, |c| u8::try_from(c.rem_euclid(256)).unwrap_or(1))
}

fn shell_json(exec: &ShellExecution, identifier: &str) -> Value {
    json!({
        "identifier": identifier,
        "execution_id": exec.id,
        "exit_code": exec.exit_code,
        "stdout": exec.stdout,
        "stderr": exec.stderr,
        "duration_ms": u64::try_from(exec.duration.as_millis()).unwrap_or(u64::MAX),
        "network": exec.network,
    })
}

/// The line on stderr that says what the execution tried to reach (a local
/// pool's record, issue 29), as under a notebook cell: `network: pypi.org:443
/// allowed · 10.1.2.3:80 blocked (direct)`; nothing when it tried nothing. The
/// hosts are the session's words, so escapes are removed.
fn print_network(attempts: &[crate::protocol::egress::NetworkAttempt]) {
    if let Some(line) = crate::protocol::egress::summary(attempts) {
        eprintln!("network: {}", crate::text::sanitize::plain(&line));
    }
}

/// Added to the warning line when the pool is the background one and this
/// machine can sandbox its sessions now (it was fixed, or the pool was started
/// opted out): how to restart it. Empty otherwise.
async fn restart_hint(conn: &super::target::Connection) -> &'static str {
    if !conn.background {
        return "";
    }
    if crate::background::can_sandbox_now().await {
        " (this machine can sandbox them now: drop `sandbox = false` from [pool] if set, then `sessionpad pool stop`)"
    } else {
        ""
    }
}

/// The one stderr line of a local pool whose sessions are not isolated; the
/// reason may be a serve's words, so it is kept to one line without escape
/// sequences.
fn warning_line(isolation: &Isolation) -> Option<String> {
    let warning = isolation.warning()?;
    let line = crate::text::sanitize::plain(&warning.replace(['\r', '\n'], " "));
    Some(format!("warning: {line}"))
}

fn read_code(opt: &ExecOpt) -> anyhow::Result<String> {
    match (&opt.code, &opt.file) {
        (Some(c), _) => Ok(c.clone()),
        (None, Some(p)) if p.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("reading code from standard input")?;
            Ok(s)
        }
        (None, Some(p)) => {
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
        }
        (None, None) => bail!("give the code with -c CODE, a FILE, or - for standard input"),
    }
}

fn print_human(exec: &Execution, saved: &[PathBuf], saving: bool) {
    output::out(&exec.stdout);
    output::err(&exec.stderr);
    if let Some(v) = &exec.result {
        output::out(&format!("{}\n", v.text));
    }
    for p in saved {
        eprintln!("image saved: {}", p.display());
    }
    if !saving && !exec.images.is_empty() {
        eprintln!(
            "[{} image(s) not shown; --save-images DIR keeps them]",
            exec.images.len()
        );
    }
}

fn to_json(exec: &Execution, identifier: &str, saved: &[PathBuf]) -> Value {
    json!({
        "identifier": identifier,
        "execution_id": exec.id,
        "status": exec.status.family_b_name(),
        "stdout": exec.stdout,
        "stderr": exec.stderr,
        // The typed value where the reply carried one (a Jupyter-format reply
        // carries only text), and the value as Python shows it.
        "result": exec.result.as_ref().map(|v| v.json.clone().unwrap_or_else(|| Value::String(v.text.clone()))),
        "result_text": exec.result.as_ref().map(|v| v.text.as_str()),
        "duration_ms": u64::try_from(exec.duration.as_millis()).unwrap_or(u64::MAX),
        "images": exec.images.iter().enumerate().map(|(i, img)| json!({
            "format": img.format,
            "bytes": img.data.len(),
            "path": saved.get(i),
        })).collect::<Vec<_>>(),
        "network": exec.network,
    })
}

/// Writes each image as `image-N.<format>` in `dir`, choosing the first free N so
/// nothing is overwritten. Returns the paths written.
fn save_images(dir: &Path, images: &[ExecutionImage]) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut n = 1;
    let mut paths = Vec::new();
    for img in images {
        let ext = if img.format.chars().all(|c| c.is_ascii_alphanumeric()) {
            img.format.as_str()
        } else {
            "bin"
        };
        loop {
            let path = dir.join(format!("image-{n}.{ext}"));
            n += 1;
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    std::io::Write::write_all(&mut f, &img.data)
                        .with_context(|| format!("writing {}", path.display()))?;
                    paths.push(path);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
            }
        }
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_commands_exit_code_is_the_process_status() {
        let with = |exit_code| ShellExecution {
            id: None,
            exit_code,
            state: None,
            stdout: String::new(),
            stderr: String::new(),
            duration: std::time::Duration::ZERO,
            network: Vec::new(),
        };
        assert_eq!(shell_exit_status(&with(Some(0))), 0);
        assert_eq!(shell_exit_status(&with(Some(3))), 3);
        assert_eq!(shell_exit_status(&with(Some(-1))), 255);
        assert_eq!(shell_exit_status(&with(Some(256 + 7))), 7);
        assert_eq!(shell_exit_status(&with(None)), 1);
    }

    #[test]
    fn the_warning_is_one_plain_line_and_only_when_not_isolated() {
        let iso = Isolation::unsandboxed("no bwrap\n\x1b[2Jhere\x1b]0;title\x07: NOT isolated");
        let line = warning_line(&iso).unwrap();
        assert!(line.starts_with("warning: local pool: no bwrap"), "{line}");
        assert!(!line.contains('\n') && !line.contains('\x1b'), "{line:?}");
        let isolated = Isolation {
            unsandboxed: None,
            limits: Vec::new(),
            notes: Vec::new(),
        };
        assert_eq!(warning_line(&isolated), None);
    }
}
