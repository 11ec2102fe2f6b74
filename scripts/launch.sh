#!/usr/bin/env bash
# Launch to first result (issue 14): sessionpad and jupyter-console launched
# alternately in a detached tmux pane of 160x48, each timed from launch until
# `1+1` shows 2. Figures go to BENCHMARKS.md ("Launch to first result").
#
# Each round, for each front end: launch it in a fresh folder (a new session, an
# empty notebook), wait until its editor or prompt is on the screen (first
# frame / prompt), type `1+1` and run it (F5 in sessionpad, Enter in
# jupyter-console), wait until `Out[1]: 2` is on the screen; then quit it. The
# screen is read with `tmux capture-pane` every 5 ms, so every figure includes a
# few milliseconds of polling; the same for both.
#
#   sessionpad, warm   the background local pool runs (started before the
#                      rounds, ready kernels waiting), the Python environment
#                      is built: the usual launch;
#   sessionpad, cold   no local pool runs (`sessionpad pool stop` before the
#                      launch): the notebook starts the background pool;
#   jupyter-console    `jupyter console` (a kernel of its own per launch), from
#                      a throwaway venv this script makes once (jupyter-console
#                      and ipykernel from PyPI).
#
# Also printed: the first frame's time in this terminal, which never answers the
# graphics probe (a detached tmux), from sessionpad's rounds; and the load
# average, since the machine may be shared.
#
# Usage: scripts/launch.sh [ROUNDS]   (default 5; SESSIONPAD_BIN=path to launch
#        another build than the release one)
# Needs: tmux, python3 with venv; the release build (made here).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-5}
# SESSIONPAD_BIN: another build of sessionpad to launch (say which in the figures).
if [ -n "${SESSIONPAD_BIN:-}" ]; then
  bin=$SESSIONPAD_BIN
else
  cargo build --release --quiet
  bin=$PWD/target/release/sessionpad
fi
cache=${SESSIONPAD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sessionpad}
venv=$cache/bench/jupyter-console
if [ ! -x "$venv/bin/jupyter-console" ]; then
  echo "making $venv (jupyter-console, ipykernel from PyPI)…"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet jupyter-console ipykernel
fi

work=$(mktemp -d)
data=$work/data
socket=sessionpad-launch-$$
export SESSIONPAD_DATA_DIR=$data SESSIONPAD_CONFIG=$work/none.toml
unset POOL_MANAGEMENT_ENDPOINT SESSIONPAD_TOKEN

cleanup() {
  tmux -L "$socket" kill-server 2>/dev/null || true
  "$bin" pool stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
screen() { tmux -L "$socket" capture-pane -p -t launch 2>/dev/null || true; }

# Waits until the screen matches the extended regex $1 (up to 120 s); prints
# the milliseconds since $2.
wait_screen() {
  local pattern=$1 since=$2 i
  for i in $(seq 1 24000); do
    if screen | grep -Eq "$pattern"; then
      echo $(( $(now_ms) - since ))
      return 0
    fi
    sleep 0.005
  done
  echo "timed out waiting for /$pattern/; screen:" >&2
  screen >&2
  return 1
}

# One launch of $1 (sessionpad | jupyter) in a fresh folder: "FIRST TOTAL" ms.
launch() {
  local what=$1 dir cmd prompt run first total start
  dir=$(mktemp -d "$work/round-XXXX")
  case $what in
    sessionpad)
      cmd="exec '$bin'"
      prompt='╭ In \[1\]'
      run=F5
      ;;
    jupyter)
      cmd="exec '$venv/bin/jupyter-console' --kernel python3"
      prompt='^In \[1\]:'
      run=Enter
      ;;
  esac
  start=$(now_ms)
  tmux -L "$socket" new-session -d -s launch -x 160 -y 48 \
    "cd '$dir' && TERM=xterm-256color $cmd"
  first=$(wait_screen "$prompt" "$start")
  tmux -L "$socket" send-keys -t launch '1+1' "$run"
  total=$(wait_screen 'Out\[1\]: 2' "$start")
  case $what in
    sessionpad) tmux -L "$socket" send-keys -t launch C-q ;;
    jupyter) tmux -L "$socket" send-keys -t launch C-d; sleep 0.2
             tmux -L "$socket" send-keys -t launch y Enter ;;
  esac
  for _ in $(seq 1 400); do
    tmux -L "$socket" has-session -t launch 2>/dev/null || break
    sleep 0.025
  done
  tmux -L "$socket" kill-session -t launch 2>/dev/null || true
  echo "$first $total"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# Warm state: the environment built, the background pool running.
(cd "$work" && "$bin" exec -c '1' >/dev/null)

declare -a warm_first warm_total cold_first cold_total jup_first jup_total
for r in $(seq 1 "$rounds"); do
  read -r f t < <(launch sessionpad); warm_first+=("$f"); warm_total+=("$t")
  read -r f t < <(launch jupyter); jup_first+=("$f"); jup_total+=("$t")
  "$bin" pool stop >/dev/null 2>&1
  read -r f t < <(launch sessionpad); cold_first+=("$f"); cold_total+=("$t")
  echo "round $r: sessionpad warm ${warm_first[-1]}/${warm_total[-1]} ms," \
    "jupyter-console ${jup_first[-1]}/${jup_total[-1]} ms," \
    "sessionpad with no pool running ${cold_first[-1]}/${cold_total[-1]} ms (first frame/result)"
  sleep 1
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

p50() { printf '%s\n' "$@" | median; }
echo
echo "medians of $rounds rounds (ms): first frame or prompt / launch to 1+1 showing 2"
echo "  sessionpad, background pool running: $(p50 "${warm_first[@]}") / $(p50 "${warm_total[@]}")"
echo "  jupyter-console:                      $(p50 "${jup_first[@]}") / $(p50 "${jup_total[@]}")"
echo "  sessionpad, no pool running:          $(p50 "${cold_first[@]}") / $(p50 "${cold_total[@]}")"
echo "  ranges: sessionpad warm $(printf '%s\n' "${warm_total[@]}" | sort -n | head -1)–$(printf '%s\n' "${warm_total[@]}" | sort -n | tail -1)," \
  "jupyter-console $(printf '%s\n' "${jup_total[@]}" | sort -n | head -1)–$(printf '%s\n' "${jup_total[@]}" | sort -n | tail -1)," \
  "no pool $(printf '%s\n' "${cold_total[@]}" | sort -n | head -1)–$(printf '%s\n' "${cold_total[@]}" | sort -n | tail -1)"
# What the probe did in this terminal (sessionpad's log).
grep -h "image protocol\|did not tell its graphics" "$data/logs/sessionpad.log" | tail -2 || true
