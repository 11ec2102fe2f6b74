//! Domain types of the session client, independent of the api-version family
//! whose wire shape carried them: executions (`aca-api.md` §3.1, §4.2), files
//! (§3.2–§3.3, §4.3), sessions and pool metadata (§4.4, §5.2).
//!
//! Nothing here knows about HTTP or the terminal.

use std::time::Duration;

use chrono::{DateTime, Utc};
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

/// The value of a cell's last expression, in the two forms a person and a
/// program want.
///
/// Read by the client from `result` / `executionResult` (`aca-api.md` §3.1,
/// §4.2): a reply to `returnJupyterFormatExecutionResult: true`
/// (2025-10-02-preview) carries Jupyter's `text/plain` string, which becomes
/// [`ExecutionValue::text`] as it is; any other reply carries the value's JSON,
/// kept in [`ExecutionValue::json`], and [`ExecutionValue::text`] is then the
/// Python literal it came from on a Python pool
/// ([`crate::protocol::python_repr::display_text`]), or the JSON itself on a pool
/// not known to run Python. Built by the local pool's kernel with both forms:
/// `text/plain` and the JSON-typed value of the start-up script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionValue {
    /// The value as the kernel's language shows it: `{'a': 1, 'b': None}`,
    /// `(1, 2.5, 'x')`, `nan`, `'nan'`, a DataFrame's table.
    pub text: String,
    /// The value's JSON, when the reply carried it typed (`{"a":1,"b":null}`,
    /// `42`); `None` for a Jupyter-format string. A string here may be a Python
    /// `str` or the `text/plain` form of an object without a JSON type.
    pub json: Option<serde_json::Value>,
}

impl ExecutionValue {
    /// A value known only by its `text/plain` form (a Jupyter-format reply).
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            json: None,
        }
    }
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
    /// The value of the last expression; `None` when the cell had no value (the
    /// wire's `""` or `null`).
    pub result: Option<ExecutionValue>,
    /// Images the code displayed, in order: every one of them where the pool sent
    /// them all (sessionpad's local pool, `sessionpadImages`), else the one image
    /// that stood in for a value (`{"type":"image",…}`, `aca-api.md` §3.1).
    pub images: Vec<ExecutionImage>,
    /// Execution time the service reported (`executionTimeInMilliseconds`).
    #[serde(with = "millis")]
    pub duration: Duration,
    /// The kernel's execution count of this run (Jupyter's `In [n]`, which
    /// its tracebacks name as `Cell In[n]`), when the pool told it:
    /// sessionpad's local pool does (`sessionpadExecutionCount`,
    /// [`crate::protocol::api::COUNT_FIELD`]); the service does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_count: Option<u32>,
    /// What the execution tried to reach through its session's egress proxy
    /// (issue 29), in order: told by sessionpad's local pool under `serve
    /// --egress allow=…`/`audit` (`sessionpadNetwork`,
    /// [`crate::protocol::egress::REPLY_FIELD`]); empty otherwise, and always
    /// from the service.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<crate::protocol::egress::NetworkAttempt>,
}

impl Execution {
    /// True when the execution finished successfully.
    pub fn succeeded(&self) -> bool {
        self.status == ExecutionStatus::Succeeded
    }
}

/// Whether a [`RemoteFile`] is a file or a folder (family B `type`, compared
/// case-insensitively: `"File"`/`"file"`, `"Directory"`/`"directory"`,
/// `aca-api.md` §4.3). Family A lists files only (§3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// A regular file.
    File,
    /// A folder (only family B listings show folders).
    Directory,
}

/// A file or folder in a session's `/mnt/data`, from either family:
/// family A `value[].properties.{filename,size,lastModifiedTime}` (all versions up
/// to 2024-08-02-preview, `aca-api.md` §3.2–§3.3) or family B `SessionResourceFile`
/// `{name,sizeInBytes,lastModifiedAt,contentType,type,directory}` (2024-10-02-preview
/// and later, §4.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteFile {
    /// The file's own name, without folders (e.g. `data.csv`).
    pub name: String,
    /// The folder holding it, relative to the folder that was listed
    /// (2025-10-02-preview `directory`, §4.3; in family A the folder part of
    /// `filename`). `None` or `Some("")` mean the listed folder itself.
    pub directory: Option<String>,
    /// Size in bytes, when the service said (`size` / `sizeInBytes`).
    pub size: Option<u64>,
    /// Last modification time (`lastModifiedTime` / `lastModifiedAt`), when given
    /// and readable.
    pub modified: Option<DateTime<Utc>>,
    /// MIME type of the content (family B `contentType`; never in family A).
    pub content_type: Option<String>,
    /// File or folder.
    pub kind: FileKind,
}

impl RemoteFile {
    /// The name with its folder, `directory/name` (just `name` at the top): what
    /// to pass back to `file_info`, `download_file` or `delete_file` when the
    /// listing was of the data root.
    #[must_use]
    pub fn path(&self) -> String {
        match self.directory.as_deref().map(|d| d.trim_matches('/')) {
            Some(d) if !d.is_empty() => format!("{d}/{}", self.name),
            _ => self.name.clone(),
        }
    }
}

/// One session of a pool: family B `Session` (`GET session`, `GET listSessions`,
/// 2025-02-02-preview and later, `expireAt`, `aca-api.md` §4.4) or the
/// custom-container `SessionView` (`.management/*`, `expiresAt`, §5.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The session identifier (the `identifier` query parameter of every call).
    pub identifier: String,
    /// When the session was created (`createdAt`).
    pub created: Option<DateTime<Utc>>,
    /// When it was last used (`lastAccessedAt`); each call resets the idle timer.
    pub last_accessed: Option<DateTime<Utc>>,
    /// When the pool will destroy it unless it is used again (`expireAt` /
    /// `expiresAt`).
    pub expires: Option<DateTime<Utc>>,
    /// The service's version tag of the session (`etag`).
    pub etag: Option<String>,
}

/// A name and version pair of [`PoolMetadata`]: a runtime (`node 20.2.4`,
/// `python 3.12.3`) or an installed package (`numpy 2.1.0`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameVersion {
    /// The runtime or package name.
    pub name: String,
    /// Its version string, as the pool reports it (`""` when it gave none).
    pub version: String,
}

/// The Jupyter kernel a pool runs code in (`jupyterKernel`, §4.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelInfo {
    /// Kernel name, e.g. `IPython`, `IJavascript`.
    pub name: String,
    /// Kernel version (`""` when not given).
    pub version: String,
    /// Project home page (`projectUrl`).
    pub project_url: Option<String>,
    /// Free-text description.
    pub description: Option<String>,
}

/// What a pool offers (`GET metadata`, 2025-02-02-preview and later,
/// `aca-api.md` §4.4): runtimes, pre-installed packages and the kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolMetadata {
    /// Language runtimes (`runtimes[].{name,version}`).
    pub runtimes: Vec<NameVersion>,
    /// Pre-installed packages (`preInstalledPackages[].{name,version}`).
    pub packages: Vec<NameVersion>,
    /// The Jupyter kernel (`jupyterKernel`), when the pool said.
    pub kernel: Option<KernelInfo>,
    /// When the pool's image was created (`createdAt`).
    pub created: Option<DateTime<Utc>>,
    /// When it was last updated (`lastUpdatedAt`).
    pub updated: Option<DateTime<Utc>>,
    /// What keeps the sessions isolated, from `sessionpadIsolation`: sent by
    /// sessionpad's local pool only (Azure's pools do not), so `None` there, and
    /// when the field cannot be read.
    #[serde(default)]
    pub isolation: Option<crate::protocol::Isolation>,
    /// What the pool runs, from `sessionpadContainerType`: sent by sessionpad's
    /// local pool only, so `None` from Azure's pools (their data plane does
    /// not say) and when the field cannot be read.
    #[serde(default)]
    pub container_type: Option<super::ContainerType>,
    /// The service's limits a local pool emulates (`serve --azure-limits`),
    /// each with its source, from `sessionpadServiceLimits`: empty from
    /// Azure's pools, from a local pool without the flag, and when the field
    /// cannot be read.
    #[serde(default)]
    pub service_limits: Vec<super::service_limits::ServiceLimit>,
    /// Which image a local pool's Python environment was built with
    /// (`pythonlts`, `minimal`), from `sessionpadImage`: `None` from Azure's
    /// pools, from a Node.js pool and from one running `--python`.
    #[serde(default)]
    pub image: Option<super::image::Image>,
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
        assert_eq!(
            ExecutionStatus::from_wire("Success"),
            ExecutionStatus::Succeeded
        );
        assert_eq!(
            ExecutionStatus::from_wire("Succeeded"),
            ExecutionStatus::Succeeded
        );
        assert_eq!(
            ExecutionStatus::from_wire("Failure"),
            ExecutionStatus::Failed
        );
        assert_eq!(
            ExecutionStatus::from_wire("Failed"),
            ExecutionStatus::Failed
        );
        assert_eq!(
            ExecutionStatus::from_wire("running"),
            ExecutionStatus::Running
        );
        assert_eq!(ExecutionStatus::from_wire("weird"), ExecutionStatus::Failed);
    }
}

/// The kind of session pool, which decides how its sessions are listed, read
/// and ended: a code-interpreter pool (built-in Python, or a BYOC image serving
/// the same API) uses `GET|DELETE session` and `GET listSessions` (§4.4); a
/// custom-container pool uses `POST .management/getSession|stopSession|
/// listSessions` (§5.2). Config files and flags spell it `code-interpreter` /
/// `custom-container`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolType {
    /// A code-interpreter pool (the default; also sessionpad's local pool).
    #[default]
    CodeInterpreter,
    /// A custom-container pool.
    CustomContainer,
}

impl std::str::FromStr for PoolType {
    type Err = String;

    /// Parses `code-interpreter` or `custom-container` (any case, `_` for `-`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "code-interpreter" | "python" => Ok(Self::CodeInterpreter),
            "custom-container" => Ok(Self::CustomContainer),
            other => Err(format!(
                "unknown pool type {other:?}: use code-interpreter or custom-container"
            )),
        }
    }
}

impl std::fmt::Display for PoolType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::CodeInterpreter => "code-interpreter",
            Self::CustomContainer => "custom-container",
        })
    }
}
