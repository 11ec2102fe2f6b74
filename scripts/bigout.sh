#!/usr/bin/env bash
# Big outputs (issue 14): the 1,000,000-line cell `for i in range(1000000):
# print(i)` (6,888,890 bytes of stdout) run in the release notebook, driven in a
# detached tmux pane of 160x48 on a fresh data folder. Figures go to
# BENCHMARKS.md ("Big outputs").
#
# Each round: a fresh data folder (SESSIONPAD_DATA_DIR, an empty config), the
# notebook launched in a fresh folder; it starts the background local pool
# (`sessionpad serve --background`, found through `local-pool.json`). Once the
# editor is on screen and the pool answers, the script waits 2 s, reads VmRSS
# of both processes (the front end: the pane's process; the pool: the pid in
# `local-pool.json`) after typing the cell, and resets their peak (`echo 5 >
# /proc/PID/clear_refs`, so VmHWM starts again from the current RSS); then it
# runs the cell (F5). The cell is typed first because the first cell typed
# loads the syntax highlighter (about 8 MB once per process), which is not
# the output's cost; until 2026-11-24's fifth session the baseline was read
# before typing. The cell also writes the kernel's clock when its loop ended to
# `/mnt/data/bigout-end` (the session's folder below the pool's data folder);
# one line, so that the editor's indentation cannot change it:
#
#   import time; _t0 = time.time(); exec('for i in range(1000000): print(i)'); _ = open(…).write(repr(_t0) + ' ' + repr(time.time()))
#
# The screen is read with `tmux capture-pane` every 10 ms: "last line" is the
# first moment `999999` shows, "finished" the first moment the cell's status
# says it is done (`done in`), each minus the kernel's end time (both clocks
# are the machine's wall clock; every figure includes up to 10 ms of polling).
# The cell also writes the kernel's clock when its loop started, so each round
# also gives the kernel's own time (loop start to end) and the time from F5 to
# the last line on screen, and their ratio (issue 27: at most 1.05).
# Memory is read 3 s after "finished" (the notebook saved by then): each
# process's gain is VmHWM minus its VmRSS before the cell; the sum is set
# against 3x the output's size. Kernels are not counted (they are other
# processes). At the end of each round the notebook quits (Ctrl+Q) and
# `sessionpad pool stop` stops the background pool, so none is left running.
#
# BIGOUT_WORDS=1 prints `print('line', i)` instead (issue 27 item 11: 11,888,890
# bytes, past the local pool's 8 MiB cap, so the answer holds its first and
# last 4 MiB and the screen must end with `line 999999`).
#
# Usage: scripts/bigout.sh [ROUNDS]   (default 3; prints each round and the
#        medians; SESSIONPAD_BIN=path to run another build than the release one)
# Needs: tmux, python3 (the pool's environment is built on first use), root or
#        the owner of both processes (clear_refs).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
if [ -n "${SESSIONPAD_BIN:-}" ]; then
  bin=$SESSIONPAD_BIN
else
  cargo build --release --quiet
  bin=$PWD/target/release/sessionpad
fi

work=$(mktemp -d)
socket=sessionpad-bigout-$$
unset POOL_MANAGEMENT_ENDPOINT SESSIONPAD_TOKEN
export SESSIONPAD_CONFIG=$work/none.toml

cleanup() {
  tmux -L "$socket" kill-server 2>/dev/null || true
  if [ -n "${SESSIONPAD_DATA_DIR:-}" ]; then
    "$bin" pool stop >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${BIGOUT_WORDS:-}" ]; then
  output_bytes=$(seq 0 999999 | sed 's/^/line /' | wc -c)
  loop="for i in range(1000000): print('line', i)"
else
  output_bytes=$(seq 0 999999 | wc -c)
  loop="for i in range(1000000): print(i)"
fi
budget_kb=$(( 3 * output_bytes / 1024 ))

cell="import time; _t0 = time.time(); exec(\"$loop\"); _ = open('/mnt/data/bigout-end', 'w').write(repr(_t0) + ' ' + repr(time.time()))"

now() { date +%s.%N; }
screen() { tmux -L "$socket" capture-pane -p -t big 2>/dev/null || true; }
kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }

# Waits until the screen matches the extended regex $1 (up to $2 s); prints the
# wall-clock time it first did.
wait_screen() {
  local pattern=$1 limit=$2 i
  for i in $(seq 1 $(( limit * 100 ))); do
    if screen | grep -Eq "$pattern"; then
      now
      return 0
    fi
    sleep 0.01
  done
  echo "timed out waiting for /$pattern/; screen:" >&2
  screen >&2
  return 1
}

# One round: prints "FE_BEFORE FE_PEAK POOL_BEFORE POOL_PEAK LAST FINISHED
# KERNEL RUN" (kB, kB, kB, kB, s, s, s, s): LAST and FINISHED after the
# kernel's loop ended, KERNEL the loop's own time, RUN from F5 to the last
# line on screen.
round() {
  local n=$1 dir fe pool fe_before pool_before end t_last t_done fe_peak pool_peak
  export SESSIONPAD_DATA_DIR=$work/data-$n
  dir=$work/round-$n
  mkdir -p "$dir"
  tmux -L "$socket" new-session -d -s big -x 160 -y 48 \
    "cd '$dir' && TERM=xterm-256color exec '$bin'"
  wait_screen '╭ In \[1\]' 120 >/dev/null
  # The pool: started by the notebook in the background.
  for _ in $(seq 1 600); do
    [ -f "$SESSIONPAD_DATA_DIR/local-pool.json" ] && break
    sleep 0.1
  done
  "$bin" exec -c '1' >/dev/null
  sleep 2
  fe=$(tmux -L "$socket" display -p -t big '#{pane_pid}')
  pool=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' \
    "$SESSIONPAD_DATA_DIR/local-pool.json")
  # Typing the first cell loads the syntax highlighter (about 8 MB, once per
  # process, whatever the output): the cell is typed before the baseline.
  tmux -L "$socket" send-keys -t big -l "$cell"
  sleep 1
  fe_before=$(kb "$fe" VmRSS)
  pool_before=$(kb "$pool" VmRSS)
  echo 5 >"/proc/$fe/clear_refs"
  echo 5 >"/proc/$pool/clear_refs"
  local t_f5 start
  t_f5=$(now)
  tmux -L "$socket" send-keys -t big F5
  t_last=$(wait_screen '(^|[^0-9])999999([^0-9]|$)' 300)
  t_done=$(wait_screen 'done in' 300)
  sleep 3
  fe_peak=$(kb "$fe" VmHWM)
  pool_peak=$(kb "$pool" VmHWM)
  read -r start end <"$(echo "$SESSIONPAD_DATA_DIR"/pool-sessions/pool-*/*/bigout-end)"
  tmux -L "$socket" send-keys -t big C-q
  for _ in $(seq 1 400); do
    tmux -L "$socket" has-session -t big 2>/dev/null || break
    sleep 0.025
  done
  tmux -L "$socket" kill-session -t big 2>/dev/null || true
  "$bin" pool stop >/dev/null 2>&1 || true
  echo "$fe_before $fe_peak $pool_before $pool_peak" \
    "$(echo "$t_last - $end" | bc -l)" "$(echo "$t_done - $end" | bc -l)" \
    "$(echo "$end - $start" | bc -l)" "$(echo "$t_last - $t_f5" | bc -l)"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "binary: $bin"
echo "output: $output_bytes bytes of stdout; 3x = $budget_kb kB"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
results=$work/results
for n in $(seq 1 "$rounds"); do
  r=$(round "$n")
  echo "$r" >>"$results"
  read -r fb fp pb pp last done_ kernel run <<<"$r"
  printf 'round %d: front end %d -> %d kB (+%d), pool %d -> %d kB (+%d), sum +%d kB (%.2fx the output); last line %.3f s, finished %.3f s after the kernel ended; kernel %.3f s, F5 to last line %.3f s (%.3fx)\n' \
    "$n" "$fb" "$fp" $((fp - fb)) "$pb" "$pp" $((pp - pb)) $((fp - fb + pp - pb)) \
    "$(echo "($fp - $fb + $pp - $pb) * 1024 / $output_bytes" | bc -l)" "$last" "$done_" \
    "$kernel" "$run" "$(echo "$run / $kernel" | bc -l)"
done
col() { awk -v c="$1" '{ print $c }' "$results" | median; }
gain() { awk -v a="$1" -v b="$2" '{ print $b - $a }' "$results" | median; }
sum() { awk '{ print $2 - $1 + $4 - $3 }' "$results" | median; }
echo "medians of $rounds rounds:"
echo "  front end: RSS before $(col 1) kB, peak $(col 2) kB, gain $(gain 1 2) kB"
echo "  pool:      RSS before $(col 3) kB, peak $(col 4) kB, gain $(gain 3 4) kB"
echo "  sum of gains: $(sum) kB against 3x the output = $budget_kb kB"
echo "  kernel end -> last line on screen: $(col 5) s; -> cell finished: $(col 6) s"
ratio() { awk '{ print $8 / $7 }' "$results" | median; }
echo "  kernel's own time: $(col 7) s; F5 -> last line on screen: $(col 8) s; ratio $(ratio) (target at most 1.05)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
