//! `sessionpad serve`: the local pool standalone, for any dynamic-sessions client.

use std::time::Duration;

use super::ServeOpt;
use crate::pool::{LocalPool, PoolOptions};

/// `sessionpad serve`: start the pool, print how to reach it, serve until Ctrl+C.
///
/// Errors: a broken config file, a pool that cannot start.
pub async fn run(opt: ServeOpt, target: &super::target::TargetOpt) -> anyhow::Result<()> {
    let (_, config) = target.load_config()?;
    let mut pool_opts = PoolOptions::embedded();
    pool_opts.limits = opt.limits(&config.pool);
    pool_opts.bind = opt.bind;
    pool_opts.port = opt.port;
    pool_opts.python = opt.python;
    pool_opts.cooldown = Duration::from_secs(opt.cooldown);
    pool_opts.max_sessions = opt.max_sessions;
    pool_opts.pool_full_status = opt.pool_full_status;
    pool_opts.ready_sessions = opt.ready_sessions;
    pool_opts.max_execution = Duration::from_secs(opt.max_execution.max(1));
    pool_opts.egress = opt.egress;
    pool_opts.sandbox = !opt.no_sandbox;
    pool_opts.token = if opt.no_auth {
        None
    } else {
        Some(opt.serve_token.unwrap_or_else(crate::pool::random_token))
    };
    let pool = LocalPool::start(pool_opts, &|line| eprintln!("{line}")).await?;
    let endpoint = pool.endpoint();
    println!("sessionpad local pool");
    println!("  pool management endpoint: {endpoint}");
    match pool.token() {
        Some(t) => {
            println!("  bearer token:             {t}");
            println!(
                "\nTry it:\n  curl -s -X POST '{endpoint}/executions?api-version=2025-10-02-preview&identifier=demo' \\\n    -H 'Authorization: Bearer {t}' -H 'Content-Type: application/json' \\\n    -d '{{\"codeInputType\":\"inline\",\"executionType\":\"synchronous\",\"code\":\"print(6*7)\"}}'"
            );
        }
        None => println!("  authentication:           off (--no-auth)"),
    }
    for w in pool.warnings() {
        println!("\nwarning: {w}");
    }
    let discovery = super::target::Discovery::publish(&pool);
    println!("\nPress Ctrl+C to stop.");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    drop(discovery);
    pool.shutdown().await;
    Ok(())
}
