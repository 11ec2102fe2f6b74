//! Tests of the session worker: runs that fail, are abandoned or queue; image
//! decoding.

use super::*;
use crate::pool::PoolOptions;
use crate::protocol::PoolType;
use crate::protocol::limits::Limits;
use crate::session::event::SessionEvent;
use crate::session::failure::FailureKind;

/// The worker's config for the pool at `endpoint` with `token`, speaking
/// `api_version`, in session `t`.
fn remote(
    endpoint: impl Into<String>,
    token: Option<String>,
    api_version: ApiVersion,
) -> WorkerConfig {
    WorkerConfig {
        connection: Connection::Remote {
            endpoint: endpoint.into(),
            token,
            auth: None,
        },
        api_version,
        identifier: "t".into(),
        timeout: Duration::from_secs(5),
        pool_type: PoolType::default(),
        pool_limits: Limits::default(),
        azure_limits: false,
        egress: crate::protocol::egress::Egress::default(),
        ledger: None,
        container_type: crate::protocol::ContainerType::PythonLts,
        empty_kernel: false,
    }
}

#[tokio::test]
async fn unreachable_remote_pool_fails_the_run_instead_of_losing_it() {
    let (events, mut rx) = EventSender::channel();
    let worker = SessionWorker::spawn(
        // Port 9 (discard) on loopback: nothing listens in a test box.
        remote("http://127.0.0.1:9", None, ApiVersion::V2025_10_02),
        events,
    );
    worker.execute(RunId(1), "1".into());
    assert!(matches!(rx.recv().await, Some(SessionEvent::PoolKey(_))));
    assert!(matches!(rx.recv().await, Some(SessionEvent::PoolReady)));
    assert!(matches!(
        rx.recv().await,
        Some(SessionEvent::ExecutionStarted(RunId(1)))
    ));
    match rx.recv().await {
        Some(SessionEvent::ExecutionFinished {
            run,
            outcome: Err(reason),
            ..
        }) => {
            assert_eq!(run, RunId(1));
            assert!(!reason.message.is_empty());
        }
        other => panic!("unexpected {other:?}"),
    }
    worker.shutdown(Duration::from_secs(5)).await;
}

/// A remote pool that takes connections and never answers.
async fn silent_pool() -> (String, JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    (format!("http://{addr}"), task)
}

#[tokio::test]
async fn an_abandoned_run_reports_nothing_and_the_next_one_starts() {
    let (endpoint, server) = silent_pool().await;
    let (events, mut rx) = EventSender::channel();
    let worker = SessionWorker::spawn(
        remote(endpoint, Some("t".into()), ApiVersion::V2025_10_02),
        events,
    );
    worker.execute(RunId(1), "import time; time.sleep(60)".into());
    worker.execute(RunId(2), "2".into());
    assert!(matches!(rx.recv().await, Some(SessionEvent::PoolKey(_))));
    assert!(matches!(rx.recv().await, Some(SessionEvent::PoolReady)));
    assert!(matches!(
        rx.recv().await,
        Some(SessionEvent::ExecutionStarted(RunId(1)))
    ));
    // The service has no interrupt: interrupting a remote run abandons it.
    worker.interrupt(RunId(1));
    match rx.recv().await {
        Some(SessionEvent::ExecutionStarted(RunId(2))) => {}
        other => panic!("expected run 2 to start, got {other:?}"),
    }
    worker.abandon(RunId(2));
    worker.execute(RunId(3), "3".into());
    match rx.recv().await {
        Some(SessionEvent::ExecutionStarted(RunId(3))) => {}
        other => panic!("expected run 3 to start, got {other:?}"),
    }
    worker.shutdown(Duration::from_secs(5)).await;
    server.abort();
    while let Ok(event) = rx.try_recv() {
        assert!(
            !matches!(event, SessionEvent::ExecutionFinished { .. }),
            "no outcome of an abandoned run: {event:?}"
        );
    }
}

#[tokio::test]
async fn images_decode_in_order_and_bad_ones_say_why() {
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(3, 2)
        .write_to(&mut png, image::ImageFormat::Png)
        .expect("encode png");
    let image = |data: Vec<u8>| crate::protocol::ExecutionImage {
        format: "png".into(),
        data,
    };
    let exec = Execution {
        execution_count: None,
        id: None,
        status: crate::protocol::ExecutionStatus::Succeeded,
        stdout: String::new(),
        stderr: String::new(),
        result: None,
        images: vec![image(png.into_inner()), image(vec![1, 2, 3])],
        duration: Duration::ZERO,
        network: Vec::new(),
    };
    let decoded = decode_images(&exec).await;
    assert_eq!(decoded.len(), 2);
    assert!(matches!(&decoded[0], Ok(img) if img.width() == 3 && img.height() == 2));
    assert!(matches!(&decoded[1], Err(reason) if reason.starts_with("cannot decode")));
}

#[tokio::test]
async fn invalid_endpoint_reports_pool_failed_and_fails_runs() {
    let (events, mut rx) = EventSender::channel();
    let worker = SessionWorker::spawn(
        remote("ftp://nowhere", None, ApiVersion::V2025_10_02),
        events,
    );
    worker.execute(RunId(7), "1".into());
    assert!(matches!(
        rx.recv().await,
        Some(SessionEvent::PoolFailed(Failure {
            kind: FailureKind::Unreachable,
            ..
        }))
    ));
    assert!(matches!(
        rx.recv().await,
        Some(SessionEvent::ExecutionStarted(RunId(7)))
    ));
    match rx.recv().await {
        Some(SessionEvent::ExecutionFinished {
            outcome: Err(failure),
            ..
        }) => {
            assert_eq!(failure.kind, FailureKind::Unreachable);
            assert!(
                failure
                    .message
                    .starts_with("the pool is not available: invalid pool management endpoint"),
                "{failure}"
            );
        }
        other => panic!("{other:?}"),
    }
    worker.shutdown(Duration::from_secs(5)).await;
}

/// An in-process local pool with its sessions in `dir`, no ready kernels and
/// its sandbox off (the tests ask about the pool, not about isolation).
async fn unsandboxed_pool(dir: &std::path::Path) -> LocalPool {
    let mut opts = PoolOptions::embedded();
    opts.sessions_dir = dir.join("sessions");
    opts.ready_sessions = 0;
    opts.sandbox = false;
    LocalPool::start(opts, &|_| {}).await.expect("pool starts")
}

/// A worker pointed at a `sessionpad serve` (here an in-process local pool with
/// its sandbox off) learns from the pool's metadata that its sessions are not
/// isolated, without a cell being run.
#[tokio::test]
async fn a_local_pool_endpoint_reports_its_isolation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pool = unsandboxed_pool(dir.path()).await;
    let (events, mut rx) = EventSender::channel();
    let worker = SessionWorker::spawn(
        // Without `metadata` of its own: the worker asks with one that has it.
        remote(
            pool.endpoint(),
            pool.token().map(str::to_string),
            ApiVersion::V2024_08_02,
        ),
        events,
    );
    let reported = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match rx.recv().await {
                Some(SessionEvent::PoolIsolation(isolation)) => return isolation,
                Some(_) => {}
                None => panic!("the worker ended without reporting isolation"),
            }
        }
    })
    .await
    .expect("isolation reported");
    assert_eq!(&reported, pool.isolation());
    assert!(!reported.is_sandboxed());
    worker.shutdown(Duration::from_secs(5)).await;
    pool.shutdown().await;
}

/// A pool whose executions answer at once but whose file listings and session
/// reads hang (a slow or overloaded pool): the radar's listings after a cell
/// wait on them. Stopping the worker then (a pool switch, quitting) must not
/// wait for them.
#[tokio::test]
async fn a_stop_does_not_wait_for_the_radar_of_a_slow_pool() {
    use axum::routing::{get, post};
    let hang = || async {
        tokio::time::sleep(Duration::from_secs(600)).await;
        axum::Json(serde_json::json!({"value": []}))
    };
    let app = axum::Router::new()
        .route(
            "/executions",
            post(|| async {
                axum::Json(serde_json::json!({
                    "id": "e1",
                    "identifier": "t",
                    "executionType": "Synchronous",
                    "status": "Succeeded",
                    "result": {
                        "stdout": "1\n",
                        "stderr": "",
                        "executionResult": "",
                        "executionTimeInMilliseconds": 1
                    }
                }))
            }),
        )
        .route("/files", get(hang))
        .route("/session", get(hang));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let (events, mut rx) = EventSender::channel();
    let worker = SessionWorker::spawn(
        remote(
            format!("http://{addr}"),
            Some("t".into()),
            ApiVersion::V2025_10_02,
        ),
        events,
    );
    worker.execute(RunId(1), "print(1)".into());
    loop {
        match rx.recv().await {
            Some(SessionEvent::ExecutionFinished { outcome, .. }) => {
                assert!(outcome.is_ok(), "{outcome:?}");
                break;
            }
            Some(_) => {}
            None => panic!("the worker ended"),
        }
    }
    // The worker now waits on the listing after the cell (up to 10 s) and the
    // session read (no limit of its own). Asked to stop, it stops at once: far
    // inside a wait the listing alone would outlast.
    assert!(
        worker.shutdown(Duration::from_secs(8)).await,
        "the worker kept waiting on the slow pool"
    );
    server.abort();
}

/// Opening a notebook on a local pool subscribes to its event stream (running
/// output, following) and takes the radar's first listing; neither may start
/// the session: a reopened notebook learns that its earlier session is gone
/// from the pool not having it (a listing of its files would create it).
#[tokio::test]
async fn subscribing_to_a_session_does_not_start_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pool = unsandboxed_pool(dir.path()).await;
    let token = pool.token().map(str::to_string);
    let (events, mut rx) = EventSender::channel();
    let mut config = remote(pool.endpoint(), token.clone(), ApiVersion::V2025_10_02);
    config.identifier = "never-started-1".into();
    let worker = SessionWorker::spawn(config, events);
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match rx.recv().await {
                Some(SessionEvent::Follow(super::super::FollowNews::Subscribed { .. })) => return,
                Some(_) => {}
                None => panic!("the worker ended before subscribing"),
            }
        }
    })
    .await
    .expect("subscribed");
    let client = crate::target::remote_client(
        &pool.endpoint(),
        ApiVersion::V2025_10_02,
        token,
        None,
        PoolType::default(),
    )
    .expect("client");
    // The first listing follows the subscription at once: give it ample time.
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let e = client
            .pool_session("never-started-1")
            .await
            .expect_err("no session yet");
        assert_eq!(Failure::from(&e).kind, FailureKind::NotFound, "{e}");
    }
    worker.shutdown(Duration::from_secs(5)).await;
    pool.shutdown().await;
}

/// A run that fails stops the queue behind it (Jupyter's `stop_on_error`):
/// the runs asked for before its outcome are reported not run, in order,
/// right after it; a run asked for later runs. A run that does not stop on
/// error (a recorded session's replay) leaves the queue going.
#[tokio::test]
async fn a_failed_run_stops_the_runs_queued_behind_it() {
    let (events, mut rx) = EventSender::channel();
    let worker = SessionWorker::spawn(
        // Port 9 (discard) on loopback: nothing listens in a test box.
        remote("http://127.0.0.1:9", None, ApiVersion::V2025_10_02),
        events,
    );
    worker.execute(RunId(1), "1".into());
    worker.execute(RunId(2), "2".into());
    worker.execute(RunId(3), "3".into());
    let mut seen = Vec::new();
    while seen.len() < 4 {
        match rx.recv().await.expect("an event") {
            SessionEvent::ExecutionStarted(run) => seen.push(format!("started {}", run.0)),
            SessionEvent::ExecutionFinished { run, .. } => seen.push(format!("failed {}", run.0)),
            SessionEvent::ExecutionNotRun(run) => seen.push(format!("not run {}", run.0)),
            _ => {}
        }
    }
    assert_eq!(seen, ["started 1", "failed 1", "not run 2", "not run 3"]);
    let go_on = |source: &str| Cell {
        stop_on_error: false,
        ..Cell::from(source)
    };
    worker.execute(RunId(4), go_on("4"));
    worker.execute(RunId(5), go_on("5"));
    let mut seen = Vec::new();
    while seen.len() < 4 {
        match rx.recv().await.expect("an event") {
            SessionEvent::ExecutionStarted(run) => seen.push(format!("started {}", run.0)),
            SessionEvent::ExecutionFinished { run, .. } => seen.push(format!("failed {}", run.0)),
            SessionEvent::ExecutionNotRun(run) => seen.push(format!("not run {}", run.0)),
            _ => {}
        }
    }
    assert_eq!(seen, ["started 4", "failed 4", "started 5", "failed 5"]);
    worker.shutdown(Duration::from_secs(5)).await;
}

/// An execution the pool did not answer in time fails saying that its code
/// may still be running (issue 27 item 6: nothing said so).
#[test]
fn an_unanswered_execution_says_its_code_may_still_run() {
    let step = failed(&crate::client::ClientError::Timeout(Duration::from_secs(
        33,
    )));
    let Step::Finished(Err(failure), None) = step else {
        panic!("not a failed outcome");
    };
    assert_eq!(failure.kind, FailureKind::Timeout);
    assert!(
        failure.message.contains("did not answer within 33s")
            && failure
                .message
                .contains("may still be running in the session"),
        "{failure}"
    );
}
