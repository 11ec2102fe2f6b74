//! Calls only a sessionpad local pool answers (the service has no such routes):
//! interrupting the code a session runs, for a notebook attached to a local
//! pool in another process (the background local pool).

use super::response::json;
use super::retry::{CALL_TIMEOUT, Limit, empty_body};
use super::{ClientError, SessionClient};
use crate::protocol::{ApiVersion, Completion};

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

    /// Asks a sessionpad local pool for the Tab completions of `code` at
    /// `cursor` (Unicode code points) in session `identifier`, from its kernel's
    /// `complete_request`. A kernel busy running code answers at once with no
    /// matches and `busy`.
    ///
    /// Wire: `POST .sessionpad/complete?api-version&identifier` with
    /// `{"code", "cursorPos"}` → 200 [`Completion`], a sessionpad extension
    /// ([`crate::protocol::routes::COMPLETE_ROUTE`]). Never retried.
    ///
    /// # Errors
    ///
    /// [`ClientError::NoCompletion`] when the pool has none: 404 (the service,
    /// whose data-plane API has no completion call) or 400
    /// `CompletionNotSupported` (a Shell or NodeLTS local pool); 400
    /// `SessionWithIdentifierNotFound` ([`ClientError::Service`]); transport
    /// errors; [`ClientError::Malformed`] for another answer.
    pub async fn complete(
        &self,
        identifier: &str,
        code: &str,
        cursor: usize,
    ) -> Result<Completion, ClientError> {
        let mut client = self.clone();
        if !client.api_version.has_session_management() {
            client.api_version = ApiVersion::V2025_10_02;
        }
        let path = crate::protocol::routes::COMPLETE_ROUTE.trim_start_matches('/');
        let url = client.url(path, Some(identifier))?;
        let body = serde_json::json!({ "code": code, "cursorPos": cursor });
        let resp = client
            .send_once(
                client.http.post(url).json(&body),
                Limit::Whole(CALL_TIMEOUT),
            )
            .await;
        let answer = match resp {
            Ok(resp) => json(resp).await,
            Err(e) => Err(e),
        };
        let answer = match answer {
            Err(e) if no_completion(&e) => return Err(ClientError::NoCompletion),
            other => other?,
        };
        serde_json::from_value(answer.clone()).map_err(|e| {
            ClientError::Malformed(format!(
                "a completion answer that does not parse ({e}): {answer}"
            ))
        })
    }
}

/// True for the answers of a pool without completion: 404, or 400
/// `CompletionNotSupported`.
fn no_completion(e: &ClientError) -> bool {
    match e {
        ClientError::NotFound { .. } => true,
        ClientError::Service { code, .. } => code == "CompletionNotSupported",
        _ => false,
    }
}
