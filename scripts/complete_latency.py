#!/usr/bin/env python3
"""Tab completion, key to screen (issue 27 item 1): how long from the Tab key
until the list of candidates has been written to the terminal, on the local
pool. Figures go to BENCHMARKS.md ("Tab completion").

The real binary runs in a pseudo-terminal (100x30) on a fresh data dir with
the embedded local pool. Once the pool is ready it runs `import os`, types
`os.get`, then WARMUP + RUNS times: Tab, then reads what the UI writes until
the list's text has arrived (`get_exec_path`, a candidate that shows only in
the list: the editor keeps `os.get`), which is the time taken; then Esc closes
the list and the script waits until the screen is quiet. Each time covers:
the key read, the request to the session worker, the loopback POST to the
pool, the kernel's completion, the answer back and the frame drawn and written.

Usage: scripts/complete_latency.py [BINARY] [RUNS]
  BINARY  default $CARGO_TARGET_DIR/debug/sessionpad (or target/debug/...);
          build it first (`cargo build`, or `--release`).
Needs only Python 3's standard library.
"""

import os
import pty
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import fcntl
import time

COLS, ROWS = 100, 30
WARMUP = 5
CSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
MARKER = b"get_exec_path"


def default_binary():
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    return os.path.join(target, "debug", "sessionpad")


def spawn(binary, data_dir):
    pid, fd = pty.fork()
    if pid == 0:
        env = dict(os.environ)
        env.update(
            SESSIONPAD_DATA_DIR=data_dir,
            SESSIONPAD_CONFIG=os.path.join(data_dir, "no-config.toml"),
            TERM="xterm-256color",
        )
        env.pop("POOL_MANAGEMENT_ENDPOINT", None)
        os.execve(binary, [binary], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    return pid, fd


def read_until(fd, pred, deadline):
    """Reads the UI's output until pred(text so far, escapes removed) holds;
    returns the time it held (time.monotonic())."""
    seen = b""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        at = time.monotonic()
        seen += chunk
        # Unchanged cells are skipped with cursor moves: compare without spaces.
        if pred(CSI.sub(b"", seen).replace(b" ", b"")):
            return at
    raise SystemExit(f"timed out; last output: {CSI.sub(b'', seen)[-400:]!r}")


def settle(fd, quiet=0.3):
    """Reads until nothing comes for `quiet` seconds."""
    while True:
        ready, _, _ = select.select([fd], [], [], quiet)
        if not ready:
            return
        try:
            os.read(fd, 65536)
        except OSError:  # EIO: the UI closed the terminal (it exited)
            return


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else default_binary()
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    data_dir = tempfile.mkdtemp(prefix="complete-latency-")
    pid, fd = spawn(binary, data_dir)
    try:
        read_until(fd, lambda t: "│ready│".encode() in t, 300)
        settle(fd, 1.0)
        os.write(fd, b"import os\x1b[15~")
        read_until(fd, lambda t: b"donein" in t, 60)
        settle(fd)
        for c in b"os.get":
            os.write(fd, bytes([c]))
            time.sleep(0.05)
        settle(fd)
        took = []
        for i in range(WARMUP + runs):
            start = time.monotonic()
            os.write(fd, b"\t")
            shown = read_until(fd, lambda t: MARKER in t, 30)
            if i >= WARMUP:
                took.append((shown - start) * 1000)
            settle(fd)
            os.write(fd, b"\x1b")
            settle(fd)
        took.sort()
        p50 = statistics.median(took)
        p90 = took[min(len(took) - 1, int(round(0.9 * (len(took) - 1))))]
        print(f"binary: {binary}")
        print(f"Tab to list on screen, {len(took)} runs after {WARMUP} warm-up:")
        print(f"  p50 {p50:.1f} ms  p90 {p90:.1f} ms  min {took[0]:.1f} ms  max {took[-1]:.1f} ms")
        print("  all: " + " ".join(f"{t:.1f}" for t in took))
    finally:
        quit_and_stop(binary, pid, fd, data_dir)


def quit_and_stop(binary, pid, fd, data_dir):
    """Clears the cell and quits (Ctrl+C, Ctrl+Q), SIGTERM after 15 s; then
    stops the background local pool the notebook leaves running."""
    os.write(fd, b"\x03")
    time.sleep(0.3)
    os.write(fd, b"\x11")
    end = time.monotonic() + 15
    while time.monotonic() < end:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            break
        settle(fd, 0.1)
    else:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    env = dict(os.environ, SESSIONPAD_DATA_DIR=data_dir,
               SESSIONPAD_CONFIG=os.path.join(data_dir, "no-config.toml"))
    subprocess.run([binary, "pool", "stop"], env=env, capture_output=True, check=False)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
