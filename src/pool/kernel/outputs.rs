//! The outputs of one execution as they arrive from the kernel's IOPub channel:
//! streams, the value, images and errors, each capped while it is collected so
//! that a cell printing without end costs the pool a bounded amount of memory.

use std::time::{Duration, Instant};

use base64::Engine;
use jupyter_protocol::{ExecutionState, JupyterMessageContent, MediaType, Stdio as StreamName};

use super::VALUE_MIME;
use crate::protocol::{Execution, ExecutionImage, ExecutionStatus, ExecutionValue};
/// Most bytes of stdout, and separately of stderr, that one execution keeps by
/// default: 8 MiB (`serve --max-stream-bytes`, `[pool] max_stream_bytes` and
/// [`crate::protocol::limits::Limits::stream_bytes`] set another).
///
/// Applies to every api-version (the service's own cap is only known for
/// 2025-10-02-preview, `outputStreamsMaxLength`, `aca-api.md` §4.2, §7). 8 MiB
/// rather than more because an answer is held about four times while it is
/// recorded and written as JSON: 200 MB printed grow `sessionpad serve` by about
/// 37 MB at its peak (`tests/pool_output.rs`). A stream cut here keeps its first
/// and its last 4 MiB, with the marker of `Stream::finish` between them saying how
/// much was printed and dropped (head and tail share one buffer, the tail a ring
/// overwritten in place, so 8 MiB per stream at most). A 2025-10-02-preview request's
/// `outputStreamsMaxLength` ([`OutputLimits::stream_chars`]) may keep less, never
/// more. Output past the cap is counted and dropped as it arrives, so a cell that
/// prints without end costs the pool at most this much per stream (plus the one
/// IOPub message being read).
pub const MAX_STREAM_BYTES: usize = 8 * 1024 * 1024;

/// Of a stream cut by [`MAX_STREAM_BYTES`], the bytes kept from its start: half.
#[cfg(test)]
const HEAD_BYTES: usize = MAX_STREAM_BYTES / 2;

/// Of a stream cut by [`MAX_STREAM_BYTES`], the bytes kept from its end (issue 27
/// item 11: the final result or error is what people need): the other half.
#[cfg(test)]
const TAIL_BYTES: usize = MAX_STREAM_BYTES - HEAD_BYTES;

/// Most bytes of decoded images (PNG, JPEG, GIF from `display_data`,
/// `update_display_data` and `execute_result`) one execution keeps: 16 MiB.
/// Images past it are left out and a notice says so in stderr.
pub const MAX_IMAGE_BYTES: usize = 16 * 1024 * 1024;

/// Most bytes of the value of a cell's last expression (its JSON text, or its
/// `text/plain` form) one execution keeps: 4 MiB. A larger value becomes its
/// `text/plain` form cut to this size, ending with a marker, as a string.
pub const MAX_RESULT_BYTES: usize = 4 * 1024 * 1024;

tokio::task_local! {
    /// The limits of the request an execution serves; see [`OutputLimits::scope`].
    static LIMITS: OutputLimits;
}

/// What one execution may keep of its output, beyond the pool's own caps
/// ([`MAX_STREAM_BYTES`], [`MAX_IMAGE_BYTES`], [`MAX_RESULT_BYTES`]).
///
/// The HTTP route sets it for the executions it starts with [`OutputLimits::scope`]
/// (a task-local value, so it reaches [`super::Kernel::execute`] through the session
/// registry without a parameter); outside a scope the default applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputLimits {
    /// `outputStreamsMaxLength` of a 2025-10-02-preview execution request
    /// (`aca-api.md` §4.2): stdout and stderr each keep at most this many
    /// characters. `None`: the client did not send it, and only
    /// [`MAX_STREAM_BYTES`] applies.
    ///
    /// Characters, not bytes: the service's spec
    /// (`specification/app/data-plane/DynamicSessions/preview/2025-10-02-preview/DynamicSessions.json`,
    /// `SessionCodeExecutionRequest.outputStreamsMaxLength`, int32, "The maximum
    /// length of the output streams. Default value is 4096.") speaks of the
    /// *length* of the JSON strings `stdout` and `stderr`, which we take as the
    /// number of Unicode scalar values (Python's `len`). It does not say how the
    /// cut is shown, so a stream cut by this limit is its first `n` characters
    /// with no marker (a marker would make it longer than asked). The pool's byte
    /// cap still applies when it is smaller, and then its marker is left out too.
    ///
    /// The spec's default of 4096 is not applied to requests without the field:
    /// they keep up to [`MAX_STREAM_BYTES`] with the pool's marker, as every
    /// earlier api-version does (sessionpad's own client and other clients that
    /// never send the field would otherwise lose all but 4096 characters).
    pub stream_chars: Option<usize>,
    /// `returnJupyterFormatExecutionResult` of a 2025-10-02-preview request
    /// (`aca-api.md` §13): the answer carries the value's Jupyter `text/plain`
    /// form (`nan`, `'nan'`, `{'a': 1, 'b': None}`) as `executionResult`;
    /// otherwise its JSON-typed value (or, for a value without a JSON type, its
    /// `text/plain` string), as every earlier answer did. Not a limit on what
    /// the execution keeps (it keeps both forms): the session records it with
    /// the execution, so `GET executions/{id}` answers in the form asked for.
    pub jupyter: bool,
}

impl OutputLimits {
    /// Runs `fut` with these limits applying to every [`super::Kernel::execute`] awaited
    /// inside it (in the same task).
    pub async fn scope<F: std::future::Future>(self, fut: F) -> F::Output {
        LIMITS.scope(self, fut).await
    }

    /// The limits of the enclosing [`OutputLimits::scope`], or the default.
    #[must_use]
    pub fn current() -> Self {
        LIMITS.try_with(|l| *l).unwrap_or_default()
    }
}

/// The largest index at most `i` that is a char boundary of `s`.
fn floor_char_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    (0..=i).rev().find(|&j| s.is_char_boundary(j)).unwrap_or(0)
}

/// One output stream of an execution (stdout or stderr), capped while it is
/// collected: text past [`MAX_STREAM_BYTES`] (or the client's character limit)
/// is counted, not kept.
///
/// Under the pool's own cap the head and the tail share one buffer (`text`):
/// the head first, then, from `tail_at` on, a ring of [`Stream::tail_bytes`]
/// that the latest text overwrites in place. [`Stream::finish`] turns the ring
/// in order and puts the marker between the two where they lie, so a cut
/// stream costs the pool its kept bytes once (8 MiB by default), never a
/// second buffer for the tail nor a copy of both into the answer.
struct Stream {
    /// What is kept, at most `max_bytes` bytes: UTF-8 except, once the ring
    /// has wrapped, at the ring's oldest byte (the finish skips to a character
    /// boundary).
    text: Vec<u8>,
    /// The pool's cap of this stream in bytes ([`MAX_STREAM_BYTES`] unless the
    /// pool was set otherwise): a cut stream keeps `head_bytes` from its start
    /// and `max_bytes - head_bytes` from its end.
    max_bytes: usize,
    /// Half of `max_bytes`: the bytes a cut stream keeps from its start.
    head_bytes: usize,
    /// Characters in `text`; counted only under a client limit.
    chars: usize,
    /// The client's limit in characters ([`OutputLimits::stream_chars`]).
    max_chars: Option<usize>,
    /// Bytes (UTF-8) received and dropped.
    dropped: u64,
    /// Lines (`\n`) in the bytes dropped.
    dropped_lines: u64,
    /// Where the tail's ring starts in `text` (the head's length), once text
    /// went past the head under the pool's own cap.
    tail_at: Option<usize>,
    /// Once the ring is full: its oldest byte, where the next text is written
    /// (0 to [`Stream::tail_bytes`] − 1).
    oldest: usize,
    /// Whether the last text received ended a line (or none was received).
    ends_line: bool,
    /// The pool's own messages (timeout, dead kernel, images left out), kept
    /// whole after the text; each is short.
    notices: String,
}

/// Room reserved after the tail's ring for the marker [`Stream::finish`] puts
/// in (it is about 150 bytes), so that putting it in never moves the buffer.
const MARKER_ROOM: usize = 512;

impl Default for Stream {
    /// A stream with no character limit and the default [`MAX_STREAM_BYTES`].
    fn default() -> Self {
        Self::capped(None, MAX_STREAM_BYTES)
    }
}

/// `\n` bytes in `b`.
fn newlines(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
}

impl Stream {
    /// A stream limited to `max_chars` characters when given, and to the
    /// default [`MAX_STREAM_BYTES`].
    #[cfg(test)]
    fn new(max_chars: Option<usize>) -> Self {
        Self::capped(max_chars, MAX_STREAM_BYTES)
    }

    /// A stream limited to `max_chars` characters when given, and to
    /// `max_bytes` bytes (at least 2: one of head, one of tail).
    fn capped(max_chars: Option<usize>, max_bytes: usize) -> Self {
        let max_bytes = max_bytes.max(2);
        Self {
            text: Vec::new(),
            max_bytes,
            head_bytes: max_bytes / 2,
            chars: 0,
            max_chars,
            dropped: 0,
            dropped_lines: 0,
            tail_at: None,
            oldest: 0,
            ends_line: true,
            notices: String::new(),
        }
    }

    /// Of a stream cut by the pool's cap, the bytes kept from its end (issue 27
    /// item 11: the final result or error is what people need): the other half.
    fn tail_bytes(&self) -> usize {
        self.max_bytes - self.head_bytes
    }

    /// Appends as much of `s` as the caps leave room for and counts the rest;
    /// returns the bytes of `s` kept (its start).
    fn push(&mut self, s: &str) -> usize {
        if !s.is_empty() {
            self.ends_line = s.ends_with('\n');
        }
        if self.max_chars.is_none() {
            return self.push_head_tail(s);
        }
        let room = self.max_bytes.saturating_sub(self.text.len());
        let mut cut = floor_char_boundary(s, room);
        if let Some(max) = self.max_chars {
            let room = max.saturating_sub(self.chars);
            if let Some((i, _)) = s[..cut].char_indices().nth(room) {
                cut = i;
            }
            self.chars += s[..cut].chars().count();
        }
        self.text.extend_from_slice(&s.as_bytes()[..cut]);
        self.dropped += (s.len() - cut) as u64;
        cut
    }

    /// Under the pool's own cap: the first `head_bytes` go to the head, the
    /// rest to the tail's ring, which keeps the last [`Stream::tail_bytes`];
    /// returns the bytes of `s` that went to the head (only those are streamed
    /// live).
    fn push_head_tail(&mut self, s: &str) -> usize {
        let cut = if self.tail_at.is_none() {
            floor_char_boundary(s, self.head_bytes.saturating_sub(self.text.len()))
        } else {
            0
        };
        self.text.extend_from_slice(&s.as_bytes()[..cut]);
        if cut < s.len() {
            self.push_tail(&s.as_bytes()[cut..]);
        }
        cut
    }

    /// Writes `b` into the tail's ring: appended until the ring is full, then
    /// over its oldest bytes, which are counted as dropped.
    fn push_tail(&mut self, b: &[u8]) {
        let cap = self.tail_bytes();
        let at = match self.tail_at {
            Some(at) => at,
            None => {
                // The head is done: room for the ring and the marker, reserved
                // once (pages are only resident as text reaches them).
                self.text.reserve_exact(cap + MARKER_ROOM);
                self.tail_at = Some(self.text.len());
                self.text.len()
            }
        };
        let n = (cap - (self.text.len() - at)).min(b.len());
        self.text.extend_from_slice(&b[..n]);
        let b = &b[n..];
        if b.is_empty() {
            return;
        }
        if b.len() >= cap {
            // All the ring holds and all but the last `cap` bytes of `b` go.
            let (gone, kept) = b.split_at(b.len() - cap);
            self.dropped += (cap + gone.len()) as u64;
            self.dropped_lines += newlines(&self.text[at..]) + newlines(gone);
            self.text[at..].copy_from_slice(kept);
            self.oldest = 0;
            return;
        }
        let first = (cap - self.oldest).min(b.len());
        self.overwrite(at + self.oldest, &b[..first]);
        self.overwrite(at, &b[first..]);
        self.oldest = (self.oldest + b.len()) % cap;
    }

    /// Writes `b` over `text` from `i`, counting the bytes and lines it drops.
    fn overwrite(&mut self, i: usize, b: &[u8]) {
        let old = &mut self.text[i..i + b.len()];
        self.dropped += b.len() as u64;
        self.dropped_lines += newlines(old);
        old.copy_from_slice(b);
    }

    /// True when the last text received ends a line (or there is none).
    fn at_line_start(&self) -> bool {
        if self.max_chars.is_none() {
            return self.ends_line;
        }
        self.dropped == 0 && (self.text.is_empty() || self.text.ends_with(b"\n"))
    }

    /// Appends a message of the pool, kept whole whatever the caps.
    pub(super) fn notice(&mut self, s: &str) {
        self.notices.push_str(s);
    }

    /// The stream as answered: the text kept; when the pool's cap cut it (and no
    /// client limit applies), its head, the marker
    /// `\n[output truncated by the local pool: 11.9 MB printed; 3.5 MB (291692 lines) dropped here, the first and last 4 MiB kept]\n`
    /// (MB: 10^6 bytes of UTF-8; lines: `\n` in what was dropped) and its
    /// tail, which starts at a line start when one is near; then the notices.
    /// Built in the stream's own buffer (the ring turned in place, the marker
    /// spliced in), not in a new one.
    fn finish(mut self) -> String {
        let mut out = std::mem::take(&mut self.text);
        if let (None, Some(at)) = (self.max_chars, self.tail_at) {
            out[at..].rotate_left(self.oldest);
            if self.dropped > 0 {
                let tail = &out[at..];
                // The tail starts at a character boundary, on a line of its own
                // when a line ends near its start.
                let mut j = tail.iter().take_while(|&&c| c & 0xC0 == 0x80).count();
                let near = (j + 4096).min(tail.len());
                if let Some(i) = memchr::memchr(b'\n', &tail[j..near]) {
                    j += i + 1;
                }
                self.dropped += j as u64;
                self.dropped_lines += newlines(&tail[..j]);
                let printed = (out.len() - j) as u64 + self.dropped;
                let marker = format!(
                    "\n[output truncated by the local pool: {} printed; {} ({} lines) dropped here, {} kept]\n",
                    decimal_size(printed),
                    decimal_size(self.dropped),
                    self.dropped_lines,
                    kept_parts(self.head_bytes, self.tail_bytes())
                );
                out.splice(at..at + j, marker.into_bytes());
            }
        }
        out.extend_from_slice(self.notices.as_bytes());
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

/// A byte count for the marker: `11.9 MB` (10^6 bytes, one decimal) from 100 kB
/// on, `52.3 kB` from 1 kB, else `812 bytes`.
fn decimal_size(n: u64) -> String {
    if n >= 100_000 {
        format!("{:.1} MB", n as f64 / 1e6)
    } else if n >= 1000 {
        format!("{:.1} kB", n as f64 / 1e3)
    } else {
        format!("{n} bytes")
    }
}

/// A size the user set, as exactly as it was set: `4 MiB`, `32 KiB`, else
/// `50000 bytes` (a size not a whole number of KiB is not rounded).
fn exact_size(n: usize) -> String {
    const KIB: usize = 1024;
    if n >= KIB * KIB && n.is_multiple_of(KIB * KIB) {
        format!("{} MiB", n / (KIB * KIB))
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// What a cut stream keeps, for its marker: `the first and last 4 MiB`, or
/// `the first 512 bytes and last 513 bytes` when the halves differ.
fn kept_parts(head: usize, tail: usize) -> String {
    if head == tail {
        format!("the first and last {}", exact_size(head))
    } else {
        format!(
            "the first {} and last {}",
            exact_size(head),
            exact_size(tail)
        )
    }
}

/// True when `value` as JSON text is longer than `limit` bytes; stops writing at
/// the limit, so a huge value costs no copy.
fn json_longer_than(value: &serde_json::Value, limit: usize) -> bool {
    struct Counter {
        n: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.n += buf.len();
            if self.n > self.limit {
                Err(std::io::Error::other("over the limit"))
            } else {
                Ok(buf.len())
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(&mut Counter { n: 0, limit }, value).is_err()
}

/// Outputs of one execution as they arrive, each bounded ([`MAX_STREAM_BYTES`],
/// [`MAX_IMAGE_BYTES`], [`MAX_RESULT_BYTES`], [`OutputLimits`]).
#[derive(Default)]
pub(super) struct Run {
    /// Where each piece of stdout and stderr is published as it arrives (the
    /// event stream's running output), when an execution route set it.
    live: Option<crate::pool::events::LiveOutput>,
    stdout: Stream,
    stderr: Stream,
    /// The value's JSON-typed form (the start-up script's), when it has one
    /// within [`MAX_RESULT_BYTES`].
    result_json: Option<serde_json::Value>,
    /// The value's `text/plain` form, cut to [`MAX_RESULT_BYTES`] with a marker.
    result_text: Option<String>,
    images: Vec<ExecutionImage>,
    /// Decoded bytes in `images`.
    image_bytes: usize,
    /// Images left out for [`MAX_IMAGE_BYTES`].
    images_dropped: usize,
    failed: bool,
    /// The kernel's execution count of the run (its `execute_input`).
    execution_count: Option<u32>,
}

impl Run {
    /// An empty run whose streams keep what `limits` allow, within the
    /// default [`MAX_STREAM_BYTES`].
    #[cfg(test)]
    pub(super) fn new(limits: OutputLimits) -> Self {
        Self::capped(limits, MAX_STREAM_BYTES)
    }

    /// An empty run whose streams keep what `limits` allow, each within
    /// `stream_bytes` bytes (the pool's setting,
    /// [`crate::protocol::limits::Limits::stream_bytes`]).
    pub(super) fn capped(limits: OutputLimits, stream_bytes: usize) -> Self {
        Self {
            live: crate::pool::events::LiveOutput::current(),
            stdout: Stream::capped(limits.stream_chars, stream_bytes),
            stderr: Stream::capped(limits.stream_chars, stream_bytes),
            ..Self::default()
        }
    }

    /// A run that keeps nothing: the output after an interrupt, which is never
    /// answered.
    pub(super) fn discarding() -> Self {
        Self {
            live: None,
            image_bytes: MAX_IMAGE_BYTES,
            ..Self::capped(
                OutputLimits {
                    stream_chars: Some(0),
                    jupyter: false,
                },
                MAX_STREAM_BYTES,
            )
        }
    }

    /// Takes one IOPub message; returns true when the kernel went idle.
    pub(super) fn take(&mut self, content: JupyterMessageContent) -> bool {
        match content {
            JupyterMessageContent::StreamContent(s) => {
                let name = match s.name {
                    StreamName::Stdout => crate::protocol::events::StreamName::Stdout,
                    StreamName::Stderr => crate::protocol::events::StreamName::Stderr,
                };
                let kept = match s.name {
                    StreamName::Stdout => self.stdout.push(&s.text),
                    StreamName::Stderr => self.stderr.push(&s.text),
                };
                // What the caps drop is not streamed either: a cell printing
                // 200 MB streams what its reply will hold.
                if let Some(live) = &self.live {
                    live.publish(name, &s.text[..kept]);
                }
            }
            JupyterMessageContent::ExecuteInput(i) => {
                self.execution_count = u32::try_from(i.execution_count.0).ok().filter(|n| *n > 0);
            }
            JupyterMessageContent::ExecuteResult(r) => self.take_result(&r.data.content),
            JupyterMessageContent::DisplayData(d) => self.take_images(&d.data.content),
            JupyterMessageContent::UpdateDisplayData(d) => self.take_images(&d.data.content),
            JupyterMessageContent::ErrorOutput(e) => {
                self.failed = true;
                let tb = e.traceback.join("\n");
                if !self.stderr.at_line_start() {
                    self.stderr.push("\n");
                }
                if tb.trim().is_empty() {
                    self.stderr.push(&format!("{}: {}\n", e.ename, e.evalue));
                } else {
                    self.stderr.push(&tb);
                    self.stderr.push("\n");
                }
            }
            JupyterMessageContent::Status(s) => return s.execution_state == ExecutionState::Idle,
            _ => {}
        }
        false
    }

    pub(super) fn take_result(&mut self, media: &[MediaType]) {
        let mut typed = None;
        let mut plain = None;
        for m in media {
            match m {
                MediaType::Other((mime, value)) if mime == VALUE_MIME && !value.is_null() => {
                    typed = Some(value);
                }
                MediaType::Plain(text) => plain = Some(text.as_str()),
                _ => {}
            }
        }
        self.take_images(media);
        self.result_json = typed
            .filter(|v| !json_longer_than(v, MAX_RESULT_BYTES))
            .cloned();
        self.result_text = match (typed, plain) {
            (_, Some(text)) if text.len() <= MAX_RESULT_BYTES => Some(text.to_string()),
            (_, Some(text)) => {
                let cut = floor_char_boundary(text, MAX_RESULT_BYTES);
                Some(format!(
                    "{}\n[result truncated by the local pool: {:.1} MB, the first {} MiB kept]",
                    &text[..cut],
                    text.len() as f64 / 1e6,
                    MAX_RESULT_BYTES >> 20
                ))
            }
            (Some(_), None) => Some(format!(
                "[result left out by the local pool: its JSON is over {} MiB]",
                MAX_RESULT_BYTES >> 20
            )),
            (None, None) => None,
        };
        if let (Some(v), None) = (&self.result_json, &self.result_text) {
            self.result_text = Some(crate::protocol::python_repr::python_literal(v));
        }
    }

    /// The value in both forms: its `text/plain` and, where it has one, its
    /// JSON type.
    fn value(&mut self) -> Option<ExecutionValue> {
        Some(ExecutionValue {
            text: self.result_text.take()?,
            json: self.result_json.take(),
        })
    }

    pub(super) fn take_images(&mut self, media: &[MediaType]) {
        let engine = base64::engine::general_purpose::STANDARD;
        for m in media {
            let (format, b64) = match m {
                MediaType::Png(b) => ("png", b),
                MediaType::Jpeg(b) => ("jpeg", b),
                MediaType::Gif(b) => ("gif", b),
                _ => continue,
            };
            // Decoded size is at most 3/4 of the base64 text: check before copying.
            let estimate = b64.len() / 4 * 3;
            if self.image_bytes.saturating_add(estimate) > MAX_IMAGE_BYTES {
                self.images_dropped += 1;
                continue;
            }
            let cleaned: String = b64.chars().filter(|c| !c.is_whitespace()).collect();
            if let Ok(data) = engine.decode(cleaned) {
                self.image_bytes += data.len();
                self.images.push(ExecutionImage {
                    format: format.into(),
                    data,
                });
            }
        }
    }

    pub(super) fn died(&mut self) {
        self.failed = true;
        self.stderr.notice(
            "Execution aborted: the kernel died (it exited, crashed or ran out of memory); \
             the next execution starts a fresh session state.\n",
        );
    }

    /// The pool ended the execution and says why in `text` (one line, ending
    /// with a newline): the execution fails.
    pub(super) fn aborted(&mut self, text: &str) {
        self.failed = true;
        self.stderr.notice(text);
    }

    /// The code could not be sent to the kernel (`why`): the execution fails.
    pub(super) fn not_sent(&mut self, why: &str) {
        self.failed = true;
        self.stderr
            .notice(&format!("cannot send the code to the kernel: {why}\n"));
    }

    /// The kernel was killed for going over the session's memory limit: Azure's
    /// "Execution aborted" (`aca-api.md` §6, execution failures).
    pub(super) fn out_of_memory(&mut self, limit: u64) {
        self.failed = true;
        self.stderr.notice(&format!(
            "Execution aborted: the session went over its memory limit of {}; \
             the next execution starts a fresh session state.\n",
            crate::protocol::limits::human_bytes(limit)
        ));
    }

    /// The session reached its process limit; the kernel is killed with every
    /// process it started.
    pub(super) fn too_many_processes(&mut self, limit: u64) {
        self.failed = true;
        self.stderr.notice(&format!(
            "Execution aborted: the session reached its limit of {limit} processes; \
             its processes were ended and the next execution starts a fresh session state.\n"
        ));
    }

    /// The execution ran past its `limit`: the service's timeout text, then
    /// what became of the code, so that nobody takes it to be running still
    /// (issue 27 item 6): interrupted (the session keeps its state), or,
    /// when it ignored the interrupt (`killed`), its kernel ended.
    pub(super) fn timed_out(&mut self, limit: Duration, killed: bool) {
        self.failed = true;
        self.stderr
            .notice("Request timed out waiting for code execution to complete\n");
        let limit = match limit.as_secs() {
            0 => format!("{} ms", limit.as_millis()),
            secs => format!("{secs} s"),
        };
        self.stderr.notice(&if killed {
            format!(
                "[local pool: the code was stopped at its {limit} limit; it ignored the interrupt, \
                 so its kernel was ended: the next execution starts a fresh session state]\n"
            )
        } else {
            format!(
                "[local pool: the code was stopped at its {limit} limit (interrupted); it no longer \
                 runs, the session keeps its state, and output after the limit is not kept]\n"
            )
        });
    }

    pub(super) fn finish(mut self, started: Instant) -> Execution {
        if self.images_dropped > 0 {
            self.stderr.notice(&format!(
                "[{} image(s) left out by the local pool: one execution keeps at most {} MiB of images]\n",
                self.images_dropped,
                MAX_IMAGE_BYTES >> 20
            ));
        }
        Execution {
            id: None,
            status: if self.failed {
                ExecutionStatus::Failed
            } else {
                ExecutionStatus::Succeeded
            },
            result: self.value(),
            stdout: self.stdout.finish(),
            stderr: self.stderr.finish(),
            images: self.images,
            duration: started.elapsed(),
            execution_count: self.execution_count,
            network: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A limit set to an odd number of bytes: the marker says exactly what was
    /// kept on each side, and the figures in bytes and kB.
    #[test]
    fn a_set_limit_is_split_in_two_and_the_marker_states_it_exactly() {
        let mut s = Stream::capped(None, 1025);
        for i in 0..1000 {
            s.push(&format!("line {i}\n"));
        }
        let out = s.finish();
        let head =
            "line 0\n".to_string() + &(1..80).map(|i| format!("line {i}\n")).collect::<String>();
        assert_eq!(&out[..512], &head[..512]);
        let marker = out[512..].lines().nth(1).unwrap();
        let tail = &out[512 + 1 + marker.len() + 1..];
        assert!(tail.len() <= 513 && tail.starts_with("line "), "{tail:?}");
        assert!(tail.ends_with("line 999\n"));
        let printed: usize = (0..1000).map(|i| format!("line {i}\n").len()).sum();
        let lines = 1000 - out[..512].matches('\n').count() - tail.matches('\n').count();
        assert_eq!(
            marker,
            format!(
                "[output truncated by the local pool: {:.1} kB printed; {:.1} kB ({lines} lines) dropped here, the first 512 bytes and last 513 bytes kept]",
                printed as f64 / 1e3,
                (printed - 512 - tail.len()) as f64 / 1e3
            )
        );
    }

    #[test]
    fn a_stream_keeps_its_cap_counts_the_rest_and_says_so() {
        let mut s = Stream::new(None);
        let mb = "x".repeat(1_000_000);
        for _ in 0..20 {
            s.push(&mb);
        }
        s.notice("Request timed out\n");
        let out = s.finish();
        let marker = "\n[output truncated by the local pool: 20.0 MB printed; 11.6 MB (0 lines) dropped here, the first and last 4 MiB kept]\n";
        assert!(
            out.ends_with("xxRequest timed out\n"),
            "{:?}",
            &out[out.len() - 200..]
        );
        assert_eq!(&out[HEAD_BYTES..HEAD_BYTES + marker.len()], marker);
        assert_eq!(
            out.len(),
            MAX_STREAM_BYTES + marker.len() + "Request timed out\n".len()
        );
    }

    /// What the cap drops is not streamed live either: a cell printing 20 MB
    /// streams the 8 MiB its reply holds.
    #[test]
    fn only_what_a_stream_keeps_is_streamed_live() {
        use crate::events::Hub;
        use crate::protocol::events::PoolEvent;
        use jupyter_protocol::StreamContent;
        let hub = Hub::new();
        let mut rx = hub.subscribe();
        let mut run = Run {
            live: Some(crate::pool::events::LiveOutput::new(
                hub.clone(),
                "id",
                "e1",
                &axum::http::HeaderMap::new(),
            )),
            ..Run::default()
        };
        let mb = "x".repeat(1_000_000);
        for _ in 0..20 {
            run.take(JupyterMessageContent::StreamContent(StreamContent::stdout(
                &mb,
            )));
        }
        let mut streamed = 0;
        while let Ok(event) = rx.try_recv() {
            if let PoolEvent::Output(chunk) = &*event {
                streamed += chunk.text.len();
            }
        }
        assert_eq!(streamed, HEAD_BYTES);
    }

    /// Issue 27 item 11: a stream cut by the pool keeps its head and its tail
    /// (the end of a long output is what people need), with one marker between
    /// them saying how much was dropped.
    #[test]
    fn a_cut_stream_keeps_its_head_and_its_tail_with_the_marker_between() {
        let mut s = Stream::new(None);
        for i in 0..1_000_000 {
            s.push(&format!("line {i}\n"));
        }
        let out = s.finish();
        assert!(out.starts_with("line 0\nline 1\n"), "{:?}", &out[..40]);
        assert!(
            out.ends_with("line 999999\n"),
            "{:?}",
            &out[out.len() - 40..]
        );
        let at = out.find("[output truncated by the local pool: ").unwrap();
        assert!(at > MAX_STREAM_BYTES / 4 && at < out.len() - MAX_STREAM_BYTES / 4);
        assert!(out.len() <= MAX_STREAM_BYTES + 200, "{}", out.len());
        let marker = &out[at..at + out[at..].find('\n').unwrap()];
        assert!(marker.contains("11.9 MB printed"), "{marker}");
        assert!(marker.contains("lines) dropped here"), "{marker}");
        // The tail starts on a line of its own, the marker on one of its own.
        let after = &out[at + marker.len() + 1..];
        assert!(after.starts_with("line "), "{:?}", &after[..20]);
    }

    /// Issue 27 item 11's memory: a cut stream holds its kept bytes once while
    /// it is collected and when it is answered (head and tail in one buffer,
    /// the tail a ring), never a second buffer for the tail (it grew to twice
    /// its share before it was trimmed) nor a copy of both.
    #[test]
    fn a_cut_stream_holds_its_kept_bytes_once() {
        let mut s = Stream::new(None);
        let mut most = 0;
        for i in 0..1_000_000 {
            s.push(&format!("line {i}\n"));
            most = most.max(s.text.capacity());
        }
        assert!(most <= MAX_STREAM_BYTES + MARKER_ROOM, "{most}");
        let out = s.finish();
        assert!(
            out.capacity() <= MAX_STREAM_BYTES + MARKER_ROOM,
            "{}",
            out.capacity()
        );
        assert!(out.ends_with("line 999999\n"));
    }

    #[test]
    fn a_stream_is_cut_on_a_character_boundary() {
        let mut s = Stream::new(None);
        s.push(&"x".repeat(HEAD_BYTES - 1));
        s.push("éé");
        s.push(&"ü".repeat(TAIL_BYTES));
        let out = s.finish();
        let head = format!("{}\n[output truncated", "x".repeat(HEAD_BYTES - 1));
        assert!(out.starts_with(&head));
        assert!(
            out.contains("12.6 MB printed"),
            "{}",
            &out[HEAD_BYTES..HEAD_BYTES + 200]
        );
        let tail = &out[out.find("kept]\n").unwrap() + 6..];
        assert_eq!(tail, "ü".repeat(TAIL_BYTES / 2));
    }

    #[test]
    fn a_client_limit_counts_characters_and_adds_no_marker() {
        let mut s = Stream::new(Some(3));
        s.push("é");
        s.push("ü😀ab");
        assert_eq!(s.finish(), "éü😀");
        let mut s = Stream::new(Some(0));
        s.push("abc");
        s.notice("Request timed out\n");
        assert_eq!(s.finish(), "Request timed out\n");
        let mut s = Stream::new(Some(100));
        s.push("short");
        assert_eq!(s.finish(), "short");
    }

    #[test]
    fn images_past_the_budget_are_left_out_with_a_notice() {
        let engine = base64::engine::general_purpose::STANDARD;
        let five_mib = engine.encode(vec![7u8; 5 * 1024 * 1024]);
        let mut run = Run::new(OutputLimits::default());
        for _ in 0..5 {
            run.take_images(&[MediaType::Png(five_mib.clone())]);
        }
        assert_eq!(run.images.len(), 3);
        assert!(run.image_bytes <= MAX_IMAGE_BYTES);
        let exec = run.finish(Instant::now());
        assert_eq!(exec.status, ExecutionStatus::Succeeded);
        assert!(
            exec.stderr
                .contains("[2 image(s) left out by the local pool"),
            "{}",
            exec.stderr
        );
        let mut run = Run::discarding();
        run.take_images(&[MediaType::Png(engine.encode([1u8, 2, 3]))]);
        assert!(run.images.is_empty());
    }

    #[test]
    fn a_huge_value_becomes_its_cut_text() {
        let big = "y".repeat(MAX_RESULT_BYTES + 10);
        let mut run = Run::new(OutputLimits::default());
        run.take_result(&[
            MediaType::Other((VALUE_MIME.into(), serde_json::Value::String(big.clone()))),
            MediaType::Plain(format!("'{big}'")),
        ]);
        let exec = run.finish(Instant::now());
        let value = exec.result.as_ref().map(|v| v.text.as_str()).unwrap();
        assert!(value.len() < MAX_RESULT_BYTES + 200);
        assert!(
            value.ends_with("[result truncated by the local pool: 4.2 MB, the first 4 MiB kept]")
        );
        assert_eq!(
            exec.result.and_then(|v| v.json),
            None,
            "its JSON is too big"
        );
        let mut run = Run::new(OutputLimits::default());
        run.take_result(&[
            MediaType::Other((VALUE_MIME.into(), serde_json::json!([1, 2]))),
            MediaType::Plain("(1, 2)".into()),
        ]);
        let exec = run.finish(Instant::now());
        assert_eq!(
            exec.result,
            Some(ExecutionValue {
                text: "(1, 2)".into(),
                json: Some(serde_json::json!([1, 2]))
            })
        );
        // A value without a JSON type has its text/plain only.
        let mut run = Run::new(OutputLimits::default());
        run.take_result(&[MediaType::Plain("<object at 0x1>".into())]);
        let exec = run.finish(Instant::now());
        assert_eq!(exec.result, Some(ExecutionValue::text("<object at 0x1>")));
    }

    #[tokio::test]
    async fn limits_reach_the_execution_through_a_scope() {
        assert_eq!(OutputLimits::current(), OutputLimits::default());
        let limits = OutputLimits {
            stream_chars: Some(5),
            jupyter: true,
        };
        let seen = limits.scope(async { OutputLimits::current() }).await;
        assert_eq!(seen, limits);
    }
}
