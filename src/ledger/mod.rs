//! The flight recorder's ledger (issue 13): an embedded SQLite database
//! (`<data dir>/ledger.sqlite3`, WAL) of every data-plane call that passes
//! through sessionpad: executions of code and of shell commands with their
//! outputs, images stored once by content hash, and file uploads, downloads and
//! deletes with name, size and hash. Never a token or an `Authorization` header:
//! a [`crate::protocol::record::Call`] has no field that could hold one.
//!
//! One concept per file: [`schema`] (opening, the schema version and its
//! migrations), [`write`] (the writer thread the pool records through),
//! [`in_place`] (big outputs written without SQLite's copies), [`read`]
//! (what `sessionpad log` prints), [`diff`] (a changed file against its
//! previous version), [`export`] (a recorded file written to a local folder)
//! and [`retention`] (pruning by age and size).
//!
//! It knows no HTTP and no terminal: the pool hands it finished [`crate::protocol::record::Call`]s, the
//! command line reads [`crate::protocol::record::Entry`]s back.

pub mod diff;
pub mod export;
pub mod in_place;
pub mod read;
pub mod retention;
pub mod schema;
pub mod write;

#[cfg(test)]
pub(crate) mod tests;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use self::read::Query;
pub use self::schema::open;
pub use self::write::{ProcessSink, Recorder};

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
    /// The folder of the file, or the file itself, could not be created.
    #[error("cannot create {path}: {source}")]
    Folder {
        /// The folder or the file.
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

/// Where a pool records and how much the ledger keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerOptions {
    /// The database file ([`default_path`] unless a test says otherwise).
    pub path: PathBuf,
    /// Retention by age and size, and the budgets of file contents.
    pub limits: retention::Limits,
    /// Record what each call changed in the session's `/mnt/data` (`[ledger]
    /// files`, default true; issue 26).
    pub files: bool,
}

impl LedgerOptions {
    /// The options `config` gives for the ledger at [`default_path`]; `None`
    /// when recording is off (`enabled = false`).
    pub fn from_config(config: &LedgerConfig) -> Option<Self> {
        config.enabled().then(|| Self {
            path: default_path(),
            limits: config.limits(),
            files: config.files(),
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
    /// Look at each session's `/mnt/data` after every call and record what
    /// changed (default true; issue 26).
    pub files: Option<bool>,
    /// Most bytes of one changed file whose content is kept (default 16 MiB;
    /// bigger files are recorded by size and SHA-256 only; `0` keeps none).
    pub file_content_max: Option<bytesize::ByteSize>,
    /// Most bytes of file contents kept per session (default 256 MiB; the
    /// oldest versions' bytes are dropped first).
    pub session_content_max: Option<bytesize::ByteSize>,
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

    /// Whether the pool records the files each call changed (default true).
    pub fn files(&self) -> bool {
        self.files.unwrap_or(true)
    }

    /// The limits in force.
    pub fn limits(&self) -> retention::Limits {
        retention::Limits {
            days: self.days.unwrap_or(Self::DEFAULT_DAYS),
            max_bytes: self.max_size.map_or(Self::DEFAULT_MAX_SIZE, |s| s.as_u64()),
            file_content_max: self
                .file_content_max
                .map_or(retention::Limits::DEFAULT_FILE_CONTENT_MAX, |s| s.as_u64()),
            session_content_max: self
                .session_content_max
                .map_or(retention::Limits::DEFAULT_SESSION_CONTENT_MAX, |s| {
                    s.as_u64()
                }),
        }
    }
}
