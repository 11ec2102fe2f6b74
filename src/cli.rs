//! Command-line arguments (clap) and the non-interactive commands.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::client::ApiVersion;
use crate::pool::{LocalPool, PoolOptions};

/// sessionpad: a terminal notebook for Azure Container Apps dynamic sessions.
///
/// With no endpoint configured it runs on its embedded local pool (real IPython
/// kernels on this machine).
#[derive(Debug, Parser)]
#[command(name = "sessionpad", version, about)]
pub struct Cli {
    /// What to run; the notebook when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options choosing the session pool.
    #[command(flatten)]
    pub target: TargetOpt,
}

/// Options that choose the session pool and session.
#[derive(Debug, Args, Clone)]
pub struct TargetOpt {
    /// Pool management endpoint; without it the embedded local pool is used.
    #[arg(long, env = "POOL_MANAGEMENT_ENDPOINT")]
    pub endpoint: Option<String>,
    /// Static bearer token for the pool.
    #[arg(long, env = "SESSIONPAD_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Api-version to speak (e.g. 2025-10-02-preview, 2024-02-02-preview).
    #[arg(long, default_value = "2025-10-02-preview")]
    pub api_version: ApiVersion,
    /// Session identifier; a new random one when omitted.
    #[arg(long)]
    pub identifier: Option<String>,
    /// Execution limit per cell, in seconds.
    #[arg(long, default_value_t = 220)]
    pub timeout: u64,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the local pool standalone for other dynamic-sessions clients.
    Serve(ServeOpt),
}

/// Options of `sessionpad serve`.
#[derive(Debug, Args)]
pub struct ServeOpt {
    /// TCP port (0 picks a free one).
    #[arg(long, default_value_t = 8330)]
    pub port: u16,
    /// Address to bind; loopback by default.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Bearer token clients must send; random when omitted.
    #[arg(long = "token", conflicts_with = "no_auth")]
    pub serve_token: Option<String>,
    /// Accept requests without a token.
    #[arg(long)]
    pub no_auth: bool,
    /// An interpreter that already has ipykernel, instead of the built environment.
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// Idle seconds before a session ends (the pool's cooldown).
    #[arg(long, default_value_t = 300)]
    pub cooldown: u64,
    /// Most sessions at once; more answer 404 (or --pool-full-status).
    #[arg(long, default_value_t = 100)]
    pub max_sessions: usize,
    /// Status code when the pool is full: 404 (documented) or 429.
    #[arg(long, default_value_t = 404, value_parser = parse_full_status)]
    pub pool_full_status: u16,
    /// Kernels kept started ahead of need, so new identifiers start at once.
    #[arg(long, default_value_t = 2)]
    pub ready_sessions: usize,
    /// Upper limit of one execution, in seconds (timeoutInSeconds is capped to it).
    #[arg(long, default_value_t = 220)]
    pub max_execution: u64,
    /// Let sandboxed sessions reach the network.
    #[arg(long)]
    pub egress: bool,
    /// Run kernels without bubblewrap even when it is installed.
    #[arg(long)]
    pub no_sandbox: bool,
}

/// `sessionpad serve`: start the pool, print how to reach it, serve until Ctrl+C.
pub async fn serve(opt: ServeOpt) -> anyhow::Result<()> {
    let mut pool_opts = PoolOptions::embedded();
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
            println!("\nTry it:\n  curl -s -X POST '{endpoint}/executions?api-version=2025-10-02-preview&identifier=demo' \\\n    -H 'Authorization: Bearer {t}' -H 'Content-Type: application/json' \\\n    -d '{{\"codeInputType\":\"inline\",\"executionType\":\"synchronous\",\"code\":\"print(6*7)\"}}'");
        }
        None => println!("  authentication:           off (--no-auth)"),
    }
    for w in pool.warnings() {
        println!("\nwarning: {w}");
    }
    println!("\nPress Ctrl+C to stop.");
    tokio::signal::ctrl_c().await?;
    pool.shutdown().await;
    Ok(())
}

fn parse_full_status(s: &str) -> Result<u16, String> {
    match s {
        "404" => Ok(404),
        "429" => Ok(429),
        _ => Err("must be 404 or 429".into()),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn serve_takes_its_own_token() {
        let cli = Cli::try_parse_from(["sessionpad", "serve", "--token", "t", "--port", "0"]).unwrap();
        match cli.command {
            Some(Command::Serve(s)) => assert_eq!(s.serve_token.as_deref(), Some("t")),
            None => panic!("serve expected"),
        }
    }
}
