//! The local pool's file routes over real HTTP (`aca-api.md` §3.2–§3.5 family A,
//! §4.3 family B, §6 errors, §7 limits): uploads, listings, downloads, deletes,
//! awkward names, files made by session code, hostile names and the 128 MB limit.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::path::Path;

use common::{LIMIT, TestPool, identifier};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sessionpad::protocol::{ApiVersion, ExecutionStatus};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use url::Url;

const A: ApiVersion = ApiVersion::V2024_02_02;
const B: ApiVersion = ApiVersion::V2025_10_02;

/// One session of one pool, spoken to in one api-version.
struct Session<'a> {
    pool: &'a TestPool,
    http: reqwest::Client,
    version: ApiVersion,
    id: String,
}

impl<'a> Session<'a> {
    fn new(pool: &'a TestPool, version: ApiVersion) -> Self {
        Self {
            pool,
            http: reqwest::Client::new(),
            version,
            id: identifier(),
        }
    }

    fn family_a(&self) -> bool {
        self.version == A
    }

    /// `endpoint/<segments…>?api-version&identifier[&extra]`, each segment
    /// percent-encoded as one path segment.
    fn url(&self, segments: &[&str], extra: &[(&str, &str)]) -> Url {
        let mut url = Url::parse(&self.pool.pool.endpoint()).unwrap();
        url.path_segments_mut().unwrap().clear().extend(segments);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("api-version", self.version.as_str());
            q.append_pair("identifier", &self.id);
            for (k, v) in extra {
                q.append_pair(k, v);
            }
        }
        url
    }

    /// A URL whose path after the endpoint is `raw`, sent as it is.
    fn raw_url(&self, raw: &str) -> Url {
        let url = format!(
            "{}/{raw}?api-version={}&identifier={}",
            self.pool.pool.endpoint(),
            self.version,
            self.id
        );
        Url::parse(&url).unwrap()
    }

    fn request(&self, method: Method, url: Url) -> reqwest::RequestBuilder {
        self.http
            .request(method, url)
            .bearer_auth(self.pool.pool.token().unwrap())
    }

    /// Uploads `data` as `filename` on the family's route; `path` for family B.
    async fn upload(&self, filename: &str, data: Vec<u8>, path: Option<&str>) -> reqwest::Response {
        let part = reqwest::multipart::Part::bytes(data)
            .file_name(filename.to_string())
            .mime_str("application/octet-stream")
            .unwrap();
        let form = reqwest::multipart::Form::new().part("file", part);
        let extra: Vec<(&str, &str)> = path.map(|p| ("path", p)).into_iter().collect();
        let url = if self.family_a() {
            self.url(&["files", "upload"], &extra)
        } else {
            self.url(&["files"], &extra)
        };
        self.request(Method::POST, url)
            .multipart(form)
            .send()
            .await
            .unwrap()
    }

    /// Uploads and checks the answer's shape; returns (stored name, size).
    async fn upload_ok(&self, filename: &str, data: &[u8]) -> (String, u64) {
        let resp = self.upload(filename, data.to_vec(), None).await;
        assert_eq!(resp.status(), StatusCode::OK, "upload {filename}");
        let body: Value = resp.json().await.unwrap();
        if self.family_a() {
            assert_eq!(body["$id"], "1", "{body}");
            assert_eq!(body["value"].as_array().unwrap().len(), 1, "{body}");
            let props = &body["value"][0]["properties"];
            assert_eq!(body["value"][0]["$id"], "2");
            assert_eq!(props["$id"], "3");
            assert!(props["lastModifiedTime"].as_str().unwrap().ends_with('Z'));
            (
                props["filename"].as_str().unwrap().to_string(),
                props["size"].as_u64().unwrap(),
            )
        } else {
            assert_eq!(body["type"], "File", "{body}");
            assert!(body["contentType"].is_string(), "{body}");
            let at = body["lastModifiedAt"].as_str().unwrap();
            assert!(chrono::DateTime::parse_from_rfc3339(at).is_ok(), "{at}");
            assert_eq!(body["directory"], "", "{body}");
            (
                body["name"].as_str().unwrap().to_string(),
                body["sizeInBytes"].as_u64().unwrap(),
            )
        }
    }

    /// The listing of the data root: (name, size) of each entry.
    async fn list(&self) -> Vec<(String, u64)> {
        let resp = self
            .request(Method::GET, self.url(&["files"], &[]))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let body: Value = resp.json().await.unwrap();
        body["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                if self.family_a() {
                    let p = &e["properties"];
                    (
                        p["filename"].as_str().unwrap().into(),
                        p["size"].as_u64().unwrap(),
                    )
                } else {
                    (
                        e["name"].as_str().unwrap().into(),
                        e["sizeInBytes"].as_u64().unwrap(),
                    )
                }
            })
            .collect()
    }

    /// The family B listing with query `extra`: (name, directory, type) of each entry.
    async fn list_b(&self, extra: &[(&str, &str)]) -> Vec<(String, String, String)> {
        let resp = self
            .request(Method::GET, self.url(&["files"], extra))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{extra:?}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["nextLink"], Value::Null);
        let mut out: Vec<_> = body["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_string(),
                    e["directory"].as_str().unwrap().to_string(),
                    e["type"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        out.sort();
        out
    }

    /// The content URL of `name` (one encoded segment) on the family's route.
    fn content_url(&self, name: &str, extra: &[(&str, &str)]) -> Url {
        if self.family_a() {
            self.url(&["files", "content", name], extra)
        } else {
            self.url(&["files", name, "content"], extra)
        }
    }

    async fn get(&self, url: Url) -> reqwest::Response {
        self.request(Method::GET, url).send().await.unwrap()
    }

    async fn download(&self, name: &str) -> Vec<u8> {
        let resp = self.get(self.content_url(name, &[])).await;
        assert_eq!(resp.status(), StatusCode::OK, "download {name}");
        resp.bytes().await.unwrap().to_vec()
    }

    async fn exec(&self, code: &str) -> Value {
        let exec = self
            .pool
            .client(self.version)
            .execute(&self.id, code, LIMIT)
            .await
            .unwrap();
        assert_eq!(exec.status, ExecutionStatus::Succeeded, "{}", exec.stderr);
        exec.result.and_then(|v| v.json).unwrap_or(Value::Null)
    }
}

/// Asserts an Azure error answer (`aca-api.md` §6.1) with `status` and `code`.
async fn assert_error(resp: reqwest::Response, status: StatusCode, code: &str) {
    assert_eq!(resp.status(), status, "{}", resp.url());
    assert_eq!(resp.headers()["x-ms-error-code"], code);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
}

/// Pseudo-random bytes (xorshift), reproducible.
fn noise(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24).to_le_bytes()[0]
        })
        .collect()
}

/// Every file below `dir`, recursively.
fn all_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(read) = std::fs::read_dir(dir) {
        for e in read.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(all_files(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

const NAMES: [&str; 6] = [
    "with space.txt",
    "ünï cødé ✓.txt",
    "hash#tag.txt",
    "100%.txt",
    "a&b=c;d+e.txt",
    "50%25off.txt",
];

#[tokio::test]
async fn upload_list_download_delete_in_both_families() {
    let pool = TestPool::start().await;
    for version in [A, B] {
        let s = Session::new(&pool, version);
        let blob = noise(300 * 1024);
        assert_eq!(
            s.upload_ok("blob.bin", &blob).await,
            ("blob.bin".into(), 300 * 1024)
        );
        for name in NAMES {
            assert_eq!(
                s.upload_ok(name, name.as_bytes()).await.0,
                name,
                "{version}"
            );
        }
        assert_eq!(
            s.upload_ok("/mnt/data/x.csv", b"a,b\n1,2\n").await.0,
            "x.csv"
        );

        let mut listed = s.list().await;
        listed.sort();
        let mut expected: Vec<(String, u64)> = NAMES
            .iter()
            .map(|n| (n.to_string(), n.len() as u64))
            .chain([("blob.bin".into(), 300 * 1024), ("x.csv".into(), 8)])
            .collect();
        expected.sort();
        assert_eq!(listed, expected, "{version}");

        assert!(
            s.download("blob.bin").await == blob,
            "{version}: byte-identical"
        );
        for name in NAMES {
            assert_eq!(s.download(name).await, name.as_bytes(), "{version}: {name}");
        }
        // Sent raw: `%25` is not decoded when only the raw name exists.
        let raw = if s.family_a() {
            "files/content/50%25off.txt"
        } else {
            "files/50%25off.txt/content"
        };
        assert_eq!(
            s.get(s.raw_url(raw)).await.text().await.unwrap(),
            "50%25off.txt"
        );
        // A full /mnt/data path names the same file, encoded or not.
        assert_eq!(s.download("/mnt/data/x.csv").await, b"a,b\n1,2\n");
        let raw = if s.family_a() {
            "files/content//mnt/data/x.csv"
        } else {
            "files//mnt/data/x.csv/content"
        };
        assert_eq!(
            s.get(s.raw_url(raw)).await.text().await.unwrap(),
            "a,b\n1,2\n"
        );

        let resp = s.get(s.content_url("x.csv", &[])).await;
        let kind = resp.headers()["content-type"].to_str().unwrap().to_string();
        assert_eq!(kind, "text/csv; charset=utf-8");
        assert_eq!(resp.headers()["content-length"], "8");

        // Metadata of one file.
        let meta: Value = s
            .get(s.url(&["files", "x.csv"], &[]))
            .await
            .json()
            .await
            .unwrap();
        if s.family_a() {
            assert_eq!(
                meta["value"][0]["properties"]["filename"], "x.csv",
                "{meta}"
            );
            assert_eq!(meta["value"][0]["properties"]["size"], 8);
        } else {
            assert_eq!(meta["name"], "x.csv", "{meta}");
            assert_eq!(meta["sizeInBytes"], 8);
            assert_eq!(meta["contentType"], "text/csv; charset=utf-8");
        }

        // Delete, then it is gone.
        let resp = s
            .request(Method::DELETE, s.url(&["files", "hash#tag.txt"], &[]))
            .send()
            .await
            .unwrap();
        if s.family_a() {
            assert_eq!(resp.status(), StatusCode::OK);
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body, json!({"message": "file deleted successfully"}));
        } else {
            assert_eq!(resp.status(), StatusCode::NO_CONTENT);
        }
        let gone = s.get(s.content_url("hash#tag.txt", &[])).await;
        assert_error(gone, StatusCode::NOT_FOUND, "FileNotFound").await;
        let gone = s
            .request(Method::DELETE, s.url(&["files", "hash#tag.txt"], &[]))
            .send()
            .await
            .unwrap();
        assert_error(gone, StatusCode::NOT_FOUND, "FileNotFound").await;
        assert!(!s.list().await.iter().any(|(n, _)| n == "hash#tag.txt"));
    }
}

#[tokio::test]
async fn files_made_by_code_are_listed_and_downloadable() {
    let pool = TestPool::start().await;
    let make = "import os\nopen('made.txt','w').write('hi')\n\
                os.makedirs('sub/inner', exist_ok=True)\n\
                open('sub/top.txt','w').write('top')\n\
                open('sub/inner/deep.txt','w').write('deep')";
    for version in [A, B] {
        let s = Session::new(&pool, version);
        s.exec(make).await;
        let listed = s.list().await;
        assert!(
            listed.contains(&("made.txt".into(), 2)),
            "{version}: {listed:?}"
        );
        assert_eq!(s.download("made.txt").await, b"hi");
        if s.family_a() {
            assert_eq!(
                listed.len(),
                1,
                "family A lists the files of /mnt/data only: {listed:?}"
            );
            continue;
        }
        let entry = |n: &str, d: &str, t: &str| (n.to_string(), d.to_string(), t.to_string());
        assert_eq!(
            s.list_b(&[("path", "/")]).await,
            [entry("made.txt", "", "File"), entry("sub", "", "Directory")]
        );
        let sub = [
            entry("inner", "", "Directory"),
            entry("top.txt", "", "File"),
        ];
        assert_eq!(s.list_b(&[("path", "sub")]).await, sub);
        assert_eq!(s.list_b(&[("path", "/mnt/data/sub")]).await, sub);
        assert_eq!(
            s.list_b(&[("path", "/mnt/data/sub"), ("recursive", "true")])
                .await,
            [
                entry("deep.txt", "inner", "File"),
                entry("inner", "", "Directory"),
                entry("top.txt", "", "File"),
            ]
        );
        // Sub-folders: in `path`, in the name (encoded `/`), or raw `/`.
        let deep = s.content_url("inner/deep.txt", &[("path", "/mnt/data/sub")]);
        assert_eq!(s.get(deep).await.text().await.unwrap(), "deep");
        assert_eq!(s.download("sub/inner/deep.txt").await, b"deep");
        let raw = s.raw_url("files/sub/inner/deep.txt/content");
        assert_eq!(s.get(raw).await.text().await.unwrap(), "deep");
        let missing = s.get(s.url(&["files"], &[("path", "nowhere")])).await;
        assert_error(missing, StatusCode::NOT_FOUND, "DirectoryNotFound").await;

        // An upload into a new folder is seen by the code at /mnt/data.
        let resp = s
            .upload("up.txt", b"up".to_vec(), Some("/mnt/data/newdir"))
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(
            (&body["name"], &body["directory"]),
            (&json!("up.txt"), &json!(""))
        );
        let read = s.exec("open('/mnt/data/newdir/up.txt').read()").await;
        assert_eq!(read, json!("up"));
    }
}

/// Sends `GET <raw path>` as it is, bypassing URL normalisation; returns the status.
async fn raw_get(pool: &TestPool, raw: &str) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(pool.pool.addr())
        .await
        .unwrap();
    let req = format!(
        "GET {raw} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        pool.pool.token().unwrap()
    );
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer.split(' ').nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn hostile_names_never_leave_the_session_folder() {
    let pool = TestPool::start().await;
    let sessions = pool.dir.path().join("sessions");
    for version in [A, B] {
        let s = Session::new(&pool, version);
        let bad = "SessionRequestValidationFailed";
        for name in [
            "../evil",
            "../../evil",
            "/etc/evil",
            "a/../../evil",
            "/mnt/data/../evil",
        ] {
            let resp = s.upload(name, b"x".to_vec(), None).await;
            assert_error(resp, StatusCode::BAD_REQUEST, bad).await;
        }
        for name in [
            "../../../etc/passwd",
            "/etc/passwd",
            "/mnt/data/../../etc/passwd",
            "a\0b",
        ] {
            assert_error(
                s.get(s.content_url(name, &[])).await,
                StatusCode::BAD_REQUEST,
                bad,
            )
            .await;
            let del = s
                .request(Method::DELETE, s.url(&["files", name], &[]))
                .send()
                .await;
            assert_error(del.unwrap(), StatusCode::BAD_REQUEST, bad).await;
        }
        // Decoded once only: a double-encoded `../` is an odd name that is not there.
        let double = if s.family_a() {
            "files/content/%252e%252e%252f%252e%252e%252fetc%252fpasswd"
        } else {
            "files/%252e%252e%252f%252e%252e%252fetc%252fpasswd/content"
        };
        let resp = s.get(s.raw_url(double)).await;
        assert_error(resp, StatusCode::NOT_FOUND, "FileNotFound").await;
        let query = [
            ("api-version", version.as_str()),
            ("identifier", s.id.as_str()),
        ];
        let q = serde_urlencoded_pairs(&query);
        assert_eq!(
            raw_get(&pool, &format!("/files/content/../../../etc/passwd?{q}")).await,
            400
        );
        assert_eq!(
            raw_get(&pool, &format!("/files/../../etc/passwd/content?{q}")).await,
            400
        );
        if !s.family_a() {
            for path in ["../", "/etc", "sub/../.."] {
                let resp = s.get(s.url(&["files"], &[("path", path)])).await;
                assert_error(resp, StatusCode::BAD_REQUEST, bad).await;
                let resp = s.upload("x.txt", b"x".to_vec(), Some(path)).await;
                assert_error(resp, StatusCode::BAD_REQUEST, bad).await;
            }
        }
    }
    assert!(
        !all_files(pool.dir.path())
            .iter()
            .any(|p| p.ends_with("evil")),
        "nothing written outside"
    );

    // Links made by code: followed only when they stay inside the folder.
    let s = Session::new(&pool, B);
    s.exec(
        "import os\nopen('inside.txt','w').write('in')\n\
         os.symlink('/etc/passwd', 'passwd_link')\nos.symlink('/etc', 'etc_link')\n\
         os.symlink('inside.txt', 'good_link')",
    )
    .await;
    let bad = "SessionRequestValidationFailed";
    for name in ["passwd_link", "etc_link/passwd", "etc_link/hostname"] {
        assert_error(
            s.get(s.content_url(name, &[])).await,
            StatusCode::BAD_REQUEST,
            bad,
        )
        .await;
    }
    let resp = s.get(s.url(&["files"], &[("path", "etc_link")])).await;
    assert_error(resp, StatusCode::BAD_REQUEST, bad).await;
    let resp = s.upload("evil", b"x".to_vec(), Some("etc_link")).await;
    assert_error(resp, StatusCode::BAD_REQUEST, bad).await;
    assert_eq!(s.download("good_link").await, b"in");
    let names: Vec<String> = s.list_b(&[]).await.into_iter().map(|e| e.0).collect();
    assert_eq!(
        names,
        ["good_link", "inside.txt"],
        "outside links are not listed"
    );
    // Deleting a link removes the link, not its target.
    let resp = s
        .request(Method::DELETE, s.url(&["files", "good_link"], &[]))
        .send()
        .await;
    assert_eq!(resp.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(s.download("inside.txt").await, b"in");
    assert!(all_files(&sessions).iter().all(|p| !p.ends_with("evil")));
}

fn serde_urlencoded_pairs(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

#[tokio::test]
async fn an_upload_over_128_mb_is_refused_and_leaves_nothing() {
    let pool = TestPool::start().await;
    // Streamed without Content-Length (chunked), and with a declared length.
    for (version, declared) in [(A, false), (B, false), (B, true)] {
        let s = Session::new(&pool, version);
        let size = 129u64 << 20;
        let chunks =
            (0..129).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![0u8; 1 << 20])));
        let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
        let part = if declared {
            reqwest::multipart::Part::stream_with_length(body, size)
        } else {
            reqwest::multipart::Part::stream(body)
        };
        let form = reqwest::multipart::Form::new().part("file", part.file_name("big.bin"));
        let url = if s.family_a() {
            s.url(&["files", "upload"], &[])
        } else {
            s.url(&["files"], &[])
        };
        let resp = s
            .request(Method::POST, url)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_error(resp, StatusCode::PAYLOAD_TOO_LARGE, "FileTooLarge").await;
        let left: Vec<_> = all_files(&pool.dir.path().join("sessions"))
            .into_iter()
            .filter(|p| !p.ends_with("small.txt"))
            .collect();
        assert!(left.is_empty(), "{version}: left behind {left:?}");
        assert!(s.list().await.is_empty());
        // The session still takes a small upload afterwards.
        assert_eq!(s.upload_ok("small.txt", b"ok").await.1, 2);
    }
}

#[tokio::test]
async fn file_routes_need_the_token() {
    let pool = TestPool::start().await;
    let s = Session::new(&pool, B);
    let http = reqwest::Client::new();
    for (method, segments) in [
        (Method::GET, &["files"][..]),
        (Method::POST, &["files"][..]),
        (Method::POST, &["files", "upload"][..]),
        (Method::GET, &["files", "content", "x"][..]),
        (Method::GET, &["files", "x", "content"][..]),
        (Method::DELETE, &["files", "x"][..]),
    ] {
        let resp = http
            .request(method.clone(), s.url(segments, &[]))
            .send()
            .await
            .unwrap();
        assert_error(resp, StatusCode::UNAUTHORIZED, "Unauthorized").await;
        let wrong = http
            .request(method, s.url(segments, &[]))
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    }
    // Without a token nothing was created.
    assert!(all_files(&pool.dir.path().join("sessions")).is_empty());
}
