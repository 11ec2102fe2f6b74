//! The artifact radar: what a cell left behind in `/mnt/data`. Given the listing
//! taken before a cell and the one taken after it, it says which files are new,
//! which changed (size or modification time), and which one of them to preview
//! automatically: the first new image or table, else the first changed one.
//!
//! The listings are recursive where the api-version can list so (2025-10-02
//! and later), so a file a cell wrote into a subfolder (`reports/describe.csv`)
//! is found too; a folder holding a new or changed file is marked as changed
//! where it is listed ([`Radar::marks_in`]). Files that went are kept apart
//! ([`Radar::deleted`]), for the line under the cell ([`Radar::files_line`]).
//!
//! Pure functions over [`RemoteFile`]s: no I/O, no clock, no terminal. Files are
//! told apart by [`RemoteFile::path`] (folder and name, relative to
//! `/mnt/data`).

use std::collections::HashMap;

use crate::protocol::{FileKind, RemoteFile};
use crate::text::names::{escape, listed};

/// The most names of one kind the line under a cell gives before
/// `… and N more`.
const LINE_NAMES: usize = 4;
/// How a file differs from the listing before the cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Change {
    /// Not in the listing before.
    New,
    /// In both listings, with another size or modification time.
    Changed,
}

/// What kind of artifact a file is worth previewing as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArtifactKind {
    /// PNG, JPEG or GIF: shown through the image path.
    Image,
    /// CSV, TSV, Parquet, Excel or JSON data.
    Table,
}

/// One file the radar noticed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// The file's path relative to the listed folder ([`RemoteFile::path`]).
    pub path: String,
    /// New or changed.
    pub change: Change,
    /// Image or table, when it is either.
    pub kind: Option<ArtifactKind>,
    /// A folder (new: a folder is never marked changed by itself).
    pub folder: bool,
}

/// The radar's findings for one cell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Radar {
    /// New and changed files (folders only when new), in the order of the listing
    /// after the cell.
    pub artifacts: Vec<Artifact>,
    /// Index in `artifacts` of the file to preview automatically.
    pub preview: Option<usize>,
    /// Paths of the files (not folders) in the listing before and not after.
    pub deleted: Vec<String>,
}

impl Radar {
    /// The change of the file at `path`, if the radar marked it.
    pub fn change_of(&self, path: &str) -> Option<Change> {
        self.artifacts
            .iter()
            .find(|a| a.path == path)
            .map(|a| a.change)
    }

    /// The file to preview automatically.
    pub fn preview(&self) -> Option<&Artifact> {
        self.preview.and_then(|i| self.artifacts.get(i))
    }

    /// True when the cell left nothing new or changed.
    pub fn is_empty(&self) -> bool {
        self.artifacts.is_empty()
    }

    /// How many files (folders not counted) are new and how many changed.
    pub fn counts(&self) -> (usize, usize) {
        let files = self.artifacts.iter().filter(|a| !a.folder);
        let new = files.clone().filter(|a| a.change == Change::New).count();
        (new, files.count() - new)
    }

    /// The marks of the entries listed in `folder` (relative to `/mnt/data`,
    /// `None` for the data root), by their names there: a new or changed
    /// file's own mark; a new folder [`Change::New`]; a folder that holds a
    /// new or changed file (at any depth) [`Change::Changed`]. Files below
    /// are keyed by their path under `folder` too (`sub/x.csv`), as a
    /// recursive listing names them.
    pub fn marks_in(&self, folder: Option<&str>) -> HashMap<String, Change> {
        let prefix = folder
            .map(|f| format!("{}/", f.trim_matches('/')))
            .filter(|p| p != "/")
            .unwrap_or_default();
        let mut marks = HashMap::new();
        for a in &self.artifacts {
            let Some(rest) = a.path.strip_prefix(&prefix) else {
                continue;
            };
            // Its own mark by its path below `folder` (a recursive listing
            // shows it so), and its top folder there is marked as changed.
            marks.insert(rest.to_string(), a.change);
            if let Some((child, _)) = rest.split_once('/') {
                marks.entry(child.to_string()).or_insert(Change::Changed);
            }
        }
        marks
    }

    /// The line under the cell that says what it did to the files:
    /// `files: wrote hist.png, reports/describe.csv; changed notes.md;
    /// deleted old.txt`, names escaped as `ls -b` shows them, each list cut
    /// after a few names with `… and N more`; `None` when it did nothing.
    pub fn files_line(&self) -> Option<String> {
        let names = |change: Change| -> Vec<String> {
            self.artifacts
                .iter()
                .filter(|a| !a.folder && a.change == change)
                .map(|a| escape(&a.path))
                .collect()
        };
        let deleted: Vec<String> = self.deleted.iter().map(|p| escape(p)).collect();
        let parts: Vec<String> = [
            ("wrote", names(Change::New)),
            ("changed", names(Change::Changed)),
            ("deleted", deleted),
        ]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(verb, names)| format!("{verb} {}", listed(&names, LINE_NAMES)))
        .collect();
        (!parts.is_empty()).then(|| format!("files: {}", parts.join("; ")))
    }
}

/// Compares the listing `before` a cell with the one `after` it.
///
/// A file is changed when its size or its modification time differs (a value the
/// listing does not give is not compared). Folders are reported only when new:
/// their size and time change whenever their contents do, which the files inside
/// already show. The preview is the first new image or table in listing order,
/// else the first changed one.
pub fn scan(before: &[RemoteFile], after: &[RemoteFile]) -> Radar {
    let old: HashMap<String, &RemoteFile> = before.iter().map(|f| (f.path(), f)).collect();
    let mut artifacts = Vec::new();
    for file in after {
        let path = file.path();
        let change = match old.get(&path) {
            None => Change::New,
            Some(prev) if file.kind == FileKind::File && differs(prev, file) => Change::Changed,
            Some(_) => continue,
        };
        artifacts.push(Artifact {
            kind: artifact_kind(file),
            path,
            change,
            folder: file.kind == FileKind::Directory,
        });
    }
    let now: std::collections::HashSet<String> = after.iter().map(RemoteFile::path).collect();
    let deleted = before
        .iter()
        .filter(|f| f.kind == FileKind::File)
        .map(RemoteFile::path)
        .filter(|p| !now.contains(p))
        .collect();
    let first = |change| {
        artifacts
            .iter()
            .position(|a| a.change == change && a.kind.is_some())
    };
    let preview = first(Change::New).or_else(|| first(Change::Changed));
    Radar {
        artifacts,
        preview,
        deleted,
    }
}

/// Whether two listings of one file disagree on what they both know.
fn differs(a: &RemoteFile, b: &RemoteFile) -> bool {
    let size = matches!((a.size, b.size), (Some(x), Some(y)) if x != y);
    let time = matches!((a.modified, b.modified), (Some(x), Some(y)) if x != y);
    size || time
}

/// Extensions of images the preview can decode.
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif"];
/// Extensions of table-like data.
const TABLE_EXTENSIONS: &[&str] = &["csv", "tsv", "tab", "parquet", "xlsx", "json"];
/// Content types (without parameters) of images the preview can decode.
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/jpg", "image/gif"];
/// Content types (without parameters) of table-like data.
const TABLE_TYPES: &[&str] = &[
    "text/csv",
    "application/csv",
    "text/tab-separated-values",
    "application/json",
    "application/vnd.apache.parquet",
    "application/x-parquet",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
];

/// Whether `file` is an image or a table, by its extension, else by its content
/// type. Folders are neither.
pub fn artifact_kind(file: &RemoteFile) -> Option<ArtifactKind> {
    if file.kind == FileKind::Directory {
        return None;
    }
    kind_of(&file.name, file.content_type.as_deref())
}

/// [`artifact_kind`] of a file name and content type.
pub fn kind_of(name: &str, content_type: Option<&str>) -> Option<ArtifactKind> {
    if let Some(ext) = extension(name) {
        if IMAGE_EXTENSIONS.contains(&ext.as_str()) {
            return Some(ArtifactKind::Image);
        }
        if TABLE_EXTENSIONS.contains(&ext.as_str()) {
            return Some(ArtifactKind::Table);
        }
    }
    let essence = content_type.map(content_type_essence)?;
    if IMAGE_TYPES.contains(&essence.as_str()) {
        Some(ArtifactKind::Image)
    } else if TABLE_TYPES.contains(&essence.as_str()) {
        Some(ArtifactKind::Table)
    } else {
        None
    }
}

/// The lower-case extension of a file name (`Plot.PNG` → `png`), if it has one.
pub fn extension(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let (stem, ext) = base.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// A content type without its parameters, lower case
/// (`Text/CSV; charset=utf-8` → `text/csv`).
pub fn content_type_essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeZone, Utc};
    use pretty_assertions::assert_eq;

    use super::*;

    fn t(s: u32) -> Option<DateTime<Utc>> {
        Utc.with_ymd_and_hms(2025, 1, 2, 3, 4, s).single()
    }

    fn file(name: &str, size: u64, secs: u32) -> RemoteFile {
        RemoteFile {
            name: name.into(),
            directory: None,
            size: Some(size),
            modified: t(secs),
            content_type: None,
            kind: FileKind::File,
        }
    }

    fn folder(name: &str, secs: u32) -> RemoteFile {
        RemoteFile {
            kind: FileKind::Directory,
            size: Some(4096),
            ..file(name, 4096, secs)
        }
    }

    fn summary(r: &Radar) -> Vec<(String, Change, Option<ArtifactKind>)> {
        r.artifacts
            .iter()
            .map(|a| (a.path.clone(), a.change, a.kind))
            .collect()
    }

    #[test]
    fn finds_new_and_changed_files() {
        let before = [
            file("same.txt", 10, 0),
            file("grown.log", 10, 0),
            file("touched.py", 10, 0),
            file("gone.txt", 1, 0),
            folder("out", 0),
        ];
        let after = [
            file("same.txt", 10, 0),
            file("grown.log", 20, 0),
            file("touched.py", 10, 9),
            file("report.csv", 5, 9),
            folder("out", 9),
            folder("plots", 9),
        ];
        let r = scan(&before, &after);
        assert_eq!(
            summary(&r),
            vec![
                ("grown.log".into(), Change::Changed, None),
                ("touched.py".into(), Change::Changed, None),
                ("report.csv".into(), Change::New, Some(ArtifactKind::Table)),
                ("plots".into(), Change::New, None),
            ]
        );
        assert_eq!(r.counts(), (1, 2), "a new folder is not counted as a file");
        assert_eq!(r.deleted, ["gone.txt"]);
        assert_eq!(
            r.files_line().as_deref(),
            Some("files: wrote report.csv; changed grown.log, touched.py; deleted gone.txt")
        );
        assert_eq!(r.change_of("grown.log"), Some(Change::Changed));
        assert_eq!(r.change_of("same.txt"), None);
        assert_eq!(r.preview().map(|a| a.path.as_str()), Some("report.csv"));
    }

    fn inside(folder: &str, f: RemoteFile) -> RemoteFile {
        RemoteFile {
            directory: Some(folder.into()),
            ..f
        }
    }

    #[test]
    fn subfolders_are_marked_where_they_are_listed() {
        let before = [
            folder("old", 0),
            inside("old", file("notes.md", 1, 0)),
            inside("old", folder("deep", 0)),
            inside("old/deep", file("x.txt", 1, 0)),
            file("gone.txt", 1, 0),
        ];
        let after = [
            folder("old", 9),
            inside("old", file("notes.md", 1, 0)),
            inside("old", folder("deep", 9)),
            inside("old/deep", file("x.txt", 2, 9)),
            folder("reports", 9),
            inside("reports", file("describe.csv", 5, 9)),
            file("hist.png", 5, 9),
        ];
        let r = scan(&before, &after);
        assert_eq!(r.counts(), (2, 1));
        let root = r.marks_in(None);
        assert_eq!(root.get("reports"), Some(&Change::New));
        assert_eq!(root.get("old"), Some(&Change::Changed));
        assert_eq!(root.get("hist.png"), Some(&Change::New));
        assert_eq!(root.get("reports/describe.csv"), Some(&Change::New));
        assert_eq!(root.get("old/notes.md"), None);
        let old = r.marks_in(Some("old"));
        assert_eq!(old.get("deep"), Some(&Change::Changed));
        assert_eq!(old.get("notes.md"), None);
        assert_eq!(
            r.marks_in(Some("/old/deep/")).get("x.txt"),
            Some(&Change::Changed)
        );
        assert_eq!(
            r.marks_in(Some("reports")).get("describe.csv"),
            Some(&Change::New)
        );
        assert_eq!(
            r.files_line().as_deref(),
            Some(
                "files: wrote reports/describe.csv, hist.png; changed old/deep/x.txt; deleted gone.txt"
            )
        );
    }

    #[test]
    fn the_files_line_escapes_names_and_cuts_long_lists() {
        let after: Vec<RemoteFile> = (0..7)
            .map(|i| file(&format!("f{i}\x1b.txt"), 1, 0))
            .collect();
        let line = scan(&[], &after).files_line().unwrap();
        assert_eq!(
            line,
            "files: wrote f0\\033.txt, f1\\033.txt, f2\\033.txt, f3\\033.txt … and 3 more"
        );
        assert_eq!(scan(&after, &after).files_line(), None);
    }

    #[test]
    fn unknown_sizes_and_times_are_not_compared() {
        let mut a = file("x.bin", 1, 0);
        a.size = None;
        let mut b = file("x.bin", 2, 0);
        b.modified = None;
        assert!(scan(&[a], &[b]).is_empty());
    }

    #[test]
    fn the_first_new_image_or_table_is_previewed() {
        let before = [file("data.csv", 1, 0)];
        let after = [
            file("notes.txt", 1, 1),
            file("data.csv", 2, 1),
            file("plot.PNG", 3, 1),
            file("table.json", 3, 1),
        ];
        let r = scan(&before, &after);
        assert_eq!(r.preview().map(|a| a.path.as_str()), Some("plot.PNG"));
        assert_eq!(r.preview().and_then(|a| a.kind), Some(ArtifactKind::Image));
    }

    #[test]
    fn a_changed_table_is_previewed_when_nothing_new_is() {
        let before = [file("data.csv", 1, 0), file("a.txt", 1, 0)];
        let after = [file("a.txt", 2, 0), file("data.csv", 2, 1)];
        let r = scan(&before, &after);
        assert_eq!(r.preview().map(|a| a.path.as_str()), Some("data.csv"));
        assert!(scan(&after, &after).preview().is_none());
    }

    #[test]
    fn files_in_folders_are_told_apart_by_path() {
        let mut sub = file("a.csv", 1, 0);
        sub.directory = Some("sub".into());
        let r = scan(&[file("a.csv", 1, 0)], &[file("a.csv", 1, 0), sub]);
        assert_eq!(r.artifacts.len(), 1);
        assert_eq!(r.artifacts[0].path, "sub/a.csv");
    }

    #[test]
    fn kinds_by_extension_then_content_type() {
        assert_eq!(kind_of("a.jpeg", None), Some(ArtifactKind::Image));
        assert_eq!(kind_of("A.XLSX", None), Some(ArtifactKind::Table));
        assert_eq!(kind_of("a.parquet", None), Some(ArtifactKind::Table));
        assert_eq!(kind_of("a.tsv", None), Some(ArtifactKind::Table));
        assert_eq!(
            kind_of("blob", Some("image/gif")),
            Some(ArtifactKind::Image)
        );
        assert_eq!(
            kind_of("blob", Some("Text/CSV; charset=utf-8")),
            Some(ArtifactKind::Table)
        );
        assert_eq!(kind_of("a.txt", Some("text/plain")), None);
        assert_eq!(kind_of(".png", None), None, "a dot file has no extension");
        assert_eq!(kind_of("a.svg", Some("image/svg+xml")), None);
        assert_eq!(artifact_kind(&folder("x.csv", 0)), None);
    }
}
