//! Which running local pool is recording a session identifier now (issue
//! 26): `log -f ID` and `--follow ID` without `--endpoint` used to follow the
//! pool this user's discovery file names, which may not be the one an agent
//! uses (a `serve` on another port beside the background pool): the history
//! came from the shared ledger, the news never did, and a take-over cell ran
//! in a new session on the wrong pool.
//!
//! The ledger keys each local pool's calls by its container type and address
//! ([`crate::protocol::record::local_pool_key`]); a pool that recorded the
//! identifier is running when something accepts a connection at that
//! loopback address. Nothing off the machine is contacted: the addresses are
//! the local pool's own, on loopback.

use std::time::Duration;

use crate::background::discovery::Discovery;
use crate::ledger;
use crate::protocol::ContainerType;
use crate::protocol::record::local_pool_addr;

/// How long a connection to a recorded pool's address may take to say it
/// is running (loopback: a refusal is immediate).
const PROBE: Duration = Duration::from_millis(300);

/// Where an identifier is being recorded now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Located {
    /// Not on a running local pool other than the discovered one (or not
    /// recorded at all): the discovered pool is the one to use.
    Here,
    /// On exactly one running pool, which is not the discovered one.
    Elsewhere {
        /// Its ledger key.
        key: String,
        /// Its pool management endpoint, `http://127.0.0.1:PORT`.
        endpoint: String,
    },
    /// On several running pools: their ledger keys, most recent first.
    Several(Vec<String>),
}

/// Where `identifier` is being recorded now, the discovered pool of
/// `container_type` (`discovered`, its endpoint) aside.
///
/// # Errors
///
/// The ledger cannot be read.
pub(super) async fn locate(identifier: &str, discovered: Option<&str>) -> anyhow::Result<Located> {
    let path = ledger::default_path();
    let Some(conn) = ledger::schema::open_existing(&path)? else {
        return Ok(Located::Here);
    };
    let pools = ledger::read::pools_of(&conn, identifier)
        .map_err(|e| ledger::LedgerError::sqlite(&path, e))?;
    drop(conn);
    let mut running = Vec::new();
    for p in pools {
        let Some(addr) = local_pool_addr(&p.pool) else {
            continue;
        };
        let endpoint = format!("http://{addr}");
        if discovered == Some(endpoint.as_str()) {
            running.push((p.pool, endpoint, true));
        } else if listening(addr).await {
            running.push((p.pool, endpoint, false));
        }
    }
    Ok(match running.as_slice() {
        [] => Located::Here,
        [(_, _, true)] => Located::Here,
        [(key, endpoint, false)] => Located::Elsewhere {
            key: key.clone(),
            endpoint: endpoint.clone(),
        },
        several => Located::Several(several.iter().map(|(k, _, _)| k.clone()).collect()),
    })
}

/// Whether something accepts connections at the loopback address `addr`.
async fn listening(addr: &str) -> bool {
    let Ok(addr) = addr.parse::<std::net::SocketAddr>() else {
        return false;
    };
    if !addr.ip().is_loopback() {
        return false;
    }
    matches!(
        tokio::time::timeout(PROBE, tokio::net::TcpStream::connect(addr)).await,
        Ok(Ok(_))
    )
}

/// The endpoint of the discovered local pool of `container_type`, if one runs.
pub(super) fn discovered(container_type: ContainerType) -> Option<String> {
    Discovery::find(container_type).map(|d| d.endpoint)
}

/// What to tell a person whose identifier is recorded on `located` (not the
/// discovered pool) for `what` (`log -f`, `--follow`): which pool, and the
/// command line that reaches it; `None` for [`Located::Here`].
pub(super) fn refusal(identifier: &str, located: &Located, what: &str) -> Option<String> {
    let id = crate::text::sanitize::plain(identifier);
    match located {
        Located::Here => None,
        Located::Elsewhere { key, endpoint } => Some(format!(
            "{id} is being recorded by the pool at {endpoint} ({}), not the one this command \
             finds by itself; run {what} with --endpoint {endpoint} (and that pool's --token)",
            crate::text::sanitize::plain(key)
        )),
        Located::Several(keys) => Some(format!(
            "{id} is in use on {} running pools ({}); choose one with --endpoint",
            keys.len(),
            keys.iter()
                .map(|k| crate::text::sanitize::plain(k))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
