#!/usr/bin/env bash
# The egress proxy's cost (issue 29: a request through it adds at most 2 ms
# at p50 over a direct one on loopback). Two release serves, egress `on`
# (the session has the host's network: urllib connects directly) and
# `allow=127.0.0.1:PORT` (no route out: urllib goes through HTTP_PROXY, the
# sandbox's relay and the pool's proxy), alternated ROUNDS times. In each, one
# cell makes 30 warm-up requests and then N timed ones to a small HTTP server
# on 127.0.0.1 (Python's http.server, HTTP/1.0, one connection a request),
# timing each in the session (time.perf_counter around urlopen + read); the
# script prints p50 and p90 of each and their difference. Also timed: one
# cell with no request, to show that recording attempts costs the cell
# nothing measurable (the cell's own duration, `done in`, as `exec --json`
# reports it). Traffic goes to loopback only.
#
# Usage: scripts/egress_bench.sh [ROUNDS] [REQUESTS]   (default 3, 300;
#        SESSIONPAD_BIN=path for another build than the release one)
# Needs: python3; root or user namespaces (the sandbox).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
n=${2:-300}
if [ -n "${SESSIONPAD_BIN:-}" ]; then
  bin=$SESSIONPAD_BIN
else
  cargo build --release --quiet
  bin=$PWD/target/release/sessionpad
fi
work=$(mktemp -d)
export SESSIONPAD_DATA_DIR=$work/data SESSIONPAD_CONFIG=$work/none.toml
: > "$work/none.toml"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/www" && echo hello > "$work/www/x"
(cd "$work/www" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
http=$!
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  kill "$http" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=lib/bench_serve.sh
. scripts/lib/bench_serve.sh
sleep 0.5

cell=$(cat <<PY
import time, urllib.request, statistics
def one():
    t = time.perf_counter()
    urllib.request.urlopen("http://127.0.0.1:$port/x", timeout=10).read()
    return (time.perf_counter() - t) * 1000
for _ in range(30): one()
ms = sorted(one() for _ in range($n))
print("%.3f %.3f" % (ms[len(ms)//2], ms[int(len(ms)*0.9)]))
PY
)

# One round of POLICY: "p50 p90" of the requests, then the empty cell's ms.
round() {
  start_serve "$bin" --egress "$1"
  local target=(--endpoint "$endpoint" --token bench --identifier "bench-$RANDOM")
  local got empty
  got=$("$bin" "${target[@]}" exec -c "$cell")
  empty=$("$bin" "${target[@]}" --json exec -c "1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration_ms"])')
  stop_serve
  echo "$got $empty"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
on=() allow=()
for r in $(seq 1 "$rounds"); do
  on+=("$(round on)")
  allow+=("$(round "allow=127.0.0.1:$port")")
  echo "round $r: on (direct) p50/p90/empty ${on[-1]} ms; allow (proxy) ${allow[-1]} ms"
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { local i=$1; shift; for x in "$@"; do echo "$x" | cut -d' ' -f"$i"; done; }
p_on=$(med $(col 1 "${on[@]}")); p_allow=$(med $(col 1 "${allow[@]}"))
echo "medians of $rounds rounds of $n requests (ms):"
echo "  direct (egress on):        p50 $p_on, p90 $(med $(col 2 "${on[@]}")), empty cell $(med $(col 3 "${on[@]}"))"
echo "  through the proxy (allow): p50 $p_allow, p90 $(med $(col 2 "${allow[@]}")), empty cell $(med $(col 3 "${allow[@]}"))"
echo "  added by the proxy at p50: $(python3 -c "print('%.3f' % ($p_allow - $p_on))") ms (target at most 2)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
