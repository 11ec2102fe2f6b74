//! A cgroup of the local pool's, by plain reads and writes in the cgroup file
//! system, cgroup v1 or v2: created with its limits, joined through its
//! `cgroup.procs` files, its events read, its processes killed, removed.
//!
//! The pool uses three controllers ([`CONTROLLERS`]). On cgroup v2 they share
//! one hierarchy at `/sys/fs/cgroup`, and a controller reaches a cgroup only
//! when every ancestor lists it in `cgroup.subtree_control`. On cgroup v1 each
//! controller has a hierarchy of its own (`/sys/fs/cgroup/memory`, …, found in
//! `/proc/self/mountinfo`), and a cgroup is one folder in each of them. A
//! hybrid machine (v1 controllers beside an empty v2 hierarchy at
//! `/sys/fs/cgroup/unified`) counts as v1.
//!
//! The files written, and their order, are those the `cgroups-rs` crate (0.5)
//! wrote before (see [`Cgroup::create`] and [`Cgroup::set_limits`]), except
//! that a memory limit that cannot be written is an error (cgroups-rs went on
//! without it), and that cgroup v2's OOM kills are read from `memory.events`
//! (cgroups-rs always said none there).

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::cgroup_base::V2_MOUNT;

/// The controllers of the pool's cgroups: `memory`, `pids` and `cpu`.
pub const CONTROLLERS: [&str; 3] = ["memory", "pids", "cpu"];

/// The file system type of cgroup v2 (`CGROUP2_SUPER_MAGIC`, `statfs(2)`).
const CGROUP2_SUPER_MAGIC: i128 = 0x6367_7270;

/// The largest number the kernel takes for a memory limit, bytes (`i64::MAX`;
/// a larger limit is written as this).
const MAX_BYTES: u64 = i64::MAX.unsigned_abs();

/// Where this machine's cgroups are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hierarchy {
    /// cgroup v2: one hierarchy for every controller, mounted at this folder.
    V2(PathBuf),
    /// cgroup v1: the mount point of the hierarchy of each of [`CONTROLLERS`]
    /// that is mounted (`cpu` may share one with `cpuacct`).
    V1(Vec<(&'static str, PathBuf)>),
}

impl Hierarchy {
    /// This machine's: cgroup v2 when `/sys/fs/cgroup` is a cgroup2 file
    /// system, else the cgroup v1 hierarchies that `/proc/self/mountinfo` lists
    /// (none when it cannot be read; creating a cgroup then finds no controller).
    pub fn detect() -> Self {
        let mount = Path::new(V2_MOUNT);
        if rustix::fs::statfs(mount).is_ok_and(|s| i128::from(s.f_type) == CGROUP2_SUPER_MAGIC) {
            return Self::V2(mount.to_path_buf());
        }
        let info = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        Self::V1(v1_mounts(&info))
    }

    /// Whether this is cgroup v2.
    pub fn is_v2(&self) -> bool {
        matches!(self, Self::V2(_))
    }

    /// The root folder of each hierarchy the pool's cgroups live in (one on v2),
    /// where the pools' own cgroups are (or below a delegated subtree of it).
    pub fn roots(&self) -> Vec<PathBuf> {
        match self {
            Self::V2(mount) => vec![mount.clone()],
            Self::V1(mounts) => {
                let mut roots: Vec<PathBuf> = mounts.iter().map(|(_, p)| p.clone()).collect();
                roots.sort();
                roots.dedup();
                roots
            }
        }
    }
}

/// The mount point of each of [`CONTROLLERS`] that `mountinfo` (the text of
/// `/proc/self/mountinfo`) has a cgroup v1 hierarchy for: the first line of
/// file system type `cgroup` whose super options name the controller.
fn v1_mounts(mountinfo: &str) -> Vec<(&'static str, PathBuf)> {
    CONTROLLERS
        .iter()
        .filter_map(|&controller| {
            mountinfo.lines().find_map(|line| {
                let (fields, fs) = line.split_once(" - ")?;
                let mut fs = fs.split(' ');
                let fs_type = fs.next()?;
                let options = fs.nth(1)?;
                let is_v1 = fs_type == "cgroup" || fs_type.starts_with("cgroup.");
                if !is_v1 || !options.split(',').any(|o| o == controller) {
                    return None;
                }
                let point = fields.split(' ').nth(4)?;
                let point = super::housekeeping::unescape_mount_path(point);
                Some((controller, PathBuf::from(point)))
            })
        })
        .collect()
}

/// The limits [`Cgroup::set_limits`] writes; `None` leaves one as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CgroupLimits {
    /// Memory of the cgroup's processes, bytes: `memory.limit_in_bytes` (v1),
    /// `memory.max` (v2).
    pub memory_bytes: Option<u64>,
    /// Swap, bytes: `memory.memsw.limit_in_bytes` (v1: memory and swap
    /// together), `memory.swap.max` (v2: swap alone, on top of the memory
    /// limit). Skipped where the file does not exist (no swap accounting).
    pub swap_bytes: Option<u64>,
    /// Processes and threads: `pids.max`.
    pub processes: Option<u64>,
    /// CPU weight, 1–10000 (100 is an equal share): `cpu.weight` (v2), or
    /// `cpu.shares` = weight × 1024 / 100, at least 2 (v1).
    pub cpu_weight: Option<u64>,
}

/// One cgroup: its path in the hierarchy and the controllers it has. A value
/// names the cgroup; it does not hold it open, and the cgroup may not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup {
    hier: Hierarchy,
    /// Relative to the root of the hierarchy, no leading `/` (e.g.
    /// `sessionpad-<tag>/k0`).
    path: String,
    /// Which of [`CONTROLLERS`] it has (on v1, the hierarchies it is in).
    controllers: Vec<&'static str>,
}

impl Cgroup {
    /// The cgroup `path` (relative to the root of `hier`) with all of
    /// [`CONTROLLERS`], for reading and removing a cgroup that may exist.
    pub fn open(hier: &Hierarchy, path: &str) -> Self {
        Self {
            hier: hier.clone(),
            path: path.trim_matches('/').to_string(),
            controllers: CONTROLLERS.to_vec(),
        }
    }

    /// Creates the cgroup `path` (relative to the root of `hier`; its missing
    /// ancestors too, and existing folders are fine) for `controllers`.
    ///
    /// On v2: every one of `controllers` must be in the root's
    /// `cgroup.controllers`; `+<controller>` is written to
    /// `cgroup.subtree_control` of the root and of each ancestor, one controller
    /// at a time, failures ignored (a user may not write above its delegated
    /// subtree, and a controller may not be delegated: see
    /// [`Cgroup::controllers`] for what the cgroup got); then each folder of the
    /// path is made. On v1: the folder is made in the hierarchy of each of
    /// `controllers` that is mounted (the others are left out).
    ///
    /// # Errors
    ///
    /// A controller the v2 root lacks, or a folder that cannot be made (the
    /// text names it and says why, e.g. permission denied to a user on v1).
    pub fn create(
        hier: &Hierarchy,
        path: &str,
        controllers: &[&'static str],
    ) -> Result<Self, String> {
        let cgroup = Self {
            hier: hier.clone(),
            path: path.trim_matches('/').to_string(),
            controllers: controllers.to_vec(),
        };
        match hier {
            Hierarchy::V2(mount) => {
                let file = mount.join("cgroup.controllers");
                let text = fs::read_to_string(&file)
                    .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
                let available: Vec<&str> = text.split_whitespace().collect();
                if let Some(c) = controllers.iter().find(|c| !available.contains(c)) {
                    return Err(format!("the {c} controller is not in {}", file.display()));
                }
                let enable = |dir: &Path| {
                    let file = dir.join("cgroup.subtree_control");
                    for c in controllers {
                        // Ignored, as said above.
                        let _ = write(&file, &format!("+{c}"));
                    }
                };
                enable(mount);
                let parts: Vec<&str> = cgroup.path.split('/').collect();
                let mut dir = mount.clone();
                for (i, part) in parts.iter().enumerate() {
                    dir.push(part);
                    make_dir(&dir)?;
                    if i + 1 < parts.len() {
                        enable(&dir);
                    }
                }
            }
            Hierarchy::V1(_) => {
                for dir in cgroup.dirs() {
                    make_dir(&dir)?;
                }
            }
        }
        Ok(cgroup)
    }

    /// Its path relative to the root of the hierarchy.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The cgroup `name` below this one (not created), with the same controllers.
    pub fn child(&self, name: &str) -> Self {
        Self {
            hier: self.hier.clone(),
            path: format!("{}/{name}", self.path),
            controllers: self.controllers.clone(),
        }
    }

    /// Its folder in each hierarchy it is in: one on v2; on v1 one for each of
    /// its controllers that is mounted, once per mount, sorted.
    fn dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = match &self.hier {
            Hierarchy::V2(mount) => vec![mount.join(&self.path)],
            Hierarchy::V1(mounts) => mounts
                .iter()
                .filter(|(c, _)| self.controllers.contains(c))
                .map(|(_, point)| point.join(&self.path))
                .collect(),
        };
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// The path of its interface file `name` of `controller`.
    ///
    /// # Errors
    ///
    /// On v1, the controller's hierarchy is not mounted.
    fn file(&self, controller: &str, name: &str) -> Result<PathBuf, String> {
        match &self.hier {
            Hierarchy::V2(mount) => Ok(mount.join(&self.path).join(name)),
            Hierarchy::V1(mounts) => mounts
                .iter()
                .find(|(c, _)| *c == controller)
                .map(|(_, point)| point.join(&self.path).join(name))
                .ok_or_else(|| format!("no cgroup v1 hierarchy of the {controller} controller")),
        }
    }

    /// The controllers it really has, of those asked for: on v2 those in its
    /// `cgroup.controllers` (the ones its parent enabled for it; none when the
    /// file cannot be read), on v1 those whose hierarchy is mounted.
    pub fn controllers(&self) -> Vec<&'static str> {
        match &self.hier {
            Hierarchy::V2(mount) => {
                let text = fs::read_to_string(mount.join(&self.path).join("cgroup.controllers"))
                    .unwrap_or_default();
                let have: Vec<&str> = text.split_whitespace().collect();
                self.controllers
                    .iter()
                    .copied()
                    .filter(|c| have.contains(c))
                    .collect()
            }
            Hierarchy::V1(mounts) => self
                .controllers
                .iter()
                .copied()
                .filter(|c| mounts.iter().any(|(m, _)| m == c))
                .collect(),
        }
    }

    /// Writes `limits` in this order: memory, swap, processes, CPU weight (the
    /// files are named in [`CgroupLimits`]). Processes and CPU weight are read
    /// back and must hold what was written.
    ///
    /// # Errors
    ///
    /// A file that cannot be written (which, the value and why), or a value that
    /// does not read back as written.
    pub fn set_limits(&self, limits: &CgroupLimits) -> Result<(), String> {
        let v2 = self.hier.is_v2();
        if let Some(bytes) = limits.memory_bytes {
            let name = if v2 {
                "memory.max"
            } else {
                "memory.limit_in_bytes"
            };
            write(
                &self.file("memory", name)?,
                &bytes.min(MAX_BYTES).to_string(),
            )?;
        }
        if let Some(bytes) = limits.swap_bytes {
            let name = if v2 {
                "memory.swap.max"
            } else {
                "memory.memsw.limit_in_bytes"
            };
            let file = self.file("memory", name)?;
            if file.exists() {
                write(&file, &bytes.min(MAX_BYTES).to_string())?;
            }
        }
        if let Some(n) = limits.processes {
            write_checked(&self.file("pids", "pids.max")?, n)?;
        }
        if let Some(weight) = limits.cpu_weight {
            if v2 {
                write_checked(&self.file("cpu", "cpu.weight")?, weight)?;
            } else {
                let shares = (weight.saturating_mul(1024) / 100).max(2);
                write_checked(&self.file("cpu", "cpu.shares")?, shares)?;
            }
        }
        Ok(())
    }

    /// Its `cgroup.procs` files, one per hierarchy, opened for writing: a
    /// process that writes `0` to each joins the cgroup (see
    /// [`super::limits::KernelLimits::apply_to`]).
    ///
    /// # Errors
    ///
    /// A file that cannot be opened (which and why).
    pub fn open_procs(&self) -> Result<Vec<OwnedFd>, String> {
        self.dirs()
            .into_iter()
            .map(|dir| {
                let file = dir.join("cgroup.procs");
                OpenOptions::new()
                    .write(true)
                    .open(&file)
                    .map(OwnedFd::from)
                    .map_err(|e| format!("cannot open {}: {e}", file.display()))
            })
            .collect()
    }

    /// How many of its processes the OOM killer has killed: `oom_kill` of
    /// `memory.oom_control` (v1) or `memory.events` (v2); 0 where the kernel does
    /// not count them (v1 before Linux 4.13).
    ///
    /// # Errors
    ///
    /// The file cannot be read (which and why).
    pub fn oom_kills(&self) -> Result<u64, String> {
        let name = if self.hier.is_v2() {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        Ok(keyed(&read(&self.file("memory", name)?)?, "oom_kill").unwrap_or(0))
    }

    /// How many times a new process or thread was refused because the cgroup
    /// was at `pids.max`: `max` of `pids.events` (v1 and v2).
    ///
    /// # Errors
    ///
    /// The file cannot be read, or has no count (which file and why).
    pub fn process_limit_hits(&self) -> Result<u64, String> {
        let file = self.file("pids", "pids.events")?;
        keyed(&read(&file)?, "max").ok_or_else(|| format!("no max count in {}", file.display()))
    }

    /// The processes in it (`cgroup.procs` of each hierarchy, together), sorted;
    /// none where it does not exist.
    pub fn procs(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .dirs()
            .iter()
            .filter_map(|dir| fs::read_to_string(dir.join("cgroup.procs")).ok())
            .flat_map(|text| {
                text.lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect::<Vec<u32>>()
            })
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// SIGKILLs every process in it. Never a pid of 0 or 1 (which `kill` would
    /// take as this process group or init) nor this process, whatever the file
    /// held.
    pub fn kill_all(&self) {
        for pid in self.procs() {
            if pid > 1
                && pid != std::process::id()
                && let Ok(pid) = libc::pid_t::try_from(pid)
            {
                // SAFETY: kill(2) has no memory effects; these are processes of
                // a session cgroup.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }

    /// The cgroups directly below it (kernels' cgroups below a pool's), by name,
    /// across its hierarchies.
    pub fn children(&self) -> Vec<Self> {
        let mut names: Vec<String> = Vec::new();
        for dir in self.dirs() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir())
                    && let Ok(name) = e.file_name().into_string()
                    && !names.contains(&name)
                {
                    names.push(name);
                }
            }
        }
        names.iter().map(|n| self.child(n)).collect()
    }

    /// Removes it from each hierarchy, the cgroups below it first (`rmdir`; the
    /// kernel refuses while a process is in one). Done where it does not exist.
    /// One try: call again while killed processes are being reaped.
    ///
    /// # Errors
    ///
    /// A folder that could not be removed (which and why, e.g. busy).
    pub fn remove(&self) -> Result<(), String> {
        self.dirs().iter().try_for_each(|dir| remove_tree(dir))
    }

    /// Whether it exists in any of its hierarchies.
    pub fn exists(&self) -> bool {
        self.dirs().iter().any(|d| d.exists())
    }
}

/// Removes the cgroup folder `dir` and those below it, deepest first.
fn remove_tree(dir: &Path) -> Result<(), String> {
    match fs::remove_dir(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(_) => {}
    }
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path())?;
            }
        }
    }
    match fs::remove_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove {}: {e}", dir.display())),
    }
}

/// Makes the folder `dir` and its missing parents.
fn make_dir(dir: &Path) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// Writes `value` to the existing cgroup file `file`, in one `write(2)`.
fn write(file: &Path, value: &str) -> Result<(), String> {
    OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(file)
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(|e| format!("cannot write {value} to {}: {e}", file.display()))
}

/// Writes the number `value` to `file` and checks that it reads back as written
/// (the kernel clamps some values silently).
fn write_checked(file: &Path, value: u64) -> Result<(), String> {
    write(file, &value.to_string())?;
    let back = read(file)?;
    if back.trim().parse::<u64>().ok() == Some(value) {
        Ok(())
    } else {
        Err(format!(
            "{} reads {} after {value} was written",
            file.display(),
            back.trim()
        ))
    }
}

/// The text of the cgroup file `file`.
fn read(file: &Path) -> Result<String, String> {
    fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))
}

/// The number of `key` in a flat keyed cgroup file (`key value` lines).
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut words = l.split_whitespace();
        (words.next() == Some(key)).then_some(())?;
        words.next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn v1_hierarchies_are_found_in_mountinfo() {
        assert_eq!(
            v1_mounts(HYBRID),
            vec![
                ("memory", PathBuf::from("/sys/fs/cgroup/memory")),
                ("pids", PathBuf::from("/sys/fs/cgroup/pids")),
                ("cpu", PathBuf::from("/sys/fs/cgroup/cpu,cpuacct")),
            ]
        );
        // cgroup v2 alone, or no cgroups: no v1 hierarchy.
        assert_eq!(
            v1_mounts("30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n"),
            vec![]
        );
        assert_eq!(v1_mounts("garbage\n\n"), vec![]);
    }

    /// A stand-in for a cgroup file system below `root`: the interface files
    /// of folder `dir` with their contents (the kernel makes them; a test must).
    fn files(dir: &Path, files: &[(&str, &str)]) {
        fs::create_dir_all(dir).unwrap();
        for (name, text) in files {
            fs::write(dir.join(name), text).unwrap();
        }
    }

    #[test]
    fn v2_enables_controllers_in_every_ancestor_and_writes_v2_files() {
        let tmp = tempfile::tempdir().unwrap();
        let mount = tmp.path();
        let hier = Hierarchy::V2(mount.to_path_buf());
        let base = "user.slice/user@1000.service";
        files(
            mount,
            &[
                ("cgroup.controllers", "cpuset cpu io memory pids\n"),
                ("cgroup.subtree_control", ""),
            ],
        );
        files(&mount.join("user.slice"), &[("cgroup.subtree_control", "")]);
        files(&mount.join(base), &[("cgroup.subtree_control", "")]);
        let pool = format!("{base}/sessionpad-1-a");
        files(&mount.join(&pool), &[("cgroup.subtree_control", "")]);
        let leaf = mount.join(&pool).join("k0");
        files(&leaf, &[("cgroup.subtree_control", "")]);

        let cg = Cgroup::create(&hier, &format!("{pool}/k0"), &CONTROLLERS).unwrap();
        // Each ancestor, the root included, got `+<controller>` written (one
        // write per controller, so the stand-in file holds the last), the
        // cgroup itself nothing.
        for dir in [
            mount.to_path_buf(),
            mount.join("user.slice"),
            mount.join(base),
            mount.join(&pool),
        ] {
            assert_eq!(
                fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap(),
                "+cpu",
                "{}",
                dir.display()
            );
        }
        assert_eq!(
            fs::read_to_string(leaf.join("cgroup.subtree_control")).unwrap(),
            ""
        );
        assert_eq!(cg.dirs(), vec![leaf.clone()]);

        files(
            &leaf,
            &[
                ("cgroup.controllers", "memory pids\n"),
                ("cgroup.procs", ""),
                ("memory.max", "max\n"),
                ("memory.swap.max", "max\n"),
                ("pids.max", "max\n"),
                ("cpu.weight", "100\n"),
            ],
        );
        // Its parent did not give it `cpu`.
        assert_eq!(cg.controllers(), vec!["memory", "pids"]);
        cg.set_limits(&CgroupLimits {
            memory_bytes: Some(2 << 30),
            swap_bytes: Some(2 << 30),
            processes: Some(512),
            cpu_weight: Some(250),
        })
        .unwrap();
        let read = |name: &str| fs::read_to_string(leaf.join(name)).unwrap();
        assert_eq!(read("memory.max"), "2147483648");
        assert_eq!(read("memory.swap.max"), "2147483648");
        assert_eq!(read("pids.max"), "512");
        assert_eq!(read("cpu.weight"), "250");
        assert_eq!(cg.open_procs().unwrap().len(), 1);

        // Events: the OOM killer's kills in memory.events, refused forks in
        // pids.events.
        files(
            &leaf,
            &[
                (
                    "memory.events",
                    "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n",
                ),
                ("pids.events", "max 3\n"),
            ],
        );
        assert_eq!(cg.oom_kills(), Ok(1));
        assert_eq!(cg.process_limit_hits(), Ok(3));
    }

    #[test]
    fn v2_refuses_a_controller_the_root_lacks() {
        let tmp = tempfile::tempdir().unwrap();
        let hier = Hierarchy::V2(tmp.path().to_path_buf());
        files(tmp.path(), &[("cgroup.controllers", "cpu memory\n")]);
        let err = Cgroup::create(&hier, "sessionpad-1-a", &CONTROLLERS).unwrap_err();
        assert!(err.starts_with("the pids controller is not in "), "{err}");
        assert!(!tmp.path().join("sessionpad-1-a").exists());
        let err =
            Cgroup::create(&Hierarchy::V2(tmp.path().join("gone")), "x", &CONTROLLERS).unwrap_err();
        assert!(err.contains("gone/cgroup.controllers"), "{err}");
    }

    #[test]
    fn v1_writes_v1_files_in_each_hierarchy() {
        let tmp = tempfile::tempdir().unwrap();
        let at = |c: &str| tmp.path().join(c);
        let hier = Hierarchy::V1(vec![
            ("memory", at("memory")),
            ("pids", at("pids")),
            ("cpu", at("cpu,cpuacct")),
        ]);
        let cg = Cgroup::create(&hier, "sessionpad-1-a/k0", &CONTROLLERS).unwrap();
        let dirs = [
            at("cpu,cpuacct/sessionpad-1-a/k0"),
            at("memory/sessionpad-1-a/k0"),
            at("pids/sessionpad-1-a/k0"),
        ];
        assert_eq!(cg.dirs(), dirs.to_vec());
        assert!(dirs.iter().all(|d| d.is_dir()));
        assert_eq!(cg.controllers(), CONTROLLERS.to_vec());
        for d in &dirs {
            files(d, &[("cgroup.procs", "")]);
        }
        files(
            &dirs[1],
            &[
                ("memory.limit_in_bytes", "9223372036854771712\n"),
                (
                    "memory.oom_control",
                    "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
                ),
            ],
        );
        files(
            &dirs[2],
            &[("pids.max", "max\n"), ("pids.events", "max 0\n")],
        );
        files(&dirs[0], &[("cpu.shares", "1024\n")]);
        // No memory.memsw.limit_in_bytes (no swap accounting): skipped.
        cg.set_limits(&CgroupLimits {
            memory_bytes: Some(u64::MAX),
            swap_bytes: Some(u64::MAX),
            processes: Some(64),
            cpu_weight: Some(1),
        })
        .unwrap();
        let read = |d: &Path, name: &str| fs::read_to_string(d.join(name)).unwrap();
        assert_eq!(
            read(&dirs[1], "memory.limit_in_bytes"),
            i64::MAX.to_string()
        );
        assert!(!dirs[1].join("memory.memsw.limit_in_bytes").exists());
        assert_eq!(read(&dirs[2], "pids.max"), "64");
        // Weight 1 is 10 shares, at least 2.
        assert_eq!(read(&dirs[0], "cpu.shares"), "10");
        assert_eq!(cg.open_procs().unwrap().len(), 3);
        assert_eq!(cg.oom_kills(), Ok(2));
        assert_eq!(cg.process_limit_hits(), Ok(0));

        // A missing file says which.
        fs::remove_file(dirs[2].join("pids.events")).unwrap();
        let err = cg.process_limit_hits().unwrap_err();
        assert!(err.contains("pids/sessionpad-1-a/k0/pids.events"), "{err}");
        // Without the cpu hierarchy, a cgroup has no cpu controller.
        let no_cpu = Hierarchy::V1(vec![("memory", at("memory")), ("pids", at("pids"))]);
        assert_eq!(
            Cgroup::open(&no_cpu, "sessionpad-1-a").controllers(),
            vec!["memory", "pids"]
        );
        let err = Cgroup::open(&no_cpu, "sessionpad-1-a")
            .set_limits(&CgroupLimits {
                cpu_weight: Some(100),
                ..CgroupLimits::default()
            })
            .unwrap_err();
        assert_eq!(err, "no cgroup v1 hierarchy of the cpu controller");
    }

    #[test]
    fn a_value_that_does_not_read_back_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("pids.max");
        fs::write(&file, "max\n").unwrap();
        assert_eq!(write_checked(&file, 12), Ok(()));
        // What is written to /dev/null reads back as nothing.
        let null = tmp.path().join("cpu.shares");
        std::os::unix::fs::symlink("/dev/null", &null).unwrap();
        let err = write_checked(&null, 12).unwrap_err();
        assert!(
            err.ends_with("cpu.shares reads  after 12 was written"),
            "{err}"
        );
        let err = write_checked(&tmp.path().join("none"), 12).unwrap_err();
        assert!(err.starts_with("cannot write 12 to "), "{err}");
        assert!(err.contains("none: No such file"), "{err}");
    }

    #[test]
    fn keyed_files_are_read_by_key() {
        assert_eq!(keyed("max 0\n", "max"), Some(0));
        assert_eq!(keyed("oom 3\noom_kill 2\n", "oom_kill"), Some(2));
        assert_eq!(keyed("oom_kill_disable 0\nunder_oom 0\n", "oom_kill"), None);
        assert_eq!(keyed("max x\n", "max"), None);
    }

    /// The cgroup v1 hierarchies of this machine as root, or the v2 hierarchy
    /// beside them on a hybrid machine: a real cgroup is created, joined by a
    /// process, its process killed and the cgroup removed. Skipped elsewhere.
    fn join_kill_remove(hier: &Hierarchy, controllers: &[&'static str]) {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        /// Removes the test's cgroups even when an assertion fails.
        struct Cleanup(Cgroup);
        impl Drop for Cleanup {
            fn drop(&mut self) {
                for k in self.0.children() {
                    k.kill_all();
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
                let _ = self.0.remove();
            }
        }
        let name = format!("sessionpad-{}", super::super::housekeeping::pool_tag());
        let pool = Cgroup::create(hier, &name, controllers).unwrap();
        let _cleanup = Cleanup(pool.clone());
        let cg = Cgroup::create(hier, &format!("{name}/k0"), controllers).unwrap();
        if controllers.contains(&"memory") {
            cg.set_limits(&CgroupLimits {
                memory_bytes: Some(256 << 20),
                swap_bytes: Some(256 << 20),
                processes: Some(16),
                cpu_weight: cg.controllers().contains(&"cpu").then_some(100),
            })
            .unwrap();
        }
        let procs = cg.open_procs().unwrap();
        let fds: Vec<i32> = procs.iter().map(AsRawFd::as_raw_fd).collect();
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("30");
        // SAFETY: write(2) is async-signal-safe; the fds stay open until the
        // spawn.
        unsafe {
            cmd.pre_exec(move || {
                for &fd in &fds {
                    if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        drop(procs);
        assert_eq!(cg.procs(), vec![child.id()]);
        assert_eq!(pool.children(), vec![cg.clone()]);
        // Busy: a cgroup with a process in it stays.
        assert!(pool.remove().is_err());
        cg.kill_all();
        assert!(!child.wait().unwrap().success());
        let mut removed = pool.remove();
        for _ in 0..40 {
            if removed.is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
            removed = pool.remove();
        }
        assert_eq!(removed, Ok(()));
        assert!(!pool.exists() && !cg.exists());
        assert_eq!(pool.remove(), Ok(()), "removing what is gone is done");
    }

    fn root() -> bool {
        rustix::process::geteuid().is_root()
    }

    #[test]
    fn a_real_v1_cgroup_is_joined_killed_and_removed() {
        let hier = Hierarchy::detect();
        let Hierarchy::V1(mounts) = &hier else {
            eprintln!("skipped: no cgroup v1 here");
            return;
        };
        if !root() || mounts.len() < 2 {
            eprintln!("skipped: not root, or no memory and pids hierarchies");
            return;
        }
        join_kill_remove(&hier, &CONTROLLERS);
    }

    #[test]
    fn a_real_v2_cgroup_is_joined_killed_and_removed() {
        // A hybrid machine's v2 hierarchy has no controllers, but its cgroups
        // are joined, listed and removed as on a v2 machine.
        let unified = Path::new(V2_MOUNT).join("unified");
        let on_v2 = |p: &Path| {
            rustix::fs::statfs(p).is_ok_and(|s| i128::from(s.f_type) == CGROUP2_SUPER_MAGIC)
        };
        let hier = if on_v2(Path::new(V2_MOUNT)) {
            Hierarchy::V2(PathBuf::from(V2_MOUNT))
        } else if on_v2(&unified) {
            Hierarchy::V2(unified)
        } else {
            eprintln!("skipped: no cgroup v2 hierarchy here");
            return;
        };
        if !root() {
            eprintln!("skipped: not root");
            return;
        }
        join_kill_remove(&hier, &[]);
    }
}
