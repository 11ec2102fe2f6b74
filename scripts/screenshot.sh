#!/usr/bin/env bash
# The README's screenshot (issue 27 item 19): sessionpad in a real terminal,
# taken again whenever the notebook's look changes.
#
# Starts a virtual X server (Xvfb, Unix socket only: -nolisten tcp) and an
# xterm started as a VT340 (sixel graphics, so the plot is drawn with pixels),
# runs sessionpad in it on the local pool from a throwaway folder with a
# throwaway data folder and config, types three cells with xdotool (a pandas
# DataFrame, a matplotlib plot, a file written), opens the files pane, and
# writes the xterm window with ImageMagick's `import` to
# docs/images/notebook.png.
#
# It reuses your cache of the local pool's Python environment
# (~/.cache/sessionpad, or $SESSIONPAD_CACHE_DIR), so nothing is rebuilt when
# it is there; otherwise the first run builds it (a few minutes).
#
# Usage: scripts/screenshot.sh [SESSIONPAD_BINARY] [OUTPUT.png]
#        (default target/release/sessionpad, built with `cargo build --release`
#        when missing; default output docs/images/notebook.png)
# Needs: apt-get install xvfb xterm xdotool imagemagick fonts-dejavu-core
#        (tesseract-ocr too, to wait for the screen rather than sleep).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

bin="${1:-$repo/target/release/sessionpad}"
out="${2:-$repo/docs/images/notebook.png}"
if [[ ! -x "$bin" ]]; then
    if [[ $# -ge 1 ]]; then
        echo "screenshot: no executable at $bin" >&2
        exit 2
    fi
    (cd "$repo" && cargo build --release)
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"

for tool in Xvfb xterm xdotool import convert; do
    if ! command -v "$tool" >/dev/null; then
        echo "screenshot: $tool is missing (apt-get install xvfb xterm xdotool imagemagick fonts-dejavu-core)" >&2
        exit 2
    fi
done
ocr=0
command -v tesseract >/dev/null && ocr=1

tmp="$(mktemp -d)"
work="$tmp/analysis"          # the folder the notebook is opened in
mkdir -p "$work"
export SESSIONPAD_DATA_DIR="$tmp/data"
export SESSIONPAD_CONFIG="$tmp/config.toml"
# The Python environment's cache: the user's, so that it is not rebuilt.
export SESSIONPAD_CACHE_DIR="${SESSIONPAD_CACHE_DIR:-$HOME/.cache/sessionpad}"
: >"$SESSIONPAD_CONFIG"

xvfb_pid=""
xterm_pid=""
cleanup() {
    [[ -n "$xterm_pid" ]] && kill "$xterm_pid" 2>/dev/null || true
    # The background local pool this script's commands started (its own data
    # folder, so never the user's pool).
    "$bin" pool stop >/dev/null 2>&1 || true
    [[ -n "$xvfb_pid" ]] && kill "$xvfb_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The local pool first, in the notebook's folder (so the notebook's session):
# it builds the Python environment when the cache has none, and the session's
# first import of matplotlib builds its font cache (saying so on stderr); so
# the notebook's cells below run at once and show only their own output.
echo "screenshot: starting the local pool (the first time it builds its Python environment)" >&2
(cd "$work" && "$bin" exec -c 'import pandas, matplotlib.pyplot' >/dev/null 2>&1)

# The X server, on a display number it picks itself.
Xvfb -displayfd 5 -screen 0 1920x1200x24 -nolisten tcp 5>"$tmp/display" 2>/dev/null &
xvfb_pid=$!
for _ in $(seq 1 100); do
    [[ -s "$tmp/display" ]] && break
    sleep 0.1
done
export DISPLAY=":$(tr -d '[:space:]' <"$tmp/display")"

# xterm as a VT340 (sixel), 160x45 cells, a readable font, light on black
# (sessionpad's default theme is the dark one).
(cd "$work" && exec xterm -ti vt340 -xrm 'XTerm*numColorRegisters: 256' \
    -fa 'DejaVu Sans Mono' -fs 11 -geometry 160x45+0+0 \
    -bg black -fg '#e0e0e0' -title sessionpad -e "$bin") >"$tmp/xterm.log" 2>&1 &
xterm_pid=$!

window=""
for _ in $(seq 1 300); do
    window="$(xdotool search --onlyvisible --class xterm 2>/dev/null | head -n1 || true)"
    [[ -n "$window" ]] && break
    sleep 0.2
done
if [[ -z "$window" ]]; then
    echo "screenshot: no xterm window appeared" >&2
    exit 1
fi
xdotool windowfocus "$window"

shot="$tmp/shot.png"
# The window's text by OCR, lower-case letters and digits only.
screen_text() {
    import -window "$window" "$shot"
    convert "$shot" -colorspace Gray -negate -resize 200% -threshold 80% "$tmp/ocr.png"
    tesseract "$tmp/ocr.png" - 2>/dev/null | tr 'A-Z' 'a-z' | tr -cd 'a-z0-9\n'
}
# Waits until the screen shows `pattern` (a grep -E on screen_text) at least
# `count` times (default 1), at most `seconds`; without tesseract it sleeps
# `seconds / 10` instead.
wait_for() {
    local what="$1" pattern="$2" seconds="$3" count="${4:-1}"
    if [[ $ocr -eq 0 ]]; then
        sleep $((seconds / 10))
        return
    fi
    local deadline=$((SECONDS + seconds))
    until (($(screen_text | grep -Eo "$pattern" | wc -l) >= count)); do
        if ((SECONDS > deadline)); then
            echo "screenshot: gave up waiting for $what (see $out.failed.png)" >&2
            cp "$shot" "$out.failed.png"
            exit 1
        fi
        sleep 1
    done
}
# Types a cell line by line (a typed newline reads as Ctrl+J, which runs the
# cell in most terminals; Return adds a line) and runs it with F5.
type_cell() {
    local first=1 line
    while IFS= read -r line; do
        ((first)) || xdotool key Return
        first=0
        xdotool type --delay 15 -- "$line"
    done <<<"$1"
    xdotool key F5
}

wait_for "the editor" 'recalls' 60

# 1. A DataFrame (written to a CSV file too).
type_cell "import pandas as pd, numpy as np
sales = pd.DataFrame({'month': pd.date_range('2026-01-01', periods=6, freq='MS').strftime('%b'), 'units': [120, 135, 160, 158, 190, 240], 'price': [9.5, 9.5, 9.9, 9.9, 10.4, 10.4]})
sales['revenue'] = sales.units * sales.price
sales.to_csv('sales.csv', index=False)
sales"
wait_for "the DataFrame" '2496' 120

# 2. A plot, also saved as a file.
type_cell "import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(6, 2.6))
ax.bar(sales.month, sales.revenue, color='tab:blue'); ax.set_title('revenue by month')
fig.savefig('revenue.png', dpi=80); plt.show()"
wait_for "the plot" 'donein' 120 2
sleep 2

# 3. A file written from Python.
type_cell "_ = open('summary.txt', 'w').write(sales.describe().to_string())
print('wrote summary.txt')"
wait_for "the third cell" 'donein' 60 3

# The files pane.
xdotool key F2
wait_for "the files pane" '3files' 30
# The plot is drawn again for the narrower notebook; a key (down and up
# again in the files list) brings the new drawing to the screen.
for _ in $(seq 1 30); do
    sleep 1
    [[ $ocr -eq 1 ]] && ! screen_text | grep -q drawingtheimage && break
    xdotool key j
    xdotool key k
done
sleep 2

import -window "$window" "$out"
echo "screenshot: wrote $out" >&2
xdotool key ctrl+q
