#!/usr/bin/env bash
# Reproduces docs/results.md, "Seeds from communities": for each graph, 10 community seeds
# (`crawlrank seeds`), their evaluation against 10 random seeds (`seeds-eval`: BFS by depth, core
# distances) and the ordering policies crawled from both seed sets (`simulate --compare-random`).
#
#   scripts/seeds-results.sh            # all four graphs
#   GRAPHS="cnr hollins" scripts/seeds-results.sh
#
# DATA: the folder of the real graphs (default ../shared/data); WORK: where imported and generated
# graphs go (default target/seeds-results); OUT: the results (default docs/results/seeds).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data}
WORK=${WORK:-target/seeds-results}
OUT=${OUT:-docs/results/seeds}
GRAPHS=${GRAPHS:-"cnr hollins wikispeedia web-1e7"}
COUNT=${COUNT:-10}
BIN=target/release/crawlrank
cargo build --release --quiet
mkdir -p "$WORK" "$OUT"

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
    esac
    echo "== $name: $graph" >&2
    $BIN seeds --graph "$graph" --count "$COUNT" --out "$dir/seeds.txt" "${prune[@]}" 2>&1 | tee "$dir/seeds.log" >&2
    $BIN seeds-eval --graph "$graph" --seeds "$dir/seeds.txt" --out "$dir/eval" | tee "$dir/eval.txt"
    $BIN simulate --graph "$graph" --seeds-file "$dir/seeds.txt" --compare-random \
        --policy "$policies" --out "$dir/simulate" | tee "$dir/simulate.txt"
done
