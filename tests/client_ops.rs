//! The session client's file, session, pool and asynchronous-execution calls
//! against a real local pool (real kernels, real HTTP on loopback), in the
//! api-versions that have them.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use std::sync::Mutex;
use std::time::Duration;

use common::{LIMIT, TestPool, identifier};
use serde_json::json;
use sessionpad::client::{ClientError, SessionClient};
use sessionpad::protocol::{ApiVersion, ExecutionStatus, FileKind, RemoteFile};
use tokio_util::sync::CancellationToken;

const FAMILY_A: [ApiVersion; 2] = [ApiVersion::V2024_02_02, ApiVersion::V2024_08_02];
const FAMILY_B: [ApiVersion; 3] = [
    ApiVersion::V2024_10_02,
    ApiVersion::V2025_02_02,
    ApiVersion::V2025_10_02,
];
const WITH_SESSIONS: [ApiVersion; 2] = [ApiVersion::V2025_02_02, ApiVersion::V2025_10_02];

/// Names with a space, Unicode, `#`, `%` and `&`.
const NAMES: [&str; 3] = ["data.bin", "a b.bin", "ünï #1 50% & co.bin"];
const MIB: u64 = 1024 * 1024;

/// `len` pseudo-random bytes (xorshift64), the same for the same `seed`.
fn pseudo_random(len: usize, mut seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        out.extend_from_slice(&seed.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A temp dir holding a 1 MiB pseudo-random file, and its bytes.
fn one_mib_file() -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local.bin");
    let data = pseudo_random(1024 * 1024, 0x5eed);
    std::fs::write(&path, &data).unwrap();
    (dir, path, data)
}

/// Uploads `local` as `name`, checks the progress reports, downloads it back and
/// checks it is byte-identical.
async fn round_trip(c: &SessionClient, id: &str, local: &std::path::Path, name: &str, data: &[u8]) {
    let v = c.api_version();
    let sent = Mutex::new(Vec::new());
    let f = c
        .upload_file(id, local, name, None, &|s, t| {
            sent.lock().unwrap().push((s, t));
        })
        .await
        .unwrap_or_else(|e| panic!("{v} upload {name}: {e}"));
    assert_eq!(
        (f.name.as_str(), f.size, f.kind),
        (name, Some(MIB), FileKind::File),
        "{v}"
    );
    let sent = sent.into_inner().unwrap();
    assert!(
        sent.windows(2).all(|w| w[0].0 <= w[1].0),
        "{v}: progress goes forward"
    );
    assert_eq!(sent.last(), Some(&(MIB, MIB)), "{v}");

    let got = Mutex::new(Vec::new());
    let mut out = Vec::new();
    let n = c
        .download_file(id, name, &mut out, &|d, t| got.lock().unwrap().push((d, t)))
        .await
        .unwrap_or_else(|e| panic!("{v} download {name}: {e}"));
    assert_eq!(n, MIB);
    assert!(out == data, "{v}: {name} differs after the round trip");
    assert_eq!(
        got.into_inner().unwrap().last(),
        Some(&(MIB, Some(MIB))),
        "{v}"
    );
    let info = c.file_info(id, name).await.unwrap();
    assert_eq!((info.name.as_str(), info.size), (name, Some(MIB)), "{v}");
}

#[tokio::test]
async fn family_b_files_round_trip_list_and_delete() {
    let pool = TestPool::start().await;
    let (dir, local, data) = one_mib_file();
    for v in FAMILY_B {
        let c = pool.client(v);
        let id = identifier();
        for name in NAMES {
            round_trip(&c, &id, &local, name, &data).await;
        }
        let mut listed: Vec<String> = c
            .list_files(&id, None, false)
            .await
            .unwrap()
            .iter()
            .map(RemoteFile::path)
            .collect();
        listed.sort();
        assert_eq!(
            listed,
            ["a b.bin", "data.bin", "ünï #1 50% & co.bin"],
            "{v}"
        );

        // A folder, by `path` and by a name with `/`.
        c.upload_file(&id, &local, "in path.bin", Some("sub"), &|_, _| {})
            .await
            .unwrap();
        c.upload_file(&id, &local, "sub/by name.bin", None, &|_, _| {})
            .await
            .unwrap();
        let sub = c.list_files(&id, Some("sub"), false).await.unwrap();
        let names: Vec<&str> = sub.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["by name.bin", "in path.bin"], "{v}");
        assert_eq!(
            c.file_info(&id, "sub/in path.bin").await.unwrap().size,
            Some(MIB)
        );
        let recursive = c.list_files(&id, None, true).await;
        if v == ApiVersion::V2025_10_02 {
            let all = recursive.unwrap();
            assert!(
                all.iter()
                    .any(|f| f.kind == FileKind::Directory && f.name == "sub"),
                "{all:?}"
            );
            assert!(all.iter().any(|f| f.path() == "sub/in path.bin"), "{all:?}");
        } else {
            assert!(
                matches!(recursive, Err(ClientError::NotSupported { .. })),
                "{recursive:?}"
            );
        }

        // Download to a file on disk.
        let dest = dir.path().join(format!("{v}.bin"));
        let mut file = tokio::fs::File::create(&dest).await.unwrap();
        c.download_file(&id, "sub/by name.bin", &mut file, &|_, _| {})
            .await
            .unwrap();
        drop(file);
        assert!(std::fs::read(&dest).unwrap() == data);

        for name in NAMES {
            c.delete_file(&id, name).await.unwrap();
            let gone = c.file_info(&id, name).await;
            assert!(
                matches!(gone, Err(ClientError::NotFound { .. })),
                "{v} {name}: {gone:?}"
            );
        }
        c.delete_file(&id, "sub").await.unwrap();
        assert_eq!(c.list_files(&id, None, false).await.unwrap(), [], "{v}");
    }
}

#[tokio::test]
async fn family_a_upload_list_download() {
    let pool = TestPool::start().await;
    let (_dir, local, data) = one_mib_file();
    for v in FAMILY_A {
        let c = pool.client(v);
        let id = identifier();
        for name in NAMES {
            round_trip(&c, &id, &local, name, &data).await;
        }
        let listed = c.list_files(&id, None, false).await.unwrap();
        assert_eq!(listed.len(), 3, "{v}: {listed:?}");
        assert!(
            listed
                .iter()
                .all(|f| f.size == Some(MIB) && f.modified.is_some())
        );
        let r = c.delete_file(&id, "data.bin").await;
        assert!(matches!(r, Err(ClientError::NotSupported { .. })), "{r:?}");
        let missing = c.file_info(&id, "missing.bin").await;
        assert!(
            matches!(missing, Err(ClientError::NotFound { .. })),
            "{missing:?}"
        );
        // The kernel sees the uploads in /mnt/data's stand-in, its working folder.
        let seen = c
            .execute(&id, "import os; sorted(os.listdir('.'))", LIMIT)
            .await
            .unwrap();
        assert_eq!(
            seen.result.clone().and_then(|v| v.json),
            Some(json!(["a b.bin", "data.bin", "ünï #1 50% & co.bin"])),
            "{seen:?}"
        );
    }
}

fn not_found_session(r: &Result<impl std::fmt::Debug, ClientError>) -> bool {
    matches!(r, Err(ClientError::Service { code, .. }) if code == "SessionWithIdentifierNotFound")
}

#[tokio::test]
async fn sessions_are_inspected_listed_and_ended() {
    let pool = TestPool::start().await;
    for v in WITH_SESSIONS {
        let c = pool.client(v);
        let id = identifier();
        c.execute(&id, "x = 1", LIMIT).await.unwrap();
        let info = c.session_info(&id).await.unwrap();
        assert_eq!(info.identifier, id);
        let (created, last, expires) = (
            info.created.unwrap(),
            info.last_accessed.unwrap(),
            info.expires.unwrap(),
        );
        assert!(created <= last && last < expires, "{info:?}");
        assert!(info.etag.is_some());
        assert!(
            c.list_sessions()
                .await
                .unwrap()
                .iter()
                .any(|s| s.identifier == id)
        );
        let view = c.management_get_session(&id).await.unwrap();
        assert_eq!(
            (view.identifier.as_str(), view.expires.is_some()),
            (id.as_str(), true)
        );
        assert!(
            c.management_list_sessions()
                .await
                .unwrap()
                .iter()
                .any(|s| s.identifier == id)
        );

        c.delete_session(&id).await.unwrap();
        assert!(not_found_session(&c.session_info(&id).await));
        assert!(
            !c.list_sessions()
                .await
                .unwrap()
                .iter()
                .any(|s| s.identifier == id)
        );

        let other = identifier();
        c.execute(&other, "1", LIMIT).await.unwrap();
        let said = c.management_stop_session(&other).await.unwrap();
        assert!(said.contains(&other), "{said}");
        assert!(not_found_session(&c.management_get_session(&other).await));
    }
    for v in [FAMILY_A.as_slice(), &[ApiVersion::V2024_10_02]].concat() {
        let r = pool.client(v).session_info(&identifier()).await;
        assert!(
            matches!(r, Err(ClientError::NotSupported { .. })),
            "{v}: {r:?}"
        );
    }
}

#[tokio::test]
async fn pool_metadata_lists_numpy() {
    let pool = TestPool::start().await;
    let m = pool
        .client(ApiVersion::V2025_10_02)
        .pool_metadata()
        .await
        .unwrap();
    assert!(
        m.packages
            .iter()
            .any(|p| p.name.eq_ignore_ascii_case("numpy") && !p.version.is_empty()),
        "{m:?}"
    );
    assert!(
        !m.runtimes.is_empty() && m.kernel.is_some() && m.created.is_some(),
        "{m:?}"
    );
}

#[tokio::test]
async fn asynchronous_executions_run_and_can_be_abandoned() {
    let pool = TestPool::start().await;
    let cancel = CancellationToken::new();
    for v in FAMILY_B {
        let c = pool.client(v);
        let id = identifier();
        let running = Mutex::new(0);
        let progress = |e: &sessionpad::protocol::Execution| {
            assert_eq!(e.status, ExecutionStatus::Running);
            *running.lock().unwrap() += 1;
        };
        let code = "import time\ntime.sleep(0.4)\nx = 6*7\nprint(x)";
        let exec = c
            .execute_async(&id, code, LIMIT, &progress, &cancel)
            .await
            .unwrap();
        assert_eq!(
            (exec.status, exec.stdout.as_str()),
            (ExecutionStatus::Succeeded, "42\n"),
            "{v}: {exec:?}"
        );
        assert!(*running.lock().unwrap() >= 1, "{v}: progress while running");
        assert!(exec.id.is_some());
        let again = c
            .get_execution(&id, exec.id.as_deref().unwrap())
            .await
            .unwrap();
        assert_eq!(again.stdout, "42\n");
        let x = c.execute(&id, "x", LIMIT).await.unwrap();
        assert_eq!(
            x.result.clone().and_then(|v| v.json),
            Some(json!(42)),
            "{v}: state is shared with synchronous calls"
        );
    }
    let c = pool.client(ApiVersion::V2025_10_02);
    let stop = CancellationToken::new();
    let stopper = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let r = c
        .execute_async(
            &identifier(),
            "import time; time.sleep(30)",
            LIMIT,
            &|_| {},
            &stop,
        )
        .await;
    assert!(matches!(r, Err(ClientError::Cancelled)), "{r:?}");
    for v in FAMILY_A {
        let r = pool
            .client(v)
            .execute_async(&identifier(), "1", LIMIT, &|_| {}, &cancel)
            .await;
        assert!(matches!(r, Err(ClientError::NotSupported { .. })), "{r:?}");
    }
}
