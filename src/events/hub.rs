//! The publisher of the event stream: a bounded broadcast channel that the
//! recording path and the kernels publish to and each subscriber (one per open
//! SSE answer, or an in-process reader) reads from at its own pace.
//!
//! Publishing never waits: the channel keeps the last [`CAPACITY`] events, and
//! a subscriber that falls further behind loses the oldest and is told how
//! many it missed (`tokio::sync::broadcast`'s `Lagged`). With nobody
//! subscribed, publishing costs one atomic read.

use std::sync::Arc;

use tokio::sync::broadcast;

use super::PoolEvent;

/// Events kept for subscribers that are behind; past it the slowest lose the
/// oldest (and are told).
pub const CAPACITY: usize = 1024;

/// Where events are published; cheap to clone (clones share subscribers).
#[derive(Clone)]
pub struct Hub {
    tx: broadcast::Sender<Arc<PoolEvent>>,
    closed: tokio_util::sync::CancellationToken,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("subscribers", &self.tx.receiver_count())
            .field("closed", &self.closed.is_cancelled())
            .finish()
    }
}

impl Default for Hub {
    fn default() -> Self {
        Self::new()
    }
}

impl Hub {
    /// A hub with no subscribers, keeping [`CAPACITY`] events for slow ones.
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(CAPACITY);
        Self {
            tx,
            closed: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Ends every subscriber's stream (the pool is shutting down: an open
    /// event stream must not hold up its graceful end).
    pub fn close(&self) {
        self.closed.cancel();
    }

    /// Resolves once [`Hub::close`] was called.
    pub async fn closed(&self) {
        self.closed.cancelled().await;
    }

    /// Whether anyone listens (publishers skip building events otherwise).
    pub fn has_subscribers(&self) -> bool {
        self.tx.receiver_count() > 0
    }

    /// Publishes `event` to every subscriber; never waits, and drops it when
    /// nobody listens.
    pub fn publish(&self, event: PoolEvent) {
        if self.has_subscribers() {
            let _ = self.tx.send(Arc::new(event));
        }
    }

    /// A new subscriber: it gets every event published from now on, or an
    /// `Err(RecvError::Lagged(n))` when it fell more than [`CAPACITY`] events
    /// behind and missed `n`.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<PoolEvent>> {
        self.tx.subscribe()
    }
}
