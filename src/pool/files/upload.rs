//! Uploads (`aca-api.md` §3.2 family A, §4.3 family B): a `multipart/form-data`
//! body whose `file` parts are streamed chunk by chunk to a temporary file and
//! renamed into place when complete, so memory stays flat and a failed or
//! oversized upload leaves no file behind (folders it made for its name stay).
//! The target folder is resolved (and made) first, beneath the session folder's
//! handle ([`Root::make_dir`]); the temporary file is created in that folder's
//! handle (`O_CREAT | O_EXCL`, never through a link) and renamed within it
//! (`renameat`), so a link at the final name is replaced, never written through,
//! and a folder swapped for a link meanwhile cannot redirect the file. The files of one request may
//! hold at most [`MAX_UPLOAD`] bytes in all (§7); above that the answer is 413
//! `FileTooLarge`, at once when a `Content-Length` already says so (a client that
//! sends `Expect: 100-continue`, like curl, then never sends the body).

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use axum::extract::Multipart;
use axum::extract::multipart::{Field, MultipartError};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_LENGTH};
use axum::http::{HeaderMap, StatusCode};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use tokio::io::{AsyncWriteExt, BufWriter};

use super::super::wire_error::WireError;
use super::beneath::{Kind, Meta, Root, lstat_child};
use super::entry::Entry;
use super::paths::{FsError, RelPath, percent_decode_bytes};
use super::{blocking, internal};

/// Most file bytes accepted by one upload request: 128 MiB (`aca-api.md` §3.2, §7).
pub(crate) const MAX_UPLOAD: u64 = crate::protocol::service_limits::MAX_UPLOAD_BYTES;

/// Room for the multipart framing (boundaries, part headers) in a declared
/// `Content-Length`, in bytes.
const FRAMING: u64 = 1024 * 1024;

/// Name prefix of the temporary files uploads are written to (in the folder of
/// the upload's name); listings leave such files out.
pub(crate) const TEMP_PREFIX: &str = ".sessionpad-upload-";

/// Bytes accepted, in all, in form fields other than `file` (they are ignored).
const MAX_OTHER_FIELDS: u64 = 1024 * 1024;

/// Bytes of an oversized request still read (and dropped) before answering 413,
/// so the client gets the answer rather than a reset connection.
const DRAIN_LIMIT: u64 = 64 * 1024 * 1024;

/// Buffer between the multipart chunks and the file, in bytes.
const WRITE_BUFFER: usize = 256 * 1024;

/// Writes every `file` part of `multipart` below the folder `base` (relative to
/// `/mnt/data`) of the session folder `root`. A part's file name is
/// required; `/mnt/data/x.csv` is stored as `x.csv`, `sub/x.csv` in `sub` (made if
/// missing).
/// Returns one entry per stored file, in order, with `directory`
/// relative to `base`, and with `hash` the SHA-256 (lowercase hex) of each
/// file's bytes, computed as they stream in (for the ledger).
///
/// Errors: 400 `SessionRequestValidationFailed` (no `file` part, no or bad file
/// name, a folder on the way that is a file or a link leading outside, a name
/// that is a folder), 413 `FileTooLarge` (more than [`MAX_UPLOAD`] file bytes;
/// the file being written is removed, files of earlier parts stay), 500 on I/O
/// failure.
pub(crate) async fn receive(
    mut multipart: Multipart,
    root: &Arc<Root>,
    base: &RelPath,
    hash: bool,
) -> Result<Vec<(Entry, Option<String>)>, WireError> {
    let mut stored = Vec::new();
    let mut other = 0u64;
    let mut used = 0u64;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(broken(e)),
        };
        if field.name() != Some("file") {
            other += drain(field, MAX_OTHER_FIELDS.saturating_sub(other) + 1).await;
            if other > MAX_OTHER_FIELDS {
                return Err(WireError::bad_request(
                    "SessionRequestValidationFailed",
                    format!("form fields other than `file` exceed {MAX_OTHER_FIELDS} bytes"),
                ));
            }
            continue;
        }
        match store(field, root, base, MAX_UPLOAD - used, hash).await {
            Ok((entry, size, sha256)) => {
                used += size;
                stored.push((entry, sha256));
            }
            Err(Failure::TooLarge(drained)) => {
                drain_rest(&mut multipart, DRAIN_LIMIT.saturating_sub(drained)).await;
                return Err(too_large());
            }
            Err(Failure::Wire(e)) => return Err(e),
        }
    }
    if stored.is_empty() {
        return Err(WireError::bad_request(
            "SessionRequestValidationFailed",
            "the multipart body has no `file` field; send the file as form field `file` with a filename",
        ));
    }
    Ok(stored)
}

/// 413 `FileTooLarge` when the request's `Content-Length` (bytes) is more than
/// [`MAX_UPLOAD`] plus the room multipart framing and other fields may take.
pub(crate) fn check_declared_length(headers: &HeaderMap) -> Result<(), WireError> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > MAX_UPLOAD + MAX_OTHER_FIELDS + FRAMING => Err(too_large()),
        _ => Ok(()),
    }
}

/// 413 `FileTooLarge` (`aca-api.md` §6.2).
fn too_large() -> WireError {
    WireError {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        code: "FileTooLarge",
        message: format!("the file is larger than the upload limit of {MAX_UPLOAD} bytes (128 MB)"),
    }
}

/// 400 `SessionRequestValidationFailed` for a body multer cannot read.
#[allow(clippy::needless_pass_by_value)] // the shape `map_err` takes
fn broken(e: MultipartError) -> WireError {
    WireError::bad_request(
        "SessionRequestValidationFailed",
        format!("the multipart body could not be read: {e}"),
    )
}

/// Why one part was not stored.
enum Failure {
    /// Over the limit; carries the bytes already drained.
    TooLarge(u64),
    /// Any other error answer.
    Wire(WireError),
}

impl From<WireError> for Failure {
    fn from(e: WireError) -> Self {
        Failure::Wire(e)
    }
}

/// Streams one `file` part to a temporary file, then renames it to its place;
/// returns its entry, size in bytes and (with `hash`) the bytes' SHA-256. More
/// than `budget` bytes is [`Failure::TooLarge`].
async fn store(
    mut field: Field<'_>,
    root: &Arc<Root>,
    base: &RelPath,
    budget: u64,
    hash: bool,
) -> Result<(Entry, u64, Option<String>), Failure> {
    use sha2::Digest;
    let filename = disposition_filename(field.headers())
        .or_else(|| field.file_name().map(str::to_string))
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            WireError::bad_request(
                "SessionRequestValidationFailed",
                "the `file` field has no filename",
            )
        })?;
    let name = RelPath::parse_name(&filename)?;
    if name.is_empty() {
        return Err(WireError::bad_request(
            "SessionRequestValidationFailed",
            format!("the filename {filename:?} names no file"),
        )
        .into());
    }
    let rel = base.join(&name);
    let mut temp = {
        let (root, rel) = (Arc::clone(root), rel.clone());
        blocking(move || TempFile::create(&root, &rel))
            .await?
            .map_err(|e| e.into_wire(false))?
    };
    let mut size = 0u64;
    let mut hasher = hash.then(sha2::Sha256::new);
    while let Some(chunk) = field.chunk().await.map_err(broken)? {
        size += chunk.len() as u64;
        if size > budget {
            drop(temp);
            tracing::info!(file = %rel.display(), "upload over {MAX_UPLOAD} bytes refused");
            return Err(Failure::TooLarge(drain(field, DRAIN_LIMIT).await));
        }
        if let Some(h) = &mut hasher {
            h.update(&chunk);
        }
        temp.write(&chunk).await?;
    }
    let meta = temp.persist().await.map_err(|e| e.into_wire(false))?;
    tracing::debug!(file = %rel.display(), size, "upload stored");
    let sha256 = hasher.map(|h| crate::protocol::record::hex(&h.finalize()));
    Ok((Entry::new(&rel, base, &meta), size, sha256))
}

/// Reads and drops the rest of `field`, at most about `limit` bytes; returns how
/// many were read.
async fn drain(mut field: Field<'_>, limit: u64) -> u64 {
    let mut n = 0u64;
    while n <= limit {
        match field.chunk().await {
            Ok(Some(c)) => n += c.len() as u64,
            _ => break,
        }
    }
    n
}

/// Reads and drops the remaining parts, at most about `limit` bytes.
async fn drain_rest(multipart: &mut Multipart, limit: u64) {
    let mut n = 0u64;
    while n <= limit {
        match multipart.next_field().await {
            Ok(Some(f)) => n += drain(f, limit - n).await,
            _ => break,
        }
    }
}

/// A temporary upload file in the folder of the upload's name, removed on drop
/// unless persisted (also when the request is abandoned half-way).
struct TempFile {
    /// The folder it is in (and is renamed within).
    dir: Arc<OwnedFd>,
    /// `.sessionpad-upload-<uuid>.part`.
    name: String,
    /// The upload's name, relative to `/mnt/data`.
    rel: RelPath,
    /// The open file, buffered by [`WRITE_BUFFER`] bytes.
    file: BufWriter<tokio::fs::File>,
    /// Renamed into place: not to be removed.
    kept: bool,
}

impl TempFile {
    /// Makes the folder of `rel` beneath `root` (and its missing parents) and
    /// creates `.sessionpad-upload-<uuid>.part` in it, given to the session
    /// folder's owner when the pool runs as root. Errors: those of
    /// [`Root::make_dir`]; [`FsError::IsADirectory`] when `rel` is a folder.
    /// Blocking.
    fn create(root: &Root, rel: &RelPath) -> Result<Self, FsError> {
        let Some(target) = rel.file_name() else {
            return Err(FsError::IsADirectory(rel.display()));
        };
        let dir = root.make_dir(&rel.parent_path())?;
        // Said before the body is read; the rename checks again.
        if lstat_child(dir.as_fd(), target).is_ok_and(|m| m.kind == Kind::Dir) {
            return Err(FsError::IsADirectory(rel.display()));
        }
        let name = format!("{TEMP_PREFIX}{}.part", uuid::Uuid::new_v4().simple());
        let io = |e: std::io::Error| FsError::Io(rel.display(), e);
        let fd = rustix::fs::openat(
            dir.as_fd(),
            name.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map_err(|e| io(e.into()))?;
        let temp = Self {
            dir: Arc::new(dir),
            name,
            rel: rel.clone(),
            file: BufWriter::with_capacity(
                WRITE_BUFFER,
                tokio::fs::File::from_std(std::fs::File::from(fd)),
            ),
            kept: false,
        };
        root.give(temp.file.get_ref().as_fd()).map_err(io)?;
        Ok(temp)
    }

    /// Appends `bytes` (buffered).
    async fn write(&mut self, bytes: &[u8]) -> Result<(), WireError> {
        self.file.write_all(bytes).await.map_err(|e| {
            super::paths::no_room(&self.rel.display(), &e)
                .unwrap_or_else(|| internal(format!("cannot write the upload file: {e}")))
        })
    }

    /// Flushes, renames to the upload's name within its folder (replacing a file
    /// or link there) and returns the metadata of what was written. Errors:
    /// [`FsError::IsADirectory`] when a folder has that name, 500 otherwise.
    async fn persist(mut self) -> Result<Meta, FsError> {
        let shown = self.rel.display();
        self.file
            .flush()
            .await
            .map_err(|e| FsError::Io(shown.clone(), e))?;
        let meta = Meta::of_fd(self.file.get_ref()).map_err(|e| FsError::Io(shown.clone(), e))?;
        let (dir, from) = (Arc::clone(&self.dir), self.name.clone());
        let to = self.rel.file_name().unwrap_or_default().to_string();
        let renamed =
            blocking(move || rustix::fs::renameat(&*dir, from.as_str(), &*dir, to.as_str()))
                .await
                .map_err(|e| FsError::Io(shown.clone(), std::io::Error::other(e.message)))?;
        match renamed {
            Ok(()) => {
                self.kept = true;
                Ok(meta)
            }
            Err(Errno::ISDIR | Errno::NOTEMPTY | Errno::EXIST) => Err(FsError::IsADirectory(shown)),
            Err(e) => Err(FsError::Io(shown, e.into())),
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.kept {
            let _ = rustix::fs::unlinkat(&*self.dir, self.name.as_str(), AtFlags::empty());
        }
    }
}

/// The file name of a multipart part from its `Content-Disposition` header:
/// `filename*=UTF-8''…` (RFC 5987, percent-encoded) when present, else
/// `filename="…"` (quoted; `\"`, `\\` and `%22` unescaped, other backslashes
/// and percent signs kept) or a
/// bare token. Parameter names are case-insensitive. `None` without a file name.
pub(crate) fn disposition_filename(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_DISPOSITION)?;
    let text = String::from_utf8_lossy(value.as_bytes());
    let params = disposition_params(&text);
    let find = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.clone())
    };
    if let Some(ext) = find("filename*").and_then(|v| ext_value(&v)) {
        return Some(ext);
    }
    find("filename")
}

/// Decodes an RFC 5987 `ext-value`: `charset'language'percent-encoded`.
fn ext_value(v: &str) -> Option<String> {
    let mut parts = v.splitn(3, '\'');
    let charset = parts.next()?;
    let _language = parts.next()?;
    let bytes = percent_decode_bytes(parts.next()?);
    if charset.eq_ignore_ascii_case("utf-8") {
        String::from_utf8(bytes).ok()
    } else if charset.eq_ignore_ascii_case("iso-8859-1") {
        Some(bytes.into_iter().map(char::from).collect())
    } else {
        None
    }
}

/// The `key=value` parameters after the disposition type, values unquoted.
fn disposition_params(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(start) = s.find(';') else {
        return out;
    };
    let mut rest = &s[start + 1..];
    loop {
        rest = rest.trim_start_matches(|c: char| c == ';' || c.is_whitespace());
        if rest.is_empty() {
            break;
        }
        let Some(eq) = rest.find(['=', ';']) else {
            break;
        };
        if !rest[eq..].starts_with('=') {
            rest = &rest[eq..];
            continue;
        }
        let key = rest[..eq].trim().to_string();
        rest = rest[eq + 1..].trim_start();
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' if quoted[i + 1..].starts_with(['"', '\\']) => {
                        if let Some((_, n)) = chars.next() {
                            value.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            // HTML forms and urllib3 2 write `"` as `%22` (WHATWG form encoding).
            out.push((key, value.replace("%22", "\"")));
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find(';').unwrap_or(rest.len());
            out.push((key, rest[..end].trim().to_string()));
            rest = &rest[end..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn filename(cd: &[u8]) -> Option<String> {
        let mut h = HeaderMap::new();
        h.insert(
            CONTENT_DISPOSITION,
            HeaderValue::from_bytes(cd).expect("header"),
        );
        disposition_filename(&h)
    }

    #[test]
    fn file_names_from_every_client_style() {
        assert_eq!(
            filename(br#"form-data; name="file"; filename="data.csv""#).as_deref(),
            Some("data.csv")
        );
        assert_eq!(
            filename("form-data; name=\"file\"; filename=\"ünï code; #%&.txt\"".as_bytes())
                .as_deref(),
            Some("ünï code; #%&.txt")
        );
        assert_eq!(
            filename(br#"form-data; name="file"; filename="a\"b\\c\d""#).as_deref(),
            Some(r#"a"b\c\d"#)
        );
        assert_eq!(
            filename(b"form-data; name=file; filename*=UTF-8''%C3%BC%20x.txt; filename=u.txt")
                .as_deref(),
            Some("ü x.txt")
        );
        assert_eq!(
            filename(br#"form-data; name="file"; filename="say %22hi%22 100%.txt""#).as_deref(),
            Some(r#"say "hi" 100%.txt"#)
        );
        assert_eq!(
            filename(b"form-data; name=file; FILENAME=plain.txt").as_deref(),
            Some("plain.txt")
        );
        assert_eq!(filename(br#"form-data; name="file""#), None);
    }

    #[tokio::test]
    async fn a_link_at_the_name_is_replaced_and_the_file_given_to_the_owner() {
        use std::os::unix::fs::{MetadataExt, symlink};
        let t = tempfile::tempdir().expect("tempdir");
        let s = t.path().join("s");
        std::fs::create_dir(&s).expect("s");
        std::fs::write(t.path().join("host.txt"), "host").expect("host");
        std::fs::create_dir(s.join("sub")).expect("sub");
        symlink(t.path().join("host.txt"), s.join("sub/x.txt")).expect("link");
        let as_root = rustix::process::geteuid().is_root();
        if as_root {
            std::os::unix::fs::chown(&s, Some(4242), Some(4343)).expect("chown");
        }
        let root = Root::open(&s).expect("root");
        for name in ["sub/x.txt", "new/deeper/y.txt"] {
            let rel = RelPath::parse_name(name).expect(name);
            let mut temp = TempFile::create(&root, &rel).expect("temp");
            temp.write(b"uploaded").await.expect("write");
            let meta = temp.persist().await.expect("persist");
            assert_eq!(meta.size, 8);
            let m = std::fs::symlink_metadata(s.join(name)).expect(name);
            assert!(m.is_file(), "{name}: the link is replaced");
            assert_eq!(
                std::fs::read_to_string(s.join(name)).expect(name),
                "uploaded"
            );
            if as_root {
                assert_eq!((m.uid(), m.gid()), (4242, 4343), "{name}");
            }
        }
        assert_eq!(
            std::fs::read_to_string(t.path().join("host.txt")).expect("host"),
            "host",
            "never written through"
        );
        if as_root {
            for dir in ["new", "new/deeper"] {
                assert_eq!(std::fs::metadata(s.join(dir)).expect(dir).uid(), 4242);
            }
        }
        // A folder at the name is refused before anything is written.
        let rel = RelPath::parse_name("sub").expect("sub");
        assert!(matches!(
            TempFile::create(&root, &rel),
            Err(FsError::IsADirectory(_))
        ));
        let left: Vec<_> = std::fs::read_dir(s.join("sub"))
            .expect("sub")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["x.txt"], "no temp file left");
    }
}
