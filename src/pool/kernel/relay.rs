//! The pool's end of a kernel's sockets: a relay between the pool's ZeroMQ
//! sockets and the kernel's IPC sockets that bounds what one message from the
//! kernel may cost the pool ([`MAX_KERNEL_MESSAGE_BYTES`]).
//!
//! For each channel the pool reads (shell, IOPub, control; it never connects
//! stdin or the heartbeat) the relay listens on a unix socket in a folder of
//! the pool's own, outside the kernel's sandbox, and the pool's ZeroMQ socket
//! connects there instead of to the kernel. Each connection is relayed to the
//! kernel's socket: what the pool sends passes as it is, what the kernel sends
//! passes through a [`FrameGuard`]. A message over the cap stops that
//! connection before the pool's ZeroMQ decoder learns its length, and the
//! relay says so ([`Relay::tripped`]): the execution then ends with an error
//! and the kernel is replaced, as after the memory limit.
//!
//! The relay holds no message: a fixed buffer per direction, so a connection
//! costs the same however much passes through it, and a kernel the pool does
//! not read is held back by the socket buffers as before.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jupyter_protocol::connection_info::ConnectionInfo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::zmtp::{FrameGuard, Refused};

/// Most bytes one message from a kernel may declare, on any channel: 16 MiB
/// (the lengths of its frames, plus [`super::zmtp::FRAME_COST`] per frame).
///
/// The pool's ZeroMQ stack holds a whole message before the pool sees it, then
/// parses its JSON into a copy (and a scratch copy when its strings hold
/// escapes), while the execution keeps up to [`super::MAX_STREAM_BYTES`] of a
/// stream: a message just under this cap grows `serve` by a few times it at the
/// peak, which must stay inside the 64 MB a cell's output may cost (issue 10;
/// measured in `tests/kernel_message_attacks.rs`). The stream cap stays 8 MiB:
/// output printed in many smaller messages is cut there with a marker, as
/// before. A bigger message (one huge `print`, or code writing on the kernel's
/// sockets itself) ends the execution with an error in the shape of the
/// service's "Execution aborted" (`aca-api.md` §6), and the next execution gets
/// a fresh kernel.
pub const MAX_KERNEL_MESSAGE_BYTES: u64 = 16 * 1024 * 1024;

/// How long the relay keeps trying to reach a kernel socket that is not there
/// yet (the kernel binds its sockets a moment after it starts).
const CONNECT_LIMIT: Duration = Duration::from_secs(60);

/// Bytes read at once from either side.
const CHUNK: usize = 64 * 1024;

/// A channel the relay stopped, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tripped {
    /// The channel: `shell`, `iopub` or `control`.
    pub channel: &'static str,
    /// What the kernel sent.
    pub why: Refused,
}

impl Tripped {
    /// The execution's error text (stderr), in the shape of the service's
    /// "Execution aborted" failures (`aca-api.md` §6).
    pub fn explain(&self) -> String {
        let what = match self.why {
            Refused::TooLarge { declared } => format!(
                "the kernel sent a message of at least {} on its {} channel, over the local \
                 pool's limit of {} for one message (print large output in parts)",
                crate::protocol::limits::human_bytes(declared),
                self.channel,
                crate::protocol::limits::human_bytes(MAX_KERNEL_MESSAGE_BYTES),
            ),
            Refused::BadFlags(flags) => format!(
                "the kernel broke the ZeroMQ framing on its {} channel (flags {flags:#04x})",
                self.channel
            ),
        };
        format!(
            "Execution aborted: {what}; the kernel was stopped and the next execution starts \
             a fresh session state.\n"
        )
    }
}

/// The relays of one kernel's channels. Dropping it ends them (and their
/// connections) and removes its folder.
pub struct Relay {
    /// One task per channel; aborted when the relay is dropped.
    _tasks: JoinSet<()>,
    tripped: watch::Receiver<Option<Tripped>>,
    dir: PathBuf,
}

impl Relay {
    /// Listens for the pool's sockets in `dir` (created, mode 0700; a folder
    /// the kernel's sandbox does not bind) and relays the shell, IOPub and
    /// control channels to the kernel's sockets described by `kernel` (IPC).
    ///
    /// Returns the relay and the connection the pool's sockets use: `kernel`'s,
    /// with its IPC paths under `dir` (same ports, same key).
    ///
    /// # Errors
    ///
    /// The folder cannot be made or a socket cannot be bound there.
    pub fn start(kernel: &ConnectionInfo, dir: &Path) -> std::io::Result<(Self, ConnectionInfo)> {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::remove_dir_all(dir);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let mut pool_side = kernel.clone();
        pool_side.ip = dir.join("r").to_string_lossy().into_owned();
        let (trip, tripped) = watch::channel(None);
        let mut tasks = JoinSet::new();
        for (channel, port) in [
            ("shell", kernel.shell_port),
            ("iopub", kernel.iopub_port),
            ("control", kernel.control_port),
        ] {
            let listener = UnixListener::bind(format!("{}-{port}", pool_side.ip))?;
            let upstream = PathBuf::from(format!("{}-{port}", kernel.ip));
            tasks.spawn(serve_channel(listener, upstream, channel, trip.clone()));
        }
        Ok((
            Self {
                _tasks: tasks,
                tripped,
                dir: dir.to_path_buf(),
            },
            pool_side,
        ))
    }

    /// The channel stopped so far, if any.
    pub fn tripped_now(&self) -> Option<Tripped> {
        *self.tripped.borrow()
    }

    /// Waits until a channel is stopped (pending forever otherwise).
    pub async fn tripped(&mut self) -> Tripped {
        loop {
            if let Some(t) = *self.tripped.borrow_and_update() {
                return t;
            }
            if self.tripped.changed().await.is_err() {
                // Every relay task ended without tripping: nothing more to say.
                std::future::pending::<()>().await;
            }
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Accepts the pool's connections to one channel and relays each to the
/// kernel's socket at `upstream`.
async fn serve_channel(
    listener: UnixListener,
    upstream: PathBuf,
    channel: &'static str,
    trip: watch::Sender<Option<Tripped>>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((pool, _)) => {
                    connections.spawn(relay_one(pool, upstream.clone(), channel, trip.clone()));
                }
                Err(e) => {
                    tracing::warn!("kernel relay ({channel}): accept failed: {e}");
                    return;
                }
            },
            Some(_) = connections.join_next() => {}
        }
    }
}

/// Relays one connection of the pool to the kernel's socket until either side
/// closes or the kernel sends a message over the cap.
async fn relay_one(
    pool: UnixStream,
    upstream: PathBuf,
    channel: &'static str,
    trip: watch::Sender<Option<Tripped>>,
) {
    let Some(kernel) = connect(&upstream).await else {
        tracing::warn!(
            "kernel relay ({channel}): cannot reach {}",
            upstream.display()
        );
        return;
    };
    let (mut pool_read, mut pool_write) = pool.into_split();
    let (mut kernel_read, mut kernel_write) = kernel.into_split();
    let to_kernel = tokio::io::copy(&mut pool_read, &mut kernel_write);
    let from_kernel = guarded_copy(&mut kernel_read, &mut pool_write);
    tokio::select! {
        _ = to_kernel => {}
        refused = from_kernel => if let Some(why) = refused {
            tracing::warn!("kernel relay ({channel}): stopped: {why:?}");
            trip.send_if_modified(|t| {
                let first = t.is_none();
                if first {
                    *t = Some(Tripped { channel, why });
                }
                first
            });
        },
    }
}

/// Connects to the kernel's socket, retrying while it is not bound yet.
async fn connect(path: &Path) -> Option<UnixStream> {
    let deadline = Instant::now() + CONNECT_LIMIT;
    loop {
        match UnixStream::connect(path).await {
            Ok(s) => return Some(s),
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(_) => return None,
        }
    }
}

/// Copies the kernel's stream to the pool through a [`FrameGuard`]. Returns
/// `None` when either side closed, or why the guard stopped it (what came
/// before the refused frame was passed on).
async fn guarded_copy(
    from: &mut tokio::net::unix::OwnedReadHalf,
    to: &mut tokio::net::unix::OwnedWriteHalf,
) -> Option<Refused> {
    let mut guard = FrameGuard::new(MAX_KERNEL_MESSAGE_BYTES);
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => n,
        };
        match guard.check(&buf[..n]) {
            Ok(()) => {
                if to.write_all(&buf[..n]).await.is_err() {
                    return None;
                }
            }
            Err(stop) => {
                let _ = to.write_all(&buf[..stop.forward]).await;
                return Some(stop.why);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel's connection whose sockets are plain listeners in `dir`.
    fn kernel_in(dir: &Path) -> (ConnectionInfo, Vec<UnixListener>) {
        let ip = dir.join("k").to_string_lossy().into_owned();
        let listeners = [1, 2, 4]
            .iter()
            .map(|port| UnixListener::bind(format!("{ip}-{port}")).unwrap())
            .collect();
        let info = super::super::ipc_connection(ip, "k".into());
        (info, listeners)
    }

    #[tokio::test]
    async fn bytes_pass_both_ways_until_a_message_over_the_cap_stops_the_channel() {
        let dir = tempfile::tempdir().unwrap();
        let (info, listeners) = kernel_in(dir.path());
        let (mut relay, pool_info) = Relay::start(&info, &dir.path().join("k.relay")).unwrap();
        assert_eq!(pool_info.key, info.key);
        assert_ne!(pool_info.iopub_url(), info.iopub_url());
        let mut pool = UnixStream::connect(format!("{}-2", pool_info.ip))
            .await
            .unwrap();
        let (mut kernel, _) = listeners[1].accept().await.unwrap();

        // The pool's bytes reach the kernel as they are.
        pool.write_all(b"\xff pool greeting").await.unwrap();
        let mut got = [0u8; 15];
        kernel.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"\xff pool greeting");

        // The kernel's greeting and a small message reach the pool.
        let mut ok = vec![0xff; 64];
        ok.extend_from_slice(&[0x00, 3, b'a', b'b', b'c']);
        kernel.write_all(&ok).await.unwrap();
        let mut got = vec![0u8; ok.len()];
        pool.read_exact(&mut got).await.unwrap();
        assert_eq!(got, ok);
        assert_eq!(relay.tripped_now(), None);

        // A frame declaring more than the cap: the channel stops before its header.
        let mut huge = vec![0x02];
        huge.extend_from_slice(&(MAX_KERNEL_MESSAGE_BYTES + 1).to_be_bytes());
        kernel.write_all(&huge).await.unwrap();
        let tripped = tokio::time::timeout(Duration::from_secs(10), relay.tripped())
            .await
            .unwrap();
        assert_eq!(tripped.channel, "iopub");
        assert!(
            matches!(tripped.why, Refused::TooLarge { declared } if declared > MAX_KERNEL_MESSAGE_BYTES)
        );
        assert!(tripped.explain().starts_with(
            "Execution aborted: the kernel sent a message of at least 16 MiB on its iopub channel"
        ));
        let mut rest = Vec::new();
        pool.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "{rest:?}");

        // Dropped, the relay takes its folder along.
        drop(relay);
        assert!(!dir.path().join("k.relay").exists());
    }
}
