#!/usr/bin/env bash
# Reproduces docs/results.md, "Seeds from communities": for each graph, 10 community seeds
# (`crawlrank seeds`), their evaluation against 10 random seeds (`seeds-eval`: BFS by depth, core
# distances) and the ordering policies crawled from both seed sets (`simulate --compare-random`).
#
#   scripts/seeds-results.sh            # all four graphs
#   GRAPHS="cnr hollins" scripts/seeds-results.sh
#
# DATA: the folder of the real graphs (default ../shared/data); WORK: where imported and generated
# graphs go (default target/seeds-results); OUT: the results (default docs/results/seeds); REPEAT: the
# random seed sets the community seeds are compared with (rng seeds 1..REPEAT, default 10; the tables
# of docs/results.md come from scripts/seeds-vs-random.py over them); BIN (default
# target/release/crawlrank, built here); KEEP_SEEDS=1 reuses a graph's seeds.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
GRAPHS=${GRAPHS:-"cnr hollins wikispeedia web-1e7"}
COUNT=${COUNT:-10}
REPEAT=${REPEAT:-10}
results_setup seeds

graph_of() {
    case $1 in
    cnr) echo "$DATA/cnr-2000/cnr-2000" ;;
    hollins)
        [ -e "$WORK/hollins.graph" ] || $BIN import "$DATA/hollins/hollins-edges.dat" \
            --urls "$DATA/hollins/hollins-urls.dat" --out "$WORK/hollins" >&2
        echo "$WORK/hollins" ;;
    wikispeedia)
        # Article pairs become URL pairs on en.wikipedia.org (names are already URL-encoded).
        if [ ! -e "$WORK/wikispeedia.graph" ]; then
            gzip -dc "$DATA/wikispeedia/links.tsv.gz" | grep -v '^#' |
                awk -F'\t' 'NF == 2 { print "https://en.wikipedia.org/wiki/" $1 "\thttps://en.wikipedia.org/wiki/" $2 }' \
                    >"$WORK/wikispeedia-pairs.txt"
            $BIN import "$WORK/wikispeedia-pairs.txt" --out "$WORK/wikispeedia" >&2
        fi
        echo "$WORK/wikispeedia" ;;
    web-1e7)
        [ -e "$WORK/web-1e7.graph" ] || $BIN generate --pages 10000000 --seed 1 --out "$WORK/web-1e7" >&2
        echo "$WORK/web-1e7" ;;
    esac
}

for name in $GRAPHS; do
    graph=$(graph_of "$name")
    dir="$OUT/$name"
    mkdir -p "$dir"
    prune=()
    policies=all
    case $name in
    # One host: host pruning would leave no arc.
    wikispeedia) prune=(--no-prune) ;;
    # Ten million pages: the policies that finish in minutes.
    web-1e7) policies=bfs,backlink,indegree,opic,fica,ieca ;;
    # Ten repeats of two crawls each: the policies that finish in seconds at this size.
    cnr) policies=bfs,backlink,indegree,opic,fica,ieca,omniscient ;;
    esac
    echo "== $name: $graph" >&2
    # KEEP_SEEDS=1 keeps a seed set already extracted (Extract-Seeds is deterministic).
    if [ "${KEEP_SEEDS:-0}" != 1 ] || [ ! -e "$dir/seeds.txt" ]; then
        $BIN seeds --graph "$graph" --count "$COUNT" --out "$dir/seeds.txt" "${prune[@]}" 2>&1 |
            tee "$dir/seeds.log" >&2
    fi
    for s in $(seq 1 "$REPEAT"); do
        $BIN seeds-eval --graph "$graph" --seeds "$dir/seeds.txt" --random-seeds "$s" \
            --out "$dir/eval-r$s" >"$dir/eval-r$s.txt"
        $BIN simulate --graph "$graph" --seeds-file "$dir/seeds.txt" --compare-random --rng-seed "$s" \
            --policy "$policies" --out "$dir/simulate-r$s" >"$dir/simulate-r$s.txt"
        # Beyond the first set, keep what the comparison reads (comparison.csv, summary.csv).
        if [ "$s" != 1 ]; then
            rm -rf "$dir/simulate-r$s/file" "$dir/simulate-r$s/random" "$dir/eval-r$s"/*.svg
        fi
    done
    scripts/seeds-vs-random.py "$dir" | tee "$dir/vs-random.md"
done
