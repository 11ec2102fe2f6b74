//! Following a session (issues 13 and 14): the worker's subscription to a
//! sessionpad local pool's event stream ([`crate::events`]) for the session
//! the notebook runs in. It turns each call another client made in that
//! session into a [`Followed`] cell (with its outputs and decoded images), and
//! passes on running cells' output ([`super::SessionEvent::LiveOutput`]), so the
//! notebook can show an agent's cells as they finish and its own running
//! cell's output as it is printed. It knows nothing of the terminal.
//!
//! The notebook's own calls are told apart by their `User-Agent`
//! ([`crate::client::user_agent`], unique to this process): they are
//! not sent again as followed cells, and their running output is marked
//! `own`.
//!
//! Only pools reached over plain http (a local pool on loopback) are asked;
//! Azure's pools have no event stream, and their running cells show nothing
//! until they end.

use std::time::Duration;

use base64::Engine;
use futures::StreamExt;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::event::{DecodedImage, EventSender};
use crate::client::SessionClient;
use crate::protocol::events::{PoolEvent, RecordedCall};
use crate::protocol::record::Entry;
use crate::protocol::{Execution, ExecutionImage, RemoteFile};

/// How long the subscription waits before subscribing again after the stream
/// broke or the pool could not be reached (the pool restarting, say); it
/// doubles up to [`RETRY_MAX`] while the pool stays unreachable.
const RETRY: Duration = Duration::from_secs(2);
/// The longest wait between two tries.
const RETRY_MAX: Duration = Duration::from_secs(30);

/// How following one session ended.
enum Ended {
    /// The stream was open and ended or broke: subscribe again.
    Broke,
    /// Nothing answered (refused, timed out): try again later, quietly.
    Unreachable,
    /// The pool answered and refused (no event stream there, a wrong token):
    /// said once; not tried again for this session.
    Refused,
}

/// A call another client made in the followed session, ready to show.
#[derive(Debug)]
pub struct Followed {
    /// The call as recorded (client, kind, code, outputs, file, ledger `seq`).
    pub entry: Entry,
    /// For an execution (code or shell command): the execution as the
    /// notebook shows one of its own; `None` for a file call.
    pub execution: Option<Execution>,
    /// The execution's images decoded, in order.
    pub images: Vec<DecodedImage>,
}

/// What the subscription tells the notebook besides cells and output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowNews {
    /// The pool's event stream for `identifier` is open.
    Subscribed {
        /// The followed session.
        identifier: String,
    },
    /// The stream broke (it is opened again), or the pool refused it (not a
    /// sessionpad pool, a wrong token: not tried again for this session);
    /// the text says why. A pool that does not answer at all is tried again
    /// quietly.
    Unavailable(String),
    /// The subscription fell behind and missed this many events (`sessionpad
    /// log` has them all).
    Missed(u64),
    /// The data root before and after another client's call (the listing
    /// after its previous call, or from when the stream opened): the
    /// artifact radar of a followed cell.
    Radar {
        /// The listing before.
        before: Vec<RemoteFile>,
        /// The listing after.
        after: Vec<RemoteFile>,
    },
}

/// Starts the subscription for the session `identifier` names (and again for
/// each session it switches to), through `client`; calls whose `User-Agent`
/// is `own_agent` are the notebook's own. `None` when `client`'s pool cannot
/// have an event stream (not plain http).
pub fn spawn(
    client: SessionClient,
    own_agent: String,
    identifier: watch::Receiver<String>,
    events: EventSender,
) -> Option<JoinHandle<()>> {
    if !crate::protocol::isolation::may_report(client.endpoint()) {
        return None;
    }
    Some(tokio::spawn(run(client, own_agent, identifier, events)))
}

async fn run(
    client: SessionClient,
    own_agent: String,
    mut identifier: watch::Receiver<String>,
    events: EventSender,
) {
    let mut wait = RETRY;
    loop {
        let id = identifier.borrow_and_update().clone();
        let ended = tokio::select! {
            changed = identifier.changed() => {
                if changed.is_err() {
                    return;
                }
                wait = RETRY;
                continue;
            }
            ended = follow_one(&client, &own_agent, &id, &events) => ended,
        };
        let retry = match ended {
            Ended::Broke => {
                wait = RETRY;
                Some(RETRY)
            }
            Ended::Unreachable => {
                let now = wait;
                wait = (wait * 2).min(RETRY_MAX);
                Some(now)
            }
            Ended::Refused => None,
        };
        // Try again later (or never), or at once for another session.
        let sleep = async {
            match retry {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            changed = identifier.changed() => {
                if changed.is_err() {
                    return;
                }
                wait = RETRY;
            }
            () = sleep => {}
        }
    }
}

/// Follows session `id` until its stream ends or breaks, or says why it
/// cannot.
async fn follow_one(
    client: &SessionClient,
    own_agent: &str,
    id: &str,
    events: &EventSender,
) -> Ended {
    use crate::client::ClientError;
    let mut stream = match client.events_with(Some(id), true).await {
        Ok(s) => s,
        Err(e @ (ClientError::Unreachable { .. } | ClientError::Timeout(_))) => {
            tracing::debug!("no event stream for {id:?} yet: {e}");
            return Ended::Unreachable;
        }
        Err(e) => {
            tracing::debug!("no event stream for {id:?}: {e}");
            events.follow(FollowNews::Unavailable(e.to_string()));
            return Ended::Refused;
        }
    };
    events.follow(FollowNews::Subscribed {
        identifier: id.to_string(),
    });
    // The radar's listing before the next call of another client.
    let mut listing = baseline(client, id).await;
    while let Some(event) = stream.next().await {
        match event {
            Ok(PoolEvent::Call(call)) => {
                if call.entry.client.as_deref() == Some(own_agent) {
                    continue;
                }
                let kind = call.entry.kind;
                events.followed(followed(*call).await);
                if !changes_files(kind) {
                    // A download (the other client previewing a file) changes
                    // nothing: the marks of its last cell stay.
                    continue;
                }
                let after = snapshot(client, id).await;
                if let (Some(before), Some(after)) = (listing.take(), after.clone()) {
                    events.follow(FollowNews::Radar { before, after });
                }
                listing = after;
            }
            Ok(PoolEvent::Output(chunk)) => {
                let own = chunk.client.as_deref() == Some(own_agent);
                events.live_output(own, chunk);
            }
            Ok(PoolEvent::Lagged(lag)) => events.follow(FollowNews::Missed(lag.missed)),
            Err(e) => {
                events.follow(FollowNews::Unavailable(e.to_string()));
                return Ended::Broke;
            }
        }
    }
    events.follow(FollowNews::Unavailable(
        "the pool closed its event stream".into(),
    ));
    Ended::Broke
}

/// Whether a call of `kind` can change the session's files (and so is
/// followed by the radar's listing): executions, uploads, deletes and ends,
/// not downloads.
fn changes_files(kind: crate::protocol::record::CallKind) -> bool {
    !matches!(kind, crate::protocol::record::CallKind::Download)
}

/// The radar's first listing when the stream opens: none of a session the
/// pool does not have, without listing it (a listing would start the session,
/// and a reopened notebook learns that its earlier session is gone from the
/// pool not having it); where the api-version cannot ask, the listing.
async fn baseline(client: &SessionClient, id: &str) -> Option<Vec<RemoteFile>> {
    if client.api_version().has_session_management()
        && let Err(e) = client.pool_session(id).await
        && super::Failure::from(&e).kind == super::FailureKind::NotFound
    {
        // A new session's data root is empty.
        return Some(Vec::new());
    }
    snapshot(client, id).await
}

/// The data root's listing for the radar, if it answers promptly.
async fn snapshot(client: &SessionClient, id: &str) -> Option<Vec<RemoteFile>> {
    super::radar_listing::snapshot(client, id, super::radar_listing::BEFORE_WAIT).await
}

/// The call as the notebook shows it: its execution, images decoded off the
/// task.
async fn followed(call: RecordedCall) -> Followed {
    let execution = execution_of(&call);
    let images = match &execution {
        Some(exec) if !exec.images.is_empty() => {
            let data: Vec<Vec<u8>> = exec.images.iter().map(|i| i.data.clone()).collect();
            let count = data.len();
            tokio::task::spawn_blocking(move || {
                data.iter()
                    .map(|b| image::load_from_memory(b).map_err(|e| format!("cannot decode: {e}")))
                    .collect::<Vec<_>>()
            })
            .await
            .unwrap_or_else(|e| vec![Err(format!("decoder failed: {e}")); count])
        }
        _ => Vec::new(),
    };
    Followed {
        entry: call.entry,
        execution,
        images,
    }
}

/// The [`Execution`] a recorded code or shell call stands for; `None` for a
/// file call. Images whose base64 does not decode are left out.
pub fn execution_of(call: &RecordedCall) -> Option<Execution> {
    let engine = base64::engine::general_purpose::STANDARD;
    let images = call
        .entry
        .images
        .iter()
        .zip(&call.image_data)
        .filter_map(|(image, b64)| {
            engine.decode(b64).ok().map(|data| ExecutionImage {
                format: image.format.clone(),
                data,
            })
        })
        .collect();
    call.entry.execution(images)
}

/// A client's `User-Agent` as the notebook marks a followed cell with it: its
/// first word (`langchain-azure-dynamic-sessions/0.2.0` of
/// `langchain-azure-dynamic-sessions/0.2.0 (Language=Python)`), at most 40
/// characters; `unknown client` without one. The caller sanitises it.
pub fn short_agent(agent: Option<&str>) -> String {
    const MAX: usize = 40;
    let Some(first) = agent.and_then(|a| a.split_whitespace().next()) else {
        return "unknown client".to_string();
    };
    if first.chars().count() <= MAX {
        first.to_string()
    } else {
        let mut cut: String = first.chars().take(MAX - 1).collect();
        cut.push('…');
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ExecutionStatus;
    use crate::protocol::record::CallKind;
    use crate::protocol::record::RecordedImage;

    fn entry() -> Entry {
        Entry {
            seq: 3,
            at: chrono::Utc::now(),
            duration_ms: 12.0,
            pool: "local".into(),
            identifier: "agent".into(),
            client: Some("langchain-azure-dynamic-sessions/0.2.0 (Language=Python)".into()),
            kind: CallKind::Code,
            execution_id: Some("e".into()),
            code: Some("1+1".into()),
            stdin: None,
            status: Some("Succeeded".into()),
            exit_code: None,
            stdout: Some("hi\n".into()),
            stderr: None,
            result: Some(serde_json::json!({"text": "2", "json": 2})),
            images: vec![RecordedImage {
                format: "png".into(),
                sha256: "x".into(),
                size: 3,
            }],
            file: None,
            client_gone: false,
            files: vec![],
            files_note: None,
            network: None,
        }
    }

    #[test]
    fn a_recorded_execution_becomes_the_execution_the_notebook_shows() {
        let call = RecordedCall {
            entry: entry(),
            image_data: vec!["AQID".into()],
        };
        let exec = execution_of(&call).unwrap();
        assert_eq!(exec.status, ExecutionStatus::Succeeded);
        assert_eq!(exec.stdout, "hi\n");
        assert_eq!(exec.result.unwrap().text, "2");
        assert_eq!(exec.images[0].data, vec![1, 2, 3]);
        assert_eq!(exec.duration, Duration::from_millis(12));
        let mut file = call.clone();
        file.entry.kind = CallKind::Upload;
        assert!(execution_of(&file).is_none());
    }

    #[test]
    fn agents_are_shortened_to_their_first_word() {
        assert_eq!(
            short_agent(entry().client.as_deref()),
            "langchain-azure-dynamic-sessions/0.2.0"
        );
        assert_eq!(short_agent(None), "unknown client");
        let long = "x".repeat(60);
        assert_eq!(short_agent(Some(&long)).chars().count(), 40);
    }
}

#[cfg(test)]
mod radar_tests {
    use super::changes_files;
    use crate::protocol::record::CallKind;

    #[test]
    fn downloads_do_not_reset_the_marks_of_a_followed_cell() {
        assert!(!changes_files(CallKind::Download));
        for kind in [
            CallKind::Code,
            CallKind::Shell,
            CallKind::Upload,
            CallKind::Delete,
        ] {
            assert!(changes_files(kind), "{kind:?}");
        }
    }
}
