#!/usr/bin/env bash
# Generation speed and peak memory of crawlrank-gen (the numbers of docs/performance.md).
#
#   scripts/bench-generate.sh [OUT_DIR] [SIZES...]
#
# OUT_DIR defaults to a fresh temporary directory (removed at the end unless KEEP=1); SIZES
# (pages) default to "1000000 10000000 100000000" (10^8 pages = 10^9 arcs needs about 5 GB of
# disk for the .urls and 0.7 GB for the graph). THREADS (default: all cores) sets the rayon
# pool; SEED (default 0) the generator seed. Peak RSS comes from GNU time (`/usr/bin/time -v`;
# `apt-get install time` if missing).
set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/common.sh
out=${1:-}
shift || true
sizes=${*:-"1000000 10000000 100000000"}
threads=${THREADS:-$(nproc)}
seed=${SEED:-0}

need_gnu_time
if [[ -z "$out" ]]; then
    out=$(mktemp -d)
    [[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

cargo build --release -q -p crawlrank-gen --example generate
bin=target/release/examples/generate

echo "# crawlrank-gen: $(nproc) cores, $threads threads, seed $seed, $(date -u +%F)"
printf '%-12s %-14s %-9s %-10s %-12s %-12s %-10s %-10s\n' \
    pages arcs seconds "M arcs/s" "M pages/s" "peak RSS" bits/link "disk"
for n in $sizes; do
    base="$out/gen-$n"
    log=$(mktemp)
    RAYON_NUM_THREADS=$threads /usr/bin/time -v "$bin" "$n" "$base" "$seed" >"$log" 2>&1 || {
        cat "$log" >&2
        exit 1
    }
    line=$(grep '^pages ' "$log")
    rss_kb=$(grep 'Maximum resident set size' "$log" | awk '{print $NF}')
    wall=$(grep 'Elapsed (wall clock)' "$log" | awk '{print $NF}')
    arcs=$(awk '{print $4}' <<<"$line")
    bits=$(awk '{print $10}' <<<"$line")
    secs=$(awk '{print $12}' <<<"$line")
    maps=$(awk '{print $14}' <<<"$line")
    mpps=$(awk '{print $17}' <<<"$line")
    disk=$(du -ch "$base".* | tail -1 | cut -f1)
    printf '%-12s %-14s %-9s %-10s %-12s %-12s %-10s %-10s\n' \
        "$n" "$arcs" "$secs" "$maps" "$mpps" "$((rss_kb / 1024)) MiB" "$bits" "$disk"
    echo "    (wall clock incl. process start: $wall)"
    rm -f "$log"
    [[ "${KEEP:-0}" == 1 ]] || rm -f "$base".*
done
