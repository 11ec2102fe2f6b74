//! What the file routes say about a file or folder, in both wire shapes: family A
//! `{"$id","properties":{"$id","filename","size","lastModifiedTime"}}` (`aca-api.md`
//! §3.2–§3.3, §3.5) and family B `SessionResourceFile` (§4.3); plus the folder walk
//! behind the listings.

use std::os::fd::{AsFd, BorrowedFd};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use super::beneath::{Kind, MAX_DEPTH, Meta, Root, lstat_child, open_child_dir, read_names};
use super::paths::{FsError, RelPath};
use super::upload::TEMP_PREFIX;
use crate::protocol::api::ApiVersion;

/// One file or folder of a session.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Its own name (last component), e.g. `x.csv`.
    pub(crate) name: String,
    /// Its path relative to `/mnt/data`, e.g. `sub/x.csv`.
    pub(crate) rel: String,
    /// Its folder relative to the requested folder (`""` at the top), the
    /// `directory` field of 2025-10-02-preview (§4.3).
    pub(crate) directory: String,
    /// Whether it is a folder.
    pub(crate) is_dir: bool,
    /// Size in bytes (of the folder inode for a folder, 4096 on most file systems).
    pub(crate) size: u64,
    /// Last modification time, UTC.
    pub(crate) modified: DateTime<Utc>,
}

impl Entry {
    /// An entry for `rel` (below `base`, the requested folder) from the metadata of
    /// what it names (a link's target).
    pub(crate) fn new(rel: &RelPath, base: &RelPath, meta: &Meta) -> Self {
        let directory = rel.parent_path().relative_to(base);
        Self {
            name: rel.file_name().unwrap_or_default().to_string(),
            rel: rel.as_relative(),
            directory,
            is_dir: meta.is_dir(),
            size: meta.size,
            modified: DateTime::<Utc>::from(meta.modified),
        }
    }

    /// The family A `properties` object with reference id `id` (§3.3):
    /// `{"$id","filename" (relative to /mnt/data),"size" (bytes),"lastModifiedTime"}`.
    fn family_a_properties(&self, id: usize) -> Value {
        json!({
            "$id": id.to_string(),
            "filename": self.rel,
            "size": self.size,
            "lastModifiedTime": dotnet_time(self.modified),
        })
    }

    /// The family B `SessionResourceFile` (§4.3): `{"name","sizeInBytes" (bytes),
    /// "lastModifiedAt" (RFC 3339 UTC, nanoseconds),"contentType","type":"File"|
    /// "Directory"}`, plus `"directory"` from 2025-10-02-preview.
    pub(crate) fn family_b(&self, version: ApiVersion) -> Value {
        let mut v = json!({
            "name": self.name,
            "sizeInBytes": self.size,
            "lastModifiedAt": self.modified.to_rfc3339_opts(SecondsFormat::Nanos, true),
            "contentType": if self.is_dir {
                "application/octet-stream".to_string()
            } else {
                content_type(&self.name)
            },
            "type": if self.is_dir { "Directory" } else { "File" },
        });
        if version >= ApiVersion::V2025_10_02 {
            v["directory"] = Value::String(self.directory.clone());
        }
        v
    }
}

/// The family A collection (§3.2, §3.3):
/// `{"$id":"1","value":[{"$id":"2","properties":{"$id":"3",…}},…]}`, reference ids
/// numbered in document order like Newtonsoft does.
pub(crate) fn family_a_collection(entries: &[Entry]) -> Value {
    let value: Vec<Value> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            json!({
                "$id": (2 + 2 * i).to_string(),
                "properties": e.family_a_properties(3 + 2 * i),
            })
        })
        .collect();
    json!({"$id": "1", "value": value})
}

/// The family B collection (§4.3): `{"value":[SessionResourceFile…],"nextLink":null}`.
pub(crate) fn family_b_collection(entries: &[Entry], version: ApiVersion) -> Value {
    let value: Vec<Value> = entries.iter().map(|e| e.family_b(version)).collect();
    json!({"value": value, "nextLink": null})
}

/// The content type of a file guessed from its extension (`text/*` with
/// `; charset=utf-8`, like the service's `text/markdown; charset=utf-8`, §4.3);
/// `application/octet-stream` when unknown.
pub(crate) fn content_type(name: &str) -> String {
    match mime_guess::from_path(name).first_raw() {
        Some(t) if t.starts_with("text/") => format!("{t}; charset=utf-8"),
        Some(t) => t.to_string(),
        None => "application/octet-stream".to_string(),
    }
}

/// A time as .NET writes it: `2024-08-06T14:50:38.4228269Z` (7 fraction digits,
/// family A `lastModifiedTime`, §3.2).
fn dotnet_time(t: DateTime<Utc>) -> String {
    format!(
        "{}.{:07}Z",
        t.format("%Y-%m-%dT%H:%M:%S"),
        t.timestamp_subsec_nanos() / 100
    )
}

/// Lists the folder `base` (relative to `/mnt/data`) of the session folder
/// `root`: its entries sorted by name, and with `recursive` those of every
/// sub-folder after their folder, down to [`MAX_DEPTH`] levels (links to folders
/// are listed, not entered). `files_only` leaves folders out (family A).
///
/// Left out: links whose target is outside the session folder or missing, upload
/// temp files, and anything that is not a regular file or folder (FIFOs, sockets,
/// devices, also behind a link), since the routes refuse to read or write those;
/// nothing listed is opened, only `fstatat`-ed or looked up with `O_PATH`.
/// Errors: those of [`Root::dir`] for `base`, 500 when a folder cannot be read.
/// Blocking.
pub(crate) fn list(
    root: &Root,
    base: &RelPath,
    recursive: bool,
    files_only: bool,
) -> Result<Vec<Entry>, FsError> {
    let dir = root.dir(base)?;
    let mut out = Vec::new();
    let walk = Walk {
        root,
        base,
        recursive,
        files_only,
    };
    walk.folder(dir.as_fd(), base, 0, &mut out)?;
    Ok(out)
}

/// What one listing walks.
struct Walk<'a> {
    /// The session folder.
    root: &'a Root,
    /// The requested folder.
    base: &'a RelPath,
    /// Whether sub-folders are entered.
    recursive: bool,
    /// Whether folders are left out.
    files_only: bool,
}

impl Walk<'_> {
    /// Lists the open folder `dir`, which is `rel` relative to `/mnt/data` and
    /// `depth` levels below `base`.
    fn folder(
        &self,
        dir: BorrowedFd<'_>,
        rel: &RelPath,
        depth: usize,
        out: &mut Vec<Entry>,
    ) -> Result<(), FsError> {
        let names = read_names(dir).map_err(|e| FsError::Io(rel.display(), e))?;
        for name in names.iter().filter(|n| !n.starts_with(TEMP_PREFIX)) {
            let Ok(child) = RelPath::parse_name(name) else {
                continue;
            };
            let child_rel = rel.join(&child);
            let Ok(own) = lstat_child(dir, name) else {
                continue;
            };
            // A link is shown with what it leads to, resolved beneath the session
            // folder like every route does.
            let meta = match own.kind {
                Kind::Link => match self.root.stat(&child_rel) {
                    Ok(m) => m,
                    Err(_) => continue,
                },
                _ => own,
            };
            if !matches!(meta.kind, Kind::File | Kind::Dir) {
                continue;
            }
            if !(self.files_only && meta.is_dir()) {
                out.push(Entry::new(&child_rel, self.base, &meta));
            }
            if self.recursive && own.is_dir() && depth < MAX_DEPTH {
                // Opened without following: a folder swapped for a link since the
                // look above is skipped.
                if let Ok(sub) = open_child_dir(dir, name) {
                    self.folder(sub.as_fd(), &child_rel, depth + 1, out)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_have_the_wire_precision() {
        let t = DateTime::parse_from_rfc3339("2024-08-06T14:50:38.422826912Z")
            .expect("time")
            .with_timezone(&Utc);
        assert_eq!(dotnet_time(t), "2024-08-06T14:50:38.4228269Z");
        assert_eq!(
            t.to_rfc3339_opts(SecondsFormat::Nanos, true),
            "2024-08-06T14:50:38.422826912Z"
        );
    }

    #[test]
    fn content_types_come_from_the_extension() {
        assert_eq!(content_type("a.md"), "text/markdown; charset=utf-8");
        assert_eq!(content_type("a.png"), "image/png");
        assert_eq!(content_type("a.json"), "application/json");
        assert_eq!(content_type("noext"), "application/octet-stream");
    }
}
