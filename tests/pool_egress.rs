//! The local pool's egress proxy (issue 29, `serve --egress allow=…` and
//! `--egress audit`), run for real in sandboxed kernels: a cell's `urllib`
//! reaches an allowed HTTP server on this machine through the proxy (plain
//! HTTP and a CONNECT tunnel), a request through the proxy to another port is
//! refused before anything is sent there, a raw socket finds no route (the
//! session's namespace holds only `lo`), names do not resolve in the session,
//! and every attempt comes back in the execution's reply (`sessionpadNetwork`)
//! with its bytes. Each attack prints what it tries before the step that must
//! fail. All traffic goes to loopback addresses; the one address off the
//! machine is only `connect()`ed over UDP, which sends nothing.
//!
//! As root (CI) and, through `the_egress_tests_also_hold_as_an_unprivileged_user`,
//! again as `nobody`.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Raw, TestPool, identifier};
use serde_json::{Value, json};
use sessionpad::protocol::egress::Egress;

/// A small HTTP server on 127.0.0.1 that answers `hello from PORT` to any
/// request and counts the requests it got.
struct Server {
    port: u16,
    hits: Arc<AtomicUsize>,
}

async fn server() -> Server {
    let hits = Arc::new(AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let counted = Arc::clone(&hits);
    let app = axum::Router::new().fallback(move || {
        let counted = Arc::clone(&counted);
        async move {
            counted.fetch_add(1, Ordering::SeqCst);
            format!("hello from {port}")
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Server { port, hits }
}

/// A pool whose sessions run under `policy`; `None` (and a note) where this
/// machine cannot build the sandbox, a failure under CI.
async fn pool(policy: &str) -> Option<TestPool> {
    let policy: Egress = policy.parse().unwrap();
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        common::sandbox_tests_skipped("the sandbox cannot be built here");
        return None;
    }
    let pool = TestPool::start_with(|o| {
        o.ready_sessions = 1;
        o.egress = policy;
    })
    .await;
    assert!(pool.pool.isolation().is_sandboxed());
    Some(pool)
}

/// Runs `code` (family B, 2025-10-02-preview) and returns the whole reply.
async fn run(pool: &TestPool, id: &str, code: &str) -> Value {
    let (status, _, reply) = Raw::new(pool)
        .post_json(
            &format!("/executions?api-version=2025-10-02-preview&identifier={id}"),
            json!({"code": code, "timeoutInSeconds": 60}),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["status"], "Succeeded", "{reply}");
    reply
}

fn stdout(reply: &Value) -> String {
    let out = reply["result"]["stdout"].as_str().unwrap_or_default();
    assert!(
        out.trim_end().ends_with("done"),
        "the cell did not run to its end: {reply}"
    );
    out.to_string()
}

/// The attempts of a reply, as `host:port decision bytes>0`, and ` direct`
/// after one made outside the proxy.
fn attempts(reply: &Value) -> Vec<String> {
    reply["sessionpadNetwork"]
        .as_array()
        .unwrap_or_else(|| panic!("no sessionpadNetwork: {reply}"))
        .iter()
        .map(|a| {
            assert!(a["at"].as_str().is_some_and(|t| t.ends_with('Z')), "{a}");
            format!(
                "{}:{} {} {}{}",
                a["host"].as_str().unwrap(),
                a["port"],
                a["decision"].as_str().unwrap(),
                if a["bytes"].as_u64().unwrap() > 0 {
                    "bytes"
                } else {
                    "0"
                },
                match a["via"].as_str().unwrap() {
                    "proxy" => "",
                    "direct" => " direct",
                    via => panic!("via {via:?}"),
                }
            )
        })
        .collect()
}

/// The cell of the issue's check: urllib to the allowed server (plain HTTP,
/// then through a CONNECT tunnel as HTTPS would go), urllib and a tunnel to
/// the other port, a raw TCP socket to the allowed server, a UDP `connect()`
/// to an address off the machine (a route lookup, no packet), a name lookup.
fn cell(allowed: u16, other: u16) -> String {
    format!(
        r#"
import http.client, os, socket, urllib.request
print("proxy", os.environ["HTTP_PROXY"], os.environ["HTTPS_PROXY"])
print("trying urllib to the allowed server")
print("got", urllib.request.urlopen("http://127.0.0.1:{allowed}/a", timeout=10).read().decode())
print("trying a CONNECT tunnel to the allowed server")
c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
c.set_tunnel("127.0.0.1", {allowed})
c.request("GET", "/tunnelled")
print("tunnel got", c.getresponse().read().decode())
print("trying urllib to the other port")
try:
    urllib.request.urlopen("http://127.0.0.1:{other}/b", timeout=10)
    print("LEAKED urllib")
except Exception as e:
    print("blocked urllib:", e)
print("trying a CONNECT tunnel to the other port")
c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
c.set_tunnel("127.0.0.1", {other})
try:
    c.request("GET", "/c")
    print("LEAKED tunnel", c.getresponse().status)
except OSError as e:
    print("blocked tunnel:", e)
print("trying a raw socket to the allowed server")
try:
    socket.create_connection(("127.0.0.1", {allowed}), timeout=3)
    print("LEAKED raw")
except OSError as e:
    print("blocked raw:", e)
print("trying a route off the machine")
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("10.1.2.3", 80))
    print("LEAKED route", s.getsockname())
except OSError as e:
    print("blocked route:", e)
print("trying a name lookup")
try:
    print("LEAKED dns", socket.gethostbyname("pypi.org"))
except OSError as e:
    print("blocked dns:", e)
print("done")
"#
    )
}

/// The issue's check: under `allow=127.0.0.1:PORT`, what is allowed is
/// reached through the proxy, nothing else is reached at all, and all of it
/// is in the reply.
#[tokio::test]
async fn an_allow_list_reaches_what_it_names_and_records_every_attempt() {
    let (allowed, other) = (server().await, server().await);
    let Some(pool) = pool(&format!("allow=127.0.0.1:{}", allowed.port)).await else {
        return;
    };
    let reply = run(&pool, &identifier(), &cell(allowed.port, other.port)).await;
    let out = stdout(&reply);
    assert!(!out.contains("LEAKED"), "{out}");
    assert!(
        out.contains("proxy http://127.0.0.1:3128 http://127.0.0.1:3128"),
        "{out}"
    );
    assert!(
        out.contains(&format!("got hello from {}", allowed.port)),
        "{out}"
    );
    assert!(
        out.contains(&format!("tunnel got hello from {}", allowed.port)),
        "{out}"
    );
    assert!(out.contains("blocked urllib: HTTP Error 403"), "{out}");
    assert!(
        out.contains("blocked tunnel: Tunnel connection failed: 403"),
        "{out}"
    );
    // The session's own `lo`: nothing listens there.
    assert!(out.contains("blocked raw: [Errno 111]"), "{out}");
    assert!(
        out.contains("blocked route: [Errno 101] Network is unreachable"),
        "{out}"
    );
    assert!(out.contains("blocked dns:"), "{out}");
    assert_eq!(
        allowed.hits.load(Ordering::SeqCst),
        2,
        "urllib and the tunnel"
    );
    assert_eq!(
        other.hits.load(Ordering::SeqCst),
        0,
        "nothing reached the other port"
    );
    let (a, o) = (allowed.port, other.port);
    let seen = attempts(&reply);
    assert_eq!(
        seen[..6],
        [
            format!("127.0.0.1:{a} allowed bytes"),
            format!("127.0.0.1:{a} allowed bytes"),
            format!("127.0.0.1:{o} denied 0"),
            format!("127.0.0.1:{o} denied 0"),
            // The raw socket and the route lookup, outside the proxy.
            format!("127.0.0.1:{a} denied 0 direct"),
            "10.1.2.3:80 denied 0 direct".to_string(),
        ],
        "{reply}"
    );
    // The name lookup: glibc's resolver asks 127.0.0.1:53 (no resolv.conf
    // in the session), where nothing listens.
    assert!(
        seen.len() > 6
            && seen[6..]
                .iter()
                .all(|s| s == "127.0.0.1:53 denied 0 direct"),
        "{reply}"
    );
    // The next execution starts its own list.
    let again = reply["identifier"].as_str().unwrap().to_string();
    let reply = run(&pool, &again, "print('done')").await;
    assert_eq!(attempts(&reply), Vec::<String>::new());
}

/// The flight recorder keeps every attempt next to the execution that made
/// it: `sessionpad log --json` gives each execution its `network` array
/// (`{"host","port","decision","bytes","at"}`), and `sessionpad log` prints a
/// `Net` line under it (`127.0.0.1:PORT allowed · 127.0.0.1:OTHER blocked`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_attempt_is_in_the_ledger_next_to_its_execution() {
    let (allowed, other) = (server().await, server().await);
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        common::sandbox_tests_skipped("the sandbox cannot be built here");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let ledger = data.path().join(sessionpad::ledger::FILE_NAME);
    let policy: Egress = format!("allow=127.0.0.1:{}", allowed.port).parse().unwrap();
    let pool = TestPool::start_with(|o| {
        o.ready_sessions = 1;
        o.egress = policy;
        o.ledger = Some(sessionpad::ledger::LedgerOptions {
            path: ledger,
            limits: sessionpad::ledger::LedgerConfig::default().limits(),
            files: true,
        });
    })
    .await;
    let id = identifier();
    let code = format!(
        r#"
import socket, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:{0}/", timeout=10).read().decode())
try:
    urllib.request.urlopen("http://127.0.0.1:{1}/", timeout=10)
except Exception as e:
    print("blocked:", e)
try:
    socket.create_connection(("127.0.0.1", {0}), timeout=3)
except OSError as e:
    print("no route:", e)
print("done")
"#,
        allowed.port, other.port
    );
    run(&pool, &id, &code).await;
    run(&pool, &id, "print('done')").await;
    pool.pool.ledger().unwrap().flush();
    let entries: Vec<Value> =
        common::stdout_ok(common::sessionpad_command(data.path()).args(["log", "--json", &id]))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|e: &Value| e["kind"] == "code")
            .collect();
    assert_eq!(entries.len(), 2, "{entries:?}");
    let network = entries[0]["network"].as_array().unwrap();
    assert_eq!(network.len(), 3, "{network:?}");
    assert_eq!(
        (
            &network[0]["host"],
            &network[0]["port"],
            &network[0]["decision"]
        ),
        (&json!("127.0.0.1"), &json!(allowed.port), &json!("allowed"))
    );
    assert!(network[0]["bytes"].as_u64().unwrap() > 0, "{network:?}");
    assert_eq!(
        (
            &network[1]["port"],
            &network[1]["decision"],
            &network[1]["bytes"]
        ),
        (&json!(other.port), &json!("denied"), &json!(0))
    );
    assert_eq!(
        network[2],
        json!({"host": "127.0.0.1", "port": allowed.port, "decision": "denied",
            "via": "direct", "bytes": 0, "at": network[2]["at"]}),
        "the raw socket, outside the proxy"
    );
    assert_eq!(network[1]["via"], "proxy");
    assert_eq!(
        entries[1]["network"],
        json!([]),
        "the next cell tried nothing"
    );
    let text = common::stdout_ok(common::sessionpad_command(data.path()).args(["log", &id]));
    let line = format!(
        "  Net    127.0.0.1:{a} allowed · 127.0.0.1:{o} blocked · 127.0.0.1:{a} blocked (direct)",
        a = allowed.port,
        o = other.port
    );
    assert!(text.lines().any(|l| l == line), "{text}");
}

/// An agent through the pool's MCP server learns why its request failed:
/// the tool's `structuredContent` carries every attempt (`network`) and the
/// denied ones (`networkBlocked`), for Python code and for shell commands.
#[tokio::test]
async fn the_mcp_tools_say_what_was_blocked() {
    let (allowed, other) = (server().await, server().await);
    let Some(pool) = pool(&format!("allow=127.0.0.1:{}", allowed.port)).await else {
        return;
    };
    let mcp = common::Mcp::new(&pool);
    let env = mcp.launch().await;
    let code = format!(
        "import urllib.request\nprint(urllib.request.urlopen('http://127.0.0.1:{0}/').read().decode())\n\
         try:\n    urllib.request.urlopen('http://127.0.0.1:{1}/')\nexcept Exception as e:\n    print('blocked:', e)\n\
         import socket\ntry:\n    socket.create_connection(('10.1.2.3', 443), timeout=3)\nexcept OSError as e:\n    print('no route:', e)",
        allowed.port, other.port
    );
    let result = mcp
        .tool(
            "runPythonCodeInRemoteEnvironment",
            json!({"environmentId": env, "pythonCode": code}),
        )
        .await;
    let out = &result["structuredContent"];
    assert_eq!(out["status"], "Succeeded", "{result}");
    assert_eq!(
        out["networkBlocked"],
        json!([format!("127.0.0.1:{}", other.port), "10.1.2.3:443"]),
        "{result}"
    );
    assert_eq!(out["network"].as_array().map(Vec::len), Some(3), "{result}");
    assert_eq!(out["network"][2]["via"], "direct", "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("networkBlocked"), "{text}");
    let result = mcp
        .tool(
            "runShellCommandInRemoteEnvironment",
            json!({"environmentId": env, "shellCommand": format!(
                "python3 -c \"import urllib.request as u\ntry: u.urlopen('http://127.0.0.1:{}/')\nexcept Exception as e: print(e)\"",
                other.port
            )}),
        )
        .await;
    let out = &result["structuredContent"];
    assert_eq!(
        out["networkBlocked"],
        json!([format!("127.0.0.1:{}", other.port)]),
        "{result}"
    );
    assert_eq!(other.hits.load(Ordering::SeqCst), 0);
}

/// A Shell pool's commands go through the proxy too (the variables are in
/// every command's environment), and the reply says what they reached, in
/// the answer to `POST executions` and again in `GET executions/{id}`.
#[tokio::test]
async fn a_shell_pools_commands_report_their_attempts() {
    let (allowed, other) = (server().await, server().await);
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        common::sandbox_tests_skipped("the sandbox cannot be built here");
        return;
    }
    let policy: Egress = format!("allow=127.0.0.1:{}", allowed.port).parse().unwrap();
    let pool = TestPool::start_with(|o| {
        o.ready_sessions = 1;
        o.container_type = sessionpad::protocol::ContainerType::Shell;
        o.egress = policy;
    })
    .await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let command = format!(
        "python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{}/').read().decode())\"; \
         python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{}/')\" 2>/dev/null || echo refused",
        allowed.port, other.port
    );
    let (status, headers, reply) = raw
        .post_json(
            &format!("/executions?api-version=2025-10-02-preview&identifier={id}"),
            json!({"shellCommand": command}),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(
        reply["result"]["stdout"],
        format!("hello from {}\nrefused\n", allowed.port),
        "{reply}"
    );
    let want = [
        format!("127.0.0.1:{} allowed bytes", allowed.port),
        format!("127.0.0.1:{} denied 0", other.port),
    ];
    assert_eq!(attempts(&reply), want, "{reply}");
    let exec_id = headers["operation-id"].to_str().unwrap();
    let (status, again) = raw
        .call(
            reqwest::Method::GET,
            &format!("/executions/{exec_id}?api-version=2025-10-02-preview&identifier={id}"),
        )
        .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(attempts(&again), want, "{again}");
}

/// `--egress audit`: everything through the proxy is allowed and recorded
/// (what an agent *would* reach); what ignores the proxy still has no route.
#[tokio::test]
async fn audit_lets_everything_through_the_proxy_and_records_it() {
    let (one, two) = (server().await, server().await);
    let Some(pool) = pool("audit").await else {
        return;
    };
    let code = format!(
        r#"
import socket, urllib.request
for port in ({}, {}):
    print("got", urllib.request.urlopen(f"http://127.0.0.1:{{port}}/", timeout=10).read().decode())
print("trying a raw socket")
try:
    socket.create_connection(("127.0.0.1", {}), timeout=3)
    print("LEAKED raw")
except OSError as e:
    print("blocked raw:", e)
print("done")
"#,
        one.port, two.port, one.port
    );
    let reply = run(&pool, &identifier(), &code).await;
    let out = stdout(&reply);
    assert!(!out.contains("LEAKED"), "{out}");
    assert_eq!(
        (
            one.hits.load(Ordering::SeqCst),
            two.hits.load(Ordering::SeqCst)
        ),
        (1, 1)
    );
    assert_eq!(
        attempts(&reply),
        [
            format!("127.0.0.1:{} allowed bytes", one.port),
            format!("127.0.0.1:{} allowed bytes", two.port),
            format!("127.0.0.1:{} denied 0 direct", one.port),
        ]
    );
}

/// `sessionpad exec` says what the code tried to reach: a `network:` line on
/// stderr (stdout stays the program's) and a `network` array in `--json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_says_what_the_code_tried_to_reach() {
    let Some(pool) = pool("off").await else {
        return;
    };
    let (endpoint, token) = (pool.pool.endpoint(), pool.pool.token().unwrap().to_string());
    let data = tempfile::tempdir().unwrap();
    let code = "import socket\ntry:\n    socket.create_connection(('10.1.2.3', 443), timeout=3)\nexcept OSError as e:\n    print('no route')";
    let dir = data.path().to_path_buf();
    let run = move |json: bool| {
        let mut cmd = common::sessionpad_command(&dir);
        cmd.args(["--endpoint", &endpoint, "--token", &token]);
        cmd.args(["--identifier", "exec-network-1"]);
        if json {
            cmd.arg("--json");
        }
        cmd.args(["exec", "-c", code]);
        cmd
    };
    let (text, json) = tokio::task::spawn_blocking(move || {
        (run(false).output().unwrap(), run(true).output().unwrap())
    })
    .await
    .unwrap();
    assert!(text.status.success(), "{text:?}");
    assert_eq!(String::from_utf8_lossy(&text.stdout), "no route\n");
    let stderr = String::from_utf8_lossy(&text.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l == "network: 10.1.2.3:443 blocked (direct)"),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["network"][0]["host"], "10.1.2.3", "{doc}");
    assert_eq!(doc["network"][0]["via"], "direct", "{doc}");
}

/// Hostile code floods the connect watch: 16 threads make 200 attempts each
/// at once. Every call comes back (no thread waits for ever on the pool),
/// every attempt is in the reply, and the session runs the next cell.
#[tokio::test]
async fn a_flood_of_connects_from_many_threads_is_recorded_and_nothing_hangs() {
    let Some(pool) = pool("off").await else {
        return;
    };
    let code = r#"
import socket, threading
failed = []
def attack(i):
    for _ in range(200):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.connect(("10.1.2.%d" % i, 80))
            failed.append("LEAKED")
        except OSError as e:
            failed.append(e.errno)
        s.close()
print("flooding from 16 threads")
threads = [threading.Thread(target=attack, args=(i,)) for i in range(16)]
for t in threads: t.start()
for t in threads: t.join()
print(len(failed), "calls came back", set(failed))
print("done")
"#;
    let reply = run(&pool, &identifier(), code).await;
    let out = stdout(&reply);
    assert!(out.contains("3200 calls came back {101}"), "{out}");
    let seen = attempts(&reply);
    assert_eq!(seen.len(), 3200);
    for i in 0..16 {
        let want = format!("10.1.2.{i}:80 denied 0 direct");
        assert_eq!(seen.iter().filter(|s| **s == want).count(), 200, "{want}");
    }
    let again = reply["identifier"].as_str().unwrap().to_string();
    let reply = run(&pool, &again, "print('done')").await;
    assert_eq!(attempts(&reply), Vec::<String>::new());
}

/// Audit allows every host, but never the pool's own API on this machine:
/// a session that could call it would reach other sessions (their files,
/// their kernels) wherever the API is open (`serve --no-auth`). Through the
/// proxy it gets `403`, recorded as denied; the pool served nothing.
#[tokio::test]
async fn audit_never_reaches_the_pools_own_api() {
    let Some(pool) = pool("audit").await else {
        return;
    };
    let port = pool.pool.addr().port();
    let code = format!(
        r#"
import urllib.request
for url in ("http://127.0.0.1:{port}/", "http://localhost:{port}/sessions"):
    print("trying", url)
    try:
        urllib.request.urlopen(url, timeout=10)
        print("LEAKED", url)
    except Exception as e:
        print("blocked:", e)
print("done")
"#
    );
    let reply = run(&pool, &identifier(), &code).await;
    let out = stdout(&reply);
    assert!(!out.contains("LEAKED"), "{out}");
    assert_eq!(out.matches("blocked: HTTP Error 403").count(), 2, "{out}");
    assert_eq!(
        attempts(&reply),
        [
            format!("127.0.0.1:{port} denied 0"),
            format!("localhost:{port} denied 0"),
        ],
        "{reply}"
    );
}

/// With egress off (the default: no proxy at all), what a session tries is
/// recorded all the same: a TCP `connect`, a UDP `sendto` and a `sendmsg`
/// with an address, over IPv4 and IPv6, each of which fails in the session's
/// own namespace; while the session talking to itself on its own loopback
/// (a server of its own) is not egress and is not listed.
#[tokio::test]
async fn with_egress_off_direct_attempts_are_recorded_and_the_sessions_own_loopback_is_not() {
    let Some(pool) = pool("off").await else {
        return;
    };
    let code = r#"
import socket, threading
print("a server of the session's own, and a client of it")
srv = socket.create_server(("127.0.0.1", 0))
port = srv.getsockname()[1]
threading.Thread(target=lambda: srv.accept()[0].sendall(b"hi"), daemon=True).start()
with socket.create_connection(("127.0.0.1", port), timeout=3) as c:
    print("own server said", c.recv(2))
print("trying TCP to the proxy's port, which no relay holds here")
try:
    socket.create_connection(("127.0.0.1", 3128), timeout=3)
    print("LEAKED 3128")
except OSError as e:
    print("blocked:", e)
print("trying TCP over IPv6 to a documentation address")
try:
    socket.create_connection(("2001:db8::1", 443), timeout=3)
    print("LEAKED v6")
except OSError as e:
    print("blocked v6:", e)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print("trying UDP sendto the metadata address")
try:
    u.sendto(b"x", ("169.254.169.254", 80))
    print("LEAKED sendto")
except OSError as e:
    print("blocked sendto:", e)
print("trying UDP sendmsg off the machine")
try:
    u.sendmsg([b"x"], [], 0, ("10.9.8.7", 53))
    print("LEAKED sendmsg")
except OSError as e:
    print("blocked sendmsg:", e)
print("done")
"#;
    let reply = run(&pool, &identifier(), code).await;
    let out = stdout(&reply);
    assert!(!out.contains("LEAKED"), "{out}");
    assert!(out.contains("own server said b'hi'"), "{out}");
    assert!(out.contains("blocked sendto: [Errno 101]"), "{out}");
    assert_eq!(
        attempts(&reply),
        [
            "127.0.0.1:3128 denied 0 direct",
            "2001:db8::1:443 denied 0 direct",
            "169.254.169.254:80 denied 0 direct",
            "10.9.8.7:53 denied 0 direct",
        ],
        "{reply}"
    );
}

/// A session sees its own proxy's socket in its runtime folder and no other
/// session's: the attack looks for every `egress.sock` it can find below
/// `/tmp` and the runtime folders' parent, finds its own (so the search
/// works), and reaches no other.
#[tokio::test]
async fn a_session_reaches_no_other_sessions_egress_socket() {
    let Some(pool) = pool("allow=127.0.0.1:9").await else {
        return;
    };
    let (a, b) = (identifier(), identifier());
    // Both sessions exist, each with its kernel and proxy.
    run(&pool, &b, "print('done')").await;
    let code = r#"
import glob, os, socket
found = sorted(set(glob.glob("/tmp/**/egress.sock", recursive=True) + glob.glob("/tmp/sp-*/*/egress.sock")))
print("trying", found)
for p in found:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(p)
    s.close()
print("reached", len(found))
print("done")
"#;
    let reply = run(&pool, &a, code).await;
    let out = stdout(&reply);
    assert!(out.contains("reached 1\n"), "exactly its own socket: {out}");
}

/// An allow-list or audit with no sandbox cannot hold (nothing would make
/// the session use the proxy): the pool refuses to start.
#[tokio::test]
async fn an_allow_list_needs_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = sessionpad::pool::PoolOptions::embedded();
    opts.sessions_dir = dir.path().join("sessions");
    opts.sandbox = false;
    opts.egress = "allow=127.0.0.1:9".parse().unwrap();
    let Err(e) = sessionpad::pool::LocalPool::start(opts, &|_| {}).await else {
        panic!("the pool started with an allow-list and no sandbox");
    };
    let e = e.to_string();
    assert!(
        e.contains("egress allow=127.0.0.1:9 needs the sandbox"),
        "{e}"
    );
}

#[test]
fn the_egress_tests_also_hold_as_an_unprivileged_user() {
    common::rerun_as_nobody("the_egress_tests_also_hold");
}
