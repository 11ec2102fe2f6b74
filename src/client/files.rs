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
//! so spaces, Unicode, `#`, `%`, `&` and `?` survive. Operations a version lacks
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

use super::api::{ApiVersion, Family};
use super::model::{FileKind, RemoteFile};
use super::response::{count, json, string, time, transport};
use super::retry::{CALL_TIMEOUT, IDLE_TIMEOUT, Limit};
use super::{ClientError, SessionClient};
use crate::ledger::CallKind;

/// Largest file an upload may carry, in bytes: 128 MiB (`aca-api.md` §3.2, §7;
/// the service answers 413 above it).
pub const MAX_UPLOAD: u64 = 128 * 1024 * 1024;

/// Read size of uploads, in bytes.
const CHUNK: usize = 64 * 1024;

/// The slowest upload rate an upload's time limit allows for, in bytes per
/// second (on top of [`CALL_TIMEOUT`]): 256 KiB/s, so 128 MiB may take ~9 min.
const SLOWEST_UPLOAD: u64 = 256 * 1024;

/// The folder every session's files live in (§7); names and `path`s may start
/// with it.
const DATA_ROOT: &str = "/mnt/data";

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
    /// [`ClientError::InvalidArgument`] for an empty name, a tab or line break,
    /// or a name that is only `.`/`..` (a name with a `.`/`..` part, which only a
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
            return Err(ClientError::TooLarge);
        }
        let (tx, mut sent_rx) = tokio::sync::watch::channel(0u64);
        let mut sent = 0u64;
        // Hashed as it goes out, only when the call is recorded.
        let hasher = self
            .recording
            .as_ref()
            .map(|_| Arc::new(Mutex::new(Sha256::new())));
        let tap = hasher.clone();
        let stream = ReaderStream::with_capacity(file, CHUNK).inspect(move |chunk| {
            if let Ok(bytes) = chunk {
                sent += bytes.len() as u64;
                tx.send_replace(sent);
                if let Some(mut h) = tap.as_ref().and_then(|h| h.lock().ok()) {
                    h.update(bytes);
                }
            }
        });
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
        let resp = resp?;
        let body = json(resp).await?;
        let stored = match version.family() {
            Family::A => parse_a_upload(&body, &file_name, total)?,
            Family::B => parse_b_file(body.pointer("/value/0").unwrap_or(&body))?,
        };
        if let (Some(r), Some(h)) = (&self.recording, hasher) {
            let sha = h
                .lock()
                .ok()
                .map(|h| crate::ledger::hex(&h.clone().finalize()));
            let name = match &folder {
                Some(f) => format!("{f}/{file_name}"),
                None => file_name,
            };
            let duration = started.elapsed();
            r.file(
                identifier,
                at,
                duration,
                CallKind::Upload,
                &name,
                Some(total),
                sha,
            );
        }
        Ok(stored)
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
            let sha = crate::ledger::hex(&h.finalize());
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
        url.path_segments_mut()
            .map_err(|()| ClientError::InvalidEndpoint {
                endpoint: self.endpoint.clone(),
                reason: "the endpoint cannot have path segments".into(),
            })?
            .extend(before.iter().chain(name).chain(after));
        Ok(url)
    }
}

/// Whether a `path` names the data root itself (`/`, `/mnt/data`).
fn is_data_root(path: &str) -> bool {
    matches!(path.trim_end_matches('/'), "" | DATA_ROOT)
}

/// A folder `path` as shown to a person: relative to `/mnt/data`, no slashes at
/// either end (`/mnt/data/sub/` → `sub`).
fn below_root(path: &str) -> &str {
    path.strip_prefix(DATA_ROOT)
        .filter(|rest| rest.starts_with('/'))
        .unwrap_or(path)
        .trim_matches('/')
}

/// The `/`-separated parts of a file name, without a leading `/mnt/data/` and
/// without empty parts. Errors: nothing left, or a `.` / `..` part (which URLs
/// would silently drop or resolve).
fn name_segments(name: &str) -> Result<Vec<&str>, ClientError> {
    let rel = name
        .strip_prefix(DATA_ROOT)
        .filter(|rest| rest.starts_with('/'))
        .unwrap_or(name);
    let segments: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
    if segments.is_empty() {
        return Err(ClientError::InvalidArgument(format!(
            "{name:?} names no file"
        )));
    }
    // URLs drop tabs and line breaks from paths, so such a name would request
    // another file: refuse it rather than fetch the wrong one.
    if name.chars().any(|c| matches!(c, '\t' | '\r' | '\n')) {
        return Err(ClientError::InvalidArgument(format!(
            "{name:?} contains a tab or line break, which a URL cannot carry"
        )));
    }
    if segments.iter().any(|s| matches!(*s, "." | "..")) {
        return Err(ClientError::InvalidArgument(format!(
            "{name:?} has a `.` or `..` part; name the file directly"
        )));
    }
    Ok(segments)
}

/// The path segments that request the listed file `name`: its `/`-separated
/// parts, or, when a part is `.` or `..` (a name no real file has, which URLs
/// would drop or resolve into another route), the whole name as one segment, its
/// `/`s percent-encoded, so the pool is asked for exactly the name it listed
/// and the request stays on the file route. Errors: nothing left, a tab or line
/// break, or a name that is only `.` or `..`.
fn request_segments(name: &str) -> Result<Vec<&str>, ClientError> {
    match name_segments(name) {
        Err(ClientError::InvalidArgument(_)) if !name.contains(['\t', '\r', '\n']) => {
            let rel = name
                .strip_prefix(DATA_ROOT)
                .filter(|rest| rest.starts_with('/'))
                .unwrap_or(name)
                .trim_matches('/');
            if rel.is_empty() || matches!(rel, "." | "..") {
                return Err(ClientError::InvalidArgument(format!(
                    "{name:?} names no file"
                )));
            }
            Ok(vec![rel])
        }
        other => other,
    }
}

/// Family B upload target: the folders of the name appended to `path`, and the
/// file's own name.
fn split_folder(path: Option<&str>, segments: &[&str]) -> (Option<String>, String) {
    let (last, dirs) = match segments.split_last() {
        Some((last, dirs)) => (*last, dirs),
        None => ("", &[][..]),
    };
    let folder = match (path, dirs.is_empty()) {
        (None, true) => None,
        (None, false) => Some(dirs.join("/")),
        (Some(p), true) => Some(p.to_string()),
        (Some(p), false) => Some(format!("{}/{}", p.trim_end_matches('/'), dirs.join("/"))),
    };
    (folder, last.to_string())
}

/// One listing entry of either family.
fn parse_entry(v: &Value, family: Family) -> Result<RemoteFile, ClientError> {
    match family {
        Family::A => parse_a_file(v),
        Family::B => parse_b_file(v),
    }
}

/// A family A entry: `{"$id","properties":{"$id","filename","size","lastModifiedTime"}}`
/// (§3.2, §3.3); `filename` may hold folders or start with `/mnt/data/`.
fn parse_a_file(v: &Value) -> Result<RemoteFile, ClientError> {
    let props = v.get("properties").unwrap_or(v);
    let Some(filename) = string(props, "filename") else {
        return Err(ClientError::Malformed(
            "file entry has no properties.filename".into(),
        ));
    };
    let rel = filename
        .strip_prefix(DATA_ROOT)
        .and_then(|r| r.strip_prefix('/'))
        .unwrap_or(&filename)
        .trim_start_matches('/');
    let (directory, name) = match rel.rsplit_once('/') {
        Some((dir, name)) => (Some(dir.to_string()), name.to_string()),
        None => (None, rel.to_string()),
    };
    Ok(RemoteFile {
        name,
        directory,
        size: count(props.get("size")),
        modified: time(props.get("lastModifiedTime")),
        content_type: None,
        kind: FileKind::File,
    })
}

/// A family B `SessionResourceFile`: `{name, sizeInBytes, lastModifiedAt,
/// contentType, type ("File"/"Directory", any casing), directory (2025-10)}`
/// (§4.3); `$id` and unknown members are ignored.
fn parse_b_file(v: &Value) -> Result<RemoteFile, ClientError> {
    let Some(name) = string(v, "name") else {
        return Err(ClientError::Malformed("file entry has no name".into()));
    };
    let is_dir = v
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("directory"));
    Ok(RemoteFile {
        name,
        directory: string(v, "directory"),
        size: count(v.get("sizeInBytes")),
        modified: time(v.get("lastModifiedAt")),
        content_type: string(v, "contentType"),
        kind: if is_dir {
            FileKind::Directory
        } else {
            FileKind::File
        },
    })
}

/// The family A upload answer: the entry named `sent` (or the only one); when
/// the collection is empty (as in Semantic Kernel's mock, §3.2), what was sent.
fn parse_a_upload(v: &Value, sent: &str, size: u64) -> Result<RemoteFile, ClientError> {
    let Some(entries) = v.get("value").and_then(Value::as_array) else {
        return Err(ClientError::Malformed(
            "upload answer has no `value` array".into(),
        ));
    };
    let files = entries
        .iter()
        .map(parse_a_file)
        .collect::<Result<Vec<_>, _>>()?;
    let sent_file = parse_a_file(&serde_json::json!({ "filename": sent, "size": size }))?;
    let wanted = sent_file.path();
    Ok(match files.iter().position(|f| f.path() == wanted) {
        Some(i) => files[i].clone(),
        None if files.len() == 1 => files[0].clone(),
        None => sent_file,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_split_into_segments() {
        assert_eq!(name_segments("a b.txt").unwrap(), ["a b.txt"]);
        assert_eq!(
            name_segments("/mnt/data/sub/x#1.csv").unwrap(),
            ["sub", "x#1.csv"]
        );
        assert_eq!(name_segments("/mnt/database").unwrap(), ["mnt", "database"]);
        assert!(name_segments("//").is_err());
        assert!(name_segments("a/../b").is_err());
    }

    #[test]
    fn dotted_names_are_requested_as_one_segment() {
        assert_eq!(request_segments("sub/x.csv").unwrap(), ["sub", "x.csv"]);
        assert_eq!(request_segments("../evil.txt").unwrap(), ["../evil.txt"]);
        assert_eq!(request_segments("/mnt/data/a/../b").unwrap(), ["a/../b"]);
        assert!(request_segments("..").is_err());
        assert!(request_segments("/mnt/data/./").is_err());
        assert!(request_segments("a\n/../b").is_err());
        let mut url = Url::parse("http://h/files").unwrap();
        url.path_segments_mut()
            .unwrap()
            .extend(request_segments("../evil.txt").unwrap())
            .push("content");
        assert_eq!(url.path(), "/files/..%2Fevil.txt/content");
    }

    #[test]
    fn family_b_upload_folders_come_from_path_and_name() {
        assert_eq!(split_folder(None, &["x"]), (None, "x".into()));
        assert_eq!(
            split_folder(None, &["a", "x"]),
            (Some("a".into()), "x".into())
        );
        assert_eq!(
            split_folder(Some("p/"), &["a", "x"]),
            (Some("p/a".into()), "x".into())
        );
        assert_eq!(
            split_folder(Some("p"), &["x"]),
            (Some("p".into()), "x".into())
        );
    }

    #[test]
    fn family_a_entries_with_folders_and_mnt_data() {
        let f = parse_a_file(
            &json!({"$id":"2","properties":{"$id":"3","filename":"/mnt/data/sub/x.csv","size":5}}),
        )
        .unwrap();
        assert_eq!(
            (f.name.as_str(), f.directory.as_deref(), f.size),
            ("x.csv", Some("sub"), Some(5))
        );
        assert_eq!(f.path(), "sub/x.csv");
        assert!(parse_a_file(&json!({"properties":{}})).is_err());
    }

    #[test]
    fn family_b_type_is_case_insensitive() {
        let d = parse_b_file(&json!({"name":"d","type":"directory","lastModifiedAt":"x"})).unwrap();
        assert_eq!((d.kind, d.modified), (FileKind::Directory, None));
        let f =
            parse_b_file(&json!({"$id":"3","name":"f","type":"File","sizeInBytes":"12"})).unwrap();
        assert_eq!((f.kind, f.size), (FileKind::File, Some(12)));
    }

    #[test]
    fn empty_family_a_upload_answer_describes_what_was_sent() {
        let f = parse_a_upload(&json!({"$id":"1","value":[]}), "x.txt", 3).unwrap();
        assert_eq!((f.name.as_str(), f.size), ("x.txt", Some(3)));
        assert!(parse_a_upload(&json!({}), "x", 1).is_err());
    }
}
