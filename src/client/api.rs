//! Api-versions and the wire shapes of each family, shared by the session client
//! (which sends requests and reads responses) and the local pool (which reads
//! requests and writes responses). Shapes follow `aca-api.md` §3 (family A) and §4
//! (family B).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::model::{Execution, ExecutionImage, ExecutionStatus, ExecutionValue};

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

/// The member of an execution's `result` (family B) or `properties` (family A)
/// that lists every image the cell displayed, in order, each as
/// `{"type":"image","format":"png","base64_data":…}` (the §3.1 image shape).
/// Sent by sessionpad's local pool only, and only to a request with
/// [`OUTPUTS_HEADER`]. The service's own fields carry one thing: the value, or
/// for a cell without one, its first image (`aca-api.md` §3.1; no public source
/// shows what the service returns for a cell with both, §12 question 1).
pub const IMAGES_FIELD: &str = "sessionpadImages";

/// The member of a Jupyter-format execution's `result` holding the value's
/// JSON (`{"a":1,"b":null}` beside `executionResult` `"{'a': 1, 'b': None}"`),
/// when the value has a JSON type. Sent by sessionpad's local pool only, and
/// only to a request with [`OUTPUTS_HEADER`].
pub const VALUE_FIELD: &str = "sessionpadValue";

/// How the local pool writes an execution's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnswerForm {
    /// The request asked for the Jupyter format where its version has it: the
    /// value is answered as its `text/plain` string.
    pub jupyter: bool,
    /// The request had [`OUTPUTS_HEADER`]: add [`IMAGES_FIELD`] and
    /// [`VALUE_FIELD`].
    pub extras: bool,
}

/// One image in the §3.1 wire shape.
fn image_to_wire(img: &ExecutionImage) -> Value {
    use base64::Engine;
    json!({
        "type": "image",
        "format": img.format,
        "base64_data": base64::engine::general_purpose::STANDARD.encode(&img.data),
    })
}

/// The wire form of a result value and images: the last expression's value (its
/// `text/plain` string when `jupyter`, else its JSON where it has one, else
/// its `text/plain` string), or for a cell that displayed an image and had no
/// value, the first image as `{"type":"image","format":"png","base64_data":…}`
/// (§3.1); `""` when there is nothing.
pub fn result_to_wire(exec: &Execution, jupyter: bool) -> Value {
    if let Some(v) = &exec.result {
        return match (&v.json, jupyter) {
            (Some(json), false) => json.clone(),
            _ => Value::String(v.text.clone()),
        };
    }
    if let Some(img) = exec.images.first() {
        return image_to_wire(img);
    }
    Value::String(String::new())
}

/// Adds the [`IMAGES_FIELD`] and (for a Jupyter-format answer)
/// [`VALUE_FIELD`] members to `container` when `form.extras`.
fn add_extras(container: &mut Value, exec: &Execution, form: AnswerForm) {
    if !form.extras {
        return;
    }
    container[IMAGES_FIELD] = Value::Array(exec.images.iter().map(image_to_wire).collect());
    if form.jupyter
        && let Some(json) = exec.result.as_ref().and_then(|v| v.json.as_ref())
    {
        container[VALUE_FIELD] = json.clone();
    }
}

/// How a reply's result value is read: whether the request asked for the
/// Jupyter format, and whether the pool is known to run Python.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValueForm {
    /// The request carried `returnJupyterFormatExecutionResult: true`, so a
    /// string value is Jupyter's `text/plain` form, shown as it is.
    pub jupyter: bool,
    /// The pool runs Python (a code-interpreter pool), so a JSON value is shown
    /// as the Python literal it came from
    /// ([`crate::client::python_repr::display_text`]); otherwise as JSON.
    pub python: bool,
}

/// Reads one §3.1 image object; `None` when `v` is not one or does not decode.
fn image_from_wire(v: &Value) -> Option<ExecutionImage> {
    use base64::Engine;
    let map = v.as_object()?;
    if map.get("type").and_then(Value::as_str) != Some("image") {
        return None;
    }
    let b64 = map.get("base64_data")?.as_str()?;
    let data = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    let format = map
        .get("format")
        .and_then(Value::as_str)
        .unwrap_or("png")
        .to_string();
    Some(ExecutionImage { format, data })
}

/// Reads a wire result value back: `""` and `null` mean no value, an image
/// object becomes an image; a string of a Jupyter-format reply is the value's
/// `text/plain` form; anything else is a JSON value, shown per `form`.
pub fn result_from_wire(
    value: Option<&Value>,
    form: ValueForm,
) -> (Option<ExecutionValue>, Vec<ExecutionImage>) {
    match value {
        None | Some(Value::Null) => (None, vec![]),
        Some(Value::String(s)) if s.is_empty() => (None, vec![]),
        Some(Value::String(s)) if form.jupyter => (Some(ExecutionValue::text(s.clone())), vec![]),
        Some(v) => match image_from_wire(v) {
            Some(img) => (None, vec![img]),
            None => (
                Some(ExecutionValue {
                    text: crate::client::python_repr::display_text(v, form.python),
                    json: Some(v.clone()),
                }),
                vec![],
            ),
        },
    }
}

/// Reads the value and images of an execution whose value member is `value`
/// and whose container (`result` or `properties`) is `container`: every image
/// from [`IMAGES_FIELD`] when the pool sent it (then an image standing in for
/// the value is one of them), else the one from the value; the value's JSON
/// from [`VALUE_FIELD`] when the pool sent it.
pub fn outputs_from_wire(
    container: &Value,
    value: Option<&Value>,
    form: ValueForm,
) -> (Option<ExecutionValue>, Vec<ExecutionImage>) {
    let (mut result, images) = result_from_wire(value, form);
    if let (Some(r), Some(json)) = (result.as_mut(), container.get(VALUE_FIELD)) {
        r.json = Some(json.clone());
    }
    match container.get(IMAGES_FIELD).and_then(Value::as_array) {
        Some(all) => (result, all.iter().filter_map(image_from_wire).collect()),
        None => (result, images),
    }
}

/// Writes an execution as the family A response body (§3.1): the `$id`/`properties`
/// envelope, `result` for 2024-02-02-preview and `executionResult` for later
/// versions; with `extras` (the request had [`OUTPUTS_HEADER`]) also
/// `properties.sessionpadImages` ([`IMAGES_FIELD`]). Family A has no Jupyter
/// format.
pub fn family_a_response(exec: &Execution, version: ApiVersion, extras: bool) -> Value {
    let mut body = family_a_frame(exec, version, extras);
    fill_streams(&mut body, FAMILY_A_STREAMS, exec);
    body
}

/// The member of a family A body holding `stdout` and `stderr` (§3.1).
pub const FAMILY_A_STREAMS: &str = "properties";

/// The member of a family B body holding `stdout` and `stderr` (§4.2).
pub const FAMILY_B_STREAMS: &str = "result";

/// [`family_a_response`] with `properties.stdout` and `properties.stderr`
/// left empty: the frame a writer fills from the execution as it writes it,
/// so that megabytes of output are not copied into the tree
/// (`crate::pool`'s replies).
pub fn family_a_frame(exec: &Execution, version: ApiVersion, extras: bool) -> Value {
    let value_key = if version == ApiVersion::V2024_02_02 {
        "result"
    } else {
        "executionResult"
    };
    let mut body = json!({
        "$id": "1",
        "properties": {
            "$id": "2",
            "status": exec.status.family_a_name(),
            "stdout": "",
            "stderr": "",
            value_key: result_to_wire(exec, false),
            "executionTimeInMilliseconds": u64::try_from(exec.duration.as_millis()).unwrap_or(u64::MAX),
        }
    });
    let form = AnswerForm {
        jupyter: false,
        extras,
    };
    add_extras(&mut body["properties"], exec, form);
    body
}

/// Writes an execution as the family B response body (§4.2), the value in the
/// `form` asked for, with the local pool's extra members when asked
/// ([`AnswerForm`]).
pub fn family_b_response(
    exec: &Execution,
    identifier: &str,
    execution_type: &str,
    form: AnswerForm,
) -> Value {
    let mut body = family_b_frame(exec, identifier, execution_type, form);
    fill_streams(&mut body, FAMILY_B_STREAMS, exec);
    body
}

/// [`family_b_response`] with `result.stdout` and `result.stderr` left empty
/// (see [`family_a_frame`]); a running execution has no `result`.
pub fn family_b_frame(
    exec: &Execution,
    identifier: &str,
    execution_type: &str,
    form: AnswerForm,
) -> Value {
    let mut body = json!({
        "id": exec.id,
        "identifier": identifier,
        "executionType": execution_type,
        "status": exec.status.family_b_name(),
    });
    if exec.status != ExecutionStatus::Running {
        body["result"] = json!({
            "stdout": "",
            "stderr": "",
            "executionResult": result_to_wire(exec, form.jupyter),
            "executionTimeInMilliseconds": u64::try_from(exec.duration.as_millis()).unwrap_or(u64::MAX),
        });
        add_extras(&mut body["result"], exec, form);
    }
    body
}

/// Puts `exec`'s streams into the `stdout` and `stderr` members of
/// `body[container]` where the frame has them.
fn fill_streams(body: &mut Value, container: &str, exec: &Execution) {
    if let Some(members) = body.get_mut(container).and_then(Value::as_object_mut) {
        for (key, text) in [("stdout", &exec.stdout), ("stderr", &exec.stderr)] {
            if let Some(slot) = members.get_mut(key) {
                *slot = Value::String(text.clone());
            }
        }
    }
}

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
    fn image_result_round_trips() {
        let exec = Execution {
            id: None,
            status: ExecutionStatus::Succeeded,
            stdout: String::new(),
            stderr: String::new(),
            result: None,
            images: vec![ExecutionImage {
                format: "png".into(),
                data: vec![1, 2, 3],
            }],
            duration: std::time::Duration::from_millis(5),
        };
        let wire = result_to_wire(&exec, false);
        assert_eq!(wire["type"], "image");
        let (v, imgs) = result_from_wire(Some(&wire), ValueForm::default());
        assert_eq!(v, None);
        assert_eq!(imgs, exec.images);
    }

    #[test]
    fn every_image_travels_next_to_a_value_when_asked() {
        let png = |b: u8| ExecutionImage {
            format: "png".into(),
            data: vec![b],
        };
        let exec = Execution {
            id: Some("e".into()),
            status: ExecutionStatus::Succeeded,
            stdout: String::new(),
            stderr: String::new(),
            result: Some(ExecutionValue {
                text: "5".into(),
                json: Some(json!(5)),
            }),
            images: vec![png(1), png(2)],
            duration: std::time::Duration::from_millis(5),
        };
        let form = ValueForm {
            jupyter: false,
            python: true,
        };
        // Without the header: the service's shape, the value only.
        let plain = family_b_response(&exec, "id", "Synchronous", AnswerForm::default());
        assert!(plain["result"].get(IMAGES_FIELD).is_none());
        let (v, imgs) = outputs_from_wire(
            &plain["result"],
            plain["result"].get("executionResult"),
            form,
        );
        assert_eq!(v.map(|v| v.text), Some("5".into()));
        assert!(imgs.is_empty());
        // With it, both images as well; in the Jupyter format, the JSON too.
        let asked = AnswerForm {
            jupyter: true,
            extras: true,
        };
        let all = family_b_response(&exec, "id", "Synchronous", asked);
        assert_eq!(all["result"]["executionResult"], "5");
        let jupyter = ValueForm {
            jupyter: true,
            python: true,
        };
        let (v, imgs) = outputs_from_wire(
            &all["result"],
            all["result"].get("executionResult"),
            jupyter,
        );
        assert_eq!(v, exec.result);
        assert_eq!(imgs, exec.images);
        let a = family_a_response(&exec, ApiVersion::V2024_02_02, true);
        let (_, imgs) = outputs_from_wire(&a["properties"], a["properties"].get("result"), form);
        assert_eq!(imgs, exec.images);
    }

    #[test]
    fn jupyter_strings_are_shown_as_they_are_and_json_as_python() {
        let jupyter = ValueForm {
            jupyter: true,
            python: true,
        };
        let (v, _) = result_from_wire(Some(&json!("'nan'")), jupyter);
        assert_eq!(v, Some(ExecutionValue::text("'nan'")));
        let (v, _) = result_from_wire(Some(&json!(null)), jupyter);
        assert_eq!(v, None);
        // A structured value in a Jupyter-format reply is still JSON.
        let (v, _) = result_from_wire(Some(&json!({"a": null})), jupyter);
        assert_eq!(v.map(|v| v.text), Some("{'a': None}".into()));
        let (v, _) = result_from_wire(
            Some(&json!("ab")),
            ValueForm {
                jupyter: false,
                python: true,
            },
        );
        assert_eq!(v.map(|v| v.text), Some("'ab'".into()));
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
