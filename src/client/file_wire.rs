//! The wire side of a session's files: names turned into URL path segments
//! (refusing the ones a URL would change), folders below `/mnt/data`, and the
//! file entries of both api-version families read from their JSON
//! (`aca-api.md` §3.2, §3.3, §4.3). The calls themselves are in `files.rs`.

use serde_json::Value;

use super::ClientError;
use super::response::{count, string, time};
use crate::protocol::api::Family;
use crate::protocol::model::{FileKind, RemoteFile};

/// The folder every session's files live in (§7); names and `path`s may start
/// with it.
pub(super) const DATA_ROOT: &str = "/mnt/data";

/// Whether a `path` names the data root itself (`/`, `/mnt/data`).
pub(super) fn is_data_root(path: &str) -> bool {
    matches!(path.trim_end_matches('/'), "" | DATA_ROOT)
}

/// A folder `path` as shown to a person: relative to `/mnt/data`, no slashes at
/// either end (`/mnt/data/sub/` → `sub`).
pub(super) fn below_root(path: &str) -> &str {
    path.strip_prefix(DATA_ROOT)
        .filter(|rest| rest.starts_with('/'))
        .unwrap_or(path)
        .trim_matches('/')
}

/// The `/`-separated parts of a file name, without a leading `/mnt/data/` and
/// without empty parts. Errors: nothing left, or a `.` / `..` part (which URLs
/// would silently drop or resolve). Tabs and line breaks are part of a name
/// like any other character: [`append_segments`] percent-encodes them.
pub(super) fn name_segments(name: &str) -> Result<Vec<&str>, ClientError> {
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
/// and the request stays on the file route. Errors: nothing left, or a name
/// that is only `.` or `..`.
pub(super) fn request_segments(name: &str) -> Result<Vec<&str>, ClientError> {
    match name_segments(name) {
        Err(ClientError::InvalidArgument(_)) => {
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

/// What a file name's path segment percent-encodes: the WHATWG URL
/// standard's path-percent-encode set for a segment of an `http(s)` URL
/// (controls, space, `"`, `#`, `<`, `>`, `?`, a backquote, `{`, `}`, `/`,
/// `%`, `\`) and every non-ASCII byte,
/// which is what the `url` crate's own segment setter writes and what the
/// recorded clients send (`tests/client_fixtures.rs`: `&` stays `&`). It is
/// applied here, not by that setter, because the URL parser drops a tab or
/// line break from its input: percent-encoded first, they travel as `%09`
/// and `%0A` and the pool decodes the exact name (`aca-api.md` §4.3 names
/// are any string).
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'/')
    .add(b'%')
    .add(b'\\');

/// `url` with `segments` appended to its path, each one percent-encoded
/// segment ([`SEGMENT`]). A segment that is `.` or `..` is never given
/// ([`request_segments`] refuses it).
pub(super) fn append_segments(url: &mut url::Url, segments: &[&str]) {
    let mut path = url.path().trim_end_matches('/').to_string();
    for segment in segments {
        path.push('/');
        path.extend(percent_encoding::utf8_percent_encode(segment, SEGMENT));
    }
    url.set_path(&path);
}

/// Family B upload target: the folders of the name appended to `path`, and the
/// file's own name.
pub(super) fn split_folder(path: Option<&str>, segments: &[&str]) -> (Option<String>, String) {
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
pub(super) fn parse_entry(v: &Value, family: Family) -> Result<RemoteFile, ClientError> {
    match family {
        Family::A => parse_a_file(v),
        Family::B => parse_b_file(v),
    }
}

/// A family A entry: `{"$id","properties":{"$id","filename","size","lastModifiedTime"}}`
/// (§3.2, §3.3); `filename` may hold folders or start with `/mnt/data/`.
pub(super) fn parse_a_file(v: &Value) -> Result<RemoteFile, ClientError> {
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
pub(super) fn parse_b_file(v: &Value) -> Result<RemoteFile, ClientError> {
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
pub(super) fn parse_a_upload(v: &Value, sent: &str, size: u64) -> Result<RemoteFile, ClientError> {
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

    use url::Url;

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
        assert_eq!(request_segments("a\n/../b").unwrap(), ["a\n/../b"]);
        let mut url = Url::parse("http://h/files?api-version=x").unwrap();
        append_segments(&mut url, &request_segments("../evil.txt").unwrap());
        append_segments(&mut url, &["content"]);
        assert_eq!(url.path(), "/files/..%2Fevil.txt/content");
    }

    #[test]
    fn tabs_line_breaks_and_percent_signs_travel_encoded() {
        let mut url = Url::parse("http://h/files?api-version=x").unwrap();
        let segments = request_segments("sub/tab\tname\n50%.txt").unwrap();
        append_segments(&mut url, &segments);
        assert_eq!(url.path(), "/files/sub/tab%09name%0A50%25.txt");
        assert_eq!(url.query(), Some("api-version=x"));
        let mut url = Url::parse("http://h/files").unwrap();
        append_segments(&mut url, &["evil\u{1b}]0;x\u{7}", "naïve café"]);
        assert_eq!(url.path(), "/files/evil%1B]0;x%07/na%C3%AFve%20caf%C3%A9");
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
