#!/usr/bin/env bash
# Time until `crawlrank frontier serve` opening an existing state listens (its restart), and
# its peak resident memory (VmHWM) by then; the service is stopped at once after. A state to
# open is what scripts/bench-puturls.sh leaves in $OUT/state (stopped, not removed).
#
#   scripts/bench-restart.sh STATE [RUNS] [BIN...]
#       RUNS (default 3) runs of each binary named (default: the release build here),
#       alternated, so that two builds are measured under the same conditions.
#
# Other settings (environment): RUN_TIMEOUT (seconds a start may take, default 1800).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. scripts/common.sh

STATE="${1:?usage: scripts/bench-restart.sh STATE [RUNS] [BIN...]}"
RUNS="${2:-3}"
shift $(($# < 2 ? $# : 2))
RUN_TIMEOUT="${RUN_TIMEOUT:-1800}"
[[ -d "$STATE" ]] || { echo "bench-restart: no state at $STATE" >&2; exit 1; }
BINS=("$@")
if ((${#BINS[@]} == 0)); then
    release_bin_in_target
    BINS=("$BIN")
fi

echo "== bench-restart: $STATE ($(du -sh "$STATE" | cut -f1)), $RUNS runs each"
echo "   $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for ((r = 1; r <= RUNS; r++)); do
    for bin in "${BINS[@]}"; do
        start=$EPOCHREALTIME
        "$bin" frontier serve --state "$STATE" --addr 127.0.0.1:0 >"$log" 2>&1 &
        pid=$!
        deadline=$((SECONDS + RUN_TIMEOUT))
        until grep -q "URLFrontier API on" "$log"; do
            kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "bench-restart: $bin stopped" >&2; exit 1; }
            ((SECONDS < deadline)) || { kill -KILL "$pid"; echo "bench-restart: over $RUN_TIMEOUT s" >&2; exit 1; }
            sleep 0.02
        done
        secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
        hwm=$(awk '/^VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$pid/status")
        kill -INT "$pid"
        wait "$pid" || true
        echo "| $bin | run $r | $secs s | $hwm MiB |"
    done
done
