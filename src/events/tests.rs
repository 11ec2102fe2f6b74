use std::time::Duration;

use chrono::Utc;
use pretty_assertions::assert_eq;

use super::*;
use crate::protocol::ExecutionImage;
use crate::protocol::events::CALL_EVENT;
use crate::protocol::events::Lagged;
use crate::protocol::events::OUTPUT_EVENT;
use crate::protocol::events::OutputChunk;
use crate::protocol::events::PoolEvent;
use crate::protocol::events::StreamName;
use crate::protocol::events::recorded_call;
use crate::protocol::record::{Call, CallKind, RecordedOutput};
fn call() -> Call {
    Call {
        pool: "local".into(),
        identifier: "agent-1".into(),
        client: Some("langchain/1.0".into()),
        at: Utc::now(),
        duration: Duration::from_micros(1500),
        kind: CallKind::Code,
        execution_id: Some("e1".into()),
        code: Some("print(1)".into()),
        stdin: None,
        output: Some(RecordedOutput {
            status: "Succeeded".into(),
            exit_code: None,
            stdout: "1\n".into(),
            stderr: String::new().into(),
            result: None,
        }),
        images: vec![ExecutionImage {
            format: "png".into(),
            data: vec![1, 2, 3],
        }],
        file: None,
        client_gone: false,
        files: vec![],
        files_note: None,
        network: Vec::new(),
    }
}

#[test]
fn a_recorded_call_goes_over_the_wire_and_back_unchanged() {
    let recorded = recorded_call(call(), 7);
    assert_eq!(recorded.entry.seq, 7);
    assert_eq!(recorded.entry.images[0].size, 3);
    assert_eq!(recorded.image_data, vec!["AQID".to_string()]);
    let event = PoolEvent::Call(Box::new(recorded));
    let (name, data) = event.to_wire().unwrap();
    assert_eq!(name, CALL_EVENT);
    let back = PoolEvent::from_wire(name, &data).unwrap().unwrap();
    assert_eq!(back, event);
    assert_eq!(back.identifier(), Some("agent-1"));
}

#[test]
fn an_unknown_event_name_is_skipped_and_bad_data_is_an_error() {
    assert_eq!(PoolEvent::from_wire("future", "{}").unwrap(), None);
    assert!(PoolEvent::from_wire(OUTPUT_EVENT, "not json").is_err());
}

#[tokio::test]
async fn a_slow_subscriber_is_told_it_lagged_and_publishing_never_waits() {
    let hub = Hub::new();
    // Nobody listens: nothing is kept.
    hub.publish(PoolEvent::Lagged(Lagged { missed: 0 }));
    let mut rx = hub.subscribe();
    let total = hub::CAPACITY + 10;
    for n in 0..total {
        hub.publish(PoolEvent::Lagged(Lagged { missed: n as u64 }));
    }
    match rx.recv().await {
        Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => assert_eq!(missed, 10),
        other => panic!("expected a lag, got {other:?}"),
    }
    // It carries on from the oldest event kept.
    let next = rx.recv().await.unwrap();
    assert_eq!(*next, PoolEvent::Lagged(Lagged { missed: 10 }));
}

#[test]
fn a_call_is_wanted_only_while_a_subscriber_wants_it() {
    let hub = Hub::new();
    assert!(
        !hub.wants_call("agent-1", Some("langchain/1.0")),
        "nobody listens"
    );
    let notebook = hub.subscribe_to(Interest {
        identifier: None,
        not_client: Some("sessionpad/1".into()),
    });
    assert!(
        !hub.wants_call("agent-1", Some("sessionpad/1")),
        "its own call"
    );
    assert!(hub.wants_call("agent-1", Some("langchain/1.0")));
    assert!(hub.wants_call("agent-1", None));
    let one_session = hub.subscribe_to(Interest {
        identifier: Some("agent-2".into()),
        not_client: None,
    });
    assert!(hub.wants_call("agent-2", Some("sessionpad/1")));
    assert!(!hub.wants_call("agent-3", Some("sessionpad/1")));
    drop(one_session);
    assert!(
        !hub.wants_call("agent-2", Some("sessionpad/1")),
        "forgotten when dropped"
    );
    // A subscriber without an interest wants everything.
    let all = hub.subscribe();
    assert!(hub.wants_call("agent-2", Some("sessionpad/1")));
    drop(all);
    drop(notebook);
    assert!(!hub.wants_call("agent-1", Some("langchain/1.0")));
}

#[tokio::test]
async fn a_subscription_gets_only_the_events_its_interest_wants() {
    let hub = Hub::new();
    let mut sub = hub.subscribe_to(Interest {
        identifier: Some("agent-1".into()),
        not_client: Some("langchain/1.0".into()),
    });
    let output = |identifier: &str| {
        PoolEvent::Output(OutputChunk {
            identifier: identifier.into(),
            execution_id: "e1".into(),
            client: Some("langchain/1.0".into()),
            stream: StreamName::Stdout,
            text: "1\n".into(),
        })
    };
    let mut other = call();
    other.client = Some("curl/8".into());
    hub.publish(PoolEvent::Call(Box::new(recorded_call(call(), 1))));
    hub.publish(output("agent-9"));
    hub.publish(output("agent-1"));
    hub.publish(PoolEvent::Call(Box::new(recorded_call(other, 2))));
    // Its own call and another session's output are skipped; the output of
    // its own cell and another client's call come.
    assert_eq!(*sub.recv().await.unwrap(), output("agent-1"));
    match &*sub.recv().await.unwrap() {
        PoolEvent::Call(c) => assert_eq!(c.entry.seq, 2),
        e => panic!("expected the other client's call, got {e:?}"),
    }
}

#[tokio::test]
async fn the_ledger_writer_publishes_no_call_nobody_wants() {
    let dir = tempfile::tempdir().unwrap();
    let hub = Hub::new();
    let mut notebook = hub.subscribe_to(Interest {
        identifier: None,
        not_client: Some("langchain/1.0".into()),
    });
    let rec = crate::ledger::Recorder::start_publishing(
        &dir.path().join("ledger.sqlite3"),
        crate::ledger::retention::Limits {
            days: 36500,
            max_bytes: u64::MAX,
            file_content_max: crate::ledger::retention::Limits::DEFAULT_FILE_CONTENT_MAX,
            session_content_max: crate::ledger::retention::Limits::DEFAULT_SESSION_CONTENT_MAX,
        },
        hub.clone(),
    )
    .unwrap();
    // More of its own calls than the channel keeps: were they published,
    // the subscriber would be told it lagged behind them.
    for _ in 0..=hub::CAPACITY {
        rec.record(call());
    }
    let mut other = call();
    other.client = Some("curl/8".into());
    rec.record(other);
    rec.flush();
    match notebook.recv().await {
        Ok(e) => match &*e {
            PoolEvent::Call(c) => assert_eq!(c.entry.client.as_deref(), Some("curl/8")),
            e => panic!("expected the other client's call, got {e:?}"),
        },
        Err(e) => panic!("the subscriber's own calls were published: {e:?}"),
    }
}
