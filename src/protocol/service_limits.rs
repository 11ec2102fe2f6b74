//! The service's documented and measured limits that a local pool emulates with
//! `serve --azure-limits` (or `[pool] azure_limits = true`), each with its
//! source, and how the front ends tell a stream the service probably cut.
//!
//! The pool reports the limits in force in its `GET metadata` document as
//! `sessionpadServiceLimits` (a field of sessionpad's own next to the
//! service's, like `sessionpadIsolation`); `pool info` shows them.

use serde::{Deserialize, Serialize};

use super::ContainerType;

/// The name of the field of the local pool's `GET metadata` document (`aca-api.md`
/// §4.4) that holds the [`ServiceLimit`]s it emulates; Azure's pools do not
/// send it, nor does a local pool without `--azure-limits`.
pub const METADATA_FIELD: &str = "sessionpadServiceLimits";

/// Bytes a Shell pool keeps of each of stdout and stderr; the answer's
/// `status` is still the exit code (`"0"`). Measured on the service by
/// LangChain's langchain-azure-compute Shell backend (langchain-azure PR #909,
/// quoted in issue 28); the 2025-10-02-preview spec's `outputStreamsMaxLength`
/// default is the same 4096 (`aca-api.md` §7, §13).
pub const SHELL_STREAM_BYTES: usize = 4096;

/// Longest execution on the service, seconds: 220 (`aca-api.md` §3.1, §7).
pub const MAX_EXECUTION_SECS: u64 = 220;

/// Largest upload on the service, bytes: 128 MiB, 413 above (`aca-api.md` §3.2, §7).
pub const MAX_UPLOAD_BYTES: u64 = 128 * 1024 * 1024;

/// The service's default cooldown, seconds (`aca-api.md` §4.7, §7: 300–3600).
pub const COOLDOWN_SECS: u64 = 300;

/// The status the service answers a new session beyond the pool's maximum
/// with: 429, as seen on a pool at `--max-sessions` (`aca-api.md` §6.2, KR;
/// the docs say 404, see the conflict noted there).
pub const POOL_FULL_STATUS: u16 = 429;

/// One limit of the service that the local pool emulates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceLimit {
    /// What is limited, e.g. `Shell stdout/stderr`, `execution`, `upload`.
    pub what: String,
    /// How much and what the client gets, for people, e.g. `4,096 bytes each,
    /// status still "0"`.
    pub value: String,
    /// Where the value comes from, e.g. `aca-api.md §7 (MS docs, KR lab)`.
    pub source: String,
}

impl ServiceLimit {
    fn new(what: &str, value: String, source: &str) -> Self {
        Self {
            what: what.to_string(),
            value,
            source: source.to_string(),
        }
    }
}

/// The pool's settings that the emulated limits report.
#[derive(Debug, Clone, Copy)]
pub struct Emulated {
    /// What the pool runs (the Shell stream cut applies to Shell pools only).
    pub container_type: ContainerType,
    /// Longest execution, seconds.
    pub max_execution_secs: u64,
    /// The cooldown, seconds.
    pub cooldown_secs: u64,
    /// Most sessions at once.
    pub max_sessions: usize,
    /// Status of a new session beyond them.
    pub pool_full_status: u16,
    /// Largest upload, bytes.
    pub max_upload: u64,
}

impl Emulated {
    /// The limits in force, one per row of `docs/local-pool.md`'s table.
    #[must_use]
    pub fn limits(&self) -> Vec<ServiceLimit> {
        let mut out = Vec::new();
        if self.container_type == ContainerType::Shell {
            out.push(ServiceLimit::new(
                "Shell stdout/stderr",
                format!("cut at {SHELL_STREAM_BYTES} bytes each, status still the exit code"),
                "measured on the service by langchain-azure-compute (langchain-azure PR #909); \
                 aca-api.md §13",
            ));
        }
        out.push(ServiceLimit::new(
            "execution",
            format!(
                "ends at {} s: status Failed, \"Request timed out waiting for code execution to \
                 complete\"",
                self.max_execution_secs
            ),
            "aca-api.md §3.1, §6.3, §7 (MS docs, KR lab)",
        ));
        out.push(ServiceLimit::new(
            "upload",
            format!(
                "over {} refused: 413 FileTooLarge",
                super::limits::human_bytes(self.max_upload)
            ),
            "aca-api.md §3.2, §7 (MS docs, KR lab; the error body is not documented)",
        ));
        out.push(ServiceLimit::new(
            "cooldown",
            format!(
                "sessions end {} s after their last call",
                self.cooldown_secs
            ),
            "aca-api.md §5.1, §7 (MS docs: 300-3600 s, default 300)",
        ));
        out.push(ServiceLimit::new(
            "sessions",
            format!(
                "at most {}; a new one beyond: {} SessionPoolFull",
                self.max_sessions, self.pool_full_status
            ),
            "aca-api.md §6.2 (KR lab: 429 at --max-sessions)",
        ));
        out
    }
}

/// The note under a stream that the service probably cut, `None` when it
/// looks complete. `stream` is `stdout` or `stderr`, `len_bytes` its length
/// in UTF-8 bytes and `len_chars` in characters; `shell` whether it came from
/// a Shell pool (which cuts at [`SHELL_STREAM_BYTES`] bytes, the last
/// character whole, so 4,093 to 4,096 bytes); `sent_max` the
/// `outputStreamsMaxLength` in force (2025-10-02-preview: the one the request
/// sent, else the service's default of 4096), a cut at exactly that many
/// characters.
#[must_use]
pub fn cut_note(
    stream: &str,
    len_bytes: usize,
    len_chars: usize,
    shell: bool,
    sent_max: Option<u64>,
) -> Option<String> {
    if shell && (SHELL_STREAM_BYTES - 3..=SHELL_STREAM_BYTES).contains(&len_bytes) {
        return Some(format!(
            "{stream} is {} bytes: the service cuts Shell output at {}, so it is probably cut",
            thousands(len_bytes),
            thousands(SHELL_STREAM_BYTES)
        ));
    }
    match sent_max {
        Some(max) if max > 0 && len_chars as u64 == max => Some(format!(
            "{stream} is {} characters, the service's outputStreamsMaxLength: it is probably cut",
            thousands(max)
        )),
        _ => None,
    }
}

/// `s` cut to at most `max` bytes at a character boundary (so 4,093 to 4,096
/// bytes of a longer UTF-8 stream): the Shell pool's cut of each stream.
#[must_use]
pub fn cut_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A whole number with a comma every three digits, as the notes here quote
/// figures: `1234567` as `1,234,567` (any integer type; a leading `-` is
/// kept). The notebook's and the pager's counts use it too.
pub fn thousands(n: impl std::fmt::Display) -> String {
    let text = n.to_string();
    let (sign, digits) = text.split_at(usize::from(text.starts_with('-')));
    let mut out = String::with_capacity(text.len() + digits.len() / 3);
    out.push_str(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_services_documented_values() {
        assert_eq!(MAX_UPLOAD_BYTES, 128 * 1024 * 1024);
        assert_eq!(MAX_EXECUTION_SECS, 220);
        assert_eq!(SHELL_STREAM_BYTES, 4096);
        assert_eq!(COOLDOWN_SECS, 300);
        assert_eq!(POOL_FULL_STATUS, 429);
    }

    #[test]
    fn the_shell_cut_keeps_whole_characters() {
        let long = "é".repeat(3000);
        let cut = cut_bytes(&long, SHELL_STREAM_BYTES);
        assert_eq!(cut.len(), 4096);
        let odd = format!("x{long}");
        assert_eq!(cut_bytes(&odd, SHELL_STREAM_BYTES).len(), 4095);
        assert_eq!(cut_bytes("short", SHELL_STREAM_BYTES), "short");
    }

    #[test]
    fn a_stream_at_a_cap_is_flagged_and_others_are_not() {
        let note = cut_note("stdout", 4096, 4096, true, None).unwrap();
        assert!(note.starts_with("stdout is 4,096 bytes"), "{note}");
        assert!(cut_note("stderr", 4093, 4000, true, None).is_some());
        assert!(cut_note("stdout", 4092, 4092, true, None).is_none());
        assert!(cut_note("stdout", 4097, 4097, true, None).is_none());
        assert!(cut_note("stdout", 4096, 4096, false, None).is_none());
        assert!(cut_note("stdout", 9000, 8000, false, Some(8000)).is_some());
        assert!(cut_note("stdout", 10, 10, false, Some(8000)).is_none());
    }

    #[test]
    fn shell_pools_list_the_stream_cut_and_others_do_not() {
        let mut e = Emulated {
            container_type: ContainerType::Shell,
            max_execution_secs: 220,
            cooldown_secs: 300,
            max_sessions: 100,
            pool_full_status: 429,
            max_upload: MAX_UPLOAD_BYTES,
        };
        let shell = e.limits();
        assert_eq!(shell.len(), 5);
        assert!(shell[0].value.contains("4096 bytes"));
        assert!(shell.iter().all(|l| !l.source.is_empty()));
        e.container_type = ContainerType::PythonLts;
        assert_eq!(e.limits().len(), 4);
    }
}
