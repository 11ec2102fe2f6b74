//! The per-session resource limits of a local pool, as `serve` flags and the
//! config file set them and pool info reports them; `pool::limits` enforces
//! them (cgroups, rlimits, sized file systems).

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// The limits of one session, set by `serve` flags and the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Memory of the session's processes, bytes (default 2 GiB).
    pub memory_bytes: u64,
    /// Processes and threads of the session (default 512).
    pub processes: u64,
    /// Size of the private `/tmp`, bytes (default 512 MiB).
    pub tmp_bytes: u64,
    /// Largest file the session may write in `/mnt/data`, bytes (default 1 GiB).
    pub file_bytes: u64,
    /// Size of `/mnt/data`, bytes (default 1 GiB), where the pool can give each
    /// session a file system of its own (a sandbox and, without root, user
    /// namespaces; see `data_fs`).
    pub data_bytes: u64,
    /// CPU weight relative to other sessions, 1–10000 (default 100, an equal
    /// share; cgroup v1 `cpu.shares` = weight × 1024 / 100).
    pub cpu_weight: u64,
    /// Most bytes of stdout, and separately of stderr, one execution keeps
    /// (default 8 MiB, `serve --max-stream-bytes`, `[pool] max_stream_bytes`):
    /// a stream cut by it keeps its first and its last half, a marker between
    /// them. Within [`MIN_STREAM_BYTES`]..=[`MAX_STREAM_BYTES`] ([`stream_bytes`]).
    pub stream_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: 2 * GIB,
            processes: 512,
            tmp_bytes: 512 * MIB,
            file_bytes: GIB,
            data_bytes: GIB,
            cpu_weight: 100,
            stream_bytes: 8 * MIB,
        }
    }
}

/// A size for people: `2 GiB`, `512 MiB`, `100 KiB`, `12 bytes`.
pub fn human_bytes(n: u64) -> String {
    if n >= GIB && n.is_multiple_of(GIB / 4) {
        format!("{} GiB", n as f64 / GIB as f64)
    } else if n >= MIB {
        format!("{} MiB", n / MIB)
    } else if n >= 1024 {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} bytes")
    }
}

/// Smallest stream limit [`stream_bytes`] accepts: 1 KiB (room for the marker
/// and a few lines on each side of it).
pub const MIN_STREAM_BYTES: u64 = 1024;

/// Largest stream limit [`stream_bytes`] accepts: 1 GiB. An answer is held
/// about four times while it is recorded and written as JSON, and a stream's
/// tail may briefly hold its whole limit again before it is trimmed, so a
/// larger one could cost the pool gigabytes per cell.
pub const MAX_STREAM_BYTES: u64 = 1024 * MIB;

/// Checks a stream limit (bytes of stdout, and separately of stderr, an
/// execution keeps): `n` when it is within [`MIN_STREAM_BYTES`]..=[`MAX_STREAM_BYTES`].
///
/// # Errors
///
/// A sentence naming the range, for `serve --max-stream-bytes` and the config
/// file's `[pool] max_stream_bytes`.
pub fn stream_bytes(n: u64) -> Result<u64, String> {
    if (MIN_STREAM_BYTES..=MAX_STREAM_BYTES).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "the stream limit must be {} to {}, not {}",
            human_bytes(MIN_STREAM_BYTES),
            human_bytes(MAX_STREAM_BYTES),
            if n == 0 {
                "0".to_string()
            } else {
                human_bytes(n)
            }
        ))
    }
}

/// A stream limit as written in the config file or on the command line (a
/// size like `"8 MiB"`, `"64KiB"` or a number of bytes), checked by
/// [`stream_bytes`] when it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "bytesize::ByteSize")]
pub struct StreamBytes(pub u64);

impl TryFrom<bytesize::ByteSize> for StreamBytes {
    type Error = String;
    fn try_from(size: bytesize::ByteSize) -> Result<Self, String> {
        stream_bytes(size.as_u64()).map(Self)
    }
}

impl std::str::FromStr for StreamBytes {
    type Err = String;
    /// Parses a size (`8MiB`, `64 KiB`, `65536`) and checks its range.
    fn from_str(s: &str) -> Result<Self, String> {
        s.trim().parse::<bytesize::ByteSize>()?.try_into()
    }
}
