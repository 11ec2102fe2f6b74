//! `sessionpad serve --upstream ENDPOINT`: the recording proxy ([`crate::proxy`])
//! in front of a session pool, with the upstream's tokens from sessionpad's
//! own auth: the profile's or the flags' `auth` (`az`, managed identity,
//! workload identity, client secret, `token-env`, `none`); without one, the
//! Azure CLI login. The proxy's own bearer token is `serve --token` (random
//! when omitted), never sent upstream.

use anyhow::Context;
use tokio::signal::unix::{SignalKind, signal};

use super::ServeOpt;
use super::output::outln;
use super::target::TargetOpt;
use crate::client::auth::{AuthConfig, TokenSource};
use crate::proxy::{Proxy, ProxyOptions};

/// The `serve` flags (their clap ids) of the local pool only, which
/// `--upstream` refuses with a usage error instead of ignoring them: the
/// proxy runs no session, so it has no sandbox, limits, Python, cooldown,
/// ready sessions or MCP key of its own (`/mcp` goes upstream with the
/// agent's key). `--port`, `--bind`, `--token`, `--no-auth` and
/// `--no-ledger` apply to the proxy.
pub const LOCAL_POOL_ONLY: [&str; 19] = [
    "mcp_key",
    "azure_limits",
    "max_stream_bytes",
    "python",
    "cooldown",
    "max_sessions",
    "pool_full_status",
    "ready_sessions",
    "max_execution",
    "egress",
    "no_sandbox",
    "memory",
    "processes",
    "tmp_size",
    "file_size",
    "data_size",
    "cpu_weight",
    "idle_exit",
    "background",
];

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
    let ledger = opt.ledger(&config.ledger);
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
    outln!("\nPress Ctrl+C to stop.");
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
    outln!("sessionpad recording proxy (pid {})", std::process::id());
    outln!("  pool management endpoint: {}", proxy.endpoint());
    outln!("  upstream:                 {}", proxy.upstream());
    outln!("  upstream auth:            {}", proxy.auth());
    outln!(
        "  bearer token:             {}",
        proxy
            .token()
            .unwrap_or("none: authentication is off (--no-auth)")
    );
    match proxy.ledger() {
        Some(l) => outln!("  recording into:           {}", l.path().display()),
        None => outln!("  recording into:           nothing (--no-ledger)"),
    }
    if proxy.ledger().is_some() {
        match proxy.files_budget() {
            Some(max) => outln!(
                "  files:                    listed after each execution; changed files up to {} kept",
                bytesize::ByteSize(max)
            ),
            None => outln!("  files:                    not recorded (--no-record-files)"),
        }
    }
    outln!(
        "\nAgents use the endpoint above with the bearer token above; the proxy calls \
         the upstream with its own credential and records each call (sessionpad log)."
    );
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use clap::error::ErrorKind;

    use super::super::{Cli, Command};

    const UP: &str = "http://127.0.0.1:9";

    #[test]
    fn the_local_pools_flags_are_refused_with_upstream() {
        for flag in [
            &["--mcp-key", "k"][..],
            &["--python", "/usr/bin/python3"],
            &["--cooldown", "60"],
            &["--max-sessions", "3"],
            &["--pool-full-status", "429"],
            &["--ready-sessions", "0"],
            &["--max-execution", "10"],
            &["--egress"],
            &["--no-sandbox"],
            &["--memory", "1GiB"],
            &["--processes", "64"],
            &["--tmp-size", "1MiB"],
            &["--file-size", "1MiB"],
            &["--data-size", "1MiB"],
            &["--cpu-weight", "10"],
            &["--idle-exit", "5"],
            &["--background"],
            &["--azure-limits"],
        ] {
            let args = [&["sessionpad", "serve", "--upstream", UP][..], flag].concat();
            let err = Cli::try_parse_from(&args).expect_err(flag[0]);
            assert_eq!(err.kind(), ErrorKind::ArgumentConflict, "{}", flag[0]);
            let text = err.to_string();
            assert!(
                text.contains("--upstream") && text.contains(flag[0]),
                "{text}"
            );
            // Without --upstream the flag is the local pool's, as before.
            let alone = [&["sessionpad", "serve"][..], flag].concat();
            assert!(Cli::try_parse_from(&alone).is_ok(), "{}", flag[0]);
        }
    }

    #[test]
    fn the_proxys_own_flags_go_with_upstream() {
        let cli = Cli::try_parse_from([
            "sessionpad",
            "serve",
            "--upstream",
            UP,
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--token",
            "t",
            "--no-ledger",
        ])
        .unwrap();
        let Some(Command::Serve(opt)) = cli.command else {
            panic!("not serve");
        };
        assert_eq!(opt.upstream.as_deref(), Some(UP));
        assert_eq!(opt.serve_token.as_deref(), Some("t"));
        assert!(opt.no_ledger);
        assert!(
            Cli::try_parse_from(["sessionpad", "serve", "--upstream", UP, "--no-auth"]).is_ok()
        );
    }
}
