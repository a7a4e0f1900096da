#!/usr/bin/env bash
# Repeated experiments: `simulate --policy all --repeat 10` on LAW cnr-2000 against the same ten
# experiments run one by one (`--rng-seed 42` … `51`), wall time and peak RSS of each
# (/usr/bin/time -v). The repeated run computes the reference PageRank once and runs the seed
# sets in parallel; separate runs each decode the graph and read the cached PageRank.
#
#   scripts/bench-repeat.sh
#
# Environment: DATA (default ../shared/data beside the checkout), N (10 seed sets), SEEDS (100
# random seeds per set), POLICY (all), BENCH_DIR (default /tmp/crawlrank-bench-repeat), BIN (a
# crawlrank binary to time; default: build and use target/release/crawlrank). Installs GNU time
# with apt-get when /usr/bin/time is missing. Writes nothing into the data.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
root=$(pwd)
data=${DATA:-$root/../shared/data}
n=${N:-10}
seeds=${SEEDS:-100}
policy=${POLICY:-all}
bench=${BENCH_DIR:-/tmp/crawlrank-bench-repeat}
cnr=$data/cnr-2000/cnr-2000
if [ ! -f "$cnr.graph" ]; then
    echo "cnr-2000 not found at $cnr.graph (set DATA)" >&2
    exit 1
fi
need_gnu_time
release_bin
mkdir -p "$bench"
export CRAWLRANK_CACHE="$bench/cache"
machine_line "; $BIN"

# One run to fill the PageRank cache, so that neither side pays for computing it.
"$BIN" simulate --graph "$cnr" --policy bfs --seeds "$seeds" >/dev/null 2>&1

# time_of LOG: "wall s, peak RSS MiB" from /usr/bin/time -v's report.
time_of() {
    awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]}
                /Maximum resident set size/{kb=$2}
                END{printf "%.2f s wall, peak RSS %.0f MiB\n", s, kb/1024}' "$1"
}

echo "## simulate --policy $policy --seeds $seeds --repeat $n (rng seeds 42..$((41 + n)))"
/usr/bin/time -v -o "$bench/repeat.time" "$BIN" simulate --graph "$cnr" --policy "$policy" \
    --seeds "$seeds" --rng-seed 42 --repeat "$n" --out "$bench/repeat" >"$bench/repeat.txt" 2>"$bench/repeat.err"
echo "repeat $n: $(time_of "$bench/repeat.time")"

echo "## $n separate runs, rng seeds 42..$((41 + n))"
total=0
peak=0
for i in $(seq 0 $((n - 1))); do
    s=$((42 + i))
    /usr/bin/time -v -o "$bench/single-$s.time" "$BIN" simulate --graph "$cnr" --policy "$policy" \
        --seeds "$seeds" --rng-seed "$s" --out "$bench/single-$s" >/dev/null 2>&1
    line=$(time_of "$bench/single-$s.time")
    echo "rng seed $s: $line"
    total=$(awk -v a="$total" -v b="${line%% s wall*}" 'BEGIN{print a + b}')
    mib=$(echo "$line" | sed 's/.*peak RSS \([0-9]*\) MiB/\1/')
    [ "$mib" -gt "$peak" ] && peak=$mib
done
echo "separate $n: $total s wall in all, largest peak RSS $peak MiB"

head -n 20 "$bench/repeat.txt"
