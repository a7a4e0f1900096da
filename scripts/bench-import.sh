#!/usr/bin/env bash
# Benchmarks `crawlrank import` on a synthetic arc list and reports arcs/s and peak memory.
#
#   scripts/bench-import.sh [ARCS] [WORKDIR]
#
# ARCS defaults to 10^8 (a ~1.5 GB text file; the run takes a few minutes on 2 cores).
# WORKDIR (default: a temporary directory, removed afterwards) receives arcs.txt and the
# imported graph. Set SORT_MEMORY_MIB to change the sort budget (default: the import's own).
# Uses the `crawlrank` binary when the CLI builds, else the library's `import` example.
set -euo pipefail

ARCS=${1:-100000000}
WORK=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

if [[ -z $WORK ]]; then
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"

if [[ ! -x /usr/bin/time ]]; then
    echo "GNU time is missing: installing it (apt-get install time)" >&2
    if [[ $(id -u) -eq 0 ]]; then apt-get install -y time >/dev/null; else sudo apt-get install -y time >/dev/null; fi
fi

cargo build --release -q -p crawlrank-graph --example gen_arcs --example import
if cargo build --release -q -p crawlrank-cli 2>/dev/null; then
    IMPORT=("$TARGET/release/crawlrank" import "$WORK/arcs.txt" --out "$WORK/bench")
    [[ -n ${SORT_MEMORY_MIB:-} ]] && IMPORT+=(--sort-memory "$SORT_MEMORY_MIB")
    WHO="crawlrank import"
else
    IMPORT=("$TARGET/release/examples/import" "$WORK/arcs.txt" "$WORK/bench" ${SORT_MEMORY_MIB:-})
    WHO="examples/import (the CLI does not build)"
fi

if [[ ! -s $WORK/arcs.txt || $(cat "$WORK/arcs.count" 2>/dev/null) != "$ARCS" ]]; then
    echo "generating $ARCS arcs in $WORK/arcs.txt" >&2
    "$TARGET/release/examples/gen_arcs" "$ARCS" > "$WORK/arcs.txt"
    echo "$ARCS" > "$WORK/arcs.count"
fi
BYTES=$(stat -c %s "$WORK/arcs.txt")

# Start from a cold-ish page cache for the input only when allowed; otherwise note it.
sync
echo "running: ${IMPORT[*]}" >&2
/usr/bin/time -v -o "$WORK/time.txt" "${IMPORT[@]}" > "$WORK/import.log" 2>&1 || {
    cat "$WORK/import.log" >&2
    exit 1
}

wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$WORK/time.txt")
secs=$(awk -v t="$wall" 'BEGIN { n = split(t, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }')
rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
cpu=$(awk -F': ' '/Percent of CPU/ {print $2}' "$WORK/time.txt")
graph_bytes=$(stat -c %s "$WORK/bench.graph")
arcs_out=$(awk -F= '/^arcs=/ {print $2}' "$WORK/bench.properties")
nodes_out=$(awk -F= '/^nodes=/ {print $2}' "$WORK/bench.properties")

echo "tool:          $WHO"
echo "input:         $ARCS arcs, $(awk -v b="$BYTES" 'BEGIN{printf "%.2f GB", b/1e9}') of text"
echo "output:        $nodes_out nodes, $arcs_out distinct arcs, $(awk -v g="$graph_bytes" -v a="$arcs_out" 'BEGIN{printf "%.2f bits/arc", 8*g/a}')"
echo "wall time:     $wall ($secs s), CPU $cpu"
echo "throughput:    $(awk -v a="$ARCS" -v s="$secs" 'BEGIN{printf "%.2f M input arcs/s", a/s/1e6}')"
echo "peak memory:   $(awk -v k="$rss_kb" 'BEGIN{printf "%.0f MiB", k/1024}') (max RSS)"
grep -E "^ +[0-9.]+s " "$WORK/import.log" || true
