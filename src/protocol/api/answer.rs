//! The wire form of an execution's answer, written by the local pool and read
//! by the session client: family A's `properties` envelope (`aca-api.md`
//! §3.1) and family B's flat body with its `result` (§4.2), the value (JSON,
//! or Jupyter's `text/plain` string from 2025-10-02-preview, §13) or the image
//! standing in for it (the §3.1 image shape), and the local pool's extra
//! members ([`IMAGES_FIELD`], [`VALUE_FIELD`]) for a request with
//! [`OUTPUTS_HEADER`](super::OUTPUTS_HEADER).

use serde_json::{Value, json};

use super::ApiVersion;
use crate::protocol::model::{Execution, ExecutionImage, ExecutionStatus, ExecutionValue};
/// The member of an execution's `result` (family B) or `properties` (family A)
/// that lists every image the cell displayed, in order, each as
/// `{"type":"image","format":"png","base64_data":…}` (the §3.1 image shape).
/// Sent by sessionpad's local pool only, and only to a request with
/// [`OUTPUTS_HEADER`](super::OUTPUTS_HEADER). The service's own fields carry one thing: the value, or
/// for a cell without one, its first image (`aca-api.md` §3.1; no public source
/// shows what the service returns for a cell with both, §12 question 1).
pub const IMAGES_FIELD: &str = "sessionpadImages";

/// The member of a Jupyter-format execution's `result` holding the value's
/// JSON (`{"a":1,"b":null}` beside `executionResult` `"{'a': 1, 'b': None}"`),
/// when the value has a JSON type. Sent by sessionpad's local pool only, and
/// only to a request with [`OUTPUTS_HEADER`](super::OUTPUTS_HEADER).
pub const VALUE_FIELD: &str = "sessionpadValue";

/// The member of an execution's `result` (family B) or `properties` (family
/// A) holding the kernel's execution count of the run (Jupyter's `In [n]`,
/// the count its tracebacks name as `Cell In[n]`), a positive integer. Sent
/// by sessionpad's local pool only, and only to a request with
/// [`OUTPUTS_HEADER`](super::OUTPUTS_HEADER), when its kernel told it.
pub const COUNT_FIELD: &str = "sessionpadExecutionCount";

/// How the local pool writes an execution's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnswerForm {
    /// The request asked for the Jupyter format where its version has it: the
    /// value is answered as its `text/plain` string.
    pub jupyter: bool,
    /// The request had [`OUTPUTS_HEADER`](super::OUTPUTS_HEADER): add [`IMAGES_FIELD`] and
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

/// Adds the [`IMAGES_FIELD`], [`COUNT_FIELD`] (when the kernel told it) and
/// (for a Jupyter-format answer) [`VALUE_FIELD`] members to `container` when `form.extras`.
fn add_extras(container: &mut Value, exec: &Execution, form: AnswerForm) {
    if !form.extras {
        return;
    }
    container[IMAGES_FIELD] = Value::Array(exec.images.iter().map(image_to_wire).collect());
    if let Some(count) = exec.execution_count {
        container[COUNT_FIELD] = json!(count);
    }
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
    /// ([`crate::protocol::python_repr::display_text`]); otherwise as JSON.
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
                    text: crate::protocol::python_repr::display_text(v, form.python),
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
/// versions; with `extras` (the request had [`OUTPUTS_HEADER`](super::OUTPUTS_HEADER)) also
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
    fn image_result_round_trips() {
        let exec = Execution {
            execution_count: None,
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
            network: Vec::new(),
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
            execution_count: None,
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
            network: Vec::new(),
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
}
