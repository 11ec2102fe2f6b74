//! The flight recorder's record of one data-plane call, as the ledger keeps it
//! and `sessionpad log --json` and the event stream carry it: what kind of call,
//! the code or command, the outcome, the images by content hash, the file
//! touched. Pure data, no I/O: the client builds [`Call`]s of its own calls, the
//! local pool and the recording proxy of theirs, and the ledger
//! ([`crate::ledger`]) stores them and reads them back as [`Entry`]s. Never a
//! token or an `Authorization` header: a [`Call`] has no field that could hold
//! one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The pool key every local pool's calls were recorded under before issue
/// 26 (ledgers written then still hold it); a local pool now records under
/// [`local_pool_key`], other pools' calls go under their endpoint.
pub const POOL_KEY: &str = "local";

/// The pool key a local pool of `container_type` listening at `addr`
/// (`host:port`) records its calls under: `local/PythonLTS/127.0.0.1:8341`.
/// One identifier used on a Python and a Shell pool, or on a `serve` and the
/// background pool at once, is so two recorded sessions (issue 26).
pub fn local_pool_key(container_type: crate::protocol::ContainerType, addr: &str) -> String {
    format!("{POOL_KEY}/{}/{addr}", container_type.arm_name())
}

/// The pool key of the pool at `endpoint` whose sessions run
/// `container_type`, as its calls are recorded: a loopback `http://` endpoint
/// is a sessionpad local pool ([`local_pool_key`] of its `host:port`), any
/// other the endpoint without its trailing `/` (the recording proxy's and the
/// client's own key).
pub fn pool_key_of(endpoint: &str, container_type: crate::protocol::ContainerType) -> String {
    let endpoint = endpoint.trim().trim_end_matches('/');
    match endpoint.strip_prefix("http://") {
        Some(addr)
            if addr.starts_with("127.")
                || addr.starts_with("localhost:")
                || addr.starts_with("[::1]") =>
        {
            local_pool_key(container_type, addr)
        }
        _ => endpoint.to_string(),
    }
}

/// Whether `key` is a local pool's (the legacy [`POOL_KEY`] included).
pub fn is_local_pool_key(key: &str) -> bool {
    key == POOL_KEY || key.starts_with("local/")
}

/// The `host:port` a local pool key's pool listened at (`None` for the
/// legacy [`POOL_KEY`] and for other pools' keys).
pub fn local_pool_addr(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("local/")?;
    rest.split_once('/').map(|(_, addr)| addr)
}

/// What kind of data-plane call a [`Call`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// Code run in the session's language (`code/execute`, `POST executions`).
    Code,
    /// A shell command (`POST executions` on a Shell pool, `aca-api.md` §4.7).
    Shell,
    /// A file stored into `/mnt/data` (`files/upload`, `POST files`).
    Upload,
    /// A file's content read (`GET files/{name}/content`, `files/content/{name}`).
    Download,
    /// A file removed (`DELETE files/{name}`).
    Delete,
    /// The session ended (a client's `DELETE session` or `stopSession`, the
    /// cooldown, the pool stopping): its status says why, its files what
    /// changed in `/mnt/data` since the session's last call (a process still
    /// writing), seen just before the folder went (local pool, issue 26).
    End,
}

impl CallKind {
    /// The name stored in the database and printed by `log --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Shell => "shell",
            Self::Upload => "upload",
            Self::Download => "download",
            Self::Delete => "delete",
            Self::End => "end",
        }
    }

    /// Reads [`CallKind::as_str`] back; `None` for an unknown name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "code" => Self::Code,
            "shell" => Self::Shell,
            "upload" => Self::Upload,
            "download" => Self::Download,
            "delete" => Self::Delete,
            "end" => Self::End,
            _ => return None,
        })
    }
}

/// An image a cell displayed, as recorded: its bytes are stored once per
/// content hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedImage {
    /// The wire's format name (`png`, `jpeg`, `gif`).
    pub format: String,
    /// The SHA-256 of the bytes, lowercase hex (64 characters).
    pub sha256: String,
    /// The bytes' length.
    pub size: u64,
}

/// A file an upload, download or delete touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedFile {
    /// The path below `/mnt/data` as the pool resolved it (`report.csv`,
    /// `sub/x.txt`).
    pub name: String,
    /// Bytes stored or sent; `None` for a delete.
    pub size: Option<u64>,
    /// SHA-256 of those bytes, lowercase hex; `None` for a delete, or a
    /// download the client broke off (then `size` is what was sent).
    pub sha256: Option<String>,
}

/// How a file in the session's `/mnt/data` changed across one call (issue
/// 26): `added`, `modified` or `deleted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    /// The file was not there before the call.
    Added,
    /// Its bytes differ from those before the call (a new SHA-256).
    Modified,
    /// It was there before the call and is gone.
    Deleted,
}

impl FileChangeKind {
    /// The name stored in the ledger and printed by `log --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
        }
    }

    /// The kind named `s` ([`FileChangeKind::as_str`]).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "added" => Some(Self::Added),
            "modified" => Some(Self::Modified),
            "deleted" => Some(Self::Deleted),
            _ => None,
        }
    }
}

/// Whether the ledger holds a changed file's bytes, and why not when it does
/// not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentKept {
    /// The bytes are in the ledger (stored once per SHA-256).
    Kept,
    /// The file was larger than the per-file budget (`[ledger]
    /// file_content_max`); only its size and hash are recorded.
    TooBig,
    /// The bytes were dropped later to keep the session within its budget
    /// (`[ledger] session_content_max`; oldest versions first).
    Dropped,
    /// The file could not be read (it vanished or changed type while being
    /// read); only what was seen is recorded.
    Unreadable,
}

impl ContentKept {
    /// The name stored in the ledger and printed by `log --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kept => "kept",
            Self::TooBig => "too_big",
            Self::Dropped => "dropped",
            Self::Unreadable => "unreadable",
        }
    }

    /// The state named `s` ([`ContentKept::as_str`]).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "kept" => Some(Self::Kept),
            "too_big" => Some(Self::TooBig),
            "dropped" => Some(Self::Dropped),
            "unreadable" => Some(Self::Unreadable),
            _ => None,
        }
    }

    /// What a person is told when the bytes are not there (`None` when kept).
    pub fn why_not(self) -> Option<&'static str> {
        match self {
            Self::Kept => None,
            Self::TooBig => Some("too big to keep"),
            Self::Dropped => Some("dropped to keep the session within its budget"),
            Self::Unreadable => Some("could not be read"),
        }
    }
}

/// One file of the session's `/mnt/data` that a call changed (issue 26):
/// what `log --json` prints in an execution's `files` array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The path as the session sees it (`/mnt/data/out/logs/run.log`).
    pub path: String,
    /// How it changed.
    pub change: FileChangeKind,
    /// Its size in bytes after the call (0 when deleted).
    pub size: u64,
    /// SHA-256 of its bytes after the call, lowercase hex; `None` when
    /// deleted or unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Whether the ledger holds the bytes (`None` when deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<ContentKept>,
    /// The bytes, when read to be kept (never serialized: the ledger stores
    /// them by hash, `sessionpad export --recorded ID --files DIR` writes
    /// them out).
    #[serde(skip)]
    pub data: Option<std::sync::Arc<Vec<u8>>>,
}

impl FileChange {
    /// File `path` (as the session sees it, `/mnt/data/…`) deleted.
    pub fn deleted(path: String) -> Self {
        Self {
            path,
            change: FileChangeKind::Deleted,
            size: 0,
            sha256: None,
            content: None,
            data: None,
        }
    }
}

/// The path prefix of a session's files as the session sees them.
pub const DATA_ROOT: &str = "/mnt/data";

/// The outcome of an execution as recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedOutput {
    /// The execution's status as the client model names it (`Succeeded`,
    /// `Failed`, `Canceled`, `Running`).
    pub status: String,
    /// The shell command's exit code (Shell pools); `None` for code, or a command
    /// that did not finish.
    pub exit_code: Option<i32>,
    /// Everything written to standard output.
    pub stdout: RecordedText,
    /// Everything written to standard error (tracebacks included).
    pub stderr: RecordedText,
    /// The value of the last expression: `{"text": …, "json": …}` as
    /// [`crate::protocol::ExecutionValue`] serializes; `None` without one.
    pub result: Option<serde_json::Value>,
}

/// An output stream as recorded: text of its own, or a stream of an
/// execution shared with whoever else holds it (the local pool keeps each
/// execution for `GET executions/{id}`), so that recording a cell's
/// megabytes of output does not copy them. Reads as a `&str`; serialized as a
/// JSON string, read back as text of its own.
#[derive(Debug, Clone)]
pub enum RecordedText {
    /// Text of its own.
    Owned(String),
    /// The standard output of this execution.
    Stdout(std::sync::Arc<crate::protocol::Execution>),
    /// The standard error of this execution.
    Stderr(std::sync::Arc<crate::protocol::Execution>),
}

impl RecordedText {
    /// The text.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Owned(s) => s,
            Self::Stdout(e) => &e.stdout,
            Self::Stderr(e) => &e.stderr,
        }
    }

    /// The text as a `String`: moved when it is its own (or its execution
    /// is held nowhere else), else copied.
    pub fn into_string(self) -> String {
        match self {
            Self::Owned(s) => s,
            Self::Stdout(e) => {
                std::sync::Arc::try_unwrap(e).map_or_else(|e| e.stdout.clone(), |e| e.stdout)
            }
            Self::Stderr(e) => {
                std::sync::Arc::try_unwrap(e).map_or_else(|e| e.stderr.clone(), |e| e.stderr)
            }
        }
    }
}

impl Default for RecordedText {
    fn default() -> Self {
        Self::Owned(String::new())
    }
}

impl std::ops::Deref for RecordedText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for RecordedText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl From<String> for RecordedText {
    fn from(text: String) -> Self {
        Self::Owned(text)
    }
}

impl From<&str> for RecordedText {
    fn from(text: &str) -> Self {
        Self::Owned(text.to_string())
    }
}

impl Serialize for RecordedText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RecordedText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Self::Owned)
    }
}

impl RecordedOutput {
    /// The outcome of a code execution as the client model reads it (any
    /// api-version family, `aca-api.md` §3.1/§4.2), with the shell command's
    /// `exit_code` where there is one. Its streams are copied.
    pub fn of_execution(exec: &crate::protocol::Execution, exit_code: Option<i32>) -> Self {
        Self {
            stdout: exec.stdout.clone().into(),
            stderr: exec.stderr.clone().into(),
            ..Self::outcome(exec, exit_code)
        }
    }

    /// [`RecordedOutput::of_execution`] of an execution held elsewhere too:
    /// its streams are shared with it, not copied ([`RecordedText`]).
    pub fn of_shared(
        exec: &std::sync::Arc<crate::protocol::Execution>,
        exit_code: Option<i32>,
    ) -> Self {
        Self {
            stdout: RecordedText::Stdout(exec.clone()),
            stderr: RecordedText::Stderr(exec.clone()),
            ..Self::outcome(exec, exit_code)
        }
    }

    /// Status, exit code and value of `exec`, without its streams.
    fn outcome(exec: &crate::protocol::Execution, exit_code: Option<i32>) -> Self {
        use crate::protocol::ExecutionStatus;
        let status = match exec.status {
            ExecutionStatus::Succeeded => "Succeeded",
            ExecutionStatus::Failed => "Failed",
            ExecutionStatus::Canceled => "Canceled",
            ExecutionStatus::Running => "Running",
        };
        Self {
            status: status.to_string(),
            exit_code,
            stdout: RecordedText::default(),
            stderr: RecordedText::default(),
            result: exec
                .result
                .as_ref()
                .and_then(|v| serde_json::to_value(v).ok()),
        }
    }

    /// The outcome of a shell command as a Shell pool answered it (§4.7):
    /// `Succeeded` for exit code 0, else the wire's own state or `Failed`.
    pub fn of_shell(exec: &crate::protocol::ShellExecution) -> Self {
        let status = if exec.succeeded() {
            "Succeeded".to_string()
        } else {
            exec.state.clone().unwrap_or_else(|| "Failed".to_string())
        };
        Self {
            status,
            exit_code: exec.exit_code,
            stdout: exec.stdout.clone().into(),
            stderr: exec.stderr.clone().into(),
            result: None,
        }
    }
}

/// How a shell command is recorded in [`Call::code`]: the command line as
/// sent (`shellCommand`), or the argv as its JSON array (`execCommandAndArgs`).
pub fn shell_command_text(command: &crate::protocol::ShellCommand) -> String {
    match command {
        crate::protocol::ShellCommand::Line(line) => line.clone(),
        crate::protocol::ShellCommand::Argv(argv) => {
            serde_json::to_string(argv).unwrap_or_default()
        }
    }
}

/// One data-plane call to record: everything the ledger keeps of it. It has no
/// header map and no token field by design (see the module's doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The pool key: `local` for the local pool (as the sessions store names
    /// it), else the endpoint.
    pub pool: String,
    /// The session identifier (4–128 characters, `aca-api.md` §4.5).
    pub identifier: String,
    /// The client's `User-Agent` header, as sent (`None` when absent).
    pub client: Option<String>,
    /// When the call arrived (UTC, millisecond precision kept).
    pub at: chrono::DateTime<chrono::Utc>,
    /// How long the pool took to answer it, wall clock.
    pub duration: std::time::Duration,
    /// What kind of call it was.
    pub kind: CallKind,
    /// The execution id (family B `id` / `operation-id`), when there is one.
    pub execution_id: Option<String>,
    /// The code, or the shell command line (an argv as its JSON array).
    pub code: Option<String>,
    /// Standard input given to a shell command.
    pub stdin: Option<String>,
    /// The execution's outcome (executions only).
    pub output: Option<RecordedOutput>,
    /// The images the execution displayed, with their bytes (stored once per
    /// hash; [`RecordedImage`] is what reading gives back).
    pub images: Vec<crate::protocol::ExecutionImage>,
    /// The file touched (file calls only).
    pub file: Option<RecordedFile>,
    /// The client went away before the answer (its timeout, a closed
    /// connection): the pool finished and recorded the execution anyway, and
    /// nobody received this reply.
    pub client_gone: bool,
    /// The files of `/mnt/data` this call changed, in path order (issue 26;
    /// empty when nothing changed or the pool does not look).
    pub files: Vec<FileChange>,
    /// What the look at `/mnt/data` after the call could not do (a tree too
    /// big to walk, a folder that could not be read); `None` when it saw
    /// everything, or did not look.
    pub files_note: Option<String>,
    /// What the execution tried to reach through the session's egress proxy
    /// (issue 29, `serve --egress allow=…`/`audit`), in order; empty when it
    /// tried nothing or the session has no proxy.
    pub network: Vec<crate::protocol::egress::NetworkAttempt>,
}

impl Call {
    /// A call of `kind` about `identifier` on pool key `pool`, made by
    /// `client` at `at` and answered in `duration`, with nothing else filled
    /// in (the caller adds the code, outputs, images or file).
    pub fn new(
        pool: String,
        identifier: String,
        client: Option<String>,
        at: chrono::DateTime<chrono::Utc>,
        duration: std::time::Duration,
        kind: CallKind,
    ) -> Self {
        Self {
            pool,
            identifier,
            client,
            at,
            duration,
            kind,
            execution_id: None,
            code: None,
            stdin: None,
            output: None,
            images: Vec::new(),
            file: None,
            client_gone: false,
            files: Vec::new(),
            files_note: None,
            network: Vec::new(),
        }
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// Lowercase hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One recorded call as `log --json` prints it: exactly what was recorded.
/// Fields without a value (a file call's code, an execution's file) are left
/// out (and read back as absent: the event stream carries entries too,
/// [`crate::protocol::events::RecordedCall`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The record's number in the ledger (increasing in recording order).
    pub seq: i64,
    /// When the call arrived (RFC 3339, UTC, milliseconds).
    pub at: DateTime<Utc>,
    /// How long the pool took to answer it, in milliseconds.
    pub duration_ms: f64,
    /// The pool key (`local`, or the endpoint).
    pub pool: String,
    /// The session identifier.
    pub identifier: String,
    /// The client's `User-Agent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// What kind of call.
    pub kind: CallKind,
    /// The execution id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<String>,
    /// The code or shell command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// A shell command's standard input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// The execution's status (`Succeeded`, `Failed`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// A shell command's exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Standard output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// Standard error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// The last expression's value (`{"text": …, "json": …}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    /// The images displayed, in order (bytes stay in the ledger).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<RecordedImage>,
    /// The file an upload, download or delete touched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<RecordedFile>,
    /// The client went away before the answer: the execution ran to its end
    /// and was recorded, but nobody received the reply. Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_gone: bool,
    /// The files of `/mnt/data` the call changed (path as the session sees
    /// it, change, size, SHA-256, whether the bytes are kept). Left out when
    /// none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
    /// What the look at `/mnt/data` after the call could not see. Left out
    /// when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_note: Option<String>,
    /// What the execution tried to reach through the session's egress proxy
    /// (issue 29): `{"host", "port", "decision": "allowed"|"denied",
    /// "bytes", "at"}` each, in order. Always there for an execution (empty
    /// when it tried nothing, or its session had no proxy); left out for
    /// other calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Vec<crate::protocol::egress::NetworkAttempt>>,
}

impl Entry {
    /// The [`crate::protocol::Execution`] a recorded code or shell call stands
    /// for, with `images` (the recorded images' bytes, from wherever the caller
    /// has them); `None` for a file call. A status other than `Succeeded`,
    /// `Canceled` or `Running` (a Shell pool's own, a missing one) is `Failed`.
    pub fn execution(
        &self,
        images: Vec<crate::protocol::ExecutionImage>,
    ) -> Option<crate::protocol::Execution> {
        use crate::protocol::{Execution, ExecutionStatus, ExecutionValue};
        if !matches!(self.kind, CallKind::Code | CallKind::Shell) {
            return None;
        }
        let status = match self.status.as_deref() {
            Some("Succeeded") => ExecutionStatus::Succeeded,
            Some("Canceled") => ExecutionStatus::Canceled,
            Some("Running") => ExecutionStatus::Running,
            _ => ExecutionStatus::Failed,
        };
        Some(Execution {
            execution_count: None,
            id: self.execution_id.clone(),
            status,
            stdout: self.stdout.clone().unwrap_or_default(),
            stderr: self.stderr.clone().unwrap_or_default(),
            result: self
                .result
                .clone()
                .and_then(|v| serde_json::from_value::<ExecutionValue>(v).ok()),
            images,
            duration: std::time::Duration::from_secs_f64((self.duration_ms / 1000.0).max(0.0)),
            network: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ContainerType;

    #[test]
    fn pool_keys_tell_local_pools_apart_and_name_remote_ones_by_endpoint() {
        assert_eq!(
            pool_key_of("http://127.0.0.1:8123/", ContainerType::Shell),
            "local/Shell/127.0.0.1:8123"
        );
        assert_eq!(
            pool_key_of(
                " https://p.eastus.azurecontainerapps.io/ ",
                ContainerType::PythonLts
            ),
            "https://p.eastus.azurecontainerapps.io"
        );
        let key = local_pool_key(ContainerType::NodeLts, "127.0.0.1:9");
        assert!(is_local_pool_key(&key) && is_local_pool_key(POOL_KEY));
        assert_eq!(local_pool_addr(&key), Some("127.0.0.1:9"));
        assert_eq!(local_pool_addr(POOL_KEY), None);
        assert!(!is_local_pool_key("https://p.eastus.azurecontainerapps.io"));
    }
}
