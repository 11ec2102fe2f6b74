use std::time::Duration;

use chrono::Utc;
use pretty_assertions::assert_eq;

use super::*;
use crate::client::ExecutionImage;
use crate::ledger::{Call, CallKind, RecordedOutput};

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
