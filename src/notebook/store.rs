//! Where notebooks live on disk and how they get there: one `.ipynb` per (pool,
//! identifier) under `<data dir>/notebooks/`, written atomically (a temporary file
//! in the same folder, fsync, rename), and a background [`Saver`] that the UI hands
//! each finished cell to without ever waiting on the disk.
//!
//! Pool endpoints and identifiers come from config files, flags and other people's
//! agents: they are never used as paths. Each becomes a key of safe characters
//! plus a hash of the original, so two names cannot share a file and no name can
//! leave the folder.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use sha2::{Digest, Sha256};

use super::Cell;
use super::ipynb::{self, NotebookMeta, ReadNotebook};
use super::language::Language;

/// Readable characters kept from a name in its key.
const KEY_PREFIX_LEN: usize = 40;

/// The pool part of a notebook's place: its endpoint, or for the embedded
/// local pool `local` (Python), `local-shell` or `local-node` by the
/// `language` it runs: a directory's Python and shell notebooks are two
/// notebooks. A pool at an endpoint is one pool whatever it runs.
pub fn pool_name(endpoint: Option<&str>, language: Language) -> String {
    endpoint.map_or_else(
        || match language {
            Language::Python => "local".to_string(),
            Language::Shell => "local-shell".to_string(),
            Language::JavaScript => "local-node".to_string(),
        },
        |e| e.trim().trim_end_matches('/').to_string(),
    )
}

/// A file-name component for `name`: its safe characters (at most 40, no leading
/// dot) and 16 hex digits of its SHA-256, e.g. `sp-1f2e-3a9c0b…`.
pub fn key(name: &str) -> String {
    let readable = name
        .strip_prefix("https://")
        .or_else(|| name.strip_prefix("http://"))
        .unwrap_or(name);
    let prefix: String = readable
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(KEY_PREFIX_LEN)
        .collect();
    let prefix = prefix.trim_start_matches('.');
    let digest = Sha256::digest(name.as_bytes());
    let hex = digest.iter().take(8).fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    });
    if prefix.is_empty() {
        hex
    } else {
        format!("{prefix}-{hex}")
    }
}

/// `<data_dir>/notebooks/<pool key>/<identifier key>.ipynb`.
pub fn notebook_path(data_dir: &Path, pool: &str, identifier: &str) -> PathBuf {
    data_dir
        .join("notebooks")
        .join(key(pool))
        .join(format!("{}.ipynb", key(identifier)))
}

/// Writes `bytes` to `path` so that a reader sees the old file or the new one,
/// never half of either, and the new one survives a crash once this returns:
/// a temporary file beside it, fsync, rename over, fsync of the folder.
///
/// # Errors
///
/// The folder cannot be created or written, or the disk is full.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |file| file.write_all(bytes))
}

/// [`write_atomic`] of what `write` writes into the temporary file (through a
/// buffer), so that the file's bytes need not be held whole in memory.
///
/// # Errors
///
/// See [`write_atomic`]; and `write`'s.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    crate::dirs::create_private(dir)?;
    // A new notebook is its owner's only (it holds what a session ran); one
    // that exists keeps the mode its owner gave it.
    let mode = std::fs::metadata(path).map_or(0o600, |m| {
        std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777
    });
    let name = path
        .file_name()
        .map_or_else(|| "notebook".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let written = (|| {
        let file = std::os::unix::fs::OpenOptionsExt::mode(
            std::fs::OpenOptions::new().write(true).create_new(true),
            mode,
        )
        .open(&tmp)?;
        // The umask may have taken bits away from an existing file's mode.
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))?;
        let mut buffered = std::io::BufWriter::with_capacity(256 * 1024, file);
        write(&mut buffered)?;
        let file = buffered
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return written;
    }
    // The rename is durable only once the folder is; not every file system lets a
    // folder be opened for that, and the data itself is already safe.
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// Writes the notebook to `path` atomically.
///
/// # Errors
///
/// See [`write_atomic`].
pub fn save(path: &Path, cells: &[Cell], meta: &NotebookMeta) -> std::io::Result<()> {
    save_with_draft(path, cells, meta, None)
}

/// [`save`], with `draft` (the text typed in the editor and not run when the
/// notebook was quit) in the notebook's metadata.
///
/// # Errors
///
/// See [`write_atomic`].
pub fn save_with_draft(
    path: &Path,
    cells: &[Cell],
    meta: &NotebookMeta,
    draft: Option<&str>,
) -> std::io::Result<()> {
    write_atomic_with(path, |file| {
        ipynb::write_with_draft(cells, meta, draft, file)
    })
}

/// Why a stored notebook could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a notebook this reader understands.
    #[error("{path}: {source}")]
    Format {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: ipynb::IpynbError,
    },
}

/// Reads the notebook at `path`; `Ok(None)` when there is none yet.
///
/// # Errors
///
/// The file exists but cannot be read, or is not an nbformat v4 notebook.
pub fn load(path: &Path) -> Result<Option<ReadNotebook>, LoadError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(LoadError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    ipynb::from_str(&text)
        .map(Some)
        .map_err(|source| LoadError::Format {
            path: path.to_path_buf(),
            source,
        })
}

/// Moves an unreadable notebook out of the way (`x.ipynb` →
/// `x.unreadable-<8 hex>.ipynb`), so saving afresh cannot destroy what a person
/// may still want to recover. Returns the new name.
///
/// # Errors
///
/// The rename failed.
pub fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let tag = uuid::Uuid::new_v4().simple().to_string();
    let aside = path.with_file_name(format!("{stem}.unreadable-{}.ipynb", &tag[..8]));
    std::fs::rename(path, &aside)?;
    Ok(aside)
}

/// What the UI hands the saver.
#[derive(Debug)]
enum Change {
    /// Cell `.0` is settled as `.1`.
    Cell(usize, Cell),
    /// The editor's draft to keep (`None`: none).
    Draft(Option<String>),
}

/// The UI's handle on the background saver: hands over finished cells without
/// waiting. Cheap to clone; the saver stops once every handle is dropped and
/// everything handed over is written.
#[derive(Debug, Clone)]
pub struct Saver {
    tx: mpsc::Sender<Change>,
}

impl Saver {
    /// Records that cell `index` is settled as `cell`; the file is rewritten soon,
    /// on the saver's thread.
    pub fn cell_finished(&self, index: usize, cell: Cell) {
        if self.tx.send(Change::Cell(index, cell)).is_err() {
            tracing::error!(index, "the notebook saver is gone; cell not saved");
        }
    }

    /// Keeps `draft` (the text typed in the editor and not run, when the
    /// notebook is quit; `None` for none) in the notebook's metadata, for the
    /// editor to give back when it is opened again; the file is rewritten
    /// soon, on the saver's thread.
    pub fn keep_draft(&self, draft: Option<String>) {
        if self.tx.send(Change::Draft(draft)).is_err() {
            tracing::error!("the notebook saver is gone; the editor's text not saved");
        }
    }
}

/// The saver's thread, to wait for when the app ends.
#[derive(Debug)]
pub struct SaverThread {
    handle: JoinHandle<()>,
}

impl SaverThread {
    /// A writer thread of another store, joined like a notebook's saver.
    pub(crate) fn from_handle(handle: JoinHandle<()>) -> Self {
        Self { handle }
    }

    /// Blocks until everything handed over is written (call it after dropping
    /// every [`Saver`]).
    pub fn join(self) {
        if self.handle.join().is_err() {
            tracing::error!("the notebook saver panicked");
        }
    }
}

/// Starts the saver of the notebook at `path`, which already holds `cells`
/// and `draft` (loaded at start; they are rewritten with every save until a
/// cell or a draft replaces them).
///
/// Each write is the whole notebook, so handing over cells faster than the disk
/// takes them only merges writes: no cell is dropped. A failed write is logged and
/// retried with the next cell.
///
/// # Errors
///
/// The thread could not be started.
pub fn spawn_saver(
    path: PathBuf,
    meta: NotebookMeta,
    cells: Vec<Cell>,
    draft: Option<String>,
) -> std::io::Result<(Saver, SaverThread)> {
    let (tx, rx) = mpsc::channel::<Change>();
    let mut settled: BTreeMap<usize, Cell> = cells.into_iter().enumerate().collect();
    let mut draft = draft;
    let handle = std::thread::Builder::new()
        .name("notebook-saver".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                for change in std::iter::once(first).chain(rx.try_iter()) {
                    match change {
                        Change::Cell(index, cell) => {
                            settled.insert(index, cell);
                        }
                        Change::Draft(d) => draft = d,
                    }
                }
                let cells: Vec<Cell> = settled.values().cloned().collect();
                match save_with_draft(&path, &cells, &meta, draft.as_deref()) {
                    Ok(()) => tracing::debug!(cells = cells.len(), "notebook saved"),
                    Err(e) => tracing::error!("cannot save {}: {e}", path.display()),
                }
            }
        })?;
    Ok((Saver { tx }, SaverThread { handle }))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::notebook::{CellOutcome, Output, StreamName};

    fn meta() -> NotebookMeta {
        NotebookMeta {
            pool: "local".into(),
            identifier: "id".into(),
            api_version: "2025-10-02-preview".into(),
            language: crate::notebook::language::Language::Python,
        }
    }

    fn cell(n: u32) -> Cell {
        Cell {
            source: format!("x = {n}"),
            execution_count: n,
            outputs: vec![Output::Stream {
                name: StreamName::Stdout,
                text: format!("{n}\n").into(),
            }],
            outcome: Some(CellOutcome::Succeeded),
            duration: Some(Duration::from_millis(1)),
            exit_code: None,
            stdin: None,
            quit_while: None,
            output_streams_max_length: None,
            network: Vec::new(),
        }
    }

    #[test]
    fn hostile_names_map_inside_the_notebooks_folder() {
        let data = Path::new("/data");
        let root = data.join("notebooks");
        for name in [
            "../../etc/passwd",
            "..",
            ".",
            "",
            "/abs/path",
            "a/../../b",
            "..\\..\\win",
            "x\0y",
            "line\nbreak",
            "\u{1b}]52;c;aGk=\u{7}",
            "naïve-日本",
            &"x".repeat(5000),
        ] {
            let p = notebook_path(data, name, name);
            let rel = p.strip_prefix(&root).expect("under notebooks/");
            let parts: Vec<_> = rel.components().collect();
            assert_eq!(parts.len(), 2, "{name:?} -> {p:?}");
            for part in parts {
                let s = part.as_os_str().to_str().expect("ascii");
                assert!(!s.starts_with('.'), "{name:?} -> {p:?}");
                assert!(s.len() <= KEY_PREFIX_LEN + 17 + ".ipynb".len(), "{p:?}");
                assert!(
                    s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
                    "{name:?} -> {p:?}"
                );
            }
        }
    }

    #[test]
    fn names_that_look_alike_get_different_files() {
        assert_ne!(key("a/b"), key("a_b"));
        assert_ne!(key("a?b"), key("a*b"));
        assert_eq!(key("sp-1"), key("sp-1"));
        assert!(key("sp-1").starts_with("sp-1-"));
        assert!(key("https://h.example/pools/p").starts_with("h.example_pools_p-"));
        assert_eq!(
            pool_name(Some("https://h/p/"), Language::Shell),
            "https://h/p"
        );
        assert_eq!(pool_name(None, Language::Python), "local");
        assert_eq!(pool_name(None, Language::JavaScript), "local-node");
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/n.ipynb");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("n.ipynb")]);
    }

    /// The saver writes the notebook straight into its file: the bytes are
    /// exactly those of the notebook's text made whole.
    #[test]
    fn a_saved_notebook_is_byte_for_byte_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.ipynb");
        let mut big = cell(2);
        big.outputs = vec![Output::Stream {
            name: StreamName::Stdout,
            text: (0..100_000)
                .map(|i| format!("{i}\n"))
                .collect::<String>()
                .into(),
        }];
        let cells = vec![cell(1), big];
        save(&path, &cells, &meta()).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(written, ipynb::to_string(&cells, &meta()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn missing_is_none_and_garbage_is_an_error_that_can_be_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.ipynb");
        assert!(load(&path).unwrap().is_none());
        std::fs::write(&path, "not json").unwrap();
        assert!(matches!(load(&path), Err(LoadError::Format { .. })));
        let aside = set_aside(&path).unwrap();
        assert!(!path.exists());
        assert!(aside.to_string_lossy().contains("n.unreadable-"));
    }

    #[test]
    fn the_saver_keeps_loaded_cells_and_every_finished_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nb/n.ipynb");
        let (saver, thread) = spawn_saver(path.clone(), meta(), vec![cell(1)], None).unwrap();
        // Handed over out of order and in a burst: all of them land, in order.
        for n in [3, 2, 4] {
            saver.cell_finished(n as usize - 1, cell(n));
        }
        drop(saver);
        thread.join();
        let nb = load(&path).unwrap().unwrap();
        let sources: Vec<_> = nb.cells.iter().map(|c| c.source.as_str()).collect();
        assert_eq!(sources, ["x = 1", "x = 2", "x = 3", "x = 4"]);
        assert_eq!(nb.meta, Some(meta()));
    }

    /// The draft loaded with the notebook is written with every save until
    /// the editor's text at quitting replaces it; `None` takes it away.
    #[test]
    fn the_saver_keeps_the_draft_until_another_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("n.ipynb");
        let (saver, thread) =
            spawn_saver(path.clone(), meta(), vec![], Some("typed = 1".into())).unwrap();
        saver.cell_finished(0, cell(1));
        drop(saver);
        thread.join();
        let nb = load(&path).unwrap().unwrap();
        assert_eq!(nb.draft.as_deref(), Some("typed = 1"));

        let (saver, thread) = spawn_saver(path.clone(), meta(), nb.cells, nb.draft).unwrap();
        saver.keep_draft(Some("for i in range(3):\n    print(i)".into()));
        drop(saver);
        thread.join();
        let nb = load(&path).unwrap().unwrap();
        assert_eq!(nb.cells.len(), 1);
        assert_eq!(
            nb.draft.as_deref(),
            Some("for i in range(3):\n    print(i)")
        );

        let (saver, thread) = spawn_saver(path.clone(), meta(), nb.cells, nb.draft).unwrap();
        saver.keep_draft(None);
        drop(saver);
        thread.join();
        assert_eq!(load(&path).unwrap().unwrap().draft, None);
    }

    /// Issue 26: a new notebook (what a session ran) is its owner's only,
    /// in a folder made 0700; a notebook that exists keeps the mode its
    /// owner gave it when written again.
    #[test]
    fn a_new_notebook_is_its_owners_only_and_an_old_one_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/folder/agent.ipynb");
        write_atomic_with(&path, |w: &mut dyn Write| w.write_all(b"{}")).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic_with(&path, |w: &mut dyn Write| w.write_all(b"{ }")).unwrap();
        assert_eq!(mode(&path), 0o644);
        assert_eq!(std::fs::read(&path).unwrap(), b"{ }");
    }
}
