//! Cell outputs, one variant per nbformat v4 `output_type`, and the mapping from
//! the session client's [`Execution`] (which carries stdout, stderr, a result value
//! and images, with the traceback of an exception inside stderr) into them.

use std::sync::Arc;

use serde_json::Value;

use crate::protocol::{Execution, ExecutionStatus};
/// Which standard stream a [`Output::Stream`] came from (nbformat `name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamName {
    /// Standard output.
    Stdout,
    /// Standard error (warnings, logging; not the traceback of a failed cell).
    Stderr,
}

/// The text of a stream output, shared rather than copied when a cell is
/// cloned (the notebook's saver keeps its own copy of every settled cell; a
/// cell's stdout can be megabytes). Reads as a `&str`; made from a `String`
/// without copying it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SharedText(Arc<String>);

impl SharedText {
    /// The text to append to: the text itself when nothing else shares it
    /// (a running cell's output as it streams in), else a copy of it first.
    pub fn make_mut(&mut self) -> &mut String {
        Arc::make_mut(&mut self.0)
    }

    /// True when `self` and `other` are the same text in memory, not two
    /// copies of it.
    pub fn is_shared_with(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The text as a `&str`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for SharedText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SharedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0.as_str(), f)
    }
}

impl std::fmt::Display for SharedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        Self(Arc::new(text))
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        Self(Arc::new(text.to_string()))
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.0.as_str() == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.0.as_str() == *other
    }
}

/// One output of a cell (nbformat v4 `outputs[]`).
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Text written to a stream (`output_type: "stream"`).
    Stream {
        /// Which stream.
        name: StreamName,
        /// The text, raw from the session (it may hold escape sequences);
        /// shared by the cell's clones.
        text: SharedText,
    },
    /// The value of the cell's last expression (`output_type: "execute_result"`).
    ExecuteResult {
        /// The `Out[n]` number.
        execution_count: u32,
        /// The value as Python shows it (`text/plain`): Jupyter's form, or the
        /// Python literal of the JSON the pool returned
        /// ([`crate::protocol::ExecutionValue::text`]); raw from the session (it
        /// may hold escape sequences).
        text: String,
        /// The value's JSON when the session returned it typed and it is not a
        /// string (saved as `application/json`); `None` otherwise.
        json: Option<Value>,
    },
    /// An image the code displayed (`output_type: "display_data"`).
    DisplayData {
        /// Image format as the wire names it (`"png"`).
        format: String,
        /// The image bytes (not base64).
        data: Vec<u8>,
    },
    /// What the cell did to the session's files, from the artifact radar
    /// (`files: wrote hist.png, reports/describe.csv; changed notes.md`,
    /// names already escaped as `ls -b` shows them): a line under the cell,
    /// kept with it and exported. In `.ipynb` a `display_data` output with
    /// this `text/plain` and the metadata [`FILES_METADATA`], so other
    /// notebook tools show it as text.
    Files {
        /// The line.
        line: String,
    },
    /// An uncaught exception (`output_type: "error"`).
    Error {
        /// Exception class name, e.g. `ZeroDivisionError`.
        ename: String,
        /// Exception message, e.g. `division by zero`.
        evalue: String,
        /// Traceback lines, raw from the session.
        traceback: Vec<String>,
    },
}

/// The `display_data` metadata key (value `"files"`) that marks an
/// [`Output::Files`] line in `.ipynb`.
pub const FILES_METADATA: &str = "sessionpad";

const TRACEBACK_HEADER: &str = "Traceback (most recent call last):";

/// Turns an execution into outputs in the order a notebook shows them: stdout,
/// stderr, images, the result value, then the error of a failed execution.
/// Its stdout becomes the output's text without a copy.
pub fn outputs_from_execution(exec: Execution, execution_count: u32) -> Vec<Output> {
    let mut exec = exec;
    let mut outputs = Vec::new();
    if !exec.stdout.is_empty() {
        outputs.push(Output::Stream {
            name: StreamName::Stdout,
            text: std::mem::take(&mut exec.stdout).into(),
        });
    }
    let failed = matches!(
        exec.status,
        ExecutionStatus::Failed | ExecutionStatus::Canceled
    );
    // A failed execution's stderr is split around its traceback; any other
    // moves into the cell whole, like stdout (megabytes are not copied).
    let (stderr, error): (SharedText, _) = if failed {
        let (stderr, error) = split_traceback(&exec.stderr, exec.status);
        (stderr.into(), error)
    } else {
        (std::mem::take(&mut exec.stderr).into(), None)
    };
    if !stderr.is_empty() {
        outputs.push(Output::Stream {
            name: StreamName::Stderr,
            text: stderr,
        });
    }
    for image in std::mem::take(&mut exec.images) {
        outputs.push(Output::DisplayData {
            format: image.format,
            data: image.data,
        });
    }
    if let Some(value) = exec.result.take() {
        outputs.push(Output::ExecuteResult {
            execution_count,
            text: value.text,
            // A string may be the repr of an object that has no JSON form; only
            // structured values are claimed to be JSON.
            json: value.json.filter(|j| !j.is_string() && !j.is_null()),
        });
    }
    outputs.extend(error);
    outputs
}

/// Puts `live` (a cell's streamed chunks, in the order the kernel sent them,
/// `stream` outputs) in place of `outputs`' stdout and stderr streams when
/// they hold exactly the same text per stream: the wire answer carries
/// stdout and stderr apart (`aca-api.md` §4.2), so only the stream the local
/// pool sent while the cell ran knows how they interleaved (issue 27 item 2).
/// Anything else (a live output cut short, a traceback split off stderr, no
/// live chunks of both streams) leaves `outputs` as the answer gave them.
pub fn keep_live_order(outputs: &mut Vec<Output>, live: Vec<Output>) {
    let text_of = |outs: &[Output], want: StreamName| -> String {
        outs.iter()
            .filter_map(|o| match o {
                Output::Stream { name, text } if *name == want => Some(text.as_str()),
                _ => None,
            })
            .collect()
    };
    let both = [StreamName::Stdout, StreamName::Stderr].iter().all(|n| {
        live.iter()
            .any(|o| matches!(o, Output::Stream { name, .. } if name == n))
    });
    let only_streams = live.iter().all(|o| matches!(o, Output::Stream { .. }));
    if !both || !only_streams {
        return;
    }
    let same = [StreamName::Stdout, StreamName::Stderr]
        .into_iter()
        .all(|n| text_of(&live, n) == text_of(outputs, n));
    if !same {
        return;
    }
    let Some(at) = outputs
        .iter()
        .position(|o| matches!(o, Output::Stream { .. }))
    else {
        return;
    };
    outputs.retain(|o| !matches!(o, Output::Stream { .. }));
    outputs.splice(at..at, live);
}

/// The outputs of a shell command's execution (Shell pools): its standard
/// output and standard error as streams, in that order; whether it failed is
/// its exit code's to say, not a traceback's.
pub fn outputs_from_command(exec: Execution) -> Vec<Output> {
    [
        (StreamName::Stdout, exec.stdout),
        (StreamName::Stderr, exec.stderr),
    ]
    .into_iter()
    .filter(|(_, text)| !text.is_empty())
    .map(|(name, text)| Output::Stream {
        name,
        text: text.into(),
    })
    .collect()
}

/// Splits the stderr of a failed execution into what was written before the
/// exception and the exception itself. A syntax error has no `Traceback` header, so
/// without one the whole of stderr is the error.
fn split_traceback(stderr: &str, status: ExecutionStatus) -> (&str, Option<Output>) {
    let (before, tb) = match stderr.find(TRACEBACK_HEADER) {
        Some(at) => stderr.split_at(at),
        None => ("", stderr),
    };
    let lines: Vec<String> = tb.lines().map(str::to_string).collect();
    let last = lines.iter().rev().find(|l| !l.trim().is_empty());
    let (ename, evalue) = match (last, status) {
        (Some(line), _) => parse_exception_line(line),
        (None, ExecutionStatus::Canceled) => ("Canceled".to_string(), String::new()),
        (None, _) => (
            "Failed".to_string(),
            "the execution failed without a message".into(),
        ),
    };
    (
        before,
        Some(Output::Error {
            ename,
            evalue,
            traceback: lines,
        }),
    )
}

/// `ZeroDivisionError: division by zero` → (`ZeroDivisionError`, `division by zero`);
/// a line that does not start with a dotted name is all message.
fn parse_exception_line(line: &str) -> (String, String) {
    let line = line.trim();
    let (name, value) = match line.split_once(':') {
        Some((n, v)) => (n, v.trim()),
        None => (line, ""),
    };
    let is_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    if is_name {
        (name.to_string(), value.to_string())
    } else {
        ("Error".to_string(), line.to_string())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::protocol::ExecutionImage;

    fn exec(status: ExecutionStatus) -> Execution {
        Execution {
            execution_count: None,
            id: None,
            status,
            stdout: String::new(),
            stderr: String::new(),
            result: None,
            images: vec![],
            duration: Duration::from_millis(1),
            network: Vec::new(),
        }
    }

    /// A succeeded execution's streams move into the cell: the same bytes in
    /// memory, not copies (megabytes of stderr were copied).
    #[test]
    fn streams_move_into_the_outputs_without_a_copy() {
        let mut e = exec(ExecutionStatus::Succeeded);
        e.stdout = "out\n".repeat(1000);
        e.stderr = "warning\n".repeat(1000);
        let (out_at, err_at) = (e.stdout.as_ptr(), e.stderr.as_ptr());
        let outputs = outputs_from_execution(e, 1);
        let at = |n: usize| match &outputs[n] {
            Output::Stream { text, .. } => text.as_ptr(),
            other => panic!("{other:?}"),
        };
        assert_eq!((at(0), at(1)), (out_at, err_at));
    }

    #[test]
    fn success_orders_stdout_stderr_images_result() {
        let mut e = exec(ExecutionStatus::Succeeded);
        e.stdout = "42\n".into();
        e.stderr = "warn\n".into();
        e.result = Some(crate::protocol::ExecutionValue {
            text: "42".into(),
            json: Some(json!(42)),
        });
        e.images = vec![ExecutionImage {
            format: "png".into(),
            data: vec![1],
        }];
        let out = outputs_from_execution(e.clone(), 3);
        assert_eq!(
            out,
            vec![
                Output::Stream {
                    name: StreamName::Stdout,
                    text: "42\n".into()
                },
                Output::Stream {
                    name: StreamName::Stderr,
                    text: "warn\n".into()
                },
                Output::DisplayData {
                    format: "png".into(),
                    data: vec![1]
                },
                Output::ExecuteResult {
                    execution_count: 3,
                    text: "42".into(),
                    json: Some(json!(42)),
                },
            ]
        );
    }

    #[test]
    fn traceback_becomes_an_error_and_text_before_it_stays_stderr() {
        let mut e = exec(ExecutionStatus::Failed);
        e.stderr = "a warning\nTraceback (most recent call last):\n  File \"<cell>\", line 1, in <module>\nZeroDivisionError: division by zero\n".into();
        let out = outputs_from_execution(e.clone(), 1);
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0],
            Output::Stream {
                name: StreamName::Stderr,
                text: "a warning\n".into()
            }
        );
        match &out[1] {
            Output::Error {
                ename,
                evalue,
                traceback,
            } => {
                assert_eq!(ename, "ZeroDivisionError");
                assert_eq!(evalue, "division by zero");
                assert_eq!(traceback.len(), 3);
            }
            other => panic!("not an error: {other:?}"),
        }
    }

    #[test]
    fn syntax_error_without_header_is_all_error() {
        let mut e = exec(ExecutionStatus::Failed);
        e.stderr = "  Cell In[1], line 1\n    1/\n      ^\nSyntaxError: invalid syntax\n".into();
        let out = outputs_from_execution(e.clone(), 1);
        assert!(matches!(&out[..], [Output::Error { ename, .. }] if ename == "SyntaxError"));
    }

    #[test]
    fn failure_without_stderr_still_says_so() {
        let out = outputs_from_execution(exec(ExecutionStatus::Failed), 1);
        assert!(matches!(&out[..], [Output::Error { ename, .. }] if ename == "Failed"));
    }

    #[test]
    fn a_string_value_is_never_claimed_to_be_json() {
        let mut e = exec(ExecutionStatus::Succeeded);
        e.result = Some(crate::protocol::ExecutionValue {
            text: "   a\n0  1".into(),
            json: Some(json!("   a\n0  1")),
        });
        assert_eq!(
            outputs_from_execution(e.clone(), 2),
            vec![Output::ExecuteResult {
                execution_count: 2,
                text: "   a\n0  1".into(),
                json: None,
            }]
        );
    }
}
