#!/usr/bin/env bash
# Times a cold-cache build of the local pool's Python environment through the
# real binary (`sessionpad exec -c 'print(1)'` with no pool running), in one
# run, three ways, each line of progress prefixed with the seconds since the
# command started:
#   1. fresh machine: no uv, no uv cache, no environment (uv is installed first);
#   2. uv installed, uv cache and environment removed (a new interpreter, new
#      requirements, or a wiped uv cache);
#   3. the pip fallback (SESSIONPAD_NO_UV=1), pip cache and environment removed.
# Everything lives in a temporary folder (sessionpad's cache and data, uv's and
# pip's caches): the user's own environment and caches are not touched.
# Usage: scripts/bench_env.sh [path/to/sessionpad]   (default target/release)
set -euo pipefail
bin=$(realpath "${1:-target/release/sessionpad}")
tmp=$(mktemp -d)
export SESSIONPAD_CACHE_DIR=$tmp/cache SESSIONPAD_DATA_DIR=$tmp/data \
  SESSIONPAD_CONFIG=$tmp/config.toml UV_CACHE_DIR=$tmp/uv PIP_CACHE_DIR=$tmp/pip
cleanup() { "$bin" pool stop >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
: > "$tmp/config.toml"

stamp() {
  python3 -u -c '
import sys, time
start = float(sys.argv[1])
for line in sys.stdin:
    print("%7.2f  %s" % (time.time() - start, line.rstrip()), flush=True)
' "$1"
}

run() {
  echo "== $1 (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  local start; start=$(python3 -c 'import time; print(time.time())')
  "$bin" exec -c 'print(1)' 2>&1 >/dev/null | stamp "$start" \
    | grep -v '^ *[0-9.]*   + ' || true
  # The bytecode is compiled in the background: wait for it (and time it)
  # before removing the folder it writes into.
  for _ in $(seq 600); do
    compgen -G "$SESSIONPAD_CACHE_DIR/python/env-*/.sessionpad-compiled" >/dev/null && break
    sleep 0.5
  done
  echo "bytecode compiled" | stamp "$start"
  "$bin" pool stop >/dev/null 2>&1 || true
  rm -rf "$SESSIONPAD_CACHE_DIR"/python/env-* "$UV_CACHE_DIR" "$PIP_CACHE_DIR"
}

run "fresh machine: uv installed first"
run "uv already installed"
export SESSIONPAD_NO_UV=1
run "pip fallback (SESSIONPAD_NO_UV=1)"
