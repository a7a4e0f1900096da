#!/usr/bin/env bash
# Simulator benchmarks: arcs/s of every policy's crawl loop on LAW cnr-2000 with
# one thread, batch-pagerank's 72 reorders, and every non-batch policy on a generated
# 10^9-arc web with its time and peak memory.
#
#   scripts/bench-simulate.sh [cnr|big|all]   (default: cnr)
#
# Environment: CRAWLRANK_SHARED_DATA (default ../shared/data beside the checkout),
# BENCH_DIR (default /tmp/crawlrank-bench-sim), BIG_PAGES (default 100000000, ~10^9 arcs), BIN (a
# crawlrank binary to time; default: build and use target/release/crawlrank).
# Installs GNU time with apt-get when /usr/bin/time is missing. Writes nothing into the data.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
what=${1:-cnr}
big_pages=${BIG_PAGES:-100000000}
bench_setup sim

if [ "$what" = cnr ] || [ "$what" = all ]; then
    cnr=$data/cnr-2000/cnr-2000
    if [ -f "$cnr.graph" ]; then
        echo "## cnr-2000, every policy, one thread (RAYON_NUM_THREADS=1), 100 random seeds, rng seed 42"
        RAYON_NUM_THREADS=1 "$BIN" simulate --graph "$cnr" --policy all --seeds 100 --rng-seed 42 \
            --out "$bench/cnr-1thread"
        echo "## cnr-2000, batch policies with 2 threads for their PageRanks"
        "$BIN" simulate --graph "$cnr" --policy batch-pagerank,partial-pagerank --seeds 100 --rng-seed 42
    else
        echo "skipping cnr-2000: $cnr.graph not found (set CRAWLRANK_SHARED_DATA)"
    fi
fi

if [ "$what" = big ] || [ "$what" = all ]; then
    big=$bench/web-$big_pages
    if [ ! -f "$big.properties" ]; then
        echo "## generating $big_pages pages"
        /usr/bin/time -f "generate: %e s, peak RSS %M KiB" "$BIN" generate --pages "$big_pages" --out "$big" --seed 1
    fi
    echo "## reference PageRank (cached for the runs below)"
    /usr/bin/time -f "reference: %e s, peak RSS %M KiB" "$BIN" simulate --graph "$big" --policy bfs --seeds 100 --rng-seed 42 >/dev/null
    for p in bfs random backlink indegree opic fica fica-plus ieca omniscient; do
        echo "## $p on $big_pages pages"
        RAYON_NUM_THREADS=1 /usr/bin/time -f "$p: %e s wall, peak RSS %M KiB" \
            "$BIN" simulate --graph "$big" --policy "$p" --seeds 100 --rng-seed 42 | tail -n 1
    done
fi
