//! `sessionpad mcp`: the pool's MCP tools (`crate::mcp`) on standard input
//! and output, for an MCP host that starts sessionpad as its server. The pool
//! is the one every command reaches (`--endpoint` or a profile: Azure with its
//! Entra credential; else the running `serve` or the background local pool),
//! and each command is one execution of the session client, so an
//! environment's session is an ordinary session of that pool: its identifier
//! is the `environmentId`, which a person opens in the notebook or the CLI.
//! On the local pool, a pool that has ended (the background pool after its
//! idle period) is found or started again at the next command.
//! Standard output carries only the protocol; what a person should know goes
//! to standard error, the rest to the log file.

use std::sync::Arc;

use rmcp::ServiceExt;

use super::target::TargetOpt;
use crate::mcp::host::DEFAULT_COOLDOWN;
use crate::mcp::{ClientHost, SessionTools};

/// Serves the MCP tools over stdio until the host closes standard input.
///
/// # Errors
///
/// A broken config file or profile, a pool that cannot be reached or started,
/// a failure of the stdio transport (the host did not speak MCP).
pub async fn run(target: &TargetOpt) -> anyhow::Result<()> {
    let settings = target.settings()?;
    let conn = super::target::connect(&settings).await?;
    // The background pool's sessions last its idle period; a serve's and
    // Azure's are not known here: the service's default.
    let cooldown = if conn.background {
        settings.background.idle_exit
    } else {
        DEFAULT_COOLDOWN
    };
    let endpoint = conn.client.endpoint().to_string();
    let local = settings
        .endpoint
        .is_none()
        .then(|| conn.client.container_type());
    eprintln!("{}", banner(&conn.label, &endpoint, local));
    // Sessions NOT isolated (the user opted in) are said at start, and in every
    // command's result.
    let notice = conn
        .local_isolation(super::exec::ISOLATION_WAIT)
        .await
        .and_then(|i| i.warning());
    if let Some(line) = &notice {
        eprintln!("warning: {line}");
    }
    let mut host = ClientHost::new(conn.client, settings.timeout, cooldown);
    if settings.endpoint.is_none() {
        // The background pool ends after its idle period: the next command
        // starts (or finds) a local pool again, as every command does.
        let settings = settings.clone();
        host = host.with_reconnect(Box::new(move || {
            let settings = settings.clone();
            Box::pin(async move {
                super::target::connect(&settings)
                    .await
                    .map(|conn| conn.client)
                    .map_err(|e| format!("{e:#}"))
            })
        }));
    }
    let service = SessionTools::new(Arc::new(host))
        .with_notice(notice)
        .serve(rmcp::transport::stdio())
        .await?;
    service.waiting().await?;
    Ok(())
}

/// What `sessionpad mcp` says on standard error at start: which pool the tools
/// run on, and how a person opens an environment's session. `local` is the
/// container type of the local pool reached without an endpoint (its discovery
/// file holds the token), `None` for a pool given by endpoint or profile.
fn banner(label: &str, endpoint: &str, local: Option<crate::protocol::ContainerType>) -> String {
    let how = if let Some(container_type) = local {
        format!(
            "sessionpad exec|files --identifier <environmentId> reach it as they are; the \
             notebook with sessionpad --endpoint {endpoint} --token <the pool's token, in {}> \
             --identifier <environmentId>",
            crate::background::Discovery::path(container_type).display()
        )
    } else {
        "sessionpad --identifier <environmentId> (with this command's pool options) opens it in \
         the notebook"
            .to_string()
    };
    format!(
        "sessionpad mcp: MCP tools on standard input/output, running code on {label} \
         ({endpoint}). Each environmentId is the session identifier of its session: {how}."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_names_the_pool_and_how_to_open_a_session() {
        let local = banner(
            "local (serve, pid 7)",
            "http://127.0.0.1:8330",
            Some(crate::protocol::ContainerType::PythonLts),
        );
        assert!(local.contains("http://127.0.0.1:8330") && local.contains("local-pool.json"));
        assert!(local.contains("--identifier <environmentId>"));
        let azure = banner("eastus.dynamicsessions.io", "https://e", None);
        assert!(azure.contains("eastus.dynamicsessions.io") && !azure.contains("--token"));
    }
}
