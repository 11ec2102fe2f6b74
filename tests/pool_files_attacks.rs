//! Attacks on the local pool's file routes by the session's own code (`aca-api.md`
//! §4.3 family B routes, §6 errors): a real sandboxed kernel swaps names under the
//! routes while they work, and names a FIFO like a file. The routes run on the
//! host, where a link's absolute target is a host path; none of it may lead a
//! download or an upload out of the session folder, and a FIFO may not hang a
//! thread. Each test checks that its attack really ran (swaps counted by the
//! session, some requests served) up to the step that must fail.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{LIMIT, TestPool, identifier};
use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use sessionpad::protocol::{ApiVersion, ExecutionStatus};
use url::Url;

const B: ApiVersion = ApiVersion::V2025_10_02;

/// Requests in flight at once during a race.
const CONCURRENCY: usize = 16;

/// Longest any race may take in all.
const RACE_LIMIT: Duration = Duration::from_secs(300);

/// Python that swaps the names `A` and `B` in the working folder (the session
/// folder, `/mnt/data` in the sandbox) atomically
/// (`renameat2(RENAME_EXCHANGE)`) in a daemon thread until `stop` is set or 240 s
/// have passed, counting swaps in `swaps[0]`.
const SWAPPER: &str = r"
import ctypes, os, threading, time
_libc = ctypes.CDLL(None, use_errno=True)
def _exchange(a, b):  # renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    if _libc.renameat2(-100, a, -100, b, 2) != 0:
        raise OSError(ctypes.get_errno(), 'renameat2')
stop = threading.Event()
swaps = [0]
errors = []
def _swap():
    deadline = time.monotonic() + 240
    while not stop.is_set() and time.monotonic() < deadline:
        try:
            _exchange(A, B)
            swaps[0] += 1
        except OSError as e:
            errors.append(repr(e))
            return
swapper = threading.Thread(target=_swap, daemon=True)
";

/// One session of a pool, spoken to in family B.
struct Session<'a> {
    pool: &'a TestPool,
    http: reqwest::Client,
    id: String,
}

impl<'a> Session<'a> {
    fn new(pool: &'a TestPool) -> Self {
        Self {
            pool,
            http: reqwest::Client::new(),
            id: identifier(),
        }
    }

    /// `endpoint/<segments…>?api-version&identifier[&extra]`.
    fn url(&self, segments: &[&str], extra: &[(&str, &str)]) -> Url {
        let mut url = Url::parse(&self.pool.pool.endpoint()).unwrap();
        url.path_segments_mut().unwrap().clear().extend(segments);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("api-version", B.as_str());
            q.append_pair("identifier", &self.id);
            for (k, v) in extra {
                q.append_pair(k, v);
            }
        }
        url
    }

    fn request(&self, method: Method, url: Url) -> reqwest::RequestBuilder {
        self.http
            .request(method, url)
            .bearer_auth(self.pool.pool.token().unwrap())
            .timeout(Duration::from_secs(30))
    }

    /// Runs `code` in the session; returns its result.
    async fn exec(&self, code: &str) -> Value {
        let exec = self
            .pool
            .client(B)
            .execute(&self.id, code, LIMIT)
            .await
            .unwrap();
        assert_eq!(exec.status, ExecutionStatus::Succeeded, "{}", exec.stderr);
        exec.result.and_then(|v| v.json).unwrap_or(Value::Null)
    }

    /// Stops the swapper; returns how often it swapped (it must not have failed).
    async fn stop_swapping(&self) -> u64 {
        let out = self
            .exec("stop.set(); swapper.join(10); [swaps[0], errors[:3]]")
            .await;
        assert_eq!(out[1], serde_json::json!([]), "the swapper failed: {out}");
        out[0].as_u64().expect("a swap count")
    }

    /// Status and body of a `GET files/{name}/content`.
    async fn download(&self, name: &str) -> (StatusCode, String) {
        let resp = self
            .request(Method::GET, self.url(&["files", name, "content"], &[]))
            .send()
            .await
            .expect("an answer within 30 s");
        let status = resp.status();
        (status, resp.text().await.unwrap_or_default())
    }

    /// Status and body of a family B upload of `data` as `filename` into `path`.
    async fn upload(&self, filename: &str, data: &str, path: &str) -> (StatusCode, String) {
        let part = reqwest::multipart::Part::bytes(data.as_bytes().to_vec())
            .file_name(filename.to_string());
        let form = reqwest::multipart::Form::new().part("file", part);
        let resp = self
            .request(Method::POST, self.url(&["files"], &[("path", path)]))
            .multipart(form)
            .send()
            .await
            .expect("an answer within 30 s");
        let status = resp.status();
        (status, resp.text().await.unwrap_or_default())
    }
}

/// The folder of the one session of `pool` (its `/mnt/data` on the host).
fn session_folder(pool: &TestPool, marker: &str) -> PathBuf {
    pool.pool
        .registry()
        .list()
        .into_iter()
        .map(|s| pool.pool.registry().files_of(&s))
        .find(|p| p.join(marker).exists() || std::fs::symlink_metadata(p.join(marker)).is_ok())
        .unwrap_or_else(|| panic!("no session folder holds {marker}"))
}

/// Every entry below `dir`, recursively.
fn all_entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(read) = std::fs::read_dir(dir) {
        for e in read.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(all_entries(&p));
            }
            out.push(p);
        }
    }
    out
}

#[tokio::test]
async fn swapping_a_file_and_a_link_to_a_host_file_never_downloads_the_host_file() {
    let pool = TestPool::start().await;
    let host = tempfile::tempdir().unwrap();
    let secret = format!("TOP-SECRET-{}", uuid::Uuid::new_v4());
    let secret_path = host.path().join("secret.txt");
    std::fs::write(&secret_path, &secret).unwrap();
    let s = Session::new(&pool);
    let real = "the session's own file\n".repeat(50);
    // `x` is the regular file, `y` the link to the host file; the thread swaps them.
    s.exec(&format!(
        "{SWAPPER}\nA, B = b'x', b'y'\nopen('x', 'w').write({real:?})\n\
         os.symlink({:?}, 'y')\nswapper.start()",
        secret_path.to_str().unwrap()
    ))
    .await;

    let runs = 2000;
    let results = tokio::time::timeout(
        RACE_LIMIT,
        futures::stream::iter(0..runs)
            .map(|_| s.download("x"))
            .buffer_unordered(CONCURRENCY)
            .collect::<Vec<_>>(),
    )
    .await
    .expect("the racing downloads end in time");
    let swaps = s.stop_swapping().await;

    let leaked = results.iter().filter(|(_, b)| b.contains(&secret)).count();
    let served = results
        .iter()
        .filter(|(st, b)| *st == StatusCode::OK && *b == real)
        .count();
    let refused = results
        .iter()
        .filter(|(st, b)| *st == StatusCode::BAD_REQUEST && b.contains("resolves outside"))
        .count();
    let other: Vec<_> = results
        .iter()
        .filter(|(st, b)| {
            !(*st == StatusCode::OK && *b == real
                || *st == StatusCode::BAD_REQUEST && b.contains("resolves outside"))
        })
        .take(3)
        .collect();
    eprintln!(
        "{runs} racing downloads: {leaked} returned the secret, {served} the session's file, \
         {refused} refused as outside; the session swapped {swaps} times; other: {other:?}"
    );
    assert_eq!(leaked, 0, "a download returned the host file");
    assert!(swaps > 0, "the attack ran");
    assert!(served > 0, "some downloads got the regular file");
    assert!(refused > 0, "some downloads met the link");
    assert!(other.is_empty(), "only the two answers: {other:?}");
}

#[tokio::test]
async fn swapping_a_folder_and_a_link_to_a_host_folder_never_uploads_into_the_host_folder() {
    let pool = TestPool::start().await;
    let host = tempfile::tempdir().unwrap();
    let s = Session::new(&pool);
    // `d` is the real folder, `l` the link to the host folder; the thread swaps them.
    s.exec(&format!(
        "{SWAPPER}\nA, B = b'd', b'l'\nos.mkdir('d')\nos.symlink({:?}, 'l')\nswapper.start()",
        host.path().to_str().unwrap()
    ))
    .await;

    let runs = 1500;
    let results = tokio::time::timeout(
        RACE_LIMIT,
        futures::stream::iter(0..runs)
            .map(|i| {
                let s = &s;
                async move {
                    // Half by `path=`, half by a nested name below the root.
                    if i % 2 == 0 {
                        s.upload(&format!("u{i}.txt"), "uploaded", "/mnt/data/d")
                            .await
                    } else {
                        s.upload(&format!("d/u{i}.txt"), "uploaded", "").await
                    }
                }
            })
            .buffer_unordered(CONCURRENCY)
            .collect::<Vec<_>>(),
    )
    .await
    .expect("the racing uploads end in time");
    let swaps = s.stop_swapping().await;

    let stored = results
        .iter()
        .filter(|(st, _)| *st == StatusCode::OK)
        .count();
    let refused = results
        .iter()
        .filter(|(st, b)| *st == StatusCode::BAD_REQUEST && b.contains("resolves outside"))
        .count();
    let other: Vec<_> = results
        .iter()
        .filter(|(st, b)| {
            !(*st == StatusCode::OK
                || *st == StatusCode::BAD_REQUEST && b.contains("resolves outside"))
        })
        .take(3)
        .collect();
    let in_host = all_entries(host.path());
    let folder = session_folder(&pool, "d");
    let in_session: usize = ["d", "l"]
        .iter()
        .map(|n| {
            let p = folder.join(n);
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
                std::fs::read_dir(&p).unwrap().count()
            } else {
                0
            }
        })
        .sum();
    eprintln!(
        "{runs} racing uploads: {} landed in the host folder, {stored} stored, {in_session} \
         files in the session's real folder, {refused} refused as outside; the session \
         swapped {swaps} times; other: {other:?}",
        in_host.len()
    );
    assert!(
        in_host.is_empty(),
        "uploads landed in the host folder: {in_host:?}"
    );
    assert!(swaps > 0, "the attack ran");
    assert!(stored > 0, "some uploads were stored");
    assert_eq!(
        in_session, stored,
        "every stored upload is in the real folder"
    );
    assert!(refused > 0, "some uploads met the link");
    assert!(other.is_empty(), "only the two answers: {other:?}");
}

/// Opens the FIFO for writing once when dropped: should a regression leave
/// server threads blocked opening it for reading, this lets them go, so a failing
/// test ends instead of hanging on the runtime's shutdown.
struct ReleaseFifo(PathBuf);

impl Drop for ReleaseFifo {
    fn drop(&mut self) {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.0);
    }
}

#[tokio::test]
async fn a_fifo_is_refused_at_once_and_never_ties_up_the_server() {
    let pool = TestPool::start().await;
    let s = Session::new(&pool);
    s.exec("import os\nos.mkfifo('pipe')\nopen('ok.txt', 'w').write('ok')")
        .await;
    let folder = session_folder(&pool, "pipe");
    let kind = std::fs::symlink_metadata(folder.join("pipe"))
        .unwrap()
        .file_type();
    assert!(kind.is_fifo(), "the session made a FIFO");
    let _release = ReleaseFifo(folder.join("pipe"));

    let (status, body) = s.download("pipe").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "SessionRequestValidationFailed");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("FIFO"), "{message}");

    let meta = s
        .request(Method::GET, s.url(&["files", "pipe"], &[]))
        .send()
        .await
        .expect("metadata answers");
    assert_eq!(meta.status(), StatusCode::BAD_REQUEST);
    let listing: Value = s
        .request(Method::GET, s.url(&["files"], &[]))
        .send()
        .await
        .expect("listing answers")
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = listing["value"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(names, ["ok.txt"], "the FIFO is left out of listings");

    // Many at once, more than the blocking pool would survive if they hung.
    let results = tokio::time::timeout(
        Duration::from_secs(120),
        futures::stream::iter(0..200)
            .map(|_| s.download("pipe"))
            .buffer_unordered(200)
            .collect::<Vec<_>>(),
    )
    .await
    .expect("200 FIFO downloads answer");
    let refused = results
        .iter()
        .filter(|(st, _)| *st == StatusCode::BAD_REQUEST)
        .count();
    assert_eq!(refused, 200);
    let (status, body) = tokio::time::timeout(Duration::from_secs(30), s.download("ok.txt"))
        .await
        .expect("a normal download answers promptly");
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok"));
    eprintln!("200 concurrent FIFO downloads: {refused} refused with 400; ok.txt still served");
    // Deleting removes the FIFO by its name.
    let del = s
        .request(Method::DELETE, s.url(&["files", "pipe"], &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), StatusCode::NO_CONTENT);
    assert!(std::fs::symlink_metadata(folder.join("pipe")).is_err());
}

#[tokio::test]
#[allow(clippy::items_after_statements)] // `Seen` is declared where the race it classifies starts
async fn swapping_a_folder_and_a_link_never_lists_reads_or_deletes_host_files() {
    let pool = TestPool::start().await;
    let host = tempfile::tempdir().unwrap();
    std::fs::write(host.path().join("host-only.txt"), "host").unwrap();
    let s = Session::new(&pool);
    s.exec(&format!(
        "{SWAPPER}\nA, B = b'd', b'l'\nos.mkdir('d')\nopen('d/mine.txt', 'w').write('mine')\n\
         os.symlink({:?}, 'l')\nswapper.start()",
        host.path().to_str().unwrap()
    ))
    .await;

    /// What one racing request saw.
    #[derive(Debug, PartialEq, Eq)]
    enum Seen {
        /// A listing of the session's own folder (`d` by either name).
        Mine,
        /// A recursive listing that met `d` mid-swap.
        Partial,
        /// 400 "resolves outside" (or 404 for a name only the host folder has).
        Refused,
        /// Anything naming or serving the host file.
        Host(String),
        /// Anything else.
        Other(u16, String),
    }
    let runs = 1200;
    let results = tokio::time::timeout(
        RACE_LIMIT,
        futures::stream::iter(0..runs)
            .map(|i| {
                let s = &s;
                async move {
                    let (method, url) = match i % 4 {
                        0 => (Method::GET, s.url(&["files"], &[("recursive", "true")])),
                        1 => (Method::GET, s.url(&["files"], &[("path", "d")])),
                        2 => (Method::GET, s.url(&["files", "d", "host-only.txt"], &[])),
                        _ => (Method::DELETE, s.url(&["files", "d", "host-only.txt"], &[])),
                    };
                    let resp = s.request(method, url).send().await.expect("an answer");
                    let status = resp.status();
                    let body = resp.text().await.unwrap_or_default();
                    if body.contains("\"host-only.txt\"") || status.is_success() && i % 4 >= 2 {
                        Seen::Host(body)
                    } else if status == StatusCode::OK && body.contains("mine.txt") {
                        Seen::Mine
                    } else if status == StatusCode::OK && i % 4 == 0 {
                        // A recursive listing may meet `d` as a folder and find it a
                        // link when entering it: then `d` is listed, empty.
                        Seen::Partial
                    } else if status == StatusCode::BAD_REQUEST && body.contains("resolves outside")
                        || status == StatusCode::NOT_FOUND && i % 4 >= 2
                    {
                        Seen::Refused
                    } else {
                        Seen::Other(status.as_u16(), body)
                    }
                }
            })
            .buffer_unordered(CONCURRENCY)
            .collect::<Vec<_>>(),
    )
    .await
    .expect("the racing requests end in time");
    let swaps = s.stop_swapping().await;

    let count = |f: fn(&Seen) -> bool| results.iter().filter(|r| f(r)).count();
    let host_seen: Vec<_> = results
        .iter()
        .filter(|r| matches!(r, Seen::Host(_)))
        .collect();
    let other: Vec<_> = results
        .iter()
        .filter(|r| matches!(r, Seen::Other(..)))
        .take(3)
        .collect();
    let (mine, refused) = (count(|r| *r == Seen::Mine), count(|r| *r == Seen::Refused));
    eprintln!(
        "{runs} racing listings, metadata reads and deletes: {} showed or touched the host \
         file, {mine} showed the session's folder, {refused} refused; the session swapped \
         {swaps} times; other: {other:?}",
        host_seen.len()
    );
    assert!(host_seen.is_empty(), "{host_seen:?}");
    assert!(
        host.path().join("host-only.txt").exists(),
        "the host file survived"
    );
    assert!(swaps > 0, "the attack ran");
    assert!(mine > 0 && refused > 0, "both sides of the swap were met");
    assert!(other.is_empty(), "{other:?}");
}

/// Runs the attacks above again as `nobody` (when run as root): the routes then
/// serve a pool whose folders belong to the pool's own user.
#[test]
fn the_file_attacks_also_fail_as_an_unprivileged_user() {
    common::rerun_as_nobody("the_file_attacks_also_fail");
}
