//! The process's entry point, in the library rather than the binary: parse
//! the arguments, log to a file (or standard error for `serve`), run the
//! command or the notebook on a tokio runtime. `src/main.rs` only calls
//! [`main`]. Kept here so the whole async program is compiled once, with the
//! library: a binary that polls the library's futures itself instantiates
//! every one of them again (about 40 s of a release build on 2 cores).

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{self, Cli, Command};
use crate::tui;

/// Runs sessionpad: a sandbox helper's job when started as one, else the
/// command line's command (or the notebook). Returns the process's exit
/// code: 0 on success, 2 when the runtime cannot start or the notebook
/// fails; each command's own codes otherwise.
pub fn main() -> ExitCode {
    // Started by a local pool to build a session's sandbox: do only that.
    crate::pool::sandbox::helper::run_if_helper();
    crate::pool::sandbox::helper::set_program("/proc/self/exe".into());
    tune_allocator();
    let cli = Cli::parse();
    let _log = match cli.command {
        // `serve` owns no screen: its request log goes to standard error.
        Some(Command::Serve(_)) => init_stderr_logging(),
        _ => init_file_logging(),
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(async move {
        match cli.command {
            Some(command) => cli::run(command, cli.target).await,
            None => run_tui(cli.target, cli.follow).await,
        }
    });
    // What this process recorded of its own calls is written before it ends.
    crate::client::recording::flush();
    code
}

/// Keeps glibc's malloc from holding big buffers twice. By default it raises
/// its mmap threshold each time a large mapped block is freed, after which
/// buffers of megabytes (an execution's stdout growing as it arrives, in the
/// pool and in the notebook) live in the heap, where growing one copies it
/// and the old block stays resident: the 1,000,000-line cell's 6.9 MB stdout
/// cost about 10 MB of resident memory to read. With the threshold fixed at
/// its default (128 KiB), blocks above it are always mapped: they grow by
/// `mremap` without a copy and go back to the system when freed.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator; called first
    // thing in main, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

async fn run_tui(mut target: cli::TargetOpt, follow: Option<String>) -> ExitCode {
    let result = async {
        if let Some(id) = &follow {
            crate::pool::server::validate_identifier(id)
                .map_err(|e| anyhow::anyhow!("--follow {id:?}: {}", e.message))?;
            target.identifier = Some(id.clone());
        }
        let mut s = target.settings()?;
        s.learn_container_type().await;
        // Following without --endpoint: never take over a session in a new
        // one on the wrong pool (issue 26).
        if let (Some(id), None) = (&follow, &s.endpoint) {
            let here = cli::locate::discovered(s.container_type);
            let located = cli::locate::locate(id, here.as_deref()).await?;
            if let Some(why) = cli::locate::refusal(id, &located, "sessionpad --follow") {
                anyhow::bail!(why);
            }
        }
        let mut opts = s.tui_options(&target);
        opts.follow = follow.is_some();
        tui::run(opts).await
    }
    .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not `eprintln!`, which panics when standard error is gone (the
            // terminal closed under the notebook).
            let _ = writeln!(std::io::stderr(), "error: {}", cli::error_text(&e));
            ExitCode::from(2)
        }
    }
}

fn filter() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_env("SESSIONPAD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
}

/// Logs go to `<data dir>/logs/sessionpad.log`, never to the terminal (the TUI owns
/// it). The filter comes from `SESSIONPAD_LOG` (default `info`).
fn init_file_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = crate::dirs::data_dir().join("logs");
    crate::dirs::create_private(&dir).ok()?;
    let appender = tracing_appender::rolling::never(dir, "sessionpad.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(writer)
        .with_ansi(false)
        .init();
    Some(guard)
}

fn init_stderr_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    None
}
