//! Names and folders of the file routes: what clients send (a `{name}` raw or
//! percent-encoded, possibly prefixed with `/mnt/data/`, and the `path` query of
//! family B) parsed into a [`RelPath`], and resolved below the session folder
//! without ever leaving it (`aca-api.md` §3.2, §3.4, §4.3, §7 file-name rules).
//!
//! Safety rules: a name never contains `..`, NUL or an absolute path other than
//! `/mnt/data/...`; a name is percent-decoded exactly once, so a double-encoded
//! `..` is just an odd file name. Resolving a [`RelPath`] on disk (beneath the
//! session folder's handle, links followed only while they stay inside) is
//! [`super::beneath`]'s work.

use std::io;

use axum::http::StatusCode;

use super::super::wire_error::WireError;

/// The session folder as the session's code sees it (`aca-api.md` §7).
pub(crate) const DATA_ROOT: &str = "/mnt/data";

/// Longest file-name component in bytes (Linux `NAME_MAX`).
const NAME_MAX: usize = 255;

/// A validated path relative to the session folder: every component a plain name
/// (not empty, `.` or `..`, no `/` and no NUL). Empty means the folder itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RelPath(Vec<String>);

impl RelPath {
    /// Parses a file name as clients send it (§3.2, §3.4, §4.3): relative to
    /// `/mnt/data`, or absolute below `/mnt/data`. Any other absolute path, a `..`
    /// component or a NUL gives 400 `SessionRequestValidationFailed`.
    pub(crate) fn parse_name(raw: &str) -> Result<Self, WireError> {
        parse(raw, false)
    }

    /// Parses the `path` query parameter of family B (§4.3): empty or `/` is the
    /// data root, `/mnt/data/sub` and `sub` are the same folder. Errors as
    /// [`RelPath::parse_name`].
    pub(crate) fn parse_dir(raw: &str) -> Result<Self, WireError> {
        parse(raw, true)
    }

    /// The path of `parts` (each already a plain name, e.g. taken from another
    /// [`RelPath`]).
    pub(crate) fn from_components(parts: &[String]) -> RelPath {
        RelPath(parts.to_vec())
    }

    /// `self` followed by `other`.
    pub(crate) fn join(&self, other: &RelPath) -> RelPath {
        let mut v = self.0.clone();
        v.extend(other.0.iter().cloned());
        RelPath(v)
    }

    /// Whether this is the data root itself.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The components, outermost first.
    pub(crate) fn components(&self) -> &[String] {
        &self.0
    }

    /// The last component (the file's own name), if any.
    pub(crate) fn file_name(&self) -> Option<&str> {
        self.0.last().map(String::as_str)
    }

    /// The components without the last one (the containing folder).
    pub(crate) fn parent(&self) -> &[String] {
        match self.0.split_last() {
            Some((_, parent)) => parent,
            None => &[],
        }
    }

    /// Without a leading `mnt/data`: what `/mnt/data/x` became when the pool
    /// collapsed the `//` of `files/content//mnt/data/x`. `None` otherwise.
    pub(crate) fn strip_mnt_data(&self) -> Option<RelPath> {
        match self.0.as_slice() {
            [m, d, rest @ ..] if m == "mnt" && d == "data" && !rest.is_empty() => {
                Some(RelPath(rest.to_vec()))
            }
            _ => None,
        }
    }

    /// The containing folder as a path of its own.
    pub(crate) fn parent_path(&self) -> RelPath {
        RelPath(self.parent().to_vec())
    }

    /// The path joined with `/`, relative to `/mnt/data` (`""` for the root).
    pub(crate) fn as_relative(&self) -> String {
        self.0.join("/")
    }

    /// The path as the session's code sees it, e.g. `/mnt/data/sub/x.csv`.
    pub(crate) fn display(&self) -> String {
        if self.0.is_empty() {
            DATA_ROOT.to_string()
        } else {
            format!("{DATA_ROOT}/{}", self.as_relative())
        }
    }

    /// The components of `self` below `base`, joined with `/` (`""` when `self` is
    /// `base`); the whole path when `self` is not below `base`.
    pub(crate) fn relative_to(&self, base: &RelPath) -> String {
        match self.0.strip_prefix(base.0.as_slice()) {
            Some(rest) => rest.join("/"),
            None => self.as_relative(),
        }
    }
}

/// 400 `SessionRequestValidationFailed` with `message`.
fn invalid(message: String) -> WireError {
    WireError::bad_request("SessionRequestValidationFailed", message)
}

/// Parses a name (`dir` false) or a `path` (`dir` true: `/` is the root too).
fn parse(raw: &str, dir: bool) -> Result<RelPath, WireError> {
    let what = if dir { "path" } else { "file name" };
    if raw.contains('\0') {
        return Err(invalid(format!(
            "the {what} {raw:?} contains a NUL character"
        )));
    }
    let rest = if raw.starts_with('/') {
        let abs = format!("/{}", raw.trim_start_matches('/'));
        if let Some(rest) = abs.strip_prefix(DATA_ROOT) {
            if !(rest.is_empty() || rest.starts_with('/')) {
                return Err(invalid(format!(
                    "the {what} {raw:?} is outside {DATA_ROOT}"
                )));
            }
            rest.to_string()
        } else if dir && abs == "/" {
            String::new()
        } else {
            return Err(invalid(format!(
                "the {what} {raw:?} is outside {DATA_ROOT}: give it relative to {DATA_ROOT} or starting with {DATA_ROOT}/"
            )));
        }
    } else {
        raw.to_string()
    };
    let mut parts = Vec::new();
    for c in rest.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                return Err(invalid(format!(
                    "the {what} {raw:?} contains '..'; names are relative to {DATA_ROOT} and cannot leave it"
                )));
            }
            c if c.len() > NAME_MAX => {
                return Err(invalid(format!(
                    "the {what} {raw:?} has a component longer than {NAME_MAX} bytes"
                )));
            }
            c => parts.push(c.to_string()),
        }
    }
    Ok(RelPath(parts))
}

/// Percent-decodes `raw` once (`%XX` with two hex digits; any other `%` stays as
/// it is). `None` when the result is not UTF-8.
pub(crate) fn percent_decode(raw: &str) -> Option<String> {
    String::from_utf8(percent_decode_bytes(raw)).ok()
}

/// Percent-decodes `raw` once into bytes (`%XX` with two hex digits; any other
/// `%` stays as it is).
pub(crate) fn percent_decode_bytes(raw: &str) -> Vec<u8> {
    /// The value of one hex digit.
    fn hex(b: u8) -> Option<u8> {
        match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            b'A'..=b'F' => Some(b - b'A' + 10),
            _ => None,
        }
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

/// Why a path could not be used; turned into an Azure error by
/// [`FsError::into_wire`].
#[derive(Debug)]
pub(crate) enum FsError {
    /// Nothing there (404 `FileNotFound`, or `DirectoryNotFound` for folders).
    NotFound(String),
    /// A component on the way is a file, or a folder was expected (400).
    NotADirectory(String),
    /// A file was expected but this is a folder (400).
    IsADirectory(String),
    /// A symbolic link leads outside the session folder (400).
    Outside(String),
    /// Symbolic links loop, or one appeared where none may be (400).
    Loop(String),
    /// Not a regular file or folder: a FIFO, socket or device, described by the
    /// second field (400). Such things are never opened for reading or writing.
    Unsupported(String, &'static str),
    /// Any other I/O failure (500).
    Io(String, io::Error),
}

impl FsError {
    /// The Azure error (`aca-api.md` §6): 404 `FileNotFound` / `DirectoryNotFound`,
    /// 400 `SessionRequestValidationFailed`, 500 `InternalServerError`.
    /// `folder` says whether the caller was looking for a folder.
    pub(crate) fn into_wire(self, folder: bool) -> WireError {
        match self {
            FsError::NotFound(p) if folder => WireError {
                status: StatusCode::NOT_FOUND,
                code: "DirectoryNotFound",
                message: format!("directory {p} was not found"),
            },
            FsError::NotFound(p) => WireError {
                status: StatusCode::NOT_FOUND,
                code: "FileNotFound",
                message: format!("file {p} was not found"),
            },
            FsError::NotADirectory(p) => invalid(format!("{p} is not a directory")),
            FsError::IsADirectory(p) => invalid(format!("{p} is a directory, not a file")),
            FsError::Outside(p) => invalid(format!("{p} resolves outside {DATA_ROOT}")),
            FsError::Loop(p) => invalid(format!(
                "{p} has too many levels of symbolic links, or was replaced by a link while in use"
            )),
            FsError::Unsupported(p, what) => invalid(format!(
                "{p} is {what}; only regular files and folders can be read or written"
            )),
            FsError::Io(p, e) => no_room(&p, &e).unwrap_or_else(|| WireError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                code: "InternalServerError",
                message: format!("cannot access {p}: {e}"),
            }),
        }
    }
}

/// 413 when `e` says the session's `/mnt/data` has no room for what was being
/// written to `p`: `InsufficientStorage` when it is full (`ENOSPC`, `EDQUOT`; its
/// size is in the pool's info), `FileTooLarge` past the largest file a session may
/// write (`EFBIG`). `None` for any other error. Nothing half-written is kept: an
/// upload is written to a temporary file that goes on failure.
pub(crate) fn no_room(p: &str, e: &io::Error) -> Option<WireError> {
    let (code, why) = match e.raw_os_error()? {
        libc::ENOSPC | libc::EDQUOT => (
            "InsufficientStorage",
            "the session's /mnt/data is full (its size is in the pool's info)",
        ),
        libc::EFBIG => (
            "FileTooLarge",
            "it is larger than the largest file a session may write (in the pool's info)",
        ),
        _ => return None,
    };
    Some(WireError {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        code,
        message: format!("{p} was not written: {why}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Vec<String> {
        RelPath::parse_name(s).expect(s).0
    }

    #[test]
    fn names_relative_or_below_mnt_data() {
        assert_eq!(name("x.csv"), ["x.csv"]);
        assert_eq!(name("/mnt/data/x.csv"), ["x.csv"]);
        assert_eq!(name("//mnt/data//sub/./x.csv"), ["sub", "x.csv"]);
        assert_eq!(name("a b#%&ü.txt"), ["a b#%&ü.txt"]);
        assert!(name("/mnt/data").is_empty());
    }

    #[test]
    fn hostile_names_are_rejected() {
        for bad in [
            "../evil",
            "a/../../b",
            "/etc/passwd",
            "/mnt/database/x",
            "a\0b",
            "/",
        ] {
            let e = RelPath::parse_name(bad).expect_err(bad);
            assert_eq!(e.status, StatusCode::BAD_REQUEST, "{bad}");
            assert_eq!(e.code, "SessionRequestValidationFailed");
        }
        assert!(RelPath::parse_name(&"a".repeat(256)).is_err());
    }

    #[test]
    fn dirs_accept_the_root_forms() {
        for root in ["", "/", "/mnt/data", "/mnt/data/", "."] {
            assert!(RelPath::parse_dir(root).expect(root).is_empty(), "{root}");
        }
        let sub = RelPath::parse_dir("/mnt/data/sub").expect("sub");
        assert_eq!(sub, RelPath::parse_dir("sub").expect("sub"));
        assert_eq!(sub.components(), ["sub"]);
        assert!(RelPath::parse_dir("/etc").is_err());
        assert!(RelPath::parse_dir("../").is_err());
    }

    #[test]
    fn percent_decoding_is_done_once() {
        assert_eq!(percent_decode("a%20b%23c").as_deref(), Some("a b#c"));
        assert_eq!(percent_decode("%252e%252e").as_deref(), Some("%2e%2e"));
        assert_eq!(percent_decode("100%").as_deref(), Some("100%"));
        assert_eq!(percent_decode("%zz%4").as_deref(), Some("%zz%4"));
        assert_eq!(percent_decode("%C3%BC").as_deref(), Some("ü"));
        assert_eq!(percent_decode("%FF"), None);
    }
}
