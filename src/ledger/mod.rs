//! The flight recorder's ledger (issue 13): an embedded SQLite database
//! (`<data dir>/ledger.sqlite3`, WAL) of every data-plane call that passes
//! through sessionpad: executions of code and of shell commands with their
//! outputs, images stored once by content hash, and file uploads, downloads and
//! deletes with name, size and hash. Never a token or an `Authorization` header:
//! a [`Call`] has no field that could hold one.
//!
//! One concept per file: [`schema`] (opening, the schema version and its
//! migrations), [`write`] (the writer thread the pool records through),
//! [`in_place`] (big outputs written without SQLite's copies), [`read`]
//! (what `sessionpad log` prints) and [`retention`] (pruning by age and size).
//!
//! It knows no HTTP and no terminal: the pool hands it finished [`Call`]s, the
//! command line reads [`read::Entry`]s back.

pub mod in_place;
pub mod read;
pub mod retention;
pub mod schema;
pub mod write;

#[cfg(test)]
pub(crate) mod tests;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use self::read::{Entry, Query};
pub use self::schema::open;
pub use self::write::Recorder;

/// The ledger's file name in the data directory.
pub const FILE_NAME: &str = "ledger.sqlite3";

/// The ledger file of this user: `<data dir>/ledger.sqlite3`
/// ([`crate::dirs::data_dir`]).
pub fn default_path() -> PathBuf {
    crate::dirs::data_dir().join(FILE_NAME)
}

/// Why the ledger cannot be opened, written or read.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// SQLite refused an operation on the file.
    #[error("ledger {path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The file is not a SQLite database, or is damaged. It is left as it is
    /// (never recreated over the user's records).
    #[error(
        "ledger {path} is not a readable SQLite database ({reason}); it was left untouched: move it away to start a new ledger"
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        reason: String,
    },
    /// The file was written by a newer sessionpad (its schema version is past
    /// the last one this build knows). It is left as it is.
    #[error(
        "ledger {path} has schema version {found}, newer than the {known} this sessionpad knows; upgrade sessionpad to read it"
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// The file's `user_version`.
        found: i64,
        /// The newest version this build migrates to.
        known: i64,
    },
    /// The folder of the file could not be created.
    #[error("cannot create {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl LedgerError {
    /// Wraps a SQLite error about `path`, telling a damaged file
    /// ([`LedgerError::Corrupt`]) from other failures.
    pub(crate) fn sqlite(path: &Path, source: rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        match source.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => Self::Corrupt {
                path: path.to_path_buf(),
                reason: source.to_string(),
            },
            _ => Self::Sqlite {
                path: path.to_path_buf(),
                source,
            },
        }
    }
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
    /// [`crate::client::ExecutionValue`] serializes; `None` without one.
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
    Stdout(std::sync::Arc<crate::client::Execution>),
    /// The standard error of this execution.
    Stderr(std::sync::Arc<crate::client::Execution>),
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
    pub fn of_execution(exec: &crate::client::Execution, exit_code: Option<i32>) -> Self {
        Self {
            stdout: exec.stdout.clone().into(),
            stderr: exec.stderr.clone().into(),
            ..Self::outcome(exec, exit_code)
        }
    }

    /// [`RecordedOutput::of_execution`] of an execution held elsewhere too:
    /// its streams are shared with it, not copied ([`RecordedText`]).
    pub fn of_shared(
        exec: &std::sync::Arc<crate::client::Execution>,
        exit_code: Option<i32>,
    ) -> Self {
        Self {
            stdout: RecordedText::Stdout(exec.clone()),
            stderr: RecordedText::Stderr(exec.clone()),
            ..Self::outcome(exec, exit_code)
        }
    }

    /// Status, exit code and value of `exec`, without its streams.
    fn outcome(exec: &crate::client::Execution, exit_code: Option<i32>) -> Self {
        use crate::client::ExecutionStatus;
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
    pub fn of_shell(exec: &crate::client::ShellExecution) -> Self {
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
pub fn shell_command_text(command: &crate::client::ShellCommand) -> String {
    match command {
        crate::client::ShellCommand::Line(line) => line.clone(),
        crate::client::ShellCommand::Argv(argv) => serde_json::to_string(argv).unwrap_or_default(),
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
    pub images: Vec<crate::client::ExecutionImage>,
    /// The file touched (file calls only).
    pub file: Option<RecordedFile>,
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
        }
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// Lowercase hex of a digest.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a pool records and how much the ledger keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerOptions {
    /// The database file ([`default_path`] unless a test says otherwise).
    pub path: PathBuf,
    /// Retention by age and size.
    pub limits: retention::Limits,
}

impl LedgerOptions {
    /// The options `config` gives for the ledger at [`default_path`]; `None`
    /// when recording is off (`enabled = false`).
    pub fn from_config(config: &LedgerConfig) -> Option<Self> {
        config.enabled().then(|| Self {
            path: default_path(),
            limits: config.limits(),
        })
    }
}

/// `[ledger]` in the config file: whether the local pool records, and how much
/// the ledger keeps.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LedgerConfig {
    /// Record the local pool's calls (default true; `serve --no-ledger` turns
    /// it off for one run).
    pub enabled: Option<bool>,
    /// Days a record is kept (default [`LedgerConfig::DEFAULT_DAYS`]); older
    /// ones are pruned.
    pub days: Option<u32>,
    /// Most size of the database's records (default
    /// [`LedgerConfig::DEFAULT_MAX_SIZE`]); the oldest are pruned past it.
    pub max_size: Option<bytesize::ByteSize>,
}

impl LedgerConfig {
    /// Days kept when none is configured: 30.
    pub const DEFAULT_DAYS: u32 = 30;
    /// Size kept when none is configured: 1 GiB.
    pub const DEFAULT_MAX_SIZE: u64 = 1024 * 1024 * 1024;

    /// Whether recording is on (default true).
    pub fn enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// The limits in force.
    pub fn limits(&self) -> retention::Limits {
        retention::Limits {
            days: self.days.unwrap_or(Self::DEFAULT_DAYS),
            max_bytes: self.max_size.map_or(Self::DEFAULT_MAX_SIZE, |s| s.as_u64()),
        }
    }
}
