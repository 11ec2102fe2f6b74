//! Domain types of the session client: what an execution returned, independent of
//! the api-version family whose wire shape carried it (`aca-api.md` §3.1, §4.2).
//!
//! Nothing here knows about HTTP or the terminal.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How an execution ended, mapped from family A's `Success`/`Failure` and family B's
/// `OperationState` (`NotStarted|Running|Succeeded|Failed|Canceled`, `aca-api.md` §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExecutionStatus {
    /// The code ran to the end (`Success` / `Succeeded`).
    Succeeded,
    /// The code raised, timed out or its kernel died (`Failure` / `Failed`).
    Failed,
    /// The service cancelled the execution (`Canceled`, family B only).
    Canceled,
    /// Still running (`NotStarted` / `Running`, asynchronous executions of family B).
    Running,
}

impl ExecutionStatus {
    /// Parses a wire status string of either family, case-insensitively.
    /// Unknown strings map to `Failed` so a surprising service answer is never shown
    /// as a success. Shell pools send an exit code as a string (`"0"` = success,
    /// `aca-api.md` §4.7).
    pub fn from_wire(s: &str) -> Self {
        match s.to_ascii_lowercase().as_str() {
            "success" | "succeeded" | "0" => Self::Succeeded,
            "canceled" | "cancelled" => Self::Canceled,
            "running" | "notstarted" => Self::Running,
            _ => Self::Failed,
        }
    }

    /// The family B wire name (`aca-api.md` §4.2).
    pub fn family_b_name(self) -> &'static str {
        match self {
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Canceled => "Canceled",
            Self::Running => "Running",
        }
    }

    /// The family A wire name (`Success`/`Failure`, `aca-api.md` §3.1). `Running` and
    /// `Canceled` do not exist in family A and map to `Failure`.
    pub fn family_a_name(self) -> &'static str {
        match self {
            Self::Succeeded => "Success",
            _ => "Failure",
        }
    }
}

/// An image the execution produced (a matplotlib figure, `display(Image(...))`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionImage {
    /// Image format as the wire names it: `"png"`, `"jpeg"`, `"gif"`.
    pub format: String,
    /// The decoded image bytes (not base64).
    #[serde(with = "b64")]
    pub data: Vec<u8>,
}

/// One execution of code in a session, whatever api-version carried it.
///
/// Built by the client from family A (`properties.{stdout,stderr,result|executionResult,
/// executionTimeInMilliseconds,status}`, `aca-api.md` §3.1) or family B
/// (`{id,status,result:{stdout,stderr,executionResult,executionTimeInMilliseconds}}`,
/// §4.2) and by the local pool before it is written in either shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    /// The execution id (family B `id`, or the `operation-id` header); `None` in
    /// family A, which has no execution ids.
    pub id: Option<String>,
    /// Final (or, for asynchronous executions, current) state.
    pub status: ExecutionStatus,
    /// Everything the code wrote to standard output, in order.
    pub stdout: String,
    /// Everything the code wrote to standard error, including the traceback of an
    /// uncaught exception.
    pub stderr: String,
    /// The JSON value of the last expression, typed where it has a JSON type
    /// (`6*7` gives the number 42); `None` when the cell had no value (the wire's `""`).
    pub result: Option<serde_json::Value>,
    /// Images the code displayed, in order.
    pub images: Vec<ExecutionImage>,
    /// Execution time the service reported (`executionTimeInMilliseconds`).
    #[serde(with = "millis")]
    pub duration: Duration,
}

impl Execution {
    /// True when the execution finished successfully.
    pub fn succeeded(&self) -> bool {
        self.status == ExecutionStatus::Succeeded
    }
}

mod b64 {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(v))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(s)
            .map_err(serde::de::Error::custom)
    }
}

mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(v.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_from_wire_covers_both_families() {
        assert_eq!(ExecutionStatus::from_wire("Success"), ExecutionStatus::Succeeded);
        assert_eq!(ExecutionStatus::from_wire("Succeeded"), ExecutionStatus::Succeeded);
        assert_eq!(ExecutionStatus::from_wire("Failure"), ExecutionStatus::Failed);
        assert_eq!(ExecutionStatus::from_wire("Failed"), ExecutionStatus::Failed);
        assert_eq!(ExecutionStatus::from_wire("running"), ExecutionStatus::Running);
        assert_eq!(ExecutionStatus::from_wire("weird"), ExecutionStatus::Failed);
    }
}
