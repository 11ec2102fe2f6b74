//! A hostile pool: a fake family B pool (axum on loopback, `aca-api.md` §4.3)
//! whose `GET files` names `../evil.txt`, `/etc/x`, `sub/../../y`, a folder of
//! `../../etc`, Windows separators and a name full of escape sequences and
//! control characters, and whose content route serves bytes for any name.
//! Each file is downloaded the way the files pane will: through
//! `SessionClient::download_file` into `localname::local_path(folder, name)`,
//! opened with `create_new` so nothing is overwritten. Every file must land
//! directly inside the folder, without escape sequences or line breaks in its
//! name, and nothing else under the test's root may change. A name with `..`
//! parts is asked for as the one encoded segment it is; a name with a line break
//! travels percent-encoded (issue 27 item 15); only `..` itself is refused. The last test
//! does the same through the files pane of the real binary in a pty.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use pretty_assertions::assert_eq;
use serde_json::json;
use sessionpad::client::{ClientError, SessionClient, Target};
use sessionpad::localname;
use sessionpad::protocol::{ApiVersion, RemoteFile};

const ID: &str = "hostile-id";

/// `(name, directory)` of each listing entry.
const LISTED: &[(&str, Option<&str>)] = &[
    ("report.csv", None),
    ("../evil.txt", None),
    ("/etc/x", None),
    ("sub/../../y", None),
    ("passwd", Some("../../etc")),
    ("..\\..\\win.ini", None),
    ("other/x", None),
    (
        "esc\u{1b}]0;pwned\u{7}\u{1b}[2J\r\nname\u{1}\u{7f}\u{9b}6n.txt",
        None,
    ),
    ("..", None),
];

/// Requests the fake pool saw: path and query.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// The bytes the pool serves for the file at `path` (as decoded from the URL).
fn content_for(path: &str) -> Vec<u8> {
    format!("bytes of {path}\n").into_bytes()
}

fn listing() -> serde_json::Value {
    let value: Vec<_> = LISTED
        .iter()
        .map(|(name, dir)| {
            let mut entry = json!({
                "name": name,
                "type": "File",
                "sizeInBytes": 12,
                "lastModifiedAt": "2025-03-01T12:00:00Z",
                "contentType": "text/plain",
            });
            if let Some(dir) = dir {
                entry["directory"] = json!(dir);
            }
            entry
        })
        .collect();
    json!({ "value": value, "nextLink": null })
}

/// `%XX` escapes of a URL path decoded to bytes.
fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

async fn fake_pool(State(seen): State<Seen>, req: Request) -> Response {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    seen.lock().unwrap().push((path.clone(), query));
    let reply = |status: StatusCode, ct: &str, body: Vec<u8>| {
        Response::builder()
            .status(status)
            .header("content-type", ct)
            .body(Body::from(body))
            .unwrap()
    };
    if path == "/files" {
        return reply(
            StatusCode::OK,
            "application/json",
            listing().to_string().into_bytes(),
        );
    }
    if let Some(name) = path
        .strip_prefix("/files/")
        .and_then(|rest| rest.strip_suffix("/content"))
    {
        let name = String::from_utf8_lossy(&percent_decode(name)).into_owned();
        return reply(
            StatusCode::OK,
            "application/octet-stream",
            content_for(&name),
        );
    }
    let err = json!({"error": {"code": "NotFound", "message": "no such route"}});
    reply(
        StatusCode::NOT_FOUND,
        "application/json",
        err.to_string().into_bytes(),
    )
}

/// Starts the fake pool; returns a family B client of it, the requests it will
/// see and its task.
async fn start() -> (
    SessionClient,
    Seen,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let seen: Seen = Arc::default();
    let app = axum::Router::new()
        .fallback(fake_pool)
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let client = SessionClient::new(Target {
        endpoint: format!("http://{addr}"),
        api_version: ApiVersion::V2025_10_02,
        token: None,
    })
    .unwrap();
    (client, seen, server)
}

/// The file names the pool was asked for the content of, in order.
fn served_names(seen: &Seen) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .filter_map(|(p, _)| {
            p.strip_prefix("/files/")?
                .strip_suffix("/content")
                .map(str::to_string)
        })
        .map(|n| String::from_utf8_lossy(&percent_decode(&n)).into_owned())
        .collect()
}

/// Every file below `root` with its bytes.
fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path, bytes);
            }
        }
    }
    out
}

/// How one download went.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Written to this file name in the folder.
    Saved(String),
    /// The client refused the remote name before sending anything.
    Refused,
    /// A file of that local name was there already: not overwritten.
    Exists(String),
}

/// Downloads `file` into `folder` as the files pane will.
async fn download(client: &SessionClient, folder: &Path, file: &RemoteFile) -> Outcome {
    let remote = file.path();
    let local = localname::local_path(folder, &remote);
    assert_eq!(local.parent(), Some(folder), "{remote:?} -> {local:?}");
    let local_name = local.file_name().unwrap().to_string_lossy().into_owned();
    let mut out = match tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&local)
        .await
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Outcome::Exists(local_name);
        }
        Err(e) => panic!("{}: {e}", local.display()),
    };
    match client
        .download_file(ID, &remote, &mut out, &|_, _| {})
        .await
    {
        Ok(_) => Outcome::Saved(local_name),
        Err(ClientError::InvalidArgument(_)) => {
            drop(out);
            std::fs::remove_file(&local).unwrap();
            Outcome::Refused
        }
        Err(e) => panic!("{remote:?}: {e}"),
    }
}

#[tokio::test]
async fn hostile_names_download_only_into_the_chosen_folder() {
    let (client, seen, server) = start().await;

    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("a/b/downloads");
    std::fs::create_dir_all(&folder).unwrap();
    // Files a traversal would hit or overwrite.
    for p in [
        "a/b/evil.txt",
        "a/y",
        "a/etc/passwd",
        "a/b/downloads/../keep.txt",
    ] {
        let p = root.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"original").unwrap();
    }
    let before = tree(root.path());

    let files = client.list_files(ID, None, false).await.unwrap();
    assert_eq!(files.len(), LISTED.len());

    let mut outcomes = Vec::new();
    for file in &files {
        outcomes.push((file.path(), download(&client, &folder, file).await));
    }
    server.abort();

    let saved = |name: &str| Outcome::Saved(name.into());
    let escape_name = &LISTED[7].0;
    let escape_local = localname::safe_file_name(escape_name);
    assert_eq!(
        outcomes,
        [
            ("report.csv".to_string(), saved("report.csv")),
            ("../evil.txt".into(), saved("evil.txt")),
            ("/etc/x".into(), saved("x")),
            ("sub/../../y".into(), saved("y")),
            ("../../etc/passwd".into(), saved("passwd")),
            ("..\\..\\win.ini".into(), saved("win.ini")),
            ("other/x".into(), Outcome::Exists("x".into())),
            // Escape sequences and a line break: asked for percent-encoded,
            // saved under a safe local name.
            ((*escape_name).to_string(), saved(&escape_local)),
            ("..".into(), Outcome::Refused),
        ]
    );
    assert!(!escape_local.contains(['\u{1b}', '\u{7}', '\r', '\n', '\u{9b}']));

    // Refused names never reached the pool; the others were asked for by the
    // exact name listed (a dotted one as one encoded segment), in the session
    // the client was told.
    let asked = served_names(&seen);
    assert_eq!(
        asked,
        [
            "report.csv",
            "../evil.txt",
            "etc/x",
            "sub/../../y",
            "../../etc/passwd",
            "..\\..\\win.ini",
            escape_name,
        ]
    );

    // Exactly the saved files are new, all directly in the folder, with the bytes
    // the pool served for them; everything else is as it was.
    let after = tree(root.path());
    let mut expected = before.clone();
    let saved_names = outcomes.iter().filter_map(|(_, o)| match o {
        Outcome::Saved(name) => Some(name),
        _ => None,
    });
    for (name, remote) in saved_names.zip(&asked) {
        expected.insert(folder.join(name), content_for(remote));
    }
    assert_eq!(after, expected);

    let seen = seen.lock().unwrap();
    assert!(
        seen.iter()
            .all(|(_, q)| q.contains("identifier=hostile-id"))
    );
    let content_paths: Vec<&str> = seen
        .iter()
        .map(|(p, _)| p.as_str())
        .filter(|p| p.ends_with("/content"))
        .collect();
    assert_eq!(content_paths.len(), 7, "{content_paths:?}");
    assert!(
        content_paths
            .iter()
            .all(|p| !p.contains("/../") && !p.contains("/./"))
    );
}

/// Issue 6 asks for local names without control characters: C0, DEL, C1 and
/// bidirectional overrides all go.
#[test]
fn local_names_have_no_control_or_bidi_characters() {
    for name in [LISTED[7].0, "report\u{202e}vsc.exe", "a\u{7f}b"] {
        let local = localname::safe_file_name(name);
        assert!(
            !local.chars().any(|c| c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')),
            "{name:?} -> {local:?}"
        );
    }
}

/// The `url` crate drops tabs, CRs and LFs from a path segment (WHATWG URL
/// parsing), so a listed name with a line break could be asked for without it
/// (another file). The client percent-encodes them (issue 27 item 15): the
/// pool is asked for exactly the name, and serves that file.
#[tokio::test]
async fn names_with_line_breaks_are_asked_for_exactly() {
    let (client, seen, server) = start().await;
    let name = "two\r\nlines\t.txt";
    let mut sink = Vec::new();
    client
        .download_file(ID, name, &mut sink, &|_, _| {})
        .await
        .unwrap();
    server.abort();
    assert_eq!(served_names(&seen), [name]);
    assert_eq!(sink, content_for(name));
}

mod pty;

/// Issue 6, end to end: the real binary in a pty, pointed at the hostile pool.
/// The files pane lists every hostile name without passing its escape sequences
/// to the terminal; marking them all and pressing `d` downloads each one the
/// client can ask for, under a safe name, directly into the working directory
/// (the default download folder). A clash asks first (`n` keeps the file).
/// Nothing outside the folder changes.
#[test]
fn the_files_pane_downloads_hostile_names_inside_the_folder() {
    use std::time::Duration;

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (client, seen, server) = runtime.block_on(start());
    let endpoint = client.endpoint().to_string();

    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("a/b/work");
    std::fs::create_dir_all(&work).unwrap();
    for p in ["a/b/evil.txt", "a/y", "a/etc/passwd", "etc/x"] {
        let p = root.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"original").unwrap();
    }
    let data = tempfile::tempdir().unwrap();
    let before = tree(root.path());

    let mut pty = pty::Pty::spawn_in(
        data.path(),
        &work,
        &["--endpoint", &endpoint, "--token", "t", "--identifier", ID],
    );
    pty.wait_for("the first frame", pty::CELL_DEADLINE, |s| {
        s.contains("hostile-id │") && s.contains("ready")
    });
    pty::keys(&mut pty, &["\x1bOQ"]); // F2
    let screen = pty.wait_for("the hostile listing", pty::CELL_DEADLINE, |s| {
        s.contains("report.csv") && s.contains("evil.txt")
    });
    println!("{screen}");
    for _ in 0..LISTED.len() {
        pty::keys(&mut pty, &[" "]);
    }
    pty::keys(&mut pty, &["d"]);
    // `other/x` and `/etc/x` both want the local name `x`: the second asks.
    pty.wait_for("the clash question", pty::CELL_DEADLINE, |s| {
        s.contains("Replace?")
    });
    pty::keys(&mut pty, &["n"]);
    let screen = pty.wait_for("the downloads' summary", pty::CELL_DEADLINE, |s| {
        s.contains("existing files kept")
    });
    println!("{screen}");
    // The name the client would not ask for (`..`) is said, not silently
    // skipped.
    assert!(screen.contains("cannot download .."), "{screen}");
    pty::keys(&mut pty, &[pty::CTRL_Q]);
    pty.wait_exit(Duration::from_secs(30));
    server.abort();

    // Every download is directly in the folder, with the bytes served for the
    // exact name listed; nothing else under the root changed.
    let mut expected = before;
    for (local, remote) in [
        ("report.csv", "report.csv"),
        ("evil.txt", "../evil.txt"),
        ("x", "etc/x"),
        ("y", "sub/../../y"),
        ("passwd", "../../etc/passwd"),
        ("win.ini", "..\\..\\win.ini"),
    ] {
        expected.insert(work.join(local), content_for(remote));
    }
    let escape_name = LISTED[7].0;
    expected.insert(
        work.join(localname::safe_file_name(escape_name)),
        content_for(escape_name),
    );
    let after: BTreeMap<_, _> = tree(root.path())
        .into_iter()
        .filter(|(p, _)| !p.starts_with(work.join(".sessionpad")))
        .collect();
    assert_eq!(after, expected);
    assert!(
        !String::from_utf8_lossy(&pty.raw).contains("\u{1b}]0;pwned"),
        "the escape sequence in a name reached the terminal"
    );
    drop(seen);
}
