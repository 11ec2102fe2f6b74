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
}
