//! End to end, in a pseudo-terminal: the notebook on `sessionpad serve
//! --egress allow=127.0.0.1:PORT` (issue 29). A cell's request to the
//! allowed server on this machine succeeds through the pool's proxy, one to
//! another loopback port is refused, a raw socket to the allowed server finds
//! nothing (the session's own `lo`), and the line under the cell says all three
//! (`network: 127.0.0.1:A allowed · 127.0.0.1:B blocked · 127.0.0.1:A blocked
//! (direct)`); the saved notebook keeps them. Traffic goes to loopback only.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
mod pty;

use std::io::{Read, Write};

use pty::{CELL_DEADLINE, F5, Pty, has_line};

/// A one-thread HTTP server on 127.0.0.1 answering `hello` to each request.
fn server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        }
    });
    port
}

#[test]
fn the_cell_says_what_its_code_reached_and_what_was_blocked() {
    if sessionpad::pool::Sandbox::detect(true, false).is_err() {
        common::sandbox_tests_skipped("the sandbox cannot be built here");
        return;
    }
    let (allowed, other) = (server(), server());
    let data = tempfile::tempdir().expect("temp data dir");
    let work = tempfile::tempdir().expect("temp working dir");
    let mut cmd = common::serve_command(data.path(), "tok-egress", 1);
    cmd.args(["--egress", &format!("allow=127.0.0.1:{allowed}")])
        .stderr(std::process::Stdio::null());
    let (mut serve, endpoint) = common::spawn_serve(cmd);
    let mut pty = Pty::spawn_in(
        data.path(),
        work.path(),
        &["--endpoint", &endpoint, "--token", "tok-egress"],
    );
    pty.wait_for("the editor", CELL_DEADLINE, |s| s.contains("In ["));
    pty.send(&format!(
        "import urllib.request as u; print('got', u.urlopen('http://127.0.0.1:{allowed}/').read().decode()); \
         exec(\"try: u.urlopen('http://127.0.0.1:{other}/')\\nexcept Exception as e: print('refused', e)\"); \
         import socket; exec(\"try: socket.create_connection(('127.0.0.1', {allowed}))\\nexcept OSError as e: print('raw', e)\"){F5}"
    ));
    let line = format!(
        "network: 127.0.0.1:{allowed} allowed · 127.0.0.1:{other} blocked · \
         127.0.0.1:{allowed} blocked (direct)"
    );
    let screen = pty.wait_for("the network line", CELL_DEADLINE, |s| s.contains(&line));
    assert!(has_line(&screen, "got hello"), "{screen}");
    assert!(screen.contains("refused HTTP Error 403"), "{screen}");
    assert!(screen.contains("raw [Errno 111]"), "{screen}");
    pty.quit_with(pty::CTRL_Q);
    let doc = pty::saved_notebook(data.path());
    let network = &doc["cells"][0]["metadata"]["sessionpad"]["network"];
    assert_eq!(network.as_array().map(Vec::len), Some(3), "{doc}");
    assert_eq!(network[1]["decision"], "denied", "{doc}");
    assert_eq!(network[2]["via"], "direct", "{doc}");
    let pid = serve.id();
    common::end_gracefully(&mut serve);
    common::assert_pool_left_nothing(pid);
}
