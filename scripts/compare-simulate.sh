#!/usr/bin/env bash
# Compares two crawlrank binaries on one graph: the same `simulate` run, alternated REPS times
# so that the load of the machine falls on both alike, then checks that every policy's crawl
# order and every measure are identical and prints each policy's crawl-loop time per run.
#
#   scripts/compare-simulate.sh OLD_BIN NEW_BIN GRAPH [REPS] [POLICIES]
#
# Used to show that a refactor changes neither behaviour nor speed (docs/performance.md).
set -euo pipefail
old=$1 new=$2 graph=$3 reps=${4:-3} policies=${5:-all}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CRAWLRANK_CACHE=${CRAWLRANK_CACHE:-$work/cache}
for i in $(seq 1 "$reps"); do
    for side in old new; do
        bin=$old; [ "$side" = new ] && bin=$new
        "$bin" simulate --graph "$graph" --policy "$policies" --out "$work/$side-$i" --save-orders \
            >"$work/$side-$i.txt" 2>"$work/$side-$i.err"
    done
done
same=yes
for f in "$work"/old-1/*.order "$work"/old-1/summary.csv; do
    if ! cmp -s "$f" "$work/new-1/$(basename "$f")"; then
        echo "DIFFERENT: $(basename "$f")"
        same=no
    fi
done
echo "orders and summary.csv identical: $same"
printf '%-18s' policy
for i in $(seq 1 "$reps"); do printf '%12s%12s' "old#$i" "new#$i"; done
echo
# The per-policy crawl-loop time is the line "  <policy> <time>" on stderr.
for p in $(awk '/^  [a-z-]+ +[0-9.]+[mµ]?s$/ {print $1}' "$work/old-1.err"); do
    printf '%-18s' "$p"
    for i in $(seq 1 "$reps"); do
        for side in old new; do
            printf '%12s' "$(awk -v p="$p" '$1 == p {print $2}' "$work/$side-$i.err")"
        done
    done
    echo
done
