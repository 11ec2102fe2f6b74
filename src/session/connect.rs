//! Connecting the session worker to its pool: the embedded local pool
//! (started in the process, or kept from an earlier worker), the background
//! local pool ([`super::attach`]), or a remote endpoint (a client built for
//! it; a `sessionpad serve` among them is asked how its sessions are
//! isolated, on a task of its own).

use super::event::EventSender;
use super::failure::Failure;
use super::worker::{Connection, WorkerConfig};
use crate::client::SessionClient;
use crate::pool::{LocalPool, PoolOptions};

/// Connects to the pool: starts the embedded one, or builds a client for a remote.
pub(super) async fn connect(
    config: &WorkerConfig,
    kept: Option<LocalPool>,
    events: &EventSender,
) -> Result<(SessionClient, Option<LocalPool>), Failure> {
    let pool = match (&config.connection, kept) {
        (
            Connection::Remote {
                endpoint,
                token,
                auth,
            },
            _,
        ) => {
            let client = crate::target::remote_client(
                endpoint,
                config.api_version,
                token.clone(),
                auth.as_ref(),
                config.pool_type,
            )
            .map_err(Failure::from)?
            .with_container_type(config.container_type);
            if crate::protocol::isolation::may_report(endpoint) {
                learn_isolation(client.clone(), events.clone());
            }
            return Ok((client, None));
        }
        (Connection::Background(opts), _) => {
            return super::attach::background(config, opts, events)
                .await
                .map(|client| (client, None));
        }
        // The embedded pool kept from an earlier worker: its sessions carry on.
        (Connection::Embedded, Some(pool)) => pool,
        (Connection::Embedded, None) => {
            let progress_events = events.clone();
            let progress = move |line: &str| progress_events.pool_progress(line);
            let mut opts = PoolOptions::embedded();
            opts.limits = config.pool_limits;
            opts.ledger.clone_from(&config.ledger);
            opts.container_type = config.container_type;
            LocalPool::start(opts, &progress)
                .await
                .map_err(|e| Failure::unreachable(format!("the local pool did not start: {e}")))?
        }
    };
    events.pool_isolation(pool.isolation().clone());
    let client = crate::target::remote_client(
        &pool.endpoint(),
        config.api_version,
        pool.token().map(str::to_string),
        None,
        config.pool_type,
    )
    .map_err(Failure::from)?
    .with_container_type(config.container_type);
    Ok((client, Some(pool)))
}

/// Asks a pool that may be a `sessionpad serve` how its sessions are isolated,
/// on a task of its own (executions do not wait for it), and reports it when the
/// pool says; an answer without the field (not a local pool) or an error says
/// nothing.
fn learn_isolation(client: SessionClient, events: EventSender) {
    tokio::spawn(async move {
        match client.local_pool_isolation().await {
            Ok(Some(isolation)) => events.pool_isolation(isolation),
            Ok(None) => {}
            Err(e) => tracing::debug!("no isolation from the pool's metadata: {e}"),
        }
    });
}
