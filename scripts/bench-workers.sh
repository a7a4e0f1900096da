#!/usr/bin/env bash
# End-to-end pages/s of crawl workers sharing one frontier service, on the
# local test web (loopback only; nothing leaves the machine): `crawlrank serve` serves a
# generated web, `crawlrank frontier serve` holds the crawl, and 1 then 2 `crawlrank crawl
# --frontier` workers fetch TOTAL pages together (each TOTAL/N, --max-pages), each at
# CONCURRENCY. Beside them, the same crawl by `crawlrank crawl` with its own frontier (the
# engine, no service) as the peer. Every run starts from a fresh frontier state. Prints a
# markdown table for docs/performance.md.
#
#   scripts/bench-workers.sh [PAGES] [HOSTS] [TOTAL] [CONCURRENCY] [LATENCY_MS]
#       defaults 200000 2000 20000 16 20; LATENCY_MS is the test web's delay before each
#       answer (a network's round trip: with 0 the run measures CPU on a shared machine)
#
# Other settings (environment): OUT (default target/bench-workers), WEBS (generated webs,
# kept for reuse, default target/bench-crawl-scale/webs, shared with bench-crawl-scale.sh),
# SEED (1), POLICY (fica), RUN_TIMEOUT (900 s per run), COMMIT_MS (the service's
# --commit-interval; default: the service's own), NODES (1: one `frontier serve`; N > 1: a
# cluster of N nodes on one `nats-server -js`, docs/scaling.md, the workers given the first
# node's address and leasing from every node), WARC (0: --no-warc, the default; 1: the
# engine and the workers write WARC files, the engine synced ahead of each commit of its
# state, a worker ahead of each report).
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. scripts/common.sh
ROOT=$PWD

PAGES="${1:-200000}"
HOSTS="${2:-2000}"
TOTAL="${3:-20000}"
CONC="${4:-16}"
LATENCY="${5:-20}"
OUT="${OUT:-$ROOT/target/bench-workers}"
WEBS="${WEBS:-$ROOT/target/bench-crawl-scale/webs}"
SEED="${SEED:-1}"
POLICY="${POLICY:-fica}"
RUN_TIMEOUT="${RUN_TIMEOUT:-900}"
NODES="${NODES:-1}"
WARC="${WARC:-0}"

die() {
    echo "bench-workers: $*" >&2
    exit 1
}
[[ -z "${COMMIT_MS:-}" || "$COMMIT_MS" =~ ^[0-9]+$ ]] || die "COMMIT_MS must be a whole number, not '$COMMIT_MS'"
for v in PAGES HOSTS TOTAL CONC LATENCY SEED RUN_TIMEOUT NODES; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
((PAGES > 0 && HOSTS > 0 && HOSTS <= PAGES)) || die "need 0 < HOSTS ($HOSTS) <= PAGES ($PAGES)"
((TOTAL >= 2 && CONC > 0)) || die "TOTAL must be at least 2 and CONCURRENCY at least 1"
((NODES >= 1)) || die "NODES must be at least 1"
NATS_SERVER=$(command -v nats-server || echo /usr/sbin/nats-server)
((NODES == 1)) || [[ -x "$NATS_SERVER" ]] || die "NODES > 1 needs nats-server (apt-get install nats-server)"

mkdir -p "$OUT" "$WEBS"
OUT=$(cd "$OUT" && pwd)
WEBS=$(cd "$WEBS" && pwd)
CACHE="$WEBS/cache"

# Everything this script starts is killed however it ends.
PIDS=()
kill_pids_on_exit
# BIN, when set, is the binary measured (another build to compare with); else built here.
[[ -n "${BIN:-}" ]] || release_bin_in_target

echo "== bench-workers: web of $PAGES pages on $HOSTS hosts, $TOTAL pages per run, concurrency $CONC" \
    "per crawler, test-web latency $LATENCY ms, policy $POLICY"
echo "   $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

WEB_DIR="$WEBS/web-p$PAGES-h$HOSTS-s$SEED"
WEB="$WEB_DIR/web"
if [[ ! -f "$WEB_DIR/complete" ]]; then
    rm -rf "$WEB_DIR"
    mkdir -p "$WEB_DIR"
    "$BIN" --cache "$CACHE" generate --pages "$PAGES" --hosts "$HOSTS" --seed "$SEED" --out "$WEB" \
        >"$WEB_DIR/generate.log" 2>&1 || { cat "$WEB_DIR/generate.log" >&2; die "generate failed"; }
    touch "$WEB_DIR/complete"
fi
head -n 1 "$WEB.urls" >"$OUT/seeds.txt"

# Starts a server in the background, logging to $2, and waits for its address (a line
# matching $3's sed pattern) and for the port to accept; sets ADDR.
start_server() { # NAME LOG SED -- COMMAND...
    local name=$1 log=$2 pattern=$3 pid deadline
    shift 4
    "$@" >"$log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    ADDR=
    deadline=$((SECONDS + 300))
    while :; do
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; die "$name exited before listening"; }
        [[ -n "$ADDR" ]] || ADDR=$(sed -n "$pattern" "$log" | head -n 1)
        if [[ -n "$ADDR" ]] && (: <>"/dev/tcp/127.0.0.1/${ADDR##*:}") 2>/dev/null; then
            break
        fi
        ((SECONDS < deadline)) || die "$name did not listen within 300 s; see $log"
        sleep 0.1
    done
    LAST_PID=$pid
}

start_server "the test web" "$OUT/serve.log" 's|.*at http://\(127\.0\.0\.1:[0-9]*\).*|\1|p' -- \
    "$BIN" --cache "$CACHE" serve --graph "$WEB" --addr 127.0.0.1:0 --latency "$LATENCY"
WEB_ADDR=$ADDR
echo "test web: http://$WEB_ADDR"

COMMON=(--seeds "$OUT/seeds.txt" --proxy "http://$WEB_ADDR" --delay 0 --concurrency "$CONC")
((WARC == 1)) || COMMON+=(--no-warc)

# Waits for the given PIDs, at most RUN_TIMEOUT seconds in all.
wait_all() {
    local deadline=$((SECONDS + RUN_TIMEOUT)) pid
    for pid in "$@"; do
        while kill -0 "$pid" 2>/dev/null; do
            ((SECONDS < deadline)) || die "a run took over $RUN_TIMEOUT s (RUN_TIMEOUT)"
            sleep 0.05
        done
        wait "$pid" || die "a crawler failed (pid $pid); see $OUT"
    done
}

ROWS=()

# The engine alone: the peer.
rm -rf "$OUT/engine"
t=$(now)
"$BIN" --cache "$CACHE" crawl "${COMMON[@]}" --state "$OUT/engine" --policy "$POLICY" \
    --max-pages "$TOTAL" >"$OUT/engine.log" 2>&1 &
pid=$!
PIDS+=("$pid")
wait_all "$pid"
secs=$(since "$t" 2)
ROWS+=("| \`crawlrank crawl\` (its own frontier) | 1 × $CONC | $TOTAL | $secs | $(awk -v n="$TOTAL" -v s="$secs" 'BEGIN { printf "%.0f", n / s }') |")

# A free loopback port (the kernel's choice, released for the server to take).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts the frontier for a run of $1 workers: one `frontier serve`, or NODES nodes of a
# cluster on a fresh nats-server; sets ADDR (the address the workers are given) and
# SERVICE_PIDS.
start_frontier() {
    local workers=$1 i nodes=() list nats_port
    rm -rf "$OUT/frontier-$workers" "$OUT/nats-$workers"
    SERVICE_PIDS=()
    if ((NODES == 1)); then
        start_server "the frontier service" "$OUT/frontier-$workers.log" 's|.* API on \([0-9.:]*\).*|\1|p' -- \
            "$BIN" --cache "$CACHE" frontier serve --state "$OUT/frontier-$workers" --addr 127.0.0.1:0 \
            --policy "$POLICY" --expected-pages "$TOTAL" ${COMMIT_MS:+--commit-interval "$COMMIT_MS"}
        SERVICE_PIDS+=("$LAST_PID")
        return
    fi
    nats_port=$(free_port)
    start_server "nats-server" "$OUT/nats-$workers.log" "s|.*Listening for client connections on .*|127.0.0.1:$nats_port|p" -- \
        "$NATS_SERVER" -js -a 127.0.0.1 -p "$nats_port" -sd "$OUT/nats-$workers"
    SERVICE_PIDS+=("$LAST_PID")
    for ((i = 0; i < NODES; i++)); do
        nodes+=("127.0.0.1:$(free_port)")
    done
    list=$(IFS=,; echo "${nodes[*]}")
    for ((i = 0; i < NODES; i++)); do
        start_server "frontier node $i" "$OUT/frontier-$workers-node$i.log" 's|.* API on \([0-9.:]*\).*|\1|p' -- \
            "$BIN" --cache "$CACHE" frontier serve --state "$OUT/frontier-$workers/node$i" \
            --addr "${nodes[$i]}" --nats "nats://127.0.0.1:$nats_port" --nodes "$list" \
            --policy "$POLICY" --expected-pages "$TOTAL" ${COMMIT_MS:+--commit-interval "$COMMIT_MS"}
        SERVICE_PIDS+=("$LAST_PID")
    done
    ADDR=${nodes[0]}
}

for workers in 1 2; do
    start_frontier "$workers"
    each=$((TOTAL / workers))
    pids=()
    t=$(now)
    for ((w = 0; w < workers; w++)); do
        rm -rf "$OUT/worker-$workers-$w"
        "$BIN" --cache "$CACHE" crawl "${COMMON[@]}" --frontier "http://$ADDR" \
            --state "$OUT/worker-$workers-$w" --max-pages "$each" >"$OUT/worker-$workers-$w.log" 2>&1 &
        pids+=($!)
        PIDS+=($!)
    done
    wait_all "${pids[@]}"
    secs=$(since "$t" 2)
    fetched=0
    for ((w = 0; w < workers; w++)); do
        n=$(sed -n 's/.*; \([0-9]*\) pages fetched in .*/\1/p' "$OUT/worker-$workers-$w.log")
        [[ -n "$n" ]] || die "no summary in $OUT/worker-$workers-$w.log"
        fetched=$((fetched + n))
    done
    for pid in "${SERVICE_PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    on=""
    ((NODES == 1)) || on=" on $NODES nodes"
    ROWS+=("| \`crawl --frontier\` workers$on | $workers × $CONC | $fetched | $secs | $(awk -v n="$fetched" -v s="$secs" 'BEGIN { printf "%.0f", n / s }') |")
done

echo
echo "| crawler | workers × concurrency | pages fetched | seconds | pages/s |"
echo "|---|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
