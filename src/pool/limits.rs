//! Per-session resource limits of the local pool: memory, processes, file sizes,
//! `/tmp` and a CPU share.
//!
//! Where the pool may create control groups (as root with cgroup v1 or v2, or as a
//! user in the subtree systemd delegates to it on v2; see `cgroup_base`), each
//! kernel runs in a cgroup of its own below one cgroup of the pool
//! (`sessionpad-<pid>-<n>`), which itself is limited to three
//! quarters of the machine's memory so that many sessions together cannot take
//! the machine down. Memory over a session's limit wakes the kernel's OOM killer
//! inside that cgroup only; the pool notices ([`KernelLimits::oom_killed`]),
//! answers Azure's "Execution aborted" and starts a fresh kernel. A fork bomb stops
//! at `pids.max`. Elsewhere rlimits stand in: `RLIMIT_DATA` (heap and private mappings) for memory (a
//! `MemoryError` in Python rather than a killed kernel) and `RLIMIT_NPROC` for
//! processes, set inside the sandbox's user namespace by the sandbox helper
//! so it counts that session's processes only. Every kernel also gets
//! `RLIMIT_FSIZE` (the largest file it may write, bytes), no core files, and a
//! bounded number of open files. The private `/tmp` is a tmpfs of its own size
//! (see `sandbox`). [`Enforcer::report`] says which are in force.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::process::Command;

use super::cgroup::{CONTROLLERS, Cgroup, CgroupLimits, Hierarchy};
use crate::protocol::isolation::Limit;
use crate::protocol::limits::{Limits, human_bytes};

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// The controllers the pool cannot do without (`cpu` is optional: systemd does
/// not always delegate it to users on cgroup v2).
const REQUIRED: &[&str] = &["memory", "pids"];

/// The one fix for a reason the pool has no cgroups, where it is known: cgroup
/// v2 without a subtree delegated to this user (`cgroup_base`), which systemd
/// gives a user service or scope started with `Delegate=yes`.
pub fn cgroup_fix(why: &str) -> Option<&'static str> {
    why.contains("delegated").then_some(
        "start sessionpad in a systemd user scope that delegates cgroups: \
         `systemd-run --user --scope -p Delegate=yes sessionpad serve` (or a user service \
         with `Delegate=yes`)",
    )
}

/// How the pool enforces limits on this machine.
pub struct Enforcer {
    limits: Limits,
    /// The pool's own cgroup when the machine lets the pool create them.
    pool: Option<PoolCgroup>,
    /// Why there is none, when there is none.
    no_cgroups: Option<String>,
    next: AtomicU64,
}

struct PoolCgroup {
    /// The pool's cgroup: `sessionpad-<tag>` at the hierarchy's root, or below
    /// the user's delegated subtree (see `cgroup_base`).
    cgroup: Cgroup,
    /// Where this machine's cgroups are (v1 or v2).
    hier: Hierarchy,
    /// Whether the `cpu` controller is there (kernels get a CPU weight).
    cpu: bool,
}

impl PoolCgroup {
    /// The controllers its kernels' cgroups get.
    fn controllers(&self) -> Vec<&'static str> {
        CONTROLLERS
            .into_iter()
            .filter(|c| self.cpu || *c != "cpu")
            .collect()
    }
}

impl std::fmt::Debug for Enforcer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Enforcer")
            .field("limits", &self.limits)
            .field("cgroup", &self.pool.as_ref().map(|p| p.cgroup.path()))
            .finish_non_exhaustive()
    }
}

/// The memory of this machine in bytes (`/proc/meminfo` `MemTotal`), if known.
fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl Enforcer {
    /// Sets up enforcement for `limits`: the pool's cgroup `name` when possible
    /// (rlimits otherwise; never an error). `name` must be unique among pools
    /// alive on this machine (e.g. `sessionpad-<pid>-<n>`).
    pub fn new(limits: Limits, name: &str) -> Self {
        let (pool, no_cgroups) = match Self::pool_cgroup(name) {
            Ok(p) => (Some(p), None),
            Err(why) => {
                tracing::info!("no cgroups for sessions ({why}); rlimits stand in");
                (None, Some(why))
            }
        };
        Self {
            limits,
            pool,
            no_cgroups,
            next: AtomicU64::new(0),
        }
    }

    /// Why sessions are limited by rlimits rather than cgroups, with the fix
    /// where it is cgroup v2 without a subtree delegated to this user (see
    /// [`cgroup_fix`]); `None` with cgroups.
    pub fn no_cgroups_note(&self) -> Option<String> {
        let why = self.no_cgroups.as_deref()?;
        Some(match cgroup_fix(why) {
            Some(fix) => format!("no cgroups ({why}): rlimits stand in; to fix it, {fix}"),
            None => format!("no cgroups ({why}): rlimits stand in"),
        })
    }

    /// Enforcement by rlimits alone, even where cgroups could be had (for
    /// benchmarks that compare the two).
    pub fn rlimits_only(limits: Limits) -> Self {
        Self {
            limits,
            pool: None,
            no_cgroups: None,
            next: AtomicU64::new(0),
        }
    }

    fn pool_cgroup(name: &str) -> Result<PoolCgroup, String> {
        let hier = Hierarchy::detect();
        let base = super::cgroup_base::base(hier.is_v2())
            .ok_or("no cgroup subtree is delegated to this user (cgroup v2)")?;
        let name = super::cgroup_base::join(&base, name);
        let cgroup = Cgroup::create(&hier, &name, &CONTROLLERS)?;
        // The controllers the pool's cgroup really has: on v2 those its parent
        // enabled for it (a delegation may lack some), on v1 the hierarchies.
        let have = cgroup.controllers();
        // Every required controller must be there, or limits would silently
        // not hold; then all sessions together get three quarters of the
        // machine's memory.
        let capped = match REQUIRED.iter().find(|c| !have.contains(c)) {
            Some(c) => Err(format!("the {c} controller is not available")),
            None => cgroup.set_limits(&CgroupLimits {
                memory_bytes: machine_memory().map(|total| total / 4 * 3),
                ..CgroupLimits::default()
            }),
        };
        if let Err(why) = capped {
            let _ = cgroup.remove();
            return Err(why);
        }
        let cpu = have.contains(&"cpu");
        Ok(PoolCgroup { cgroup, hier, cpu })
    }

    /// The limits being enforced.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Each limit and what enforces it, for the pool's info; `data_fs` is what
    /// gives session folders a size ([`super::data_fs::DataFs::mechanism`]), if
    /// anything does.
    pub fn report(&self, data_fs: Option<&str>) -> Vec<Limit> {
        let l = self.limits;
        let cg = self.pool.as_ref().map(|p| {
            if p.hier.is_v2() {
                "cgroup v2".to_string()
            } else {
                "cgroup v1".to_string()
            }
        });
        let limit = |what: &str, value: String, mechanism: &str| Limit {
            what: what.to_string(),
            value,
            mechanism: mechanism.to_string(),
        };
        let mut out = vec![];
        match &cg {
            Some(m) => {
                out.push(limit("memory", human_bytes(l.memory_bytes), m));
                out.push(limit("processes", l.processes.to_string(), m));
                if self.pool.as_ref().is_some_and(|p| p.cpu) {
                    out.push(limit("cpu", format!("weight {}", l.cpu_weight), m));
                } else {
                    out.push(limit(
                        "cpu",
                        "not limited".to_string(),
                        "no cpu controller delegated",
                    ));
                }
            }
            None => {
                out.push(limit(
                    "memory",
                    format!("{} of data", human_bytes(l.memory_bytes)),
                    "rlimit",
                ));
                out.push(limit("processes", l.processes.to_string(), "rlimit"));
                out.push(limit("cpu", "not limited".to_string(), "no cgroup"));
            }
        }
        out.push(limit("/tmp", human_bytes(l.tmp_bytes), "tmpfs"));
        if let Some(mechanism) = data_fs {
            // A tmpfs page is charged to the cgroup of the process that writes it.
            let counted = if cg.is_some() {
                "counted in the session's memory"
            } else {
                "held in memory"
            };
            out.push(limit(
                "/mnt/data",
                format!("{}, {counted}", human_bytes(l.data_bytes)),
                mechanism,
            ));
        } else {
            out.push(limit(
                "/mnt/data",
                "not limited in total (no sandbox, or no user namespace to give it a size)"
                    .to_string(),
                "none",
            ));
        }
        out.push(limit(
            "file size",
            format!("{} per file", human_bytes(l.file_bytes)),
            "rlimit",
        ));
        out.push(limit("output", stream_limit(l.stream_bytes), "local pool"));
        // What all sessions may hold together: the pool's cgroup caps them;
        // without one nothing does, and people should know it.
        match (&cg, machine_memory()) {
            (Some(m), Some(total)) => out.push(limit(
                "all sessions",
                format!(
                    "{:.1} GiB of memory together (three quarters of this machine)",
                    (total / 4 * 3) as f64 / GIB as f64
                ),
                m,
            )),
            (Some(m), None) => out.push(limit("all sessions", "not bounded together".into(), m)),
            (None, _) => {
                let data = if data_fs.is_some() { l.data_bytes } else { 0 };
                out.push(limit(
                    "all sessions",
                    format!(
                        "not bounded together: each may hold {} in memory",
                        human_bytes(l.memory_bytes + l.tmp_bytes + data)
                    ),
                    "no cgroup",
                ));
            }
        }
        out
    }

    /// Prepares the limits of one kernel: its cgroup (created now) and the rlimits
    /// its process gets. Apply them with [`KernelLimits::apply_to`] before the
    /// spawn and keep the value as long as the kernel runs.
    ///
    /// # Errors
    ///
    /// The kernel's cgroup cannot be created (the machine's cgroups changed
    /// under the pool); the text says why.
    pub fn prepare(&self) -> Result<KernelLimits, String> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut kernel = KernelLimits {
            limits: self.limits,
            cgroup: None,
            procs: Vec::new(),
        };
        let Some(pool) = &self.pool else {
            return Ok(kernel);
        };
        let path = format!("{}/k{n}", pool.cgroup.path());
        let limits = CgroupLimits {
            memory_bytes: Some(self.limits.memory_bytes),
            swap_bytes: Some(self.limits.memory_bytes),
            processes: Some(self.limits.processes),
            cpu_weight: pool.cpu.then_some(self.limits.cpu_weight.clamp(1, 10_000)),
        };
        let cgroup = Cgroup::create(&pool.hier, &path, &pool.controllers())
            .map_err(|e| format!("cannot create the kernel's cgroup: {e}"))?;
        // A cgroup without its limits, or that the kernel cannot join, goes.
        match cgroup
            .set_limits(&limits)
            .and_then(|()| cgroup.open_procs())
        {
            Ok(procs) => kernel.procs = procs,
            Err(e) => {
                let _ = cgroup.remove();
                return Err(format!("cannot create the kernel's cgroup: {e}"));
            }
        }
        kernel.cgroup = Some(cgroup);
        Ok(kernel)
    }

    /// Removes the pool's cgroup and whatever kernel cgroups are left in it,
    /// retrying for up to 2 s while killed kernels are reaped. Blocking; for the
    /// end of a pool.
    pub fn close(&self) {
        let Some(pool) = &self.pool else { return };
        for _ in 0..80 {
            if super::housekeeping::remove_cgroup_tree(&pool.hier, pool.cgroup.path()) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        tracing::warn!("could not remove the pool's cgroup {}", pool.cgroup.path());
    }

    /// Whether limits are enforced by cgroups (else rlimits).
    pub fn uses_cgroups(&self) -> bool {
        self.pool.is_some()
    }
}

impl Drop for Enforcer {
    /// Removes the pool's cgroup if [`Enforcer::close`] has not, with a few
    /// quick retries (10 to 80 ms apart) while its last processes are reaped.
    fn drop(&mut self) {
        if let Some(pool) = &self.pool {
            for ms in [10, 20, 40, 80] {
                if pool.cgroup.remove().is_ok() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            let _ = pool.cgroup.remove();
        }
    }
}

/// The limits of one kernel: its cgroup (removed when this is dropped) and
/// rlimits.
pub struct KernelLimits {
    limits: Limits,
    cgroup: Option<Cgroup>,
    /// `cgroup.procs` of each hierarchy of the kernel's cgroup, opened for writing.
    procs: Vec<OwnedFd>,
}

impl std::fmt::Debug for KernelLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelLimits")
            .field("limits", &self.limits)
            .field("cgroup", &self.cgroup.as_ref().map(Cgroup::path))
            .finish_non_exhaustive()
    }
}

impl KernelLimits {
    /// Makes the command's process join the kernel's cgroup and take its rlimits
    /// before it executes (so nothing it starts escapes them). Keep `self` alive
    /// until the command is spawned.
    pub fn apply_to(&self, cmd: &mut Command) {
        let procs: Vec<i32> = self.procs.iter().map(AsRawFd::as_raw_fd).collect();
        let l = self.limits;
        let memory = self.cgroup.is_none().then_some(l.memory_bytes);
        // SAFETY: write(2) and setrlimit(2) are async-signal-safe; the closure
        // allocates nothing and touches only fds kept open until the spawn.
        unsafe {
            cmd.pre_exec(move || {
                for &fd in &procs {
                    // "0" is the writing process itself (cgroup v1 and v2).
                    if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                set_rlimit(libc::RLIMIT_CORE, 0)?;
                set_rlimit(libc::RLIMIT_FSIZE, l.file_bytes)?;
                set_rlimit(libc::RLIMIT_NOFILE, 4096)?;
                if let Some(bytes) = memory {
                    set_rlimit(libc::RLIMIT_DATA, bytes)?;
                }
                Ok(())
            });
        }
    }

    /// The `RLIMIT_NPROC` the sandbox sets inside its user namespace (only when
    /// no cgroup limits processes); `None` otherwise.
    pub fn nproc(&self) -> Option<u64> {
        self.cgroup.is_none().then_some(self.limits.processes)
    }

    /// Whether the OOM killer has killed a process of this kernel's cgroup (the
    /// session went over its memory limit). False without a cgroup.
    pub fn oom_killed(&self) -> bool {
        self.cgroup
            .as_ref()
            .is_some_and(|cg| cg.oom_kills().is_ok_and(|n| n > 0))
    }

    /// Whether a process of this kernel was refused because the session reached
    /// its process limit (cgroup `pids.events`), e.g. a fork bomb. Without a cgroup:
    /// whether the kernel's process tree (`tree_size`, counted by the caller) is
    /// within a few of the limit.
    pub fn hit_process_limit(&self, tree_size: impl FnOnce() -> usize) -> bool {
        match &self.cgroup {
            Some(cg) => cg.process_limit_hits().is_ok_and(|n| n > 0),
            None => {
                let n = u64::try_from(tree_size()).unwrap_or(u64::MAX);
                n + 8 >= self.limits.processes
            }
        }
    }

    /// The process limit.
    pub fn processes(&self) -> u64 {
        self.limits.processes
    }

    /// The memory limit, bytes.
    pub fn memory_bytes(&self) -> u64 {
        self.limits.memory_bytes
    }

    /// Bytes of stdout, and separately of stderr, one execution keeps
    /// ([`Limits::stream_bytes`]).
    pub fn stream_bytes(&self) -> usize {
        usize::try_from(self.limits.stream_bytes).unwrap_or(usize::MAX)
    }
}

impl Drop for KernelLimits {
    /// Removes the kernel's cgroup once its processes are gone (they are killed
    /// with the kernel; a few retries cover the moments until they are reaped).
    fn drop(&mut self) {
        self.procs.clear();
        if let Some(cg) = self.cgroup.take() {
            std::thread::spawn(move || {
                for _ in 0..100 {
                    cg.kill_all();
                    if cg.remove().is_ok() && !cg.exists() {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                tracing::warn!("could not remove the kernel's cgroup {}", cg.path());
            });
        }
    }
}

fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: `lim` is a valid rlimit.
    if unsafe { libc::setrlimit(resource, &raw const lim) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The stream limit as pool info shows it: `8 MiB per stream (stdout, stderr);
/// a longer one keeps its first and last 4 MiB`.
fn stream_limit(n: u64) -> String {
    let exact = |n: u64| {
        if n >= MIB && n.is_multiple_of(MIB) {
            format!("{} MiB", n / MIB)
        } else if n >= 1024 && n.is_multiple_of(1024) {
            format!("{} KiB", n / 1024)
        } else {
            format!("{n} bytes")
        }
    };
    let head = n / 2;
    let tail = n - head;
    let kept = if head == tail {
        format!("its first and last {}", exact(head))
    } else {
        format!("its first {} and last {}", exact(head), exact(tail))
    };
    format!(
        "{} per stream (stdout, stderr); a longer one keeps {kept}",
        exact(n)
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn cgroup_v2_without_delegation_gets_its_fix() {
        let fix = cgroup_fix("no cgroup subtree is delegated to this user (cgroup v2)").unwrap();
        assert!(
            fix.contains("systemd-run --user --scope -p Delegate=yes"),
            "{fix}"
        );
        assert_eq!(cgroup_fix("permission denied"), None);
        let mut enforcer = Enforcer::rlimits_only(Limits::default());
        enforcer.no_cgroups =
            Some("no cgroup subtree is delegated to this user (cgroup v2)".into());
        let note = enforcer.no_cgroups_note().unwrap();
        assert!(
            note.starts_with("no cgroups (no cgroup subtree is delegated"),
            "{note}"
        );
        assert!(note.contains("to fix it, start sessionpad"), "{note}");
        assert_eq!(
            Enforcer::rlimits_only(Limits::default()).no_cgroups_note(),
            None
        );
    }

    use super::*;

    #[test]
    fn a_kernels_cgroup_holds_its_limits_where_the_pool_has_cgroups() {
        let limits = Limits {
            memory_bytes: 256 * MIB,
            processes: 64,
            cpu_weight: 50,
            ..Limits::default()
        };
        let name = format!("sessionpad-{}", super::super::housekeeping::pool_tag());
        let enforcer = Enforcer::new(limits, &name);
        let Some(pool) = &enforcer.pool else {
            eprintln!("skipped: no cgroups here ({:?})", enforcer.no_cgroups);
            return;
        };
        let kernel = enforcer.prepare().unwrap();
        let path = kernel.cgroup.as_ref().unwrap().path().to_string();
        assert_eq!(path, format!("{name}/k0"));
        let read = |controller: &str, file: &str| {
            let dir = match &pool.hier {
                Hierarchy::V2(mount) => mount.clone(),
                Hierarchy::V1(mounts) => mounts
                    .iter()
                    .find(|(c, _)| *c == controller)
                    .unwrap()
                    .1
                    .clone(),
            };
            std::fs::read_to_string(dir.join(&path).join(file))
                .unwrap()
                .trim()
                .to_string()
        };
        let bytes = (256 * MIB).to_string();
        if pool.hier.is_v2() {
            assert_eq!(read("memory", "memory.max"), bytes);
            assert_eq!(read("pids", "pids.max"), "64");
            if pool.cpu {
                assert_eq!(read("cpu", "cpu.weight"), "50");
            }
        } else {
            assert_eq!(read("memory", "memory.limit_in_bytes"), bytes);
            assert_eq!(read("pids", "pids.max"), "64");
            if pool.cpu {
                assert_eq!(read("cpu", "cpu.shares"), "512");
            }
        }
        assert_eq!(kernel.procs.len(), pool.cgroup.open_procs().unwrap().len());
        assert!(!kernel.oom_killed());
        assert!(!kernel.hit_process_limit(|| 0));
        assert_eq!(kernel.nproc(), None, "no RLIMIT_NPROC with a cgroup");
        drop(kernel);
        enforcer.close();
        assert!(!pool.cgroup.exists());
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(2 * GIB), "2 GiB");
        assert_eq!(human_bytes(GIB + GIB / 2), "1.5 GiB");
        assert_eq!(human_bytes(512 * MIB), "512 MiB");
        assert_eq!(human_bytes(2048), "2 KiB");
    }

    #[test]
    fn the_report_names_a_mechanism_for_every_limit() {
        let e = Enforcer {
            limits: Limits::default(),
            pool: None,
            no_cgroups: None,
            next: AtomicU64::new(0),
        };
        let report = e.report(None);
        assert!(report.iter().all(|l| !l.mechanism.is_empty()));
        assert!(
            report
                .iter()
                .any(|l| l.what == "memory" && l.mechanism == "rlimit")
        );
        // Without a cgroup, the info says that sessions together are not bounded,
        // and what each may hold: memory, /tmp and a /mnt/data tmpfs.
        let together = |data_fs| {
            e.report(data_fs)
                .into_iter()
                .find(|l| l.what == "all sessions")
                .map(|l| l.value)
        };
        assert_eq!(
            together(Some("tmpfs in the pool's user namespace")).as_deref(),
            Some("not bounded together: each may hold 3.5 GiB in memory")
        );
        assert_eq!(
            together(None).as_deref(),
            Some("not bounded together: each may hold 2.5 GiB in memory")
        );
    }
}
