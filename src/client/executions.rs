//! Executing code: `POST code/execute` (family A, `aca-api.md` §3.1) and
//! `POST executions` (family B, §4.2), both read into one [`Execution`].

use std::time::{Duration, Instant};

use serde_json::Value;

use super::api::{ExecuteRequest, Family, result_from_wire};
use super::model::{Execution, ExecutionStatus};
use super::response::{check, json, transport};
use super::{ClientError, SessionClient};

/// Extra time the HTTP request may take beyond the execution limit: the pool needs
/// time to start a session and send the answer.
const REQUEST_SLACK: Duration = Duration::from_secs(30);

impl SessionClient {
    /// Runs `code` synchronously in the session `identifier`, with an execution
    /// limit of `timeout` (sent as `timeoutInSeconds`, whole seconds, at least 1).
    ///
    /// Returns the [`Execution`] whatever the code did: an exception is a
    /// `Failed` execution, not an error. Errors are about the transport and the
    /// service: unreachable pool, 401/403/404, a 4xx/5xx with the service's code,
    /// or a body that is not the shape of `aca-api.md` §3.1/§4.2. Executions are
    /// never retried.
    pub async fn execute(
        &self,
        identifier: &str,
        code: &str,
        timeout: Duration,
    ) -> Result<Execution, ClientError> {
        let family = self.api_version.family();
        let path = match family {
            Family::A => "code/execute",
            Family::B => "executions",
        };
        let secs = timeout.as_secs().max(1);
        let body = ExecuteRequest::inline(code, secs).to_body(self.api_version);
        let url = self.url(path, Some(identifier))?;
        let limit = Duration::from_secs(secs) + REQUEST_SLACK;
        let started = Instant::now();
        let resp = self
            .authorize(self.http.post(url).json(&body).timeout(limit))
            .send()
            .await
            .map_err(|e| transport(&self.endpoint, limit, e))?;
        let resp = check(resp).await?;
        let operation_id = resp
            .headers()
            .get("operation-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let value = json(resp).await?;
        let mut exec = match family {
            Family::A => parse_family_a(&value)?,
            Family::B => parse_family_b(&value)?,
        };
        if exec.id.is_none() {
            exec.id = operation_id;
        }
        if exec.duration.is_zero() {
            exec.duration = started.elapsed();
        }
        Ok(exec)
    }
}

fn text(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn millis(v: &Value) -> Duration {
    Duration::from_millis(
        v.get("executionTimeInMilliseconds")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    )
}

/// Reads a family A body: `{"$id","properties":{status,stdout,stderr,result|executionResult,…}}`.
/// The legacy flat form (no `properties`, `aca-api.md` §3.6) is read too.
pub(crate) fn parse_family_a(v: &Value) -> Result<Execution, ClientError> {
    let props = v.get("properties").unwrap_or(v);
    let Some(status) = props.get("status").and_then(Value::as_str) else {
        return Err(ClientError::Malformed(
            "code/execute answer has no properties.status".into(),
        ));
    };
    let (result, images) =
        result_from_wire(props.get("result").or_else(|| props.get("executionResult")));
    Ok(Execution {
        id: None,
        status: ExecutionStatus::from_wire(status),
        stdout: text(props, "stdout"),
        stderr: text(props, "stderr"),
        result,
        images,
        duration: millis(props),
    })
}

/// Reads a family B body: `{"id","status","result":{stdout,stderr,executionResult,…}}`.
pub(crate) fn parse_family_b(v: &Value) -> Result<Execution, ClientError> {
    let Some(status) = v.get("status").and_then(Value::as_str) else {
        return Err(ClientError::Malformed("executions answer has no status".into()));
    };
    let empty = Value::Null;
    let result = v.get("result").unwrap_or(&empty);
    let (value, images) = result_from_wire(result.get("executionResult"));
    let mut stderr = text(result, "stderr");
    if let Some(msg) = v.pointer("/error/message").and_then(Value::as_str) {
        if !stderr.contains(msg) {
            if !stderr.is_empty() && !stderr.ends_with('\n') {
                stderr.push('\n');
            }
            stderr.push_str(msg);
        }
    }
    Ok(Execution {
        id: v.get("id").and_then(Value::as_str).map(str::to_string),
        status: ExecutionStatus::from_wire(status),
        stdout: text(result, "stdout"),
        stderr,
        result: value,
        images,
        duration: millis(result),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn family_a_transcript_parses() {
        // Real transcript, aca-api.md §3.1.
        let v: Value = serde_json::from_str(
            r#"{"$id":"1","properties":{"$id":"2","status":"Success","stdout":"Hello from aa!\n","stderr":"","result":"","executionTimeInMilliseconds":10}}"#,
        )
        .unwrap();
        let e = parse_family_a(&v).unwrap();
        assert_eq!(e.status, ExecutionStatus::Succeeded);
        assert_eq!(e.stdout, "Hello from aa!\n");
        assert_eq!(e.result, None);
        assert_eq!(e.duration, Duration::from_millis(10));
    }

    #[test]
    fn family_b_example_parses() {
        // Spec example, aca-api.md §4.2.
        let v = json!({"id":"testExecutionId","identifier":"testSessionIdentifier","executionType":"Synchronous","status":"Succeeded","result":{"stdout":"63\n","stderr":"","executionResult":42,"executionTimeInMilliseconds":4}});
        let e = parse_family_b(&v).unwrap();
        assert_eq!(e.id.as_deref(), Some("testExecutionId"));
        assert_eq!(e.result, Some(json!(42)));
    }

    #[test]
    fn malformed_bodies_are_errors_not_panics() {
        assert!(parse_family_a(&json!({"x":1})).is_err());
        assert!(parse_family_b(&json!([1, 2])).is_err());
    }
}
