//! Writing, reading and pruning the ledger on a real SQLite file.

use std::time::Duration;

use chrono::{TimeZone, Utc};

use super::retention::{self, Limits};
use super::*;
use crate::protocol::ExecutionImage;
use crate::protocol::record::Call;
use crate::protocol::record::CallKind;
use crate::protocol::record::RecordedFile;
use crate::protocol::record::RecordedOutput;
use crate::protocol::record::sha256_hex;

/// A recorded execution of `code` in `identifier` at `at_ms` (UTC
/// milliseconds) by `test-agent/1.0`, with a line of stdout and a value.
pub(crate) fn call(identifier: &str, at_ms: i64, code: &str) -> Call {
    Call {
        pool: "local".into(),
        identifier: identifier.into(),
        client: Some("test-agent/1.0".into()),
        at: Utc.timestamp_millis_opt(at_ms).single().unwrap(),
        duration: Duration::from_micros(1500),
        kind: CallKind::Code,
        execution_id: Some(format!("exec-{at_ms}")),
        code: Some(code.into()),
        stdin: None,
        output: Some(RecordedOutput {
            status: "Succeeded".into(),
            exit_code: None,
            stdout: format!("out of {code}\n").into(),
            stderr: String::new().into(),
            result: Some(serde_json::json!({"text": "42", "json": 42})),
        }),
        images: vec![],
        file: None,
        client_gone: false,
        files: vec![],
        files_note: None,
        network: vec![],
    }
}

const LOOSE: Limits = Limits {
    days: 36500,
    max_bytes: u64::MAX,
    file_content_max: retention::Limits::DEFAULT_FILE_CONTENT_MAX,
    session_content_max: retention::Limits::DEFAULT_SESSION_CONTENT_MAX,
};

#[test]
fn recorded_calls_read_back_in_order_with_their_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    let now = Utc::now().timestamp_millis();
    rec.record(call("alpha", now, "a = 1"));
    rec.record(call("beta", now + 1, "b = 2"));
    let mut file = call("alpha", now + 2, "");
    file.kind = CallKind::Upload;
    file.code = None;
    file.output = None;
    file.file = Some(RecordedFile {
        name: "data.csv".into(),
        size: Some(3),
        sha256: Some(sha256_hex(b"a,b")),
    });
    rec.record(file);
    rec.flush();
    let conn = open(&path).unwrap();
    let alpha = read::entries(
        &conn,
        &Query {
            identifier: Some("alpha".into()),
            ..Query::default()
        },
    )
    .unwrap();
    assert_eq!(alpha.len(), 2);
    assert_eq!(alpha[0].code.as_deref(), Some("a = 1"));
    assert_eq!(alpha[0].stdout.as_deref(), Some("out of a = 1\n"));
    assert_eq!(alpha[0].client.as_deref(), Some("test-agent/1.0"));
    assert_eq!(
        alpha[0].result,
        Some(serde_json::json!({"text": "42", "json": 42}))
    );
    assert!((alpha[0].duration_ms - 1.5).abs() < 1e-9);
    assert_eq!(alpha[1].kind, CallKind::Upload);
    let f = alpha[1].file.as_ref().unwrap();
    assert_eq!((f.name.as_str(), f.size), ("data.csv", Some(3)));
    assert_eq!(f.sha256, Some(sha256_hex(b"a,b")));
    assert_eq!(f.sha256.as_deref().map(str::len), Some(64));
    let ids = read::identifiers(&conn, None).unwrap();
    assert_eq!(
        ids,
        vec![
            ("local".to_string(), "alpha".to_string(), 2),
            ("local".to_string(), "beta".to_string(), 1)
        ]
    );
    let tail = read::entries(
        &conn,
        &Query {
            tail: Some(1),
            ..Query::default()
        },
    )
    .unwrap();
    assert_eq!(tail.len(), 1);
    assert_eq!(tail[0].kind, CallKind::Upload);
    let since = read::entries(
        &conn,
        &Query {
            since: Utc.timestamp_millis_opt(now + 1).single(),
            ..Query::default()
        },
    )
    .unwrap();
    assert_eq!(since.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![2, 3]);
}

#[test]
fn an_image_shown_twice_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    let png = ExecutionImage {
        format: "png".into(),
        data: vec![0x89, b'P', b'N', b'G', 1, 2, 3],
    };
    let now = Utc::now().timestamp_millis();
    for i in 0..2 {
        let mut c = call("plots", now + i, "plt.show()");
        c.images = vec![png.clone()];
        rec.record(c);
    }
    rec.flush();
    let conn = open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM images", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
    let all = read::entries(&conn, &Query::default()).unwrap();
    let hash = sha256_hex(&png.data);
    for e in &all {
        assert_eq!(e.images.len(), 1);
        assert_eq!(e.images[0].sha256, hash);
        assert_eq!(e.images[0].size, 7);
    }
    assert_eq!(read::image_bytes(&conn, &hash).unwrap(), Some(png.data));
}

#[test]
fn pruning_removes_old_calls_and_keeps_to_the_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let conn = open(&path).unwrap();
    let now = Utc::now();
    let old = (now - chrono::Duration::days(40)).timestamp_millis();
    let recent = now.timestamp_millis();
    let mut batch: Vec<Box<Call>> = (0..50)
        .map(|i| Box::new(call("old", old + i, "x")))
        .collect();
    let mut with_image = call("old", old + 60, "plt.show()");
    with_image.images = vec![ExecutionImage {
        format: "png".into(),
        data: vec![7; 100],
    }];
    batch.push(Box::new(with_image));
    batch.extend((0..2000).map(|i| Box::new(call("new", recent + i, &"y".repeat(500)))));
    write::insert_all(&conn, &batch).unwrap();
    // By age: the 51 calls of 40 days ago go, and their image with them.
    let removed = retention::prune(
        &conn,
        Limits {
            days: 30,
            max_bytes: u64::MAX,
            file_content_max: retention::Limits::DEFAULT_FILE_CONTENT_MAX,
            session_content_max: retention::Limits::DEFAULT_SESSION_CONTENT_MAX,
        },
        now,
    )
    .unwrap();
    assert_eq!(removed, 51);
    let images: i64 = conn
        .query_row("SELECT count(*) FROM images", [], |r| r.get(0))
        .unwrap();
    assert_eq!(images, 0);
    // By size: the oldest go until the pages in use fit.
    let before = retention::used_bytes(&conn).unwrap();
    let max = before / 2;
    let removed = retention::prune(
        &conn,
        Limits {
            days: 30,
            max_bytes: max,
            file_content_max: retention::Limits::DEFAULT_FILE_CONTENT_MAX,
            session_content_max: retention::Limits::DEFAULT_SESSION_CONTENT_MAX,
        },
        now,
    )
    .unwrap();
    assert!(removed > 0);
    assert!(retention::used_bytes(&conn).unwrap() <= max);
    let left = read::entries(&conn, &Query::default()).unwrap();
    assert_eq!(left.len() as u64, 2000 - removed);
    // The newest are the ones kept, in order.
    assert_eq!(left.last().unwrap().at.timestamp_millis(), recent + 1999);
    assert!(left.windows(2).all(|w| w[0].seq < w[1].seq));
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    // The file itself shrank (incremental vacuum).
    let file = std::fs::metadata(&path).unwrap().len();
    assert!(file <= before, "{file} > {before}");
}

#[test]
fn a_full_queue_drops_and_counts_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    // Hold the write lock from another connection so the writer stalls on its
    // first batch; the queue then fills.
    let blocker = rusqlite::Connection::open(&path).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let now = Utc::now().timestamp_millis();
    let total = write::QUEUE + 2 * 256 + 100;
    for i in 0..i64::try_from(total).unwrap() {
        rec.record(call("burst", now + i, "pass"));
    }
    assert!(rec.dropped() > 0, "nothing was dropped");
    blocker.execute_batch("COMMIT").unwrap();
    rec.flush();
    let conn = open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM calls", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n.cast_unsigned() + rec.dropped(), total as u64);
}

#[test]
fn a_tail_of_all_calls_read_one_identifier_at_a_time_keeps_the_last_n() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    let now = Utc::now().timestamp_millis();
    for (i, id) in (0_i64..).zip(["a", "b", "a", "b", "a"]) {
        rec.record(call(id, now + i, &format!("c{i}")));
    }
    rec.flush();
    let conn = open(&path).unwrap();
    let all = Query {
        tail: Some(3),
        ..Query::default()
    };
    let from = read::tail_start(&conn, &all).unwrap();
    let codes = |id: &str| {
        let mut seen = Vec::new();
        let one = Query {
            identifier: Some(id.into()),
            ..Query::default()
        };
        read::each(&conn, &one, from, &mut |e| {
            seen.push(e.code.unwrap_or_default());
            Ok::<(), rusqlite::Error>(())
        })
        .unwrap();
        seen
    };
    assert_eq!(
        (codes("a"), codes("b")),
        (vec!["c2".into(), "c4".into()], vec!["c3".to_string()])
    );
    // A tail of one identifier is its own last N, oldest first.
    let a2 = read::entries(
        &conn,
        &Query {
            identifier: Some("a".into()),
            tail: Some(2),
            ..Query::default()
        },
    )
    .unwrap();
    let a2: Vec<_> = a2.into_iter().filter_map(|e| e.code).collect();
    assert_eq!(a2, ["c2", "c4"]);
    // Nothing selected: the tail starts past every call.
    let none = Query {
        identifier: Some("zzz".into()),
        tail: Some(5),
        ..Query::default()
    };
    assert_eq!(read::tail_start(&conn, &none).unwrap(), i64::MAX);
}

#[test]
fn the_recorded_sessions_follow_the_calls_through_recording_and_pruning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    let day = 86_400_000;
    let now = Utc::now().timestamp_millis();
    let old = now - 40 * day;
    rec.record(call("agent-1", old, "a = 1"));
    rec.record(call("agent-1", now - 2, "a += 1"));
    let mut upload = call("agent-1", now - 1, "");
    upload.kind = CallKind::Upload;
    upload.client = None;
    rec.record(upload);
    rec.record(call("agent-2", now, "b = 2"));
    rec.flush();
    let conn = open(&path).unwrap();
    let listed = read::sessions(&conn, 10).unwrap();
    let rows: Vec<_> = listed
        .iter()
        .map(|s| {
            (
                s.identifier.as_str(),
                s.calls,
                s.cells,
                s.first.timestamp_millis(),
            )
        })
        .collect();
    assert_eq!(rows, [("agent-2", 1, 1, now), ("agent-1", 3, 2, old)]);
    // The upload named no client: the last one that did is kept.
    assert_eq!(listed[1].client.as_deref(), Some("test-agent/1.0"));
    assert_eq!(listed[1].last.timestamp_millis(), now - 1);
    // Pruning the 40-day-old call moves agent-1's first activity on.
    let limits = Limits {
        days: 30,
        max_bytes: u64::MAX,
        file_content_max: retention::Limits::DEFAULT_FILE_CONTENT_MAX,
        session_content_max: retention::Limits::DEFAULT_SESSION_CONTENT_MAX,
    };
    assert_eq!(retention::prune(&conn, limits, Utc::now()).unwrap(), 1);
    let listed = read::sessions(&conn, 10).unwrap();
    assert_eq!(
        (
            listed[1].calls,
            listed[1].cells,
            listed[1].first.timestamp_millis()
        ),
        (2, 1, now - 2)
    );
    // A session whose every call is pruned leaves the list.
    conn.execute("DELETE FROM calls WHERE identifier = 'agent-2'", [])
        .unwrap();
    let ids: Vec<_> = read::sessions(&conn, 10)
        .unwrap()
        .into_iter()
        .map(|s| s.identifier)
        .collect();
    assert_eq!(ids, ["agent-1"]);
}

/// Takes the ledger at `path` back to schema version 1: what versions 2
/// (the sessions table and its triggers, with version 4's column), 3 (a
/// column of the calls) and 5 (the files tables and a column) added is gone.
fn back_to_version_1(path: &std::path::Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "ALTER TABLE calls DROP COLUMN client_gone; ALTER TABLE calls DROP COLUMN files_note;
         DROP TABLE call_files; DROP TABLE file_contents; DROP TABLE call_network;
         DROP TRIGGER calls_into_sessions; DROP TRIGGER calls_out_of_sessions;
         DROP TABLE sessions; PRAGMA user_version = 1;",
    )
    .unwrap();
}

/// Issue 29: what an execution tried to reach through its session's egress
/// proxy is written next to it and read back in order, and goes with the
/// call when it is pruned.
#[test]
fn network_attempts_are_kept_next_to_their_execution() {
    use crate::protocol::egress::{Decision, NetworkAttempt, Via};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    let now = Utc::now().timestamp_millis();
    let at = Utc.timestamp_millis_opt(now).single().unwrap();
    let mut c = call("agent-1", now, "urllib");
    c.network = vec![
        NetworkAttempt {
            host: "pypi.org".into(),
            port: 443,
            decision: Decision::Allowed,
            via: Via::Proxy,
            bytes: 4096,
            at,
        },
        NetworkAttempt {
            host: "169.254.169.254".into(),
            port: 80,
            decision: Decision::Denied,
            via: Via::Direct,
            bytes: 0,
            at,
        },
    ];
    rec.record(c.clone());
    rec.record(call("agent-1", now + 1, "1"));
    rec.flush();
    let conn = open(&path).unwrap();
    let mut got = Vec::new();
    read::each::<rusqlite::Error>(&conn, &read::Query::default(), 0, &mut |e| {
        got.push(e);
        Ok(())
    })
    .unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].network.as_deref(), Some(&c.network[..]));
    assert_eq!(got[1].network.as_deref(), Some(&[][..]));
    conn.execute("DELETE FROM calls WHERE id = ?1", [got[0].seq])
        .unwrap();
    let left: i64 = conn
        .query_row("SELECT count(*) FROM call_network", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0, "gone with its call");
}

#[test]
fn a_version_1_ledger_gets_its_sessions_filled_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    let now = Utc::now().timestamp_millis();
    rec.record(call("agent-1", now, "a = 1"));
    rec.record(call("agent-1", now + 1, "a = 2"));
    rec.flush();
    drop(rec);
    back_to_version_1(&path);
    let conn = open(&path).unwrap();
    let listed = read::sessions(&conn, 10).unwrap();
    assert_eq!(listed.len(), 1);
    let s = &listed[0];
    assert_eq!(
        (s.identifier.as_str(), s.calls, s.cells, s.client.as_deref()),
        ("agent-1", 2, 2, Some("test-agent/1.0"))
    );
    assert_eq!(
        (s.first.timestamp_millis(), s.last.timestamp_millis()),
        (now, now + 1)
    );
}

/// The local pool records an execution it keeps anyway (for `GET
/// executions/{id}`): the recorded output shares its streams rather than
/// copying them, and is written to the ledger and read back as text.
#[test]
fn a_shared_execution_is_recorded_without_copying_its_output() {
    use crate::protocol::{Execution, ExecutionStatus};
    let exec = std::sync::Arc::new(Execution {
        execution_count: None,
        id: Some("e-big".into()),
        status: ExecutionStatus::Succeeded,
        stdout: (0..10_000).map(|i| format!("{i}\n")).collect(),
        stderr: "warn\n".into(),
        result: None,
        images: vec![],
        duration: Duration::from_millis(3),
        network: Vec::new(),
    });
    let output = RecordedOutput::of_shared(&exec, None);
    assert_eq!(output.stdout.as_ptr(), exec.stdout.as_ptr());
    assert_eq!(output.stderr.as_ptr(), exec.stderr.as_ptr());
    assert_eq!(
        serde_json::to_value(&output).unwrap()["stdout"],
        exec.stdout.as_str()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    let mut shared = call("big", Utc::now().timestamp_millis(), "print");
    shared.output = Some(output);
    rec.record(shared);
    rec.flush();
    let conn = open(&path).unwrap();
    let entries = read::entries(&conn, &Query::default()).unwrap();
    assert_eq!(entries[0].stdout.as_deref(), Some(exec.stdout.as_str()));
    assert_eq!(entries[0].stderr.as_deref(), Some("warn\n"));
}

/// Issue 26: the ledger keeps what sessions ran, so its folder is 0700 and
/// its database, WAL and shared-memory files 0600, whatever the umask; an
/// older ledger left readable by others is narrowed when opened.
#[test]
fn the_ledger_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data/sessionpad/ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    rec.record(call("agent-1", Utc::now().timestamp_millis(), "secret = 1"));
    rec.flush();
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(mode(&path), 0o600);
    for suffix in ["-wal", "-shm"] {
        let side = path.with_file_name(format!("ledger.sqlite3{suffix}"));
        if side.exists() {
            assert_eq!(mode(&side), 0o600, "{}", side.display());
        }
    }
    drop(rec);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    drop(open(&path).unwrap());
    assert_eq!(mode(&path), 0o600);
}

/// Issue 26: a session an agent started and a person took over keeps both
/// names: who started it and the latest client; a ledger of version 1
/// learns who started each session from the calls it keeps.
#[test]
fn a_recorded_session_names_who_started_it_and_the_latest_client() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let rec = Recorder::start(&path, LOOSE).unwrap();
    let now = Utc::now().timestamp_millis();
    rec.record(call("agent-1", now, "a = 1"));
    let mut person = call("agent-1", now + 1, "a");
    person.client = Some("sessionpad/0.1.0".into());
    rec.record(person);
    rec.flush();
    drop(rec);
    let conn = open(&path).unwrap();
    let s = &read::sessions(&conn, 10).unwrap()[0];
    assert_eq!(
        (s.first_client.as_deref(), s.client.as_deref()),
        (Some("test-agent/1.0"), Some("sessionpad/0.1.0"))
    );
    drop(conn);
    back_to_version_1(&path);
    let conn = open(&path).unwrap();
    let s = &read::sessions(&conn, 10).unwrap()[0];
    assert_eq!(
        (s.first_client.as_deref(), s.client.as_deref()),
        (Some("test-agent/1.0"), Some("sessionpad/0.1.0"))
    );
}

/// A changed file of `size` bytes of `fill`, kept with its bytes.
fn changed(
    path: &str,
    change: crate::protocol::record::FileChangeKind,
    fill: u8,
    size: usize,
) -> crate::protocol::record::FileChange {
    use crate::protocol::record::{ContentKept, FileChange, FileChangeKind};
    let data = vec![fill; size];
    FileChange {
        path: format!("/mnt/data/{path}"),
        change,
        size: size as u64,
        sha256: (change != FileChangeKind::Deleted).then(|| sha256_hex(&data)),
        content: (change != FileChangeKind::Deleted).then_some(ContentKept::Kept),
        data: (change != FileChangeKind::Deleted).then(|| std::sync::Arc::new(data)),
    }
}

/// Records, with a session budget of 2,500 bytes: agent-1 writing `a.csv`
/// and `b.txt` (1,000 bytes each), then rewriting `a.csv` and deleting
/// `b.txt` (with a note of what the look could not see); agent-2 writing
/// `copy.csv` with `a.csv`'s first bytes.
fn record_versions(path: &std::path::Path) {
    use crate::protocol::record::FileChangeKind::*;
    let limits = Limits {
        session_content_max: 2500,
        ..LOOSE
    };
    let rec = Recorder::start(path, limits).unwrap();
    let now = Utc::now().timestamp_millis();
    let mut a = call("agent-1", now, "write");
    a.files = vec![
        changed("a.csv", Added, b'a', 1000),
        changed("b.txt", Added, b'b', 1000),
    ];
    rec.record(a);
    let mut b = call("agent-1", now + 1, "rewrite");
    b.files = vec![
        changed("a.csv", Modified, b'A', 1000),
        changed("b.txt", Deleted, 0, 0),
    ];
    b.files_note = Some("1 name(s) that are not UTF-8 were not looked at".into());
    rec.record(b);
    // Another session's same bytes: stored once, its own budget.
    let mut other = call("agent-2", now + 2, "same");
    other.files = vec![changed("copy.csv", Added, b'a', 1000)];
    rec.record(other);
    rec.flush();
}

/// Issue 26: the files each call changed are read back with the call; their
/// bytes are stored once per hash; a session past its content budget loses
/// its oldest versions' bytes first (said as `dropped`, the bytes deleted),
/// and the state after any call is known.
#[test]
fn changed_files_are_kept_within_the_session_budget_oldest_dropped_first() {
    use crate::protocol::record::{ContentKept, FileChangeKind::*};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    record_versions(&path);
    let conn = schema::open(&path).unwrap();
    let entries = read::entries(&conn, &Query::default()).unwrap();
    let summary = |i: usize| -> Vec<(String, &'static str, Option<ContentKept>)> {
        entries[i]
            .files
            .iter()
            .map(|f| (f.path.clone(), f.change.as_str(), f.content))
            .collect()
    };
    // 3,000 bytes of versions in agent-1: the oldest (a.csv's first) goes.
    assert_eq!(
        summary(0),
        vec![
            (
                "/mnt/data/a.csv".into(),
                "added",
                Some(ContentKept::Dropped)
            ),
            ("/mnt/data/b.txt".into(), "added", Some(ContentKept::Kept)),
        ]
    );
    assert_eq!(
        summary(1),
        vec![
            (
                "/mnt/data/a.csv".into(),
                "modified",
                Some(ContentKept::Kept)
            ),
            ("/mnt/data/b.txt".into(), "deleted", None),
        ]
    );
    assert_eq!(
        entries[1].files_note.as_deref(),
        Some("1 name(s) that are not UTF-8 were not looked at")
    );
    // agent-2 still keeps the bytes agent-1 dropped: one row for both.
    assert_eq!(summary(2)[0].2, Some(ContentKept::Kept));
    let stored: i64 = conn
        .query_row("SELECT count(*) FROM file_contents", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, 3, "aaaa (agent-2's), bbbb, AAAA");
    let first_a = entries[0].files[0].sha256.clone().unwrap();
    assert!(read::file_content(&conn, &first_a).unwrap().is_some());
    // The state after the first call, and at the end.
    let after_first = read::files_after(&conn, None, "agent-1", Some(entries[0].seq)).unwrap();
    assert_eq!(
        after_first.keys().collect::<Vec<_>>(),
        ["/mnt/data/a.csv", "/mnt/data/b.txt"]
    );
    let end = read::files_after(&conn, None, "agent-1", None).unwrap();
    assert_eq!(end.keys().collect::<Vec<_>>(), ["/mnt/data/a.csv"]);
    assert_eq!(
        read::file_content(&conn, end["/mnt/data/a.csv"].sha256.as_deref().unwrap())
            .unwrap()
            .unwrap(),
        vec![b'A'; 1000]
    );
    // The previous version of a.csv before the second call is the first.
    let prev = read::previous_version(&conn, "local", "agent-1", "/mnt/data/a.csv", entries[1].seq)
        .unwrap()
        .unwrap();
    assert_eq!(prev.change, Added);
    // JSON: path, change, size, sha256, content; no bytes.
    let json = serde_json::to_value(&entries[1]).unwrap();
    assert_eq!(
        json["files"][1],
        serde_json::json!({"path": "/mnt/data/b.txt", "change": "deleted", "size": 0})
    );
    assert_eq!(json["files"][0]["content"], "kept");
    // Pruning agent-2's call removes the bytes no kept version points at.
    conn.execute("DELETE FROM calls WHERE identifier = 'agent-2'", [])
        .unwrap();
    retention::remove_orphan_contents(&conn).unwrap();
    assert!(read::file_content(&conn, &first_a).unwrap().is_none());
}
