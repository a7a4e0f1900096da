#!/usr/bin/env bash
# crawlrank against the `spider` crate, side by side, at equal work and on equal CPU
#. Loopback only; nothing leaves the machine.
#
#   scripts/bench-vs-spider.sh [PAGES] [CONCURRENCY] [ROUNDS]     (defaults: 100000 64 3)
#
# Why it is built this way (docs/performance.md, "Against spider"):
# - The test web runs as its own process (`crawlrank serve`) pinned to CPU 0, and every
#   crawler runs as its own process pinned to CPU 1 (CRAWLER_CPUS / SERVER_CPUS override),
#   so no crawler competes with the server it measures, and both crawlers get the same core.
# - A fresh server per crawl writes its request log; pages and robots.txt requests are
#   counted from that log, the same way for both crawlers: equal work is checked, not assumed.
# - Each round runs the crawls in a different order (the machine's speed drifts).
# - pages/s is distinct pages served (status 200) / the crawler process's wall time, start to
#   exit (crawlrank's opening and closing of its state included); CPU is the process's user +
#   system time; requests/s counts every request, robots.txt and repeated fetches included.
# Crawls: crawlrank with redb + WARC on disk (`warc`); crawlrank `--no-warc` with its state in
# /dev/shm (`lean`, its nearest to spider's in-memory crawl); spider 2.53.9 reading
# robots.txt (`spider`). Output: one row per crawl in OUT/runs.tsv, then medians.
set -euo pipefail
cd "$(dirname "$0")/.."
PAGES="${1:-100000}"
CONC="${2:-64}"
ROUNDS="${3:-3}"
OUT="${OUT:-target/bench-vs-spider}"
if [[ "$(nproc)" -lt 2 && -z "${SERVER_CPUS:-}${CRAWLER_CPUS:-}" ]]; then
    echo "one CPU: the server and the crawlers share it (nothing pinned)" >&2
    SERVER_CPUS=0 CRAWLER_CPUS=0
fi
SERVER_CPUS="${SERVER_CPUS:-0}"
CRAWLER_CPUS="${CRAWLER_CPUS:-1}"
command -v taskset > /dev/null || { echo "taskset (util-linux) is needed to pin the processes" >&2; exit 1; }
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

cargo build --release --quiet -p crawlrank-cli
cargo build --release --quiet -p crawlrank-crawler --example bench_crawl
CARGO_TARGET_DIR="$PWD/target/bench-spider" cargo build --release --quiet \
    --manifest-path crates/crawler/bench-spider/Cargo.toml
CRAWLRANK="$PWD/target/release/crawlrank"
SPIDER="$PWD/target/bench-spider/release/crawlrank-bench-spider"
GRAPH="$OUT/web-$PAGES.arcs"
[[ -f "$GRAPH" ]] || target/release/examples/bench_crawl --write-graph "$PAGES" "$GRAPH"
SEED_URL="http://h0.crawlrank.test/p0.html"
SEEDS="$OUT/seeds.txt"
echo "$SEED_URL" > "$SEEDS"
# The lean crawl's state, on the RAM disk.
LEAN_STATE="/dev/shm/crawlrank-bench-vs-spider.$$"

SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$LEAN_STATE"
}
trap cleanup EXIT

# start_server LOG: starts the test web pinned to SERVER_CPUS; sets SERVER_PID and PROXY.
start_server() {
    local said="$OUT/serve.out"
    : > "$said"
    taskset -c "$SERVER_CPUS" "$CRAWLRANK" serve --cache "$OUT/cache" --graph "$GRAPH" \
        --addr 127.0.0.1:0 --log "$1" > "$said" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 600); do
        PROXY="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$said" | head -1 || true)"
        [[ -n "$PROXY" ]] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$said" >&2; exit 1; }
        sleep 0.1
    done
    echo "the test web did not start" >&2
    exit 1
}

# stop_server: Ctrl-C, then wait until the log is written.
stop_server() {
    kill -INT "$SERVER_PID"
    wait "$SERVER_PID" || true
    SERVER_PID=""
}

# run KIND ROUND: one crawl on a fresh server; appends a row to runs.tsv.
run() {
    local kind="$1" round="$2" log="$OUT/log-$1-$2.tsv" times="$OUT/time-$1-$2"
    start_server "$log"
    local state="$OUT/state-$kind"
    rm -rf "$state" "$LEAN_STATE"
    local cmd
    case "$kind" in
        warc) cmd=("$CRAWLRANK" crawl --state "$state") ;;
        lean) cmd=("$CRAWLRANK" crawl --state "$LEAN_STATE" --no-warc) ;;
        spider) cmd=("$SPIDER" "$PROXY" "$SEED_URL" "$PAGES" "$CONC" robots) ;;
    esac
    if [[ "$kind" != spider ]]; then
        cmd+=(--seeds "$SEEDS" --policy fica --concurrency "$CONC" --delay 0 --max-pages "$PAGES"
            --expected-pages "$PAGES" --proxy "$PROXY" --no-sitemaps
            --max-hosts-per-domain "$PAGES" --max-urls-per-domain "$PAGES")
    fi
    local TIMEFORMAT="%R %U %S"
    { time taskset -c "$CRAWLER_CPUS" "${cmd[@]}" > "$OUT/crawl-$kind-$round.out" 2>&1; } 2> "$times"
    stop_server
    rm -rf "$state" "$LEAN_STATE"
    # Pages: graph pages answered 200 (each counted once); robots: robots.txt requests.
    awk -F'\t' -v kind="$kind" -v round="$round" -v t="$(cat "$times")" '
        NR > 1 && $8 ~ /^[0-9]+$/ && $5 == 200 { if (!seen[$8]++) pages++ }
        NR > 1 && $4 == "/robots.txt" { robots++ }
        NR > 1 { requests++ }
        END {
            split(t, x, " ")
            printf "%s\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%.0f\t%.0f\t%.0f\n", kind, round, pages, requests,
                robots, x[1], x[2] + x[3], pages / x[1], pages / (x[2] + x[3]), requests / x[1]
        }' "$log" | tee -a "$OUT/runs.tsv"
    rm -f "$log"
}

printf 'crawl\tround\tpages\trequests\trobots\twall_s\tcpu_s\tpages_per_s\tpages_per_cpu_s\trequests_per_s\n' \
    | tee "$OUT/runs.tsv"
orders=("lean warc spider" "spider lean warc" "warc spider lean")
for round in $(seq "$ROUNDS"); do
    for kind in ${orders[$(( (round - 1) % 3 ))]}; do run "$kind" "$round"; done
done

# Medians per crawl, and crawlrank over spider.
awk -F'\t' 'NR > 1 { rate[$1] = rate[$1] " " $8; cpu[$1] = cpu[$1] " " $9; req[$1] = req[$1] " " $10 }
    function median(s,   a, n, i, j, t) {
        n = split(s, a, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
        for (k in rate) { r[k] = median(rate[k]); c[k] = median(cpu[k]); q[k] = median(req[k]) }
        for (k in rate) printf "median %s: %.0f pages/s, %.0f pages per CPU-second, %.0f requests/s\n", k, r[k], c[k], q[k]
        if ("spider" in r) {
            printf "crawlrank / spider: lean %.2f, warc %.2f (pages/s); lean %.2f, warc %.2f (per CPU-second); lean %.2f, warc %.2f (requests/s)\n",
                r["lean"] / r["spider"], r["warc"] / r["spider"], c["lean"] / c["spider"], c["warc"] / c["spider"],
                q["lean"] / q["spider"], q["warc"] / q["spider"]
        }
    }' "$OUT/runs.tsv"
