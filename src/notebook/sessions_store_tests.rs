//! Tests of the sessions store in a temporary data directory.

use chrono::TimeZone;
use pretty_assertions::assert_eq;

use super::*;

fn at(minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 12, minute, 0)
        .single()
        .expect("a valid time")
}

fn ids(list: &[&SessionEntry]) -> Vec<String> {
    list.iter().map(|e| e.identifier.clone()).collect()
}

#[test]
fn a_missing_file_is_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = SessionsStore::load_in(dir.path());
    assert!(loaded.problem.is_none());
    assert!(loaded.store.entries().is_empty());
    assert_eq!(loaded.store.path(), dir.path().join("sessions.json"));
}

#[test]
fn record_use_creates_then_updates_and_survives_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SessionsStore::load_in(dir.path()).store;
    store.record_use("local", "a", at(1)).unwrap();
    store.record_use("local", "b", at(2)).unwrap();
    store
        .record_use("https://pool.example", "a", at(3))
        .unwrap();
    store.record_use("local", "a", at(4)).unwrap();
    // An older time never moves the last use backwards.
    store.record_use("local", "b", at(0)).unwrap();

    let reloaded = SessionsStore::load_in(dir.path());
    assert!(reloaded.problem.is_none());
    let store = reloaded.store;
    assert_eq!(ids(&store.list_for_pool("local")), ["a", "b"]);
    assert_eq!(ids(&store.list_for_pool("https://pool.example")), ["a"]);
    assert!(store.list_for_pool("elsewhere").is_empty());
    let a = store.get("local", "a").unwrap();
    assert_eq!((a.first_used, a.last_used), (at(1), at(4)));
    assert_eq!(store.get("local", "b").unwrap().last_used, at(2));
}

#[test]
fn the_file_is_json_with_rfc3339_times() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SessionsStore::load_in(dir.path()).store;
    store.record_use("local", "x", at(5)).unwrap();
    let text = std::fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["sessions"][0]["pool"], "local");
    assert_eq!(v["sessions"][0]["identifier"], "x");
    assert_eq!(v["sessions"][0]["last_used"], "2025-03-01T12:05:00Z");
    assert!(v["sessions"][0].get("label").is_none());
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [std::ffi::OsString::from(FILE_NAME)]);
}

#[test]
fn labels_notebooks_and_removal() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SessionsStore::load_in(dir.path()).store;
    store.record_use("local", "a", at(1)).unwrap();
    store
        .set_label("local", "a", Some("  agent run 3 "))
        .unwrap();
    store
        .set_notebook("local", "a", Path::new("/data/nb/a.ipynb"))
        .unwrap();
    let store2 = SessionsStore::load_in(dir.path()).store;
    let a = store2.get("local", "a").unwrap();
    assert_eq!(a.label.as_deref(), Some("agent run 3"));
    assert_eq!(a.notebook.as_deref(), Some(Path::new("/data/nb/a.ipynb")));

    store.set_label("local", "a", Some("   ")).unwrap();
    assert_eq!(store.get("local", "a").unwrap().label, None);
    assert!(matches!(
        store.set_label("local", "nope", Some("x")),
        Err(SessionsStoreError::NotFound { .. })
    ));
    assert!(store.remove("local", "a").unwrap());
    assert!(!store.remove("local", "a").unwrap());
    assert!(
        SessionsStore::load_in(dir.path())
            .store
            .entries()
            .is_empty()
    );
}

#[test]
fn a_corrupt_file_is_kept_as_bak_and_the_store_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    std::fs::write(&path, "{ not json").unwrap();
    let loaded = SessionsStore::load_in(dir.path());
    let problem = loaded.problem.expect("the corruption is reported");
    assert!(problem.contains("sessions.json.bak"), "{problem}");
    assert!(loaded.store.entries().is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sessions.json.bak")).unwrap(),
        "{ not json"
    );
    assert!(!path.exists());

    // Bytes that are not UTF-8 count as corrupt too, and the store keeps working.
    std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
    let mut store = SessionsStore::load_in(dir.path()).store;
    store.record_use("local", "fresh", at(1)).unwrap();
    assert_eq!(
        ids(&SessionsStore::load_in(dir.path())
            .store
            .list_for_pool("local")),
        ["fresh"]
    );
}

#[test]
fn two_instances_do_not_drop_each_others_entries() {
    let dir = tempfile::tempdir().unwrap();
    let mut one = SessionsStore::load_in(dir.path()).store;
    let mut two = SessionsStore::load_in(dir.path()).store;
    one.record_use("local", "from-one", at(1)).unwrap();
    two.record_use("local", "from-two", at(2)).unwrap();
    assert_eq!(
        ids(&SessionsStore::load_in(dir.path())
            .store
            .list_for_pool("local")),
        ["from-two", "from-one"]
    );
}

#[test]
fn each_pool_keeps_its_most_recent_entries() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SessionsStore::load_in(dir.path()).store;
    store.record_use("other", "keep-me", at(0)).unwrap();
    let base = at(0);
    for i in 0..=MAX_PER_POOL {
        let t = base + chrono::Duration::seconds(i64::try_from(i).unwrap() + 1);
        store.record_use("local", &format!("id-{i}"), t).unwrap();
    }
    let local = store.list_for_pool("local");
    assert_eq!(local.len(), MAX_PER_POOL);
    assert_eq!(local[0].identifier, format!("id-{MAX_PER_POOL}"));
    assert!(store.get("local", "id-0").is_none(), "the oldest went");
    assert!(store.get("other", "keep-me").is_some());
}

#[test]
fn record_run_keeps_the_last_finished_run_apart_from_opening() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SessionsStore::load_in(dir.path()).store;
    // Opening a notebook is a use, not a run.
    store.record_use("local", "a", at(1)).unwrap();
    assert_eq!(store.get("local", "a").unwrap().last_run, None);
    store.record_run("local", "a", at(3)).unwrap();
    // A run of an identifier never recorded creates its entry.
    store.record_run("local", "b", at(2)).unwrap();
    // An older time never moves the last run backwards.
    store.record_run("local", "a", at(0)).unwrap();

    let store = SessionsStore::load_in(dir.path()).store;
    let a = store.get("local", "a").unwrap();
    assert_eq!((a.last_used, a.last_run), (at(3), Some(at(3))));
    let b = store.get("local", "b").unwrap();
    assert_eq!((b.first_used, b.last_run), (at(2), Some(at(2))));
    assert_eq!(ids(&store.list_for_pool("local")), ["a", "b"]);
}

#[test]
fn files_without_last_run_still_load() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(FILE_NAME),
        r#"{"version":1,"sessions":[{"pool":"local","identifier":"old","first_used":"2025-03-01T12:00:00Z","last_used":"2025-03-01T12:01:00Z"}]}"#,
    )
    .unwrap();
    let loaded = SessionsStore::load_in(dir.path());
    assert!(loaded.problem.is_none());
    assert_eq!(loaded.store.get("local", "old").unwrap().last_run, None);
}

#[test]
fn the_writer_thread_writes_what_the_copy_notes() {
    let dir = tempfile::tempdir().unwrap();
    let mut copy = SessionsStore::load_in(dir.path()).store;
    let (writer, thread) = StoreWriter::spawn(copy.clone()).unwrap();
    // The caller's copy changes in memory only: the file is the writer's.
    copy.note_use("local", "a", at(1));
    writer.record_use("local", "a", at(1));
    copy.note_run("local", "b", at(2));
    writer.record_run("local", "b", at(2));
    assert_eq!(ids(&copy.list_for_pool("local")), ["b", "a"]);
    drop(writer);
    thread.join();
    let reloaded = SessionsStore::load_in(dir.path()).store;
    assert_eq!(reloaded.entries(), copy.entries());
    let b = reloaded.get("local", "b").unwrap();
    assert_eq!((b.last_used, b.last_run), (at(2), Some(at(2))));
}
