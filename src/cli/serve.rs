//! `sessionpad serve`: the local pool standalone, for any dynamic-sessions client.
//!
//! Agents are pointed at it and their code is hostile, so it refuses to start
//! when kernels could not run sandboxed, unless told `--no-sandbox`; it prints
//! the isolation in force (sandbox, each limit and its mechanism) at start.

use std::time::Duration;

use anyhow::bail;
use tokio::signal::unix::{SignalKind, signal};

use super::ServeOpt;
use super::output::outln;
use crate::background::{Discovery, DiscoveryGuard, NotPublished};
use crate::pool::{LocalPool, PoolOptions, Sandbox};
use crate::protocol::ContainerType;
use crate::protocol::Isolation;
/// After the discovery file is removed for an idle exit, how long the pool
/// keeps answering: a command that read the file just before still gets its
/// answer, and one that comes in this time puts the file back.
const IDLE_GRACE: Duration = Duration::from_secs(2);

/// `sessionpad serve`: start the pool, print how to reach it, serve until Ctrl+C
/// or SIGTERM.
///
/// # Errors
///
/// No working sandbox without `--no-sandbox` (checked before the Python
/// environment is prepared, and again on the started pool); the pool cannot
/// start (environment, address taken); the signal handlers cannot be set up; a
/// broken config file.
pub async fn run(mut opt: ServeOpt, target: &super::target::TargetOpt) -> anyhow::Result<()> {
    if let Some(upstream) = opt.upstream.clone() {
        return super::proxy::run(opt, upstream, target).await;
    }
    let (_, config) = target.load_config()?;
    let limits = opt.limits(&config.pool);
    // The opt-in to sessions NOT isolated: the flag, or `[pool] sandbox = false`
    // (which the background pool, started by the notebook and the commands,
    // reads from the same config file).
    opt.no_sandbox |= config.pool.sandbox == Some(false);
    // The service's limits: the flag, or `[pool] azure_limits = true` (which
    // the background pool reads from the same config file too).
    opt.azure_limits |= config.pool.azure_limits == Some(true);
    // The egress policy: the flag, else `[pool] egress` (which the background
    // pool reads from the same config file too).
    opt.egress = opt.egress.or_else(|| config.pool.egress.clone());
    // The background pool's sessions otherwise live as long as it does (its
    // cooldown is its idle exit); with the service's limits they end after
    // the service's default cooldown.
    if opt.azure_limits && opt.background {
        opt.cooldown = opt
            .cooldown
            .min(crate::protocol::service_limits::COOLDOWN_SECS);
    }
    let (background, idle_exit) = (opt.background, opt.idle_exit.map(Duration::from_secs));
    // Every serve, the background one too, refuses to run sessions unisolated
    // unless the user opted in.
    if !opt.no_sandbox {
        let egress = opt.egress.clone().unwrap_or_default();
        let detected =
            tokio::task::spawn_blocking(move || Sandbox::detect_with(true, egress)).await?;
        if let Err(why) = detected {
            bail!(refusal(&why.to_string(), why.fix()));
        }
    }
    let no_sandbox = opt.no_sandbox;
    // Published with the endpoint: commands asking for another policy do not
    // use this pool.
    let egress = opt.egress.clone().unwrap_or_default();
    let ledger = opt.ledger(&config.ledger);
    opt.image = opt.image.or(config.pool.image);
    let mut options = pool_options(opt, limits);
    options.ledger = ledger;
    options.container_type = target.container_type.unwrap_or_default();
    let pool = LocalPool::start(options, &|line| eprintln!("{line}")).await?;
    if let (false, Some(why)) = (no_sandbox, pool.isolation().unsandboxed.clone()) {
        // Detection passed a moment ago but the pool's own failed: still refuse.
        pool.shutdown().await;
        bail!(refusal(&why, None));
    }
    // Before the discovery file is written and "Press Ctrl+C" printed: a signal
    // that came before the handlers would end the process without removing it.
    let mut term = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    print_banner(&pool, background);
    let mut discovery = match Discovery::publish(&pool, background, &egress) {
        Ok(guard) => Some(guard),
        Err(not) => {
            outln!("\n{}", not_published(&not));
            None
        }
    };
    match (background, idle_exit) {
        (true, Some(idle)) => outln!(
            "\nThe background local pool: it ends after {} s without a request, or on \
             `sessionpad pool stop`.",
            idle.as_secs()
        ),
        (false, Some(idle)) => outln!(
            "\nPress Ctrl+C to stop; it ends by itself after {} s without a request.",
            idle.as_secs()
        ),
        (_, None) => outln!("\nPress Ctrl+C to stop."),
    }
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = term.recv() => {}
        () = idle_end(&pool, idle_exit, &mut discovery, (background, &egress)) => {}
    }
    drop(discovery);
    pool.shutdown().await;
    Ok(())
}

/// Returns once the pool has had no request for `idle` (never without one):
/// the discovery file is removed first, so new commands start another pool,
/// and if a request still comes within [`IDLE_GRACE`] the file is put back and
/// the wait starts over. `published` is what the file says besides the
/// pool: whether it is the background pool, and its egress policy.
async fn idle_end(
    pool: &LocalPool,
    idle: Option<Duration>,
    discovery: &mut Option<DiscoveryGuard>,
    published: (bool, &crate::protocol::egress::Egress),
) {
    let Some(idle) = idle else {
        return std::future::pending().await;
    };
    let mut tick = tokio::time::interval(Duration::from_secs(1).min(idle));
    loop {
        tick.tick().await;
        if pool.idle_for().is_none_or(|quiet| quiet < idle) {
            continue;
        }
        let was_published = discovery.take().is_some();
        tokio::time::sleep(IDLE_GRACE).await;
        if pool
            .idle_for()
            .is_some_and(|quiet| quiet >= idle + IDLE_GRACE)
        {
            tracing::info!("no request for {} s: ending", idle.as_secs());
            eprintln!("no request for {} s: the idle pool ends", idle.as_secs());
            return;
        }
        if was_published {
            *discovery = Discovery::publish(pool, published.0, published.1).ok();
        }
    }
}

fn pool_options(opt: ServeOpt, limits: crate::protocol::limits::Limits) -> PoolOptions {
    let mut pool_opts = PoolOptions::embedded();
    pool_opts.limits = limits;
    pool_opts.bind = opt.bind;
    pool_opts.port = opt.port;
    pool_opts.python = opt.python;
    pool_opts.image = opt.image.unwrap_or_default();
    pool_opts.cooldown = Duration::from_secs(opt.cooldown);
    pool_opts.max_sessions = opt.max_sessions;
    if opt.azure_limits {
        pool_opts = pool_opts.with_azure_limits();
    }
    if let Some(status) = opt.pool_full_status {
        pool_opts.pool_full_status = status;
    }
    pool_opts.ready_sessions = opt.ready_sessions;
    pool_opts.max_execution = Duration::from_secs(opt.max_execution.max(1));
    pool_opts.egress = opt.egress.unwrap_or_default();
    pool_opts.sandbox = !opt.no_sandbox;
    (pool_opts.token, pool_opts.mcp_key) = if opt.no_auth {
        (None, None)
    } else {
        (
            Some(opt.serve_token.unwrap_or_else(crate::pool::random_token)),
            Some(opt.mcp_key.unwrap_or_else(crate::pool::random_token)),
        )
    };
    pool_opts
}

/// The one message of a refused start: why there is no sandbox (a sentence of
/// `NoSandbox`, which says sessions are not isolated), how to fix it where the
/// cause is known, and what `--no-sandbox` means.
fn refusal(why: &str, fix: Option<&str>) -> String {
    let fix = fix.map_or_else(
        || "make the sandbox work, ".to_string(),
        |fix| format!("to fix it, {fix}\n"),
    );
    format!(
        "refusing to serve without a sandbox: {why}. Agents pointed at this pool run \
         their code on this machine; {fix}or pass --no-sandbox (or set `sandbox = false` \
         under [pool] in the config file) to run sessions NOT isolated anyway"
    )
}

/// What the second serve says when the discovery file is another's.
fn not_published(not: &NotPublished) -> String {
    match not {
        NotPublished::Taken { pid, path } => format!(
            "note: another sessionpad serve (pid {pid}) already publishes the discovery file \
             {}: commands without --endpoint will find that one, not this one (give them \
             --endpoint and --token)",
            path.display()
        ),
        NotPublished::Io(e) => format!(
            "note: the discovery file could not be written ({e}): commands without \
             --endpoint will not find this serve"
        ),
    }
}

/// What serve prints at start. The background pool's output is its log file,
/// which keeps no secret: its token and MCP key are only in the discovery file
/// (mode 0600).
fn print_banner(pool: &LocalPool, background: bool) {
    let endpoint = pool.endpoint();
    let mcp = pool.mcp_endpoint();
    let secret = |value: Option<&str>| match value {
        Some(_) if background => format!(
            "in {} (readable by this user only)",
            Discovery::path(pool.registry().container_type()).display()
        ),
        Some(v) => v.to_string(),
        None => "none: authentication is off (--no-auth)".into(),
    };
    outln!("sessionpad local pool (pid {})", std::process::id());
    outln!("  pool management endpoint: {endpoint}");
    outln!(
        "  container type:           {}",
        pool.registry().container_type()
    );
    outln!("  bearer token:             {}", secret(pool.token()));
    outln!("  MCP endpoint:             {mcp}");
    outln!("  MCP API key (x-ms-apikey): {}", secret(pool.mcp_key()));
    if let (false, Some(token), Some(key)) = (background, pool.token(), pool.mcp_key()) {
        let body = match pool.registry().container_type() {
            ContainerType::Shell => r#"{"shellCommand":"echo $((6*7))"}"#,
            ContainerType::NodeLts => {
                r#"{"codeInputType":"inline","executionType":"synchronous","code":"console.log(6*7)"}"#
            }
            _ => r#"{"codeInputType":"inline","executionType":"synchronous","code":"print(6*7)"}"#,
        };
        outln!(
            "\nTry it:\n  curl -s -X POST '{endpoint}/executions?api-version=2025-10-02-preview&identifier=demo' \\\n    -H 'Authorization: Bearer {token}' -H 'Content-Type: application/json' \\\n    -d '{body}'"
        );
        outln!(
            "  curl -s -X POST '{mcp}' -H 'x-ms-apikey: {key}' -H 'Content-Type: application/json' \\\n    -d '{{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"tools/list\"}}'"
        );
    }
    outln!("\n{}", isolation_report(pool.isolation()));
    let reason = pool.isolation().unsandboxed.as_deref();
    // The reason for no sandbox is among the pool's warnings; say it once.
    for w in pool
        .warnings()
        .iter()
        .filter(|w| Some(w.as_str()) != reason)
    {
        outln!("\nwarning: {w}");
    }
    if let Some(warning) = pool.isolation().warning() {
        outln!("\nwarning: {warning}");
    }
}

/// The isolation block of serve's banner: a heading, then one line per
/// [`Isolation::lines`] entry with its label padded into a column.
fn isolation_report(iso: &Isolation) -> String {
    let lines = iso.lines();
    let width = lines
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::from("isolation of each session:");
    for (label, value) in lines {
        let label = if label.is_empty() {
            String::new()
        } else {
            format!("{label}:")
        };
        out.push_str(&format!("\n  {label:<w$} {value}", w = width + 1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::sandbox::NoSandbox;
    use crate::protocol::isolation::Limit;

    #[test]
    fn the_report_lists_the_sandbox_limits_and_notes() {
        let iso = Isolation {
            unsandboxed: None,
            limits: vec![Limit {
                what: "memory".into(),
                value: "2 GiB".into(),
                mechanism: "cgroup v2".into(),
            }],
            notes: vec!["no network".into()],
        };
        assert_eq!(
            isolation_report(&iso),
            "isolation of each session:\n  sandbox: built in\n  memory:  2 GiB (cgroup v2)\n           no network"
        );
    }

    #[test]
    fn a_refusal_says_why_and_how_to_run_anyway() {
        let why = NoSandbox::Unusable {
            error: "new user namespace: No space left on device".into(),
            cause: Some(crate::pool::sandbox::diagnose::Cause {
                what: "user namespaces are switched off".into(),
                fix: "run `sysctl -w user.max_user_namespaces=15000`".into(),
            }),
        };
        let msg = refusal(&why.to_string(), why.fix());
        assert!(msg.contains("user namespaces are switched off (new user namespace: No space"));
        assert!(msg.contains("to fix it, run `sysctl -w user.max_user_namespaces=15000`\n"));
        assert!(msg.contains("--no-sandbox"), "{msg}");
        assert!(msg.contains("NOT isolated"));
    }
}
