//! File routes of the local pool: each session's folder is its `/mnt/data`.
//!
//! Routes are chosen by path first, then by `api-version` (`aca-api.md` §10.1):
//!
//! | Route | Shape |
//! |---|---|
//! | `POST files/upload` | family A upload (§3.2): multipart `file` → `{"$id":"1","value":[{"$id":"2","properties":{"$id":"3","filename","size","lastModifiedTime"}}]}` |
//! | `POST files` | family B upload (§4.3): multipart `file`, `path`? → one `SessionResourceFile` |
//! | `GET files` | family A versions: the collection above, files at the top of `/mnt/data` (§3.3); family B: `{"value":[SessionResourceFile…],"nextLink":null}` of `path`, `recursive=true` from 2025-10-02-preview (§4.3) |
//! | `GET files/content/{name}` (family A), `GET files/{name}/content` | the raw bytes, streamed from disk (§3.4, §4.3) |
//! | `GET files/{name}` | metadata: family A collection of one (§3.5), family B one `SessionResourceFile` |
//! | `DELETE files/{name}` | family A 200 `{"message":"file deleted successfully"}` (§3.5), family B 204 (§4.3) |
//!
//! `{name}` may contain `/` (sub-folders, also below `path`), arrives raw or
//! percent-encoded and may start with `/mnt/data/`; see [`paths`] for the naming
//! rules and [`beneath`] for how every name is resolved beneath the session
//! folder's handle (no link out, no check-then-use race) and why only regular
//! files and folders are read or written (a FIFO, socket or device is a 400
//! `SessionRequestValidationFailed`, left out of listings). Sizes are in bytes; uploads
//! are limited to 128 MiB of file data per request ([`upload::MAX_UPLOAD`], 413 above, §7).
//! Every call creates or touches the session, as the service does (§3).

mod beneath;
pub(crate) mod changes;
mod entry;
mod paths;
pub(crate) mod upload;

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::multipart::MultipartRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Query, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio_util::io::ReaderStream;

use self::beneath::{Kind, Meta, Root};
use self::entry::{Entry, content_type, family_a_collection, family_b_collection};
use self::paths::{FsError, RelPath, percent_decode};
use super::record::{DownloadTap, Recording};
use super::server::{Pool, target};
use super::wire_error::WireError;
use crate::protocol::api::{ApiVersion, Family};
use crate::protocol::record::CallKind;

/// Chunk size of downloads, in bytes.
const READ_CHUNK: usize = 64 * 1024;

/// The file routes, merged into the pool's router. Request bodies are not limited
/// by axum here (`DefaultBodyLimit::disable`): uploads count their own bytes.
pub(crate) fn routes() -> Router<Pool> {
    Router::new()
        .route("/files", get(list).post(upload_b))
        .route(
            "/files/{*rest}",
            get(get_rest).post(post_rest).delete(delete_rest),
        )
        .layer(DefaultBodyLimit::disable())
}

/// A 500 `InternalServerError` with `message`.
pub(crate) fn internal(message: String) -> WireError {
    WireError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        code: "InternalServerError",
        message,
    }
}

/// Runs blocking file-system work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, WireError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| internal(format!("file task failed: {e}")))
}

/// The session a request is about.
struct Ctx {
    /// The request's `api-version`.
    version: ApiVersion,
    /// The session folder (its `/mnt/data`), open.
    root: Arc<Root>,
    /// The session identifier.
    identifier: String,
    /// The session.
    session: Arc<super::sessions::Session>,
}

/// Checks `api-version` and `identifier`, creates or touches the session and
/// finds its folder.
async fn open(pool: &Pool, query: &HashMap<String, String>) -> Result<Ctx, WireError> {
    let (version, identifier) = target(query)?;
    let session = pool
        .registry
        .get_or_create(&identifier)
        .map_err(|e| internal(format!("cannot create the session folder: {e}")))?;
    let folder = pool.registry.files_of(&session);
    let root = blocking(move || Root::open(&folder))
        .await?
        .map_err(|e| internal(format!("cannot open the session folder: {e}")))?;
    Ok(Ctx {
        version,
        root: Arc::new(root),
        identifier,
        session,
    })
}

/// Stores the `file` parts of an upload (see [`upload::receive`]) and records
/// each stored file in the ledger when the pool keeps one.
async fn receive(
    pool: &Pool,
    ctx: &Ctx,
    base: &RelPath,
    headers: &HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Vec<Entry>, WireError> {
    let recording = Recording::start(
        pool.ledger.as_ref(),
        &pool.ledger_key,
        headers,
        &ctx.identifier,
    );
    upload::check_declared_length(headers)?;
    let multipart = multipart.map_err(not_multipart)?;
    let work = upload::receive(multipart, &ctx.root, base, recording.is_some());
    let (stored, changes) = pool
        .registry
        .noting_files(&ctx.session, self::changes::Order::Aside, work)
        .await;
    let stored = stored?;
    if let Some(r) = recording {
        // What the upload changed in /mnt/data goes with its first file.
        let mut changes = Some(changes);
        for (entry, sha256) in &stored {
            let call = match changes.take() {
                Some(c) => r.clone().with_files(c),
                None => r.clone(),
            };
            call.file(
                CallKind::Upload,
                entry.rel.clone(),
                Some(entry.size),
                sha256.clone(),
            );
        }
    }
    Ok(stored.into_iter().map(|(entry, _)| entry).collect())
}

/// The folder named by the `path` query parameter (§4.3); the data root without it.
fn base(query: &HashMap<String, String>) -> Result<RelPath, WireError> {
    RelPath::parse_dir(query.get("path").map_or("", String::as_str))
}

/// `GET files` (§3.3, §4.3).
async fn list(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, WireError> {
    let Ctx { version, root, .. } = open(&pool, &query).await?;
    if version.family() == Family::A {
        let entries = blocking(move || entry::list(&root, &RelPath::default(), false, true))
            .await?
            .map_err(|e| e.into_wire(true))?;
        return Ok(Json(family_a_collection(&entries)).into_response());
    }
    let base = base(&query)?;
    let recursive = version >= ApiVersion::V2025_10_02
        && query
            .get("recursive")
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
    let entries = blocking(move || entry::list(&root, &base, recursive, false))
        .await?
        .map_err(|e| e.into_wire(true))?;
    Ok(Json(family_b_collection(&entries, version)).into_response())
}

/// `POST files` (family B upload, §4.3): 200 with the `SessionResourceFile` of the
/// (last) stored file.
async fn upload_b(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, WireError> {
    let ctx = open(&pool, &query).await?;
    let base = base(&query)?;
    let entries = receive(&pool, &ctx, &base, &headers, multipart).await?;
    let last = entries
        .last()
        .ok_or_else(|| internal("no file stored".into()))?;
    Ok(Json(last.family_b(ctx.version)).into_response())
}

/// `POST files/upload` (family A upload, §3.2): 200 with the collection of the
/// stored files.
async fn upload_a(
    pool: Pool,
    query: HashMap<String, String>,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, WireError> {
    let ctx = open(&pool, &query).await?;
    let base = base(&query)?;
    let entries = receive(&pool, &ctx, &base, &headers, multipart).await?;
    Ok(Json(family_a_collection(&entries)).into_response())
}

/// 400 `SessionRequestValidationFailed` for a body that is not multipart.
#[allow(clippy::needless_pass_by_value)] // the shape `map_err` takes
fn not_multipart(e: MultipartRejection) -> WireError {
    WireError::bad_request(
        "SessionRequestValidationFailed",
        format!("expected a multipart/form-data body with a `file` field: {e}"),
    )
}

/// `POST files/{rest}`: only `files/upload` exists.
async fn post_rest(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    uri: Uri,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, WireError> {
    let rest = RawName::from_uri(&uri)?;
    if rest.decoded.trim_end_matches('/') == "upload" {
        upload_a(pool, query, headers, multipart).await
    } else {
        Err(not_an_operation(&uri))
    }
}

/// 404 `NotFound` for a path below `files/` that names no operation.
fn not_an_operation(uri: &Uri) -> WireError {
    WireError {
        status: StatusCode::NOT_FOUND,
        code: "NotFound",
        message: format!("no operation at {}", uri.path()),
    }
}

/// The part of the request path after `files/`, as sent and percent-decoded once.
struct RawName {
    /// As sent, e.g. `content/a%20b.txt`.
    raw: String,
    /// Percent-decoded once, e.g. `content/a b.txt`.
    decoded: String,
}

impl RawName {
    /// Reads it from the request path. Errors: 404 outside `files/`, 400 when
    /// the decoded text is not UTF-8.
    fn from_uri(uri: &Uri) -> Result<Self, WireError> {
        let raw = uri
            .path()
            .trim_start_matches('/')
            .strip_prefix("files/")
            .ok_or_else(|| not_an_operation(uri))?
            .to_string();
        let decoded = percent_decode(&raw).ok_or_else(|| {
            WireError::bad_request(
                "SessionRequestValidationFailed",
                format!("the file name {raw:?} is not UTF-8 once percent-decoded"),
            )
        })?;
        Ok(Self { raw, decoded })
    }

    /// The names to try, best first: the decoded name, then the name as sent
    /// (a raw name that merely looks percent-encoded, like `50%25.txt`), each
    /// split by `split` into the operation and the name; the raw one only when it
    /// splits into the same operation. Last, those names without a leading
    /// `mnt/data/` (a `/mnt/data/x` whose `//` the pool collapsed). Errors: the
    /// decoded name is invalid.
    fn candidates<Op: PartialEq>(
        &self,
        split: impl Fn(&str) -> (Op, &str),
    ) -> Result<(Op, Vec<RelPath>), WireError> {
        let (op, name) = split(&self.decoded);
        let mut names = vec![RelPath::parse_name(name)?];
        if self.raw != self.decoded {
            let (raw_op, raw_name) = split(&self.raw);
            if raw_op == op
                && let Ok(n) = RelPath::parse_name(raw_name)
            {
                names.push(n);
            }
        }
        if names[0].is_empty() {
            return Err(WireError::bad_request(
                "SessionRequestValidationFailed",
                "a file name is required",
            ));
        }
        let stripped: Vec<RelPath> = names.iter().filter_map(RelPath::strip_mnt_data).collect();
        names.extend(stripped);
        Ok((op, names))
    }
}

/// What a `GET files/{rest}` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GetOp {
    /// The raw bytes.
    Content,
    /// The metadata.
    Metadata,
}

/// Family A: `content/{name}` is the content; both: `{name}/content` is the
/// content; anything else is metadata.
fn split_get(family: Family) -> impl Fn(&str) -> (GetOp, &str) {
    move |s: &str| {
        if family == Family::A
            && let Some(n) = s.strip_prefix("content/")
        {
            return (GetOp::Content, n);
        }
        match s.strip_suffix("/content") {
            Some(n) => (GetOp::Content, n),
            None => (GetOp::Metadata, s),
        }
    }
}

/// How [`find`] looks at a name: [`Root::stat`] (links followed while they stay
/// inside) or [`Root::lstat`] (the name itself).
type Probe = fn(&Root, &RelPath) -> Result<Meta, FsError>;

/// The first of `names` (below `base`) that exists, as `probe` sees it. Errors:
/// the first name's error (404 when none exists, 400 when it leads outside).
async fn find(
    root: Arc<Root>,
    base: RelPath,
    names: Vec<RelPath>,
    probe: Probe,
) -> Result<(RelPath, Meta), WireError> {
    blocking(move || {
        let mut first: Option<FsError> = None;
        for name in names {
            let rel = base.join(&name);
            match probe(&root, &rel) {
                Ok(found) => return Ok((rel, found)),
                // The name as sent leads outside or is unusable: stop there.
                Err(e) if first.is_none() && !matches!(e, FsError::NotFound(_)) => return Err(e),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        Err(first.unwrap_or_else(|| FsError::NotFound(base.display())))
    })
    .await?
    .map_err(|e| e.into_wire(false))
}

/// `GET files/{name}`, `GET files/{name}/content`, `GET files/content/{name}`.
async fn get_rest(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, WireError> {
    let recording = Recording::start(pool.ledger.as_ref(), &pool.ledger_key, &headers, "");
    let ctx = open(&pool, &query).await?;
    let base = base(&query)?;
    let (op, names) = RawName::from_uri(&uri)?.candidates(split_get(ctx.version.family()))?;
    let (rel, meta) = find(Arc::clone(&ctx.root), base.clone(), names, Root::stat).await?;
    match op {
        GetOp::Content => {
            let recording = recording.map(|r| r.about(&ctx.identifier));
            download(ctx.root, rel, recording).await
        }
        GetOp::Metadata => {
            if let Kind::Other(what) = meta.kind {
                return Err(FsError::Unsupported(rel.display(), what).into_wire(false));
            }
            let entry = Entry::new(&rel, &base, &meta);
            Ok(match ctx.version.family() {
                Family::A => Json(family_a_collection(&[entry])).into_response(),
                Family::B => Json(entry.family_b(ctx.version)).into_response(),
            })
        }
    }
}

/// The raw bytes of the regular file `rel`, streamed from disk with its guessed
/// content type and its length in bytes (§3.4, §4.3). Errors: 400 for a folder,
/// FIFO, socket or device ([`Root::open_file`] never blocks on one), 404 when it
/// is gone. With a `recording`, the bytes sent are counted and hashed and the
/// download recorded when the body ends ([`DownloadTap`]).
async fn download(
    root: Arc<Root>,
    rel: RelPath,
    recording: Option<Recording>,
) -> Result<Response, WireError> {
    use futures::StreamExt;
    let kind = content_type(rel.file_name().unwrap_or_default());
    let shown = rel.as_relative();
    let (file, meta) = blocking(move || root.open_file(&rel))
        .await?
        .map_err(|e| e.into_wire(false))?;
    let len = meta.size;
    let file = tokio::fs::File::from_std(file);
    let stream = ReaderStream::with_capacity(file.take(len), READ_CHUNK);
    let mut resp = match recording {
        Some(r) => {
            let mut tap = DownloadTap::new(r, shown, len);
            Body::from_stream(stream.map(move |chunk| {
                if let Ok(bytes) = &chunk {
                    tap.update(bytes);
                }
                chunk
            }))
            .into_response()
        }
        None => Body::from_stream(stream).into_response(),
    };
    if let Ok(v) = HeaderValue::from_str(&kind) {
        resp.headers_mut().insert(CONTENT_TYPE, v);
    }
    resp.headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from(len));
    Ok(resp)
}

/// `DELETE files/{name}` (§3.5, §4.3): removes the name (a symbolic link itself,
/// not its target, wherever it leads; a folder with its contents; a FIFO or
/// socket by its name, without opening it), through the folder's handle
/// ([`Root::remove`]).
async fn delete_rest(
    State(pool): State<Pool>,
    Query(query): Query<HashMap<String, String>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, WireError> {
    let recording = Recording::start(pool.ledger.as_ref(), &pool.ledger_key, &headers, "");
    let ctx = open(&pool, &query).await?;
    let base = base(&query)?;
    let ((), names) = RawName::from_uri(&uri)?.candidates(|s| ((), s))?;
    let (rel, _) = find(Arc::clone(&ctx.root), base, names, Root::lstat).await?;
    let root = ctx.root;
    let shown = rel.as_relative();
    let work = blocking(move || root.remove(&rel));
    let (removed, changes) = pool
        .registry
        .noting_files(&ctx.session, self::changes::Order::Aside, work)
        .await;
    removed?.map_err(|e| e.into_wire(false))?;
    if let Some(r) = recording {
        r.about(&ctx.identifier)
            .with_files(changes)
            .file(CallKind::Delete, shown, None, None);
    }
    Ok(match ctx.version.family() {
        Family::A => Json(json!({"message": "file deleted successfully"})).into_response(),
        Family::B => StatusCode::NO_CONTENT.into_response(),
    })
}
