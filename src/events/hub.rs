//! The publisher of the event stream: a bounded broadcast channel that the
//! recording path and the kernels publish to and each subscriber (one per open
//! SSE answer, or an in-process reader) reads from at its own pace.
//!
//! Publishing never waits: the channel keeps the last [`CAPACITY`] events, and
//! a subscriber that falls further behind loses the oldest and is told how
//! many it missed (`tokio::sync::broadcast`'s `Lagged`). With nobody
//! subscribed, publishing costs one atomic read.
//!
//! A subscriber that wants only some events (the pool's SSE route: one
//! session's, or not the `call` events of its own calls) says so with an
//! [`Interest`] ([`Hub::subscribe_to`]), and a publisher asks
//! [`Hub::wants_call`] before it builds a `call` event: the call of a cell
//! that printed megabytes, recorded for a notebook that asked to be left out
//! of its own calls, is then never copied into an event nobody reads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use crate::protocol::events::PoolEvent;

/// Events kept for subscribers that are behind; past it the slowest lose the
/// oldest (and are told).
pub const CAPACITY: usize = 1024;

/// Where events are published; cheap to clone (clones share subscribers).
#[derive(Clone)]
pub struct Hub {
    tx: broadcast::Sender<Arc<PoolEvent>>,
    closed: tokio_util::sync::CancellationToken,
    /// The interests of the subscribers made with [`Hub::subscribe_to`].
    interests: Arc<Mutex<Interests>>,
}

/// The registered interests, by a key of their own.
#[derive(Default)]
struct Interests {
    next: u64,
    by_key: HashMap<u64, Interest>,
}

/// Which events one subscriber wants (the query of the pool's SSE route,
/// `aca-api.md` has no such route: see [`crate::events`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interest {
    /// Only this session's events; every session's without one.
    pub identifier: Option<String>,
    /// Not the `call` events of calls made with this `User-Agent` (the
    /// subscriber's own: `others=true`).
    pub not_client: Option<String>,
}

impl Interest {
    /// Whether the subscriber wants the `call` event of a call about session
    /// `identifier` made with `User-Agent` `client`.
    pub fn wants_call(&self, identifier: &str, client: Option<&str>) -> bool {
        self.not_client
            .as_deref()
            .is_none_or(|own| client != Some(own))
            && self
                .identifier
                .as_deref()
                .is_none_or(|want| want == identifier)
    }

    /// Whether the subscriber wants `event` (a [`PoolEvent::Lagged`], about
    /// no session, always).
    pub fn wants(&self, event: &PoolEvent) -> bool {
        match event {
            PoolEvent::Call(c) => self.wants_call(&c.entry.identifier, c.entry.client.as_deref()),
            other => match (self.identifier.as_deref(), other.identifier()) {
                (None, _) | (_, None) => true,
                (Some(want), Some(got)) => want == got,
            },
        }
    }
}

/// A subscriber with an [`Interest`] ([`Hub::subscribe_to`]): gets the
/// events it wants; its interest is forgotten when it is dropped.
pub struct Subscription {
    rx: broadcast::Receiver<Arc<PoolEvent>>,
    interest: Interest,
    // Dropped after `rx` (fields drop in order): until then the interest
    // still counts, which can only make a publisher build an event that
    // nobody reads, never skip one that is read.
    _registered: Registered,
}

impl Subscription {
    /// The next event published since the subscription that its interest
    /// wants.
    ///
    /// # Errors
    ///
    /// `RecvError::Lagged(n)` when it fell more than [`CAPACITY`] events
    /// behind and missed `n` (of any kind); `RecvError::Closed` when every
    /// clone of the hub is gone.
    pub async fn recv(&mut self) -> Result<Arc<PoolEvent>, RecvError> {
        loop {
            let event = self.rx.recv().await?;
            if self.interest.wants(&event) {
                return Ok(event);
            }
        }
    }
}

/// Removes an interest from its hub when dropped.
struct Registered {
    interests: Arc<Mutex<Interests>>,
    key: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.interests).by_key.remove(&self.key);
    }
}

/// The interests, also after a panic elsewhere while they were held (each
/// change is one map operation, never half done).
fn lock(interests: &Mutex<Interests>) -> std::sync::MutexGuard<'_, Interests> {
    interests.lock().unwrap_or_else(PoisonError::into_inner)
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("subscribers", &self.tx.receiver_count())
            .field("closed", &self.closed.is_cancelled())
            .field("interests", &lock(&self.interests).by_key.len())
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
            interests: Arc::default(),
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

    /// Whether any subscriber wants the `call` event of a call about session
    /// `identifier` made with `User-Agent` `client`: one made with
    /// [`Hub::subscribe`] (it gets everything), or one whose [`Interest`]
    /// wants it. A publisher asks before building the event.
    pub fn wants_call(&self, identifier: &str, client: Option<&str>) -> bool {
        let listening = self.tx.receiver_count();
        if listening == 0 {
            return false;
        }
        let interests = lock(&self.interests);
        listening > interests.by_key.len()
            || interests
                .by_key
                .values()
                .any(|i| i.wants_call(identifier, client))
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

    /// A new subscriber that gets only the events `interest` wants, published
    /// from now on ([`Subscription::recv`]); publishers know of its interest
    /// until it is dropped ([`Hub::wants_call`]).
    pub fn subscribe_to(&self, interest: Interest) -> Subscription {
        // Registered before subscribing: in between, the interest counts for
        // a subscriber not there yet, which errs on the side of building.
        let key = {
            let mut interests = lock(&self.interests);
            let key = interests.next;
            interests.next += 1;
            interests.by_key.insert(key, interest.clone());
            key
        };
        Subscription {
            rx: self.tx.subscribe(),
            interest,
            _registered: Registered {
                interests: self.interests.clone(),
                key,
            },
        }
    }
}
