//! Calls only a sessionpad local pool answers (the service has no such routes):
//! interrupting the code a session runs, for a notebook attached to a local
//! pool in another process (the background local pool).

use super::response::json;
use super::retry::{CALL_TIMEOUT, Limit, empty_body};
use super::{ClientError, SessionClient};
use crate::protocol::ApiVersion;

impl SessionClient {
    /// Asks a sessionpad local pool to interrupt the code session `identifier`
    /// is running (`KeyboardInterrupt` in Python); `Ok(true)` when its kernel
    /// acknowledged. The running execution's reply then says what became of it.
    ///
    /// Wire: `POST .sessionpad/interrupt?api-version&identifier` (empty body) →
    /// 200 `{"interrupted": bool}`, a sessionpad extension
    /// (`pool::interrupt`, [`crate::protocol::routes::INTERRUPT_ROUTE`]); sent with 2025-10-02-preview when the
    /// client speaks an api-version without session management. Never retried.
    ///
    /// # Errors
    ///
    /// 400 `SessionWithIdentifierNotFound` ([`ClientError::Service`]) for a
    /// session the pool does not have; 404 from a pool that is not a sessionpad
    /// local pool; transport errors; [`ClientError::Malformed`] for another
    /// answer.
    pub async fn interrupt_local(&self, identifier: &str) -> Result<bool, ClientError> {
        let mut client = self.clone();
        if !client.api_version.has_session_management() {
            client.api_version = ApiVersion::V2025_10_02;
        }
        let path = crate::protocol::routes::INTERRUPT_ROUTE.trim_start_matches('/');
        let url = client.url(path, Some(identifier))?;
        let resp = client
            .send_once(
                empty_body(client.http.post(url)),
                Limit::Whole(CALL_TIMEOUT),
            )
            .await?;
        let answer = json(resp).await?;
        answer["interrupted"].as_bool().ok_or_else(|| {
            ClientError::Malformed(format!("an interrupt answer without interrupted: {answer}"))
        })
    }
}
