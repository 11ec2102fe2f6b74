//! Reading a sessionpad pool's event stream (its wire: [`crate::protocol::events`]):
//! the calls it records and its running cells' output, as they happen. A sessionpad-only
//! route (`GET /.sessionpad/events`, outside the Azure API); Azure's pools
//! answer 404 there.
//!
//! The SSE framing is parsed by `sse-stream` (already in the build through
//! `rmcp`), over reqwest's byte stream.

use futures::StreamExt;
use futures::stream::BoxStream;

use super::SessionClient;
use super::error::ClientError;
use super::response::{check, transport};
use crate::protocol::events::PoolEvent;

/// How long connecting and getting the stream's headers may take.
const CONNECT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl SessionClient {
    /// Subscribes to the pool's event stream: every session's events, or only
    /// `identifier`'s. The returned stream yields each [`PoolEvent`] as the
    /// pool pushes it (events of a kind this build does not know are skipped),
    /// an error when the connection breaks or an event cannot be read, and
    /// ends when the pool closes the stream (it shuts down).
    ///
    /// # Errors
    ///
    /// The pool cannot be reached, or refuses: 401 without the right bearer
    /// token ([`ClientError::Unauthorized`]), 404 on a pool that is not a
    /// sessionpad local pool ([`ClientError::NotFound`]), 400 for an
    /// identifier that breaks the rules.
    pub async fn events(
        &self,
        identifier: Option<&str>,
    ) -> Result<BoxStream<'static, Result<PoolEvent, ClientError>>, ClientError> {
        self.events_with(identifier, false).await
    }

    /// [`SessionClient::events`], and with `others` without the `call` events
    /// of this client's own calls (those made with its `User-Agent`,
    /// [`crate::client::user_agent`]; [`crate::protocol::events::OTHERS_QUERY`]): the
    /// notebook has their answers already, and a call's output can be
    /// megabytes.
    ///
    /// # Errors
    ///
    /// As [`SessionClient::events`].
    pub async fn events_with(
        &self,
        identifier: Option<&str>,
        others: bool,
    ) -> Result<BoxStream<'static, Result<PoolEvent, ClientError>>, ClientError> {
        let mut url = self.url(".sessionpad/events", identifier)?;
        if others {
            url.query_pairs_mut()
                .append_pair(crate::protocol::events::OTHERS_QUERY, "true");
        }
        let req = self
            .authorize(
                self.http
                    .get(url)
                    .header(reqwest::header::ACCEPT, "text/event-stream"),
            )
            .await?;
        let resp = tokio::time::timeout(CONNECT_WAIT, req.send())
            .await
            .map_err(|_| ClientError::Timeout(CONNECT_WAIT))?
            .map_err(|e| transport(&self.endpoint, CONNECT_WAIT, e))?;
        let resp = check(resp).await?;
        let events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
        Ok(events
            .filter_map(|item| async move {
                match item {
                    Err(e) => Some(Err(ClientError::Malformed(format!(
                        "the event stream broke: {e}"
                    )))),
                    Ok(sse) => {
                        // Comments (keep-alive) carry no event.
                        let name = sse.event?;
                        let data = sse.data.unwrap_or_default();
                        match PoolEvent::from_wire(&name, &data) {
                            Ok(Some(event)) => Some(Ok(event)),
                            Ok(None) => None,
                            Err(e) => Some(Err(ClientError::Malformed(format!(
                                "a {name} event could not be read: {e}"
                            )))),
                        }
                    }
                }
            })
            .boxed())
    }
}
