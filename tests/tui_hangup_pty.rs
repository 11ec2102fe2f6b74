//! The notebook when its terminal goes away (a closed terminal window, a
//! dropped ssh connection): the real binary in a pty whose controlling side
//! is then closed. It must end by itself, promptly, without a panic (its
//! standard error is that dead terminal too), and leave the background pool to
//! `pool stop`, as a normal quit does.

#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod pty;

/// A pty pair of 100x30: (controlling side, terminal side).
fn open_pty() -> (OwnedFd, OwnedFd) {
    let mut master = -1;
    let mut slave = -1;
    let size = libc::winsize {
        ws_row: pty::ROWS,
        ws_col: pty::COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors; no name buffer, no termios.
    let rc = unsafe {
        libc::openpty(
            &raw mut master,
            &raw mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &raw const size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // Not inherited: a child holding the controlling side would keep the
    // terminal from ever going away.
    for fd in [master, slave] {
        // SAFETY: fcntl on descriptors just opened here.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both were just opened and are owned here alone.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// The notebook in a pty whose controlling side is closed once the first
/// frame is up. With `controlling`, the pty is the notebook's controlling
/// terminal (it gets SIGHUP, as under a terminal emulator); without, it is
/// not (no signal: its reads and writes just fail, as for a process started
/// with `nohup` or `setsid`).
fn close_the_terminal_under_the_notebook(controlling: bool) {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (master, slave) = open_pty();
    let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().unwrap());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sessionpad"));
    cmd.current_dir(work.path())
        .env("SESSIONPAD_DATA_DIR", data.path())
        .env("SESSIONPAD_CONFIG", data.path().join("no-config.toml"))
        .env("TERM", "xterm-256color")
        .env_remove("POOL_MANAGEMENT_ENDPOINT")
        .stdin(stdio(&slave))
        .stdout(stdio(&slave))
        .stderr(stdio(&slave));
    // SAFETY: setsid and ioctl are async-signal-safe; the child makes the pty
    // its controlling terminal, as a terminal emulator's shell has it.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 || (controlling && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0) {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    drop(slave);

    // Read what it draws until the first frame is up and the pool is attached
    // (the status line says `local`), as a person would see it.
    // Non-blocking reads on the one descriptor of the controlling side, so that
    // closing it below really closes the terminal.
    // SAFETY: fcntl on a descriptor owned here.
    unsafe {
        let flags = libc::fcntl(master.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(master.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    let mut reader = std::fs::File::from(master);
    let mut buf = [0u8; 8192];
    let mut screen = vt100::Parser::new(pty::ROWS, pty::COLS, 0);
    let start = Instant::now();
    loop {
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            screen.process(&buf[..n]);
        }
        let text = screen.screen().contents();
        if pty::shows_local(&text) && text.contains("In [1]") {
            break;
        }
        assert!(
            start.elapsed() < pty::POOL_DEADLINE,
            "the notebook did not come up; screen:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Esc: the notebook takes the keys and the editor's cursor is hidden (so
    // restoring the terminal has a cursor to show). Then keep reading while
    // the graphics probe and the pool's attach settle, as a terminal does.
    std::io::Write::write_all(&mut reader, b"\x1b").unwrap();
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_secs(5) {
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            screen.process(&buf[..n]);
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    // The terminal goes away: its controlling side is closed (the child gets
    // SIGHUP, and every read and write of the terminal fails from now on).
    drop(reader);

    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > Duration::from_secs(30) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    pty::stop_background_pools(data.path());
    let log = std::fs::read_to_string(data.path().join("logs/sessionpad.log")).unwrap_or_default();
    let Some(status) = status else {
        panic!("the notebook was still running 30 s after its terminal went away; log:\n{log}");
    };
    assert!(
        !log.contains("panic"),
        "the notebook panicked when its terminal went away (exit {status}); log:\n{log}"
    );
    assert_ne!(
        status.code(),
        Some(101),
        "the notebook ended with a panic's exit status; log:\n{log}"
    );
}

#[test]
fn the_notebook_ends_without_a_panic_when_its_terminal_hangs_up() {
    close_the_terminal_under_the_notebook(true);
}

#[test]
fn the_notebook_ends_without_a_panic_when_its_terminal_just_fails() {
    close_the_terminal_under_the_notebook(false);
}
