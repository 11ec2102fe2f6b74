//! The session worker's link to the background local pool
//! ([`crate::background`]), the one the command line uses: found through its
//! discovery file, or started when none runs, and started again when it has
//! ended between two cells (its idle exit, `sessionpad pool stop`, a kill). The
//! notebook then runs on a pool that outlives it, with ready kernels waiting,
//! instead of starting a pool in its own process on every launch.

use crate::background::{Found, StartOptions};
use crate::client::{ClientError, SessionClient};

use super::event::{EventSender, RunId};
use super::failure::Failure;
use super::worker::WorkerConfig;

/// Whether `error` says the pool refused the connection: nothing listens at
/// its address any more (the pool has ended), and nothing of the request
/// reached it, so sending it again elsewhere runs nothing twice.
pub(super) fn refused(error: &ClientError) -> bool {
    matches!(error, ClientError::Unreachable { source, .. } if source.is_connect())
}

/// Finds the background local pool of the worker's container type, or starts
/// it (reporting each step through `events`: a first build of the Python
/// environment, the start), and returns a client for it. Reports the pool's
/// isolation as it published it.
///
/// # Errors
///
/// A [`Failure`] of kind `Unreachable` saying why the pool could not be found
/// or started (the end of its log included), or that its endpoint is unusable.
pub(super) async fn background(
    config: &WorkerConfig,
    opts: &StartOptions,
    events: &EventSender,
) -> Result<SessionClient, Failure> {
    let progress_events = events.clone();
    let progress = move |line: &str| progress_events.pool_progress(line);
    let how = super::worker::Connection::Background(opts.clone());
    let reached = super::connect::reach(&how, None, super::connect::dial(config), &progress)
        .await
        .map_err(super::connect::failure)?;
    if let Some(found) = &reached.found {
        announce(found, opts.idle_exit, events);
    }
    Ok(reached.client)
}

/// Reports what is known of `found` at once: that this notebook started it
/// or attached to it ([`Found::reached_line`]), and its isolation.
pub(super) fn announce(found: &Found, idle_exit: std::time::Duration, events: &EventSender) {
    let line = found.reached_line(idle_exit);
    tracing::info!("{line}");
    events.pool_progress(&line);
    if let Some(isolation) = &found.isolation {
        events.pool_isolation(isolation.clone());
    }
}

/// Attaches to the background local pool again: after `gone` (the pool
/// refused a cell's connection: it has ended since the last cell), or because
/// it could not be had before. Says what happens through `events`: the pool
/// had ended and is started again (then [`EventSender::pool_restarted`], the
/// session's variables being gone), or the pool is ready or failed.
///
/// # Errors
///
/// As [`background`], the message saying the pool had ended when it had.
pub(super) async fn again(
    config: &WorkerConfig,
    opts: &StartOptions,
    gone: Option<&Failure>,
    events: &EventSender,
) -> Result<SessionClient, Failure> {
    if let Some(gone) = gone {
        tracing::warn!("the background local pool has ended: {gone}");
        events.pool_progress("the background local pool has ended; starting it again");
    }
    match (background(config, opts, events).await, gone) {
        (Ok(client), Some(_)) => {
            events.pool_key(crate::protocol::record::pool_key_of(
                client.endpoint(),
                config.container_type,
            ));
            events.pool_restarted(format!(
                "the background local pool had ended (stopped, or idle too long): the cell ran \
                 in a new one, in a fresh session of {}; variables and files from before are gone",
                config.identifier
            ));
            Ok(client)
        }
        (Ok(client), None) => {
            events.pool_key(crate::protocol::record::pool_key_of(
                client.endpoint(),
                config.container_type,
            ));
            events.pool_ready();
            Ok(client)
        }
        (Err(reason), Some(_)) => {
            Err(reason
                .context("the background local pool has ended and could not be started again"))
        }
        (Err(reason), None) => {
            events.pool_failed(reason.clone());
            Err(reason)
        }
    }
}

/// Interrupts the code session `identifier` runs through the local pool's
/// interrupt route (the background local pool runs in another process), on a
/// task of its own, and reports for `run` whether it was acknowledged.
pub(super) fn interrupt(
    client: SessionClient,
    identifier: String,
    run: RunId,
    events: EventSender,
) {
    tokio::spawn(async move {
        let delivered = match client.interrupt_local(&identifier).await {
            Ok(delivered) => delivered,
            Err(e) => {
                tracing::warn!("interrupt not delivered: {e}");
                false
            }
        };
        events.interrupt_sent(run, delivered);
    });
}
