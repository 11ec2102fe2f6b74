//! Writing an execution's answer without copying its output (issue 14, big
//! outputs): the body is the wire shape's frame ([`family_a_frame`],
//! [`family_b_frame`]: every member but the streams) and the execution, shared
//! with the session's record ([`super::super::sessions::ExecutionRecord`]);
//! `stdout` and `stderr` are written from the execution itself as the frame is
//! serialized. The bytes are those of serializing the whole
//! [`crate::protocol::api::family_a_response`] / `family_b_response` tree (the
//! same members in the same order), so the reply is exactly the service's
//! shape (`aca-api.md` §3.1, §4.2).
//!
//! A small answer is written at once. A large one (more than
//! [`STREAM_FROM`] bytes of output) is written by a blocking task in
//! [`CHUNK`]-byte pieces that go out as the client reads them, so the pool
//! never holds the answer's bytes whole beside the execution; its length is
//! counted first (a serialization that keeps nothing), so the answer still
//! carries `Content-Length`.
//!
//! [`family_a_frame`]: crate::protocol::api::family_a_frame
//! [`family_b_frame`]: crate::protocol::api::family_b_frame

use std::io::Write;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::protocol::Execution;

/// Output (stdout and stderr, bytes) above which an answer is streamed: 256 KiB.
pub const STREAM_FROM: usize = 256 * 1024;

/// Bytes of answer per piece sent: 64 KiB.
pub const CHUNK: usize = 64 * 1024;

/// Pieces written ahead of the client at most.
const AHEAD: usize = 4;

/// An execution's answer: its frame and the execution that fills the frame's
/// empty `stdout` and `stderr` members under `container`.
pub struct Reply {
    /// The wire body without the streams (`stdout` and `stderr` empty).
    pub frame: Value,
    /// The member of `frame` holding the streams
    /// ([`crate::protocol::api::FAMILY_A_STREAMS`] or `FAMILY_B_STREAMS`).
    pub container: &'static str,
    /// The execution, shared with the session's record.
    pub exec: Arc<Execution>,
}

/// The frame serialized with the streams in place.
struct Filled<'a> {
    frame: &'a Value,
    container: &'a str,
    exec: &'a Execution,
}

/// The members of the container, the streams taken from the execution.
struct Streams<'a> {
    members: &'a serde_json::Map<String, Value>,
    exec: &'a Execution,
}

impl Serialize for Filled<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Value::Object(map) = self.frame else {
            return self.frame.serialize(s);
        };
        let mut out = s.serialize_map(Some(map.len()))?;
        for (key, value) in map {
            match value {
                Value::Object(members) if key == self.container => {
                    let streams = Streams {
                        members,
                        exec: self.exec,
                    };
                    out.serialize_entry(key, &streams)?;
                }
                _ => out.serialize_entry(key, value)?,
            }
        }
        out.end()
    }
}

impl Serialize for Streams<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_map(Some(self.members.len()))?;
        for (key, value) in self.members {
            match key.as_str() {
                "stdout" => out.serialize_entry(key, &self.exec.stdout)?,
                "stderr" => out.serialize_entry(key, &self.exec.stderr)?,
                _ => out.serialize_entry(key, value)?,
            }
        }
        out.end()
    }
}

impl Reply {
    fn filled(&self) -> Filled<'_> {
        Filled {
            frame: &self.frame,
            container: self.container,
            exec: &self.exec,
        }
    }

    /// The whole body at once (tests, small answers).
    ///
    /// # Errors
    ///
    /// `serde_json`'s, which a tree of strings and numbers never gives.
    pub fn to_vec(&self) -> serde_json::Result<Vec<u8>> {
        serde_json::to_vec(&self.filled())
    }

    /// The body's length in bytes, counted without keeping it.
    fn len(&self) -> u64 {
        let mut counter = Counter(0);
        // Writing to a counter cannot fail.
        let _ = serde_json::to_writer(&mut counter, &self.filled());
        counter.0
    }

    /// The HTTP answer: `status`, `Content-Type: application/json`,
    /// `Content-Length`, the body written at once or in pieces (see the module
    /// doc).
    pub fn into_response(self, status: StatusCode) -> Response {
        let output = self.exec.stdout.len() + self.exec.stderr.len();
        let mut resp = if output <= STREAM_FROM {
            match self.to_vec() {
                Ok(bytes) => (status, bytes).into_response(),
                Err(e) => {
                    tracing::error!("an answer could not be written: {e}");
                    return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                }
            }
        } else {
            let len = self.len();
            let mut resp = (status, Body::from_stream(self.stream())).into_response();
            resp.headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
            resp
        };
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        resp
    }

    /// The body in [`CHUNK`]-byte pieces, written by a blocking task at most
    /// [`AHEAD`] pieces ahead of the reader; it stops when the reader goes.
    fn stream(self) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + use<> {
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(AHEAD);
        tokio::task::spawn_blocking(move || {
            let mut out = std::io::BufWriter::with_capacity(CHUNK, Pieces(tx));
            let written = serde_json::to_writer(&mut out, &self.filled())
                .map_err(std::io::Error::from)
                .and_then(|()| out.flush());
            if let Err(e) = written {
                tracing::debug!("an answer was not written to the end: {e}");
            }
        });
        futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|piece| (Ok(piece), rx))
        })
    }
}

/// Counts bytes written.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Sends each write as a piece of the body; fails once the reader is gone.
struct Pieces(tokio::sync::mpsc::Sender<Bytes>);

impl Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .blocking_send(Bytes::copy_from_slice(buf))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client left"))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::protocol::ExecutionStatus;
    use crate::protocol::api::{
        AnswerForm, ApiVersion, FAMILY_A_STREAMS, FAMILY_B_STREAMS, family_a_frame,
        family_a_response, family_b_frame, family_b_response,
    };
    fn exec(stdout: String) -> Arc<Execution> {
        Arc::new(Execution {
            execution_count: None,
            id: Some("e-1".into()),
            status: ExecutionStatus::Failed,
            stdout,
            stderr: "Traceback \"x\"\n\u{1b}[31mred\u{1b}[0m é\n".into(),
            result: None,
            images: vec![],
            duration: Duration::from_millis(12),
            network: Vec::new(),
        })
    }

    fn lines(n: usize) -> String {
        (0..n).map(|i| format!("{i}\n")).collect()
    }

    #[test]
    fn a_reply_is_byte_for_byte_the_whole_tree() {
        let form = AnswerForm {
            jupyter: true,
            extras: true,
        };
        for stdout in [String::new(), lines(10), lines(100_000)] {
            let e = exec(stdout);
            let b = Reply {
                frame: family_b_frame(&e, "sess", "Synchronous", form),
                container: FAMILY_B_STREAMS,
                exec: Arc::clone(&e),
            };
            let whole = serde_json::to_vec(&family_b_response(&e, "sess", "Synchronous", form));
            assert_eq!(b.to_vec().unwrap(), whole.unwrap());
            assert_eq!(b.len(), b.to_vec().unwrap().len() as u64);
            for version in [ApiVersion::V2024_02_02, ApiVersion::V2025_10_02] {
                let a = Reply {
                    frame: family_a_frame(&e, version, true),
                    container: FAMILY_A_STREAMS,
                    exec: Arc::clone(&e),
                };
                let whole = serde_json::to_vec(&family_a_response(&e, version, true));
                assert_eq!(a.to_vec().unwrap(), whole.unwrap());
            }
        }
    }

    #[tokio::test]
    async fn a_large_reply_goes_out_in_pieces_with_its_length() {
        use futures::StreamExt;
        let e = exec(lines(200_000));
        assert!(e.stdout.len() > STREAM_FROM);
        let reply = Reply {
            frame: family_b_frame(&e, "sess", "Synchronous", AnswerForm::default()),
            container: FAMILY_B_STREAMS,
            exec: Arc::clone(&e),
        };
        let whole = reply.to_vec().unwrap();
        let resp = reply.into_response(StatusCode::OK);
        assert_eq!(
            resp.headers()[header::CONTENT_LENGTH],
            whole.len().to_string()
        );
        assert_eq!(resp.headers()[header::CONTENT_TYPE], "application/json");
        let mut body = resp.into_body().into_data_stream();
        let mut got = Vec::new();
        let mut pieces = 0;
        while let Some(data) = body.next().await {
            let data = data.unwrap();
            assert!(data.len() <= CHUNK);
            got.extend_from_slice(&data);
            pieces += 1;
        }
        assert!(pieces > 1, "{pieces}");
        assert_eq!(got, whole);
    }
}
