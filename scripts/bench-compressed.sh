#!/usr/bin/env bash
# The simulator on a graph held compressed (`--in-memory never`) against the decoded CSR
# (`--in-memory always`): wall time, arcs/s, peak anonymous memory and peak page cache of the
# process (docs/performance.md, "Graphs larger than memory").
#
#   scripts/bench-compressed.sh PAGES [OUTDEGREE] [POLICIES] [MODES]
#
# Generates a web of PAGES pages with mean outdegree OUTDEGREE (default 40, about uk-2007-05's
# 35 and clueweb12's 43) under $OUT (default a fresh temporary directory, removed at the end
# unless KEEP=1), then runs `crawlrank simulate --policy POLICIES --seeds 100` (default
# fica,opic,bfs,backlink) once per mode in MODES (default "always never"), each with a cache of
# its own so that each computes its own reference PageRank (and, compressed, its transpose).
# With SHARE_PAGERANK=1 the reference PageRank the first mode computed is copied into the
# next mode's cache (it is the same vector bit for bit), so that later modes time the crawls
# alone. Peak RSS comes from GNU time; RssAnon (the heap: CSR, per-page state) and RssFile (the
# memory-mapped graph in the page cache) are sampled from /proc/PID/status every 0.5 s.
set -euo pipefail

cd "$(dirname "$0")/.."
pages=${1:?usage: scripts/bench-compressed.sh PAGES [OUTDEGREE] [POLICIES] [MODES]}
outdegree=${2:-40}
policies=${3:-fica,opic,bfs,backlink}
modes=${4:-always never}
out=${OUT:-}
if [[ -z "$out" ]]; then
    out=$(mktemp -d)
    [[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
cargo build --release -q -p crawlrank-cli
bin=target/release/crawlrank

g="$out/web"
if [[ ! -f "$g.graph" ]]; then
    /usr/bin/time -v "$bin" generate --pages "$pages" --outdegree "$outdegree" --out "$g" \
        2> "$out/generate.time" | tail -n 1
    grep -E "Elapsed|Maximum resident" "$out/generate.time"
fi
du -sh "$g".* | sed 's/^/  /'

for mode in $modes; do
    cache="$out/cache-$mode"
    rm -rf "$cache"
    if [[ "${SHARE_PAGERANK:-0}" == 1 && -n "${first_cache:-}" ]]; then
        for f in "$first_cache"/*/pagerank-*.f64; do
            mkdir -p "$cache/$(basename "$(dirname "$f")")"
            cp "$f" "$cache/$(basename "$(dirname "$f")")/"
        done
    fi
    first_cache=${first_cache:-$cache}
    log="$out/simulate-$mode"
    /usr/bin/time -v "$bin" --cache "$cache" simulate --graph "$g" --policy "$policies" \
        --seeds 100 --in-memory "$mode" --out "$out/sim-$mode" > "$log.out" 2> "$log.err" &
    tpid=$!
    sleep 0.2
    pid=$(pgrep -P "$tpid" crawlrank || true)
    anon=0 file=0
    while kill -0 "$tpid" 2>/dev/null; do
        if [[ -n "$pid" && -r /proc/$pid/status ]]; then
            a=$(awk '/^RssAnon:/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
            f=$(awk '/^RssFile:/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
            [[ -n "$a" && "$a" -gt "$anon" ]] && anon=$a
            [[ -n "$f" && "$f" -gt "$file" ]] && file=$f
        fi
        sleep 0.5
    done
    wait "$tpid"
    echo "== --in-memory $mode"
    grep -E "in memory|compressed" "$log.err" | head -n 1
    grep -E "^  [a-z-]+ +[0-9.]+(ms|s)" "$log.err" || true
    grep -E "Elapsed|Maximum resident" "$log.err"
    echo "  peak RssAnon $((anon / 1024)) MiB, peak RssFile $((file / 1024)) MiB"
    # The table: arcs/s is a column of its own.
    sed -n '1,3p;/^bfs\|^backlink\|^opic\|^fica/p' "$log.out"
done
if [[ " $modes " == *" always "* && " $modes " == *" never "* ]]; then
    if cmp -s "$out/sim-always/summary.csv" "$out/sim-never/summary.csv"; then
        echo "summary.csv: identical"
    else
        echo "summary.csv: DIFFERENT"
    fi
fi
