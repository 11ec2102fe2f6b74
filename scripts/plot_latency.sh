#!/usr/bin/env bash
# F5 to the plot on screen in xterm with sixel (issue 23): figures for
# BENCHMARKS.md ("Plots in a real terminal").
#
# sessionpad runs in Debian's xterm started as a VT340 (`-ti vt340`, 256 colour
# registers) under Xvfb. Xvfb keeps its screen in a memory-mapped file
# (`-fbdir`), read every 2 ms: the plot is on screen from the first read that
# shows its line's blue at full resolution (a whole plot; half-blocks show none).
# Each round: a cell that pushes the previous plot out of view, then a plot cell
# typed with xdotool; the time runs from `xdotool key F5` to the plot on screen.
# The cell's own time is what the pool's flight recorder says the call took
# (`sessionpad log --json`, duration_ms); the difference is what sessionpad and
# xterm add (the encoding, the frame, the sixel drawn).
#
# Usage: scripts/plot_latency.sh [ROUNDS]   (default 10; SESSIONPAD_BIN=path to
#        measure another build than the release one)
# Needs: xvfb xterm xdotool (apt-get install), the release build (made here), the
#        local pool's Python environment (numpy is taken from it).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-10}"
bin="${SESSIONPAD_BIN:-target/release/sessionpad}"
[ -n "${SESSIONPAD_BIN:-}" ] || cargo build --release --quiet
for tool in Xvfb xterm xdotool; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install xvfb xterm xdotool)" >&2; exit 1; }
done
cache="${SESSIONPAD_CACHE_DIR:-$HOME/.cache/sessionpad}"
python=$(ls -d "$cache"/python/env-*/bin/python 2>/dev/null | head -n 1)
[ -x "$python" ] || { echo "no local pool environment in $cache yet: run sessionpad once" >&2; exit 1; }
exec "$python" - "$rounds" "$(realpath "$bin")" <<'PY'
import json, mmap, os, statistics, subprocess, sys, tempfile, time
import numpy as np

rounds, binary = int(sys.argv[1]), sys.argv[2]
tmp = tempfile.mkdtemp(prefix="sp-plot-latency-")
fbdir, data, work = (os.path.join(tmp, d) for d in ("fb", "data", "work"))
for d in (fbdir, data, work):
    os.makedirs(d)
xvfb = subprocess.Popen(
    ["Xvfb", "-displayfd", "1", "-screen", "0", "1280x800x24", "-fbdir", fbdir, "-nolisten", "tcp"],
    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
display = ":" + xvfb.stdout.readline().strip()
env = dict(os.environ, DISPLAY=display, SESSIONPAD_DATA_DIR=data,
           SESSIONPAD_CONFIG=os.path.join(data, "none.toml"), SESSIONPAD_LOG="info")
term = subprocess.Popen(
    ["xterm", "-ti", "vt340", "-xrm", "XTerm*numColorRegisters: 256", "-fa", "DejaVu Sans Mono",
     "-fs", "12", "-geometry", "100x30+0+0", "-e", binary], cwd=work, env=env)

def xdotool(*args):
    subprocess.run(["xdotool", *args], env=env, check=True, stdout=subprocess.DEVNULL)

def screen():
    """The screen's pixels (rows, columns, BGRX) from Xvfb's XWD file."""
    with open(os.path.join(fbdir, "Xvfb_screen0"), "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    header = np.frombuffer(mm, dtype=">u4", count=25)
    size, width, height, line, ncolors = header[0], header[4], header[5], header[12], header[19]
    start = int(size) + int(ncolors) * 12
    pixels = np.frombuffer(mm, dtype=np.uint8, count=int(line) * int(height), offset=start)
    return pixels.reshape(int(height), int(line) // 4, 4)[:, : int(width)]

def plot_pixels(pixels):
    b, g, r = (pixels[:, :, i].astype(np.int16) for i in range(3))
    return int(((b > 150) & (r < 90) & (g > 80) & (g < 160)).sum())

def wait(what, predicate, deadline):
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > deadline:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.002)

time.sleep(2)
xdotool("search", "--sync", "--onlyvisible", "--class", "xterm")
win = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "xterm"], env=env,
                     capture_output=True, text=True).stdout.split()[0]
xdotool("windowfocus", win)
# Warm up: the pool, the kernel, matplotlib's import and font cache.
xdotool("type", "--delay", "10", "import matplotlib.pyplot as plt; plt.plot([1, 2]); plt.show()")
xdotool("key", "F5")
wait("the first plot", lambda: plot_pixels(screen()) > 300, 300)
fb = screen()
samples = []
for n in range(rounds):
    xdotool("type", "--delay", "5", "print('\\n' * 60)")
    xdotool("key", "F5")
    wait("the old plot out of view", lambda: plot_pixels(fb) < 20, 30)
    time.sleep(0.3)
    xdotool("type", "--delay", "5", f"plt.plot([1, 4, 9, {16 + n}]); plt.show()")
    time.sleep(0.2)
    t0 = time.monotonic()
    xdotool("key", "F5")
    wait("the plot", lambda: plot_pixels(fb) > 300, 30)
    samples.append(time.monotonic() - t0)
    time.sleep(0.3)
calls = subprocess.run([binary, "log", "--json"], env=env, capture_output=True, text=True).stdout
cells = [json.loads(l) for l in calls.splitlines() if l.strip()]
own = [c["duration_ms"] / 1000 for c in cells if c.get("kind") == "code" and "plt.plot([1, 4, 9" in c.get("code", "")]
term.terminate()
subprocess.run([binary, "pool", "stop"], env=env, capture_output=True)
xvfb.terminate()
ms = lambda xs: ", ".join(f"{x * 1000:.0f}" for x in xs)
print(f"F5 to the plot on screen (ms): {ms(samples)}")
print(f"the cell's own time (ms):     {ms(own)}")
extra = [s - o for s, o in zip(samples, own)]
print(f"added by sessionpad and xterm (ms): {ms(extra)}")
print(f"median: F5 to plot {statistics.median(samples) * 1000:.0f} ms, cell {statistics.median(own) * 1000:.0f} ms, "
      f"added {statistics.median(extra) * 1000:.0f} ms (max {max(extra) * 1000:.0f}); load {os.getloadavg()[0]:.2f}")
PY
