//! Api-versions and the wire shapes of each family, shared by the session client
//! (which sends requests and reads responses) and the local pool (which reads
//! requests and writes responses). Shapes follow `aca-api.md` §3 (family A) and §4
//! (family B). The execution answer's shapes (value, images, the local
//! pool's extra members) are written and read in `api/answer.rs`, re-exported here.

mod answer;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use answer::{
    AnswerForm, COUNT_FIELD, FAMILY_A_STREAMS, FAMILY_B_STREAMS, IMAGES_FIELD, VALUE_FIELD,
    ValueForm, family_a_frame, family_a_response, family_b_frame, family_b_response,
    outputs_from_wire, result_from_wire, result_to_wire,
};

/// The api-versions of the dynamic-sessions data plane (`aca-api.md` §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ApiVersion {
    /// `2024-02-02-preview`: family A, `code/execute`, value in `result`.
    V2024_02_02,
    /// `2024-08-02-preview`: family A, `code/execute`, value in `executionResult`.
    V2024_08_02,
    /// `2024-10-02-preview`: family B, `executions`, 202 on execute.
    V2024_10_02,
    /// `2025-02-02-preview`: family B plus `session`, `listSessions`, `metadata`; 202.
    V2025_02_02,
    /// `2025-10-02-preview`: family B, 200 on execute, `recursive` file listing.
    V2025_10_02,
}

/// The wire family of an api-version (`aca-api.md` §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `code/execute` with the `properties` envelope (§3).
    A,
    /// Flat `executions` bodies (§4).
    B,
}

impl ApiVersion {
    /// Every known api-version, oldest first.
    pub const ALL: [ApiVersion; 5] = [
        Self::V2024_02_02,
        Self::V2024_08_02,
        Self::V2024_10_02,
        Self::V2025_02_02,
        Self::V2025_10_02,
    ];

    /// The query-string value, e.g. `"2025-10-02-preview"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2024_02_02 => "2024-02-02-preview",
            Self::V2024_08_02 => "2024-08-02-preview",
            Self::V2024_10_02 => "2024-10-02-preview",
            Self::V2025_02_02 => "2025-02-02-preview",
            Self::V2025_10_02 => "2025-10-02-preview",
        }
    }

    /// Which wire family this version speaks.
    pub fn family(self) -> Family {
        match self {
            Self::V2024_02_02 | Self::V2024_08_02 => Family::A,
            _ => Family::B,
        }
    }

    /// Whether this version has the session and pool calls: `GET|DELETE session`,
    /// `GET listSessions`, `GET metadata` (2025-02-02-preview and later,
    /// `aca-api.md` §4.1, §4.4), also required by the custom-container
    /// `.management/*` calls (§5.2).
    #[must_use]
    pub fn has_session_management(self) -> bool {
        self >= Self::V2025_02_02
    }

    /// Whether `GET files` takes `recursive` and names each entry's `directory`
    /// (2025-10-02-preview, §4.1, §4.3).
    #[must_use]
    pub fn has_recursive_listing(self) -> bool {
        self >= Self::V2025_10_02
    }

    /// Whether an execution request may carry `returnJupyterFormatExecutionResult`
    /// (2025-10-02-preview, `aca-api.md` §13; spec `SessionCodeExecutionRequest`):
    /// the value of the last expression then comes back as Jupyter's `text/plain`
    /// string (`nan`, `'nan'`, `{'a': 1}`).
    #[must_use]
    pub fn has_jupyter_format(self) -> bool {
        self >= Self::V2025_10_02
    }

    /// Whether files have per-file calls (`GET files/{name}`, `DELETE files/{name}`)
    /// and `path` folders: family B only; the family A documentation lists upload,
    /// list and download only (§3.5).
    #[must_use]
    pub fn has_file_management(self) -> bool {
        self.family() == Family::B
    }
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for an api-version string this client does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown api-version {0:?} (known: 2024-02-02-preview, 2024-08-02-preview, 2024-10-02-preview, 2025-02-02-preview, 2025-10-02-preview)"
)]
pub struct UnknownApiVersion(pub String);

impl FromStr for ApiVersion {
    type Err = UnknownApiVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownApiVersion(s.to_string()))
    }
}

/// Body of an execute request in either family: family A wraps it in `properties`
/// (§3.1), family B sends it flat (§4.2). Fields are optional because real clients
/// omit some of them; `pythonCode` is accepted as an alias of `code` (LlamaIndexTS,
/// old Semantic Kernel .NET).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteRequest {
    /// `inline` (any casing); also `InlineBase64`, `InlineText` in family B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_input_type: Option<String>,
    /// `synchronous` or `asynchronous` (any casing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_type: Option<String>,
    /// The Python code.
    #[serde(default, alias = "pythonCode", skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Execution limit in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_in_seconds: Option<u64>,
    /// Duplicate of the `identifier` query parameter some clients send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
    /// Most characters of stdout and of stderr the answer carries (2025-10-02-preview,
    /// §4.2; the service's default is 4096). Wider than the spec's int32 so an
    /// out-of-range value can be refused with a clear message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_streams_max_length: Option<i64>,
    /// `returnJupyterFormatExecutionResult` (2025-10-02-preview, `aca-api.md`
    /// §13): when true, `executionResult` is Jupyter's `text/plain` string of the
    /// value (spec examples: `float('nan')` → `"nan"`, `"nan"` → `"'nan'"`).
    /// Ignored by the local pool in earlier versions, which do not have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_jupyter_format_execution_result: Option<bool>,
    /// `useEmptyKernel` (2025-10-02-preview, `aca-api.md` §13; the spec: "Use
    /// a kernel without preloaded libraries (faster startup)", default false).
    /// A value that is not a boolean is refused (400). The local pool's kernels
    /// preload no libraries, so it runs every request in such a kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_empty_kernel: Option<bool>,
}

impl ExecuteRequest {
    /// A synchronous inline request for `code`, as sessionpad sends it.
    pub fn inline(code: &str, timeout_in_seconds: u64) -> Self {
        Self {
            code_input_type: Some("inline".into()),
            execution_type: Some("synchronous".into()),
            code: Some(code.to_string()),
            timeout_in_seconds: Some(timeout_in_seconds),
            identifier: None,
            output_streams_max_length: None,
            return_jupyter_format_execution_result: None,
            use_empty_kernel: None,
        }
    }

    /// This request asking for Jupyter's `text/plain` form of the value where
    /// `version` has the field ([`ApiVersion::has_jupyter_format`]); unchanged
    /// for earlier versions, which do not know it.
    #[must_use]
    pub fn jupyter_format_for(mut self, version: ApiVersion) -> Self {
        if version.has_jupyter_format() {
            self.return_jupyter_format_execution_result = Some(true);
        }
        self
    }

    /// True when the request asks for the Jupyter format and `version` has it.
    #[must_use]
    pub fn wants_jupyter_format(&self, version: ApiVersion) -> bool {
        version.has_jupyter_format() && self.return_jupyter_format_execution_result == Some(true)
    }

    /// An asynchronous inline request for `code` (family B only, §4.2): the
    /// service answers at once with `status: "Running"` and the execution id.
    #[must_use]
    pub fn inline_asynchronous(code: &str, timeout_in_seconds: u64) -> Self {
        Self {
            execution_type: Some("asynchronous".into()),
            ..Self::inline(code, timeout_in_seconds)
        }
    }

    /// The JSON body for `version`: wrapped in `properties` for family A (§3.1),
    /// flat for family B (§4.2).
    pub fn to_body(&self, version: ApiVersion) -> Value {
        let flat = serde_json::to_value(self).unwrap_or(Value::Null);
        match version.family() {
            Family::A => json!({ "properties": flat }),
            Family::B => flat,
        }
    }
}

/// The request header with which sessionpad's client asks a local pool for
/// what the service's fields cannot carry, `x-sessionpad-outputs: all`: every
/// image of the execution ([`IMAGES_FIELD`]) and, in a Jupyter-format answer,
/// the value's JSON ([`VALUE_FIELD`]). Azure's pools ignore headers they do not
/// know; the local pool answers without these members when the header is
/// absent, so published clients see the service's shapes unchanged.
pub const OUTPUTS_HEADER: &str = "x-sessionpad-outputs";

/// sessionpad's own request header on `GET metadata`: with the value `brief`,
/// a local pool answers at once with its own fields only
/// (`sessionpadContainerType`, `sessionpadIsolation`), without the runtimes and
/// packages whose first listing takes a second or two. Sent only to pools
/// that may be sessionpad's (loopback); Azure's pools ignore it.
pub const METADATA_HEADER: &str = "x-sessionpad-metadata";

/// The product a sessionpad pool (`sessionpad serve`, its recording proxy)
/// names in the `Server` header of its 401 answers (`sessionpad/0.1.0`), so
/// a client tells it from Azure's pools and says to use the token serve
/// printed rather than to get an Entra token for the dynamic-sessions
/// audience.
pub const SERVER_PRODUCT: &str = "sessionpad";

/// The message of a sessionpad pool's 401 when the request has no
/// `Authorization` header: with [`TOKEN_REFUSED`], how a client tells a
/// sessionpad pool that predates [`SERVER_PRODUCT`] from Azure's.
pub const TOKEN_MISSING: &str = "the Authorization header is missing";

/// The message of a sessionpad pool's 401 for a bearer token other than its
/// own (see [`TOKEN_MISSING`]).
pub const TOKEN_REFUSED: &str = "the bearer token is not valid for this pool";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_version_round_trips() {
        for v in ApiVersion::ALL {
            assert_eq!(v.as_str().parse::<ApiVersion>(), Ok(v));
        }
        assert!("2023-01-01".parse::<ApiVersion>().is_err());
    }

    #[test]
    fn family_a_body_is_wrapped_and_family_b_flat() {
        let r = ExecuteRequest::inline("print(1)", 60);
        let a = r.to_body(ApiVersion::V2024_02_02);
        assert_eq!(a["properties"]["code"], "print(1)");
        assert_eq!(a["properties"]["codeInputType"], "inline");
        let b = r.to_body(ApiVersion::V2025_10_02);
        assert_eq!(b["code"], "print(1)");
        assert!(b.get("properties").is_none());
    }

    #[test]
    fn python_code_alias_is_accepted() {
        let r: ExecuteRequest = serde_json::from_str(r#"{"pythonCode":"1+1"}"#).unwrap();
        assert_eq!(r.code.as_deref(), Some("1+1"));
    }

    #[test]
    fn the_jupyter_field_is_sent_only_where_the_version_has_it() {
        for v in ApiVersion::ALL {
            let body = ExecuteRequest::inline("1", 5)
                .jupyter_format_for(v)
                .to_body(v);
            let flat = if v.family() == Family::A {
                &body["properties"]
            } else {
                &body
            };
            assert_eq!(
                flat.get("returnJupyterFormatExecutionResult").is_some(),
                v == ApiVersion::V2025_10_02,
                "{v}"
            );
        }
    }
}
