//! The MCP server of a session pool, as the service's platform-managed one
//! (`aca-api.md` §8 and §13; Microsoft's `mcp-overview.md`,
//! `sessions-tutorial-shell-mcp.md`, `sessions-tutorial-python-mcp.md`,
//! `mcp-authentication.md`): protocol version `2025-03-26`, server name
//! "Microsoft Container Apps MCP Server", methods `initialize`, `tools/list`,
//! `tools/call` (and the protocol's `ping`); every other method -32601. Tools,
//! for every pool: `launchShell` and its earlier name `launchPythonEnvironment`
//! (→ `structuredContent.environmentId`), `runPythonCodeInRemoteEnvironment`
//! and `runShellCommandInRemoteEnvironment`.
//!
//! Built on the official Rust SDK (`rmcp`): its tool router and macros here,
//! its streamable HTTP transport (stateless, JSON answers) in [`http`] for the
//! local pool's `/mcp` route, its stdio transport for `sessionpad mcp`. What
//! runs the code is a [`SessionHost`]; environments map onto session
//! identifiers ([`environments`]). Each command is run for a [`Caller`], the
//! MCP host as its `initialize` named it, which the pool records as the
//! call's client ([`caller`]). Nothing here knows the terminal.

pub mod caller;
pub mod environments;
pub mod host;
pub mod http;
pub mod shell;

use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

pub use self::caller::Caller;
pub use self::environments::Environments;
pub use self::host::{ClientHost, HostError, SessionHost};
pub use self::shell::{ShellCommand, ShellRun};
use crate::protocol::Execution;

/// `serverInfo.name` of the service's MCP server (`aca-api.md` §13).
pub const SERVER_NAME: &str = "Microsoft Container Apps MCP Server";

/// The one MCP protocol version the service speaks (`aca-api.md` §13).
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_03_26;

/// Arguments of `runPythonCodeInRemoteEnvironment`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PythonArgs {
    /// The id `launchShell` returned.
    pub environment_id: String,
    /// The Python code to run; the value of its last expression is returned.
    pub python_code: String,
}

/// Arguments of `runShellCommandInRemoteEnvironment`: the environment and
/// exactly one of the two forms of a command.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShellArgs {
    /// The id `launchShell` returned.
    pub environment_id: String,
    /// A command line, run by `/bin/sh -c`.
    pub shell_command: Option<String>,
    /// A program and its arguments, run without a shell.
    pub exec_command_and_args: Option<Vec<String>>,
}

/// The MCP server's handler: the tools over one [`SessionHost`] and its
/// [`Environments`]. Cheap to clone (the HTTP transport makes one per request).
#[derive(Clone)]
pub struct SessionTools {
    host: Arc<dyn SessionHost>,
    environments: Arc<Environments>,
    tool_router: ToolRouter<Self>,
    /// A sentence added to every command's result, e.g. that the sessions are
    /// NOT isolated (a local pool the user opted out of the sandbox for).
    notice: Option<Arc<str>>,
}

impl SessionTools {
    /// The tools over `host`, with a new, empty table of environments.
    pub fn new(host: Arc<dyn SessionHost>) -> Self {
        Self {
            host,
            environments: Arc::default(),
            tool_router: Self::tool_router(),
            notice: None,
        }
    }

    /// These tools, with `notice` (one sentence, e.g. `local pool: sandbox
    /// disabled: sessions are NOT isolated from this machine`) added as a text
    /// block to the result of every command, so the model and the person
    /// reading its transcript both see it.
    #[must_use]
    pub fn with_notice(mut self, notice: Option<String>) -> Self {
        self.notice = notice.map(Arc::from);
        self
    }

    /// Runs `run` with the session identifier of `environment`; an unknown or
    /// expired environment, or a command the host could not run, is a tool
    /// error the model reads (see [`tool_error`]). When the request is
    /// cancelled (`cancelled`: its HTTP client went away, or the host sent
    /// `notifications/cancelled`), `run` is dropped: the host's command runs on
    /// in the session and is recorded as answered to nobody (issue 26), and
    /// the result, which nobody reads, says so.
    async fn in_environment(
        &self,
        environment: &str,
        cancelled: &tokio_util::sync::CancellationToken,
        run: impl AsyncFnOnce(String) -> Result<CallToolResult, HostError>,
    ) -> CallToolResult {
        let mut result = match self.environments.command(environment, &*self.host) {
            Ok(identifier) => tokio::select! {
                biased;
                done = run(identifier) => done.unwrap_or_else(|e| tool_error(e.0)),
                () = cancelled.cancelled() => tool_error(
                    "the request was cancelled; the command runs on in the session".into(),
                ),
            },
            Err(why) => tool_error(why),
        };
        if let Some(notice) = &self.notice {
            result
                .content
                .push(ContentBlock::text(format!("warning: {notice}")));
        }
        result
    }

    fn launch(&self) -> CallToolResult {
        let id = self.environments.launch(self.host.cooldown());
        tracing::info!(environment = %id, "MCP environment launched (its session identifier)");
        CallToolResult::structured(json!({ "environmentId": id }))
    }
}

#[tool_router]
impl SessionTools {
    /// `launchShell`: a new environment, its session made on its first command.
    #[tool(
        name = "launchShell",
        description = "Creates a new environment and returns its environmentId. Its session is allocated on the first command. The environmentId is also the session identifier, to open the session in sessionpad."
    )]
    fn launch_shell(&self) -> CallToolResult {
        self.launch()
    }

    /// `launchPythonEnvironment`: the earlier name of `launchShell`.
    #[tool(
        name = "launchPythonEnvironment",
        description = "Creates a new environment and returns its environmentId (the earlier name of launchShell)."
    )]
    fn launch_python_environment(&self) -> CallToolResult {
        self.launch()
    }

    /// `runPythonCodeInRemoteEnvironment`.
    #[tool(
        name = "runPythonCodeInRemoteEnvironment",
        description = "Executes Python code in an existing environment; state persists between calls. Returns stdout, stderr and the value of the last expression (executionResult)."
    )]
    async fn run_python(
        &self,
        Parameters(args): Parameters<PythonArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = caller(&ctx);
        let run = async |identifier: String| {
            let exec = self
                .host
                .run_python(&identifier, &args.python_code, &caller)
                .await?;
            Ok(python_result(&args.environment_id, &exec))
        };
        Ok(self
            .in_environment(&args.environment_id, &ctx.ct, run)
            .await)
    }

    /// `runShellCommandInRemoteEnvironment`.
    #[tool(
        name = "runShellCommandInRemoteEnvironment",
        description = "Executes a shell command in an existing environment: shellCommand (a command line for /bin/sh -c) or execCommandAndArgs (a program and its arguments). Returns stdout, stderr and exitCode."
    )]
    async fn run_shell(
        &self,
        Parameters(args): Parameters<ShellArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let command = ShellCommand::from_arguments(args.shell_command, args.exec_command_and_args)
            .map_err(|why| ErrorData::invalid_params(why, None))?;
        let caller = caller(&ctx);
        let run = async |identifier: String| {
            let run = self.host.run_shell(&identifier, &command, &caller).await?;
            Ok(shell_result(&args.environment_id, &run))
        };
        Ok(self
            .in_environment(&args.environment_id, &ctx.ct, run)
            .await)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for SessionTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_protocol_version(PROTOCOL_VERSION)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(vec![PROTOCOL_VERSION])
    }
}

/// The MCP host a tool call comes from: over HTTP, the [`Caller`] the
/// transport's middleware found for the request ([`http`]; the stateless
/// transport itself keeps no `initialize`); over stdio, the `clientInfo` of
/// the session's `initialize` (or of the request's own metadata, where a
/// client sends it there).
fn caller(ctx: &RequestContext<RoleServer>) -> Caller {
    if let Some(parts) = ctx.extensions.get::<axum::http::request::Parts>() {
        return parts
            .extensions
            .get::<Caller>()
            .cloned()
            .unwrap_or_else(|| {
                let agent = parts
                    .headers
                    .get(axum::http::header::USER_AGENT)
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                Caller::unnamed(agent.as_deref())
            });
    }
    match ctx.client_info() {
        Some(info) => Caller::of_client_info(&info.name, &info.version, None),
        None => Caller::unnamed(None),
    }
}

/// A tool result that is an error the model should read (`isError: true`):
/// an unknown or expired environment, a pool that could not run the command.
fn tool_error(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// The result of `runPythonCodeInRemoteEnvironment`: `structuredContent`
/// `{environmentId, status ("Succeeded" | "Failed"), stdout, stderr,
/// executionResult (the value's text, "" without one),
/// executionTimeInMilliseconds}` (the service documents `stdout`; the other
/// names are those of the `executions` result, `aca-api.md` §4.2), its JSON as
/// the text content, then each image the code displayed as an image content
/// (base64). `isError` when the code failed.
fn python_result(environment: &str, exec: &Execution) -> CallToolResult {
    let value = json!({
        "environmentId": environment,
        "status": exec.status.family_b_name(),
        "stdout": exec.stdout,
        "stderr": exec.stderr,
        "executionResult": exec.result.as_ref().map_or("", |v| v.text.as_str()),
        "executionTimeInMilliseconds": millis(exec.duration),
    });
    let mut value = value;
    add_network(&mut value, &exec.network);
    let mut result = if exec.succeeded() {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    };
    for image in &exec.images {
        let data = base64::engine::general_purpose::STANDARD.encode(&image.data);
        result.content.push(ContentBlock::image(
            data,
            format!("image/{}", image.format.to_ascii_lowercase()),
        ));
    }
    result
}

/// The result of `runShellCommandInRemoteEnvironment`: `structuredContent`
/// `{environmentId, exitCode (null when the command did not finish), stdout,
/// stderr, executionTimeInMilliseconds}` (the service documents `stdout`; the
/// exit code is what a Shell pool's `executions` reply carries in `status`,
/// `aca-api.md` §4.7), its JSON as the text content. `isError` only when the
/// command did not finish: a non-zero exit is an answer, not a failure of the tool.
fn shell_result(environment: &str, run: &ShellRun) -> CallToolResult {
    let value = json!({
        "environmentId": environment,
        "exitCode": run.exit_code,
        "stdout": run.stdout,
        "stderr": run.stderr,
        "executionTimeInMilliseconds": millis(run.duration),
    });
    let mut value = value;
    add_network(&mut value, &run.network);
    if run.exit_code.is_some() {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    }
}

/// How many attempts, and how many blocked addresses, a tool's result lists
/// at most: an agent's context is not the place for a loop's 10,000 (the
/// pool's flight recorder keeps them all).
const NETWORK_LISTED: usize = 100;

/// Adds what the code tried to reach, through a local pool's egress proxy or
/// directly (issue 29), to a tool's `structuredContent`: `network`, the
/// first [`NETWORK_LISTED`] attempts (`{"host","port","decision","via",
/// "bytes","at"}`) with `networkOmitted` counting the rest, and
/// `networkBlocked`, each denied `host:port` once, in the order first tried
/// (what an agent most needs to know: why its request failed), at most
/// [`NETWORK_LISTED`]. Nothing when there were none (Azure's pools never
/// say).
fn add_network(value: &mut Value, attempts: &[crate::protocol::egress::NetworkAttempt]) {
    use crate::protocol::egress::Decision;
    if attempts.is_empty() {
        return;
    }
    value["network"] = json!(&attempts[..attempts.len().min(NETWORK_LISTED)]);
    if attempts.len() > NETWORK_LISTED {
        value["networkOmitted"] = json!(attempts.len() - NETWORK_LISTED);
    }
    let mut blocked: Vec<String> = Vec::new();
    for a in attempts.iter().filter(|a| a.decision == Decision::Denied) {
        let name = format!("{}:{}", a.host, a.port);
        if !blocked.contains(&name) {
            blocked.push(name);
            if blocked.len() == NETWORK_LISTED {
                break;
            }
        }
    }
    if !blocked.is_empty() {
        value["networkBlocked"] = json!(blocked);
    }
}

fn millis(d: std::time::Duration) -> Value {
    Value::from(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::egress::{Decision, NetworkAttempt, Via};

    #[test]
    fn a_loop_of_attempts_is_listed_briefly() {
        let attempt = |port: u16| NetworkAttempt {
            host: "10.1.2.3".into(),
            port,
            decision: Decision::Denied,
            via: Via::Direct,
            bytes: 0,
            at: chrono::Utc::now(),
        };
        let mut attempts: Vec<NetworkAttempt> = (0..300).map(|_| attempt(80)).collect();
        attempts.extend((1..=150).map(attempt));
        let mut value = json!({});
        add_network(&mut value, &attempts);
        assert_eq!(value["network"].as_array().unwrap().len(), NETWORK_LISTED);
        assert_eq!(value["networkOmitted"], 350);
        let blocked = value["networkBlocked"].as_array().unwrap();
        assert_eq!(blocked.len(), NETWORK_LISTED);
        assert_eq!(blocked[0], "10.1.2.3:80");
        assert_eq!(blocked[1], "10.1.2.3:1");
        let mut few = json!({});
        add_network(&mut few, &attempts[..2]);
        assert_eq!(few["networkBlocked"], json!(["10.1.2.3:80"]));
        assert!(few.get("networkOmitted").is_none());
    }
}
