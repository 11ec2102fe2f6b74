#!/usr/bin/env bash
# The local pool's Python environment build, per image (issue 28: at most 10 s
# with a warm uv cache; say how long cold). Each figure is the time from
# starting `sessionpad serve --image IMAGE --ready-sessions 0` until it prints
# its pool management endpoint (it builds or finds the environment first),
# minus nothing: the "ready" row is the same start with the environment
# already built, so the build's own cost is the difference.
#
#   cold   no environment of that image and an empty uv cache (uv downloads
#          every wheel from PyPI);
#   warm   no environment of that image, uv's cache kept from the run before
#          (a new interpreter or changed requirements on a used machine);
#   ready  the environment built (every launch after the first).
#
# Everything lives in a temporary folder (sessionpad's cache and data, uv's
# cache): the user's own environment and caches are not touched. uv itself is
# the one sessionpad finds or installs (the first cold round includes that).
#
# Usage: scripts/env_build_time.sh [ROUNDS] [path/to/sessionpad]
#        (default 3 rounds, target/release/sessionpad)
set -euo pipefail
rounds=${1:-3}
bin=$(realpath "${2:-target/release/sessionpad}")
tmp=$(mktemp -d)
export SESSIONPAD_CACHE_DIR=$tmp/cache SESSIONPAD_DATA_DIR=$tmp/data \
  SESSIONPAD_CONFIG=$tmp/config.toml UV_CACHE_DIR=$tmp/uv
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
: > "$tmp/config.toml"

# Seconds from starting serve until it prints its endpoint; serve is then
# ended with SIGTERM (as Ctrl+C) and waited for.
serve_start() {
  python3 - "$bin" "$1" <<'PY'
import signal, subprocess, sys, time
bin, image = sys.argv[1], sys.argv[2]
start = time.monotonic()
p = subprocess.Popen([bin, "serve", "--port", "0", "--ready-sessions", "0", "--image", image],
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
took = None
for line in p.stdout:
    if "pool management endpoint:" in line:
        took = time.monotonic() - start
        break
p.send_signal(signal.SIGINT)
try:
    p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
print("%.2f" % took if took is not None else "failed")
PY
}

# The bytecode is compiled in the background after a build (while serve runs
# or after it ended): wait for it before removing the folder it writes into.
settle() {
  for _ in $(seq 600); do
    compgen -G "$SESSIONPAD_CACHE_DIR/python/env-*" >/dev/null || return 0
    compgen -G "$SESSIONPAD_CACHE_DIR/python/env-*/.sessionpad-compiled" >/dev/null && return 0
    sleep 0.5
  done
}

p50() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for image in pythonlts minimal; do
  cold=() warm=() ready=()
  for r in $(seq 1 "$rounds"); do
    settle
    rm -rf "$SESSIONPAD_CACHE_DIR"/python/env-* "$UV_CACHE_DIR"
    cold+=("$(serve_start "$image")")
    settle
    rm -rf "$SESSIONPAD_CACHE_DIR"/python/env-*
    warm+=("$(serve_start "$image")")
    ready+=("$(serve_start "$image")")
    echo "$image round $r: cold ${cold[-1]} s, warm ${warm[-1]} s, ready ${ready[-1]} s"
  done
  settle
  echo "$image medians of $rounds: cold $(p50 "${cold[@]}") s, warm $(p50 "${warm[@]}") s, ready $(p50 "${ready[@]}") s"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
