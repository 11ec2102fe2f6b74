//! Why a machine refuses the sandbox, named from what `/proc` says, with the one
//! fix for each cause:
//!
//! - root without `CAP_SYS_ADMIN` (a container started without it): the
//!   namespaces and mounts need it;
//! - a seccomp filter on sessionpad itself (a container's default profile,
//!   Docker's among them, refuses `unshare` and `mount`);
//! - Ubuntu 23.10+/24.04's `AppArmor` restriction of unprivileged user namespaces
//!   (`kernel.apparmor_restrict_unprivileged_userns = 1`): a profile for the
//!   sessionpad binary that allows them, and the commands to load it;
//! - user namespaces switched off: `user.max_user_namespaces = 0`, or Debian's
//!   older `kernel.unprivileged_userns_clone = 0`.
//!
//! Everything is read below a given `/proc`, so the tests give stand-in trees.

use std::path::Path;

/// One cause and its fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// What is in the way, one sentence, e.g. `user namespaces are switched off
    /// (user.max_user_namespaces = 0)`.
    pub what: String,
    /// How to fix it: commands or flags, possibly several lines.
    pub fix: String,
}

/// The Linux capability number of `CAP_SYS_ADMIN`.
const CAP_SYS_ADMIN: u32 = 21;

fn read(proc: &Path, file: &str) -> Option<String> {
    std::fs::read_to_string(proc.join(file)).ok()
}

fn number(proc: &Path, file: &str) -> Option<u64> {
    read(proc, file)?.trim().parse().ok()
}

/// The value of `field` in `proc/self/status` (e.g. `CapEff`, `Seccomp`).
fn status(proc: &Path, field: &str) -> Option<String> {
    read(proc, "self/status")?.lines().find_map(|l| {
        l.strip_prefix(field)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(|v| v.trim().to_string())
    })
}

/// The `AppArmor` profile that lets `program` make user namespaces (Ubuntu's own
/// form for such programs), and the commands that load it.
pub fn apparmor_fix(program: &Path) -> String {
    let path = program.display();
    format!(
        "allow user namespaces for the sessionpad binary with an AppArmor profile, as root:\n\
         \n\
         cat > /etc/apparmor.d/sessionpad <<'EOF'\n\
         abi <abi/4.0>,\n\
         include <tunables/global>\n\
         \n\
         profile sessionpad {path} flags=(unconfined) {{\n\
         \x20 userns,\n\
         \n\
         \x20 include if exists <local/sessionpad>\n\
         }}\n\
         EOF\n\
         apparmor_parser -r /etc/apparmor.d/sessionpad"
    )
}

/// Names why the sandbox cannot be built on the machine whose `/proc` is at
/// `proc`, for a process with effective uid `euid` running `program` (the
/// sessionpad binary); `None` when none of the known causes is there.
pub fn diagnose(proc: &Path, euid: u32, program: &Path) -> Option<Cause> {
    if euid == 0 {
        let effective = status(proc, "CapEff").and_then(|v| u64::from_str_radix(&v, 16).ok());
        if effective.is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN) == 0) {
            return Some(Cause {
                what: "sessionpad runs as root without CAP_SYS_ADMIN, as in a container started \
                       without it; the sandbox's namespaces and mounts need it"
                    .into(),
                fix: "start the container with `--cap-add SYS_ADMIN --security-opt \
                      seccomp=unconfined --security-opt apparmor=unconfined` (Docker, Podman), \
                      or run sessionpad as an ordinary user on a machine that allows user \
                      namespaces"
                    .into(),
            });
        }
    }
    if status(proc, "Seccomp").is_some_and(|v| v != "0") {
        return Some(Cause {
            what: "sessionpad itself runs under a seccomp filter (Seccomp in /proc/self/status), \
                   as in a container whose default profile refuses unshare and mount"
                .into(),
            fix: "start the container with `--security-opt seccomp=unconfined` (and \
                  `--cap-add SYS_ADMIN` when it runs as root)"
                .into(),
        });
    }
    if euid != 0 {
        if number(proc, "sys/kernel/apparmor_restrict_unprivileged_userns") == Some(1) {
            return Some(Cause {
                what: "AppArmor restricts unprivileged user namespaces \
                       (kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 23.10 and later)"
                    .into(),
                fix: apparmor_fix(program),
            });
        }
        if number(proc, "sys/kernel/unprivileged_userns_clone") == Some(0) {
            return Some(Cause {
                what: "unprivileged user namespaces are switched off \
                       (kernel.unprivileged_userns_clone = 0)"
                    .into(),
                fix: "as root: `sysctl -w kernel.unprivileged_userns_clone=1`, and \
                      `echo kernel.unprivileged_userns_clone=1 > /etc/sysctl.d/50-userns.conf` \
                      to keep it"
                    .into(),
            });
        }
        if number(proc, "sys/user/max_user_namespaces") == Some(0) {
            return Some(Cause {
                what: "user namespaces are switched off (user.max_user_namespaces = 0)".into(),
                fix: "as root: `sysctl -w user.max_user_namespaces=15000`, and \
                      `echo user.max_user_namespaces=15000 > /etc/sysctl.d/50-userns.conf` to \
                      keep it"
                    .into(),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in `/proc` with `files` (path below it, contents).
    fn proc(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    const STATUS_ROOT_FULL: &str = "Name:\tsessionpad\nCapEff:\t000001ffffffffff\nSeccomp:\t0\n";
    const STATUS_ROOT_DOCKER: &str = "Name:\tsessionpad\nCapEff:\t00000000a80425fb\nSeccomp:\t0\n";
    const STATUS_USER: &str = "Name:\tsessionpad\nCapEff:\t0000000000000000\nSeccomp:\t0\n";
    const STATUS_FILTERED: &str = "Name:\tsessionpad\nCapEff:\t0000000000000000\nSeccomp:\t2\n";
    const BIN: &str = "/opt/sessionpad/bin/sessionpad";

    #[test]
    fn root_without_cap_sys_admin_is_a_container_without_it() {
        let p = proc(&[("self/status", STATUS_ROOT_DOCKER)]);
        let cause = diagnose(p.path(), 0, Path::new(BIN)).unwrap();
        assert!(cause.what.contains("CAP_SYS_ADMIN"), "{cause:?}");
        assert!(cause.fix.contains("--cap-add SYS_ADMIN"), "{cause:?}");
        let p = proc(&[("self/status", STATUS_ROOT_FULL)]);
        assert_eq!(diagnose(p.path(), 0, Path::new(BIN)), None);
    }

    #[test]
    fn a_seccomp_filter_on_sessionpad_is_named() {
        let p = proc(&[("self/status", STATUS_FILTERED)]);
        let cause = diagnose(p.path(), 1000, Path::new(BIN)).unwrap();
        assert!(cause.fix.contains("seccomp=unconfined"), "{cause:?}");
    }

    #[test]
    fn ubuntus_apparmor_restriction_gets_a_profile_for_this_binary() {
        let p = proc(&[
            ("self/status", STATUS_USER),
            ("sys/kernel/apparmor_restrict_unprivileged_userns", "1\n"),
            ("sys/user/max_user_namespaces", "63704\n"),
        ]);
        let cause = diagnose(p.path(), 1000, Path::new(BIN)).unwrap();
        assert!(cause.what.contains("AppArmor"), "{cause:?}");
        assert!(
            cause
                .fix
                .contains(&format!("profile sessionpad {BIN} flags=(unconfined)")),
            "{}",
            cause.fix
        );
        assert!(cause.fix.contains("  userns,"), "{}", cause.fix);
        assert!(
            cause
                .fix
                .contains("apparmor_parser -r /etc/apparmor.d/sessionpad"),
            "{}",
            cause.fix
        );
        // Root is not restricted by it.
        let p = proc(&[
            ("self/status", STATUS_ROOT_FULL),
            ("sys/kernel/apparmor_restrict_unprivileged_userns", "1\n"),
        ]);
        assert_eq!(diagnose(p.path(), 0, Path::new(BIN)), None);
    }

    #[test]
    fn switched_off_user_namespaces_are_named_with_their_sysctl() {
        let p = proc(&[
            ("self/status", STATUS_USER),
            ("sys/user/max_user_namespaces", "0\n"),
        ]);
        let cause = diagnose(p.path(), 1000, Path::new(BIN)).unwrap();
        assert!(cause.what.contains("user.max_user_namespaces = 0"));
        assert!(
            cause
                .fix
                .contains("sysctl -w user.max_user_namespaces=15000")
        );
        let p = proc(&[
            ("self/status", STATUS_USER),
            ("sys/kernel/unprivileged_userns_clone", "0\n"),
            ("sys/user/max_user_namespaces", "63704\n"),
        ]);
        let cause = diagnose(p.path(), 1000, Path::new(BIN)).unwrap();
        assert!(cause.fix.contains("kernel.unprivileged_userns_clone=1"));
    }

    #[test]
    fn a_machine_that_allows_everything_has_no_cause() {
        let p = proc(&[
            ("self/status", STATUS_USER),
            ("sys/kernel/apparmor_restrict_unprivileged_userns", "0\n"),
            ("sys/kernel/unprivileged_userns_clone", "1\n"),
            ("sys/user/max_user_namespaces", "63704\n"),
        ]);
        assert_eq!(diagnose(p.path(), 1000, Path::new(BIN)), None);
        // Nothing readable at all: no guess.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(diagnose(empty.path(), 1000, Path::new(BIN)), None);
    }
}
