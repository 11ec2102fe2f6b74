//! The network attempts of one session not yet taken by an execution, kept
//! by its egress proxy (through the proxy) and its connect watch (direct), in
//! the order they were made; at most [`MAX_ATTEMPTS`] per execution.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use crate::protocol::egress::{Decision, NetworkAttempt, Via};

/// Attempts kept per execution: code in a session is hostile, and a loop of
/// requests must not grow the pool without end. Past it, attempts are still
/// judged and relayed, but not kept (a warning in the pool's log says how
/// many went unrecorded).
pub const MAX_ATTEMPTS: usize = 10_000;

/// One attempt as it is logged: its bytes still counting while it relays.
struct Entry {
    host: String,
    port: u16,
    decision: Decision,
    via: Via,
    at: DateTime<Utc>,
    bytes: Arc<AtomicU64>,
}

/// A session's log of network attempts (see the module doc); shared by the
/// proxy, the connect watch and the kernel, which takes it after each
/// execution.
#[derive(Default)]
pub struct NetworkLog(Mutex<(Vec<Entry>, u64)>);

impl std::fmt::Debug for NetworkLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkLog").finish_non_exhaustive()
    }
}

impl NetworkLog {
    /// Logs an attempt (when fewer than [`MAX_ATTEMPTS`] are held); returns
    /// its byte counter, which the relay adds to as bytes pass.
    pub fn push(&self, host: &str, port: u16, decision: Decision, via: Via) -> Arc<AtomicU64> {
        let bytes = Arc::new(AtomicU64::new(0));
        let mut log = self.lock();
        if log.0.len() >= MAX_ATTEMPTS {
            log.1 += 1;
            return bytes;
        }
        log.0.push(Entry {
            host: host.to_string(),
            port,
            decision,
            via,
            at: Utc::now(),
            bytes: Arc::clone(&bytes),
        });
        bytes
    }

    /// Whether [`MAX_ATTEMPTS`] are held (so a watcher may skip the work of
    /// naming the next one).
    pub fn full(&self) -> bool {
        self.lock().0.len() >= MAX_ATTEMPTS
    }

    /// The attempts made since the last call, in order (the first
    /// [`MAX_ATTEMPTS`]), each with the bytes relayed so far (a tunnel still
    /// open goes on counting, unseen).
    pub fn take(&self) -> Vec<NetworkAttempt> {
        let (taken, unkept) = std::mem::take(&mut *self.lock());
        if unkept > 0 {
            tracing::warn!(
                "egress: {unkept} network attempt(s) past the first {MAX_ATTEMPTS} of an execution were not recorded"
            );
        }
        taken
            .into_iter()
            .map(|e| NetworkAttempt {
                host: e.host,
                port: e.port,
                decision: e.decision,
                via: e.via,
                bytes: e.bytes.load(Ordering::Relaxed),
                at: e.at,
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<Entry>, u64)> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_executions_attempts_are_bounded() {
        let log = NetworkLog::default();
        for _ in 0..MAX_ATTEMPTS + 5 {
            log.push("127.0.0.1", 9, Decision::Denied, Via::Direct);
        }
        assert!(log.full());
        let taken = log.take();
        assert_eq!(taken.len(), MAX_ATTEMPTS);
        assert_eq!(taken[0].via, Via::Direct);
        assert!(log.take().is_empty(), "the next execution starts empty");
    }
}
