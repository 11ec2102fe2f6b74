//! The connect watch of one sandboxed session with a network namespace of its
//! own (issue 29): what the session tried to reach *outside* the egress proxy.
//!
//! The sandboxed program loads a seccomp filter that stops each `connect`
//! and `sendmsg`, and each `sendto` with a destination, until the pool has
//! looked
//! ([`crate::pool::sandbox::seccomp::notifier`]), and sends the pool the
//! filter's listener over a socket the helper inherited. Here the pool takes
//! each notification (`SECCOMP_IOCTL_NOTIF_RECV`), reads the address from the
//! caller's memory (`/proc/PID/mem`), lets the call go on unchanged
//! (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`) and logs the attempt as
//! [`Via::Direct`], [`Decision::Denied`]: the namespace holds only `lo`, so an
//! address off the machine has no route, and `127.0.0.1` is the session's own
//! loopback, not the host's.
//!
//! Not logged: Unix sockets; the relay's port (the way into the proxy, which
//! logs the real target); and a loopback port on which something in the
//! session itself listens (`/proc/PID/net/{tcp,tcp6,udp,udp6}`): the session
//! talking to itself is not egress.
//!
//! It is a record, not a gate: the address is read while the caller waits,
//! but another thread of the session could change that memory in between, so
//! a hostile session can make its record lie; it cannot make the call reach
//! anything (the namespace decides, not this watch).

use std::io::IoSliceMut;
use std::mem::MaybeUninit;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use super::NetworkLog;
use crate::protocol::egress::{Decision, Via};

/// The longest socket address read from a caller (a `sockaddr_in6` is 28
/// bytes; a `sockaddr_storage` 128).
const MAX_ADDRESS_BYTES: usize = 128;

/// A session's running connect watch; it stops when dropped, and ends by
/// itself when every process of the session has (the listener hangs up).
#[derive(Debug)]
pub struct DirectWatch {
    _task: tokio_util::task::AbortOnDropHandle<()>,
}

impl DirectWatch {
    /// Starts watching: waits on `socket` (the pool's end of
    /// [`crate::pool::sandbox::SandboxCommand::notify`]) for the listener,
    /// then logs each direct attempt in `log`. `relay` says the session has
    /// the egress relay on `127.0.0.1:`[`super::RELAY_PORT`], whose
    /// connections are not logged here. Must be called within a tokio runtime.
    ///
    /// # Errors
    ///
    /// The socket cannot be made non-blocking or registered with the runtime.
    pub fn start(socket: OwnedFd, log: Arc<NetworkLog>, relay: bool) -> std::io::Result<Self> {
        rustix::io::ioctl_fionbio(&socket, true)?;
        let socket = register(socket)?;
        let task = tokio::spawn(async move {
            if let Err(e) = watch(socket, &log, relay).await {
                tracing::warn!("connect watch: {e}");
            }
        });
        Ok(Self {
            _task: tokio_util::task::AbortOnDropHandle::new(task),
        })
    }
}

/// `fd` registered with the runtime for reading.
fn register(fd: OwnedFd) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` stays open, and names the same file, until the
    // `AsyncFd` that owns it is dropped.
    Ok(unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?)
}

async fn watch(socket: AsyncFd<OwnedFd>, log: &NetworkLog, relay: bool) -> std::io::Result<()> {
    let mut diag = None;
    let listener = loop {
        let mut ready = socket.readable().await?;
        let Ok(got) = ready.try_io(|s| receive(s.get_ref())) else {
            continue;
        };
        match got? {
            Handed::Diag(fd) => {
                // Its answers come at once; a kernel that never answered
                // must not hold the runtime's thread.
                let wait = Some(std::time::Duration::from_millis(200));
                rustix::net::sockopt::set_socket_timeout(
                    &fd,
                    rustix::net::sockopt::Timeout::Recv,
                    wait,
                )?;
                diag = Some(fd);
            }
            Handed::Listener(fd) => break fd,
            Handed::Nothing => return Ok(()),
        }
    };
    drop(socket);
    let listener = register(listener)?;
    let watched = Watched {
        log,
        relay,
        diag: diag.as_ref(),
    };
    loop {
        let mut ready = listener.readable().await?;
        match pending(listener.get_ref()) {
            Pending::Notification => watched.handle(listener.get_ref()),
            Pending::Nothing => ready.clear_ready(),
            Pending::Ended => return Ok(()),
        }
    }
}

/// One message of the sandbox's hand-over
/// ([`crate::pool::sandbox::helper::handover`]).
enum Handed {
    /// The session's `NETLINK_SOCK_DIAG` socket.
    Diag(OwnedFd),
    /// The notifier's listener.
    Listener(OwnedFd),
    /// The socket closed, or the sandbox said why it has no listener
    /// (logged).
    Nothing,
}

/// The next message of the hand-over on `socket`.
fn receive(socket: &OwnedFd) -> std::io::Result<Handed> {
    use crate::pool::sandbox::helper::handover;
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut text = [0u8; 512];
    let got = rustix::net::recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut text)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut fd = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for received in fds {
                fd.get_or_insert(received);
            }
        }
    }
    let text = &text[..got.bytes.min(text.len())];
    Ok(match fd {
        Some(fd) if text == handover::DIAG => Handed::Diag(fd),
        Some(fd) if text == handover::LISTENER => Handed::Listener(fd),
        _ => {
            if let Some(why) = text.strip_prefix(handover::WHY) {
                let why = String::from_utf8_lossy(why);
                tracing::warn!(
                    "a session's attempts outside the egress proxy go unrecorded: {why:?}"
                );
            }
            Handed::Nothing
        }
    })
}

enum Pending {
    Notification,
    Nothing,
    Ended,
}

/// Whether a notification waits on `listener` (then `SECCOMP_IOCTL_NOTIF_RECV`
/// does not block: the kernel counts one for each), none does, or no process
/// of the session is left.
fn pending(listener: &OwnedFd) -> Pending {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(listener, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let ready = rustix::event::poll(&mut fds, Some(&now)).unwrap_or(0);
    let revents = fds[0].revents();
    if ready > 0 && revents.contains(PollFlags::IN) {
        Pending::Notification
    } else if ready > 0 && revents.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) {
        Pending::Ended
    } else {
        Pending::Nothing
    }
}

/// What a session's watch holds while it takes notifications.
struct Watched<'a> {
    log: &'a NetworkLog,
    /// The session has the egress relay on [`super::RELAY_PORT`].
    relay: bool,
    /// The session's `NETLINK_SOCK_DIAG` socket, when the sandbox made one.
    diag: Option<&'a OwnedFd>,
}

impl Watched<'_> {
    /// Takes one notification, lets its call go on, and logs it when it is an
    /// attempt to reach something outside the session.
    fn handle(&self, listener: &OwnedFd) {
        let fd = listener.as_raw_fd();
        // SAFETY: a plain C struct of integers, which the kernel wants zeroed.
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: ioctl(2) filling `req`, which outlives the call.
        if unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &raw mut req) } != 0 {
            return; // ENOENT: the caller died meanwhile
        }
        let address = if self.log.full() {
            None
        } else {
            read_address(&req)
        };
        // The address was read from the process the notification names, not
        // from one that took its pid after it died.
        // SAFETY: ioctl(2) reading the id, which outlives the call.
        let valid =
            unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &raw const req.id) } == 0;
        let mut resp = libc::seccomp_notif_resp {
            id: req.id,
            val: 0,
            error: 0,
            flags: u32::try_from(libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE).unwrap_or(1),
        };
        // SAFETY: ioctl(2) reading `resp`, which outlives the call. It fails
        // only when the caller died meanwhile.
        unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &raw mut resp) };
        let Some(address) = address.filter(|_| valid) else {
            return;
        };
        if self.outside(req.pid, address) {
            self.log.push(
                &address.ip().to_string(),
                address.port(),
                Decision::Denied,
                Via::Direct,
            );
        }
    }

    /// Whether `address` is outside the session: anything but its own
    /// loopback, and on its loopback a port where nothing of the session
    /// listens (and not the relay's).
    fn outside(&self, pid: u32, address: SocketAddr) -> bool {
        let ip = address.ip();
        if !(ip.is_loopback() || ip.is_unspecified()) {
            return true;
        }
        if self.relay && address.port() == super::RELAY_PORT {
            return false;
        }
        let listening = match self.diag {
            Some(diag) => super::diag::listens(diag, address.port()),
            None => Err(std::io::Error::other("no diag socket")),
        };
        !listening.unwrap_or_else(|_| listens_in_proc(pid, address.port()))
    }
}

/// The socket address a `connect` (argument 1, length argument 2), a
/// `sendto` (argument 4, length argument 5) or a `sendmsg` (the `msg_name`
/// and `msg_namelen` of the `msghdr` at argument 1) gives, read from the
/// caller's memory; `None` for another family, none, or an unreadable one.
fn read_address(req: &libc::seccomp_notif) -> Option<SocketAddr> {
    let args = req.data.args;
    let mem = std::fs::File::open(format!("/proc/{}/mem", req.pid)).ok()?;
    let nr = i64::from(req.data.nr);
    let (pointer, len) = if nr == libc::SYS_connect {
        (args[1], args[2])
    } else if nr == libc::SYS_sendmsg {
        // struct msghdr begins { void *msg_name; socklen_t msg_namelen; … }.
        let mut head = [0u8; std::mem::size_of::<usize>() + 4];
        mem.read_exact_at(&mut head, args[1]).ok()?;
        let (name, len) = head.split_at(std::mem::size_of::<usize>());
        let name = usize::from_ne_bytes(name.try_into().ok()?);
        let len = u32::from_ne_bytes(len.try_into().ok()?);
        (u64::try_from(name).ok()?, u64::from(len))
    } else {
        (args[4], args[5])
    };
    let len = usize::try_from(len).ok()?.min(MAX_ADDRESS_BYTES);
    if pointer == 0 || len < 2 {
        return None;
    }
    let mut bytes = vec![0u8; len];
    mem.read_exact_at(&mut bytes, pointer).ok()?;
    parse_address(&bytes)
}

/// A `sockaddr_in` or `sockaddr_in6` (as the caller's machine lays it out);
/// `None` for any other family (`AF_UNIX`, `AF_UNSPEC`) or a short one.
fn parse_address(bytes: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]));
    let port = u16::from_be_bytes([*bytes.get(2)?, *bytes.get(3)?]);
    match family {
        libc::AF_INET => {
            let ip: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
            Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip)), port))
        }
        libc::AF_INET6 => {
            let ip: [u8; 16] = bytes.get(8..24)?.try_into().ok()?;
            let ip = Ipv6Addr::from(ip);
            Some(SocketAddr::new(ip.to_canonical(), port))
        }
        _ => None,
    }
}

/// Whether a TCP socket listens, or a UDP socket is bound, on `port` in the
/// network namespace of process `pid`, from its `/proc/PID/net` tables: the
/// way without a diag socket, some milliseconds (the kernel walks every TCP
/// connection of the machine to print them).
fn listens_in_proc(pid: u32, port: u16) -> bool {
    const LISTEN: &str = "0A";
    ["tcp", "tcp6", "udp", "udp6"].iter().any(|table| {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            return false;
        };
        let udp = table.starts_with("udp");
        text.lines().skip(1).any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local_port = fields
                .get(1)
                .and_then(|a| a.rsplit_once(':'))
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            local_port == Some(port) && (udp || fields.get(3) == Some(&LISTEN))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sockaddr_in(ip: [u8; 4], port: u16) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&u16::try_from(libc::AF_INET).unwrap().to_ne_bytes());
        b.extend_from_slice(&port.to_be_bytes());
        b.extend_from_slice(&ip);
        b.extend_from_slice(&[0; 8]);
        b
    }

    #[test]
    fn socket_addresses_are_read_as_the_kernel_lays_them_out() {
        assert_eq!(
            parse_address(&sockaddr_in([10, 1, 2, 3], 80)),
            Some("10.1.2.3:80".parse().unwrap())
        );
        let mut six = Vec::new();
        six.extend_from_slice(&u16::try_from(libc::AF_INET6).unwrap().to_ne_bytes());
        six.extend_from_slice(&443u16.to_be_bytes());
        six.extend_from_slice(&[0; 4]);
        six.extend_from_slice(
            &"::ffff:169.254.169.254"
                .parse::<Ipv6Addr>()
                .unwrap()
                .octets(),
        );
        six.extend_from_slice(&[0; 4]);
        assert_eq!(
            parse_address(&six),
            Some("169.254.169.254:443".parse().unwrap()),
            "a mapped IPv4 address is named as IPv4"
        );
        let unix = [1u8, 0, b'/', b't'];
        assert_eq!(parse_address(&unix), None);
        assert_eq!(parse_address(&sockaddr_in([1, 2, 3, 4], 80)[..6]), None);
        assert_eq!(parse_address(&[]), None);
    }

    #[test]
    fn only_what_leaves_the_session_is_outside() {
        let me = std::process::id();
        let diag = super::super::diag::socket().unwrap();
        let log = NetworkLog::default();
        for diag in [None, Some(&diag)] {
            let with_relay = Watched {
                log: &log,
                relay: true,
                diag,
            };
            let without = Watched {
                relay: false,
                ..with_relay
            };
            assert!(with_relay.outside(me, "10.1.2.3:80".parse().unwrap()));
            assert!(
                !with_relay.outside(me, "127.0.0.1:3128".parse().unwrap()),
                "the relay"
            );
            assert!(
                without.outside(me, "127.0.0.1:3128".parse().unwrap()),
                "no relay here"
            );
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let here = listener.local_addr().unwrap();
            assert!(!without.outside(me, here), "{diag:?}");
            let udp = std::net::UdpSocket::bind("[::1]:0").unwrap();
            let six = SocketAddr::from((Ipv6Addr::LOCALHOST, udp.local_addr().unwrap().port()));
            assert!(!without.outside(me, six), "{diag:?}");
            drop((listener, udp));
            assert!(without.outside(me, here), "{diag:?}");
        }
    }
}
