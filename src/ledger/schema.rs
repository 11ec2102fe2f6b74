//! Opening the ledger: WAL journal, foreign keys, incremental auto-vacuum (so
//! pruning can give space back, [`super::retention`]), and the schema brought to
//! the newest version by `rusqlite_migration`, which keeps the version in
//! SQLite's own `user_version` pragma (no table of its own to damage).
//!
//! A file that is not a database, or is damaged, is reported
//! ([`LedgerError::Corrupt`]) and a file of a newer schema refused
//! ([`LedgerError::NewerSchema`]); neither is ever recreated.
//!
//! Schema version 1:
//!
//! - `calls`: one row per data-plane call; `at_ms` (Unix milliseconds, UTC) and
//!   `duration_us` (microseconds) are integers so that ordering and pruning use
//!   the indexes; `kind` is [`crate::protocol::record::CallKind::as_str`]; `result` is JSON text.
//!   `stdout`, `stderr` and `result` are TEXT, or, for a call whose outputs
//!   come to 64 KiB or more, BLOBs of the same text's UTF-8 bytes, written in
//!   place without SQLite's copies ([`super::in_place`]); readers take either
//!   (no schema change: a ledger written before reads as it did).
//! - `images`: image bytes by SHA-256 (hex), stored once.
//! - `call_images`: which images a call displayed, in order (`seq`), removed
//!   with the call (`ON DELETE CASCADE`).
//!
//! Schema version 5 adds `call_files` (per call, each file of `/mnt/data` it
//! changed: path as the session sees it, `change`, `size`, `sha256`, and
//! `content`: whether the bytes are kept, [`crate::protocol::record::ContentKept`])
//! and `file_contents` (those bytes, once per SHA-256, a rowid table because
//! they run to megabytes), and `calls.files_note` (what the look at the folder
//! could not see).
//!
//! Schema version 6 adds `call_network` (per execution, each attempt through
//! its session's egress proxy: `host`, `port`, `decision` (`allowed` or
//! `denied`), `bytes` relayed both ways and `at_ms`; issue 29).
//!
//! Schema version 7 adds `call_network.via`: `proxy` (the attempts of version
//! 6, all through the proxy) or `direct` (a socket of the session's own).
//!
//! Schema version 2 adds `sessions`: per pool and identifier, the number of
//! calls and of cells (code and shell executions), the first and last call's
//! time (`first_ms`, `last_ms`), the last call's row (`last_id`) and the last
//! client that named itself; kept by triggers on `calls` (inserted and pruned
//! rows alike), filled from the existing calls when a version-1 ledger is
//! opened.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use rusqlite_migration::{M, Migrations};

use super::LedgerError;

/// The migrations, oldest first; the schema version is their count.
const MIGRATIONS: &[M<'static>] = &[
    M::up(
        "CREATE TABLE calls (
        id INTEGER PRIMARY KEY,
        at_ms INTEGER NOT NULL,
        duration_us INTEGER NOT NULL,
        pool TEXT NOT NULL,
        identifier TEXT NOT NULL,
        client TEXT,
        kind TEXT NOT NULL,
        execution_id TEXT,
        code TEXT,
        stdin TEXT,
        status TEXT,
        exit_code INTEGER,
        stdout TEXT,
        stderr TEXT,
        result TEXT,
        file_name TEXT,
        file_size INTEGER,
        file_sha256 TEXT
    );
    CREATE INDEX calls_by_identifier ON calls (identifier, id);
    CREATE INDEX calls_by_time ON calls (at_ms);
    CREATE TABLE images (
        sha256 TEXT PRIMARY KEY,
        format TEXT NOT NULL,
        data BLOB NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE call_images (
        call_id INTEGER NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        PRIMARY KEY (call_id, seq)
    ) WITHOUT ROWID;
    CREATE INDEX call_images_by_image ON call_images (sha256);",
    ),
    // Version 2: one row per recorded session, kept by triggers in the same
    // transaction as the calls, so the sessions pane lists them without
    // scanning the calls (under 50 ms with a million of them).
    M::up(
        "CREATE TABLE sessions (
        pool TEXT NOT NULL,
        identifier TEXT NOT NULL,
        calls INTEGER NOT NULL,
        cells INTEGER NOT NULL,
        first_ms INTEGER NOT NULL,
        last_ms INTEGER NOT NULL,
        last_id INTEGER NOT NULL,
        client TEXT,
        PRIMARY KEY (pool, identifier)
    ) WITHOUT ROWID;
    CREATE INDEX sessions_by_last ON sessions (last_id);
    INSERT INTO sessions (pool, identifier, calls, cells, first_ms, last_ms, last_id, client)
        SELECT pool, identifier, count(*), sum(kind IN ('code', 'shell')), min(at_ms),
            max(at_ms), max(id), NULL
        FROM calls GROUP BY pool, identifier;
    UPDATE sessions SET client = (SELECT client FROM calls c WHERE c.pool = sessions.pool
        AND c.identifier = sessions.identifier AND c.client IS NOT NULL
        ORDER BY c.id DESC LIMIT 1);
    CREATE TRIGGER calls_into_sessions AFTER INSERT ON calls BEGIN
        INSERT INTO sessions (pool, identifier, calls, cells, first_ms, last_ms, last_id, client)
        VALUES (new.pool, new.identifier, 1, new.kind IN ('code', 'shell'), new.at_ms,
            new.at_ms, new.id, new.client)
        ON CONFLICT (pool, identifier) DO UPDATE SET
            calls = calls + 1,
            cells = cells + (new.kind IN ('code', 'shell')),
            last_ms = max(last_ms, new.at_ms),
            last_id = new.id,
            client = coalesce(new.client, client);
    END;
    CREATE TRIGGER calls_out_of_sessions AFTER DELETE ON calls BEGIN
        UPDATE sessions SET
            calls = calls - 1,
            cells = cells - (old.kind IN ('code', 'shell')),
            first_ms = coalesce((SELECT at_ms FROM calls WHERE identifier = old.identifier
                AND pool = old.pool ORDER BY id LIMIT 1), first_ms)
        WHERE pool = old.pool AND identifier = old.identifier;
        DELETE FROM sessions WHERE pool = old.pool AND identifier = old.identifier
            AND calls <= 0;
    END;",
    ),
    // Version 3: the execution's client had gone before the answer (issue
    // 26): recorded all the same, and said so.
    M::up("ALTER TABLE calls ADD COLUMN client_gone INTEGER NOT NULL DEFAULT 0;"),
    // Version 4: the client that started each session besides the latest
    // (issue 26: an agent's session taken over by a person is still the
    // agent's), from the calls kept where the ledger is older.
    M::up(
        "ALTER TABLE sessions ADD COLUMN first_client TEXT;
    UPDATE sessions SET first_client = (SELECT client FROM calls c WHERE c.pool = sessions.pool
        AND c.identifier = sessions.identifier AND c.client IS NOT NULL
        ORDER BY c.id LIMIT 1);
    DROP TRIGGER calls_into_sessions;
    CREATE TRIGGER calls_into_sessions AFTER INSERT ON calls BEGIN
        INSERT INTO sessions (pool, identifier, calls, cells, first_ms, last_ms, last_id, client,
            first_client)
        VALUES (new.pool, new.identifier, 1, new.kind IN ('code', 'shell'), new.at_ms,
            new.at_ms, new.id, new.client, new.client)
        ON CONFLICT (pool, identifier) DO UPDATE SET
            calls = calls + 1,
            cells = cells + (new.kind IN ('code', 'shell')),
            last_ms = max(last_ms, new.at_ms),
            last_id = new.id,
            client = coalesce(new.client, client),
            first_client = coalesce(first_client, new.client);
    END;",
    ),
    // Version 5: the files of `/mnt/data` each call changed, and their bytes
    // by SHA-256 (issue 26: what an agent left outlives the session).
    M::up(
        "CREATE TABLE call_files (
        call_id INTEGER NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        path TEXT NOT NULL,
        change TEXT NOT NULL,
        size INTEGER NOT NULL,
        sha256 TEXT,
        content TEXT,
        PRIMARY KEY (call_id, seq)
    ) WITHOUT ROWID;
    CREATE INDEX call_files_by_content ON call_files (sha256) WHERE sha256 IS NOT NULL;
    CREATE TABLE file_contents (
        id INTEGER PRIMARY KEY,
        sha256 TEXT NOT NULL UNIQUE,
        data BLOB NOT NULL
    );
    ALTER TABLE calls ADD COLUMN files_note TEXT;",
    ),
    // Version 6: what each execution tried to reach through its session's
    // egress proxy (issue 29), removed with the call.
    M::up(
        "CREATE TABLE call_network (
        call_id INTEGER NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        host TEXT NOT NULL,
        port INTEGER NOT NULL,
        decision TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        at_ms INTEGER NOT NULL,
        PRIMARY KEY (call_id, seq)
    ) WITHOUT ROWID;",
    ),
    // Version 7: whether an attempt went through the proxy or straight from
    // a socket of the session's own (issue 29).
    M::up("ALTER TABLE call_network ADD COLUMN via TEXT NOT NULL DEFAULT 'proxy';"),
];

/// The schema version this build writes (the number of migrations).
#[allow(clippy::cast_possible_wrap)] // a handful of migrations
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long a statement waits for another connection's write lock (the pool's
/// writer and a `log` reading at once), in milliseconds.
const BUSY_TIMEOUT_MS: u64 = 5_000;

/// Opens (creating it and its folder when missing) the ledger at `path`,
/// brought to [`SCHEMA_VERSION`].
///
/// # Errors
///
/// [`LedgerError::Folder`] when the folder cannot be made,
/// [`LedgerError::Corrupt`] for a file that is not a usable database,
/// [`LedgerError::NewerSchema`] for a newer schema, [`LedgerError::Sqlite`]
/// for anything else SQLite refuses.
pub fn open(path: &Path) -> Result<Connection, LedgerError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::dirs::create_private(dir).map_err(|source| LedgerError::Folder {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    owner_only(path).map_err(|source| LedgerError::Folder {
        path: path.to_path_buf(),
        source,
    })?;
    let conn = Connection::open(path).map_err(|e| LedgerError::sqlite(path, e))?;
    prepare(conn, path)
}

/// Makes the database file at `path` readable and writable by its owner
/// only (0600): created so when missing; narrowed, where this user may, when
/// it exists. SQLite gives its `-wal` and `-shm` files the database file's
/// mode.
fn owner_only(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if let Ok(meta) = std::fs::metadata(path)
                && meta.permissions().mode() & 0o077 != 0
            {
                // Another user's file stays as it is: SQLite says what it can do.
                let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Opens an existing ledger at `path` without creating it; `Ok(None)` when
/// there is no file (nothing was recorded yet).
///
/// # Errors
///
/// As [`open`].
pub fn open_existing(path: &Path) -> Result<Option<Connection>, LedgerError> {
    if !path.exists() {
        return Ok(None);
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(path, flags).map_err(|e| LedgerError::sqlite(path, e))?;
    prepare(conn, path).map(Some)
}

/// Sets the connection's pragmas, refuses a newer schema and migrates.
fn prepare(mut conn: Connection, path: &Path) -> Result<Connection, LedgerError> {
    let sql = |e| LedgerError::sqlite(path, e);
    conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))
        .map_err(sql)?;
    // Reading the version is the first read of the file: a file that is not a
    // database fails here, before anything is written to it.
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(sql)?;
    if found > SCHEMA_VERSION {
        return Err(LedgerError::NewerSchema {
            path: path.to_path_buf(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    if found == 0 {
        // Only takes effect before the first table exists: a new file.
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
            .map_err(sql)?;
    }
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(sql)?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!("ledger {}: journal mode is {mode}, not WAL", path.display());
    }
    // In WAL mode NORMAL loses no committed transaction when the process dies
    // (only on a power cut), and does not fsync on every commit.
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(sql)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(sql)?;
    Migrations::from_slice(MIGRATIONS)
        .to_latest(&mut conn)
        .map_err(|e| match e {
            rusqlite_migration::Error::RusqliteError { err, .. } => LedgerError::sqlite(path, err),
            other => LedgerError::Corrupt {
                path: path.to_path_buf(),
                reason: other.to_string(),
            },
        })?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_valid() {
        Migrations::from_slice(MIGRATIONS).validate().unwrap();
    }

    #[test]
    fn a_new_ledger_has_the_schema_version_and_wal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("ledger.sqlite3");
        let conn = open(&path).unwrap();
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        drop(conn);
        // Opening again keeps it.
        open(&path).unwrap();
    }

    #[test]
    fn a_file_that_is_not_a_database_is_reported_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite3");
        let junk = b"this is not SQLite, but the user's bytes".repeat(200);
        std::fs::write(&path, &junk).unwrap();
        let err = open(&path).unwrap_err();
        assert!(matches!(err, LedgerError::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("left untouched"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), junk);
    }

    #[test]
    fn a_newer_schema_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite3");
        {
            let conn = open(&path).unwrap();
            conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
                .unwrap();
        }
        let err = open(&path).unwrap_err();
        assert!(
            matches!(err, LedgerError::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1),
            "{err}"
        );
        let conn = Connection::open(&path).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM calls", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0, "the tables are still there");
    }
}
