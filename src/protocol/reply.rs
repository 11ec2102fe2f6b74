//! Reading the data plane's answer to an execution into protocol types: pure
//! functions from the JSON body a pool answered to an [`Execution`] or a
//! [`ShellExecution`], shared by the session client (which asked) and the
//! recording proxy (which forwarded the answer and records what ran). The
//! writing side is in [`super::api`] (`family_a_response`,
//! `family_b_response`) and [`super::shell`] (`shell_response`).
//!
//! The shapes, by api-version:
//!
//! - Family A (2024-02-02-preview, 2024-08-02-preview), `POST code/execute`
//!   (`aca-api.md` §3.1): `{"$id","properties":{status,stdout,stderr,
//!   result|executionResult,executionTimeInMilliseconds}}` (`result` in
//!   2024-02-02-preview, `executionResult` later), and the legacy flat form
//!   without `properties` (§3.6). [`parse_family_a`].
//! - Family B (2024-10-02-preview and later), `POST executions` and
//!   `GET executions/{id}` (§4.2): `{"id","status","result":{stdout,stderr,
//!   executionResult,executionTimeInMilliseconds},"error"?:{message}}`, the
//!   value in Jupyter's `text/plain` form when the request asked for it
//!   (2025-10-02-preview, §13). [`parse_family_b`].
//! - Shell executions on a `Shell` pool, `POST executions` in family B (§4.7,
//!   §13; the spec examples `CodeExecution_Execute_ShellCommand.json` and
//!   `…ShellExecCommandAndArgs.json`, LangChain's tests and code): the
//!   top-level `status` is the command's exit code as a string (`"0"`), with
//!   `result.stdout`, `result.stderr`, `result.executionTimeInMilliseconds`.
//!   An `exitCode` member (a shell image's own API, an early LangChain mock)
//!   is read when `status` is not a number. [`parse_shell_reply`].
//!
//! The value and images of a code execution, and the local pool's extra
//! members (`sessionpadImages`, `sessionpadValue`), are read by
//! [`super::api::outputs_from_wire`].

use std::time::Duration;

use serde_json::Value;

use super::api::{ValueForm, outputs_from_wire};
use super::model::{Execution, ExecutionStatus};
use super::shell::ShellExecution;

/// A 2xx answer whose body is not the shape of its `aca-api.md` section: it
/// lacks the member a reader needs (today always the `status`). The text says
/// which answer and which member, e.g. `executions answer has no status`; the
/// session client shows it as its `Malformed` error ("malformed response from
/// the session pool: …"), the recording proxy records nothing for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MalformedReply(pub String);

/// The text of member `key`, taken out of `v` (an output stream can be
/// megabytes: it is moved, not copied).
fn text(v: &mut Value, key: &str) -> String {
    match v.get_mut(key) {
        Some(Value::String(s)) => std::mem::take(s),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// `executionTimeInMilliseconds` of `v`; zero when absent or not a count.
/// The kernel's execution count the local pool added
/// ([`super::api::COUNT_FIELD`]), when it is a positive integer.
fn count(v: &Value) -> Option<u32> {
    v.get(super::api::COUNT_FIELD)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
}

/// The network attempts a local pool's egress proxy saw the execution make
/// (`sessionpadNetwork` at the top of the body, [`super::egress::REPLY_FIELD`];
/// issue 29). Absent (Azure, a pool without a proxy) or malformed: none, the
/// latter with a warning in the log (it never fails the execution).
fn network(v: &Value) -> Vec<super::egress::NetworkAttempt> {
    let Some(field) = v.get(super::egress::REPLY_FIELD) else {
        return Vec::new();
    };
    serde_json::from_value(field.clone()).unwrap_or_else(|e| {
        tracing::warn!("{} ignored: {e}", super::egress::REPLY_FIELD);
        Vec::new()
    })
}

fn millis(v: &Value) -> Duration {
    Duration::from_millis(
        v.get("executionTimeInMilliseconds")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    )
}

/// Reads a family A body (`aca-api.md` §3.1): `{"$id","properties":{status,
/// stdout,stderr,result|executionResult,executionTimeInMilliseconds}}`, or the
/// legacy flat form with no `properties` (§3.6). The value is read per `form`;
/// every image from `sessionpadImages` when present. Its output streams are
/// taken out of `v`, not copied (they are left as `""`).
///
/// Returns the [`Execution`] with no `id` (family A has none) and the
/// duration in milliseconds as the body gives it (zero when absent).
///
/// # Errors
///
/// [`MalformedReply`] `code/execute answer has no properties.status` when the
/// `status` of `properties` (of the body itself in the flat form) is not a
/// string.
pub fn parse_family_a(v: &mut Value, form: ValueForm) -> Result<Execution, MalformedReply> {
    let attempts = network(v);
    let props = if v.get("properties").is_some() {
        &mut v["properties"]
    } else {
        v
    };
    let Some(status) = props.get("status").and_then(Value::as_str) else {
        return Err(MalformedReply(
            "code/execute answer has no properties.status".into(),
        ));
    };
    let status = ExecutionStatus::from_wire(status);
    let (result, images) = outputs_from_wire(
        props,
        props.get("result").or_else(|| props.get("executionResult")),
        form,
    );
    Ok(Execution {
        id: None,
        status,
        stdout: text(props, "stdout"),
        stderr: text(props, "stderr"),
        result,
        images,
        duration: millis(props),
        execution_count: count(props),
        network: attempts,
    })
}

/// Reads a family B body (`aca-api.md` §4.2): `{"id","status","result":
/// {stdout,stderr,executionResult,executionTimeInMilliseconds}}`, the value
/// per `form`; every image from `result.sessionpadImages` when present. An
/// `error.message` the body carries is added to `stderr` (on a line of its
/// own) unless `stderr` already says it. Its output streams are taken out of
/// `v`, not copied (they are left as `""`).
///
/// Returns the [`Execution`] with the body's `id` when it has one, and the
/// duration in milliseconds as the body gives it (zero when absent; a
/// `Running` answer has no `result`, so no outputs either).
///
/// # Errors
///
/// [`MalformedReply`] `executions answer has no status` when the body is not
/// an object with a string `status`.
pub fn parse_family_b(v: &mut Value, form: ValueForm) -> Result<Execution, MalformedReply> {
    let Some(status) = v.get("status").and_then(Value::as_str) else {
        return Err(MalformedReply("executions answer has no status".into()));
    };
    let status = ExecutionStatus::from_wire(status);
    let id = v.get("id").and_then(Value::as_str).map(str::to_string);
    let error = v
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut empty = Value::Null;
    let result = match v.get_mut("result") {
        Some(r) => r,
        None => &mut empty,
    };
    let (value, images) = outputs_from_wire(result, result.get("executionResult"), form);
    let mut stderr = text(result, "stderr");
    if let Some(msg) = error
        && !stderr.contains(&msg)
    {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&msg);
    }
    Ok(Execution {
        id,
        status,
        stdout: text(result, "stdout"),
        stderr,
        result: value,
        images,
        execution_count: count(result),
        duration: millis(result),
        network: network(v),
    })
}

/// Reads a shell execution reply (`aca-api.md` §4.7, §13): `{"id"?,
/// "status":"<exit code>","result":{"stdout","stderr",
/// "executionTimeInMilliseconds"}}`, with `exitCode` (top-level, else in
/// `result`) read when `status` is not a number (see the module doc).
///
/// Returns the [`ShellExecution`]: the exit code when there is one, else the
/// `status` kept as its `state`; the duration in milliseconds as the body
/// gives it (zero when absent).
///
/// # Errors
///
/// [`MalformedReply`] `the shell execution answer has no status` when the
/// body is not an object with a string `status`.
pub fn parse_shell_reply(v: &Value) -> Result<ShellExecution, MalformedReply> {
    let Some(status) = v.get("status").and_then(Value::as_str) else {
        return Err(MalformedReply(
            "the shell execution answer has no status".into(),
        ));
    };
    let result = v.get("result").unwrap_or(&Value::Null);
    let code_field = |o: &Value| {
        o.get("exitCode")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
    };
    let exit_code = status
        .trim()
        .parse::<i32>()
        .ok()
        .or_else(|| code_field(v))
        .or_else(|| code_field(result));
    let text = |key: &str| match result.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    Ok(ShellExecution {
        id: v.get("id").and_then(Value::as_str).map(str::to_string),
        exit_code,
        state: status
            .trim()
            .parse::<i32>()
            .is_err()
            .then(|| status.to_string()),
        stdout: text("stdout"),
        stderr: text("stderr"),
        duration: Duration::from_millis(
            result
                .get("executionTimeInMilliseconds")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        ),
        network: network(v),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::shell::shell_response;

    /// Issue 29: the local pool's `sessionpadNetwork`, at the top of either
    /// family's body, is read into the execution; a malformed one is
    /// dropped, never an error.
    #[test]
    fn the_egress_attempts_a_local_pool_reports_are_read() {
        use crate::protocol::egress::Decision;
        let attempts = json!([
            {"host": "127.0.0.1", "port": 8123, "decision": "allowed", "bytes": 304, "at": "2026-11-29T01:10:36.127Z"},
            {"host": "169.254.169.254", "port": 80, "decision": "denied", "bytes": 0, "at": "2026-11-29T01:10:36.126Z"}
        ]);
        let mut b = json!({"id": "x", "status": "Succeeded", "result": {"stdout": "", "stderr": ""},
            "sessionpadNetwork": attempts});
        let e = parse_family_b(&mut b, ValueForm::default()).unwrap();
        assert_eq!(e.network.len(), 2);
        assert_eq!((e.network[0].port, e.network[0].bytes), (8123, 304));
        assert_eq!(e.network[1].decision, Decision::Denied);
        let mut a = json!({"properties": {"status": "Success"}, "sessionpadNetwork": attempts});
        assert_eq!(
            parse_family_a(&mut a, ValueForm::default())
                .unwrap()
                .network
                .len(),
            2
        );
        let mut bad = json!({"status": "Succeeded", "sessionpadNetwork": [{"host": 1}]});
        assert!(
            parse_family_b(&mut bad, ValueForm::default())
                .unwrap()
                .network
                .is_empty()
        );
        let mut none = json!({"status": "Succeeded"});
        assert!(
            parse_family_b(&mut none, ValueForm::default())
                .unwrap()
                .network
                .is_empty()
        );
    }

    #[test]
    fn family_a_transcript_parses() {
        // Real transcript, aca-api.md §3.1.
        let mut v: Value = serde_json::from_str(
            r#"{"$id":"1","properties":{"$id":"2","status":"Success","stdout":"Hello from aa!\n","stderr":"","result":"","executionTimeInMilliseconds":10}}"#,
        )
        .unwrap();
        let e = parse_family_a(&mut v, ValueForm::default()).unwrap();
        assert_eq!(e.status, ExecutionStatus::Succeeded);
        assert_eq!(e.stdout, "Hello from aa!\n");
        assert_eq!(e.result, None);
        assert_eq!(e.duration, Duration::from_millis(10));
    }

    #[test]
    fn a_reply_s_streams_are_moved_out_of_the_tree_not_copied() {
        let mut b = json!({"id":"e","status":"Succeeded","result":{"stdout":"big\n","stderr":"warn\n","executionResult":""}});
        let at = b["result"]["stdout"].as_str().unwrap().as_ptr();
        let e = parse_family_b(&mut b, ValueForm::default()).unwrap();
        assert_eq!((e.stdout.as_str(), e.stderr.as_str()), ("big\n", "warn\n"));
        assert_eq!(e.stdout.as_ptr(), at, "the reply's string itself");
        assert_eq!(b["result"]["stdout"], "");
        let mut a = json!({"properties":{"status":"Success","stdout":"x\n","stderr":""}});
        let at = a["properties"]["stdout"].as_str().unwrap().as_ptr();
        let e = parse_family_a(&mut a, ValueForm::default()).unwrap();
        assert_eq!(e.stdout.as_ptr(), at);
        assert_eq!(e.stdout, "x\n");
    }

    #[test]
    fn family_b_example_parses() {
        // Spec example, aca-api.md §4.2.
        let mut v = json!({"id":"testExecutionId","identifier":"testSessionIdentifier","executionType":"Synchronous","status":"Succeeded","result":{"stdout":"63\n","stderr":"","executionResult":42,"executionTimeInMilliseconds":4}});
        let e = parse_family_b(&mut v, ValueForm::default()).unwrap();
        assert_eq!(e.id.as_deref(), Some("testExecutionId"));
        assert_eq!(e.result.and_then(|r| r.json), Some(json!(42)));
    }

    #[test]
    fn malformed_bodies_are_errors_not_panics() {
        assert!(parse_family_a(&mut json!({"x":1}), ValueForm::default()).is_err());
        assert!(parse_family_b(&mut json!([1, 2]), ValueForm::default()).is_err());
    }

    #[test]
    fn malformed_replies_say_which_answer_lacks_what() {
        // The client shows these words after "malformed response from the
        // session pool: ", so they must not change.
        let a = parse_family_a(&mut json!({"x":1}), ValueForm::default()).unwrap_err();
        assert_eq!(
            a.to_string(),
            "code/execute answer has no properties.status"
        );
        let b = parse_family_b(&mut json!({"id":"e"}), ValueForm::default()).unwrap_err();
        assert_eq!(b.to_string(), "executions answer has no status");
        let s = parse_shell_reply(&json!({"result":{}})).unwrap_err();
        assert_eq!(s.to_string(), "the shell execution answer has no status");
    }

    #[test]
    fn the_exit_code_is_read_from_status_else_exit_code() {
        let e = parse_shell_reply(&json!({"identifier":"x","status":"0","result":{"stdout":"hi\n","stderr":"","executionTimeInMilliseconds":3}})).unwrap();
        assert_eq!((e.exit_code, e.state.as_deref()), (Some(0), None));
        assert!(e.succeeded());
        let e = parse_shell_reply(&json!({"status":"Succeeded","exitCode":2,"result":{}})).unwrap();
        assert_eq!(
            (e.exit_code, e.state.as_deref()),
            (Some(2), Some("Succeeded"))
        );
        let e = parse_shell_reply(&json!({"status":"Failed"})).unwrap();
        assert_eq!(e.exit_code, None);
        assert!(!e.succeeded());
        assert!(parse_shell_reply(&json!({"result":{}})).is_err());
    }

    #[test]
    fn the_reply_written_reads_back() {
        let e = ShellExecution {
            id: Some("e1".into()),
            exit_code: Some(3),
            state: None,
            stdout: "a".into(),
            stderr: "b".into(),
            duration: Duration::from_millis(7),
            network: Vec::new(),
        };
        let wire = shell_response(&e, "id1");
        assert_eq!(wire["status"], "3");
        assert_eq!(parse_shell_reply(&wire).unwrap(), e);
    }
}
