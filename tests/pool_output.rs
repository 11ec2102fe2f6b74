//! How much output one execution may hold: a cell that prints without end must
//! not grow the pool's memory with it (stdout and stderr are capped while they are
//! collected, with a marker), and the 2025-10-02-preview request field
//! `outputStreamsMaxLength` (`aca-api.md` §4.2) truncates both streams.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::time::Duration;

use common::{Raw, TestPool, identifier, proc_status_bytes, serve};
use serde_json::json;

const B10: &str = "2025-10-02-preview";

/// 200 MB printed in 1 MB writes: the pool's reply is capped and says so.
const PRINT_200_MB: &str =
    "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 1_000_000)\nprint('tail')";

/// What the pool writes into a stream it cut (`src/pool/kernel.rs`).
const MARKER: &str = "[output truncated by the local pool: ";

#[tokio::test]
async fn a_cell_printing_200_mb_gets_a_capped_reply_with_a_marker() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"codeInputType": "inline", "executionType": "synchronous", "code": PRINT_200_MB, "timeoutInSeconds": 120}),
        )
        .await;
    assert_eq!(status, 200);
    // A truncated execution still succeeds.
    assert_eq!(v["status"], "Succeeded", "{}", &v["result"]["stderr"]);
    let stdout = v["result"]["stdout"].as_str().unwrap();
    assert!(
        stdout.len() <= 8 * 1024 * 1024 + 200,
        "stdout holds {} bytes",
        stdout.len()
    );
    assert!(stdout.starts_with("xxxxxxxx"), "{}", &stdout[..80]);
    // Its head and its tail are kept, the marker between them (issue 27 item 11).
    assert!(
        stdout.ends_with("xxxxtail\n"),
        "{:?}",
        &stdout[stdout.len() - 80..]
    );
    let at = stdout.find(MARKER).expect("no marker");
    let marker = &stdout[at..at + 200];
    assert!(marker.contains("200.0 MB printed"), "{marker:?}");
    // The session goes on working after it.
    let (_, _, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"code": "print('next')"}),
        )
        .await;
    assert_eq!(v["result"]["stdout"], "next\n");
}

/// Issue 27 item 11: a 1,000,000-line cell (11.9 MB) keeps its first and its
/// last lines, one marker between them saying how much was dropped.
#[tokio::test]
async fn a_million_lines_keep_the_first_and_the_last_line() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"code": "for i in range(1_000_000):\n    print('line', i)", "timeoutInSeconds": 120}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(v["status"], "Succeeded", "{}", &v["result"]["stderr"]);
    let stdout = v["result"]["stdout"].as_str().unwrap();
    assert!(
        stdout.starts_with("line 0\nline 1\n"),
        "{:?}",
        &stdout[..40]
    );
    assert!(
        stdout.ends_with("\nline 999999\n"),
        "{:?}",
        &stdout[stdout.len() - 40..]
    );
    assert_eq!(stdout.matches(MARKER).count(), 1);
    let at = stdout.find(MARKER).unwrap();
    let marker = &stdout[at..at + stdout[at..].find('\n').unwrap()];
    assert!(marker.contains("11.9 MB printed"), "{marker}");
    assert!(marker.contains("lines) dropped here"), "{marker}");
    assert!(stdout.len() <= 8 * 1024 * 1024 + 200, "{}", stdout.len());
}

#[tokio::test]
async fn serve_grows_by_less_than_64_mb_when_a_cell_prints_200_mb() {
    let data = tempfile::tempdir().unwrap();
    let token = "memory-token-1234";
    let (mut child, endpoint) = serve(data.path(), token);
    let pid = child.id();
    let http = reqwest::Client::new();
    let id = identifier();
    let url = format!("{endpoint}/executions?api-version={B10}&identifier={id}");
    let post = |code: &str| {
        http.post(&url)
            .bearer_auth(token)
            .timeout(Duration::from_secs(180))
            .json(&json!({"code": code, "timeoutInSeconds": 150}))
            .send()
    };
    // Warm up: a kernel, a session, one reply; then measure from here.
    let warm = post("print('warm')").await.unwrap();
    assert_eq!(warm.status().as_u16(), 200);
    let _ = warm.bytes().await.unwrap();
    let rss_before = proc_status_bytes(pid, "VmRSS:");
    let resp = post(PRINT_200_MB).await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let body = resp.bytes().await.unwrap();
    let hwm_after = proc_status_bytes(pid, "VmHWM:");
    let rss_after = proc_status_bytes(pid, "VmRSS:");
    common::end_gracefully(&mut child);
    let growth = hwm_after.saturating_sub(rss_before);
    eprintln!(
        "serve: VmRSS before {:.1} MB, VmHWM after {:.1} MB, VmRSS after {:.1} MB, peak growth {:.1} MB, reply {:.1} MB",
        rss_before as f64 / 1e6,
        hwm_after as f64 / 1e6,
        rss_after as f64 / 1e6,
        growth as f64 / 1e6,
        body.len() as f64 / 1e6
    );
    assert!(
        growth < 64 * 1024 * 1024,
        "serve grew by {:.1} MB (peak) for 200 MB printed",
        growth as f64 / 1e6
    );
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert!(v["result"]["stdout"].as_str().unwrap().contains(MARKER));
}

#[tokio::test]
async fn output_streams_max_length_truncates_both_streams_to_that_many_characters() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    // Two-byte characters: a byte count would keep 5 of them, a character count 10.
    let code = "import sys\nprint('é' * 30)\nsys.stderr.write('ß' * 30)";
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"codeInputType": "Inline", "executionType": "Synchronous", "code": code,
                   "timeoutInSeconds": 60, "outputStreamsMaxLength": 10}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["status"], "Succeeded");
    assert_eq!(v["result"]["stdout"], "é".repeat(10));
    assert_eq!(v["result"]["stderr"], "ß".repeat(10));
    // Output under the limit is whole.
    let (_, _, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"code": "print('short')", "outputStreamsMaxLength": 4096}),
        )
        .await;
    assert_eq!(v["result"]["stdout"], "short\n");
    // An asynchronous execution is truncated too (what GET executions/{id} shows).
    let resp = raw
        .req(
            reqwest::Method::POST,
            &format!("/executions?api-version={B10}&identifier={id}"),
        )
        .header("operation-id", "async-limit-1")
        .json(&json!({"code": "print('a' * 50)", "executionType": "Asynchronous", "outputStreamsMaxLength": 7}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 202);
    let mut polled = serde_json::Value::Null;
    for _ in 0..300 {
        let (_, v) = raw
            .call(
                reqwest::Method::GET,
                &format!("/executions/async-limit-1?api-version={B10}&identifier={id}"),
            )
            .await;
        if v["status"] != "Running" {
            polled = v;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(polled["result"]["stdout"], "aaaaaaa", "{polled}");
    // A negative limit is refused like any invalid field.
    let (status, headers, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"code": "1", "outputStreamsMaxLength": -1}),
        )
        .await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(headers["x-ms-error-code"], "SessionRequestValidationFailed");
}

#[tokio::test]
async fn output_streams_max_length_is_ignored_before_2025_10_02_preview() {
    let pool = TestPool::start().await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?api-version=2025-02-02-preview&identifier={id}"),
            json!({"code": "print('a' * 50)", "outputStreamsMaxLength": 7}),
        )
        .await;
    assert_eq!(status, 202, "{v}");
    assert_eq!(v["result"]["stdout"], format!("{}\n", "a".repeat(50)));
}

/// `sum(len(f'line {i}\n') for i in range(n))`: the bytes `print('line', i)`
/// writes for `i` below `n`.
fn line_bytes(n: usize) -> usize {
    (0..n).map(|i| format!("line {i}\n").len()).sum()
}

/// Issue 27 item 11, "let the limit be set": a pool set to keep 64 KiB per
/// stream keeps the first and the last 32 KiB of 100,000 lines, and its marker
/// states the real figures (printed, dropped, lines dropped, what was kept).
#[tokio::test]
async fn a_pool_set_to_64_kib_keeps_32_kib_each_side_and_says_what_it_dropped() {
    let pool = TestPool::start_with(|o| o.limits.stream_bytes = 64 * 1024).await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let (status, _, v) = raw
        .post_json(
            &format!("/executions?api-version={B10}&identifier={id}"),
            json!({"code": "for i in range(100_000): print('line', i)", "timeoutInSeconds": 120}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(v["status"], "Succeeded", "{}", &v["result"]["stderr"]);
    let stdout = v["result"]["stdout"].as_str().unwrap();
    assert_eq!(stdout.matches(MARKER).count(), 1, "{}", stdout.len());
    let at = stdout.find(&format!("\n{MARKER}")).unwrap();
    let head = &stdout[..at];
    let marker_end = at + 1 + stdout[at + 1..].find('\n').unwrap();
    let marker = &stdout[at + 1..marker_end];
    let tail = &stdout[marker_end + 1..];
    assert_eq!(head.len(), 32 * 1024, "the head is half the limit");
    assert!(head.starts_with("line 0\nline 1\n"), "{:?}", &head[..20]);
    assert!(
        tail.len() <= 32 * 1024,
        "the tail is at most half: {}",
        tail.len()
    );
    assert!(
        tail.len() > 31 * 1024,
        "the tail is about half: {}",
        tail.len()
    );
    assert!(
        tail.ends_with("\nline 99999\n"),
        "{:?}",
        &tail[tail.len() - 30..]
    );
    assert!(
        tail.starts_with("line "),
        "the tail starts a line: {:?}",
        &tail[..20]
    );
    let printed = line_bytes(100_000);
    let dropped = printed - head.len() - tail.len();
    let lines = 100_000 - head.matches('\n').count() - tail.matches('\n').count();
    assert_eq!(
        marker,
        format!(
            "[output truncated by the local pool: {:.1} MB printed; {:.1} MB ({lines} lines) dropped here, the first and last 32 KiB kept]",
            printed as f64 / 1e6,
            dropped as f64 / 1e6
        )
    );
}

/// Under a pool limit of 64 KiB, a 2025-10-02-preview request's
/// `outputStreamsMaxLength` still keeps at most that many characters (and the
/// pool's cap, when smaller, still applies), with no marker.
#[tokio::test]
async fn output_streams_max_length_still_applies_under_a_set_pool_limit() {
    let pool = TestPool::start_with(|o| o.limits.stream_bytes = 64 * 1024).await;
    let raw = Raw::new(&pool);
    let id = identifier();
    let code = "for i in range(100_000): print('line', i)";
    for (n, kept) in [(10, "line 0\nlin".to_string()), (100_000, String::new())] {
        let (status, _, v) = raw
            .post_json(
                &format!("/executions?api-version={B10}&identifier={id}"),
                json!({"code": code, "timeoutInSeconds": 120, "outputStreamsMaxLength": n}),
            )
            .await;
        assert_eq!(status, 200, "{v}");
        let stdout = v["result"]["stdout"].as_str().unwrap();
        assert!(
            stdout.chars().count() <= n,
            "{n}: {}",
            stdout.chars().count()
        );
        assert!(stdout.len() <= 64 * 1024, "{n}: {} bytes", stdout.len());
        assert!(!stdout.contains(MARKER), "{n}");
        if !kept.is_empty() {
            assert_eq!(stdout, kept);
        }
        assert!(stdout.starts_with("line 0\n") || n < 7, "{n}");
    }
}
