//! Flight recorder benchmarks (issue 13): figures for BENCHMARKS.md.
//!
//! - recording's cost per execution: `1+1` through HTTP on two local pools in
//!   the same run, one recording into a ledger and one not, runs interleaved,
//!   p50/p99 over 400 runs each (target: at most 0.2 ms more at p50);
//! - what the writer thread spends on one call (criterion);
//! - `log` of one identifier's last 100 cells with 1,000,000 recorded
//!   executions, the rows generated directly (criterion; target under 50 ms),
//!   and the database's size per execution.
//!
//! - files per execution (issue 26): `print(1)` through HTTP in a session whose
//!   `/mnt/data` holds 1,000 unchanged files, with the look at `/mnt/data` on
//!   and off (two pools, runs interleaved, p50/p99 over 400 runs each; target:
//!   within 0.5 ms at p50); a cell that rewrites one 10 MB file, on and off
//!   (p50 of 20 each; target: at most 50 ms more); the ledger's growth for a
//!   1 MB CSV rewritten 100 times.
//!
//! Run with `cargo bench --bench ledger` (`LEDGER_BENCH=files` runs only the
//! files part).
#![allow(clippy::unwrap_used)] // benchmark set-up unwraps: a failure there stops the run with its location

use std::time::{Duration, Instant};

use chrono::Utc;
use criterion::Criterion;
use sessionpad::client::{SessionClient, Target};
use sessionpad::ledger::{self, LedgerOptions, Query};
use sessionpad::pool::{LocalPool, PoolOptions};
use sessionpad::protocol::ApiVersion;
use sessionpad::protocol::record::{Call, CallKind, RecordedOutput};

const RUNS: usize = 400;
const ROWS: usize = 1_000_000;
const IDENTIFIERS: usize = 1_000;

#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)] // an index in 0..len, rounded from a fraction of len - 1
fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// A call shaped like a small cell's: code, a line of output, a value.
fn call(identifier: String, i: usize) -> Call {
    Call {
        pool: "local".into(),
        identifier,
        client: Some("langchain-azure-dynamic-sessions/1.0.4 python-requests/2.32.3".into()),
        at: Utc::now(),
        duration: Duration::from_micros(4_600),
        kind: CallKind::Code,
        execution_id: Some(uuid::Uuid::new_v4().to_string()),
        code: Some(format!("import math\nx = math.sqrt({i})\nprint(x)\nx")),
        stdin: None,
        output: Some(RecordedOutput {
            status: "Succeeded".into(),
            exit_code: None,
            stdout: format!("{}\n", (i as f64).sqrt()).into(),
            stderr: String::new().into(),
            result: Some(
                serde_json::json!({"text": format!("{}", (i as f64).sqrt()), "json": (i as f64).sqrt()}),
            ),
        }),
        images: vec![],
        file: None,
        client_gone: false,
        files: vec![],
        files_note: None,
        network: Vec::new(),
    }
}

/// A local pool recording into a ledger of its own (when `ledger`), looking
/// at `/mnt/data` after each call (when `files`), and a client of it.
async fn pool(dir: &std::path::Path, ledger: bool, files: bool) -> (LocalPool, SessionClient) {
    let name = match (ledger, files) {
        (false, _) => "off",
        (true, false) => "on",
        (true, true) => "files",
    };
    let mut opts = PoolOptions::embedded();
    opts.sessions_dir = dir.join(name);
    opts.ready_sessions = 1;
    if ledger {
        opts.ledger = Some(LedgerOptions {
            path: dir.join(format!("{name}-ledger.sqlite3")),
            limits: ledger::LedgerConfig::default().limits(),
            files,
        });
    }
    let pool = LocalPool::start(opts, &|l| eprintln!("[python env] {l}"))
        .await
        .unwrap();
    let client = SessionClient::new(Target {
        endpoint: pool.endpoint(),
        api_version: ApiVersion::V2025_10_02,
        token: pool.token().map(str::to_string),
    })
    .unwrap();
    (pool, client)
}

/// `1+1` through HTTP with and without recording, interleaved in one run.
fn recording_cost(dir: &std::path::Path) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (on_pool, on) = pool(dir, true, false).await;
        let (_off_pool, off) = pool(dir, false, false).await;
        let timeout = Duration::from_secs(30);
        for c in [&on, &off] {
            for _ in 0..20 {
                c.execute("bench", "1+1", timeout).await.unwrap();
            }
        }
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            for (c, samples) in [(&on, &mut with), (&off, &mut without)] {
                let t = Instant::now();
                let e = c.execute("bench", "1+1", timeout).await.unwrap();
                samples.push(t.elapsed());
                assert!(e.succeeded());
            }
        }
        let (p50_on, p99_on) = (percentile(&mut with, 0.5), percentile(&mut with, 0.99));
        let (p50_off, p99_off) = (
            percentile(&mut without, 0.5),
            percentile(&mut without, 0.99),
        );
        println!(
            "1+1 through HTTP, recording on:  p50 {} p99 {}",
            ms(p50_on),
            ms(p99_on)
        );
        println!(
            "1+1 through HTTP, recording off: p50 {} p99 {}",
            ms(p50_off),
            ms(p99_off)
        );
        println!(
            "recording's cost at p50 (target: at most 0.2 ms): {:+.3} ms",
            (p50_on.as_secs_f64() - p50_off.as_secs_f64()) * 1000.0
        );
        let recorder = on_pool.ledger().unwrap();
        recorder.flush();
        println!("calls dropped by the writer: {}", recorder.dropped());
    });
}

/// Fills a ledger with [`ROWS`] executions over [`IDENTIFIERS`] identifiers.
fn fill(path: &std::path::Path) {
    let conn = ledger::open(path).unwrap();
    let t = Instant::now();
    for chunk in 0..(ROWS / 10_000) {
        let batch: Vec<Box<Call>> = (0..10_000)
            .map(|j| {
                let i = chunk * 10_000 + j;
                Box::new(call(format!("agent-{:04}", i % IDENTIFIERS), i))
            })
            .collect();
        ledger::write::insert_all(&conn, &batch).unwrap();
    }
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    println!(
        "generated {ROWS} executions in {:.1} s",
        t.elapsed().as_secs_f64()
    );
}

/// p50 and p99 of `samples`.
fn p50_p99(samples: &mut [Duration]) -> (Duration, Duration) {
    (percentile(samples, 0.5), percentile(samples, 0.99))
}

/// Issue 26: what looking at `/mnt/data` after each call costs.
fn files_cost(dir: &std::path::Path) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (files_pool, on) = pool(dir, true, true).await;
        let (_plain_pool, off) = pool(dir, true, false).await;
        let timeout = Duration::from_secs(60);
        let thousand = "import os\nos.makedirs('/mnt/data/d', exist_ok=True)\nfor i in range(1000):\n    open(f'/mnt/data/{\"d/\" if i % 2 else \"\"}f{i}.csv', 'w').write('x,y\\n' * 20)";
        for c in [&on, &off] {
            assert!(c.execute("bench", thousand, timeout).await.unwrap().succeeded());
            for _ in 0..20 {
                c.execute("bench", "print(1)", timeout).await.unwrap();
            }
        }
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            for (c, samples) in [(&on, &mut with), (&off, &mut without)] {
                let t = Instant::now();
                let e = c.execute("bench", "print(1)", timeout).await.unwrap();
                samples.push(t.elapsed());
                assert!(e.succeeded());
            }
        }
        let ((on50, on99), (off50, off99)) = (p50_p99(&mut with), p50_p99(&mut without));
        println!("print(1), 1,000 unchanged files, files recorded:     p50 {} p99 {}", ms(on50), ms(on99));
        println!("print(1), 1,000 unchanged files, files not recorded: p50 {} p99 {}", ms(off50), ms(off99));
        println!(
            "looking at /mnt/data, cost at p50 (target: within 0.5 ms): {:+.3} ms",
            (on50.as_secs_f64() - off50.as_secs_f64()) * 1000.0
        );
        // One 10 MB file rewritten with new bytes by each run.
        let ten = "import os\nopen('/mnt/data/big.bin', 'wb').write(os.urandom(10 * 1024 * 1024))";
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for _ in 0..20 {
            for (c, samples) in [(&on, &mut with), (&off, &mut without)] {
                let t = Instant::now();
                let e = c.execute("bench", ten, timeout).await.unwrap();
                samples.push(t.elapsed());
                assert!(e.succeeded());
            }
        }
        let ((on50, _), (off50, _)) = (p50_p99(&mut with), p50_p99(&mut without));
        let recorder = files_pool.ledger().unwrap();
        recorder.flush();
        let conn = ledger::schema::open_existing(recorder.path()).unwrap().unwrap();
        let (versions, kept): (i64, i64) = conn
            .query_row(
                "SELECT count(*), sum(content = 'kept') FROM call_files WHERE path = '/mnt/data/big.bin'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(versions, 20, "every rewrite is recorded");
        println!("big.bin: {versions} versions recorded, the bytes of {kept} kept (256 MiB per session)");
        println!(
            "a 10 MB file rewritten: p50 {} recorded, {} not (target: at most 50 ms more): {:+.1} ms",
            ms(on50),
            ms(off50),
            (on50.as_secs_f64() - off50.as_secs_f64()) * 1000.0
        );
        // The ledger's growth for a 1 MB CSV rewritten 100 times (one row
        // changed each time).
        let recorder = files_pool.ledger().unwrap();
        recorder.flush();
        let used = || {
            let conn = ledger::schema::open_existing(recorder.path()).unwrap().unwrap();
            ledger::retention::used_bytes(&conn).unwrap()
        };
        let before = used();
        let make = "rows = [f'{i},{i * 3},region-{i % 7},' + 'x' * 40 for i in range(17000)]\nimport random";
        assert!(on.execute("csv-bench", make, timeout).await.unwrap().succeeded());
        for k in 0..100 {
            let rewrite = format!(
                "rows[{k} * 97] = 'changed,{k}'\nopen('/mnt/data/data.csv', 'w').write('\\n'.join(rows))"
            );
            assert!(on.execute("csv-bench", &rewrite, timeout).await.unwrap().succeeded());
        }
        recorder.flush();
        let grown = used().saturating_sub(before);
        println!(
            "a 1 MB CSV rewritten 100 times: the ledger grew {:.1} MiB ({:.1} KiB per rewrite)",
            grown as f64 / 1024.0 / 1024.0,
            grown as f64 / 1024.0 / 100.0
        );
    });
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    if std::env::var("LEDGER_BENCH").as_deref() == Ok("files") {
        files_cost(dir.path());
        return;
    }
    recording_cost(dir.path());
    files_cost(dir.path());

    let mut c = Criterion::default().configure_from_args();
    // The writer thread's work for one call (its own transaction; the thread
    // batches when calls come faster, which costs less per call).
    let one = dir.path().join("one.sqlite3");
    let conn = ledger::open(&one).unwrap();
    let mut i = 0;
    c.bench_function("ledger: write one execution (own transaction)", |b| {
        b.iter(|| {
            i += 1;
            ledger::write::insert_all(&conn, &[Box::new(call("agent-0001".into(), i))]).unwrap();
        });
    });

    let big = dir.path().join("million.sqlite3");
    fill(&big);
    let size = std::fs::metadata(&big).unwrap().len();
    println!(
        "database: {:.1} MiB for {ROWS} executions, {} bytes per execution",
        size as f64 / 1024.0 / 1024.0,
        size / ROWS as u64
    );
    let conn = ledger::schema::open_existing(&big).unwrap().unwrap();
    let query = Query {
        pool: None,
        identifier: Some("agent-0421".into()),
        since: None,
        tail: Some(100),
    };
    assert_eq!(ledger::read::entries(&conn, &query).unwrap().len(), 100);
    c.bench_function(
        "ledger: log of one identifier's last 100 cells, 1M recorded",
        |b| {
            b.iter(|| ledger::read::entries(&conn, &query).unwrap());
        },
    );
    // The whole `log --json ID --tail 100` process, opening the file included.
    let mut runs = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let conn = ledger::schema::open_existing(&big).unwrap().unwrap();
        let entries = ledger::read::entries(&conn, &query).unwrap();
        for e in &entries {
            std::hint::black_box(serde_json::to_string(e).unwrap());
        }
        runs.push(t.elapsed());
    }
    println!(
        "open + read + JSON of the last 100 cells, 1M recorded: p50 {}",
        ms(percentile(&mut runs, 0.5))
    );
    // The sessions pane's history: the recorded sessions, most recent first.
    assert_eq!(
        ledger::read::sessions(&conn, 1000).unwrap().len(),
        IDENTIFIERS.min(1000)
    );
    c.bench_function(
        "ledger: list of recorded sessions (up to 1000), 1M recorded",
        |b| {
            b.iter(|| ledger::read::sessions(&conn, 1000).unwrap());
        },
    );
    c.final_summary();
}
