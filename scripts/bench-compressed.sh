#!/usr/bin/env bash
# The simulator on a graph held compressed (`--in-memory never`) against the decoded CSR
# (`--in-memory always`): wall time, arcs/s, peak anonymous memory and peak page cache of the
# process (docs/performance.md, "Graphs larger than memory").
#
#   scripts/bench-compressed.sh PAGES [OUTDEGREE] [POLICIES] [MODES]
#
# Generates a web of PAGES pages with mean outdegree OUTDEGREE (default 40, about uk-2007-05's
# 35 and clueweb12's 43) under $OUT (default a fresh temporary directory, removed at the end
# unless KEEP=1), then, for each mode in MODES (default "always never"), with a cache of its
# own: `rank --algo pagerank` (the reference PageRank, and the transpose it needs), then
# `simulate --policy P --seeds 100` for each P in POLICIES (default fica,opic,bfs,backlink),
# one process per policy so that each peak is its own (the first also computes the
# simulator's cached reference PageRank). With SHARE_PAGERANK=1 the reference PageRank the
# first mode computed is copied into the next mode's cache (the same vector bit for bit), so
# that later modes time the crawls alone; RANK_MODES (default: every mode) names the modes that
# time `rank --algo pagerank` (with SHARE_PAGERANK=1 and RANK_MODES=always, the compressed mode
# times the crawls alone, which on a large graph saves its hour of compressed PageRank; see also
# PAGERANK_CACHE below). Peak RSS comes from GNU time; RssAnon (the heap:
# CSR, per-page state) and RssFile (the memory-mapped graph in the page cache) are sampled
# from /proc/PID/status every 0.5 s. Prints whether the two modes' outputs are identical.
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
[[ "${SKIP_BUILD:-0}" == 1 ]] || cargo build --release -q -p crawlrank-cli
bin=target/release/crawlrank

g="$out/web"
if [[ ! -f "$g.graph" ]]; then
    /usr/bin/time -v "$bin" generate --pages "$pages" --outdegree "$outdegree" --out "$g" \
        2> "$out/generate.time" | tail -n 1
    grep -E "Elapsed|Maximum resident" "$out/generate.time"
fi
du -sh "$g".* | sed 's/^/  /'

# Runs `crawlrank ARGS…` under GNU time, sampling the peaks of RssAnon and RssFile of the
# crawlrank process; prints wall time, max RSS and the two peaks.
measure() {
    local log=$1
    shift
    /usr/bin/time -v "$bin" "$@" > "$log.out" 2> "$log.err" &
    local tpid=$! pid="" anon=0 file=0 a f
    while kill -0 "$tpid" 2>/dev/null; do
        [[ -n "$pid" ]] || pid=$(pgrep -P "$tpid" crawlrank || true)
        if [[ -n "$pid" && -r /proc/$pid/status ]]; then
            a=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
            f=$(awk '/^RssFile:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
            [[ -n "$a" && "$a" -gt "$anon" ]] && anon=$a
            [[ -n "$f" && "$f" -gt "$file" ]] && file=$f
        fi
        sleep 0.5
    done
    wait "$tpid"
    local wall rss
    wall=$(awk -F': ' '/Elapsed/ {print $2}' "$log.err")
    rss=$(awk -F': ' '/Maximum resident/ {printf "%d", $2 / 1024}' "$log.err")
    echo "  wall $wall, max RSS $rss MiB, peak RssAnon $((anon / 1024)) MiB, peak RssFile $((file / 1024)) MiB"
}

# With SHARE_PAGERANK=1, PAGERANK_CACHE=DIR takes the reference PageRank from DIR (the cache of an
# earlier run on the same graph, e.g. OUT/cache-always) instead of from this run's first mode.
first_cache=${PAGERANK_CACHE:-}
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
    echo "== --in-memory $mode"
    if [[ " ${RANK_MODES:-$modes} " == *" $mode "* ]]; then
        echo "rank --algo pagerank (the reference PageRank, transpose included):"
        measure "$out/rank-$mode" --cache "$cache" rank --graph "$g" --algo pagerank \
            --in-memory "$mode" --out "$out/pr-$mode.txt"
        grep -E "in memory|compressed|ranked in" "$out/rank-$mode.err" | sed 's/^/  /'
    fi
    # The simulator's reference PageRank is the same vector: computed once, by the first run.
    for policy in ${policies//,/ }; do
        echo "simulate --policy $policy:"
        measure "$out/sim-$mode-$policy" --cache "$cache" simulate --graph "$g" \
            --policy "$policy" --seeds 100 --in-memory "$mode" --out "$out/sim-$mode-$policy"
        grep -E "^$policy " "$out/sim-$mode-$policy.out" | sed 's/^/  /'
    done
done
if [[ " $modes " == *" always "* && " $modes " == *" never "* ]]; then
    if [[ -f "$out/pr-always.txt" && -f "$out/pr-never.txt" ]]; then
        cmp -s "$out/pr-always.txt" "$out/pr-never.txt" && echo "PageRank: identical" \
            || echo "PageRank: DIFFERENT"
    fi
    for policy in ${policies//,/ }; do
        if cmp -s "$out/sim-always-$policy/summary.csv" "$out/sim-never-$policy/summary.csv"; then
            echo "$policy summary.csv: identical"
        else
            echo "$policy summary.csv: DIFFERENT"
        fi
    done
fi
