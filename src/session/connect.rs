//! The one connect path to a pool, for the command line and the session
//! worker alike ([`reach`]): a remote endpoint (Azure, or `sessionpad serve`:
//! a client built for it), the background local pool (found through its
//! discovery file, or started, [`crate::background`]), or the embedded local
//! pool (started in this process, or kept from an earlier worker). Each caller
//! says what it reached in its own place (the command line on standard error,
//! the notebook through worker events); the words for the background pool are
//! [`crate::background::Found::reached_line`]'s.

use super::event::EventSender;
use super::failure::Failure;
use super::worker::{Connection, WorkerConfig};
use crate::background::{BackgroundError, Found, kind_word};
use crate::client::{ClientError, SessionClient};
use crate::ledger::LedgerOptions;
use crate::pool::{LocalPool, PoolError, PoolOptions};
use crate::protocol::limits::Limits;
use crate::protocol::{ApiVersion, ContainerType, Isolation, PoolType};

/// What [`reach`] needs besides where the pool is: how to speak to it and, for
/// an embedded pool, how to start it.
#[derive(Debug, Clone, Copy)]
pub struct Dial<'a> {
    /// The api-version every request names.
    pub api_version: ApiVersion,
    /// How the pool's sessions are listed, read and ended.
    pub pool_type: PoolType,
    /// What the pool runs, which decides what executions send.
    pub container_type: ContainerType,
    /// Executions ask for a kernel without preloaded libraries
    /// (`useEmptyKernel`, 2025-10-02-preview).
    pub empty_kernel: bool,
    /// An embedded pool's per-session limits.
    pub pool_limits: Limits,
    /// Whether an embedded pool emulates the service's limits (`[pool]
    /// azure_limits`, see [`PoolOptions::with_azure_limits`]).
    pub azure_limits: bool,
    /// Where an embedded pool's sessions may connect (`[pool] egress`).
    pub egress: &'a crate::protocol::egress::Egress,
    /// Where an embedded pool records its calls (`None`: it does not).
    pub ledger: Option<&'a LedgerOptions>,
}

/// A pool reached: its client and what is known of the pool without asking.
#[derive(Debug)]
pub struct Reached {
    /// The client, with the dial's pool type and container type.
    pub client: SessionClient,
    /// What the pool is, for messages: a remote endpoint's host and non-default
    /// port ([`crate::target::endpoint_label`]), `local (background, pid N)`,
    /// `local (serve, pid N)` or `local (embedded)`.
    pub label: String,
    /// The local pool found or started through its discovery file (the
    /// background pool, or a `serve` in the foreground).
    pub found: Option<Found>,
    /// The embedded pool, which lives as long as this value (or is kept for
    /// the next worker).
    pub pool: Option<LocalPool>,
}

impl Reached {
    /// Whether the pool is the background local pool (its sessions' cooldown is
    /// its idle period).
    pub fn background(&self) -> bool {
        self.found.as_ref().is_some_and(|f| f.background)
    }

    /// The isolation of a local pool's sessions when known without asking:
    /// the embedded pool's, or the one a serve wrote into its discovery file.
    pub fn isolation(&self) -> Option<Isolation> {
        match (&self.pool, &self.found) {
            (Some(pool), _) => Some(pool.isolation().clone()),
            (None, Some(found)) => found.isolation.clone(),
            (None, None) => None,
        }
    }
}

/// Why a pool could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum ReachError {
    /// The endpoint or credential is unusable (no request was made).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The background local pool could not be found or started.
    #[error(transparent)]
    Background(#[from] BackgroundError),
    /// The embedded local pool did not start.
    #[error(transparent)]
    Embedded(#[from] PoolError),
}

/// Reaches the pool `how` names: builds the client of a remote endpoint (no
/// request is made), finds or starts the background local pool (saying
/// "starting the background local pool" and each step of a first Python
/// environment build through `progress`), or starts the embedded pool (unless
/// `kept` holds one from an earlier worker, whose sessions carry on).
///
/// # Errors
///
/// [`ReachError`]: an invalid endpoint or credential, a background pool that
/// cannot be found or started, an embedded pool that does not start.
pub async fn reach(
    how: &Connection,
    kept: Option<LocalPool>,
    dial: Dial<'_>,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<Reached, ReachError> {
    let client_of = |endpoint: &str, token: Option<String>, auth| {
        crate::target::remote_client(endpoint, dial.api_version, token, auth, dial.pool_type).map(
            |c| {
                c.with_container_type(dial.container_type)
                    .with_empty_kernel(dial.empty_kernel)
            },
        )
    };
    match (how, kept) {
        (
            Connection::Remote {
                endpoint,
                token,
                auth,
            },
            _,
        ) => Ok(Reached {
            client: client_of(endpoint, token.clone(), auth.as_ref())?,
            label: crate::target::endpoint_label(endpoint),
            found: None,
            pool: None,
        }),
        (Connection::Background(opts), _) => {
            let found = match crate::background::find_for(opts, dial.container_type)? {
                Some(found) => found,
                None => {
                    progress(&format!(
                        "starting the background local {}pool",
                        kind_word(dial.container_type)
                    ));
                    crate::background::find_or_start(opts, dial.container_type, progress).await?
                }
            };
            Ok(Reached {
                client: client_of(&found.endpoint, found.token.clone(), None)?,
                label: found.label(),
                found: Some(found),
                pool: None,
            })
        }
        (Connection::Embedded, kept) => {
            let pool = match kept {
                Some(pool) => pool,
                None => {
                    let mut opts = PoolOptions::embedded();
                    if dial.azure_limits {
                        opts = opts.with_azure_limits();
                    }
                    opts.limits = dial.pool_limits;
                    opts.egress = dial.egress.clone();
                    opts.ledger = dial.ledger.cloned();
                    opts.container_type = dial.container_type;
                    LocalPool::start(opts, progress).await?
                }
            };
            Ok(Reached {
                client: client_of(&pool.endpoint(), pool.token().map(str::to_string), None)?,
                label: "local (embedded)".to_string(),
                found: None,
                pool: Some(pool),
            })
        }
    }
}

/// The worker's dial: its api-version, pool type, container type, and the
/// embedded pool's limits and ledger.
pub(super) fn dial(config: &WorkerConfig) -> Dial<'_> {
    Dial {
        api_version: config.api_version,
        pool_type: config.pool_type,
        container_type: config.container_type,
        empty_kernel: config.empty_kernel,
        pool_limits: config.pool_limits,
        azure_limits: config.azure_limits,
        egress: &config.egress,
        ledger: config.ledger.as_ref(),
    }
}

/// The worker's failure for `error`, in the words the notebook shows.
pub(super) fn failure(error: ReachError) -> Failure {
    match error {
        ReachError::Client(e) => Failure::from(e),
        ReachError::Background(e @ BackgroundError::EgressDiffers { .. }) => {
            Failure::unreachable(e.to_string())
        }
        ReachError::Background(e) => {
            Failure::unreachable(format!("the background local pool did not start: {e}"))
        }
        ReachError::Embedded(e) => {
            Failure::unreachable(format!("the local pool did not start: {e}"))
        }
    }
}

/// Connects the worker to its pool through [`reach`], reporting progress and
/// what is known at once (the embedded pool's isolation, the background
/// pool's start or attach, and, for an endpoint that may be a `sessionpad
/// serve`, its isolation asked on a task of its own).
pub(super) async fn connect(
    config: &WorkerConfig,
    kept: Option<LocalPool>,
    events: &EventSender,
) -> Result<(SessionClient, Option<LocalPool>), Failure> {
    let progress_events = events.clone();
    let progress = move |line: &str| progress_events.pool_progress(line);
    let reached = reach(&config.connection, kept, dial(config), &progress)
        .await
        .map_err(failure)?;
    // Only the background connection finds a pool through its discovery file.
    if let (Some(found), Connection::Background(opts)) = (&reached.found, &config.connection) {
        super::attach::announce(found, opts.idle_exit, events);
    } else if let Some(isolation) = reached.isolation() {
        events.pool_isolation(isolation);
    } else if crate::protocol::isolation::may_report(reached.client.endpoint()) {
        learn_isolation(reached.client.clone(), events.clone());
    }
    Ok((reached.client, reached.pool))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn two_remote_pools_on_one_host_get_labels_that_tell_them_apart() {
        let dial = Dial {
            api_version: ApiVersion::V2025_10_02,
            pool_type: PoolType::CodeInterpreter,
            container_type: ContainerType::PythonLts,
            empty_kernel: false,
            pool_limits: Limits::default(),
            azure_limits: false,
            egress: &crate::protocol::egress::Egress::Off,
            ledger: None,
        };
        let mut labels = Vec::new();
        for endpoint in ["http://127.0.0.1:8341", "http://127.0.0.1:8342"] {
            let how = Connection::Remote {
                endpoint: endpoint.into(),
                token: None,
                auth: None,
            };
            // A remote endpoint is not called here: nothing needs to listen.
            let reached = reach(&how, None, dial, &|_: &str| {}).await.unwrap();
            labels.push(reached.label);
        }
        assert_eq!(labels, ["127.0.0.1:8341", "127.0.0.1:8342"]);
    }
}
