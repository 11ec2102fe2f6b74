//! The processes of the pool's kernels: each kernel starts in a process group of its
//! own and is registered with its pool's [`Processes`] the moment it exists (no
//! `await` in between), until it is reaped. Ending a kernel ends its whole tree, and
//! a pool that goes away without [`super::LocalPool::shutdown`] can still kill, at
//! once and without a runtime, kernels that are starting or busy.
//!
//! Why the tree and not the one pid tokio knows: in the sandbox that pid is the
//! sandbox helper, which forks the sandbox's init (pid 1 of its own pid
//! namespace), which forks the kernel. With bubblewrap, which the pool used
//! before, a SIGKILL to the outer `bwrap` while its init set up the mounts left
//! that init running forever. The helper and its init stay in the group the
//! pool made, so killing the group and the helper's children ends the sandbox at
//! whatever step it is, and the init's end ends every process of its pid
//! namespace (the kernel and what it started, which `setsid` took out of the
//! group). This module must not know about Jupyter.

use std::collections::HashSet;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::process::{Child, Command};

/// The kernel processes of one pool, by process group (the leader's pid), from
/// spawn until reaped; once closed, no more are started.
#[derive(Debug, Default)]
pub struct Processes {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    closed: bool,
    groups: HashSet<u32>,
}

impl Processes {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts `cmd` as the leader of a new process group and registers it; the
    /// returned process kills its tree when dropped.
    ///
    /// Call it from a runtime's task, not from `spawn_blocking`: the sandbox
    /// helper dies with its parent (`PR_SET_PDEATHSIG`), which fires when the
    /// *thread* that spawned it ends, and blocking-pool threads end after a few idle seconds,
    /// while a runtime's own threads live as long as the runtime.
    ///
    /// # Errors
    ///
    /// The spawn's, or `Interrupted` once [`Processes::close`] was called
    /// (the pool is going away; nothing may outlive it).
    pub fn spawn(self: &Arc<Self>, cmd: &mut Command) -> std::io::Result<KernelProcess> {
        cmd.process_group(0).kill_on_drop(true);
        // Spawned under the lock, so `close` either sees it registered or
        // prevents it.
        let mut state = self.state();
        if state.closed {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "the pool is shutting down",
            ));
        }
        let child = cmd.spawn()?;
        let pid = child
            .id()
            .ok_or_else(|| std::io::Error::other("the process ended at once"))?;
        state.groups.insert(pid);
        drop(state);
        Ok(KernelProcess {
            child,
            pid,
            reaped: false,
            processes: self.clone(),
        })
    }

    /// Refuses further spawns and kills every registered process tree now, without
    /// waiting (usable from `Drop`).
    pub fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        for &pid in &state.groups {
            kill_tree(pid);
        }
    }

    /// Kills the process tree of group `pid` now, if it is still registered
    /// (not yet reaped, so the pid cannot have been reused); used to end a
    /// kernel that an execution holds.
    pub fn kill_group(&self, pid: u32) {
        if self.state().groups.contains(&pid) {
            kill_tree(pid);
        }
    }

    /// Whether [`Processes::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.state().closed
    }

    fn forget(&self, pid: u32) {
        self.state().groups.remove(&pid);
    }
}

/// One kernel's process (the leader of its group), killed with its whole tree when
/// dropped.
#[derive(Debug)]
pub struct KernelProcess {
    child: Child,
    pid: u32,
    reaped: bool,
    processes: Arc<Processes>,
}

impl KernelProcess {
    /// The exit status if the process has exited (it is then reaped).
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        let status = self.child.try_wait().ok().flatten();
        if status.is_some() {
            self.reaped();
        }
        status
    }

    /// Waits until the process exits (it is then reaped).
    pub async fn wait(&mut self) {
        if self.child.wait().await.is_ok() {
            self.reaped();
        }
    }

    /// The leader's pid, which is also its process group.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The pool's registry this process is in.
    pub fn processes(&self) -> &Arc<Processes> {
        &self.processes
    }

    /// Kills the process and everything it started, without waiting.
    pub fn kill(&mut self) {
        if !self.reaped {
            kill_tree(self.pid);
        }
    }

    fn reaped(&mut self) {
        if !self.reaped {
            self.reaped = true;
            self.processes.forget(self.pid);
        }
    }
}

impl Drop for KernelProcess {
    fn drop(&mut self) {
        self.kill();
        self.processes.forget(self.pid);
    }
}

/// SIGKILLs the children of `pid`, then its process group. Only while `pid` is
/// still an unreaped child of ours (running or a zombie), so its number (and its
/// group's) cannot belong to another process yet. A pid reaped between that check
/// and the kill would have to be reused within microseconds to be hit.
fn kill_tree(pid: u32) {
    let Ok(leader) = libc::pid_t::try_from(pid) else {
        return;
    };
    if !is_unreaped_child(pid) {
        return;
    }
    for child in children(pid) {
        // SAFETY: kill(2) has no memory effects.
        unsafe { libc::kill(child, libc::SIGKILL) };
    }
    // SAFETY: as above.
    unsafe { libc::killpg(leader, libc::SIGKILL) };
}

/// Whether `pid` is a child of this process not reaped yet; never reaps it.
fn is_unreaped_child(pid: u32) -> bool {
    // SAFETY: siginfo_t is plain data; zeroed is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: `info` is a valid, writable siginfo_t.
    unsafe { libc::waitid(libc::P_PID, pid, &raw mut info, flags) == 0 }
}

/// How many tasks (processes and their threads, as `RLIMIT_NPROC` counts them)
/// descend from `pid`, its own threads included, read from `/proc/PID/task`;
/// stops counting at 100,000.
pub fn tree_size(pid: u32) -> usize {
    let threads = |p: u32| std::fs::read_dir(format!("/proc/{p}/task")).map_or(0, Iterator::count);
    let mut n = threads(pid);
    let mut stack: Vec<libc::pid_t> = children(pid);
    while let Some(p) = stack.pop() {
        let Ok(p) = u32::try_from(p) else { continue };
        n += threads(p).max(1);
        if n >= 100_000 {
            break;
        }
        stack.extend(children(p));
    }
    n
}

/// The children of every thread of `pid` (Linux `/proc/PID/task/TID/children`);
/// none where that file does not exist.
fn children(pid: u32) -> Vec<libc::pid_t> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell that starts a grandchild in a new session (out of the group, like
    /// bwrap's init after `setsid`) and one in the group, then waits.
    fn tree_command() -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "setsid sleep 600 & sleep 600 & wait"]);
        cmd
    }

    fn alive(pid: libc::pid_t) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        !stat.is_empty()
            && !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
    }

    async fn descendants_of(pid: u32) -> Vec<libc::pid_t> {
        for _ in 0..200 {
            let kids = children(pid);
            if kids.len() == 2 {
                return kids;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the shell did not start its two children");
    }

    async fn all_gone(pids: &[libc::pid_t]) -> bool {
        for _ in 0..500 {
            if !pids.iter().any(|&p| alive(p)) {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        false
    }

    #[tokio::test]
    async fn dropping_a_process_kills_its_children_in_and_out_of_its_group() {
        let processes = Arc::new(Processes::default());
        let process = processes.spawn(&mut tree_command()).unwrap();
        let kids = descendants_of(process.pid).await;
        drop(process);
        assert!(all_gone(&kids).await, "children left: {kids:?}");
        assert!(processes.state().groups.is_empty());
    }

    #[tokio::test]
    async fn close_kills_registered_trees_and_refuses_new_ones() {
        let processes = Arc::new(Processes::default());
        let mut process = processes.spawn(&mut tree_command()).unwrap();
        let kids = descendants_of(process.pid).await;
        processes.close();
        assert!(all_gone(&kids).await, "children left: {kids:?}");
        process.wait().await;
        assert!(processes.state().groups.is_empty());
        let refused = processes.spawn(&mut tree_command()).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::Interrupted);
    }
}
