//! Building `azure_identity` credentials from an [`AuthConfig`], the HTTP transport
//! they use (our own reqwest 0.12 client, so `azure_core` brings no second HTTP and
//! TLS stack), and turning their errors into messages that say what to do.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use azure_core::credentials::{Secret, TokenCredential};
use azure_core::error::ErrorKind;
use azure_core::http::headers::{HeaderName, HeaderValue, Headers};
use azure_core::http::{AsyncRawResponse, Body, ClientOptions, HttpClient, Request, Transport};
use azure_identity::{
    ClientAssertionCredentialOptions, ClientSecretCredential, ClientSecretCredentialOptions,
    DeveloperToolsCredential, ManagedIdentityCredential, ManagedIdentityCredentialOptions,
    UserAssignedId, WorkloadIdentityCredential, WorkloadIdentityCredentialOptions,
};

use super::AuthConfig;

/// Reads an environment variable; empty counts as unset.
pub(super) type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// The process environment.
pub(super) fn process_env(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

const MI_ENV: [&str; 2] = ["IDENTITY_ENDPOINT", "MSI_ENDPOINT"];
const WORKLOAD_ENV: [&str; 3] = [
    "AZURE_TENANT_ID",
    "AZURE_CLIENT_ID",
    "AZURE_FEDERATED_TOKEN_FILE",
];

/// Builds the credential for `config` (which must name one). Errors are messages for
/// [`ClientError::Auth`](crate::client::ClientError::Auth).
pub(super) fn build(
    config: &AuthConfig,
    transport: &Transport,
    env: &EnvLookup,
) -> Result<Arc<dyn TokenCredential>, String> {
    let client_options = || ClientOptions {
        transport: Some(transport.clone()),
        ..Default::default()
    };
    let built: azure_core::Result<Arc<dyn TokenCredential>> = match config {
        AuthConfig::None | AuthConfig::StaticToken(_) => {
            unreachable!("no credential for {config:?}")
        }
        AuthConfig::DeveloperTools => DeveloperToolsCredential::new(None).map(|c| c as _),
        AuthConfig::ManagedIdentity { client_id } => {
            ManagedIdentityCredential::new(Some(ManagedIdentityCredentialOptions {
                user_assigned_id: client_id.clone().map(UserAssignedId::ClientId),
                client_options: client_options(),
            }))
            .map(|c| c as _)
        }
        AuthConfig::WorkloadIdentity => {
            let [tenant, client, file] = WORKLOAD_ENV.map(env);
            let missing: Vec<&str> = WORKLOAD_ENV
                .iter()
                .zip([&tenant, &client, &file])
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| *k)
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "workload identity needs {} (set by the Kubernetes workload identity \
                     webhook); not set: {}",
                    WORKLOAD_ENV.join(", "),
                    missing.join(", ")
                ));
            }
            WorkloadIdentityCredential::new(Some(WorkloadIdentityCredentialOptions {
                credential_options: ClientAssertionCredentialOptions {
                    client_options: client_options(),
                },
                tenant_id: tenant,
                client_id: client,
                token_file_path: file.map(PathBuf::from),
            }))
            .map(|c| c as _)
        }
        AuthConfig::ClientSecret {
            tenant_id,
            client_id,
            secret,
        } => ClientSecretCredential::new(
            tenant_id,
            client_id.clone(),
            Secret::new(secret.clone()),
            Some(ClientSecretCredentialOptions {
                client_options: client_options(),
            }),
        )
        .map(|c| c as _),
    };
    built.map_err(|e| explain(config, &e, env))
}

/// A message for a credential's error: what went wrong and what to do.
pub(super) fn explain(config: &AuthConfig, err: &azure_core::Error, env: &EnvLookup) -> String {
    let what = one_line(&err.to_string());
    match config {
        AuthConfig::DeveloperTools => {
            let hint = if what.contains("az not found on PATH")
                && what.contains("azd not found on PATH")
            {
                "neither `az` nor `azd` is on PATH: install the Azure CLI and run `az login`, \
                 or pass a token with --token"
            } else {
                "sign in with `az login` (or `azd auth login`), or pass a token with --token"
            };
            format!("{hint} ({what})")
        }
        AuthConfig::ManagedIdentity { .. } => {
            if MI_ENV.iter().all(|k| env(k).is_none()) {
                format!(
                    "no managed identity endpoint: IDENTITY_ENDPOINT is not set, so the Azure VM \
                     metadata endpoint (169.254.169.254) was tried; managed identity works only \
                     on Azure (Container Apps, App Service, VMs), use `az login` elsewhere ({what})"
                )
            } else {
                format!(
                    "the managed identity endpoint gave no token: check that the identity \
                     (and client id, if given) is assigned to this resource ({what})"
                )
            }
        }
        AuthConfig::WorkloadIdentity => format!(
            "workload identity gave no token: check the federated credential of \
             AZURE_CLIENT_ID in tenant AZURE_TENANT_ID and the token in \
             AZURE_FEDERATED_TOKEN_FILE ({what})"
        ),
        AuthConfig::ClientSecret { .. } => format!(
            "the client secret gave no token: check the tenant id, client id and secret, \
             and that the secret has not expired ({what})"
        ),
        AuthConfig::None | AuthConfig::StaticToken(_) => what,
    }
}

/// A message for a fetch that took longer than `secs` seconds.
pub(super) fn timeout_message(config: &AuthConfig, env: &EnvLookup, secs: u64) -> String {
    match config {
        AuthConfig::DeveloperTools => format!(
            "`az account get-access-token` did not finish within {secs} s: run \
             `az account get-access-token --resource https://dynamicsessions.io` yourself \
             to see what it waits for"
        ),
        AuthConfig::ManagedIdentity { .. } => match MI_ENV.iter().find_map(|k| env(k)) {
            None => format!(
                "no managed identity endpoint: IDENTITY_ENDPOINT is not set and the Azure VM \
                 metadata endpoint (169.254.169.254) did not answer within {secs} s; managed \
                 identity works only on Azure, use `az login` elsewhere"
            ),
            Some(endpoint) => {
                format!("the managed identity endpoint {endpoint} did not answer within {secs} s")
            }
        },
        _ => format!(
            "the Entra token endpoint did not answer within {secs} s: check the network \
             (and HTTPS_PROXY, if one is needed)"
        ),
    }
}

/// `azure_identity`'s message on one line, without its boilerplate: the
/// "Multiple errors" header, troubleshooting links (each repeats the error before it)
/// and "XCredential authentication failed." prefixes (shortened to `az:`/`azd:`).
fn one_line(s: &str) -> String {
    const PREFIXES: [(&str, &str); 6] = [
        ("AzureCliCredential authentication failed.", "az:"),
        ("AzureDeveloperCliCredential authentication failed.", "azd:"),
        ("ManagedIdentityCredential authentication failed.", ""),
        ("WorkloadIdentityCredential authentication failed.", ""),
        ("ClientAssertionCredential authentication failed.", ""),
        ("ClientSecretCredential authentication failed.", ""),
    ];
    let mut lines: Vec<String> = Vec::new();
    for line in s.lines().map(str::trim) {
        if line.is_empty()
            || line.starts_with("Multiple errors were encountered")
            || line.starts_with("To troubleshoot")
        {
            continue;
        }
        let mut line = line.to_owned();
        for (prefix, short) in PREFIXES {
            if let Some(rest) = line.strip_prefix(prefix) {
                format!("{short} {}", rest.trim())
                    .trim()
                    .clone_into(&mut line);
            }
        }
        if !line.is_empty() && !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines.join("; ")
}

/// The transport credentials send their requests with.
pub(super) fn transport() -> Result<Transport, String> {
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot build the HTTP client for authentication: {e}"))?;
    Ok(Transport::new(Arc::new(ReqwestTransport(client))))
}

/// `azure_core`'s [`HttpClient`] over the crate's reqwest 0.12. Token requests and
/// answers are small, so bodies are buffered.
#[derive(Debug)]
struct ReqwestTransport(reqwest::Client);

#[async_trait::async_trait]
impl HttpClient for ReqwestTransport {
    async fn execute_request(&self, request: &Request) -> azure_core::Result<AsyncRawResponse> {
        let method = reqwest::Method::from_bytes(request.method().as_ref().as_bytes())
            .map_err(|e| azure_core::Error::with_error(ErrorKind::Other, e, "bad HTTP method"))?;
        let mut req = self.0.request(method, request.url().as_str());
        for (name, value) in request.headers().iter() {
            req = req.header(name.as_str(), value.as_str());
        }
        let body = match request.body() {
            Body::Bytes(bytes) => bytes.clone(),
            Body::SeekableStream(stream) => {
                use futures::AsyncReadExt;
                let mut stream = stream.clone();
                let mut buf = Vec::new();
                stream.read_to_end(&mut buf).await.map_err(|e| {
                    azure_core::Error::with_error(ErrorKind::Io, e, "cannot read the request body")
                })?;
                buf.into()
            }
        };
        let transport_error = |e: reqwest::Error| {
            let kind = if e.is_connect() {
                ErrorKind::Connection
            } else {
                ErrorKind::Io
            };
            azure_core::Error::with_error(kind, e, "the token request failed")
        };
        let rsp = req.body(body).send().await.map_err(transport_error)?;
        let status = rsp.status().as_u16();
        let headers: Headers = rsp
            .headers()
            .iter()
            .filter_map(|(k, v)| {
                let v = v.to_str().ok()?;
                Some((
                    HeaderName::from(k.as_str().to_owned()),
                    HeaderValue::from(v.to_owned()),
                ))
            })
            .collect::<std::collections::HashMap<_, _>>()
            .into();
        let bytes = rsp.bytes().await.map_err(transport_error)?;
        Ok(AsyncRawResponse::from_bytes(status.into(), headers, bytes))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_drops_the_boilerplate() {
        let aggregate = "Multiple errors were encountered while attempting to authenticate:\n\
            AzureCliCredential authentication failed. ERROR: Please run 'az login' to setup account.\n\
            To troubleshoot, visit https://aka.ms/x#azure-cli - ERROR: Please run 'az login' to setup account.\n\
            AzureDeveloperCliCredential authentication failed. azd not found on PATH\n\
            To troubleshoot, visit https://aka.ms/x#azd - azd not found on PATH";
        assert_eq!(
            super::one_line(aggregate),
            "az: ERROR: Please run 'az login' to setup account.; azd: azd not found on PATH"
        );
        assert_eq!(
            super::one_line(
                "ManagedIdentityCredential authentication failed. gone\r\nTo troubleshoot, visit x"
            ),
            "gone"
        );
    }
}
