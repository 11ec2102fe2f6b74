//! The notebook's and the command line's own calls in the flight recorder's
//! ledger (issue 13): what sessionpad itself runs in a
//! session of a pool that does not record (Azure's), next to what agents ran
//! through the local pool or the recording proxy.
//!
//! A process turns it on once ([`install`], with a [`CallSink`]: the ledger's
//! `ledger::ProcessSink`, from the config's `[ledger]`); from
//! then on every [`super::SessionClient`] built for an `https` endpoint records
//! its finished executions (code and shell commands, with outputs and images)
//! and its file uploads, downloads and deletes (name, size, SHA-256). A client
//! of an `http` endpoint records nothing: that is a sessionpad pool or
//! recording proxy on loopback, which records the same call itself (a second
//! record would be a duplicate). The sink must never block a call (the
//! ledger's is one writer thread per process, opened at the first record);
//! [`flush`] waits for it before the process ends. The client knows the sink
//! only by this trait: it never imports the ledger.
//!
//! Every request of a [`super::SessionClient`] carries the `User-Agent`
//! [`super::user_agent`] (`sessionpad/<version> (pid N)`), or the one it was
//! given ([`super::SessionClient::with_user_agent`]: `sessionpad mcp` names
//! the MCP host), which is also the recorded client.
//! Never a token: a [`Call`] has no field for one.

use std::sync::OnceLock;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::ShellRequest;
use crate::protocol::record::{Call, CallKind, RecordedFile, RecordedOutput};
use crate::protocol::{Execution, ShellExecution};

/// Where a process's own calls are recorded: the ledger implements it
/// (`ledger::ProcessSink`); tests may record into memory.
pub trait CallSink: Send + Sync {
    /// Takes one finished call. Must not block on I/O: a call's answer waits
    /// for it.
    fn record(&self, call: Call);
    /// Waits until every call taken so far is stored. May block: for the end
    /// of a process, not for a task.
    fn flush(&self);
}

static PROCESS: OnceLock<Box<dyn CallSink>> = OnceLock::new();

/// Turns recording of this process's own calls on, into `sink`; `None`
/// (recording off in the config) leaves it off. The first call decides: later
/// ones change nothing (one sink per process).
pub fn install(sink: Option<Box<dyn CallSink>>) {
    if let Some(sink) = sink {
        let _ = PROCESS.set(sink);
    }
}

/// Waits until every call this process recorded is stored (nothing when
/// nothing was recorded). Blocks: for the end of a command, not for a task.
pub fn flush() {
    if let Some(sink) = PROCESS.get() {
        sink.flush();
    }
}

/// The process's sink, when recording is on.
fn recorder() -> Option<&'static dyn CallSink> {
    PROCESS.get().map(Box::as_ref)
}

/// How one client records its calls: under the pool key of its endpoint,
/// with its `User-Agent` as the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallRecording {
    pool: String,
    client: String,
}

impl CallRecording {
    /// The recording of a client of `endpoint`: `Some` when this process
    /// records ([`install`]) and the endpoint is `https` (see the module's doc
    /// for why `http` pools are left to record themselves).
    pub(crate) fn for_endpoint(endpoint: &str) -> Option<Self> {
        let https = url::Url::parse(endpoint.trim()).is_ok_and(|u| u.scheme() == "https");
        if https { Self::always(endpoint) } else { None }
    }

    /// The recording of a client of `endpoint` whatever its scheme: `Some`
    /// when this process records ([`install`]).
    pub(crate) fn always(endpoint: &str) -> Option<Self> {
        PROCESS.get()?;
        Some(Self {
            pool: endpoint.trim().trim_end_matches('/').to_string(),
            client: super::user_agent().to_string(),
        })
    }

    /// Records the calls as made by `client` (the `User-Agent` the client
    /// sends instead of the process's).
    pub(crate) fn set_client(&mut self, client: String) {
        self.client = client;
    }

    fn call(
        &self,
        identifier: &str,
        at: DateTime<Utc>,
        duration: Duration,
        kind: CallKind,
    ) -> Call {
        Call::new(
            self.pool.clone(),
            identifier.to_string(),
            Some(self.client.clone()),
            at,
            duration,
            kind,
        )
    }

    /// Records a finished code execution of `code` that began at `at` and took
    /// `duration` (wall clock, the request's round trip).
    pub(crate) fn code(
        &self,
        identifier: &str,
        at: DateTime<Utc>,
        duration: Duration,
        code: &str,
        exec: &Execution,
    ) {
        let Some(recorder) = recorder() else { return };
        let mut call = self.call(identifier, at, duration, CallKind::Code);
        call.execution_id.clone_from(&exec.id);
        call.code = Some(code.to_string());
        call.output = Some(RecordedOutput::of_execution(exec, None));
        call.images.clone_from(&exec.images);
        recorder.record(call);
    }

    /// Records a finished shell command (`request` as sent) and its reply.
    pub(crate) fn shell(
        &self,
        identifier: &str,
        at: DateTime<Utc>,
        duration: Duration,
        request: &ShellRequest,
        exec: &ShellExecution,
    ) {
        let Some(recorder) = recorder() else { return };
        let mut call = self.call(identifier, at, duration, CallKind::Shell);
        call.execution_id.clone_from(&exec.id);
        call.code = Some(crate::protocol::record::shell_command_text(
            &request.command,
        ));
        call.stdin.clone_from(&request.stdin);
        call.output = Some(RecordedOutput::of_shell(exec));
        recorder.record(call);
    }

    /// Records a finished file call of `kind` on `name` (below `/mnt/data`):
    /// the bytes' `size` and SHA-256 where known (`None` for a delete).
    #[allow(clippy::too_many_arguments)] // one call's fields, each distinct
    pub(crate) fn file(
        &self,
        identifier: &str,
        at: DateTime<Utc>,
        duration: Duration,
        kind: CallKind,
        name: &str,
        size: Option<u64>,
        sha256: Option<String>,
    ) {
        let Some(recorder) = recorder() else { return };
        let mut call = self.call(identifier, at, duration, kind);
        call.file = Some(RecordedFile {
            name: name.to_string(),
            size,
            sha256,
        });
        recorder.record(call);
    }
}
