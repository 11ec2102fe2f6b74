use super::*;

const ROOMY: Budget = Budget {
    per_file: 1024,
    per_look: 1 << 20,
};

fn look_at(files: &SessionFiles, dir: &Path, watcher: &Arc<Watcher>, budget: Budget) -> Changes {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(files.noting(dir, watcher, budget, Order::Serial, async {}))
        .1
}

fn summary(c: &Changes) -> Vec<(String, FileChangeKind, Option<ContentKept>)> {
    c.files
        .iter()
        .map(|f| (f.path.clone(), f.change, f.content))
        .collect()
}

#[test]
fn added_modified_and_deleted_files_are_found_recursively_with_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let watcher = Arc::new(Watcher::new());
    let files = SessionFiles::default();
    std::fs::write(dir.path().join("report.csv"), "a,b\n1,2\n").unwrap();
    std::fs::create_dir_all(dir.path().join("out/logs")).unwrap();
    std::fs::write(dir.path().join("out/logs/run.log"), "started\n").unwrap();
    let first = look_at(&files, dir.path(), &watcher, ROOMY);
    assert_eq!(
        summary(&first),
        vec![
            (
                "/mnt/data/out/logs/run.log".into(),
                FileChangeKind::Added,
                Some(ContentKept::Kept)
            ),
            (
                "/mnt/data/report.csv".into(),
                FileChangeKind::Added,
                Some(ContentKept::Kept)
            ),
        ]
    );
    let csv = &first.files[1];
    assert_eq!(csv.size, 8);
    assert_eq!(
        csv.sha256.as_deref(),
        Some(crate::protocol::record::sha256_hex(b"a,b\n1,2\n").as_str())
    );
    assert_eq!(
        csv.data.as_deref().map(Vec::as_slice),
        Some(&b"a,b\n1,2\n"[..])
    );

    // Nothing changed: nothing reported.
    assert_eq!(
        look_at(&files, dir.path(), &watcher, ROOMY),
        Changes::default()
    );

    // Rewritten with the same bytes: not a change.
    std::fs::write(dir.path().join("report.csv"), "a,b\n1,2\n").unwrap();
    assert_eq!(
        look_at(&files, dir.path(), &watcher, ROOMY),
        Changes::default()
    );

    std::fs::write(dir.path().join("out/logs/run.log"), "started\nended\n").unwrap();
    std::fs::remove_file(dir.path().join("report.csv")).unwrap();
    std::fs::create_dir(dir.path().join("new")).unwrap();
    std::fs::write(dir.path().join("new/late.txt"), "late").unwrap();
    let second = look_at(&files, dir.path(), &watcher, ROOMY);
    assert_eq!(
        summary(&second),
        vec![
            (
                "/mnt/data/new/late.txt".into(),
                FileChangeKind::Added,
                Some(ContentKept::Kept)
            ),
            (
                "/mnt/data/out/logs/run.log".into(),
                FileChangeKind::Modified,
                Some(ContentKept::Kept)
            ),
            ("/mnt/data/report.csv".into(), FileChangeKind::Deleted, None),
        ]
    );
    // A file written in the folder made by the last call is seen too.
    std::fs::write(dir.path().join("new/later.txt"), "later").unwrap();
    let third = look_at(&files, dir.path(), &watcher, ROOMY);
    assert_eq!(
        summary(&third),
        vec![(
            "/mnt/data/new/later.txt".into(),
            FileChangeKind::Added,
            Some(ContentKept::Kept)
        )]
    );
}

#[test]
fn a_file_past_the_budget_is_hashed_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let watcher = Arc::new(Watcher::new());
    let files = SessionFiles::default();
    let big = vec![7_u8; 4096];
    std::fs::write(dir.path().join("big.bin"), &big).unwrap();
    std::fs::write(dir.path().join("small.txt"), "small").unwrap();
    let c = look_at(&files, dir.path(), &watcher, ROOMY);
    let big_change = &c.files[0];
    assert_eq!(big_change.content, Some(ContentKept::TooBig));
    assert_eq!(big_change.size, 4096);
    assert!(big_change.data.is_none());
    assert_eq!(
        big_change.sha256.as_deref(),
        Some(crate::protocol::record::sha256_hex(&big).as_str())
    );
    assert_eq!(c.files[1].content, Some(ContentKept::Kept));
    // The look's own room: past it, bytes are not read into memory.
    let files = SessionFiles::default();
    let tight = Budget {
        per_file: 1024,
        per_look: 3,
    };
    let c = look_at(&files, dir.path(), &watcher, tight);
    assert_eq!(c.files[1].content, Some(ContentKept::Dropped));
}

#[test]
fn links_are_not_followed_and_their_targets_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "host secret").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("leak")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("leakdir")).unwrap();
    std::fs::write(dir.path().join("ok.txt"), "ok").unwrap();
    let watcher = Arc::new(Watcher::new());
    let files = SessionFiles::default();
    let c = look_at(&files, dir.path(), &watcher, ROOMY);
    assert_eq!(
        summary(&c),
        vec![(
            "/mnt/data/ok.txt".into(),
            FileChangeKind::Added,
            Some(ContentKept::Kept)
        )]
    );
    assert!(
        c.files
            .iter()
            .all(|f| f.data.as_deref().is_none_or(|d| d != b"host secret"))
    );
}

#[test]
fn without_inotify_every_look_walks() {
    let dir = tempfile::tempdir().unwrap();
    let watcher = Arc::new(Watcher {
        fd: None,
        flags: Mutex::default(),
    });
    let files = SessionFiles::default();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    assert_eq!(look_at(&files, dir.path(), &watcher, ROOMY).files.len(), 1);
    std::fs::write(dir.path().join("a.txt"), "b").unwrap();
    let c = look_at(&files, dir.path(), &watcher, ROOMY);
    assert_eq!(
        summary(&c),
        vec![(
            "/mnt/data/a.txt".into(),
            FileChangeKind::Modified,
            Some(ContentKept::Kept)
        )]
    );
}
