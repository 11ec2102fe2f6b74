//! The egress relay inside a proxied session (issue 29): a process the
//! sandbox's init forks before the program, with the program's privileges
//! (its uid, no capabilities, `no_new_privs`, the seccomp filter), that takes
//! TCP connections on `127.0.0.1:`[`super::super::egress::RELAY_PORT`] in the
//! session's network namespace (which has only `lo`) and joins each to a new
//! connection to the pool's egress proxy, on the Unix socket in the session's
//! runtime folder. It reads nothing of what it carries: the proxy judges.
//! It ends with the init (`PR_SET_PDEATHSIG`).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Connections relayed at once; more wait in the listener's backlog.
const MAX_CONNECTIONS: usize = 64;

/// Serves `listener` for ever, relaying each connection to `socket`.
pub fn serve(listener: &TcpListener, socket: &Path) -> ! {
    let open = Arc::new(AtomicUsize::new(0));
    let socket: Arc<PathBuf> = Arc::new(socket.to_path_buf());
    loop {
        let Ok((client, _)) = listener.accept() else {
            // Out of descriptors or memory: wait rather than spin.
            std::thread::sleep(std::time::Duration::from_millis(10));
            continue;
        };
        while open.load(Ordering::Acquire) >= MAX_CONNECTIONS {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        open.fetch_add(1, Ordering::AcqRel);
        let (open, socket) = (Arc::clone(&open), Arc::clone(&socket));
        let spawned = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || {
                relay_one(client, &socket);
                open.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            // Out of processes or memory: the connection is dropped (closed).
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Joins `client` to a new connection to the proxy until both directions end.
fn relay_one(client: TcpStream, socket: &Path) {
    let Ok(proxy) = UnixStream::connect(socket) else {
        return;
    };
    let (Ok(client_back), Ok(proxy_back)) = (client.try_clone(), proxy.try_clone()) else {
        return;
    };
    let up = std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            copy(client_back, proxy_back, |s| {
                let _ = s.shutdown(Shutdown::Write);
            });
        });
    copy(proxy, client, |s| {
        let _ = s.shutdown(Shutdown::Write);
    });
    if let Ok(up) = up {
        let _ = up.join();
    }
}

/// Copies `from` to `to` until `from` ends or either fails, then lets `end`
/// close `to`'s writing half.
fn copy<R: Read, W: Write>(mut from: R, mut to: W, end: impl FnOnce(&W)) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    end(&to);
}
