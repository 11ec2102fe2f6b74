#!/usr/bin/env bash
# What the connect watch costs (issue 29: recording an attempt adds no
# measurable time to the cell). Each `connect` of a sandboxed session waits
# for the pool to read its address (a seccomp user notification) before the
# kernel goes on. Two release builds, BEFORE (no watch) and AFTER, alternated
# ROUNDS times, each a `serve` with egress off (the default), one session;
# its cells time, in the session (time.perf_counter), N `connect`s to
# 127.0.0.1:1 (refused on the session's own lo: an attempt the watch records)
# and N to a listener of the session's own (looked at, not recorded), after
# 30 warm-ups, and print the p50 of each in microseconds; then the duration
# of a cell of its own with 20 refused connects and of an empty cell, as
# `exec --json` reports them (`duration_ms`). Traffic goes to loopback only
# (the session's own).
#
# Usage: BEFORE=path AFTER=path scripts/connect_watch_bench.sh [ROUNDS] [N]
#        (default 3, 2000). Needs python3; root or user namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
n=${2:-2000}
before=${BEFORE:?set BEFORE to a sessionpad binary without the watch}
after=${AFTER:?set AFTER to a sessionpad binary with it}
work=$(mktemp -d)
export SESSIONPAD_DATA_DIR=$work/data SESSIONPAD_CONFIG=$work/none.toml
: > "$work/none.toml"
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=lib/bench_serve.sh
. scripts/lib/bench_serve.sh

cell=$(cat <<PY
import socket, time
def refused():
    s = socket.socket()
    t = time.perf_counter()
    try:
        s.connect(("127.0.0.1", 1))
    except OSError:
        pass
    t = time.perf_counter() - t
    s.close()
    return t * 1e6
srv = socket.create_server(("127.0.0.1", 0), backlog=64)
port = srv.getsockname()[1]
def own():
    s = socket.socket()
    t = time.perf_counter()
    s.connect(("127.0.0.1", port))
    t = time.perf_counter() - t
    s.close()
    srv.accept()[0].close()
    return t * 1e6
for _ in range(30): refused(); own()
a = sorted(refused() for _ in range($n))
b = sorted(own() for _ in range($n))
print("%.1f %.1f" % (a[len(a)//2], b[len(b)//2]))
PY
)
twenty='import socket
for _ in range(20):
    try: socket.create_connection(("127.0.0.1", 1), timeout=1)
    except OSError: pass'

# One round of BIN: "refused_us own_us twenty_ms empty_ms".
round() {
  local bin=$1
  # A data folder of each build's own: a newer one migrates the ledger,
  # which an older one then refuses.
  export SESSIONPAD_DATA_DIR=$work/data-$(echo "$bin" | md5sum | cut -c1-8)
  start_serve "$bin"
  local target=(--endpoint "$endpoint" --token bench --identifier "bench-$RANDOM")
  local got t20 empty
  got=$("$bin" "${target[@]}" exec -c "$cell")
  dur() { "$bin" "${target[@]}" --json exec -c "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration_ms"])'; }
  dur "$twenty" > /dev/null
  t20=$(dur "$twenty")
  empty=$(dur "1")
  stop_serve
  echo "$got $t20 $empty"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
b=() a=()
for r in $(seq 1 "$rounds"); do
  b+=("$(round "$before")")
  a+=("$(round "$after")")
  echo "round $r: before refused/own µs, 20-connect cell/empty cell ms: ${b[-1]}; after: ${a[-1]}"
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { local i=$1; shift; for x in "$@"; do echo "$x" | cut -d' ' -f"$i"; done; }
for which in before after; do
  if [ $which = before ]; then set -- "${b[@]}"; else set -- "${a[@]}"; fi
  echo "$which: connect refused p50 $(med $(col 1 "$@")) µs, to the session's own listener p50 $(med $(col 2 "$@")) µs, cell of 20 refused connects $(med $(col 3 "$@")) ms, empty cell $(med $(col 4 "$@")) ms"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
