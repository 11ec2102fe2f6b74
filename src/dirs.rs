//! Where sessionpad keeps its files: the cache directory (the local pool's Python
//! environment), the data directory (notebooks, session folders) and the log file.
//! Each can be moved with an environment variable, which tests use to stay apart.

use std::path::PathBuf;

fn project() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "sessionpad")
}

fn from_env_or(var: &str, fallback: impl FnOnce() -> Option<PathBuf>) -> PathBuf {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(fallback)
        .unwrap_or_else(|| std::env::temp_dir().join("sessionpad"))
}

/// The cache directory (`$SESSIONPAD_CACHE_DIR`, else `~/.cache/sessionpad` on Linux):
/// holds the local pool's Python environment, which is rebuilt when lost.
pub fn cache_dir() -> PathBuf {
    from_env_or("SESSIONPAD_CACHE_DIR", || {
        project().map(|p| p.cache_dir().to_path_buf())
    })
}

/// The data directory (`$SESSIONPAD_DATA_DIR`, else `~/.local/share/sessionpad` on
/// Linux): notebooks, logs, and the local pool's session folders.
pub fn data_dir() -> PathBuf {
    from_env_or("SESSIONPAD_DATA_DIR", || {
        project().map(|p| p.data_dir().to_path_buf())
    })
}

/// Creates `dir` and any missing parents with mode 0700 (owner only, before
/// the umask), for folders that hold what a session ran: the ledger, stored
/// notebooks, logs (issue 26). Folders that already exist keep their mode.
///
/// # Errors
///
/// The folder cannot be made (permissions, a file in the way).
pub fn create_private(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
