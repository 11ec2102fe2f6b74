//! Shared helpers of the integration tests: a real local pool (real kernels, real
//! HTTP on loopback) and clients for it.

#![allow(dead_code)]

use std::io::BufRead;
use std::time::Duration;

use sessionpad::client::{SessionClient, Target};

use sessionpad::pool::{LocalPool, PoolOptions};
use sessionpad::protocol::ApiVersion;

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

    /// A pool whose sessions run `container_type`, with one ready session.
    pub async fn start_as(container_type: sessionpad::protocol::ContainerType) -> Self {
        Self::start_with(|o| {
            o.container_type = container_type;
            o.ready_sessions = 1;
        })
        .await
    }

    /// A pool of `container_type` with one ready session that records every
    /// call in the ledger of `data` (`data/ledger.sqlite3`, default limits).
    pub async fn recording(
        data: &std::path::Path,
        container_type: sessionpad::protocol::ContainerType,
    ) -> Self {
        let path = data.join(sessionpad::ledger::FILE_NAME);
        Self::start_with(|o| {
            o.container_type = container_type;
            o.ready_sessions = 1;
            o.ledger = Some(sessionpad::ledger::LedgerOptions {
                path,
                limits: sessionpad::ledger::LedgerConfig::default().limits(),
                files: true,
            });
        })
        .await
    }

    /// The session folders the pool has now (below its own `pool-<tag>` folder).
    pub fn session_folders(&self) -> usize {
        let Ok(pools) = std::fs::read_dir(self.dir.path().join("sessions")) else {
            return 0;
        };
        pools
            .flatten()
            .filter_map(|p| std::fs::read_dir(p.path()).ok())
            .map(Iterator::count)
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

/// The names of the files in the top folder of `identifier`'s `/mnt/data`.
pub async fn file_names(client: &SessionClient, identifier: &str) -> Vec<String> {
    client
        .list_files(identifier, None, false)
        .await
        .expect("list the session's files")
        .into_iter()
        .map(|f| f.name)
        .collect()
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

/// One JSON-RPC request to the pool's MCP endpoint (`/mcp`), as curl sends it
/// in the service's tutorials (JSON body, `x-ms-apikey`, no `Accept`).
pub struct Mcp {
    pub http: reqwest::Client,
    pub url: String,
    pub key: Option<String>,
}

impl Mcp {
    /// The MCP endpoint of `pool` with its API key.
    pub fn new(pool: &TestPool) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: pool.pool.mcp_endpoint(),
            key: pool.pool.mcp_key().map(str::to_string),
        }
    }

    /// POSTs `body` with `headers` only (no key unless given); returns the status
    /// and the JSON (or text) body.
    pub async fn post_with(
        &self,
        headers: &[(&str, &str)],
        body: &serde_json::Value,
    ) -> (u16, serde_json::Value) {
        let mut req = self.http.post(&self.url).json(body);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
        )
    }

    /// A JSON-RPC request with the pool's key; returns the whole answer.
    pub async fn request(&self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let key = self.key.clone().unwrap_or_default();
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": "1", "method": method, "params": params});
        let (status, answer) = self.post_with(&[("x-ms-apikey", &key)], &body).await;
        assert_eq!(status, 200, "{method}: {answer}");
        answer
    }

    /// `tools/call` of `name` with `arguments`; returns the call's `result`.
    pub async fn tool(&self, name: &str, arguments: serde_json::Value) -> serde_json::Value {
        let answer = self
            .request(
                "tools/call",
                serde_json::json!({"name": name, "arguments": arguments}),
            )
            .await;
        answer["result"].clone()
    }

    /// `launchShell`: a new environment's id.
    pub async fn launch(&self) -> String {
        let result = self.tool("launchShell", serde_json::json!({})).await;
        result["structuredContent"]["environmentId"]
            .as_str()
            .expect("environmentId")
            .to_string()
    }
}

/// Builds (once, in the cache directory) a venv with the packages of
/// `tests/compat/requirements-NAME.txt`; returns its python.
pub fn client_env(name: &str) -> std::path::PathBuf {
    use std::path::Path;
    use std::process::Command;
    let root = sessionpad::dirs::cache_dir().join("compat");
    std::fs::create_dir_all(&root).unwrap();
    let req =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/compat/requirements-{name}.txt"));
    let wanted = std::fs::read_to_string(&req).unwrap();
    let dir = root.join(name);
    let lock = std::fs::File::create(root.join(format!("{name}.lock"))).unwrap();
    lock.lock().unwrap();
    let marker = dir.join(".sessionpad-ready");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str()) {
        let _ = std::fs::remove_dir_all(&dir);
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(ok.success(), "python3 -m venv");
        let ok = Command::new(dir.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&req)
            .status()
            .unwrap();
        assert!(ok.success(), "pip install -r {}", req.display());
        std::fs::write(&marker, &wanted).unwrap();
    }
    dir.join("bin/python")
}

/// A running `sessionpad serve`, killed and reaped when dropped (also when a
/// test fails).
pub struct Served(pub std::process::Child);

impl Drop for Served {
    fn drop(&mut self) {
        end_gracefully(&mut self.0);
    }
}

/// Ends a `serve` child the way Ctrl+C does (SIGTERM: its kernels end, its
/// sessions' tmpfs mounts and cgroups go), and kills it only if it is still
/// there after 15 s: a SIGKILL would leave those behind.
pub fn end_gracefully(child: &mut std::process::Child) {
    // Already reaped (its pid may belong to another process by now).
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_secs(15) {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// `sessionpad serve --port 0` with a known token; returns the child and endpoint.
/// Where the sandbox does not work, with `--no-sandbox` (serve refuses otherwise).
pub fn serve(data_dir: &std::path::Path, token: &str) -> (std::process::Child, String) {
    let mut cmd = serve_command(data_dir, token, 1);
    cmd.stderr(std::process::Stdio::null());
    spawn_serve(cmd)
}

/// The command of [`serve`] with `ready` ready kernels, stdout piped, for a test
/// to adjust (environment, stderr) before [`spawn_serve`].
pub fn serve_command(
    data_dir: &std::path::Path,
    token: &str,
    ready: usize,
) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sessionpad"));
    cmd.args(["serve", "--port", "0", "--token", token, "--ready-sessions"])
        .arg(ready.to_string())
        .env("SESSIONPAD_DATA_DIR", data_dir)
        .stdout(std::process::Stdio::piped());
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        cmd.arg("--no-sandbox");
    }
    cmd
}

/// Spawns a serve command (stdout piped) and waits for the endpoint it prints;
/// stdout keeps being drained so the server never blocks on a full pipe.
pub fn spawn_serve(mut cmd: std::process::Command) -> (std::process::Child, String) {
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let endpoint = loop {
        let line = lines.next().expect("serve printed its endpoint").unwrap();
        if let Some(rest) = line.split("pool management endpoint:").nth(1) {
            break rest.trim().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, endpoint)
}

/// Set in the environment of a test binary re-run as `nobody`.
pub const NESTED: &str = "SESSIONPAD_SANDBOX_TESTS_NESTED";

/// Runs every test of the current test binary but those matching `skip` again as
/// `nobody`, when this process runs as root (and `/usr/bin/python3` is there
/// to build a Python environment nobody can read): the local pool then sandboxes with user namespaces and limits with
/// rlimits. Does nothing in the re-run itself or when not root. Panics when the
/// re-run fails or finds no usable sandbox.
pub fn rerun_as_nobody(skip: &str) {
    use std::os::unix::process::CommandExt;
    use std::path::{Path, PathBuf};
    // SAFETY: geteuid(2) cannot fail.
    if std::env::var_os(NESTED).is_some() || unsafe { libc::geteuid() } != 0 {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    if !Path::new("/usr/bin/python3").exists() {
        eprintln!("skipped: no /usr/bin/python3 to run as nobody");
        return;
    }
    // A home of its own, outside anything root keeps private.
    let home = PathBuf::from("/tmp/sessionpad-unprivileged-tests");
    std::fs::create_dir_all(&home).unwrap();
    let _ = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(&home)
        .status();
    // How this machine reaches PyPI (a mirror, a proxy and its certificate)
    // stays: the re-run builds its own Python environment from there.
    let network = std::env::vars().filter(|(k, _)| {
        k.starts_with("PIP_")
            || k.starts_with("UV_")
            || matches!(
                k.as_str(),
                "SSL_CERT_FILE"
                    | "SSL_CERT_DIR"
                    | "REQUESTS_CA_BUNDLE"
                    | "HTTPS_PROXY"
                    | "HTTP_PROXY"
                    | "NO_PROXY"
                    | "https_proxy"
                    | "http_proxy"
                    | "no_proxy"
            )
    });
    // std drops the supplementary groups too when root changes the uid.
    let out = std::process::Command::new(&exe)
        .uid(65534)
        .gid(65534)
        .args(["--test-threads=2", "--nocapture", "--skip", skip])
        .env_clear()
        .envs(network)
        .env(NESTED, "1")
        .env("HOME", &home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("SESSIONPAD_CACHE_DIR", home.join("cache"))
        .env("SESSIONPAD_DATA_DIR", home.join("data"))
        .env("SESSIONPAD_BASE_PYTHON", "/usr/bin/python3")
        .env("TMPDIR", "/tmp")
        .current_dir(&home)
        .output()
        .expect("run the tests as nobody");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "as nobody:\n{stdout}\n{}",
        &stderr[stderr.len().saturating_sub(4000)..]
    );
    assert!(stdout.contains("test result: ok"), "{stdout}");
    assert!(
        !stderr.contains("skipped:"),
        "the sandbox was not usable as nobody:\n{stderr}"
    );
}

/// Whether this test process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Says why a sandbox test did not attack. Under CI (`CI` set) that is a
/// failure: CI must prove the sandbox, not skip it.
pub fn sandbox_tests_skipped(why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "the sandbox tests cannot run on this CI machine: {why}"
    );
    eprintln!("skipped: {why}");
}

/// Makes `cmd` start where the machine refuses a sandbox, for real: as root,
/// without `CAP_SYS_ADMIN` in its bounding set (as in a container started
/// without it); as a user, in a user namespace of its own (ids mapped to
/// themselves) whose `user.max_user_namespaces` is 0, so no more can be made.
pub fn forbid_sandbox(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let root = is_root();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let uid_map = format!("{uid} {uid} 1\n").into_bytes();
    let gid_map = format!("{gid} {gid} 1\n").into_bytes();
    let write = |path: &std::ffi::CStr, data: &[u8]| -> std::io::Result<()> {
        // SAFETY: open/write/close on a valid C string and buffer.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let n = libc::write(fd, data.as_ptr().cast(), data.len());
            libc::close(fd);
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: system calls only, on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if root {
                // CAP_SYS_ADMIN is capability 21.
                if libc::prctl(libc::PR_CAPBSET_DROP, 21, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else {
                if libc::unshare(libc::CLONE_NEWUSER) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                write(c"/proc/self/setgroups", b"deny")?;
                write(c"/proc/self/uid_map", &uid_map)?;
                write(c"/proc/self/gid_map", &gid_map)?;
                write(c"/proc/sys/user/max_user_namespaces", b"0")?;
            }
            Ok(())
        });
    }
}

/// A reqwest client naming itself `agent` (its `User-Agent`), as an agent's
/// HTTP client does.
pub fn http_as(agent: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(agent)
        .build()
        .unwrap()
}

/// The `sessionpad` binary over the data folder `data`
/// (`SESSIONPAD_DATA_DIR`), with no configuration file (a `none.toml` that
/// does not exist) and no endpoint or token from the environment: a command
/// for a test to add its arguments (and folder, pipes) to.
pub fn sessionpad_command(data: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sessionpad"));
    cmd.env("SESSIONPAD_DATA_DIR", data)
        .env("SESSIONPAD_CONFIG", data.join("none.toml"))
        .env_remove("POOL_MANAGEMENT_ENDPOINT")
        .env_remove("SESSIONPAD_TOKEN");
    cmd
}

/// Runs `cmd` to its end and returns its stdout as text; panics, naming the
/// command, its exit status and its stderr, when it did not succeed.
pub fn stdout_ok(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().expect("run sessionpad");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `sessionpad ARGS` over the data folder `data` ([`sessionpad_command`]),
/// which must succeed ([`stdout_ok`]): its stdout.
pub fn sessionpad_ok(data: &std::path::Path, args: &[&str]) -> String {
    stdout_ok(sessionpad_command(data).args(args))
}

/// `sessionpad log --json ARGS` over the ledger in `data`: one JSON value per
/// recorded call, in recording order.
pub fn log_json(data: &std::path::Path, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["log", "--json"];
    all.extend_from_slice(args);
    sessionpad_ok(data, &all)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every byte of the ledger's files in `data` (database, WAL, shared memory).
pub fn ledger_bytes(data: &std::path::Path) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let path = data.join(format!("{}{suffix}", sessionpad::ledger::FILE_NAME));
        if let Ok(bytes) = std::fs::read(path) {
            all.extend(bytes);
        }
    }
    all
}

/// A `/proc/PID/status` field given in kB (`VmRSS:`, `VmHWM:`), as bytes.
pub fn proc_status_bytes(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap();
    kb * 1024
}

/// Panics when the pool of process `pid` (a `serve` that has ended) left a
/// session's tmpfs mount (`…/pool-<pid>-<tag>/<identifier>`, root pools) or a
/// cgroup (`sessionpad-<pid>-<tag>`, v1 controllers or v2) behind.
pub fn assert_pool_left_nothing(pid: u32) {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let folder = format!("/pool-{pid}-");
    let left: Vec<&str> = mounts.lines().filter(|l| l.contains(&folder)).collect();
    assert!(left.is_empty(), "mounts left behind: {left:#?}");
    let cgroup = format!("sessionpad-{pid}-");
    let root = std::path::Path::new("/sys/fs/cgroup");
    let mut dirs = vec![root.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(root) {
        dirs.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(
                !name.starts_with(&cgroup),
                "cgroup left behind: {}",
                e.path().display()
            );
        }
    }
}
