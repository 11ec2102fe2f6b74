//! Unit tests: the refresher with a counting credential, and the real
//! `azure_identity` client-secret and workload-identity credentials against a mock
//! token endpoint (an `azure_core` transport that answers in memory).

use super::*;
use azure_core::credentials::{AccessToken, TokenRequestOptions};
use azure_core::http::headers::Headers;
use azure_core::http::{AsyncRawResponse, Body, HttpClient, Request, StatusCode};
use azure_core::time::OffsetDateTime;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A credential that counts its calls, takes `delay`, and fails while `fail` is set.
#[derive(Debug, Default)]
struct Counting {
    calls: AtomicUsize,
    fail: std::sync::atomic::AtomicBool,
    expires_in: std::sync::atomic::AtomicI64,
}

#[async_trait::async_trait]
impl TokenCredential for Counting {
    async fn get_token(
        &self,
        scopes: &[&str],
        _: Option<TokenRequestOptions<'_>>,
    ) -> azure_core::Result<AccessToken> {
        assert_eq!(scopes, [SCOPE]);
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
        if self.fail.load(Ordering::SeqCst) {
            return Err(azure_core::Error::with_message(
                azure_core::error::ErrorKind::Credential,
                "no luck",
            ));
        }
        let expires_in = self.expires_in.load(Ordering::SeqCst);
        Ok(AccessToken::new(
            format!("token-{n}"),
            OffsetDateTime::now_utc() + azure_core::time::Duration::seconds(expires_in),
        ))
    }
}

fn counting(expires_in: i64) -> (Arc<Counting>, TokenSource) {
    let cred = Arc::new(Counting::default());
    cred.expires_in.store(expires_in, Ordering::SeqCst);
    let source = TokenSource::with_provider(
        &AuthConfig::DeveloperTools,
        Some(Provider::Fixed(cred.clone())),
    )
    .unwrap();
    (cred, source)
}

#[tokio::test]
async fn twenty_concurrent_callers_share_one_fetch() {
    let (cred, source) = counting(3600);
    let calls = (0..20).map(|_| {
        let s = source.clone();
        tokio::spawn(async move { s.bearer().await })
    });
    for r in futures::future::join_all(calls).await {
        assert_eq!(r.unwrap().unwrap().as_deref(), Some("Bearer token-1"));
    }
    assert_eq!(cred.calls.load(Ordering::SeqCst), 1);
    // Cached.
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer token-1")
    );
    assert_eq!(cred.calls.load(Ordering::SeqCst), 1);
    // Invalidated: fetched again.
    source.invalidate();
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer token-2")
    );
}

#[tokio::test]
async fn a_token_near_expiry_is_refreshed() {
    let (cred, source) = counting(60);
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer token-1")
    );
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer token-2")
    );
    cred.expires_in.store(
        i64::try_from(REFRESH_MARGIN.as_secs()).unwrap() + 60,
        Ordering::SeqCst,
    );
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer token-3")
    );
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer token-3")
    );
    assert_eq!(cred.calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_failed_fetch_fails_every_waiter_and_the_next_call_retries() {
    let (cred, source) = counting(3600);
    cred.fail.store(true, Ordering::SeqCst);
    let results = futures::future::join_all((0..5).map(|_| source.bearer())).await;
    for r in results {
        match r {
            Err(ClientError::Auth { message }) => assert!(message.contains("no luck")),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(cred.calls.load(Ordering::SeqCst), 1);
    cred.fail.store(false, Ordering::SeqCst);
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer token-2")
    );
}

#[tokio::test]
async fn a_cancelled_caller_does_not_stall_the_others() {
    let (cred, source) = counting(3600);
    let first = tokio::spawn({
        let s = source.clone();
        async move { s.bearer().await }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    first.abort();
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer token-1")
    );
    assert_eq!(cred.calls.load(Ordering::SeqCst), 1);
}

#[test]
fn debug_redacts_secrets() {
    let s = format!(
        "{:?} {:?}",
        AuthConfig::StaticToken("sekrit-token".into()),
        AuthConfig::ClientSecret {
            tenant_id: "t".into(),
            client_id: "c".into(),
            secret: "sekrit-secret".into(),
        }
    );
    assert!(!s.contains("sekrit"), "{s}");
    assert!(s.contains("<redacted>"));
    let source = TokenSource::new(&AuthConfig::StaticToken("sekrit-token".into())).unwrap();
    assert!(!format!("{source:?}").contains("sekrit"));
}

/// A token endpoint in memory: records each request's URL and form body and answers
/// with a token that lasts an hour.
#[derive(Debug, Default)]
struct MockSts {
    requests: Mutex<Vec<(String, HashMap<String, String>)>>,
}

#[async_trait::async_trait]
impl HttpClient for MockSts {
    async fn execute_request(&self, request: &Request) -> azure_core::Result<AsyncRawResponse> {
        let body = match request.body() {
            Body::Bytes(b) => b.clone(),
            Body::SeekableStream(_) => panic!("unexpected stream body"),
        };
        let form = url::form_urlencoded::parse(&body).into_owned().collect();
        self.requests
            .lock()
            .unwrap()
            .push((request.url().to_string(), form));
        Ok(AsyncRawResponse::from_bytes(
            StatusCode::Ok,
            Headers::new(),
            r#"{"token_type":"Bearer","expires_in":3600,"ext_expires_in":3600,"access_token":"sts-token"}"#,
        ))
    }
}

fn with_mock_sts(
    config: &AuthConfig,
    env: HashMap<&'static str, String>,
) -> (Arc<MockSts>, TokenSource) {
    let sts = Arc::new(MockSts::default());
    let provider = Provider::Azure {
        config: config.clone(),
        transport: Transport::new(sts.clone()),
        env: Arc::new(move |k: &str| env.get(k).cloned()),
    };
    (
        sts,
        TokenSource::with_provider(config, Some(provider)).unwrap(),
    )
}

#[tokio::test]
async fn client_secret_requests_the_dynamic_sessions_scope() {
    let (sts, source) = with_mock_sts(
        &AuthConfig::ClientSecret {
            tenant_id: "my-tenant".into(),
            client_id: "my-app".into(),
            secret: "my-secret".into(),
        },
        HashMap::new(),
    );
    assert_eq!(source.describe(), "client secret (client id my-app)");
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer sts-token")
    );
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer sts-token")
    );
    let requests = sts.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    let (url, form) = &requests[0];
    assert!(url.ends_with("/my-tenant/oauth2/v2.0/token"), "{url}");
    assert_eq!(form["scope"], SCOPE);
    assert_eq!(form["client_id"], "my-app");
    assert_eq!(form["client_secret"], "my-secret");
    assert_eq!(form["grant_type"], "client_credentials");
}

#[tokio::test]
async fn workload_identity_sends_the_federated_token() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "federated-jwt").unwrap();
    let env = HashMap::from([
        ("AZURE_TENANT_ID", "wl-tenant".to_string()),
        ("AZURE_CLIENT_ID", "wl-client".to_string()),
        ("AZURE_FEDERATED_TOKEN_FILE", file.display().to_string()),
    ]);
    let (sts, source) = with_mock_sts(&AuthConfig::WorkloadIdentity, env);
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer sts-token")
    );
    let requests = sts.requests.lock().unwrap();
    let (url, form) = &requests[0];
    assert!(url.ends_with("/wl-tenant/oauth2/v2.0/token"), "{url}");
    assert_eq!(form["scope"], SCOPE);
    assert_eq!(form["client_id"], "wl-client");
    assert_eq!(form["client_assertion"], "federated-jwt");
}

#[test]
fn workload_identity_names_missing_variables() {
    let sts = Arc::new(MockSts::default());
    let provider = Provider::Azure {
        config: AuthConfig::WorkloadIdentity,
        transport: Transport::new(sts),
        env: Arc::new(|k: &str| (k == "AZURE_TENANT_ID").then(|| "t".to_string())),
    };
    match TokenSource::with_provider(&AuthConfig::WorkloadIdentity, Some(provider)) {
        Err(ClientError::Auth { message }) => {
            assert!(
                message.contains("not set: AZURE_CLIENT_ID, AZURE_FEDERATED_TOKEN_FILE"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn client_secret_with_a_bad_tenant_is_an_error_at_construction() {
    let err = TokenSource::new(&AuthConfig::ClientSecret {
        tenant_id: "not a tenant!".into(),
        client_id: "c".into(),
        secret: "s".into(),
    })
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("tenant"), "{text}");
    assert!(!text.contains("\"s\""));
}
