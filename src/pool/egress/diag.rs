//! Which ports something of a session listens on, asked of the kernel over a
//! `NETLINK_SOCK_DIAG` socket made inside the session's network namespace
//! (by the sandbox's init, [`crate::pool::sandbox::helper::handover::DIAG`]):
//! the connect watch's way to tell a session talking to itself on its own
//! loopback from an attempt to reach the host. A dump of listening TCP
//! sockets walks only the listening table (tens of microseconds), where
//! `/proc/PID/net/tcp` walks every connection of the machine (milliseconds).
//! The messages are built and read by `netlink-packet-sock-diag`
//! (`sock_diag(7)`: `SOCK_DIAG_BY_FAMILY`, `inet_diag_req_v2`).

use std::os::fd::OwnedFd;

use netlink_packet_core::{
    NLM_F_DUMP, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload,
};
use netlink_packet_sock_diag::SockDiagMessage;
use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP, IPPROTO_UDP};
use netlink_packet_sock_diag::inet::{ExtensionFlags, InetRequest, SocketId, StateFlags};

/// The most bytes one read of a dump's answer takes (the kernel fills a
/// datagram up to about a page per read; this holds several).
const READ_BYTES: usize = 32 * 1024;

/// A `NETLINK_SOCK_DIAG` socket of this process's network namespace (the
/// sandbox's init makes a session's with it).
///
/// # Errors
///
/// The kernel refuses the socket.
pub fn socket() -> std::io::Result<OwnedFd> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType, netlink};
    Ok(rustix::net::socket_with(
        AddressFamily::NETLINK,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        Some(netlink::SOCK_DIAG),
    )?)
}

/// Whether a TCP socket listens, or a UDP socket is bound, on `port` (any
/// address, IPv4 or IPv6) in the namespace of `diag`.
///
/// # Errors
///
/// The socket cannot be written or read, or an answer is malformed (the
/// caller then looks another way).
pub fn listens(diag: &OwnedFd, port: u16) -> std::io::Result<bool> {
    for (family, protocol, states) in [
        (AF_INET, IPPROTO_TCP, StateFlags::LISTEN),
        (AF_INET6, IPPROTO_TCP, StateFlags::LISTEN),
        (AF_INET, IPPROTO_UDP, StateFlags::all()),
        (AF_INET6, IPPROTO_UDP, StateFlags::all()),
    ] {
        if dump_has_port(diag, family, protocol, states, port)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Dumps the sockets of `family` and `protocol` in `states` and says
/// whether one has the local port `port` (reading the whole dump, so the
/// next request starts clean).
fn dump_has_port(
    diag: &OwnedFd,
    family: u8,
    protocol: u8,
    states: StateFlags,
    port: u16,
) -> std::io::Result<bool> {
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_DUMP;
    let socket_id = if family == AF_INET {
        SocketId::new_v4()
    } else {
        SocketId::new_v6()
    };
    let mut request = NetlinkMessage::new(
        header,
        SockDiagMessage::InetRequest(InetRequest {
            family,
            protocol,
            extensions: ExtensionFlags::empty(),
            states,
            socket_id,
        })
        .into(),
    );
    request.finalize();
    let mut bytes = vec![0u8; request.buffer_len()];
    request.serialize(&mut bytes);
    rustix::net::send(diag, &bytes, rustix::net::SendFlags::empty())?;
    let mut found = false;
    let mut buf = vec![0u8; READ_BYTES];
    loop {
        let (n, _) = rustix::net::recv(diag, &mut buf, rustix::net::RecvFlags::empty())?;
        let mut offset = 0;
        while offset < n {
            let message = NetlinkMessage::<SockDiagMessage>::deserialize(&buf[offset..n])
                .map_err(std::io::Error::other)?;
            let len = usize::try_from(message.header.length).map_err(std::io::Error::other)?;
            match message.payload {
                NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(r)) => {
                    found |= r.header.socket_id.source_port == port;
                }
                NetlinkPayload::Done(_) => return Ok(found),
                NetlinkPayload::Error(e) => {
                    return Err(std::io::Error::other(format!("sock_diag: {e:?}")));
                }
                _ => {}
            }
            if len == 0 {
                break;
            }
            offset += len;
        }
    }
}
