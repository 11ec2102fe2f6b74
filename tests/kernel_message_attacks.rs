//! One huge message from a kernel, run for real (issue 10, "Server memory"): a
//! cell sending one 200 MB `stream` message (a print without the start-up
//! script's pieces), a cell whose value is 2 × 100 MB in one `execute_result`,
//! and a cell writing a crafted ZeroMQ frame that declares 3 GiB straight onto
//! the kernel's IOPub and shell connections. The pool's ZeroMQ stack would
//! reserve and buffer whatever a frame declares; the pool's relay
//! (`src/pool/kernel/relay.rs`) stops such a message before that. Each test
//! runs a real `sessionpad serve` with sandboxed kernels and checks: serve's
//! peak resident memory grows by at most 64 MB (`VmHWM`, reset through
//! `clear_refs` before the attack), the cell fails with the pool's "Execution
//! aborted" text naming the size the attack declared (so the attack ran up to
//! the step that must fail), the session's next cell runs, and another
//! session keeps its state.
//!
//! Run as root (CI), `the_message_attacks_also_fail_as_an_unprivileged_user`
//! runs the others again as `nobody`. Without bubblewrap the tests say so and
//! pass without attacking (CI installs it).
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::Duration;

use common::{Served, identifier, proc_status_bytes};
use serde_json::{Value, json};

const B10: &str = "2025-10-02-preview";
const MB: u64 = 1024 * 1024;
/// What a cell's output may grow serve by at its peak (issue 10).
const BOUND: u64 = 64 * MB;
const TOKEN: &str = "message-attacks-token";

/// A running serve with sandboxed kernels; `None` (and a note on stderr) where
/// bubblewrap does not work.
struct Pool {
    serve: Served,
    endpoint: String,
    http: reqwest::Client,
    _data: tempfile::TempDir,
}

impl Pool {
    fn start() -> Option<Self> {
        if let Err(e) = sessionpad::pool::Sandbox::detect(true, false) {
            common::sandbox_tests_skipped(&format!("no sandbox here: {e}"));
            return None;
        }
        let data = tempfile::tempdir().unwrap();
        let (child, endpoint) = common::serve(data.path(), TOKEN);
        Some(Self {
            serve: Served(child),
            endpoint,
            http: reqwest::Client::new(),
            _data: data,
        })
    }

    fn pid(&self) -> u32 {
        self.serve.0.id()
    }

    /// Runs `code` in session `id`; the answer's JSON.
    async fn run(&self, id: &str, code: &str) -> Value {
        let resp = self
            .http
            .post(format!(
                "{}/executions?api-version={B10}&identifier={id}",
                self.endpoint
            ))
            .bearer_auth(TOKEN)
            .timeout(Duration::from_secs(240))
            .json(&json!({"code": code, "timeoutInSeconds": 200}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        resp.json().await.unwrap()
    }

    /// Resets serve's peak resident memory (`VmHWM`) to its current size and
    /// returns that size in bytes.
    fn reset_peak(&self) -> u64 {
        std::fs::write(format!("/proc/{}/clear_refs", self.pid()), "5").unwrap();
        proc_status_bytes(self.pid(), "VmRSS:")
    }

    /// How much serve's peak grew since `before` (bytes), printed.
    fn growth(&self, before: u64, what: &str) -> u64 {
        let peak = proc_status_bytes(self.pid(), "VmHWM:");
        let growth = peak.saturating_sub(before);
        eprintln!(
            "{what}: serve VmRSS before {:.1} MiB, VmHWM after {:.1} MiB, growth {:.1} MiB",
            before as f64 / MB as f64,
            peak as f64 / MB as f64,
            growth as f64 / MB as f64
        );
        growth
    }
}

/// A session and a second one holding a variable, both with a kernel.
async fn two_sessions(pool: &Pool) -> (String, String) {
    let (id, other) = (identifier(), identifier());
    let v = pool.run(&id, "print('warm')").await;
    assert_eq!(v["result"]["stdout"], "warm\n", "{v}");
    let v = pool.run(&other, "kept = 'still here'").await;
    assert_eq!(v["status"], "Succeeded", "{v}");
    (id, other)
}

/// After an attack in `id`: its next cell runs, and `other` kept its state.
async fn both_live_on(pool: &Pool, id: &str, other: &str) {
    let v = pool.run(id, "print('next')").await;
    assert_eq!(v["status"], "Succeeded", "{v}");
    assert_eq!(v["result"]["stdout"], "next\n", "{v}");
    let v = pool.run(other, "print(kept)").await;
    assert_eq!(v["result"]["stdout"], "still here\n", "{v}");
}

/// Asserts `v` failed with the pool's text for a message over its cap on
/// `channel`, after the attack said `trying`.
fn aborted_for_size(v: &Value, channel: &str, size: &str) {
    let stderr = v["result"]["stderr"].as_str().unwrap_or_default();
    assert_eq!(v["status"], "Failed", "{v}");
    assert!(
        stderr.contains("trying"),
        "the attack did not start: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "Execution aborted: the kernel sent a message of at least {size} on its {channel} channel"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("done"), "the attack went on: {stderr}");
}

/// One `print` of 200 MB: the kernel's start-up script sends it in pieces of
/// about 1 Mi characters (`assets/python/kernel_startup.py`), and the pool
/// keeps 8 MiB of it with its marker.
const PRINT_200_MB: &str = "print('x' * 200_000_000)";

/// The same 200 MB as one `stream` message, sent the way ipykernel sends a
/// print (`OutStream._flush`: `session.send` on its IOPub thread) without the
/// start-up script's pieces: what code in the session may always do.
const STREAM_200_MB: &str = "import sys, time
o = sys.stdout
sys.stderr.write('trying one stream message of 200 MB\\n'); sys.stderr.flush(); time.sleep(0.5)
o.session.send(o.pub_thread, 'stream', {'name': 'stdout', 'text': 'x' * 200_000_000},
               parent=o.parent_header, ident=o.topic)
time.sleep(3)
sys.stderr.write('done\\n')";

/// A cell whose value is a 100 MB string: its `execute_result` carries it
/// twice (`text/plain` and the value's JSON), one message of 200 MB.
const VALUE_200_MB: &str = "import sys, time
s = 'x' * 100_000_000
sys.stderr.write('trying a value of 100 MB\\n'); sys.stderr.flush(); time.sleep(0.5)
s";

#[tokio::test]
async fn a_cell_printing_or_showing_200_mb_at_once_leaves_serve_bounded() {
    let Some(pool) = Pool::start() else { return };
    let (id, other) = two_sessions(&pool).await;

    let before = pool.reset_peak();
    let v = pool.run(&id, PRINT_200_MB).await;
    let growth = pool.growth(before, "one print of 200 MB");
    assert_eq!(v["status"], "Succeeded", "{}", v["result"]["stderr"]);
    let stdout = v["result"]["stdout"].as_str().unwrap();
    assert!(
        stdout.contains("200.0 MB printed"),
        "{}",
        &stdout[stdout.len().saturating_sub(200)..]
    );
    assert!(growth <= BOUND, "serve grew by {growth} bytes");

    for (code, what) in [
        (STREAM_200_MB, "one stream message of 200 MB"),
        (VALUE_200_MB, "a value of 2 x 100 MB"),
    ] {
        let before = pool.reset_peak();
        let v = pool.run(&id, code).await;
        let growth = pool.growth(before, what);
        aborted_for_size(&v, "iopub", "190 MiB");
        assert!(growth <= BOUND, "serve grew by {growth} bytes");
        both_live_on(&pool, &id, &other).await;
    }
}

/// Python that finds the pool's connection to the kernel's socket of channel
/// `PORT` (the unix socket `<ip>-<port>` of the connection file; ipykernel
/// also connects to its own shell socket, so the peer must be another
/// process) and writes onto it, as raw bytes between the kernel's own
/// messages, one frame whose 8-byte length declares 3 GiB, then 200 MB of its
/// body.
const RAW_FRAME: &str = r#"
import json, os, select, socket, struct, sys, time
import ipykernel
info = json.load(open(ipykernel.get_connection_file()))
path = f"{info['ip']}-{PORT}"
conn = None
for fd in os.listdir('/proc/self/fd'):
    try:
        s = socket.socket(fileno=os.dup(int(fd)))
    except OSError:
        continue
    if (s.family == socket.AF_UNIX and s.type == socket.SOCK_STREAM
            and s.getsockname() == path
            and not s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)):
        peer = struct.unpack('3i', s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        if peer != os.getpid():
            conn = s
            break
    s.close()
assert conn is not None, 'no connection on ' + path
sys.stderr.write(f'trying a frame of 3 GiB on {path}\n'); sys.stderr.flush(); time.sleep(1)
data = bytes([0x02]) + (3 << 30).to_bytes(8, 'big') + b'x' * (1 << 20) * 200
sent = 0
while sent < len(data):
    select.select([], [conn], [], 5)
    try:
        sent += conn.send(data[sent:sent + (1 << 20)])
    except BlockingIOError:
        pass
time.sleep(2)
sys.stderr.write('done\n')
"#;

#[tokio::test]
async fn a_crafted_huge_frame_on_the_kernels_sockets_fails_the_cell_and_serve_stays_bounded() {
    let Some(pool) = Pool::start() else { return };
    let (id, other) = two_sessions(&pool).await;
    // IOPub (which the execution reads) and shell (which it does not while
    // the cell runs), each in the session's kernel of the moment.
    for (channel, port) in [("iopub", "iopub_port"), ("shell", "shell_port")] {
        let code = RAW_FRAME.replace("{PORT}", &format!("{{info['{port}']}}"));
        let before = pool.reset_peak();
        let v = pool.run(&id, &code).await;
        let growth = pool.growth(before, &format!("a 3 GiB frame on {channel}"));
        aborted_for_size(&v, channel, "3072 MiB");
        assert!(growth <= BOUND, "serve grew by {growth} bytes");
        both_live_on(&pool, &id, &other).await;
    }
}

/// One message just under the cap (a 15 MiB `stream` message of characters
/// JSON escapes, 7.5 Mi backslashes, sent whole like [`STREAM_200_MB`]): it
/// passes whole, and serve grows by at most 64 MB: the cap and the bound
/// agree.
#[tokio::test]
async fn one_message_just_under_the_cap_passes_within_the_bound() {
    let Some(pool) = Pool::start() else { return };
    let (id, other) = two_sessions(&pool).await;
    let before = pool.reset_peak();
    let code = "import sys, time
o = sys.stdout
o.session.send(o.pub_thread, 'stream', {'name': 'stdout', 'text': '\\\\' * (15 << 19)},
               parent=o.parent_header, ident=o.topic)
time.sleep(1)";
    let v = pool.run(&id, code).await;
    let growth = pool.growth(before, "one message of 15 MiB (7.5 Mi backslashes)");
    assert_eq!(v["status"], "Succeeded", "{}", v["result"]["stderr"]);
    let stdout = v["result"]["stdout"].as_str().unwrap();
    assert!(
        stdout.starts_with("\\\\"),
        "{}",
        &stdout[..stdout.len().min(80)]
    );
    assert!(growth <= BOUND, "serve grew by {growth} bytes");
    both_live_on(&pool, &id, &other).await;
}

/// Runs every other test of this file again as `nobody` when this one runs as
/// root (see `common::rerun_as_nobody`).
#[test]
fn the_message_attacks_also_fail_as_an_unprivileged_user() {
    common::rerun_as_nobody("the_message_attacks_also_fail");
}
