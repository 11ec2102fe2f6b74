//! Sessions and the pool: family B `GET|DELETE session`, `GET listSessions`,
//! `GET metadata` (2025-02-02-preview and later, `aca-api.md` §4.4) and the
//! custom-container `POST .management/getSession|stopSession|listSessions`
//! (§5.2). Every call here needs 2025-02-02-preview or later and fails with
//! [`ClientError::NotSupported`] before sending anything on older versions.

use reqwest::Method;
use serde_json::Value;

use super::files::unsupported;
use super::response::{json, string, time};
use super::retry::{CALL_TIMEOUT, Limit, empty_body};
use super::{ClientError, SessionClient};
use crate::protocol::ApiVersion;
use crate::protocol::model::{KernelInfo, NameVersion, PoolMetadata, PoolType, SessionInfo};

impl SessionClient {
    /// Every session of the pool, the way its [`PoolType`] lists them:
    /// [`SessionClient::list_sessions`] (§4.4) or
    /// [`SessionClient::management_list_sessions`] (§5.2).
    ///
    /// # Errors
    ///
    /// As the call it makes.
    pub async fn pool_sessions(&self) -> Result<Vec<SessionInfo>, ClientError> {
        match self.pool_type {
            PoolType::CodeInterpreter => self.list_sessions().await,
            PoolType::CustomContainer => self.management_list_sessions().await,
        }
    }

    /// The session `identifier`, the way the pool's [`PoolType`] reads it:
    /// [`SessionClient::session_info`] (§4.4) or
    /// [`SessionClient::management_get_session`] (§5.2).
    ///
    /// # Errors
    ///
    /// As the call it makes.
    pub async fn pool_session(&self, identifier: &str) -> Result<SessionInfo, ClientError> {
        match self.pool_type {
            PoolType::CodeInterpreter => self.session_info(identifier).await,
            PoolType::CustomContainer => self.management_get_session(identifier).await,
        }
    }

    /// Ends the session `identifier` the way the pool's [`PoolType`] does:
    /// `DELETE session` ([`SessionClient::delete_session`], §4.4) or `POST
    /// .management/stopSession` ([`SessionClient::management_stop_session`],
    /// §5.2). Returns what to tell the user: the service's own message for
    /// stopSession, else a sentence of ours.
    ///
    /// # Errors
    ///
    /// As the call it makes (never retried).
    pub async fn end_session(&self, identifier: &str) -> Result<String, ClientError> {
        match self.pool_type {
            PoolType::CodeInterpreter => {
                self.delete_session(identifier).await?;
                Ok(format!(
                    "session {identifier} ended: its state and files are gone"
                ))
            }
            PoolType::CustomContainer => {
                let message = self.management_stop_session(identifier).await?;
                Ok(if message.is_empty() {
                    format!("session {identifier} stopped")
                } else {
                    message
                })
            }
        }
    }

    /// The session `identifier`: when it was created and last used and when it
    /// expires.
    ///
    /// Wire: `GET session?api-version&identifier` →
    /// `{identifier, createdAt, lastAccessedAt, expireAt, etag}` (§4.4). Retried
    /// when transient.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] before 2025-02-02-preview; an unknown
    /// session is the service's 400 `SessionWithIdentifierNotFound`
    /// ([`ClientError::Service`]); transport and other service errors;
    /// [`ClientError::Malformed`].
    pub async fn session_info(&self, identifier: &str) -> Result<SessionInfo, ClientError> {
        self.require_sessions("session_info")?;
        let url = self.url("session", Some(identifier))?;
        let resp = self
            .send_idempotent(Limit::Whole(CALL_TIMEOUT), || {
                Ok(self.http.get(url.clone()))
            })
            .await?;
        parse_session(&json(resp).await?)
    }

    /// Ends the session `identifier`: its kernel and files are gone.
    ///
    /// Wire: `DELETE session?api-version&identifier` → 204 (§4.4). Never retried
    /// (a second delete answers "not found").
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] before 2025-02-02-preview; 400
    /// `SessionWithIdentifierNotFound` ([`ClientError::Service`]); transport and
    /// other service errors.
    pub async fn delete_session(&self, identifier: &str) -> Result<(), ClientError> {
        self.require_sessions("delete_session")?;
        let url = self.url("session", Some(identifier))?;
        self.send_once(self.http.delete(url), Limit::Whole(CALL_TIMEOUT))
            .await?;
        Ok(())
    }

    /// Every session of the pool, all pages.
    ///
    /// Wire: `GET listSessions?api-version` → `{"sessions":[Session…],"nextLink"}`
    /// (§4.4; `value` is read too), following `nextLink` (which carries `skip`).
    /// Retried when transient.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] before 2025-02-02-preview; transport
    /// and service errors; [`ClientError::Malformed`].
    pub async fn list_sessions(&self) -> Result<Vec<SessionInfo>, ClientError> {
        self.require_sessions("list_sessions")?;
        let url = self.url("listSessions", None)?;
        let pages = self.send_paged(Method::GET, url).await?;
        sessions_of(&pages, "sessions")
    }

    /// What the pool offers: runtimes, pre-installed packages, the kernel.
    ///
    /// Wire: `GET metadata?api-version` → `{runtimes:[{name,version}],
    /// preInstalledPackages:[{name,version}], jupyterKernel:{name,version,
    /// projectUrl,description}, createdAt, lastUpdatedAt}` (§4.4). Retried when
    /// transient.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] before 2025-02-02-preview; transport
    /// and service errors; [`ClientError::Malformed`] for a body that is not a
    /// JSON object.
    pub async fn pool_metadata(&self) -> Result<PoolMetadata, ClientError> {
        self.require_sessions("pool_metadata")?;
        let url = self.url("metadata", None)?;
        let resp = self
            .send_idempotent(Limit::Whole(CALL_TIMEOUT), || {
                Ok(self.http.get(url.clone()))
            })
            .await?;
        parse_metadata(&json(resp).await?)
    }

    /// What a sessionpad local pool says of itself: `GET metadata` with
    /// [`crate::protocol::api::METADATA_HEADER`]` = brief`, which it answers at once with
    /// only `sessionpadIsolation` and `sessionpadContainerType` (§4.4 and
    /// sessionpad's own fields). Asked with 2025-10-02-preview when this client
    /// speaks an api-version without `metadata` (the local pool speaks them
    /// all). An Azure pool ignores the header and sends neither field: both are
    /// `None` then.
    ///
    /// # Errors
    ///
    /// As [`SessionClient::pool_metadata`].
    pub async fn local_pool_facts(&self) -> Result<PoolMetadata, ClientError> {
        let mut client = self.clone();
        if !client.api_version.has_session_management() {
            client.api_version = ApiVersion::V2025_10_02;
        }
        let url = client.url("metadata", None)?;
        let resp = client
            .send_idempotent(Limit::Whole(CALL_TIMEOUT), || {
                Ok(client
                    .http
                    .get(url.clone())
                    .header(crate::protocol::api::METADATA_HEADER, "brief"))
            })
            .await?;
        parse_metadata(&json(resp).await?)
    }

    /// The isolation of a sessionpad local pool's sessions (sandbox, limits),
    /// from [`SessionClient::local_pool_facts`]. `Ok(None)` when the pool does
    /// not send it, as Azure's pools do not.
    ///
    /// # Errors
    ///
    /// As [`SessionClient::pool_metadata`].
    pub async fn local_pool_isolation(
        &self,
    ) -> Result<Option<crate::protocol::Isolation>, ClientError> {
        Ok(self.local_pool_facts().await?.isolation)
    }

    /// The session `identifier` of a custom-container pool.
    ///
    /// Wire: `POST .management/getSession?api-version&identifier` (empty body) →
    /// `SessionView {identifier, etag, expiresAt, createdAt?, lastAccessedAt?}`
    /// (§5.2). Retried when transient (it changes nothing).
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] before 2025-02-02-preview; 400
    /// `SessionWithIdentifierNotFound` ([`ClientError::Service`]) or 404 for an
    /// unknown session; transport and other service errors;
    /// [`ClientError::Malformed`].
    pub async fn management_get_session(
        &self,
        identifier: &str,
    ) -> Result<SessionInfo, ClientError> {
        self.require_sessions("management_get_session")?;
        let url = self.url(".management/getSession", Some(identifier))?;
        let resp = self
            .send_idempotent(Limit::Whole(CALL_TIMEOUT), || {
                Ok(empty_body(self.http.post(url.clone())))
            })
            .await?;
        parse_session(&json(resp).await?)
    }

    /// Stops the session `identifier` of a custom-container pool and returns the
    /// service's message (`Session … in session pool … stopped.`).
    ///
    /// Wire: `POST .management/stopSession?api-version&identifier` (empty body) →
    /// 200 `text/plain` (§5.2). Never retried.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] before 2025-02-02-preview; 400
    /// `SessionWithIdentifierNotFound`; transport and other service errors.
    pub async fn management_stop_session(&self, identifier: &str) -> Result<String, ClientError> {
        self.require_sessions("management_stop_session")?;
        let url = self.url(".management/stopSession", Some(identifier))?;
        let req = empty_body(self.http.post(url));
        let resp = self.send_once(req, Limit::Whole(CALL_TIMEOUT)).await?;
        let text = resp
            .text()
            .await
            .map_err(|e| ClientError::Malformed(e.to_string()))?;
        Ok(text.trim().to_string())
    }

    /// Every session of a custom-container pool, all pages.
    ///
    /// Wire: `POST .management/listSessions?api-version` (empty body) →
    /// `{"value":[SessionView…],"count","nextLink"}`, pages of up to 300 (§5.2),
    /// following `nextLink` (`skip`). Retried when transient.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] before 2025-02-02-preview; transport
    /// and service errors; [`ClientError::Malformed`].
    pub async fn management_list_sessions(&self) -> Result<Vec<SessionInfo>, ClientError> {
        self.require_sessions("management_list_sessions")?;
        let url = self.url(".management/listSessions", None)?;
        let pages = self.send_paged(Method::POST, url).await?;
        sessions_of(&pages, "value")
    }

    fn require_sessions(&self, operation: &'static str) -> Result<(), ClientError> {
        if self.api_version.has_session_management() {
            Ok(())
        } else {
            Err(unsupported(operation, self.api_version))
        }
    }
}

/// The sessions of every page, from the array under `key` (or the other of
/// `sessions`/`value`).
fn sessions_of(pages: &[Value], key: &str) -> Result<Vec<SessionInfo>, ClientError> {
    let mut out = Vec::new();
    for page in pages {
        let list = page
            .get(key)
            .or_else(|| page.get("sessions"))
            .or_else(|| page.get("value"))
            .and_then(Value::as_array)
            .ok_or_else(|| ClientError::Malformed(format!("session list has no `{key}` array")))?;
        for s in list {
            out.push(parse_session(s)?);
        }
    }
    Ok(out)
}

/// A family B `Session` (`expireAt`, §4.4) or a `SessionView` (`expiresAt`,
/// §5.2); `$id` and unknown members are ignored.
fn parse_session(v: &Value) -> Result<SessionInfo, ClientError> {
    let Some(identifier) = string(v, "identifier") else {
        return Err(ClientError::Malformed("session has no identifier".into()));
    };
    Ok(SessionInfo {
        identifier,
        created: time(v.get("createdAt")),
        last_accessed: time(v.get("lastAccessedAt")),
        expires: time(v.get("expireAt").or_else(|| v.get("expiresAt"))),
        etag: string(v, "etag"),
    })
}

/// `[{name, version}]`, skipping entries without a name.
fn name_versions(v: Option<&Value>) -> Vec<NameVersion> {
    v.and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|e| {
                    Some(NameVersion {
                        name: string(e, "name")?,
                        version: string(e, "version").unwrap_or_default(),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The `GET metadata` document (§4.4).
fn parse_metadata(v: &Value) -> Result<PoolMetadata, ClientError> {
    if !v.is_object() {
        return Err(ClientError::Malformed(
            "pool metadata is not a JSON object".into(),
        ));
    }
    let kernel = v.get("jupyterKernel").and_then(|k| {
        Some(KernelInfo {
            name: string(k, "name")?,
            version: string(k, "version").unwrap_or_default(),
            project_url: string(k, "projectUrl"),
            description: string(k, "description"),
        })
    });
    Ok(PoolMetadata {
        runtimes: name_versions(v.get("runtimes")),
        packages: name_versions(v.get("preInstalledPackages")),
        kernel,
        created: time(v.get("createdAt")),
        updated: time(v.get("lastUpdatedAt")),
        isolation: v
            .get(crate::protocol::isolation::METADATA_FIELD)
            .and_then(|i| serde_json::from_value(i.clone()).ok()),
        container_type: v
            .get(crate::protocol::container_type::METADATA_FIELD)
            .and_then(Value::as_str)
            .and_then(|t| t.parse().ok()),
        service_limits: v
            .get(crate::protocol::service_limits::METADATA_FIELD)
            .and_then(|l| serde_json::from_value(l.clone()).ok())
            .unwrap_or_default(),
        image: v
            .get(crate::protocol::image::METADATA_FIELD)
            .and_then(Value::as_str)
            .and_then(|t| t.parse().ok()),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn both_expiry_spellings_are_read() {
        let b = parse_session(&json!({"identifier":"a","expireAt":"2025-01-05T22:18:41.752Z"}))
            .unwrap();
        let m = parse_session(&json!({"identifier":"a","expiresAt":"2025-01-05T22:18:41.752Z"}))
            .unwrap();
        assert!(b.expires.is_some());
        assert_eq!(b.expires, m.expires);
        assert!(parse_session(&json!({"etag":"x"})).is_err());
    }

    #[test]
    fn metadata_tolerates_missing_parts() {
        let m = parse_metadata(&json!({"runtimes":[{"name":"node"}, {"version":"1"}]})).unwrap();
        assert_eq!(
            m.runtimes,
            [NameVersion {
                name: "node".into(),
                version: String::new()
            }]
        );
        assert!(m.packages.is_empty() && m.kernel.is_none());
        assert!(parse_metadata(&json!([])).is_err());
    }
}
