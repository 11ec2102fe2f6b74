//! The terminal UI: a cell editor, the outputs of the cells run so far and a status
//! line, on ratatui + crossterm.
//!
//! Shape (style.md): the UI task owns the terminal and all state ([`app::App`]);
//! keys become [`action::Action`]s, `App::update` returns [`action::Effect`]s, and
//! the session worker ([`worker`]) owns the client and the embedded pool, talking
//! back through [`event::AppEvent`]s. The UI task never awaits the network.

pub mod action;
pub mod app;
pub mod event;
pub mod keymap;
pub mod runner;
pub mod terminal;
pub mod theme;
pub mod ui;
pub mod worker;

use std::time::Duration;

use crate::client::ApiVersion;

use self::app::{App, AppConfig, PoolState};
use self::event::AppEventSender;
use self::terminal::TerminalGuard;
use self::worker::{Connection, SessionWorker, WorkerConfig};

/// How long quitting waits for the worker to stop the embedded pool.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// How the TUI was asked to start.
#[derive(Debug, Clone)]
pub struct TuiOptions {
    /// Pool management endpoint; `None` starts the embedded local pool.
    pub endpoint: Option<String>,
    /// Static bearer token for `endpoint`.
    pub token: Option<String>,
    /// The api-version to speak.
    pub api_version: ApiVersion,
    /// Session identifier; `None` makes a random `sessionpad-<8 hex>`.
    pub identifier: Option<String>,
    /// Execution limit of each cell.
    pub timeout: Duration,
}

/// Runs the TUI until the user quits. The terminal is restored on return, on error
/// and on panic; the embedded pool (if any) is shut down after the terminal is
/// given back.
///
/// # Errors
///
/// The terminal could not be set up or failed, or a task panicked.
pub async fn run(opts: TuiOptions) -> anyhow::Result<()> {
    let identifier = opts.identifier.clone().unwrap_or_else(random_identifier);
    let (connection, pool_label, pool_state) = match &opts.endpoint {
        None => (
            Connection::Embedded,
            "local".to_string(),
            PoolState::Starting,
        ),
        Some(endpoint) => (
            Connection::Remote {
                endpoint: endpoint.clone(),
                token: opts.token.clone(),
            },
            host_of(endpoint),
            PoolState::Ready,
        ),
    };
    let mut app = App::new(
        AppConfig {
            pool_label,
            identifier: identifier.clone(),
            api_version: opts.api_version,
        },
        pool_state,
    );
    let mut guard = TerminalGuard::enter()?;
    let (sender, mut events) = AppEventSender::channel();
    let worker = SessionWorker::spawn(
        WorkerConfig {
            connection,
            api_version: opts.api_version,
            identifier,
            timeout: opts.timeout,
        },
        sender,
    );
    let result = runner::run_loop(guard.terminal_mut(), &mut app, &mut events, &worker).await;
    drop(guard);
    worker.shutdown(SHUTDOWN_WAIT).await;
    result
}

/// A fresh session identifier: `sessionpad-` and 8 hex digits.
pub fn random_identifier() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("sessionpad-{}", &hex[..8])
}

/// The host of an endpoint URL for the status line, or the endpoint itself when
/// it does not parse.
fn host_of(endpoint: &str) -> String {
    url::Url::parse(endpoint)
        .ok()
        .and_then(|u| {
            u.host_str().map(|h| match u.port() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_string(),
            })
        })
        .unwrap_or_else(|| endpoint.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_prefixed_and_short() {
        let id = random_identifier();
        assert!(id.starts_with("sessionpad-"));
        assert_eq!(id.len(), "sessionpad-".len() + 8);
        assert_ne!(id, random_identifier());
    }

    #[test]
    fn host_of_endpoint() {
        assert_eq!(
            host_of("https://eastus.dynamicsessions.io/subscriptions/x/sessionPools/p"),
            "eastus.dynamicsessions.io"
        );
        assert_eq!(host_of("http://127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(host_of("nonsense"), "nonsense");
    }
}
