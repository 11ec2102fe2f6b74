//! The seccomp filter of sandboxed kernels, in the spirit of Docker's default
//! profile: every system call is allowed except those that reach beyond a
//! container (mounts, namespaces, tracing other processes, kernel keyrings, BPF,
//! kernel modules, reboot, clocks, swap, accounting), which fail with `EPERM`;
//! `clone` with a namespace flag fails with `EPERM`, `clone3` with `ENOSYS` (so C
//! libraries fall back to `clone`, whose flags the filter can read, as Docker
//! does), and the terminal-injecting `ioctl`s `TIOCSTI` and `TIOCLINUX` with
//! `EPERM`; and sockets of any family but `AF_UNIX`, `AF_INET`, `AF_INET6` and
//! `AF_NETLINK` with `NETLINK_ROUTE` (what Python, glibc and Node.js use) fail with
//! `EPERM` too, so `AF_VSOCK` (the host of a virtual machine), `AF_PACKET`,
//! Bluetooth, `AF_ALG` and the rest are out of reach. The filter is compiled by
//! `seccompiler` (rust-vmm) into two classic BPF programs that the sandbox helper
//! loads just before it executes the kernel.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// System calls that fail with `EPERM` whatever their arguments.
const DENIED: &[libc::c_long] = &[
    // Mounts and the root.
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    // Namespaces.
    libc::SYS_unshare,
    libc::SYS_setns,
    // Other processes' memory.
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    // Kernel facilities a session has no business with.
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_syslog,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_quotactl,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_fanotify_init,
    libc::SYS_vhangup,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_uselib,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ustat,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_sysfs,
    #[cfg(target_arch = "x86_64")]
    libc::SYS__sysctl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_nfsservctl,
];

/// The namespace flags `clone` may not be given.
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWCGROUP,
];

/// How many system calls the filter denies outright (for the pool's info).
pub fn denied_count() -> usize {
    DENIED.len()
}

/// Errors building the filter: the architecture is not one seccompiler knows
/// (`x86_64`, aarch64, riscv64), or a rule is malformed (a bug).
#[derive(Debug, thiserror::Error)]
#[error("cannot build the seccomp filter: {0}")]
pub struct SeccompError(String);

fn err(e: impl std::fmt::Display) -> SeccompError {
    SeccompError(e.to_string())
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SeccompError> {
    SeccompRule::new(conditions).map_err(err)
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SeccompError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(err)
}

/// The rules that fail with `EPERM`: syscall number → rules (an empty list
/// matches every call).
fn eperm_rules() -> Result<BTreeMap<i64, Vec<SeccompRule>>, SeccompError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &nr in DENIED {
        rules.insert(nr, vec![]);
    }
    // clone(flags, …): any namespace flag set. One rule per flag (rules are ORed).
    let clone = NAMESPACE_FLAGS
        .iter()
        .map(|&f| {
            let f = u64::try_from(f).map_err(err)?;
            rule(vec![cond(0, SeccompCmpOp::MaskedEq(f), f)?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone);
    // ioctl(fd, TIOCSTI | TIOCLINUX, …): typing into a terminal.
    let ioctl = [libc::TIOCSTI, libc::TIOCLINUX]
        .iter()
        .map(|&req| {
            // The request is an unsigned int: compare its low 32 bits.
            let c = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, req)
                .map_err(err)?;
            rule(vec![c])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctl);
    // socket(domain, type, protocol) and socketpair(...): families not allowed.
    rules.insert(libc::SYS_socket, socket_rules()?);
    rules.insert(libc::SYS_socketpair, socket_rules()?);
    Ok(rules)
}

/// The socket families a session may use.
pub const ALLOWED_FAMILIES: &[libc::c_int] = &[
    libc::AF_UNIX,
    libc::AF_INET,
    libc::AF_INET6,
    libc::AF_NETLINK,
];

/// Rules (`ORed`) that match a `socket` call of a family not in
/// [`ALLOWED_FAMILIES`], or a netlink socket of another protocol than
/// `NETLINK_ROUTE`.
fn socket_rules() -> Result<Vec<SeccompRule>, SeccompError> {
    let dword = |arg: u8, op, value: libc::c_int| {
        let value = u64::try_from(value).map_err(err)?;
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(err)
    };
    let mut allowed: Vec<libc::c_int> = ALLOWED_FAMILIES.to_vec();
    allowed.sort_unstable();
    let mut rules = Vec::new();
    // The gaps between allowed families, then everything above the last.
    let mut next = 0;
    for &family in &allowed {
        if family > next {
            rules.push(rule(vec![
                dword(0, SeccompCmpOp::Ge, next)?,
                dword(0, SeccompCmpOp::Lt, family)?,
            ])?);
        }
        next = family + 1;
    }
    rules.push(rule(vec![dword(0, SeccompCmpOp::Ge, next)?])?);
    rules.push(rule(vec![
        dword(0, SeccompCmpOp::Eq, libc::AF_NETLINK)?,
        dword(2, SeccompCmpOp::Ne, libc::NETLINK_ROUTE)?,
    ])?);
    Ok(rules)
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: u32,
    arch: TargetArch,
) -> Result<BpfProgram, SeccompError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(err)?;
    filter.try_into().map_err(err)
}

/// The filter, as two programs for `seccompiler::apply_filter`, loaded in
/// this order: the first fails `clone3` with `ENOSYS`, the second fails
/// everything else listed with `EPERM`; the kernel runs both and the error wins
/// over "allow".
pub type Filters = [BpfProgram; 2];

/// Compiles the filter for this machine's architecture (well under a
/// millisecond).
///
/// # Errors
///
/// [`SeccompError`] on an architecture seccompiler does not know.
pub fn filters() -> Result<Filters, SeccompError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(err)?;
    let mut nosys = BTreeMap::new();
    nosys.insert(libc::SYS_clone3, vec![]);
    let first = compile(nosys, libc::ENOSYS.unsigned_abs(), arch)?;
    let second = compile(eperm_rules()?, libc::EPERM.unsigned_abs(), arch)?;
    Ok([first, second])
}

/// The action data seccompiler's `Trace` is compiled with in [`notifier`],
/// found again and turned into `SECCOMP_RET_USER_NOTIF` (seccompiler has no
/// user-notification action).
const NOTIFY_MARK: u32 = 0x5e55;

/// The flags of the one `sendmsg` the notifier does not stop: the helper's own,
/// which hands the pool the listener just loaded (stopping it would wait for
/// a pool that cannot yet listen). A session's `sendmsg` with exactly these
/// flags goes unrecorded, and still has no route.
pub const HANDOVER_FLAGS: libc::c_int = libc::MSG_NOSIGNAL | libc::MSG_EOR | libc::MSG_DONTWAIT;

/// The filter that tells the pool of each attempt to reach an address
/// (issue 29): `connect`, and `sendmsg` whatever its arguments (its
/// destination is behind a pointer the filter cannot follow) but for flags
/// [`HANDOVER_FLAGS`], and `sendto` with a destination (argument 4 not null),
/// return `SECCOMP_RET_USER_NOTIF`, so the
/// calling thread waits until the pool, holding the filter's listener, has
/// read the address and let the call go on unchanged
/// (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`). It decides nothing: the session's
/// network namespace does. Compiled by seccompiler with a `Trace` action as a
/// mark whose return instructions are then rewritten.
///
/// # Errors
///
/// [`SeccompError`] on an architecture seccompiler does not know, or when no
/// return instruction carried the mark (a seccompiler that compiles
/// differently).
pub fn notifier() -> Result<BpfProgram, SeccompError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(err)?;
    let mut rules = BTreeMap::new();
    rules.insert(libc::SYS_connect, vec![]);
    let handover = u64::try_from(HANDOVER_FLAGS).map_err(err)?;
    rules.insert(
        libc::SYS_sendmsg,
        vec![rule(vec![
            SeccompCondition::new(2, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, handover)
                .map_err(err)?,
        ])?],
    );
    rules.insert(
        libc::SYS_sendto,
        vec![rule(vec![cond(4, SeccompCmpOp::Ne, 0)?])?],
    );
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Trace(NOTIFY_MARK),
        arch,
    )
    .map_err(err)?;
    let mut program: BpfProgram = filter.try_into().map_err(err)?;
    let ret = u16::try_from(libc::BPF_RET | libc::BPF_K).map_err(err)?;
    let mut marked = 0;
    for ins in program
        .iter_mut()
        .filter(|i| i.code == ret && i.k == libc::SECCOMP_RET_TRACE | NOTIFY_MARK)
    {
        ins.k = libc::SECCOMP_RET_USER_NOTIF;
        marked += 1;
    }
    if marked == 0 {
        return Err(SeccompError("no return of the notifier's mark".into()));
    }
    Ok(program)
}

/// Whether this kernel can let a call stopped by [`notifier`] go on
/// unchanged (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`, Linux 5.5): before it, a
/// listener exists (5.0) but the pool could only fail the call, so no
/// notifier is loaded at all.
pub fn can_continue() -> bool {
    let uname = rustix::system::uname();
    let release = uname.release().to_string_lossy();
    let mut numbers = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse::<u32>().ok());
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    (major, minor) >= (5, 5)
}

/// Loads [`notifier`]'s `program` on the calling thread (after
/// `no_new_privs`) and returns its listener, which the pool reads with
/// `SECCOMP_IOCTL_NOTIF_RECV` ([`crate::pool::egress::direct`]). The filter
/// goes to every child and survives `execve`.
///
/// # Errors
///
/// The kernel's: `EINVAL` before Linux 5.0 (no listener), `EBUSY` when a
/// filter with a listener is already loaded (one per thread).
pub fn load_notifier(program: &BpfProgram) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let filter: Vec<libc::sock_filter> = program
        .iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect();
    let prog = libc::sock_fprog {
        len: u16::try_from(filter.len()).map_err(std::io::Error::other)?,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: seccomp(2) copies the program from `prog`, which outlives the
    // call; the flag asks for a new descriptor, which we then own.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &raw const prog,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(std::io::Error::other)?;
    // SAFETY: a fresh descriptor the kernel just gave this process.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_for_this_machine() {
        for program in filters().expect("filter") {
            // Classic BPF programs are limited to 4096 instructions.
            assert!(program.len() < 4096, "{} instructions", program.len());
        }
        assert!(denied_count() > 40);
    }

    #[test]
    fn the_notifier_asks_the_pool_of_connect_and_sendto() {
        let program = notifier().expect("notifier");
        let notify = program
            .iter()
            .filter(|i| i.k == libc::SECCOMP_RET_USER_NOTIF)
            .count();
        assert!(notify >= 3, "{notify} notifying returns");
        assert!(
            !program
                .iter()
                .any(|i| i.k == libc::SECCOMP_RET_TRACE | NOTIFY_MARK)
        );
    }
}
