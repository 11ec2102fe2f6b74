#!/usr/bin/env bash
# Benchmarks of sessionpad (figures go to BENCHMARKS.md):
#  1. the local pool (cargo bench --bench pool): print(1) through HTTP vs the bare
#     kernel, first execution with ready kernels, 20 concurrent sessions, 100 MB
#     transfers;
#  2. the MCP server (cargo bench --bench mcp): runPythonCodeInRemoteEnvironment
#     of print(1) against the REST call it wraps;
#  3. `sessionpad exec -c 'print(1)'` as a whole process against a warm local
#     pool, next to curl making the same request, in the same run (hyperfine).
# Needs: hyperfine and curl (apt-get install hyperfine curl).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${BIN:-}" ] || cargo build --release --quiet
bin=${BIN:-target/release/sessionpad}

if [ -z "${SKIP_POOL_BENCH:-}" ]; then
  echo "== local pool (benches/pool.rs)"
  cargo bench --quiet --bench pool 2>/dev/null | grep -v '^$' || true
  echo "== MCP server (benches/mcp.rs)"
  cargo bench --quiet --bench mcp 2>/dev/null | grep -v '^$' || true
fi

echo "== sessionpad exec vs curl against a warm local pool"
data=$(mktemp -d)
token=bench-$RANDOM$RANDOM
SESSIONPAD_DATA_DIR=$data "$bin" serve --port 0 --token "$token" >"$data/serve.out" 2>/dev/null &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null; wait $serve_pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 1 600); do
  endpoint=$(sed -n 's/.*pool management endpoint: *//p' "$data/serve.out")
  [ -n "$endpoint" ] && break
  sleep 0.1
done
url="$endpoint/executions?api-version=2025-10-02-preview&identifier=bench-exec"
body='{"codeInputType":"inline","executionType":"synchronous","code":"print(1)","timeoutInSeconds":220}'
# Warm the session's kernel.
curl -sf -X POST "$url" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d "$body" >/dev/null
hyperfine -N --warmup 20 --runs 300 --export-json "$data/exec.json" \
  -n curl "curl -sf -X POST '$url' -H 'Authorization: Bearer $token' -H 'Content-Type: application/json' -d '$body'" \
  -n 'sessionpad exec' "$bin --endpoint $endpoint --token $token --identifier bench-exec exec -c print(1)"
python3 - "$data/exec.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
c, s = r["curl"], r["sessionpad exec"]
print(f"median: curl {c['median']*1000:.2f} ms, sessionpad exec {s['median']*1000:.2f} ms, ratio {s['median']/c['median']:.2f}x")
PY

echo "== download of a 100 MB file: sessionpad files get vs curl"
"$bin" --endpoint "$endpoint" --token "$token" --identifier bench-dl exec \
  -c "open('/mnt/data/big.bin', 'wb').write(bytes(100 * 1024 * 1024))" >/dev/null
content="$endpoint/files/big.bin/content?api-version=2025-10-02-preview&identifier=bench-dl"
for i in 1 2 3; do
  rm -f "$data/curl.bin" "$data/big.bin"
  t0=$(date +%s.%N)
  curl -sf -o "$data/curl.bin" -H "Authorization: Bearer $token" "$content"
  t1=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$data/rss" "$bin" --endpoint "$endpoint" --token "$token" \
    --identifier bench-dl files get big.bin -o "$data" 2>/dev/null
  t2=$(date +%s.%N)
  python3 -c "import sys; c=$t1-$t0; s=$t2-$t1; print(f'run $i: curl {100/c:.0f} MB/s, sessionpad {100/s:.0f} MB/s ({s/c:.2f}x curl time), sessionpad max RSS {int(open(sys.argv[1]).read())/1024:.1f} MiB')" "$data/rss"
done
