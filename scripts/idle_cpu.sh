#!/usr/bin/env bash
# The terminal UI at rest (issue 5, Performance): how long the first frame takes to
# reach the terminal, and what the UI costs while nothing happens. Figures go to
# BENCHMARKS.md ("Terminal UI").
#
# The release binary runs in a detached tmux pane (160x48) under `script`, which
# records every byte the UI writes to its terminal. Then:
#   - first frame: from launch until the status line (the session identifier) has
#     been written to the terminal;
#   - idle: after SETTLE seconds, for IDLE seconds (default 10) with no input, the
#     process's CPU time (on-CPU nanoseconds summed over /proc/<pid>/task/*/schedstat,
#     and utime+stime from /proc/<pid>/stat in clock ticks as a cross-check) and the
#     bytes written to the terminal (0 means not one redraw).
#
# Usage: scripts/idle_cpu.sh [--local] [IDLE_SECONDS]
#   default  a remote endpoint that nobody answers: the UI alone, with nothing to
#            run (the pool state is known at once);
#   --local  the embedded local pool, measured once it is ready (the pool's own
#            tasks run in the same process; its kernels are other processes).
# Needs: tmux, script (util-linux).
set -euo pipefail
cd "$(dirname "$0")/.."

local_pool=false
if [ "${1:-}" = "--local" ]; then
  local_pool=true
  shift
fi
idle=${1:-10}
settle=${SETTLE:-2}

cargo build --release --quiet
bin=$PWD/target/release/sessionpad
work=$(mktemp -d)
socket=sessionpad-idle-$$
out=$work/typescript
identifier=idle-$$
args="--identifier $identifier"
if ! $local_pool; then
  args="$args --endpoint http://127.0.0.1:9 --token idle"
fi

cleanup() {
  tmux -L "$socket" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

now_ns() { date +%s%N; }

start=$(now_ns)
tmux -L "$socket" new-session -d -x 160 -y 48 \
  "cd '$work' && SESSIONPAD_DATA_DIR='$work/data' SESSIONPAD_CONFIG='$work/none.toml' \
   TERM=xterm-256color exec script -q -f -c '$bin $args' '$out'"

# The first frame: the status line names the session.
first=""
for _ in $(seq 1 2000); do
  if [ -f "$out" ] && grep -q "$identifier" "$out" 2>/dev/null; then
    first=$(( ($(now_ns) - start) / 1000000 ))
    break
  fi
  sleep 0.005
done
[ -n "$first" ] || { echo "no first frame within 10 s"; cat "$out" | head -c 2000; exit 1; }
echo "first frame on the terminal: ${first} ms after launch (tmux + script + sessionpad)"

# The sessionpad process under the pane's `script`.
pane=$(tmux -L "$socket" display -p -t 0 '#{pane_pid}')
find_pid() {
  local p=$1 c
  for c in $(pgrep -P "$p"); do
    if [ "$(cat /proc/"$c"/comm)" = sessionpad ]; then echo "$c"; return; fi
    find_pid "$c"
  done
}
pid=$(find_pid "$pane")
[ -n "$pid" ] || { echo "sessionpad process not found"; exit 1; }

if $local_pool; then
  echo "waiting for the local pool to be ready…"
  for _ in $(seq 1 3000); do
    tmux -L "$socket" capture-pane -p -t 0 | grep -q "ready" && break
    sleep 0.1
  done
fi
sleep "$settle"

# On-CPU ns of each thread ("tid ns" lines). Threads that end during the window
# (tokio's idle blocking threads) drop out; threads that start count from zero.
threads() {
  local t
  for t in /proc/"$pid"/task/*; do
    echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat" 2>/dev/null || echo 0)"
  done
}
ticks() { awk '{print $14 + $15}' /proc/"$pid"/stat; }

before=$(threads); ticks0=$(ticks); bytes0=$(stat -c %s "$out")
sleep "$idle"
after=$(threads); ticks1=$(ticks); bytes1=$(stat -c %s "$out")
spent=$(awk 'NR == FNR { was[$1] = $2; next } { d += $2 - ($1 in was ? was[$1] : 0) } END { print d + 0 }' \
  <(echo "$before") <(echo "$after"))

hz=$(getconf CLK_TCK)
echo "idle for ${idle} s ($( $local_pool && echo 'local pool, ready' || echo 'UI only, remote endpoint')):"
echo "  CPU (schedstat):       $(( spent / 1000 )) µs"
echo "  CPU (utime+stime):     $(( (ticks1 - ticks0) * 1000 / hz )) ms (${hz} ticks/s)"
echo "  bytes to the terminal: $(( bytes1 - bytes0 ))"

tmux -L "$socket" send-keys -t 0 C-q
sleep 0.5
