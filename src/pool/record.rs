//! The local pool's hook into the flight recorder's ledger ([`crate::ledger`]):
//! a handler that has the request takes a [`Recording`] (the client's
//! `User-Agent`, the identifier, the arrival time) and, once it has the reply,
//! hands the finished call to the pool's [`Recorder`], which never blocks.
//! Nothing of the request's other headers is kept, so no token or
//! `Authorization` header can reach the ledger. The recording proxy
//! (`serve --upstream`, [`crate::proxy`]) records through the same API, under
//! its upstream endpoint's pool key ([`Recording::start_in`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::http::HeaderMap;
use axum::http::header::USER_AGENT;
use chrono::{DateTime, Utc};

use crate::ledger::Recorder;
use crate::protocol::Execution;
use crate::protocol::record::{Call, CallKind, FileChange, RecordedFile, RecordedOutput};

/// A call being answered, to be recorded when its reply is known.
#[derive(Debug, Clone)]
pub(crate) struct Recording {
    recorder: Recorder,
    pool: std::sync::Arc<str>,
    identifier: String,
    client: Option<String>,
    at: DateTime<Utc>,
    started: Instant,
    /// Set when the request's handler was dropped before the answer (the
    /// client went away); shared by the clones that record the call.
    gone: Arc<AtomicBool>,
    /// What the call changed in the session's `/mnt/data` (issue 26).
    files: Vec<FileChange>,
    /// What the look at `/mnt/data` could not see.
    files_note: Option<String>,
    /// What the execution tried to reach through the session's egress proxy.
    network: Vec<crate::protocol::egress::NetworkAttempt>,
}

/// Held by a handler while it waits for the answer it records: dropped
/// without [`ClientWatch::answered`] (the client went away, and the server
/// dropped the handler), it marks the call as answered to nobody.
#[derive(Debug)]
pub(crate) struct ClientWatch {
    gone: Option<Arc<AtomicBool>>,
}

impl ClientWatch {
    /// The handler got its answer: the client was still there.
    pub(crate) fn answered(mut self) {
        self.gone = None;
    }
}

impl Drop for ClientWatch {
    fn drop(&mut self) {
        if let Some(gone) = self.gone.take() {
            gone.store(true, Ordering::SeqCst);
        }
    }
}

impl Recording {
    /// Starts recording a call about `identifier` whose request carried
    /// `headers`, under the pool's key (`pool`, [`crate::protocol::record::local_pool_key`]);
    /// `None` when the pool records nothing.
    pub(crate) fn start(
        recorder: Option<&Recorder>,
        pool: &Arc<str>,
        headers: &HeaderMap,
        identifier: &str,
    ) -> Option<Self> {
        Some(Self::start_in(
            recorder?,
            Arc::clone(pool),
            headers,
            identifier,
        ))
    }

    /// Starts recording a call about `identifier` whose request carried
    /// `headers` (only `User-Agent` is kept), under the pool key `pool` (the
    /// proxy's upstream endpoint).
    pub(crate) fn start_in(
        recorder: &Recorder,
        pool: std::sync::Arc<str>,
        headers: &HeaderMap,
        identifier: &str,
    ) -> Self {
        let recorder = recorder.clone();
        let client = headers
            .get(USER_AGENT)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        Self {
            recorder,
            pool,
            identifier: identifier.to_string(),
            client,
            at: Utc::now(),
            started: Instant::now(),
            gone: Arc::new(AtomicBool::new(false)),
            files: Vec::new(),
            files_note: None,
            network: Vec::new(),
        }
    }

    /// The same recording, with what the call changed in the session's
    /// `/mnt/data` ([`crate::pool::files::changes`]).
    pub(crate) fn with_files(mut self, changes: crate::pool::files::changes::Changes) -> Self {
        self.files = changes.files;
        self.files_note = changes.note;
        self
    }

    /// The same recording, with what the execution tried to reach through
    /// its session's egress proxy (issue 29).
    pub(crate) fn with_network(
        mut self,
        network: &[crate::protocol::egress::NetworkAttempt],
    ) -> Self {
        self.network = network.to_vec();
        self
    }

    /// A watch on this call's client, for a handler to hold while it waits
    /// ([`ClientWatch`]).
    pub(crate) fn watch(&self) -> ClientWatch {
        ClientWatch {
            gone: Some(self.gone.clone()),
        }
    }

    /// The same recording, about `identifier` (for handlers that start timing
    /// before the identifier is checked).
    pub(crate) fn about(mut self, identifier: &str) -> Self {
        identifier.clone_into(&mut self.identifier);
        self
    }

    fn call(&self, kind: CallKind) -> Call {
        let mut call = Call::new(
            self.pool.to_string(),
            self.identifier.clone(),
            self.client.clone(),
            self.at,
            self.started.elapsed(),
            kind,
        );
        call.client_gone = self.gone.load(Ordering::SeqCst);
        call.files.clone_from(&self.files);
        call.files_note.clone_from(&self.files_note);
        call.network.clone_from(&self.network);
        call
    }

    /// Records a finished execution of `code` (kind [`CallKind::Code`]) as the
    /// kernel returned it; the call shares the execution's output
    /// ([`RecordedOutput::of_shared`]) rather than copying it.
    pub(crate) fn code(&self, code: &str, exec: &Arc<Execution>) {
        let mut call = self.call(CallKind::Code);
        call.execution_id.clone_from(&exec.id);
        call.code = Some(code.to_string());
        call.output = Some(output(exec, None));
        call.images.clone_from(&exec.images);
        self.recorder.record(call);
    }

    /// Records a finished shell command (`command` as sent: the line, or the
    /// argv as JSON) with its `stdin` and exit code.
    pub(crate) fn shell(
        &self,
        command: String,
        stdin: Option<String>,
        exec: &Arc<Execution>,
        exit_code: Option<i32>,
    ) {
        let mut call = self.call(CallKind::Shell);
        call.execution_id.clone_from(&exec.id);
        call.code = Some(command);
        call.stdin = stdin;
        call.output = Some(output(exec, exit_code));
        self.recorder.record(call);
    }

    /// Records a file call: `name` below `/mnt/data`, the bytes' `size` and
    /// SHA-256 where known.
    pub(crate) fn file(
        &self,
        kind: CallKind,
        name: String,
        size: Option<u64>,
        sha256: Option<String>,
    ) {
        let mut call = self.call(kind);
        call.file = Some(RecordedFile { name, size, sha256 });
        self.recorder.record(call);
    }
}

impl Recording {
    /// Records the end of the session (kind [`CallKind::End`]), `cause`
    /// saying why (`the client ended it`, `idle past the cooldown`, `the
    /// pool stopped`), with the files the last look found changed.
    pub(crate) fn ended(&self, cause: &str) {
        let mut call = self.call(CallKind::End);
        call.output = Some(RecordedOutput {
            status: cause.to_string(),
            ..RecordedOutput::default()
        });
        self.recorder.record(call);
    }
}

fn output(exec: &Arc<Execution>, exit_code: Option<i32>) -> RecordedOutput {
    RecordedOutput::of_shared(exec, exit_code)
}

/// Counts and hashes a download's bytes as they go out, and records the call
/// when the body is done or dropped (a client that broke off is recorded with
/// the bytes sent and no hash).
pub(crate) struct DownloadTap {
    recording: Recording,
    name: String,
    expected: u64,
    sent: u64,
    complete: bool,
    hasher: sha2::Sha256,
}

impl DownloadTap {
    /// A tap for the download of `name` (below `/mnt/data`), `expected` bytes.
    pub(crate) fn new(recording: Recording, name: String, expected: u64) -> Self {
        use sha2::Digest;
        Self {
            recording,
            name,
            expected,
            sent: 0,
            complete: false,
            hasher: sha2::Sha256::new(),
        }
    }

    /// Notes `chunk` as sent.
    pub(crate) fn update(&mut self, chunk: &[u8]) {
        use sha2::Digest;
        self.sent += chunk.len() as u64;
        self.hasher.update(chunk);
    }

    /// Notes that the body ended whole, for a download whose length was not
    /// known in advance (the proxy's, when the upstream sent no
    /// `Content-Length`): its hash is then recorded whatever `expected` said.
    pub(crate) fn complete(&mut self) {
        self.complete = true;
    }
}

impl Drop for DownloadTap {
    fn drop(&mut self) {
        use sha2::Digest;
        let hash = std::mem::take(&mut self.hasher).finalize();
        let sha = (self.complete || self.sent == self.expected)
            .then(|| crate::protocol::record::hex(&hash));
        self.recording.file(
            CallKind::Download,
            std::mem::take(&mut self.name),
            Some(self.sent),
            sha,
        );
    }
}
