//! Command-line arguments (clap) and the non-interactive commands, so anything the
//! TUI does can be scripted: `exec`, `files`, `sessions`, `pool`, `serve`,
//! `completions`. Exit codes: 0 success, 1 a failed execution, 2 usage or
//! transport errors.

pub mod entry;
mod exec;
mod files;
pub(crate) mod locate;
pub mod log;
mod mcp;
mod notebook;
mod output;
mod probe;
mod proxy;
mod recorded_files;
mod replay;
mod serve;
mod sessions;
pub mod target;

use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};

pub use self::target::TargetOpt;

/// The environment variables `--help` lists under its options.
const ENVIRONMENT: &str = "\
Environment:
  SESSIONPAD_IMAGE_PROTOCOL  kitty, sixel, iterm2 or halfblocks: draw plots with
                             this protocol instead of the one the terminal's
                             answer chose (auto); the log says which and why
  SESSIONPAD_LOG             the log's filter (default info; debug), written to
                             <data dir>/logs/sessionpad.log
  SESSIONPAD_CONFIG          the config file (else ~/.config/sessionpad/config.toml)
  SESSIONPAD_DATA_DIR        notebooks, the flight recorder, logs
  SESSIONPAD_CACHE_DIR       the local pool's Python environment
  SESSIONPAD_BASE_PYTHON     the interpreter that environment is built from";

/// sessionpad: a terminal notebook for Azure Container Apps dynamic sessions.
///
/// With no endpoint configured it runs on the local pool (real IPython kernels on
/// this machine), started in the background when none runs.
#[derive(Debug, Parser)]
#[command(name = "sessionpad", version, about, after_help = ENVIRONMENT)]
pub struct Cli {
    /// What to run; the notebook when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options choosing the session pool.
    #[command(flatten)]
    pub target: TargetOpt,
    /// Open the notebook on session ID and follow it: the cells other clients
    /// (an agent) run there appear as they finish; type a cell to take over
    /// (it runs in the same session). `f` in the sessions pane stops.
    #[arg(long, value_name = "ID")]
    pub follow: Option<String>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run code in the session and print its output (exit 1 if it fails).
    Exec(exec::ExecOpt),
    /// List, upload, download, inspect and delete files in /mnt/data.
    #[command(subcommand)]
    Files(files::FilesCmd),
    /// List, show and end sessions of the pool.
    #[command(subcommand)]
    Sessions(sessions::SessionsCmd),
    /// Facts about the pool.
    #[command(subcommand)]
    Pool(sessions::PoolCmd),
    /// Run the local pool standalone for other dynamic-sessions clients.
    Serve(ServeOpt),
    /// Serve the pool's MCP tools (launchShell, runPythonCodeInRemoteEnvironment,
    /// runShellCommandInRemoteEnvironment) on standard input and output, for an
    /// MCP host; each environmentId is a session identifier of the pool.
    Mcp,
    /// Print the cells and outputs the local pool recorded, like kubectl logs.
    Log(log::LogOpt),
    /// Write the stored notebook of the session as .ipynb or a # %% script.
    Export(notebook::ExportOpt),
    /// Run a recorded session's cells again, in order, in a fresh session
    /// (exit 1 if one ends otherwise than recorded).
    Replay(replay::ReplayOpt),
    /// Start the notebook with a .ipynb file's code cells ready to run.
    Open(notebook::OpenOpt),
    /// Run a fixed battery of sandbox checks (files, identity, system calls,
    /// network, writable paths, limits) in a fresh session and print what held
    /// and what was open; `--endpoint A --endpoint B` compares two pools.
    Probe(probe::ProbeOpt),
    /// Print shell completions.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
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
    /// Bearer token clients must send (or $SESSIONPAD_TOKEN); random when omitted.
    #[allow(clippy::doc_markdown)]
    // this doc is the --help text: no backticks there
    // The id of the global `--token`, so that this one takes its place here
    // instead of clashing with it (clap skips a global whose id a subcommand has).
    #[arg(
        id = "token",
        long = "token",
        value_name = "TOKEN",
        conflicts_with = "no_auth"
    )]
    pub serve_token: Option<String>,
    /// API key MCP clients must send in the x-ms-apikey header at the pool's
    /// /mcp endpoint; random when omitted.
    #[arg(long, value_name = "KEY", conflicts_with = "no_auth")]
    pub mcp_key: Option<String>,
    /// Accept requests without a token (and MCP requests without a key).
    #[arg(long)]
    pub no_auth: bool,
    /// An interpreter that already has ipykernel, instead of the built environment.
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// The packages of the built Python environment: pythonlts (the default:
    /// like the service's image, with scikit-learn, SciPy, seaborn, requests,
    /// pkg_resources) or minimal (ipykernel, NumPy, pandas, Matplotlib); also
    /// `[pool] image`.
    #[allow(clippy::doc_markdown)] // this doc is the --help text: no backticks there
    #[arg(long, value_name = "IMAGE", conflicts_with = "python")]
    pub image: Option<crate::pool::image::Image>,
    /// Idle seconds before a session ends (the pool's cooldown).
    #[arg(long, default_value_t = 300)]
    pub cooldown: u64,
    /// Most sessions at once; more answer 404 (429 with --azure-limits, or
    /// --pool-full-status).
    #[arg(long, default_value_t = 100)]
    pub max_sessions: usize,
    /// Status code when the pool is full: 404 (documented) or 429 (default
    /// 404; 429 with --azure-limits).
    #[arg(long, value_parser = parse_full_status)]
    pub pool_full_status: Option<u16>,
    /// Emulate the service's limits (also `[pool] azure_limits = true`): Shell
    /// output cut at 4096 bytes per stream, 220 s executions, 128 MB uploads,
    /// the cooldown, and 429 beyond --max-sessions; `pool info` lists them.
    #[arg(long)]
    pub azure_limits: bool,
    /// Kernels kept started ahead of need, so new identifiers start at once.
    #[arg(long, default_value_t = 2)]
    pub ready_sessions: usize,
    /// Upper limit of one execution, in seconds (timeoutInSeconds is capped to it).
    #[arg(long, default_value_t = 220)]
    pub max_execution: u64,
    /// Where sandboxed sessions may connect: `--egress` alone (or `on`) the
    /// host's network; `off` none (the default; also `[pool] egress`);
    /// `allow=HOST[:PORT][,HOST…]` (e.g. `allow=pypi.org:443,*.github.com`)
    /// HTTP and HTTPS through the pool's proxy to those hosts only, every
    /// attempt recorded; `audit` everything through the proxy, recorded.
    #[arg(long, value_name = "POLICY", num_args = 0..=1, default_missing_value = "on", require_equals = false)]
    pub egress: Option<crate::protocol::egress::Egress>,
    /// Run sessions NOT isolated where the sandbox cannot be built (also
    /// `[pool] sandbox = false`). Without it, serve refuses to start there.
    #[arg(long)]
    pub no_sandbox: bool,
    /// Record nothing in the flight recorder's ledger (`sessionpad log`); also
    /// `[ledger] enabled = false` in the config file.
    #[arg(long)]
    pub no_ledger: bool,
    /// Record calls but not what they changed in each session's /mnt/data
    /// (the files, their hashes and bytes); also `[ledger] files = false`.
    /// With --upstream, the proxy then never lists nor fetches the
    /// upstream's files.
    #[arg(long)]
    pub no_record_files: bool,
    /// Memory of each session, e.g. `2GiB` (default 2 GiB; `[pool] memory`).
    #[arg(long, value_name = "SIZE")]
    pub memory: Option<bytesize::ByteSize>,
    /// Processes and threads of each session (default 512; `[pool] processes`).
    #[arg(long, value_name = "N")]
    pub processes: Option<u64>,
    /// Size of each session's private /tmp (default 512 MiB; `[pool] tmp_size`).
    #[arg(long, value_name = "SIZE")]
    pub tmp_size: Option<bytesize::ByteSize>,
    /// Largest file a session may write (default 1 GiB; `[pool] file_size`).
    #[arg(long, value_name = "SIZE")]
    pub file_size: Option<bytesize::ByteSize>,
    /// Size of each session's /mnt/data, a tmpfs of its own (default 1 GiB;
    /// `[pool] data_size`).
    #[arg(long, value_name = "SIZE")]
    pub data_size: Option<bytesize::ByteSize>,
    /// CPU weight of each session against the others, 1-10000 (default 100).
    #[arg(long, value_name = "N")]
    pub cpu_weight: Option<u64>,
    /// Bytes of stdout, and separately of stderr, one execution keeps, e.g.
    /// `64KiB` (default 8 MiB, 1 KiB to 1 GiB; `[pool] max_stream_bytes`): a
    /// longer stream keeps its first and last halves, a marker between them.
    #[arg(long, value_name = "SIZE")]
    pub max_stream_bytes: Option<crate::protocol::limits::StreamBytes>,
    /// End after SECS without a request (none in flight), removing the
    /// discovery file first; by default serve runs until stopped.
    #[arg(long, value_name = "SECS")]
    pub idle_exit: Option<u64>,
    /// Run a recording proxy in front of this pool management endpoint (an Azure
    /// session pool) instead of a local pool: agents use serve's endpoint and
    /// token, the proxy calls the upstream with the credential of --profile or
    /// --auth (default: az login) and records every call (sessionpad log).
    /// The local pool's own flags (sandbox, limits, sessions) are refused with it.
    #[arg(long, value_name = "ENDPOINT", conflicts_with_all = proxy::LOCAL_POOL_ONLY)]
    pub upstream: Option<String>,
    /// Run as the background local pool that commands without an endpoint
    /// start (see `sessionpad pool stop`): published as such; like any serve
    /// it refuses to run sessions NOT isolated unless the user opted in.
    #[arg(long, hide = true)]
    pub background: bool,
}

impl ServeOpt {
    /// The flight recorder's options: the config file's `[ledger]`, none with
    /// `--no-ledger`, without the look at files with `--no-record-files`.
    pub fn ledger(
        &self,
        config: &crate::ledger::LedgerConfig,
    ) -> Option<crate::ledger::LedgerOptions> {
        if self.no_ledger {
            return None;
        }
        let mut ledger = crate::ledger::LedgerOptions::from_config(config)?;
        ledger.files &= !self.no_record_files;
        Some(ledger)
    }

    /// The per-session limits: these flags over the config file's `[pool]`.
    pub fn limits(&self, config: &crate::config::PoolLimits) -> crate::protocol::limits::Limits {
        crate::config::PoolLimits {
            memory: self.memory.or(config.memory),
            processes: self.processes.or(config.processes),
            tmp_size: self.tmp_size.or(config.tmp_size),
            file_size: self.file_size.or(config.file_size),
            data_size: self.data_size.or(config.data_size),
            cpu_weight: self.cpu_weight.or(config.cpu_weight),
            max_stream_bytes: self.max_stream_bytes.or(config.max_stream_bytes),
            sandbox: config.sandbox,
            azure_limits: config.azure_limits,
            image: config.image,
            egress: None,
        }
        .over(crate::protocol::limits::Limits::default())
    }
}

fn parse_full_status(s: &str) -> Result<u16, String> {
    match s {
        "404" => Ok(404),
        "429" => Ok(429),
        _ => Err("must be 404 or 429".into()),
    }
}

/// Runs a non-interactive command; `None` for the notebook, which the caller runs.
/// Errors are printed here (`error: …` on standard error) and become exit code 2.
pub async fn run(command: Command, target: TargetOpt) -> ExitCode {
    let result = match command {
        Command::Exec(opt) => exec::run(opt, &target).await,
        Command::Files(cmd) => files::run(cmd, &target).await,
        Command::Sessions(cmd) => sessions::run_sessions(cmd, &target).await,
        Command::Pool(cmd) => sessions::run_pool(cmd, &target).await,
        Command::Serve(opt) => serve::run(opt, &target).await.map(|()| ExitCode::SUCCESS),
        Command::Mcp => mcp::run(&target).await.map(|()| ExitCode::SUCCESS),
        Command::Export(opt) => notebook::export(&opt, &target),
        Command::Log(opt) => log::run(&opt, &target).await,
        Command::Replay(opt) => replay::run(&opt, &target).await,
        Command::Open(opt) => notebook::open(opt, &target).await,
        Command::Probe(opt) => probe::run(opt, &target).await,
        Command::Completions { shell } => {
            // Written whole from memory: clap_complete panics when its
            // writer fails (a reader that closed the pipe, issue 27).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "sessionpad", &mut script);
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(&script)
                .and_then(|()| stdout.flush())
                .map(|()| ExitCode::SUCCESS)
                .map_err(anyhow::Error::from)
        }
    };
    result.unwrap_or_else(|e| {
        // A reader that stopped reading (`sessionpad log | head -1`) is not
        // an error: what it wanted was printed.
        if closed_pipe(&e) {
            return ExitCode::SUCCESS;
        }
        let _ = writeln!(std::io::stderr(), "error: {}", error_text(&e));
        ExitCode::from(2)
    })
}

/// `e` and its causes as one line, each said once: `context: cause: cause`,
/// leaving out a cause whose words the text before already holds (an error
/// whose message includes its source, as `cannot reach the session pool at
/// …: {source}` does, where `{e:#}` printed the source twice).
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let said = cause.to_string();
        if said.is_empty() || text.contains(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

/// True when `e` comes from writing to a pipe whose reader has gone
/// (`EPIPE`), directly or through JSON serialisation.
fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        let kind = cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| {
                cause
                    .downcast_ref::<serde_json::Error>()
                    .and_then(serde_json::Error::io_error_kind)
            });
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 23: `--help` says how to force an image protocol when the
    /// terminal's answer chose none (or a wrong one).
    #[test]
    fn help_says_how_to_force_an_image_protocol() {
        let help = Cli::command().render_help().to_string();
        assert!(help.contains("SESSIONPAD_IMAGE_PROTOCOL"), "{help}");
        assert!(
            help.contains("kitty, sixel, iterm2 or halfblocks"),
            "{help}"
        );
    }

    /// Issue 27 item 18: a cause the message already holds is said once.
    #[test]
    fn an_errors_causes_are_said_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot reach it: {0}")]
        struct Outer(#[source] std::io::Error);
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = anyhow::Error::new(Outer(io)).context("reaching the pool");
        assert_eq!(
            error_text(&e),
            "reaching the pool: cannot reach it: refused"
        );
        let plain = anyhow::anyhow!("just this");
        assert_eq!(error_text(&plain), "just this");
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn pool_options_go_before_or_after_the_subcommand() {
        for args in [
            &[
                "sessionpad",
                "--endpoint",
                "http://e",
                "--token",
                "t",
                "exec",
                "-c",
                "1",
            ][..],
            &[
                "sessionpad",
                "exec",
                "-c",
                "1",
                "--endpoint",
                "http://e",
                "--token",
                "t",
            ],
            &[
                "sessionpad",
                "files",
                "ls",
                "--token",
                "t",
                "--endpoint",
                "http://e",
            ],
        ] {
            let cli = Cli::try_parse_from(args).unwrap();
            assert_eq!(cli.target.endpoint.as_deref(), Some("http://e"), "{args:?}");
            assert_eq!(cli.target.token.as_deref(), Some("t"), "{args:?}");
        }
    }

    #[test]
    fn serve_takes_its_own_token() {
        let cli =
            Cli::try_parse_from(["sessionpad", "serve", "--token", "t", "--port", "0"]).unwrap();
        match cli.command {
            Some(Command::Serve(s)) => assert_eq!(s.serve_token.as_deref(), Some("t")),
            other => panic!("serve expected, got {other:?}"),
        }
    }

    #[test]
    fn serve_takes_an_egress_policy_and_egress_alone_is_on() {
        use crate::protocol::egress::Egress;
        let egress = |args: &[&str]| match Cli::try_parse_from(args).unwrap().command {
            Some(Command::Serve(s)) => s.egress,
            other => panic!("serve expected, got {other:?}"),
        };
        assert_eq!(egress(&["sessionpad", "serve"]), None);
        assert_eq!(
            egress(&["sessionpad", "serve", "--egress"]),
            Some(Egress::On)
        );
        assert_eq!(
            egress(&["sessionpad", "serve", "--egress", "--port", "0"]),
            Some(Egress::On)
        );
        assert_eq!(
            egress(&["sessionpad", "serve", "--egress", "off"]),
            Some(Egress::Off)
        );
        assert_eq!(
            egress(&["sessionpad", "serve", "--egress=audit"]),
            Some(Egress::Audit)
        );
        let allow = egress(&["sessionpad", "serve", "--egress", "allow=127.0.0.1:8123"]).unwrap();
        assert!(allow.allows("127.0.0.1", 8123) && !allow.allows("127.0.0.1", 9));
        let bad = Cli::try_parse_from(["sessionpad", "serve", "--egress", "allow=a:b"]);
        assert!(bad.unwrap_err().to_string().contains("not a port"));
    }
}
