//! Files of a session's `/mnt/data`: list, metadata, upload (streamed from disk),
//! download (streamed to any writer, never held in memory) and delete, with the
//! paths of each family:
//!
//! | Operation | Family A: 2024-02-02, 2024-08-02 (§3.2–§3.5) | Family B: 2024-10-02 and later (§4.3) |
//! |---|---|---|
//! | [`list_files`](SessionClient::list_files) | `GET files` (top of `/mnt/data` only) | `GET files[?path][&recursive=true]` (`recursive` from 2025-10-02) |
//! | [`file_info`](SessionClient::file_info) | found in `GET files` | `GET files/{name}` |
//! | [`upload_file`](SessionClient::upload_file) | `POST files/upload` | `POST files[?path]` |
//! | [`download_file`](SessionClient::download_file) | `GET files/content/{name}` | `GET files/{name}/content` |
//! | [`delete_file`](SessionClient::delete_file) | not supported | `DELETE files/{name}` |
//!
//! A `{name}` is sent as one percent-encoded path segment per `/`-separated part,
//! so spaces, Unicode, `#`, `%`, `&`, `?`, tabs and line breaks survive. Operations a version lacks
//! fail with [`ClientError::NotSupported`] before anything is sent.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::multipart::{Form, Part};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio_util::io::ReaderStream;
use url::Url;

use super::file_wire::{
    append_segments, below_root, is_data_root, name_segments, parse_a_upload, parse_b_file,
    parse_entry, request_segments, split_folder,
};
use super::response::{json, transport};
use super::retry::{CALL_TIMEOUT, IDLE_TIMEOUT, Limit};
use super::{ClientError, SessionClient};
use crate::protocol::api::{ApiVersion, Family};
use crate::protocol::model::RemoteFile;
use crate::protocol::record::CallKind;

/// Largest file an upload may carry, in bytes: 128 MiB (`aca-api.md` §3.2, §7;
/// the service answers 413 above it).
pub const MAX_UPLOAD: u64 = 128 * 1024 * 1024;

/// Read size of uploads, in bytes.
const CHUNK: usize = 64 * 1024;

/// The slowest upload rate an upload's time limit allows for, in bytes per
/// second (on top of [`CALL_TIMEOUT`]): 256 KiB/s, so 128 MiB may take ~9 min.
const SLOWEST_UPLOAD: u64 = 256 * 1024;

/// The [`ClientError::NotSupported`] of `operation` in `version`.
pub(crate) fn unsupported(operation: &'static str, version: ApiVersion) -> ClientError {
    ClientError::NotSupported {
        operation,
        api_version: version.to_string(),
    }
}

impl SessionClient {
    /// Lists the files (and, in family B, folders) of `path` in session
    /// `identifier`: the data root `/mnt/data` when `path` is `None` or empty,
    /// all levels below it when `recursive`. Family B sends `path` as given
    /// (`/mnt/data/sub` or `sub`, §4.3 leaves open which the service wants).
    ///
    /// Wire: `GET files?api-version&identifier[&path][&recursive=true]`
    /// (§3.3, §4.3), following `nextLink` pages. Sizes are bytes.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] for `recursive` before
    /// 2025-10-02-preview and for a `path` other than the data root in family A;
    /// transport and service errors (retried when transient); a body that is
    /// not a file listing is [`ClientError::Malformed`].
    pub async fn list_files(
        &self,
        identifier: &str,
        path: Option<&str>,
        recursive: bool,
    ) -> Result<Vec<RemoteFile>, ClientError> {
        let version = self.api_version;
        if recursive && !version.has_recursive_listing() {
            return Err(unsupported("recursive list_files", version));
        }
        let path = path.map(str::trim).filter(|p| !p.is_empty());
        if path.is_some_and(|p| !is_data_root(p)) && !version.has_file_management() {
            return Err(unsupported("list_files of a folder", version));
        }
        let mut url = self.url("files", Some(identifier))?;
        {
            let mut q = url.query_pairs_mut();
            if let Some(p) = path.filter(|_| version.has_file_management()) {
                q.append_pair("path", p);
            }
            if recursive {
                q.append_pair("recursive", "true");
            }
        }
        let pages = self
            .send_paged(reqwest::Method::GET, url)
            .await
            .map_err(|e| match path.filter(|p| !is_data_root(p)) {
                Some(p) => e.looking_for(|| format!("folder {}", below_root(p))),
                None => e,
            })?;
        let mut files = Vec::new();
        for page in &pages {
            let Some(entries) = page.get("value").and_then(Value::as_array) else {
                return Err(ClientError::Malformed(
                    "file listing has no `value` array".into(),
                ));
            };
            for e in entries {
                files.push(parse_entry(e, version.family())?);
            }
        }
        Ok(files)
    }

    /// The metadata of file `name` (relative to `/mnt/data`, `/` between
    /// folders, or absolute below `/mnt/data`) in session `identifier`.
    ///
    /// Wire: family B `GET files/{name}` → one `SessionResourceFile` (§4.3);
    /// family A has no such call (§3.5) and looks the name up in `GET files`
    /// (top-level files only).
    ///
    /// # Errors
    ///
    /// [`ClientError::NotFound`] when there is no such file;
    /// [`ClientError::InvalidArgument`] for an empty name, or a name that is only `.`/`..` (a name with a `.`/`..` part, which only a
    /// hostile or broken listing gives, is asked for as one segment with its `/`s
    /// encoded, so the request cannot leave the file route);
    /// transport and service errors (retried when transient);
    /// [`ClientError::Malformed`].
    pub async fn file_info(&self, identifier: &str, name: &str) -> Result<RemoteFile, ClientError> {
        let segments = request_segments(name)?;
        if self.api_version.family() == Family::A {
            let wanted = segments.join("/");
            let files = self.list_files(identifier, None, false).await?;
            return files
                .into_iter()
                .find(|f| f.path() == wanted)
                .ok_or_else(|| ClientError::NotFound {
                    message: None,
                    code: None,
                    missing: Some(format!("file {wanted}")),
                });
        }
        let url = self.file_url(identifier, &[], &segments, &[])?;
        let resp = self
            .send_idempotent(Limit::Whole(CALL_TIMEOUT), || {
                Ok(self.http.get(url.clone()))
            })
            .await
            .map_err(|e| e.looking_for(|| format!("file {}", segments.join("/"))))?;
        parse_b_file(&json(resp).await?)
    }

    /// Uploads the local file `local` as `remote_name` into folder `path` (the
    /// data root when `None`) of session `identifier`, streaming it from disk.
    /// `progress(sent, total)` is called as bytes of the file go out (both in
    /// bytes; `total` is the file's size). A `remote_name` with folders
    /// (`sub/x.csv`) is sent in family B as `path=sub` and file name `x.csv`, as
    /// the Azure CLI does (§4.3); family A sends it as the multipart file name.
    ///
    /// Wire: multipart field `file` with the file name; family A
    /// `POST files/upload` → `{"value":[{"properties":{filename,size,…}}]}`
    /// (§3.2), family B `POST files[?path]` → one `SessionResourceFile` (§4.3).
    /// Never retried.
    ///
    /// # Errors
    ///
    /// [`ClientError::TooLarge`] before sending anything when the file
    /// is over [`MAX_UPLOAD`] (and on the service's 413);
    /// [`ClientError::Local`] when the file cannot be read;
    /// [`ClientError::NotSupported`] for a folder in family A;
    /// [`ClientError::InvalidArgument`] for an empty name; transport and service
    /// errors; [`ClientError::Malformed`].
    pub async fn upload_file(
        &self,
        identifier: &str,
        local: &Path,
        remote_name: &str,
        path: Option<&str>,
        progress: &(dyn Fn(u64, u64) + Send + Sync),
    ) -> Result<RemoteFile, ClientError> {
        let version = self.api_version;
        let path = path.map(str::trim).filter(|p| !p.is_empty());
        if path.is_some_and(|p| !is_data_root(p)) && !version.has_file_management() {
            return Err(unsupported("upload_file into a folder", version));
        }
        let segments = name_segments(remote_name)?;
        let (folder, file_name) = match version.family() {
            Family::A => (None, segments.join("/")),
            Family::B => split_folder(path, &segments),
        };
        let (file, total) = open_upload(local).await?;
        // Hashed as it goes out, only when the call is recorded.
        let hasher = self
            .recording
            .as_ref()
            .map(|_| Arc::new(Mutex::new(Sha256::new())));
        let (stream, sent_rx) = counted(file, hasher.clone());
        let started = Instant::now();
        let at = chrono::Utc::now();
        let part = Part::stream_with_length(reqwest::Body::wrap_stream(stream), total)
            .file_name(file_name.clone())
            .mime_str("application/octet-stream")
            .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
        let route = match version.family() {
            Family::A => "files/upload",
            Family::B => "files",
        };
        let mut url = self.url(route, Some(identifier))?;
        if let Some(folder) = &folder {
            url.query_pairs_mut().append_pair("path", folder);
        }
        let req = self
            .http
            .post(url)
            .multipart(Form::new().part("file", part));
        let limit = CALL_TIMEOUT + Duration::from_secs(total / SLOWEST_UPLOAD);
        let request = self.send_once(req, Limit::Whole(limit));
        let resp = reporting_progress(request, sent_rx, total, progress).await?;
        let body = json(resp).await?;
        let stored = match version.family() {
            Family::A => parse_a_upload(&body, &file_name, total)?,
            Family::B => parse_b_file(body.pointer("/value/0").unwrap_or(&body))?,
        };
        let name = match &folder {
            Some(f) => format!("{f}/{file_name}"),
            None => file_name,
        };
        self.record_upload(identifier, at, started, &name, total, hasher);
        Ok(stored)
    }

    /// Records the upload of `total` bytes as `name` (below the data root) in
    /// session `identifier`, begun at `at` (`started`), with the SHA-256 of the
    /// bytes `hasher` saw; nothing when the client does not record.
    fn record_upload(
        &self,
        identifier: &str,
        at: chrono::DateTime<chrono::Utc>,
        started: Instant,
        name: &str,
        total: u64,
        hasher: Option<Arc<Mutex<Sha256>>>,
    ) {
        if let (Some(r), Some(h)) = (&self.recording, hasher) {
            let sha = h
                .lock()
                .ok()
                .map(|h| crate::protocol::record::hex(&h.clone().finalize()));
            let duration = started.elapsed();
            r.file(
                identifier,
                at,
                duration,
                CallKind::Upload,
                name,
                Some(total),
                sha,
            );
        }
    }

    /// Downloads file `name` (as for [`SessionClient::file_info`]) of session
    /// `identifier` into `dest`, chunk by chunk, and flushes it. `progress(done,
    /// total)` is called after each chunk (bytes; `total` from `Content-Length`
    /// when the service sent one). Returns the number of bytes written.
    ///
    /// Wire: family A `GET files/content/{name}` (§3.4), family B
    /// `GET files/{name}/content` (§4.3) → raw bytes. Starting the download is
    /// retried on transient failures; once bytes flow it is not. The headers must
    /// come within 30 s and no gap between chunks may exceed 30 s; the whole
    /// transfer has no limit.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotFound`]; [`ClientError::Timeout`];
    /// [`ClientError::Local`] when `dest` fails; [`ClientError::Unreachable`]
    /// when the connection breaks mid-way; [`ClientError::InvalidArgument`] as
    /// for [`SessionClient::file_info`]; other service errors.
    pub async fn download_file(
        &self,
        identifier: &str,
        name: &str,
        dest: &mut (impl AsyncWrite + Unpin),
        progress: &(dyn Fn(u64, Option<u64>) + Send + Sync),
    ) -> Result<u64, ClientError> {
        let segments = request_segments(name)?;
        let url = match self.api_version.family() {
            Family::A => self.file_url(identifier, &["content"], &segments, &[])?,
            Family::B => self.file_url(identifier, &[], &segments, &["content"])?,
        };
        let started = Instant::now();
        let at = chrono::Utc::now();
        let mut hasher = self.recording.as_ref().map(|_| Sha256::new());
        let mut resp = self
            .send_idempotent(Limit::Headers(CALL_TIMEOUT), || {
                Ok(self.http.get(url.clone()))
            })
            .await
            .map_err(|e| e.looking_for(|| format!("file {}", segments.join("/"))))?;
        let total = resp.content_length();
        let mut done = 0u64;
        let write_err = |source| ClientError::Local {
            action: format!("write the download of {name}"),
            source,
        };
        loop {
            let chunk = tokio::time::timeout(IDLE_TIMEOUT, resp.chunk())
                .await
                .map_err(|_| ClientError::Timeout(IDLE_TIMEOUT))?
                .map_err(|e| transport(&self.endpoint, IDLE_TIMEOUT, e))?;
            let Some(chunk) = chunk else { break };
            dest.write_all(&chunk).await.map_err(write_err)?;
            done += chunk.len() as u64;
            if let Some(h) = &mut hasher {
                h.update(&chunk);
            }
            progress(done, total);
        }
        dest.flush().await.map_err(write_err)?;
        if let (Some(r), Some(h)) = (&self.recording, hasher) {
            let sha = crate::protocol::record::hex(&h.finalize());
            let name = segments.join("/");
            let duration = started.elapsed();
            r.file(
                identifier,
                at,
                duration,
                CallKind::Download,
                &name,
                Some(done),
                Some(sha),
            );
        }
        Ok(done)
    }

    /// Deletes file (or folder) `name` (as for [`SessionClient::file_info`]) of
    /// session `identifier`.
    ///
    /// Wire: family B `DELETE files/{name}` → 204 (§4.3). Never retried.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotSupported`] in family A (its documented API has
    /// no delete, §3.5); [`ClientError::NotFound`]; [`ClientError::InvalidArgument`]
    /// for an empty name; transport and service errors.
    pub async fn delete_file(&self, identifier: &str, name: &str) -> Result<(), ClientError> {
        if !self.api_version.has_file_management() {
            return Err(unsupported("delete_file", self.api_version));
        }
        let segments = name_segments(name)?;
        let url = self.file_url(identifier, &[], &segments, &[])?;
        let started = Instant::now();
        let at = chrono::Utc::now();
        self.send_once(self.http.delete(url), Limit::Whole(CALL_TIMEOUT))
            .await
            .map_err(|e| e.looking_for(|| format!("file {}", segments.join("/"))))?;
        if let Some(r) = &self.recording {
            let name = segments.join("/");
            r.file(
                identifier,
                at,
                started.elapsed(),
                CallKind::Delete,
                &name,
                None,
                None,
            );
        }
        Ok(())
    }

    /// `files/{before…}/{name…}/{after…}?api-version&identifier`, each part one
    /// percent-encoded path segment.
    fn file_url(
        &self,
        identifier: &str,
        before: &[&str],
        name: &[&str],
        after: &[&str],
    ) -> Result<Url, ClientError> {
        let mut url = self.url("files", Some(identifier))?;
        if url.cannot_be_a_base() {
            return Err(ClientError::InvalidEndpoint {
                endpoint: self.endpoint.clone(),
                reason: "the endpoint cannot have path segments".into(),
            });
        }
        let all: Vec<&str> = before.iter().chain(name).chain(after).copied().collect();
        append_segments(&mut url, &all);
        Ok(url)
    }
}

/// Opens the local file `local` for an upload: the file and its size in bytes.
///
/// # Errors
///
/// [`ClientError::Local`] when the file cannot be opened or its size read;
/// [`ClientError::TooLarge`] when it is over [`MAX_UPLOAD`].
async fn open_upload(local: &Path) -> Result<(tokio::fs::File, u64), ClientError> {
    let local_err = |action: &str, source| ClientError::Local {
        action: format!("{action} {}", local.display()),
        source,
    };
    let file = tokio::fs::File::open(local)
        .await
        .map_err(|e| local_err("open", e))?;
    let total = file
        .metadata()
        .await
        .map_err(|e| local_err("read", e))?
        .len();
    if total > MAX_UPLOAD {
        return Err(ClientError::TooLarge { message: None });
    }
    Ok((file, total))
}

/// `file` as an upload's body, read in [`CHUNK`]s: the bytes going out are
/// counted into the returned receiver and fed to `hasher` when there is one.
fn counted(
    file: tokio::fs::File,
    hasher: Option<Arc<Mutex<Sha256>>>,
) -> (
    impl futures::Stream<Item = std::io::Result<bytes::Bytes>> + Send + 'static,
    tokio::sync::watch::Receiver<u64>,
) {
    let (tx, sent_rx) = tokio::sync::watch::channel(0u64);
    let mut sent = 0u64;
    let stream = ReaderStream::with_capacity(file, CHUNK).inspect(move |chunk| {
        if let Ok(bytes) = chunk {
            sent += bytes.len() as u64;
            tx.send_replace(sent);
            if let Some(mut h) = hasher.as_ref().and_then(|h| h.lock().ok()) {
                h.update(bytes);
            }
        }
    });
    (stream, sent_rx)
}

/// Waits for the upload `request`, calling `progress(sent, total)` as the
/// count of bytes gone out (`sent_rx`) grows, and once more at the end when
/// the last of them went out in the same poll that finished the request.
///
/// # Errors
///
/// The request's.
async fn reporting_progress(
    request: impl Future<Output = Result<reqwest::Response, ClientError>>,
    mut sent_rx: tokio::sync::watch::Receiver<u64>,
    total: u64,
    progress: &(dyn Fn(u64, u64) + Send + Sync),
) -> Result<reqwest::Response, ClientError> {
    tokio::pin!(request);
    let mut reported = 0;
    let resp = loop {
        tokio::select! {
            r = &mut request => break r,
            Ok(()) = sent_rx.changed() => {
                reported = *sent_rx.borrow_and_update();
                progress(reported, total);
            }
        }
    };
    // The last chunk may go out in the same poll that finishes the request.
    let last = *sent_rx.borrow();
    if last != reported {
        progress(last, total);
    }
    resp
}
