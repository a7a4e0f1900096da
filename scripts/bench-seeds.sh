#!/usr/bin/env bash
# Seed extraction benchmark: seconds for 100 community seeds (`crawlrank seeds`, the
# paper's defaults: cover density 100, 60 HITS iterations a round) on LAW cnr-2000 and on a
# generated web of 10^7 pages and about 10^8 arcs (host-pruned, as the paper), with the time per
# round, what dominates (HITS, cores, pruning, loading) and peak memory.
#
#   scripts/bench-seeds.sh [cnr|web|all]   (default: all)
#
# Environment: CRAWLRANK_SHARED_DATA (default ../shared/data beside the checkout), BENCH_DIR
# (default /tmp/crawlrank-bench-seeds), WEB_PAGES (default 10000000), COUNT (default 100),
# EXTRA (more `seeds` options, e.g. "--hits-tolerance 1e-9"), BIN (a crawlrank binary to time;
# default: build and use target/release/crawlrank). Installs GNU time with apt-get when
# /usr/bin/time is missing. Writes nothing into the data.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
what=${1:-all}
web_pages=${WEB_PAGES:-10000000}
count=${COUNT:-100}
extra=${EXTRA:-}
bench_setup seeds

# Runs `seeds` on $1 (label $2) and summarises its log: rounds, seconds, per round, split.
run() {
    local graph=$1 label=$2 log="$bench/$2.log"
    # shellcheck disable=SC2086
    /usr/bin/time -f "wall %e s, peak RSS %M KiB" "$BIN" seeds --graph "$graph" --count "$count" \
        --out "$bench/$label.seeds" $extra 2>"$log" >/dev/null
    local hits core
    hits=$(grep -o 'HITS [0-9]* iterations [0-9.]*[mµ]*s' "$log" | awk '{
        v = $4; u = v; sub(/[0-9.]+/, "", u); sub(/[mµ]*s$/, "", v);
        if (u == "ms") v /= 1000; else if (u == "µs") v /= 1e6; s += v; n++; it += $2
    } END { printf "%d rounds, HITS %.1f s (%.2f s a round, %.0f iterations a round)", n, s, s / n, it / n }')
    echo "$label: $(head -1 "$log" | sed 's/^[^:]*: //')"
    echo "  $(grep '^pruned\|^not pruned' "$log")"
    echo "  $hits"
    echo "  $(grep 'rounds in' "$log")"
    echo "  $(tail -1 "$log")"
}

if [ "$what" = cnr ] || [ "$what" = all ]; then
    cnr=$data/cnr-2000/cnr-2000
    if [ -f "$cnr.graph" ]; then
        run "$cnr" cnr-2000
    else
        echo "cnr-2000: $cnr.graph not found (set CRAWLRANK_SHARED_DATA); skipped"
    fi
fi
if [ "$what" = web ] || [ "$what" = all ]; then
    web=$bench/web-$web_pages
    [ -f "$web.graph" ] || "$BIN" generate --pages "$web_pages" --seed 1 --out "$web" >/dev/null
    run "$web" "web-$web_pages"
fi
