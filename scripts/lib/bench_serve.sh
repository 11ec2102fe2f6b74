# Sourced by the benchmark scripts: a release `serve` on a free loopback port
# with token `bench` and one ready session. Needs `$work` (the script's
# temporary folder).
#
# start_serve BIN [SERVE ARGS…]: starts it in the background (its pid in
#   `serve_pid`) and waits, up to 60 s, for its pool management endpoint (in
#   `endpoint`; empty if it never printed one).
# stop_serve: ends it and waits for it.
start_serve() {
  local bin=$1
  shift
  "$bin" serve --port 0 --token bench --ready-sessions 1 "$@" > "$work/serve.out" 2>/dev/null &
  serve_pid=$!
  endpoint=
  for _ in $(seq 600); do
    endpoint=$(sed -n 's/.*pool management endpoint: *//p' "$work/serve.out")
    [ -n "$endpoint" ] && break
    sleep 0.1
  done
}

stop_serve() {
  kill "$serve_pid"
  wait "$serve_pid" 2>/dev/null || true
  serve_pid=
}
