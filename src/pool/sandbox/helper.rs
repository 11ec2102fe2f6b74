//! The sandbox helper: the sessionpad binary itself, started by the pool with
//! `argv[0]` = [`ARG0`] and a [`Plan`] in an inherited file, builds one sandbox
//! and starts the sandboxed program in it. It is a fresh, single-threaded
//! process (not a fork of the pool's many threads), so it may allocate and
//! report errors in words; the pool's own command line and memory never enter
//! the sandbox.
//!
//! Three processes, as bubblewrap has:
//!
//! 1. **The helper** (a child of the pool, in the host's process namespace; the
//!    pid the pool waits for and kills): makes the user namespace (a pool that is
//!    not root) and the other namespaces (mount, pid, IPC, UTS, cgroup, and
//!    network unless egress is allowed), forks the sandbox's init, and exits with
//!    its status.
//! 2. **The init** (pid 1 inside): builds the file view on an empty tmpfs root,
//!    `pivot_root`s into it, detaches the host's root, makes the root read-only,
//!    brings up `lo`, becomes non-dumpable (so the session cannot read its
//!    memory, environment or files in `/proc/1`), forks the program and reaps
//!    every process orphaned in the sandbox; it ends, and with it every process
//!    inside, when the program does.
//! 3. **The program**: drops to the session's uid (a root pool), clears every
//!    capability (bounding and ambient sets too), sets `no_new_privs`, its
//!    process limit and the seccomp filter, loads the connect notifier and
//!    sends the pool its listener (a network namespace of its own, issue 29),
//!    and executes the kernel with the plan's arguments and environment.
//!
//! Each process dies with its parent (`PR_SET_PDEATHSIG`). A failed step is said
//! on standard error as `sessionpad sandbox: STEP: ERROR` with exit status
//! [`SETUP_FAILED`].

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use rustix::process::{Pid, Signal, WaitOptions};
use rustix::thread::UnshareFlags;

use super::mounts;
use super::plan::{Plan, User};
use super::seccomp;

/// The helper's `argv[0]`, also what the sandbox's pid 1 shows as its command
/// line.
pub const ARG0: &str = "sessionpad-sandbox";

/// The environment variable that carries the number of the file descriptor the
/// plan (JSON) is read from.
pub const PLAN_FD_VAR: &str = "SESSIONPAD_SANDBOX_PLAN_FD";

/// The exit status of a helper whose sandbox could not be built.
pub const SETUP_FAILED: i32 = 125;

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Runs the helper and exits if this process was started as one (`argv[0]` is
/// [`ARG0`] and [`PLAN_FD_VAR`] is set); returns at once otherwise. The
/// `sessionpad` binary calls it first thing in `main`.
pub fn run_if_helper() {
    if std::env::args_os().next().as_deref() != Some(OsStr::new(ARG0)) {
        return;
    }
    let Some(fd) = std::env::var_os(PLAN_FD_VAR) else {
        return;
    };
    let code = match helper(&fd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sessionpad sandbox: {e}");
            SETUP_FAILED
        }
    };
    std::process::exit(code);
}

/// Sets the program the pool starts as the helper: the `sessionpad` binary
/// (`/proc/self/exe` in it; a test's path to it elsewhere). The first call wins.
pub fn set_program(path: PathBuf) {
    let _ = PROGRAM.set(path);
}

/// The program to start as the helper: the one [`set_program`] gave, else a
/// `sessionpad` binary beside this executable or one folder up (where cargo
/// puts test and benchmark binaries), else `None`.
pub fn program() -> Option<PathBuf> {
    if let Some(p) = PROGRAM.get() {
        return Some(p.clone());
    }
    let exe = std::env::current_exe().ok()?;
    if exe.file_name() == Some(OsStr::new("sessionpad")) {
        return Some(exe);
    }
    let dir = exe.parent()?;
    [dir.join("sessionpad"), dir.parent()?.join("sessionpad")]
        .into_iter()
        .find(|p| p.is_file())
}

/// A failed step and the OS's error.
#[derive(Debug, thiserror::Error)]
#[error("{step}: {source}")]
pub struct StepError {
    /// What was being done, e.g. `bind /usr`.
    pub step: String,
    /// The OS's error.
    pub source: std::io::Error,
}

/// Names the step of an OS error.
pub trait Step<T> {
    /// `self`'s error with `step` in front.
    ///
    /// # Errors
    ///
    /// `self`'s.
    fn step(self, step: impl FnOnce() -> String) -> Result<T, StepError>;
}

impl<T, E: Into<std::io::Error>> Step<T> for Result<T, E> {
    fn step(self, step: impl FnOnce() -> String) -> Result<T, StepError> {
        self.map_err(|e| StepError {
            step: step(),
            source: e.into(),
        })
    }
}

fn read_plan(fd: &OsStr) -> Result<Plan, StepError> {
    let n: i32 = fd
        .to_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("not a file descriptor"))
        .step(|| PLAN_FD_VAR.to_string())?;
    // SAFETY: the pool passed this descriptor for us alone; nothing else in
    // this fresh process uses it.
    let mut file = unsafe { std::fs::File::from_raw_fd(n) };
    let mut text = String::new();
    file.read_to_string(&mut text)
        .step(|| "read the plan".into())?;
    serde_json::from_str(&text)
        .map_err(std::io::Error::other)
        .step(|| "parse the plan".into())
}

fn die_with_parent() -> Result<(), StepError> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
        .step(|| "die with the parent".into())
}

/// The helper's part (see the module doc); the exit status to end with.
fn helper(fd: &OsStr) -> Result<i32, StepError> {
    let plan = read_plan(fd)?;
    die_with_parent()?;
    let filter = seccomp::filters()
        .map_err(std::io::Error::other)
        .step(|| "seccomp filter".into())?;
    if let User::Namespace {
        inner,
        outer_uid,
        outer_gid,
    } = plan.user
    {
        // SAFETY: this process is single-threaded.
        unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER) }
            .step(|| "new user namespace".into())?;
        std::fs::write("/proc/self/setgroups", "deny").step(|| "setgroups deny".into())?;
        std::fs::write("/proc/self/uid_map", format!("{inner} {outer_uid} 1\n"))
            .step(|| "uid map".into())?;
        std::fs::write("/proc/self/gid_map", format!("{inner} {outer_gid} 1\n"))
            .step(|| "gid map".into())?;
    }
    let mut flags =
        UnshareFlags::NEWNS | UnshareFlags::NEWPID | UnshareFlags::NEWIPC | UnshareFlags::NEWUTS;
    if !plan.egress {
        flags |= UnshareFlags::NEWNET;
    }
    // SAFETY: as above. A kernel without cgroup namespaces (before 4.6) goes on
    // without one, as bubblewrap's --unshare-cgroup-try does.
    let unshared = unsafe { rustix::thread::unshare_unsafe(flags | UnshareFlags::NEWCGROUP) };
    if unshared.is_err() {
        // SAFETY: as above.
        unsafe { rustix::thread::unshare_unsafe(flags) }.step(|| "new namespaces".into())?;
    }
    let init = fork().step(|| "fork the sandbox's init".into())?;
    match init {
        None => {
            let code = match init_process(&plan, &filter) {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("sessionpad sandbox: {e}");
                    SETUP_FAILED
                }
            };
            std::process::exit(code)
        }
        Some(pid) => Ok(wait_for(pid)),
    }
}

/// Closes every file descriptor above standard error but `keep`, so the
/// program inherits nothing of the pool's by mistake (a descriptor opened
/// without `O_CLOEXEC`).
fn close_inherited(keep: Option<i32>) -> std::io::Result<()> {
    let ranges: Vec<(u32, u32)> = match keep.and_then(|k| u32::try_from(k).ok()) {
        Some(k) if k >= 3 => vec![(3, k.saturating_sub(1)), (k + 1, u32::MAX)],
        _ => vec![(3, u32::MAX)],
    };
    let mut r = 0;
    for (first, last) in ranges.into_iter().filter(|(f, l)| f <= l) {
        // SAFETY: close_range(2) with plain integer arguments; the process
        // owns every descriptor it closes and uses none of them afterwards.
        r = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
        if r != 0 {
            break;
        }
    }
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOSYS) {
        return Err(e);
    }
    // Linux before 5.9: each open descriptor, as /proc lists them.
    let open: Vec<i32> = std::fs::read_dir("/proc/self/fd")?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2 && Some(fd) != keep)
        .collect();
    for fd in open {
        // SAFETY: as above; the directory's own descriptor is already closed.
        unsafe { libc::close(fd) };
    }
    Ok(())
}

/// `fork(2)`: `None` in the child, the child's pid in the parent.
fn fork() -> std::io::Result<Option<Pid>> {
    // SAFETY: the helper is single-threaded, so the child may do anything.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(std::io::Error::last_os_error()),
        0 => Ok(None),
        pid => Ok(Pid::from_raw(pid)),
    }
}

/// Waits for `pid`, reaping any other child on the way; its exit status (128 +
/// the signal when a signal ended it).
fn wait_for(pid: Pid) -> i32 {
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((p, status))) if p == pid => {
                return status
                    .exit_status()
                    .or_else(|| status.terminating_signal().map(|s| 128 + s))
                    .unwrap_or(SETUP_FAILED);
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return SETUP_FAILED,
        }
    }
}

/// The init's part: builds the sandbox, starts the program, reaps until it ends.
fn init_process(plan: &Plan, filter: &seccomp::Filters) -> Result<i32, StepError> {
    die_with_parent()?;
    mounts::build(plan)?;
    rustix::system::sethostname(plan.hostname.as_bytes()).step(|| "host name".into())?;
    if !plan.egress {
        mounts::loopback_up().step(|| "bring up lo".into())?;
    }
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .step(|| "not dumpable".into())?;
    if let Some(socket) = &plan.relay {
        start_relay(plan, socket, filter)?;
    }
    if let Some(fd) = plan.notify_fd {
        send_diag_socket(fd);
    }
    match fork().step(|| "fork the program".into())? {
        None => {
            let e = start_program(plan, filter);
            eprintln!("sessionpad sandbox: {e}");
            std::process::exit(SETUP_FAILED)
        }
        Some(pid) => {
            if let Some(fd) = plan.notify_fd {
                // SAFETY: the plan's inherited socket, which the init no
                // longer uses (the program has its own copy).
                unsafe { libc::close(fd) };
            }
            Ok(wait_for(pid))
        }
    }
}

/// Starts the egress relay ([`super::relay`]) in a process of its own with
/// the program's privileges: listening before the program starts, so its
/// first request finds it.
fn start_relay(
    plan: &Plan,
    socket: &std::path::Path,
    filter: &seccomp::Filters,
) -> Result<(), StepError> {
    use std::os::fd::AsRawFd;
    let port = crate::pool::egress::RELAY_PORT;
    let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
        .step(|| format!("egress relay: listen on 127.0.0.1:{port}"))?;
    match fork().step(|| "fork the egress relay".into())? {
        None => {
            if let Err(e) = drop_privileges(plan, filter, Some(listener.as_raw_fd())) {
                eprintln!("sessionpad sandbox: egress relay: {e}");
                std::process::exit(SETUP_FAILED)
            }
            super::relay::serve(&listener, socket)
        }
        Some(_) => Ok(()), // reaped by the init's wait
    }
}

/// The program's part: drops every privilege and executes the program. Returns
/// only on failure.
fn start_program(plan: &Plan, filter: &seccomp::Filters) -> StepError {
    let dropped = drop_privileges(plan, filter, plan.notify_fd);
    if let (Ok(()), Some(fd)) = (&dropped, plan.notify_fd) {
        // A pool that no longer listens (its own check of the sandbox) loses
        // only the record; the program goes on.
        let _ = send_notifier(fd);
    }
    match dropped {
        Ok(()) => {
            let e = std::process::Command::new(&plan.program)
                .args(&plan.args)
                .env_clear()
                .envs(plan.env.iter().map(|(k, v)| (k, v)))
                .current_dir(&plan.workdir)
                .exec();
            StepError {
                step: format!("execute {}", plan.program.display()),
                source: e,
            }
        }
        Err(e) => e,
    }
}

/// What the sandbox hands the pool over the notifier socket
/// ([`Plan::notify_fd`]): one message each, its first bytes the tag, with the
/// descriptor attached (or, after [`WHY`], the reason there is none).
pub mod handover {
    /// A `NETLINK_SOCK_DIAG` socket of the session's network namespace, made
    /// by the init: the pool asks it which ports something of the session
    /// listens on.
    pub const DIAG: &[u8] = b"diag";
    /// The connect notifier's listener, from the program.
    pub const LISTENER: &[u8] = b"listener";
    /// No listener: the rest of the message says why.
    pub const WHY: &[u8] = b"why:";
}

/// Sends `fd` to the pool over the socket `socket`, tagged `tag`
/// ([`handover`]), with the flags the notifier lets through unstopped
/// ([`seccomp::HANDOVER_FLAGS`]).
///
/// # Errors
///
/// The socket cannot be written (the pool is gone: `EPIPE`, without the
/// signal).
fn hand_over(
    socket: std::os::fd::BorrowedFd<'_>,
    tag: &[u8],
    fd: std::os::fd::BorrowedFd<'_>,
) -> std::io::Result<()> {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
    let fds = [fd];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    control.push(SendAncillaryMessage::ScmRights(&fds));
    let flags =
        SendFlags::from_bits_retain(u32::try_from(seccomp::HANDOVER_FLAGS).unwrap_or_default());
    rustix::net::sendmsg(socket, &[std::io::IoSlice::new(tag)], &mut control, flags)?;
    Ok(())
}

/// The init's part of the hand-over: a `NETLINK_SOCK_DIAG` socket made in
/// the session's network namespace ([`handover::DIAG`]), before the program
/// runs; nothing when the kernel refuses one (the pool then reads
/// `/proc/PID/net`, slower).
fn send_diag_socket(socket: i32) {
    use std::os::fd::{AsFd, BorrowedFd};
    let Ok(diag) = crate::pool::egress::diag::socket() else {
        return;
    };
    // SAFETY: the plan's inherited socket, open in the init until the
    // program is forked; borrowed for this call only.
    let socket = unsafe { BorrowedFd::borrow_raw(socket) };
    let _ = hand_over(socket, handover::DIAG, diag.as_fd());
}

/// Loads the connect notifier ([`seccomp::notifier`]) and sends its listener
/// to the pool over the inherited socket `fd` ([`handover::LISTENER`]), then
/// closes `fd`; where the kernel cannot make one, sends a line saying why
/// instead ([`handover::WHY`]: the session then runs unrecorded outside the
/// proxy; the pool says so in its log).
///
/// # Errors
///
/// The socket cannot be written (the pool is gone).
fn send_notifier(fd: i32) -> std::io::Result<()> {
    use std::os::fd::{AsFd, FromRawFd, OwnedFd};
    // SAFETY: the plan's inherited socket, ours alone in this process.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    let loaded = if seccomp::can_continue() {
        seccomp::notifier()
            .map_err(std::io::Error::other)
            .and_then(|program| seccomp::load_notifier(&program))
    } else {
        Err(std::io::Error::other(
            "Linux before 5.5 cannot let a stopped connect go on",
        ))
    };
    match loaded {
        Ok(listener) => hand_over(socket.as_fd(), handover::LISTENER, listener.as_fd()),
        Err(e) => {
            let why = [handover::WHY, e.to_string().as_bytes()].concat();
            // No notifier is loaded on this branch: any flags go through.
            rustix::net::send(&socket, &why, rustix::net::SendFlags::NOSIGNAL)?;
            Ok(())
        }
    }
}

/// Drops every privilege of this process (see the module doc), closing every
/// inherited descriptor above standard error but `keep`.
fn drop_privileges(
    plan: &Plan,
    filter: &seccomp::Filters,
    keep: Option<i32>,
) -> Result<(), StepError> {
    die_with_parent()?;
    close_inherited(keep).step(|| "close inherited files".into())?;
    rustix::process::setsid().step(|| "new session".into())?;
    if let Some(n) = plan.nproc {
        let limit = rustix::process::Rlimit {
            current: Some(n),
            maximum: Some(n),
        };
        rustix::process::setrlimit(rustix::process::Resource::Nproc, limit)
            .step(|| "process limit".into())?;
    }
    // The bounding set first: dropping from it needs CAP_SETPCAP, which goes
    // with the uid change below.
    for cap in 0..64 {
        // SAFETY: prctl(2) with plain integer arguments.
        let r = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINVAL) {
                break; // past the last capability this kernel has
            }
            return Err(e).step(|| format!("drop capability {cap} from the bounding set"));
        }
    }
    if let User::Host { uid } = plan.user {
        let id = rustix::process::Gid::from_raw(uid);
        rustix::thread::set_thread_groups(&[]).step(|| "clear groups".into())?;
        rustix::thread::set_thread_res_gid(id, id, id).step(|| format!("gid {uid}"))?;
        let id = rustix::process::Uid::from_raw(uid);
        rustix::thread::set_thread_res_uid(id, id, id).step(|| format!("uid {uid}"))?;
    }
    rustix::thread::clear_ambient_capability_set().step(|| "clear ambient capabilities".into())?;
    let none = rustix::thread::CapabilitySet::empty();
    rustix::thread::set_capabilities(
        None,
        rustix::thread::CapabilitySets {
            effective: none,
            permitted: none,
            inheritable: none,
        },
    )
    .step(|| "clear capabilities".into())?;
    rustix::thread::set_no_new_privs(true).step(|| "no_new_privs".into())?;
    for program in filter {
        seccompiler::apply_filter(program)
            .map_err(std::io::Error::other)
            .step(|| "load the seccomp filter".into())?;
    }
    Ok(())
}
