//! Shared helpers of the integration tests: a real local pool (real kernels, real
//! HTTP on loopback) and clients for it.

#![allow(dead_code)]

use std::io::BufRead;
use std::time::Duration;

use sessionpad::client::{ApiVersion, SessionClient, Target};
use sessionpad::pool::{LocalPool, PoolOptions};

/// A local pool on an ephemeral port with its session folders in a temp dir.
pub struct TestPool {
    pub pool: LocalPool,
    pub dir: tempfile::TempDir,
}

impl TestPool {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Starts a pool after `adjust` changed its options.
    pub async fn start_with(adjust: impl FnOnce(&mut PoolOptions)) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut opts = PoolOptions::embedded();
        opts.sessions_dir = dir.path().join("sessions");
        adjust(&mut opts);
        let pool = LocalPool::start(opts, &|line| eprintln!("[python env] {line}"))
            .await
            .expect("local pool starts");
        Self { pool, dir }
    }

    /// The session folders the pool has now (below its own `pool-<tag>` folder).
    pub fn session_folders(&self) -> usize {
        let Ok(pools) = std::fs::read_dir(self.dir.path().join("sessions")) else {
            return 0;
        };
        pools
            .flatten()
            .filter_map(|p| std::fs::read_dir(p.path()).ok())
            .map(|d| d.count())
            .sum()
    }

    pub fn client(&self, version: ApiVersion) -> SessionClient {
        SessionClient::new(Target {
            endpoint: self.pool.endpoint(),
            api_version: version,
            token: self.pool.token().map(str::to_string),
        })
        .expect("client")
    }
}

pub const LIMIT: Duration = Duration::from_secs(60);

/// A fresh random session identifier.
pub fn identifier() -> String {
    format!("test-{}", uuid::Uuid::new_v4().simple())
}

/// Raw HTTP access to a pool, for checking wire shapes exactly.
pub struct Raw {
    pub http: reqwest::Client,
    pub endpoint: String,
    pub token: String,
}

impl Raw {
    pub fn new(pool: &TestPool) -> Self {
        Self {
            http: reqwest::Client::new(),
            endpoint: pool.pool.endpoint(),
            token: pool.pool.token().unwrap_or_default().to_string(),
        }
    }

    /// A request to `path_and_query` (starting with `/`) with the bearer token.
    pub fn req(&self, method: reqwest::Method, path_and_query: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{}", self.endpoint, path_and_query))
            .bearer_auth(&self.token)
    }

    /// POSTs a JSON body; returns status, the `x-ms-error-code` header and the JSON body.
    pub async fn post_json(
        &self,
        path_and_query: &str,
        body: serde_json::Value,
    ) -> (u16, reqwest::header::HeaderMap, serde_json::Value) {
        let resp = self
            .req(reqwest::Method::POST, path_and_query)
            .json(&body)
            .send()
            .await
            .expect("request");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let json = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
        (status, headers, json)
    }

    /// GETs (or DELETEs) and returns status and the JSON (or text) body.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path_and_query: &str,
    ) -> (u16, serde_json::Value) {
        let resp = self
            .req(method, path_and_query)
            .send()
            .await
            .expect("request");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
        )
    }
}

/// `sessionpad serve --port 0` with a known token; returns the child and endpoint.
/// Where bubblewrap does not work, with `--no-sandbox` (serve refuses otherwise).
pub fn serve(data_dir: &std::path::Path, token: &str) -> (std::process::Child, String) {
    let mut args = vec![
        "serve",
        "--port",
        "0",
        "--token",
        token,
        "--ready-sessions",
        "1",
    ];
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        args.push("--no-sandbox");
    }
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sessionpad"))
        .args(args)
        .env("SESSIONPAD_DATA_DIR", data_dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let endpoint = loop {
        let line = lines.next().expect("serve printed its endpoint").unwrap();
        if let Some(rest) = line.split("pool management endpoint:").nth(1) {
            break rest.trim().to_string();
        }
    };
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, endpoint)
}
