#!/usr/bin/env bash
# Reproduces docs/results.md, "Impact-aware frontier ranking": `crawlrank frontier-rank` (every method, ω
# tuned on the training part) on Wikispeedia with its real navigation traffic, and on cnr-2000 and a
# generated 10^7-page web with both synthetic impact profiles (`crawlrank impacts --profile web|wiki`).
#
#   scripts/rw-results.sh                 # all cases
#   CASES="wikispeedia cnr-wiki" scripts/rw-results.sh
#
# DATA: the real graphs (default ../shared/data); WORK: imported/generated graphs and impact tables
# (default target/rw-results); OUT: results (default docs/results/rw); METHODS (default all); BOOTSTRAP
# (resamples when tuning ω, default 20; the 10^7-page web was run with 0 and without learned); REPEAT
# (runs, each its own seed set, BFS and split: rng seeds 1..REPEAT, default 10; 1 writes scores.tsv); BIN
# (default target/release/crawlrank, built here).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
CASES=${CASES:-"wikispeedia-visits wikispeedia-clicks cnr-wiki cnr-web web-1e7-wiki web-1e7-web"}
FRACTION=${FRACTION:-0.3}
METHODS=${METHODS:-all}
BOOTSTRAP=${BOOTSTRAP:-20}
REPEAT=${REPEAT:-10}
results_setup rw

wikispeedia() {
    if [ ! -e "$WORK/wikispeedia.graph" ]; then
        $BIN import "$DATA/wikispeedia" --format wikispeedia --out "$WORK/wikispeedia" >&2
    fi
    [ -e "$WORK/wikispeedia-impacts.tsv" ] || $BIN impacts --wikispeedia "$DATA/wikispeedia" \
        --graph "$WORK/wikispeedia" --out "$WORK/wikispeedia-impacts.tsv" >&2
}
synthetic() { # graph name profile
    [ -e "$WORK/$2-$3.tsv" ] || $BIN impacts --graph "$1" --out "$WORK/$2-$3.tsv" --profile "$3" --seed 1 \
        >"$WORK/$2-$3.log"
}
web() {
    [ -e "$WORK/web-1e7.graph" ] || $BIN generate --pages 10000000 --seed 1 --out "$WORK/web-1e7" >&2
}

for case in $CASES; do
    case $case in
    wikispeedia-visits | wikispeedia-clicks)
        wikispeedia
        graph=$WORK/wikispeedia impact=$WORK/wikispeedia-impacts.tsv column=${case#wikispeedia-} ;;
    cnr-wiki | cnr-web)
        graph=$DATA/cnr-2000/cnr-2000 profile=${case#cnr-}
        synthetic "$graph" cnr "$profile"
        impact=$WORK/cnr-$profile.tsv column=views ;;
    web-1e7-wiki | web-1e7-web)
        web
        graph=$WORK/web-1e7 profile=${case#web-1e7-}
        synthetic "$graph" web-1e7 "$profile"
        impact=$WORK/web-1e7-$profile.tsv column=views ;;
    *) echo "unknown case $case" >&2; exit 2 ;;
    esac
    echo "== $case" >&2
    mkdir -p "$OUT/$case"
    $BIN frontier-rank --graph "$graph" --downloaded-fraction "$FRACTION" --impact "$impact" \
        --impact-column "$column" --method "$METHODS" --omega tune --bootstrap "$BOOTSTRAP" \
        --rng-seed 1 --repeat "$REPEAT" --out "$OUT/$case" | tee "$OUT/$case/table.txt"
    # A frontier of millions of pages makes a scores.tsv too large to keep beside the docs.
    if [ -e "$OUT/$case/scores.tsv" ] && [ "$(stat -c %s "$OUT/$case/scores.tsv")" -gt 20000000 ]; then
        mv "$OUT/$case/scores.tsv" "$WORK/$case-scores.tsv"
        echo "(scores.tsv moved to $WORK/$case-scores.tsv)" >>"$OUT/$case/table.txt"
    fi
done
