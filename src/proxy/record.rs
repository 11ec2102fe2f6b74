//! What the proxy records of an execution, read from the request body the
//! agent sent and the answer the upstream gave (both small JSON documents,
//! held whole): the code or shell command, and the status, outputs, value and
//! images the client model reads from either family (`aca-api.md` §3.1, §4.2,
//! §4.7), read with the client's own readers ([`crate::protocol::reply`]). An
//! asynchronous execution (§4.2) is recorded once, when its polling
//! (`GET executions/{id}`, the agent's or the proxy's own, see
//! [`super::watch`]) first answers a finished status; it stays [`Pending`]
//! until then.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use super::files::{Held, ProxyFiles};
use crate::pool::record::Recording;
use crate::protocol::ExecutionStatus;
use crate::protocol::api::{ApiVersion, ValueForm};
use crate::protocol::reply::{parse_family_a, parse_family_b, parse_shell_reply};
use crate::protocol::shell::ShellRequestBody;

/// Asynchronous executions waiting for a finished answer, at most this many
/// (the oldest is forgotten past it: a client that never polls leaves nothing
/// behind for long).
const MAX_PENDING: usize = 10_000;

/// What an execution request asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Code in the session's language, and whether the Jupyter format of the
    /// value was asked for (`returnJupyterFormatExecutionResult`).
    Code {
        /// The code as sent.
        code: String,
        /// The value comes as Jupyter's `text/plain`.
        jupyter: bool,
    },
    /// A shell command (Shell pools): the line, or the argv as its JSON array,
    /// and the standard input.
    Shell {
        /// The command.
        command: String,
        /// `stdin`.
        stdin: Option<String>,
    },
}

impl Sent {
    /// Reads an execution request body of either family (family A's
    /// `properties` wrapper, §3.1; `pythonCode` for `code`, §3.1's variants;
    /// `shellCommand` / `execCommandAndArgs` for a shell command, §4.7).
    /// `None` for a body that is not such a JSON object.
    pub(crate) fn read(body: &[u8]) -> Option<Self> {
        let value: Value = serde_json::from_slice(body).ok()?;
        let inner = value.get("properties").unwrap_or(&value);
        if !inner.is_object() {
            return None;
        }
        if inner.get("shellCommand").is_some()
            || inner.get("execCommandAndArgs").is_some()
            || inner.get("command").is_some()
        {
            let shell: ShellRequestBody = serde_json::from_value(inner.clone()).ok()?;
            let command = match (shell.shell_command, shell.exec_command_and_args) {
                (Some(line), _) => line,
                (None, Some(argv)) => serde_json::to_string(&argv).ok()?,
                (None, None) => return None,
            };
            return Some(Sent::Shell {
                command,
                stdin: shell.stdin,
            });
        }
        let code = inner
            .get("code")
            .or_else(|| inner.get("pythonCode"))
            .and_then(Value::as_str)?;
        Some(Sent::Code {
            code: code.to_string(),
            jupyter: inner
                .get("returnJupyterFormatExecutionResult")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }
}

/// The execution id of an answer, and whether it is still running.
fn state_of(answer: &Value) -> (Option<String>, bool) {
    let id = answer.get("id").and_then(Value::as_str).map(str::to_string);
    let running = answer
        .get("status")
        .and_then(Value::as_str)
        .is_some_and(|s| ExecutionStatus::from_wire(s) == ExecutionStatus::Running);
    (id, running)
}

/// What an execution's or a poll's 2xx answer says.
#[derive(Debug)]
pub(crate) enum Answer {
    /// It has finished: the answer, read.
    Finished(Value),
    /// It still runs, under this execution id.
    Running(String),
    /// Not JSON, or running without an id: nothing is recorded.
    Unreadable,
}

impl Answer {
    /// Reads `answer`.
    pub(crate) fn read(answer: &[u8]) -> Self {
        let Ok(answer) = serde_json::from_slice::<Value>(answer) else {
            return Answer::Unreadable;
        };
        match state_of(&answer) {
            (Some(id), true) => Answer::Running(id),
            (None, true) => Answer::Unreadable,
            (_, false) => Answer::Finished(answer),
        }
    }
}

/// Which session an execution ran in and the api-version its agent used
/// (the proxy's look at the session's files lists with it).
#[derive(Debug, Clone)]
pub(crate) struct About {
    /// The session identifier.
    pub(crate) identifier: String,
    /// The agent's api-version.
    pub(crate) api: ApiVersion,
}

/// An execution whose finished answer is known, to be recorded.
#[derive(Debug)]
pub(crate) struct Finished {
    recording: Recording,
    sent: Sent,
    about: About,
    answer: Value,
}

impl Finished {
    /// Execution `sent` of `recording`, in the session `about` names,
    /// finished with `answer`.
    pub(crate) fn new(recording: Recording, sent: Sent, about: About, answer: Value) -> Self {
        Self {
            recording,
            sent,
            about,
            answer,
        }
    }

    /// Records it, with what it changed in the session's `/mnt/data` when
    /// the proxy looks at files (`files`; see [`super::files`]). `held` is
    /// what the execution holds of the session's locks: its gate, held since
    /// the answer came (when not, it is taken now: the proxy's own polling
    /// saw the execution end); both are given back once the call is handed
    /// to the ledger, so the session's next call is recorded after it.
    pub(crate) async fn record(self, files: Option<&ProxyFiles>, held: Held) {
        let Some(files) = files else {
            record(&self.recording, &self.sent, &self.answer);
            return;
        };
        let look = files.session(&self.about.identifier);
        let Held { turn, gate } = held;
        let gate = match gate {
            Some(g) => Some(g),
            None => look.hold().await,
        };
        let changes = files
            .look(&self.about.identifier, self.about.api, &look)
            .await;
        record(
            &self.recording.with_files(changes),
            &self.sent,
            &self.answer,
        );
        drop((gate, turn));
    }
}

/// Keeps execution `id` (`sent` of `recording`, in the session `about`
/// names), which the upstream answered as still running, until its polling
/// finishes it.
pub(crate) fn keep_pending(
    pending: &PendingMap,
    id: String,
    recording: Recording,
    sent: Sent,
    about: About,
) {
    pending.insert(
        id,
        Pending {
            recording,
            sent,
            about,
        },
    );
}

/// What a polling answer means for the execution it names.
#[derive(Debug)]
pub(crate) enum Polled {
    /// It still runs (or the answer is not JSON).
    Running,
    /// It has finished; nothing is pending for it (already recorded).
    Settled,
    /// It has finished: record it.
    Finished(Box<Finished>),
}

/// A polling answer (`GET executions/{id}`, 2xx) for `id`: the pending
/// execution it finishes is handed out once (whoever polled: a second
/// finished answer finds nothing pending).
pub(crate) fn polled(id: &str, answer: &[u8], pending: &PendingMap) -> Polled {
    match Answer::read(answer) {
        Answer::Finished(answer) => match pending.take(id) {
            Some(p) => Polled::Finished(Box::new(Finished::new(
                p.recording,
                p.sent,
                p.about,
                answer,
            ))),
            None => Polled::Settled,
        },
        Answer::Running(_) | Answer::Unreadable => Polled::Running,
    }
}

fn record(recording: &Recording, sent: &Sent, answer: &Value) {
    match sent {
        Sent::Code { code, jupyter } => {
            let form = ValueForm {
                jupyter: *jupyter,
                python: true,
            };
            // The parsers take the streams out of the tree: parse a copy (the
            // proxy answered from its own bytes).
            let mut answer = answer.clone();
            let exec = if answer.get("properties").is_some() {
                parse_family_a(&mut answer, form)
            } else {
                parse_family_b(&mut answer, form).or_else(|_| parse_family_a(&mut answer, form))
            };
            if let Ok(exec) = exec {
                recording.code(code, &std::sync::Arc::new(exec));
            }
        }
        Sent::Shell { command, stdin } => {
            if let Ok(shell) = parse_shell_reply(answer) {
                recording.shell(
                    command.clone(),
                    stdin.clone(),
                    &std::sync::Arc::new(shell.to_execution()),
                    shell.exit_code,
                );
            }
        }
    }
}

/// An asynchronous execution accepted by the upstream, not finished yet.
#[derive(Debug)]
pub(crate) struct Pending {
    recording: Recording,
    sent: Sent,
    about: About,
}

/// The pending asynchronous executions by execution id.
#[derive(Debug, Default)]
pub(crate) struct PendingMap {
    inner: Mutex<(HashMap<String, Pending>, std::collections::VecDeque<String>)>,
}

impl PendingMap {
    fn insert(&self, id: String, p: Pending) {
        let Ok(mut guard) = self.inner.lock() else {
            return;
        };
        let (map, order) = &mut *guard;
        if map.len() >= MAX_PENDING {
            while let Some(old) = order.pop_front() {
                if map.remove(&old).is_some() {
                    break;
                }
            }
        }
        order.push_back(id.clone());
        map.insert(id, p);
    }

    /// Whether execution `id` still waits for its finished answer.
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.inner.lock().is_ok_and(|g| g.0.contains_key(id))
    }

    /// Takes execution `id` out (`None` when it is not pending, e.g. already
    /// recorded).
    pub(crate) fn take(&self, id: &str) -> Option<Pending> {
        let mut guard = self.inner.lock().ok()?;
        let taken = guard.0.remove(id);
        if guard.0.is_empty() {
            guard.1.clear();
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_of_both_families_and_shell_commands_are_read() {
        let a = br#"{"properties":{"codeInputType":"inline","executionType":"synchronous","code":"1+1"}}"#;
        assert_eq!(
            Sent::read(a),
            Some(Sent::Code {
                code: "1+1".into(),
                jupyter: false
            })
        );
        let b = br#"{"codeInputType":"inline","executionType":"asynchronous","code":"x","returnJupyterFormatExecutionResult":true}"#;
        assert_eq!(
            Sent::read(b),
            Some(Sent::Code {
                code: "x".into(),
                jupyter: true
            })
        );
        let old = br#"{"properties":{"pythonCode":"print(1)"}}"#;
        assert!(matches!(Sent::read(old), Some(Sent::Code { code, .. }) if code == "print(1)"));
        let shell = br#"{"shellCommand":"echo hi","stdin":"x"}"#;
        assert_eq!(
            Sent::read(shell),
            Some(Sent::Shell {
                command: "echo hi".into(),
                stdin: Some("x".into())
            })
        );
        let argv = br#"{"execCommandAndArgs":["ls","-l"]}"#;
        assert!(
            matches!(Sent::read(argv), Some(Sent::Shell { command, .. }) if command == r#"["ls","-l"]"#)
        );
        for bad in [&b"not json"[..], b"[1]", b"{}", br#"{"code":5}"#] {
            assert_eq!(Sent::read(bad), None);
        }
    }

    #[test]
    fn a_running_answer_is_told_from_a_finished_one() {
        let running = serde_json::json!({"id": "e1", "status": "Running"});
        assert_eq!(state_of(&running), (Some("e1".into()), true));
        let done = serde_json::json!({"id": "e1", "status": "Succeeded"});
        assert_eq!(state_of(&done), (Some("e1".into()), false));
        let shell = serde_json::json!({"status": "0"});
        assert_eq!(state_of(&shell), (None, false));
    }
}
