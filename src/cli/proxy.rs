//! `sessionpad serve --upstream ENDPOINT`: the recording proxy ([`crate::proxy`])
//! in front of a session pool, with the upstream's tokens from sessionpad's
//! own auth: the profile's or the flags' `auth` (`az`, managed identity,
//! workload identity, client secret, `token-env`, `none`); without one, the
//! Azure CLI login. The proxy's own bearer token is `serve --token` (random
//! when omitted), never sent upstream.

use anyhow::Context;
use tokio::signal::unix::{SignalKind, signal};

use super::ServeOpt;
use super::target::TargetOpt;
use crate::client::auth::{AuthConfig, TokenSource};
use crate::proxy::{Proxy, ProxyOptions};

/// Runs the proxy until Ctrl+C or SIGTERM, after printing how to reach it.
///
/// # Errors
///
/// A broken config file or profile, a `token-env` variable not set, a
/// credential that cannot be set up, an invalid upstream, an address taken,
/// a ledger that cannot be opened, the signal handlers not set up.
pub async fn run(opt: ServeOpt, upstream: String, target: &TargetOpt) -> anyhow::Result<()> {
    let tokens = TokenSource::new(&upstream_auth(target, &upstream)?)
        .context("the upstream's credential")?;
    let (_, config) = target.load_config()?;
    let ledger = if opt.no_ledger {
        None
    } else {
        crate::ledger::LedgerOptions::from_config(&config.ledger)
    };
    let token = if opt.no_auth {
        None
    } else {
        Some(opt.serve_token.unwrap_or_else(crate::pool::random_token))
    };
    let proxy = Proxy::start(ProxyOptions {
        upstream,
        tokens,
        bind: opt.bind,
        port: opt.port,
        token,
        ledger,
    })
    .await?;
    let mut term = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    print_banner(&proxy);
    println!("\nPress Ctrl+C to stop.");
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = term.recv() => {}
    }
    proxy.shutdown().await;
    Ok(())
}

/// How the upstream's tokens are had: the `auth` of the flags or the
/// profile (`token-env`: the profile's variable, a static token), else the
/// Azure CLI login. `--token` and `SESSIONPAD_TOKEN` are the proxy's own
/// token here, never the upstream's.
fn upstream_auth(target: &TargetOpt, upstream: &str) -> anyhow::Result<AuthConfig> {
    let settings = TargetOpt {
        endpoint: Some(upstream.to_string()),
        token: None,
        ..target.clone()
    }
    .settings()?;
    Ok(match (settings.auth, settings.token) {
        (Some(auth), _) => auth,
        (None, Some(token)) => AuthConfig::StaticToken(token),
        (None, None) => AuthConfig::DeveloperTools,
    })
}

fn print_banner(proxy: &Proxy) {
    println!("sessionpad recording proxy (pid {})", std::process::id());
    println!("  pool management endpoint: {}", proxy.endpoint());
    println!("  upstream:                 {}", proxy.upstream());
    println!("  upstream auth:            {}", proxy.auth());
    println!(
        "  bearer token:             {}",
        proxy
            .token()
            .unwrap_or("none: authentication is off (--no-auth)")
    );
    match proxy.ledger() {
        Some(l) => println!("  recording into:           {}", l.path().display()),
        None => println!("  recording into:           nothing (--no-ledger)"),
    }
    println!(
        "\nAgents use the endpoint above with the bearer token above; the proxy calls \
         the upstream with its own credential and records each call (sessionpad log)."
    );
}
