//! The session worker's file work: listings, heads of files (the first bytes,
//! for a front end's preview), downloads into a local folder, uploads and
//! deletes. It runs as a task of its own beside the execution loop (so browsing
//! never waits for a running cell), owns a clone of the [`SessionClient`], and
//! reports through [`EventSender::files`].
//!
//! Transfers run one at a time and can be cancelled; a download creates its
//! folder first when the user said yes to that, writes with `create_new`
//! unless the user said to replace, and removes its partial file when it fails
//! or is cancelled. A replacement is written to a temporary file beside the old
//! one and renamed over it once complete: a failed or cancelled replacement
//! leaves the old file as it was, and a symbolic link in the folder is replaced
//! itself, never followed to write outside the folder. Listings and heads carry
//! the generation the front end gave them, so it can drop stale replies.

use std::io;
use std::path::{Path, PathBuf};

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::event::EventSender;
use super::failure::Failure;
use super::head::read_head;
use crate::client::{ClientError, MAX_UPLOAD, SessionClient};
use crate::protocol::RemoteFile;
use crate::text::human_size;
use crate::text::names::escape;

/// What a front end asks of the file work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileCommand {
    /// List folder `path` (`None`: `/mnt/data`).
    List {
        /// Generation of the request (stale replies are dropped).
        generation: u64,
        /// The folder, relative to `/mnt/data` or absolute below it.
        path: Option<String>,
    },
    /// Fetch the first bytes of a file.
    Head(HeadRequest),
    /// Download each remote file to its local path.
    Download {
        /// Remote name (relative to `/mnt/data`) and local destination.
        files: Vec<(String, PathBuf)>,
        /// Replace existing local files (the user said yes).
        overwrite: bool,
        /// Create this folder (and its parents) first: the user said yes to
        /// creating the download folder.
        create_folder: Option<PathBuf>,
    },
    /// Upload local files into folder `folder` (`None`: `/mnt/data`).
    Upload {
        /// The local files.
        paths: Vec<PathBuf>,
        /// The remote folder.
        folder: Option<String>,
    },
    /// Delete these remote files (relative to `/mnt/data`).
    Delete {
        /// The names.
        names: Vec<String>,
    },
    /// Download remote folders, each with everything in it (listed
    /// recursively: api-version 2025-10-02 and later), beside some files.
    DownloadFolders {
        /// Remote folder (relative to `/mnt/data`) and the local folder it
        /// becomes (created; its subfolders are created inside it).
        folders: Vec<(String, PathBuf)>,
        /// Files marked beside the folders, as [`FileCommand::Download`]'s.
        files: Vec<(String, PathBuf)>,
        /// Create this folder (and its parents) first (the user said yes).
        create_folder: Option<PathBuf>,
    },
    /// Count the files in remote folders (listed recursively), so the
    /// question before deleting them can say how many: answered with
    /// [`FileEvent::Counted`].
    CountFolders {
        /// The folders (relative to `/mnt/data`).
        folders: Vec<String>,
        /// Files marked beside them (handed back).
        files: Vec<String>,
    },
    /// Delete remote folders with everything in them (their files, then
    /// their folders deepest first, then the folder), and some files.
    DeleteFolders {
        /// The folders (relative to `/mnt/data`).
        folders: Vec<String>,
        /// Files marked beside them.
        files: Vec<String>,
    },
    /// Cancel the transfer under way.
    Cancel,
}

/// The head of a file to fetch ([`FileCommand::Head`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadRequest {
    /// Generation of the request (stale replies are dropped).
    pub generation: u64,
    /// The file, relative to `/mnt/data`.
    pub name: String,
    /// The listing's content type, handed back with the head.
    pub content_type: Option<String>,
    /// The listing's size in bytes, handed back with the head.
    pub size: Option<u64>,
    /// The most bytes to fetch (the whole file when smaller).
    pub limit: usize,
}

/// The first bytes of a remote file, with what its listing said of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHead {
    /// The file, relative to `/mnt/data`.
    pub name: String,
    /// The listing's content type.
    pub content_type: Option<String>,
    /// The listing's size in bytes (the whole file's, not the head's).
    pub size: Option<u64>,
    /// Up to [`HeadRequest::limit`] bytes from the start of the file.
    pub bytes: Vec<u8>,
}

/// What the file work reports.
#[derive(Debug)]
pub enum FileEvent {
    /// A listing asked for with [`FileCommand::List`].
    Listed {
        /// Its generation.
        generation: u64,
        /// The entries, or why there are none.
        result: Result<Vec<RemoteFile>, Failure>,
    },
    /// The data root before and after a cell (for the artifact radar).
    CellListing {
        /// Before the cell ran.
        before: Vec<RemoteFile>,
        /// After it.
        after: Vec<RemoteFile>,
    },
    /// A head asked for with [`FileCommand::Head`].
    Head {
        /// Its generation.
        generation: u64,
        /// The head, or why there is none.
        result: Result<FileHead, Failure>,
    },
    /// Progress of the transfer under way.
    Progress {
        /// `report.csv (2 of 3)`.
        label: String,
        /// Bytes done.
        done: u64,
        /// Bytes in all, when known.
        total: Option<u64>,
    },
    /// The files in folders to delete, counted ([`FileCommand::CountFolders`]).
    Counted {
        /// The folders.
        folders: Vec<String>,
        /// The files marked beside them.
        files: Vec<String>,
        /// How many files the folders hold, or why they could not be listed.
        count: Result<usize, String>,
    },
    /// A transfer (or delete) ended.
    Done {
        /// What happened, for the status line.
        summary: String,
        /// Downloads skipped because the local file exists (ask, then retry).
        exists: Vec<(String, PathBuf)>,
    },
}

/// Starts the file work for the session `identifier` names, through the
/// client `client` holds (both can change between commands: a switched
/// session, a background pool started again); it takes commands until
/// `commands` closes.
pub(super) fn spawn(
    client: watch::Receiver<SessionClient>,
    identifier: watch::Receiver<String>,
    commands: mpsc::UnboundedReceiver<FileCommand>,
    events: EventSender,
) -> JoinHandle<()> {
    tokio::spawn(run(client, identifier, commands, events))
}

async fn run(
    client: watch::Receiver<SessionClient>,
    identifier: watch::Receiver<String>,
    mut commands: mpsc::UnboundedReceiver<FileCommand>,
    events: EventSender,
) {
    let mut transfer: Option<(CancellationToken, JoinHandle<()>)> = None;
    while let Some(command) = commands.recv().await {
        let ctx = Ctx {
            client: client.borrow().clone(),
            identifier: identifier.borrow().clone(),
            events: events.clone(),
        };
        match command {
            FileCommand::List { generation, path } => {
                tokio::spawn(async move {
                    let result = ctx
                        .client
                        .list_files(&ctx.identifier, path.as_deref(), false)
                        .await
                        .map_err(Failure::from);
                    ctx.events.files(FileEvent::Listed { generation, result });
                });
            }
            FileCommand::Head(request) => {
                tokio::spawn(async move {
                    let generation = request.generation;
                    let result = ctx.head(request).await;
                    ctx.events.files(FileEvent::Head { generation, result });
                });
            }
            FileCommand::CountFolders { folders, files } => {
                tokio::spawn(async move {
                    let count =
                        super::files_tree::count_files(&ctx.client, &ctx.identifier, &folders)
                            .await;
                    ctx.events.files(FileEvent::Counted {
                        folders,
                        files,
                        count,
                    });
                });
            }
            FileCommand::Cancel => {
                if let Some((token, _)) = &transfer {
                    token.cancel();
                }
            }
            other => {
                // One transfer at a time: the next waits for the one under way.
                if let Some((_, handle)) = transfer.take() {
                    let _ = handle.await;
                }
                let token = CancellationToken::new();
                let cancel = token.clone();
                let handle = tokio::spawn(async move { ctx.transfer(other, cancel).await });
                transfer = Some((token, handle));
            }
        }
    }
    if let Some((token, handle)) = transfer {
        token.cancel();
        let _ = handle.await;
    }
}

/// What one piece of file work needs.
struct Ctx {
    client: SessionClient,
    identifier: String,
    events: EventSender,
}

impl Ctx {
    async fn head(&self, request: HeadRequest) -> Result<FileHead, Failure> {
        let bytes = read_head(&self.client, &self.identifier, &request.name, request.limit)
            .await
            .map_err(Failure::from)?;
        Ok(FileHead {
            name: request.name,
            content_type: request.content_type,
            size: request.size,
            bytes,
        })
    }

    /// Creates `folder` (the download folder the user agreed to create), if
    /// any; false, with the failure said, when it cannot be made.
    async fn create_download_folder(&self, folder: Option<PathBuf>) -> bool {
        let Some(folder) = folder else {
            return true;
        };
        let Err(e) = tokio::fs::create_dir_all(&folder).await else {
            return true;
        };
        let summary = format!(
            "cannot create {}: {e}; nothing downloaded",
            folder.display()
        );
        self.events.files(FileEvent::Done {
            summary,
            exists: Vec::new(),
        });
        false
    }

    async fn transfer(self, command: FileCommand, cancel: CancellationToken) {
        let (summary, exists) = match command {
            FileCommand::Download {
                files,
                overwrite,
                create_folder,
            } => {
                if !self.create_download_folder(create_folder).await {
                    return;
                }
                self.download_all(files, overwrite, &cancel).await
            }
            FileCommand::Upload { paths, folder } => {
                (self.upload_all(paths, folder, &cancel).await, Vec::new())
            }
            FileCommand::Delete { names } => (self.delete_all(names).await, Vec::new()),
            FileCommand::DownloadFolders {
                folders,
                files,
                create_folder,
            } => {
                if !self.create_download_folder(create_folder).await {
                    return;
                }
                match super::files_tree::expand(&self.client, &self.identifier, folders).await {
                    Ok(mut expanded) => {
                        expanded.extend(files);
                        self.download_all(expanded, false, &cancel).await
                    }
                    Err(why) => (why, Vec::new()),
                }
            }
            FileCommand::DeleteFolders { folders, files } => {
                let mut summary = if files.is_empty() {
                    String::new()
                } else {
                    format!("{}; ", self.delete_all(files).await)
                };
                summary.push_str(
                    &super::files_tree::delete_folders(&self.client, &self.identifier, &folders)
                        .await,
                );
                (summary, Vec::new())
            }
            _ => return,
        };
        self.events.files(FileEvent::Done { summary, exists });
    }

    async fn download_all(
        &self,
        files: Vec<(String, PathBuf)>,
        overwrite: bool,
        cancel: &CancellationToken,
    ) -> (String, Vec<(String, PathBuf)>) {
        let count = files.len();
        let mut exists = Vec::new();
        // Each file saved: its local path, size, and what was said of its
        // name when it had to change.
        let mut done: Vec<Saved> = Vec::new();
        // One file that fails (refused name, gone, a local error) does not stop
        // the others; the summary counts the failures and names the first.
        let mut failed: Vec<String> = Vec::new();
        for (n, (name, dest)) in files.into_iter().enumerate() {
            let label = numbered(&escape(&name), n, count);
            match self
                .download_one(&name, &dest, overwrite, &label, cancel)
                .await
            {
                Ok(bytes) => done.push(Saved {
                    note: rename_note(&name, &dest),
                    dest,
                    size: human_size(bytes),
                }),
                Err(DownloadError::Exists) => exists.push((name, dest)),
                Err(DownloadError::Cancelled) => {
                    return (format!("download of {} cancelled", escape(&name)), exists);
                }
                Err(DownloadError::Error(e)) => {
                    failed.push(format!("{}: {e}", escape(&name)));
                }
            }
        }
        // Every rename is said: a name that could not be kept is named with
        // the local name it got.
        let notes: Vec<String> = done.iter().filter_map(|d| d.note.clone()).collect();
        let mut summary = match done.as_slice() {
            [] => "nothing downloaded".to_string(),
            [
                Saved {
                    note: Some(note),
                    size,
                    ..
                },
            ] => format!("{note} ({size})"),
            [one] => format!("downloaded {} ({})", one.dest.display(), one.size),
            many => {
                let folder = many[0]
                    .dest
                    .parent()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                let mut text = format!("downloaded {} files to {folder}", many.len());
                if !notes.is_empty() {
                    text.push_str("; ");
                    text.push_str(&crate::text::names::listed(&notes, 3));
                }
                text
            }
        };
        // Failures first: on a narrow status line they are what must show.
        match failed.as_slice() {
            [] => {}
            [one] => summary = format!("cannot download {one}; {summary}"),
            [first, rest @ ..] => {
                summary = format!("{} failed ({first}); {summary}", rest.len() + 1);
            }
        }
        (summary, exists)
    }

    async fn download_one(
        &self,
        name: &str,
        dest: &Path,
        overwrite: bool,
        label: &str,
        cancel: &CancellationToken,
    ) -> Result<u64, DownloadError> {
        if overwrite {
            return self.replace_one(name, dest, label, cancel).await;
        }
        // `create_new` never follows a link: an existing name, link or not, is
        // reported as existing.
        let mut file = match tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dest)
            .await
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(DownloadError::Exists);
            }
            Err(e) => return Err(DownloadError::Error(format!("{}: {e}", dest.display()))),
        };
        let outcome = self.fetch_into(name, &mut file, label, cancel).await;
        drop(file);
        if outcome.is_err() {
            // Never leave half a file behind that looks like the real one.
            let _ = tokio::fs::remove_file(dest).await;
        }
        outcome
    }

    /// Replaces `dest` with the remote file `name`: written to a temporary
    /// file in the same folder, renamed over `dest` once complete (the rename
    /// replaces a link itself, never what it points to). On failure or
    /// cancel the temporary file goes and `dest` is as it was.
    async fn replace_one(
        &self,
        name: &str,
        dest: &Path,
        label: &str,
        cancel: &CancellationToken,
    ) -> Result<u64, DownloadError> {
        let folder = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let local_error = |e: io::Error| DownloadError::Error(format!("{}: {e}", dest.display()));
        let temp = tokio::task::spawn_blocking(move || {
            tempfile::Builder::new()
                .prefix(".sessionpad-download-")
                .tempfile_in(folder)
        })
        .await
        .map_err(|e| DownloadError::Error(e.to_string()))?
        .map_err(local_error)?;
        let (std_file, temp_path) = temp.into_parts();
        let mut file = tokio::fs::File::from_std(std_file);
        let outcome = self.fetch_into(name, &mut file, label, cancel).await;
        drop(file);
        let bytes = outcome?;
        // Dropping `temp_path` on any error above removes the temporary file.
        temp_path.persist(dest).map_err(|e| local_error(e.error))?;
        Ok(bytes)
    }

    /// Streams the remote file `name` into `file`, reporting progress as
    /// `label`, until done or cancelled.
    async fn fetch_into(
        &self,
        name: &str,
        file: &mut tokio::fs::File,
        label: &str,
        cancel: &CancellationToken,
    ) -> Result<u64, DownloadError> {
        let events = self.events.clone();
        let label = label.to_string();
        let progress = move |done: u64, total: Option<u64>| {
            events.files(FileEvent::Progress {
                label: label.clone(),
                done,
                total,
            });
        };
        tokio::select! {
            () = cancel.cancelled() => Err(DownloadError::Cancelled),
            r = self.client.download_file(&self.identifier, name, file, &progress) => {
                r.map_err(|e| DownloadError::Error(e.to_string()))
            }
        }
    }

    async fn upload_all(
        &self,
        paths: Vec<PathBuf>,
        folder: Option<String>,
        cancel: &CancellationToken,
    ) -> String {
        let count = paths.len();
        let mut sent = Vec::new();
        for (n, path) in paths.into_iter().enumerate() {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let size = match tokio::fs::metadata(&path).await {
                Ok(m) if m.is_file() => m.len(),
                Ok(_) => return format!("{} is not a file", path.display()),
                Err(e) => return format!("cannot read {}: {e}", path.display()),
            };
            if size > MAX_UPLOAD {
                return format!(
                    "{} is {}: uploads are limited to {}",
                    path.display(),
                    human_size(size),
                    human_size(MAX_UPLOAD)
                );
            }
            let events = self.events.clone();
            let label = numbered(&escape(&name), n, count);
            let progress = move |done: u64, total: u64| {
                events.files(FileEvent::Progress {
                    label: label.clone(),
                    done,
                    total: Some(total),
                });
            };
            let upload = self.client.upload_file(
                &self.identifier,
                &path,
                &name,
                folder.as_deref(),
                &progress,
            );
            let outcome = tokio::select! {
                () = cancel.cancelled() => return format!("upload of {} cancelled", escape(&name)),
                r = upload => r,
            };
            match outcome {
                Ok(_) => sent.push(format!("{} ({})", escape(&name), human_size(size))),
                Err(ClientError::TooLarge { message: None }) => {
                    return format!("{} is too large for the pool (over 128 MiB)", escape(&name));
                }
                Err(e) => return format!("cannot upload {}: {e}", escape(&name)),
            }
        }
        match sent.as_slice() {
            [] => "nothing uploaded".to_string(),
            [one] => format!("uploaded {one}"),
            many => format!("uploaded {} files", many.len()),
        }
    }

    async fn delete_all(&self, names: Vec<String>) -> String {
        let mut deleted = 0;
        for name in &names {
            if let Err(e) = self.client.delete_file(&self.identifier, name).await {
                return format!("cannot delete {}: {e}", escape(name));
            }
            deleted += 1;
        }
        match names.as_slice() {
            [one] => format!("deleted {}", escape(one)),
            _ => format!("deleted {deleted} files"),
        }
    }
}

/// One file a download saved.
struct Saved {
    /// Where it went.
    dest: PathBuf,
    /// Its size, as a person reads it.
    size: String,
    /// What [`rename_note`] said of its name, when it had to change.
    note: Option<String>,
}

/// Why one download did not happen.
enum DownloadError {
    /// The local file exists and the user has not said to replace it.
    Exists,
    /// The user cancelled.
    Cancelled,
    /// Anything else.
    Error(String),
}

/// `saved NAME as LOCAL` when the local file `dest` does not carry the remote
/// `name`'s own last part (a character a local name cannot hold, a leading
/// dot), the remote name escaped as `ls -b` shows it; `None` when it does.
pub fn rename_note(name: &str, dest: &Path) -> Option<String> {
    let own = name.rsplit('/').next().unwrap_or(name);
    let local = dest.file_name().map(|n| n.to_string_lossy().into_owned());
    if local.as_deref() == Some(own) {
        return None;
    }
    let hidden = if own.starts_with('.') {
        " (a hidden name: saved visible)"
    } else {
        ""
    };
    Some(format!(
        "saved {} as {}{hidden}",
        escape(name),
        escape(&dest.display().to_string())
    ))
}

/// `name (2 of 3)` when there are several, else `name`.
fn numbered(name: &str, n: usize, count: usize) -> String {
    if count > 1 {
        format!("{name} ({} of {count})", n + 1)
    } else {
        name.to_string()
    }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
