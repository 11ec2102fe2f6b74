//! Tests of the file work: heads, downloads into a folder (created when
//! asked, never written outside it, links replaced not followed), labels.
use super::*;

/// A pool whose `files/report.csv/content` answers `NEW`, and every other
/// file's content 404.
async fn file_pool() -> (SessionClient, JoinHandle<()>) {
    use axum::extract::Path as UrlPath;
    use axum::http::StatusCode;
    use axum::routing::get;
    let app = axum::Router::new().route(
        "/files/{name}/content",
        get(|UrlPath(name): UrlPath<String>| async move {
            if name == "report.csv" {
                (StatusCode::OK, "NEW")
            } else {
                (StatusCode::NOT_FOUND, "no such file")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let client = SessionClient::new(crate::client::Target {
        endpoint: format!("http://{addr}"),
        api_version: crate::protocol::ApiVersion::V2025_10_02,
        token: Some("t".into()),
    })
    .expect("client");
    (client, server)
}

/// Runs one download command to its end; its summary.
async fn download(
    client: &SessionClient,
    files: Vec<(String, PathBuf)>,
    overwrite: bool,
    create_folder: Option<PathBuf>,
) -> String {
    let (events, mut rx) = EventSender::channel();
    let ctx = Ctx {
        client: client.clone(),
        identifier: "t-1234".into(),
        events,
    };
    let command = FileCommand::Download {
        files,
        overwrite,
        create_folder,
    };
    ctx.transfer(command, CancellationToken::new()).await;
    while let Some(event) = rx.recv().await {
        if let crate::session::SessionEvent::Files(FileEvent::Done { summary, .. }) = event {
            return summary;
        }
    }
    panic!("no summary");
}

fn names_in(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .expect("read folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_download_creates_the_folder_it_was_told_to_and_writes_only_there() {
    let (client, server) = file_pool().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("new").join("sub");
    let dest = folder.join("report.csv");
    let summary = download(
        &client,
        vec![("report.csv".into(), dest.clone())],
        false,
        Some(folder.clone()),
    )
    .await;
    assert!(summary.starts_with("downloaded"), "{summary}");
    assert_eq!(std::fs::read(&dest).expect("downloaded"), b"NEW");
    assert_eq!(names_in(dir.path()), ["new"]);
    assert_eq!(names_in(&folder), ["report.csv"]);
    server.abort();
}

#[tokio::test]
async fn a_folder_that_cannot_be_created_downloads_nothing() {
    let (client, server) = file_pool().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let folder = file.join("sub");
    let summary = download(
        &client,
        vec![("report.csv".into(), folder.join("report.csv"))],
        false,
        Some(folder.clone()),
    )
    .await;
    assert!(summary.starts_with("cannot create"), "{summary}");
    assert!(summary.ends_with("nothing downloaded"), "{summary}");
    assert_eq!(names_in(dir.path()), ["a-file"]);
    server.abort();
}

#[cfg(unix)]
#[tokio::test]
async fn replacing_a_link_replaces_the_link_never_what_it_points_to() {
    let (client, server) = file_pool().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "SECRET").expect("write");
    let folder = dir.path().join("dl");
    std::fs::create_dir(&folder).expect("folder");
    let dest = folder.join("report.csv");
    std::os::unix::fs::symlink(&outside, &dest).expect("link");

    // Without a yes, the link counts as an existing file.
    let summary = download(
        &client,
        vec![("report.csv".into(), dest.clone())],
        false,
        None,
    )
    .await;
    assert_eq!(summary, "nothing downloaded", "{summary}");
    // With one, the link itself is replaced by the file.
    let summary = download(
        &client,
        vec![("report.csv".into(), dest.clone())],
        true,
        None,
    )
    .await;
    assert!(summary.starts_with("downloaded"), "{summary}");
    assert_eq!(std::fs::read(&outside).expect("outside"), b"SECRET");
    assert!(std::fs::symlink_metadata(&dest).expect("dest").is_file());
    assert_eq!(std::fs::read(&dest).expect("dest"), b"NEW");
    assert_eq!(names_in(&folder), ["report.csv"]);
    server.abort();
}

#[tokio::test]
async fn a_failed_replacement_keeps_the_old_file() {
    let (client, server) = file_pool().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let dest = dir.path().join("gone.csv");
    std::fs::write(&dest, "OLD").expect("write");
    let summary = download(&client, vec![("gone.csv".into(), dest.clone())], true, None).await;
    assert!(summary.starts_with("cannot download"), "{summary}");
    assert_eq!(std::fs::read(&dest).expect("kept"), b"OLD");
    assert_eq!(
        names_in(dir.path()),
        ["gone.csv"],
        "no temporary file is left"
    );
    server.abort();
}

#[tokio::test]
async fn a_head_is_the_first_bytes_or_a_typed_failure() {
    let (client, server) = file_pool().await;
    let ctx = Ctx {
        client,
        identifier: "t-1234".into(),
        events: EventSender::new(|_| {}),
    };
    let request = |name: &str, limit| HeadRequest {
        generation: 3,
        name: name.into(),
        content_type: Some("text/csv".into()),
        size: Some(3),
        limit,
    };
    let head = ctx.head(request("report.csv", 2)).await.expect("head");
    assert_eq!(head.bytes, b"NE");
    assert_eq!(
        (head.name.as_str(), head.content_type.as_deref(), head.size),
        ("report.csv", Some("text/csv"), Some(3))
    );
    let whole = ctx.head(request("report.csv", 1024)).await.expect("head");
    assert_eq!(whole.bytes, b"NEW");
    let missing = ctx.head(request("gone.csv", 1024)).await.expect_err("404");
    assert_eq!(missing.kind, crate::session::FailureKind::NotFound);
    assert!(missing.message.contains("gone.csv"), "{missing}");
    server.abort();
}

#[test]
fn labels_number_several_files() {
    assert_eq!(numbered("a.csv", 0, 1), "a.csv");
    assert_eq!(numbered("b.png", 1, 3), "b.png (2 of 3)");
}

#[test]
fn renames_are_said_with_the_name_escaped() {
    let dest = Path::new("./evil_]0;x_t.txt");
    assert_eq!(
        rename_note("sub/evil\u{1b}]0;x\u{7}t.txt", dest).as_deref(),
        Some("saved sub/evil\\033]0;x\\007t.txt as ./evil_]0;x_t.txt")
    );
    assert_eq!(
        rename_note(".hidden", Path::new("./hidden")).as_deref(),
        Some("saved .hidden as ./hidden (a hidden name: saved visible)")
    );
    assert_eq!(rename_note("sub/a.csv", Path::new("/tmp/a.csv")), None);
}
