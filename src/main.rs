//! The `sessionpad` binary: parse arguments, log to a file, dispatch.

use std::time::Duration;

use clap::Parser;
use sessionpad::cli::{self, Cli, Command};
use sessionpad::tui::{self, TuiOptions};

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let _log = match cli.command {
        // `serve` owns no screen: its request log goes to standard error.
        Some(Command::Serve(_)) => init_stderr_logging(),
        None => init_logging(),
    };
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        match cli.command {
            Some(Command::Serve(opt)) => cli::serve(opt).await,
            None => {
                let t = cli.target;
                tui::run(TuiOptions {
                    endpoint: t.endpoint,
                    token: t.token,
                    api_version: t.api_version,
                    identifier: t.identifier,
                    timeout: Duration::from_secs(t.timeout),
                })
                .await
            }
        }
    })
}

/// Logs go to `<data dir>/logs/sessionpad.log`, never to the terminal (the TUI owns
/// it). The filter comes from `SESSIONPAD_LOG` (default `info`).
fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = sessionpad::dirs::data_dir().join("logs");
    std::fs::create_dir_all(&dir).ok()?;
    let appender = tracing_appender::rolling::never(dir, "sessionpad.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_env("SESSIONPAD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .init();
    Some(guard)
}

fn init_stderr_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SESSIONPAD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    None
}
