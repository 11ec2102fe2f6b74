//! Which data-plane call a request forwarded by the proxy is, so it can be
//! recorded: read from the method, the path below the pool management
//! endpoint and the query only (`aca-api.md` §3 for family A, §4.1 for family
//! B). Anything else (`.management/*`, `metadata`, `session`, listings, a
//! custom container's own paths, `/mcp`) is forwarded without a record.

use axum::http::Method;

/// What the proxy records of a request, decided before it is forwarded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    /// `POST code/execute` (family A, §3.1) or `POST executions` (family B,
    /// §4.2): code or a shell command, recorded from both bodies.
    Execute,
    /// `GET executions/{id}` (§4.2): the polling of an asynchronous
    /// execution, recorded when it first answers a finished status.
    Poll(String),
    /// `POST files/upload` (§3.2) or `POST files` (§4.3).
    Upload,
    /// `GET files/content/{name}` (§3.4) or `GET files/{name}/content` (§4.3):
    /// the file's name below `/mnt/data`.
    Download(String),
    /// `DELETE files/{name}` (§3.5, §4.3): the file's name below `/mnt/data`.
    Delete(String),
    /// Forwarded, not recorded.
    Other,
}

impl Op {
    /// Whether the call changes the session upstream (an execution, an
    /// upload, a delete), so that it must be recorded once the upstream has
    /// it, whether or not its agent is still there for the answer; a poll or
    /// a download changes nothing.
    pub(crate) fn changes_the_session(&self) -> bool {
        matches!(self, Op::Execute | Op::Upload | Op::Delete(_))
    }

    /// Classifies a request: `path` is the URI's path as received (percent-
    /// encoded; repeated slashes, which some clients send, are ignored), `path_query`
    /// the `path` query parameter of family B file calls (a folder, absolute
    /// below `/mnt/data` or relative to it).
    pub(crate) fn of(method: &Method, path: &str, path_query: Option<&str>) -> Self {
        let segments: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            })
            .collect();
        let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
        let folder = |name: &[&str]| below_data(path_query, name);
        match (method.as_str(), segs.as_slice()) {
            ("POST", ["code", "execute"] | ["executions"]) => Op::Execute,
            ("GET", ["executions", id]) => Op::Poll((*id).to_string()),
            ("POST", ["files", "upload"] | ["files"]) => Op::Upload,
            ("GET", ["files", "content", name @ ..]) if !name.is_empty() => {
                Op::Download(folder(name))
            }
            ("GET", ["files", name @ .., "content"]) if !name.is_empty() => {
                Op::Download(folder(name))
            }
            ("DELETE", ["files", name @ ..]) if !name.is_empty() => Op::Delete(folder(name)),
            _ => Op::Other,
        }
    }
}

/// The name of a file below `/mnt/data` from its path segments (and the
/// folder of a `path` query parameter): `/mnt/data/` and `/` in front are
/// dropped, as the local pool shows names (`report.csv`, `sub/x.txt`).
pub(crate) fn below_data(folder: Option<&str>, name: &[&str]) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for piece in folder.into_iter().chain(name.iter().copied()) {
        parts.extend(piece.split('/').filter(|s| !s.is_empty()));
    }
    if parts.starts_with(&["mnt", "data"]) {
        parts.drain(..2);
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_recorded_call_of_both_families_is_recognised() {
        let get = Method::GET;
        let post = Method::POST;
        let delete = Method::DELETE;
        assert_eq!(Op::of(&post, "/code/execute", None), Op::Execute);
        // LlamaIndexTS sends a double slash (aca-api.md §1.1).
        assert_eq!(Op::of(&post, "//code/execute", None), Op::Execute);
        assert_eq!(Op::of(&post, "/executions", None), Op::Execute);
        assert_eq!(
            Op::of(&get, "/executions/8963ad02", None),
            Op::Poll("8963ad02".into())
        );
        assert_eq!(Op::of(&post, "/files/upload", None), Op::Upload);
        assert_eq!(Op::of(&post, "/files", Some("/mnt/data")), Op::Upload);
        assert_eq!(
            Op::of(&get, "/files/content/made%20by%20code.txt", None),
            Op::Download("made by code.txt".into())
        );
        assert_eq!(
            Op::of(&get, "/files/x.csv/content", Some("/mnt/data/sub")),
            Op::Download("sub/x.csv".into())
        );
        assert_eq!(
            Op::of(&delete, "/files/notes.csv", Some("dir")),
            Op::Delete("dir/notes.csv".into())
        );
    }

    #[test]
    fn other_calls_are_forwarded_without_a_record() {
        for (m, p) in [
            (Method::GET, "/files"),
            (Method::GET, "/files/x.csv"),
            (Method::GET, "/metadata"),
            (Method::DELETE, "/session"),
            (Method::POST, "/.management/stopSession"),
            (Method::POST, "/mcp"),
            (Method::GET, "/files/content"),
        ] {
            assert_eq!(Op::of(&m, p, None), Op::Other, "{m} {p}");
        }
    }

    #[test]
    fn names_below_mnt_data_are_shown_relative() {
        assert_eq!(below_data(None, &["/mnt/data/a.txt"]), "a.txt");
        assert_eq!(below_data(Some("/"), &["a.txt"]), "a.txt");
        assert_eq!(below_data(Some("x/y"), &["a.txt"]), "x/y/a.txt");
    }
}
