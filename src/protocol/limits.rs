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
