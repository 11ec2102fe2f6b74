//! `client::auth` through the real `azure_identity` code paths, offline: a fake `az`
//! on PATH for developer tools, a loopback App Service-style endpoint for managed
//! identity, and static tokens.
//!
//! Tests that change the process environment hold `ENV_LOCK` and set the variables
//! before any runtime thread starts, since the credentials read them.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sessionpad::client::ClientError;
use sessionpad::client::auth::{AuthConfig, SCOPE, TokenSource};

static ENV_LOCK: Mutex<()> = Mutex::new(());

fn env_lock() -> MutexGuard<'static, ()> {
    ENV_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn set_env(key: &str, value: impl AsRef<std::ffi::OsStr>) {
    // SAFETY: callers hold ENV_LOCK and no other thread of this binary reads the
    // environment while they do (runtimes are started after the change).
    unsafe { std::env::set_var(key, value) }
}

fn remove_env(key: &str) {
    // SAFETY: as in `set_env`.
    unsafe { std::env::remove_var(key) }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn auth_message(result: Result<impl std::fmt::Debug, ClientError>) -> String {
    match result {
        Err(ClientError::Auth { message }) => message,
        other => panic!("expected an Auth error, got {other:?}"),
    }
}

// ---------------------------------------------------------------- developer tools

/// A fake `az` in `dir`: records its arguments (one line per run) in `dir/calls`,
/// takes 0.3 s, fails like a signed-out CLI while `dir/fail` exists, and otherwise
/// prints the document `az account get-access-token -o json` prints, with a token
/// `az-token-<run number>` expiring `dir/expires_in` seconds from now. A fake `azd`
/// always fails, so a real one on the machine is never used.
fn fake_az(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let d = dir.display();
    let az = format!(
        r#"#!/bin/sh
D='{d}'
echo "$*" >> "$D/calls"
n=$(wc -l < "$D/calls" | tr -d ' ')
sleep 0.3
if [ -f "$D/fail" ]; then
  echo "ERROR: Please run 'az login' to setup account." >&2
  exit 1
fi
exp=$(( $(date +%s) + $(cat "$D/expires_in") ))
printf '{{"accessToken": "az-token-%s", "expiresOn": "2030-01-01 00:00:00.000000", "expires_on": %s, "subscription": "00000000-0000-0000-0000-000000000000", "tenant": "11111111-1111-1111-1111-111111111111", "tokenType": "Bearer"}}\n' "$n" "$exp"
"#
    );
    let azd = "#!/bin/sh\necho 'ERROR: not logged in, run `azd auth login` to login' >&2\nexit 1\n";
    for (name, text) in [("az", az.as_str()), ("azd", azd)] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(dir.join("expires_in"), "3600").unwrap();
}

fn az_calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn developer_tools_run_az_once_per_token() {
    let _env = env_lock();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    fake_az(dir);
    let old_path = std::env::var_os("PATH").unwrap_or_default();
    let mut path = dir.as_os_str().to_owned();
    path.push(":");
    path.push(&old_path);
    set_env("PATH", &path);

    let outcome = std::panic::catch_unwind(|| {
        runtime().block_on(async {
            let source = TokenSource::new(&AuthConfig::DeveloperTools).unwrap();
            assert_eq!(source.describe(), "az login");
            assert_eq!(
                az_calls(dir).len(),
                0,
                "no token is fetched at construction"
            );

            // Two concurrent callers on a cold cache: one run of az.
            let (a, b) = tokio::join!(source.bearer(), source.bearer());
            assert_eq!(a.unwrap().as_deref(), Some("Bearer az-token-1"));
            assert_eq!(b.unwrap().as_deref(), Some("Bearer az-token-1"));
            let calls = az_calls(dir);
            assert_eq!(calls.len(), 1, "{calls:?}");
            assert!(calls[0].contains("account get-access-token"), "{calls:?}");
            assert!(calls[0].contains(&format!("--scope {SCOPE}")), "{calls:?}");
            assert!(SCOPE.starts_with("https://dynamicsessions.io/"));

            // Within the cache lifetime: no run at all.
            assert_eq!(
                source.bearer().await.unwrap().as_deref(),
                Some("Bearer az-token-1")
            );
            assert_eq!(az_calls(dir).len(), 1);

            // After a 401, twenty concurrent callers: one run.
            source.invalidate();
            let handles: Vec<_> = (0..20)
                .map(|_| {
                    let s = source.clone();
                    tokio::spawn(async move { s.bearer().await })
                })
                .collect();
            for h in handles {
                assert_eq!(
                    h.await.unwrap().unwrap().as_deref(),
                    Some("Bearer az-token-2")
                );
            }
            assert_eq!(az_calls(dir).len(), 2);

            // A token that expires in a minute is used once, then refreshed.
            std::fs::write(dir.join("expires_in"), "60").unwrap();
            source.invalidate();
            assert_eq!(
                source.bearer().await.unwrap().as_deref(),
                Some("Bearer az-token-3")
            );
            assert_eq!(
                source.bearer().await.unwrap().as_deref(),
                Some("Bearer az-token-4")
            );
            assert_eq!(az_calls(dir).len(), 4);

            // A failing az: every waiter gets the error, which says what to do; the
            // next call runs az again.
            std::fs::write(dir.join("expires_in"), "3600").unwrap();
            std::fs::write(dir.join("fail"), "").unwrap();
            source.invalidate();
            let (a, b, c) = tokio::join!(source.bearer(), source.bearer(), source.bearer());
            for r in [a, b, c] {
                let message = auth_message(r);
                assert!(message.contains("az login"), "{message}");
                assert!(!message.contains("az-token"), "{message}");
            }
            assert_eq!(az_calls(dir).len(), 5);
            std::fs::remove_file(dir.join("fail")).unwrap();
            assert_eq!(
                source.bearer().await.unwrap().as_deref(),
                Some("Bearer az-token-6")
            );
            assert_eq!(az_calls(dir).len(), 6);
        });
    });
    set_env("PATH", &old_path);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn developer_tools_without_az_or_azd_say_to_install_the_cli() {
    let _env = env_lock();
    let empty = tempfile::tempdir().unwrap();
    let old_path = std::env::var_os("PATH").unwrap_or_default();
    set_env("PATH", empty.path());
    let outcome = std::panic::catch_unwind(|| {
        runtime().block_on(async {
            let source = TokenSource::new(&AuthConfig::DeveloperTools).unwrap();
            auth_message(source.bearer().await)
        })
    });
    set_env("PATH", &old_path);
    let message = outcome.unwrap_or_else(|p| std::panic::resume_unwind(p));
    assert!(message.contains("az login"), "{message}");
}

// ---------------------------------------------------------------- managed identity

/// A request's query and `x-identity-header` value.
type Seen = (HashMap<String, String>, Option<String>);

#[derive(Default)]
struct Endpoint {
    requests: Mutex<Vec<Seen>>,
}

/// An App Service / Container Apps-style managed identity endpoint
/// (`IDENTITY_ENDPOINT` + `IDENTITY_HEADER`, api-version 2019-08-01).
async fn msi_token(
    axum::extract::State(endpoint): axum::extract::State<Arc<Endpoint>>,
    axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>,
    headers: axum::http::HeaderMap,
) -> (axum::http::StatusCode, String) {
    let secret = headers
        .get("x-identity-header")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let n = {
        let mut requests = endpoint.requests.lock().unwrap();
        requests.push((query.clone(), secret.clone()));
        requests.len()
    };
    if secret.as_deref() != Some("test-identity-header") {
        return (axum::http::StatusCode::UNAUTHORIZED, "{}".into());
    }
    if query.get("client_id").map(String::as_str) == Some("unassigned") {
        return (
            axum::http::StatusCode::BAD_REQUEST,
            r#"{"statusCode":400,"message":"No User Assigned or Delegated Managed Identity found for specified ClientId/ResourceId/PrincipalId."}"#.into(),
        );
    }
    let body = serde_json::json!({
        "access_token": format!("mi-token-{n}"),
        "expires_on": (now() + 3600).to_string(),
        "resource": query.get("resource"),
        "token_type": "Bearer",
        "client_id": query.get("client_id").cloned().unwrap_or_else(|| "system".into()),
    });
    (axum::http::StatusCode::OK, body.to_string())
}

#[test]
fn managed_identity_uses_the_identity_endpoint() {
    let _env = env_lock();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let saved: Vec<_> = [
        "IDENTITY_ENDPOINT",
        "IDENTITY_HEADER",
        "IDENTITY_SERVER_THUMBPRINT",
        "IMDS_ENDPOINT",
        "MSI_ENDPOINT",
        "MSI_SECRET",
    ]
    .into_iter()
    .map(|k| (k, std::env::var_os(k)))
    .collect();
    for (k, _) in &saved {
        remove_env(k);
    }
    set_env("IDENTITY_ENDPOINT", format!("http://{addr}/msi/token"));
    set_env("IDENTITY_HEADER", "test-identity-header");

    let outcome = std::panic::catch_unwind(|| {
        runtime().block_on(async {
            let endpoint = Arc::new(Endpoint::default());
            let app = axum::Router::new()
                .route("/msi/token", axum::routing::get(msi_token))
                .with_state(endpoint.clone());
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            tokio::spawn(async move { axum::serve(listener, app).await });

            // A user-assigned identity.
            let source = TokenSource::new(&AuthConfig::ManagedIdentity {
                client_id: Some("my-client-id".into()),
            })
            .unwrap();
            assert!(source.describe().starts_with("managed identity"));
            let (a, b) = tokio::join!(source.bearer(), source.bearer());
            assert_eq!(a.unwrap().as_deref(), Some("Bearer mi-token-1"));
            assert_eq!(b.unwrap().as_deref(), Some("Bearer mi-token-1"));
            assert_eq!(
                source.bearer().await.unwrap().as_deref(),
                Some("Bearer mi-token-1")
            );
            {
                let requests = endpoint.requests.lock().unwrap();
                assert_eq!(requests.len(), 1);
                let (query, secret) = &requests[0];
                assert_eq!(query["resource"], "https://dynamicsessions.io");
                assert_eq!(query["client_id"], "my-client-id");
                assert_eq!(query["api-version"], "2019-08-01");
                assert_eq!(secret.as_deref(), Some("test-identity-header"));
            }
            // After a 401 the endpoint is asked again (not the credential's own cache).
            source.invalidate();
            assert_eq!(
                source.bearer().await.unwrap().as_deref(),
                Some("Bearer mi-token-2")
            );

            // The system-assigned identity: no client id in the query.
            let source =
                TokenSource::new(&AuthConfig::ManagedIdentity { client_id: None }).unwrap();
            assert_eq!(source.describe(), "managed identity");
            assert_eq!(
                source.bearer().await.unwrap().as_deref(),
                Some("Bearer mi-token-3")
            );
            {
                let requests = endpoint.requests.lock().unwrap();
                let (query, _) = &requests[2];
                assert!(!query.contains_key("client_id"), "{query:?}");
                assert_eq!(query["resource"], "https://dynamicsessions.io");
            }

            // Issue 28 item 4: the same identity, asked for Azure Resource
            // Manager's audience (the pool card).
            let arm =
                TokenSource::for_arm(&AuthConfig::ManagedIdentity { client_id: None }).unwrap();
            assert_eq!(
                arm.bearer().await.unwrap().as_deref(),
                Some("Bearer mi-token-4")
            );
            {
                let requests = endpoint.requests.lock().unwrap();
                let (query, _) = &requests[3];
                assert_eq!(query["resource"], "https://management.azure.com");
            }

            // An identity not assigned to the resource: a message that says so.
            let source = TokenSource::new(&AuthConfig::ManagedIdentity {
                client_id: Some("unassigned".into()),
            })
            .unwrap();
            let message = auth_message(source.bearer().await);
            assert!(message.contains("assigned"), "{message}");
        });
    });
    for (k, v) in saved {
        match v {
            Some(v) => set_env(k, v),
            None => remove_env(k),
        }
    }
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

// ---------------------------------------------------------------- static tokens

fn jwt(claims: &serde_json::Value) -> String {
    let enc = |v: &[u8]| URL_SAFE_NO_PAD.encode(v);
    format!(
        "{}.{}.{}",
        enc(br#"{"alg":"RS256","typ":"JWT"}"#),
        enc(claims.to_string().as_bytes()),
        enc(b"not-a-real-signature")
    )
}

#[tokio::test]
async fn an_expired_static_token_is_refused_before_sending() {
    let token = jwt(&serde_json::json!({"aud": "https://dynamicsessions.io", "exp": now() - 600}));
    let message = auth_message(TokenSource::new(&AuthConfig::StaticToken(token.clone())));
    assert!(message.contains("expired"), "{message}");
    assert!(message.contains("az account get-access-token"), "{message}");
    assert!(!message.contains(&token));
}

#[tokio::test]
async fn a_static_token_that_expires_while_in_use_is_refused() {
    let token = jwt(&serde_json::json!({"aud": "https://dynamicsessions.io", "exp": now() + 2}));
    let source = TokenSource::new(&AuthConfig::StaticToken(token.clone())).unwrap();
    assert_eq!(source.describe(), "static token");
    assert_eq!(
        source.bearer().await.unwrap(),
        Some(format!("Bearer {token}"))
    );
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let message = auth_message(source.bearer().await);
    assert!(message.contains("expired"), "{message}");
}

#[tokio::test]
async fn a_static_token_for_another_audience_is_refused() {
    let token =
        jwt(&serde_json::json!({"aud": "https://management.azure.com", "exp": now() + 3600}));
    let message = auth_message(TokenSource::new(&AuthConfig::StaticToken(token)));
    assert!(
        message.contains("https://management.azure.com"),
        "{message}"
    );
    assert!(message.contains("https://dynamicsessions.io"), "{message}");
}

#[tokio::test]
async fn a_static_token_for_the_old_audience_is_sent_with_a_warning() {
    let token = jwt(&serde_json::json!({"aud": "https://acasessions.io", "exp": now() + 3600}));
    let source = TokenSource::new(&AuthConfig::StaticToken(token.clone())).unwrap();
    assert_eq!(
        source.bearer().await.unwrap(),
        Some(format!("Bearer {token}"))
    );
}

#[tokio::test]
async fn an_opaque_static_token_passes_through() {
    let source = TokenSource::new(&AuthConfig::StaticToken(" opaque-token_123\n".into())).unwrap();
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer opaque-token_123")
    );
    source.invalidate();
    assert_eq!(
        source.bearer().await.unwrap().as_deref(),
        Some("Bearer opaque-token_123")
    );
    assert!(!format!("{source:?}").contains("opaque-token"));
}

#[tokio::test]
async fn no_auth_sends_no_header() {
    let source = TokenSource::new(&AuthConfig::None).unwrap();
    assert_eq!(source.describe(), "none");
    assert_eq!(source.bearer().await.unwrap(), None);
}

#[test]
fn auth_config_round_trips_through_serde_and_redacts_in_debug() {
    let config = AuthConfig::ClientSecret {
        tenant_id: "t".into(),
        client_id: "c".into(),
        secret: "very-secret".into(),
    };
    let json = serde_json::to_string(&config).unwrap();
    assert_eq!(serde_json::from_str::<AuthConfig>(&json).unwrap(), config);
    assert!(!format!("{config:?}").contains("very-secret"));
    let token = AuthConfig::StaticToken("tok-very-secret".into());
    assert!(!format!("{token:?}").contains("very-secret"));
}
