//! How long the pool has gone without a request, for a pool that ends itself
//! when idle (`sessionpad serve --idle-exit`, the background local pool). A
//! request counts from its arrival until its answer is handed back, so a long
//! execution never looks idle.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

/// Requests in flight and when the last one ended.
#[derive(Debug)]
pub struct Activity {
    in_flight: AtomicUsize,
    last: Mutex<Instant>,
}

impl Default for Activity {
    fn default() -> Self {
        Self {
            in_flight: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
        }
    }
}

impl Activity {
    /// How long no request has been in flight: `None` while one is, else the
    /// time since the last one ended (or since the pool started).
    pub fn idle_for(&self) -> Option<Duration> {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let last = *self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(last.elapsed())
    }

    fn begin(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(self)
    }
}

/// One request in flight; its end is recorded when dropped (also when the
/// handler is cancelled by a closed connection).
struct InFlight<'a>(&'a Activity);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        *self
            .0
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Middleware recording every request in `activity`.
pub(crate) async fn track(
    State(activity): State<std::sync::Arc<Activity>>,
    req: Request,
    next: Next,
) -> Response {
    let _in_flight = activity.begin();
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_while_a_request_is_in_flight_idle_after() {
        let a = Activity::default();
        let req = a.begin();
        assert_eq!(a.idle_for(), None);
        drop(req);
        assert!(a.idle_for().is_some());
    }
}
