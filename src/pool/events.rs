//! The pool side of the event stream ([`crate::events`]): the SSE route
//! ([`routes`]) and the scope that lets a kernel publish a running cell's
//! output ([`LiveOutput`]).
//!
//! The route is sessionpad's own, outside the Azure API: `GET
//! /.sessionpad/events[?identifier=ID]` ([`crate::protocol::events::ROUTE`]). It takes
//! no api-version. The caller mounts it behind its bearer-token check (the
//! local pool puts it beside its other routes), so it answers 401 without the
//! token like them.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Query;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use futures::Stream;
use tokio::sync::broadcast::error::RecvError;

use super::wire_error::WireError;
use crate::events::{Hub, Interest};
use crate::protocol::events::{Lagged, OutputChunk, PoolEvent, ROUTE, StreamName};
/// How often an idle stream carries a keep-alive comment.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The event stream's route, publishing what `hub` gets, for any router state
/// `S`. Mount it behind the router's authentication.
pub fn routes<S: Clone + Send + Sync + 'static>(hub: Hub) -> Router<S> {
    Router::new().route(
        ROUTE,
        get(
            move |Query(query): Query<HashMap<String, String>>, headers: axum::http::HeaderMap| {
                let hub = hub.clone();
                async move { subscribe(&hub, &query, &headers) }
            },
        ),
    )
}

/// `GET /.sessionpad/events`: 400 (Azure's error shape) for an identifier
/// that breaks the rules (`aca-api.md` §4.5), else the stream. With
/// `others=true` ([`crate::protocol::events::OTHERS_QUERY`]) the `call` events of calls
/// made with the subscriber's own `User-Agent` are left out.
fn subscribe(
    hub: &Hub,
    query: &HashMap<String, String>,
    headers: &axum::http::HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>> + use<>>, WireError> {
    let identifier = query.get("identifier").cloned();
    if let Some(id) = &identifier {
        super::server::validate_identifier(id)?;
    }
    let others = query
        .get(crate::protocol::events::OTHERS_QUERY)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let not_client = others
        .then(|| headers.get(axum::http::header::USER_AGENT))
        .flatten()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let interest = Interest {
        identifier,
        not_client,
    };
    Ok(Sse::new(stream(hub, interest)).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// The events of `hub` that `interest` wants, as SSE events, until the hub
/// closes. The hub knows the interest while the stream lives, so a call
/// nobody wants is not made into an event ([`Hub::wants_call`]).
fn stream(hub: &Hub, interest: Interest) -> impl Stream<Item = Result<Event, Infallible>> + use<> {
    let rx = hub.subscribe_to(interest);
    let hub = hub.clone();
    futures::stream::unfold((rx, hub), |(mut rx, hub)| async move {
        loop {
            let event = tokio::select! {
                biased;
                () = hub.closed() => return None,
                r = rx.recv() => r,
            };
            let event = match event {
                Ok(e) => e,
                Err(RecvError::Lagged(missed)) => Arc::new(PoolEvent::Lagged(Lagged { missed })),
                Err(RecvError::Closed) => return None,
            };
            match event.to_wire() {
                Ok((name, data)) => {
                    let sse = Event::default().event(name).data(data);
                    return Some((Ok(sse), (rx, hub)));
                }
                Err(e) => tracing::warn!("an event could not be written: {e}"),
            }
        }
    })
}

tokio::task_local! {
    /// Where the execution awaited in this task publishes its output.
    static LIVE: LiveOutput;
}

/// Where a running cell's output goes as the kernel prints it: the pool's hub,
/// naming the session and the execution. The route that starts an execution
/// sets it with [`LiveOutput::scope`] (a task-local value, as
/// [`super::kernel::OutputLimits`] is), and the kernel publishes each IOPub
/// `stream` message through [`LiveOutput::current`].
#[derive(Debug, Clone)]
pub struct LiveOutput {
    hub: Hub,
    identifier: String,
    execution_id: String,
    client: Option<String>,
}

impl LiveOutput {
    /// Output of execution `execution_id` in session `identifier`, asked for
    /// by a request with `headers` (only its `User-Agent` is kept), goes to
    /// `hub`.
    pub fn new(
        hub: Hub,
        identifier: &str,
        execution_id: &str,
        headers: &axum::http::HeaderMap,
    ) -> Self {
        Self {
            hub,
            identifier: identifier.to_string(),
            execution_id: execution_id.to_string(),
            client: headers
                .get(axum::http::header::USER_AGENT)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        }
    }

    /// Runs `fut` with this as the destination of every execution's output
    /// awaited inside it (in the same task).
    pub async fn scope<F: std::future::Future>(self, fut: F) -> F::Output {
        LIVE.scope(self, fut).await
    }

    /// The destination of the enclosing [`LiveOutput::scope`], if any.
    pub fn current() -> Option<Self> {
        LIVE.try_with(Clone::clone).ok()
    }

    /// Publishes `text` printed on `stream`; costs nothing when nobody follows.
    pub fn publish(&self, stream: StreamName, text: &str) {
        if self.hub.has_subscribers() && !text.is_empty() {
            self.hub.publish(PoolEvent::Output(OutputChunk {
                identifier: self.identifier.clone(),
                execution_id: self.execution_id.clone(),
                client: self.client.clone(),
                stream,
                text: text.to_string(),
            }));
        }
    }
}
