#!/usr/bin/env bash
# What each trap of the test web costs a FICA crawl (docs/crawler.md, "A hostile web: the
# measure"). Generates a normal web of PAGES pages on HOSTS hosts, serves it with the trap
# catalogue (`crawlrank serve --traps`: its first page links to the trap index) on loopback,
# crawls it from its first page with policy fica for each budget (--max-pages) and each set of
# extra crawl options, and prints a markdown table per run: requests per trap family (robots.txt
# included), their share of all requests, and when the normal web was finished (the request
# after which no normal page was fetched, as a share of all requests).
#
#   scripts/hostile-measure.sh [PAGES] [HOSTS]            (defaults: 3000 30)
#   BUDGETS="1000 3000 10000" OPTIONS=("" "--max-hops 10") are the defaults; set BUDGETS in the
#   environment, and EXTRA="--max-hops 10" to run only that option set. DELAY (milliseconds,
#   default 0) is the crawl's --delay; each run also lists the hosts that, by the server's log,
#   saw two requests at once or two starting closer than DELAY (none, for a polite crawler).
#   WORKER=1 crawls the same web through `crawlrank frontier serve --policy fica` and one worker
#   (`crawl --frontier`, the same options, --idle-exit 5) instead: the option sets go to the
#   service (the caps and hop limits are its options), the budget to the worker. BIN=path uses
#   that binary instead of building the release one.
# Needs python3 for the tables. Nothing leaves the machine.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
ROOT=$PWD
PAGES="${1:-3000}"
HOSTS="${2:-30}"
BUDGETS="${BUDGETS:-1000 3000 10000}"
DELAY="${DELAY:-0}"
WORKER="${WORKER:-0}"
if [[ -n "${EXTRA+x}" ]]; then OPTIONS=("$EXTRA"); else OPTIONS=("" "--max-hops 10"); fi
for v in PAGES HOSTS DELAY WORKER; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "hostile-measure: $v must be a whole number" >&2; exit 1; }
done

. scripts/common.sh
if [[ -z "${BIN:-}" ]]; then release_bin_in_target; fi
WORK=$(mktemp -d)
SERVE_PID=
FRONTIER_PID=
cleanup() {
    [[ -n "$SERVE_PID" ]] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
    [[ -n "$FRONTIER_PID" ]] && kill "$FRONTIER_PID" 2>/dev/null && wait "$FRONTIER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

# Waits (at most 60 s) for the address a server's log names after `$2` (a sed pattern).
wait_addr() {
    local addr=
    for _ in $(seq 1 600); do
        addr=$(grep -m 1 -o "$2[0-9.]*:[0-9]*" "$1" | sed "s|$2||" || true)
        [[ -n "$addr" ]] && break
        sleep 0.1
    done
    [[ -n "$addr" ]] || { cat "$1" >&2; exit 1; }
    echo "$addr"
}

"$BIN" --cache "$WORK/cache" generate --pages "$PAGES" --hosts "$HOSTS" --seed 1 --out "$WORK/web" >/dev/null
head -n 1 "$WORK/web.urls" >"$WORK/seeds.txt"

for opts in "${OPTIONS[@]}"; do
    for budget in $BUDGETS; do
        "$BIN" --cache "$WORK/cache" serve --graph "$WORK/web" --addr 127.0.0.1:0 --traps \
            --log "$WORK/log.tsv" >"$WORK/serve.log" 2>&1 &
        SERVE_PID=$!
        ADDR=$(wait_addr "$WORK/serve.log" 'at http://')
        rm -rf "$WORK/state" "$WORK/frontier"
        start=$SECONDS
        if [[ "$WORKER" == 1 ]]; then
            # shellcheck disable=SC2086 # $opts is a list of options
            "$BIN" frontier serve --state "$WORK/frontier" --addr 127.0.0.1:0 --policy fica $opts \
                >"$WORK/frontier.log" 2>&1 &
            FRONTIER_PID=$!
            FRONTIER=$(wait_addr "$WORK/frontier.log" ' API on ')
            "$BIN" crawl --frontier "http://$FRONTIER" --seeds "$WORK/seeds.txt" --state "$WORK/state" \
                --proxy "http://$ADDR" --delay "$DELAY" --timeout 10 --concurrency 16 --max-pages "$budget" \
                --no-warc --idle-exit 5 >"$WORK/crawl.log" 2>&1 || { cat "$WORK/crawl.log" >&2; exit 1; }
            secs=$((SECONDS - start))
            skipped=$("$BIN" status --frontier "http://$FRONTIER" | grep 'links skipped' || true)
            kill -INT "$FRONTIER_PID"
            wait "$FRONTIER_PID" || true
            FRONTIER_PID=
            how="through frontier serve ${opts:-(defaults)} and one worker"
        else
            # shellcheck disable=SC2086 # $opts is a list of options
            "$BIN" crawl --seeds "$WORK/seeds.txt" --state "$WORK/state" --policy fica \
                --proxy "http://$ADDR" --delay "$DELAY" --timeout 10 --concurrency 16 --max-pages "$budget" \
                --no-warc $opts >"$WORK/crawl.log" 2>&1 || { cat "$WORK/crawl.log" >&2; exit 1; }
            secs=$((SECONDS - start))
            skipped=
            how="${opts:-(defaults)}"
        fi
        kill -INT "$SERVE_PID"
        wait "$SERVE_PID" || true
        SERVE_PID=
        echo
        echo "### --max-pages $budget $how: ${secs} s"
        if [[ "$WORKER" == 1 ]]; then
            grep -h '^worker stopped' "$WORK/crawl.log" || true
            if [[ -n "$skipped" ]]; then echo "$skipped"; fi
            echo
        fi
        python3 - "$WORK/log.tsv" "$PAGES" "$DELAY" <<'EOF'
import sys, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
rows.sort(key=lambda r: int(r[0]))  # by arrival
normal_pages = int(sys.argv[2])
delay_us = int(sys.argv[3]) * 1000

def family(host, path):
    if host == "traps.crawlrank.test":
        p = path.split("?")[0]
        if p.startswith("/chain/"):  # /chain/100000 and the short /chain/3
            return "traps host /chain/100000…" if len(p) > 10 else "traps host /chain/3…"
        for prefix in ["/lin/", "/d/", "/trap/", "/calendar", "/grow", "/redirect-loop/",
                       "/loc/", "/huge.html", "/slow.html", "/big.bin", "/robots.txt"]:
            if p.startswith(prefix):
                return "traps host " + prefix
        return "traps host: other entries"
    if host.endswith(".traps.crawlrank.test"):
        name = host[: -len(".traps.crawlrank.test")]
        return "hop hosts (cross-host redirects)" if name.startswith("hop") else name
    return "normal web"

count = collections.Counter()
normal_ok = set()
last_normal = 0
for i, r in enumerate(rows, 1):
    host, path, status, node = r[2], r[3], r[4], r[7]
    f = family(host, path)
    count[f] += 1
    if f == "normal web" and node != "-" and status == "200":
        normal_ok.add(node)
        last_normal = i
total = len(rows)
print(f"{total} requests; normal web: {len(normal_ok)} of {normal_pages} pages fetched, "
      f"the last at request {last_normal} ({100 * last_normal / max(total, 1):.0f}% of the crawl)")
print()
print("| requests to | requests | share |")
print("|---|---:|---:|")
for f, n in sorted(count.items(), key=lambda kv: -kv[1]):
    print(f"| {f} | {n:,} | {100 * n / total:.1f}% |")

# Politeness from the server's side: per host, a request that arrived before the previous
# answer ended (two at once), or started less than the delay after the previous one.
last = {}
impolite = collections.Counter()
for r in rows:
    host, arrival, finish = r[2], int(r[0]), int(r[1])
    if host in last:
        prev_arrival, prev_finish = last[host]
        if arrival < prev_finish or arrival - prev_arrival < delay_us:
            impolite[host] += 1
        finish = max(finish, prev_finish)
    last[host] = (arrival, finish)
print()
print(f"hosts with two requests at once or closer than {delay_us // 1000} ms: "
      + (", ".join(f"{h} ({n})" for h, n in impolite.most_common()) or "none"))
EOF
    done
done
