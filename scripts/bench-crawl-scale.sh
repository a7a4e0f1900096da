#!/usr/bin/env bash
# Does crawl throughput hold as the crawl grows?. Generates a synthetic web
# with `crawlrank generate` (reused when already generated), serves it with `crawlrank serve`
# on loopback (nothing leaves the machine), crawls it with `crawlrank crawl` through the server
# as proxy (no delay, no WARC), and every INTERVAL seconds appends a row to
# OUT/timeseries.csv: elapsed s, pages fetched, pages/s over the interval, the crawl process's
# RSS and peak RSS, its open sockets and descriptors, the state directory's size on disk (and
# its database file's), URLs discovered, frontier, descriptor shortages. At the end it plots the CSV
# (OUT/timeseries.svg, crates/sim/examples/plot_timeseries.rs) and prints a markdown table of
# about one sample a minute for docs/performance.md.
#
#   scripts/bench-crawl-scale.sh [PAGES] [HOSTS] [CRAWL_PAGES] [CONCURRENCY]
#       defaults 10000000 100000 1000000 16 (the full run); each may also come from the
#       environment, e.g. PAGES=200000 HOSTS=2000 CRAWL_PAGES=20000 scripts/bench-crawl-scale.sh
#   LOW_NOFILE=1 scripts/bench-crawl-scale.sh ...
#       a short crawl (CRAWL_PAGES default 50000) under `ulimit -n $NOFILE` (1024), which
#       reports whether it completed: exit status, pages fetched, descriptor shortages.
#
# Other settings (environment): OUT (default target/bench-crawl-scale, or
# target/bench-crawl-scale/low-nofile with LOW_NOFILE), WEBS (generated webs kept for reuse,
# default target/bench-crawl-scale/webs), INTERVAL (10 s between samples), SUMMARY_EVERY (60 s
# between rows of the table), SEED (1, the generator's), POLICY (fica), PORT (0: any free
# port), SERVE_TIMEOUT (900 s for the server to load the graph and listen), NOFILE (1024).
# The crawl's state is OUT/state, deleted at the start of every run.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. scripts/common.sh
ROOT=$PWD

PAGES="${1:-${PAGES:-10000000}}"
HOSTS="${2:-${HOSTS:-100000}}"
LOW_NOFILE="${LOW_NOFILE:-}"
if [[ -n "$LOW_NOFILE" && "$LOW_NOFILE" != 0 ]]; then
    LOW_NOFILE=1
    CRAWL_PAGES="${3:-${CRAWL_PAGES:-50000}}"
    OUT="${OUT:-$ROOT/target/bench-crawl-scale/low-nofile}"
else
    LOW_NOFILE=
    CRAWL_PAGES="${3:-${CRAWL_PAGES:-1000000}}"
    OUT="${OUT:-$ROOT/target/bench-crawl-scale}"
fi
CONC="${4:-${CONCURRENCY:-16}}"
WEBS="${WEBS:-$ROOT/target/bench-crawl-scale/webs}"
INTERVAL="${INTERVAL:-10}"
SUMMARY_EVERY="${SUMMARY_EVERY:-60}"
SEED="${SEED:-1}"
POLICY="${POLICY:-fica}"
PORT="${PORT:-0}"
SERVE_TIMEOUT="${SERVE_TIMEOUT:-900}"
NOFILE="${NOFILE:-1024}"

die() {
    echo "bench-crawl-scale: $*" >&2
    exit 1
}
for v in PAGES HOSTS CRAWL_PAGES CONC SEED PORT SERVE_TIMEOUT NOFILE; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
if ! [[ "$INTERVAL" =~ ^[0-9]+([.][0-9]+)?$ ]] || ! awk -v i="$INTERVAL" 'BEGIN { exit !(i > 0) }'; then
    die "INTERVAL must be a number of seconds > 0, not '$INTERVAL'"
fi
((PAGES > 0 && HOSTS > 0 && HOSTS <= PAGES)) || die "need 0 < HOSTS ($HOSTS) <= PAGES ($PAGES)"
((CRAWL_PAGES > 0 && CONC > 0)) || die "CRAWL_PAGES and CONCURRENCY must be at least 1"

mkdir -p "$OUT" "$WEBS"
OUT=$(cd "$OUT" && pwd)
WEBS=$(cd "$WEBS" && pwd)
STATE="$OUT/state"
CACHE="$WEBS/cache" # derived files of the graphs (crawlrank --cache), kept with the webs
CSV="$OUT/timeseries.csv"
PROGRESS="$OUT/progress.tsv"

# Kill what this script started (and only that) however it ends: the crawl first, politely
# (SIGTERM lets it finish its requests in flight, which needs the server), then the server.
CRAWL_PID=
SERVE_PID=
stop_pid() { # PID SIGNAL SECONDS: signal it, wait up to SECONDS, then SIGKILL
    local pid=$1 sig=$2 secs=$3 i
    kill -0 "$pid" 2>/dev/null || return 0
    kill "-$sig" "$pid" 2>/dev/null || true
    for ((i = 0; i < secs * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
# shellcheck disable=SC2317 # called by the trap
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [[ -n "$CRAWL_PID" ]] && stop_pid "$CRAWL_PID" TERM 15
    [[ -n "$SERVE_PID" ]] && stop_pid "$SERVE_PID" TERM 5
    exit "$rc"
}
trap_cleanup

echo "== bench-crawl-scale: web of $PAGES pages on $HOSTS hosts (seed $SEED), crawl $CRAWL_PAGES pages," \
    "concurrency $CONC, policy $POLICY${LOW_NOFILE:+, under ulimit -n $NOFILE}"
echo "   $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), out $OUT"

cargo build --release --quiet -p crawlrank-cli
# The plotter too, now: a compile error should not surface after a long crawl.
cargo build --release --quiet -p crawlrank-sim --example plot_timeseries
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
BIN="$TARGET_DIR/release/crawlrank"
[[ -x "$BIN" ]] || die "no crawlrank binary at $BIN"

# 1. The web, generated once per (pages, hosts, seed): `complete` marks a finished generation.
WEB_DIR="$WEBS/web-p$PAGES-h$HOSTS-s$SEED"
WEB="$WEB_DIR/web"
if [[ -f "$WEB_DIR/complete" ]]; then
    echo "web: reusing $WEB"
else
    rm -rf "$WEB_DIR"
    mkdir -p "$WEB_DIR"
    t=$(now)
    "$BIN" --cache "$CACHE" generate --pages "$PAGES" --hosts "$HOSTS" --seed "$SEED" --out "$WEB" \
        >"$WEB_DIR/generate.log" 2>&1 || { cat "$WEB_DIR/generate.log" >&2; die "generate failed"; }
    echo "web: generated $WEB in $(since "$t") s"
    touch "$WEB_DIR/complete"
fi
[[ -s "$WEB.urls" ]] || die "$WEB.urls is missing or empty: delete $WEB_DIR to generate again"
head -n 1 "$WEB.urls" >"$OUT/seeds.txt"

# 2. The server: loading a big graph takes a while before it listens. It prints its address
# once listening; a connection to that port must then succeed.
t=$(now)
"$BIN" --cache "$CACHE" serve --graph "$WEB" --addr "127.0.0.1:$PORT" >"$OUT/serve.log" 2>&1 &
SERVE_PID=$!
ADDR=
deadline=$((SECONDS + SERVE_TIMEOUT))
while :; do
    kill -0 "$SERVE_PID" 2>/dev/null || {
        cat "$OUT/serve.log" >&2
        SERVE_PID=
        die "the server exited before listening"
    }
    if [[ -z "$ADDR" ]]; then
        ADDR=$(grep -m 1 -o 'at http://127\.0\.0\.1:[0-9]*' "$OUT/serve.log" | sed 's|at http://||' || true)
    fi
    if [[ -n "$ADDR" ]] && (: <>"/dev/tcp/127.0.0.1/${ADDR##*:}") 2>/dev/null; then
        break
    fi
    ((SECONDS < deadline)) || die "the server did not listen within $SERVE_TIMEOUT s (SERVE_TIMEOUT); see $OUT/serve.log"
    sleep 0.2
done
SERVE_SECS=$(since "$t")
echo "serve: listening on $ADDR after $SERVE_SECS s (RSS $(awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$SERVE_PID/status") MiB)"

# 3. The crawl, sampled every INTERVAL seconds.
rm -rf "$STATE" "$PROGRESS"
CRAWL=("$BIN" --cache "$CACHE" crawl --seeds "$OUT/seeds.txt" --state "$STATE" --policy "$POLICY"
    --proxy "http://$ADDR" --delay 0 --no-warc --max-pages "$CRAWL_PAGES" --concurrency "$CONC"
    --max-hosts-per-domain "$HOSTS" --max-urls-per-domain "$PAGES"
    --progress-log "$PROGRESS")
T0=$(now)
if [[ -n "$LOW_NOFILE" ]]; then
    # Soft and hard limit both: the crawler raises its soft limit to the hard one when it can.
    (ulimit -n "$NOFILE" && exec "${CRAWL[@]}") >"$OUT/crawl.log" 2>&1 &
else
    "${CRAWL[@]}" >"$OUT/crawl.log" 2>&1 &
fi
CRAWL_PID=$!

alive() { [[ -r "/proc/$1/status" ]] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

echo "elapsed_s,pages,pages_per_s,rss_mib,rss_peak_mib,sockets,fds,store_mib,redb_mib,discovered,frontier,fd_shortages" >"$CSV"
# The progress log's last complete line: elapsed_s pages_this_run pages_total pages_per_sec
# frontier waiting in_flight idle_connections fetch_limit hosts discovered errors fd_shortages
# (and hosts_active, and any column added after: only the first 13 are read).
PEAK_RSS="?" # the crawl's VmHWM at its last sample
LOG_T=0 PAGES_DONE=0 DISCOVERED=0 FRONTIER=0 SHORTAGES=0 PREV_LOG_T=0 PREV_PAGES=0
read_progress() {
    local line
    line=$(tail -n 1 "$PROGRESS" 2>/dev/null) || return 0
    local -a f
    IFS=$'\t' read -r -a f <<<"$line" || true
    # A header, or a line being written: keep the last values.
    ((${#f[@]} >= 13)) || return 0
    [[ "${f[0]}" =~ ^[0-9.]+$ && "${f[2]}${f[10]}${f[4]}${f[12]}" =~ ^[0-9]+$ ]] || return 0
    LOG_T=${f[0]} PAGES_DONE=${f[2]} FRONTIER=${f[4]} DISCOVERED=${f[10]} SHORTAGES=${f[12]}
}
sample() { # ELAPSED: one row of the CSV
    local elapsed=$1 rate rss="" hwm="" sockets="" fds="" store redb fdinfo
    read_progress
    # pages/s from the crawl's own clock: the log's line may be up to a second old.
    rate=$(awk -v p="$PAGES_DONE" -v q="$PREV_PAGES" -v t="$LOG_T" -v u="$PREV_LOG_T" \
        'BEGIN { printf "%.1f", (t > u) ? (p - q) / (t - u) : 0 }')
    PREV_PAGES=$PAGES_DONE PREV_LOG_T=$LOG_T
    if alive "$CRAWL_PID"; then
        read -r rss hwm < <(awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 }
            END { if (r != "") printf "%.1f %.1f\n", r / 1024, h / 1024; else print "" }' \
            "/proc/$CRAWL_PID/status" 2>/dev/null || true) || true
        # shellcheck disable=SC2012 # the names are numbers; ls -l shows every link at once
        fdinfo=$(ls -l "/proc/$CRAWL_PID/fd" 2>/dev/null |
            awk '/ -> / { n++ } /socket:/ { s++ } END { print s + 0, n + 0 }' || true)
        read -r sockets fds <<<"$fdinfo" || true
        # Gone while being read: those numbers are not its own.
        alive "$CRAWL_PID" || { rss="" hwm="" sockets="" fds=""; }
        [[ -z "$hwm" ]] || PEAK_RSS=$hwm
    fi
    # The whole state directory (with the ranking snapshot the crawl rewrites in it) and its
    # database alone; du counts the blocks used, less than the database file's length.
    store=$(du -sk "$STATE" 2>/dev/null | awk '{ printf "%.1f", $1 / 1024 }' || true)
    redb=$(du -ck "$STATE"/*.redb 2>/dev/null | awk '$2 == "total" { printf "%.1f", $1 / 1024 }' || true)
    echo "$elapsed,$PAGES_DONE,$rate,$rss,$hwm,$sockets,$fds,$store,$redb,$DISCOVERED,$FRONTIER,$SHORTAGES" >>"$CSV"
}

# A live line on a terminal, rewritten in place; whole lines into a file or a pipe.
if [[ -t 2 ]]; then LIVE_END='\r'; else LIVE_END='\n'; fi
next=$INTERVAL
LIMIT_SEEN= # the crawl's open-file limit (soft hard), read once it runs
while alive "$CRAWL_PID"; do
    e=$(since "$T0")
    if [[ -z "$LIMIT_SEEN" ]] && [[ "$(readlink "/proc/$CRAWL_PID/exe" 2>/dev/null || true)" == "$BIN" ]]; then
        LIMIT_SEEN=$(awk '/^Max open files/ { print $4, $5 }' "/proc/$CRAWL_PID/limits" 2>/dev/null || true)
    fi
    if awk -v e="$e" -v n="$next" 'BEGIN { exit !(e >= n) }'; then
        sample "$e"
        next=$(awk -v e="$e" -v n="$next" -v i="$INTERVAL" 'BEGIN { while (n <= e) n += i; print n }')
        tail -n 1 "$CSV" | awk -F, -v end="$LIVE_END" '{ printf "  %7.0f s  %9d pages  %7.0f pages/s  RSS %6s MiB  sockets %4s  fds %4s  store %7s MiB%s", $1, $2, $3, $4, $6, $7, $8, end }' >&2
    fi
    sleep 0.2
done
CRAWL_RC=0
wait "$CRAWL_PID" || CRAWL_RC=$?
CRAWL_PID=
CRAWL_SECS=$(since "$T0")
[[ "$LIVE_END" == '\n' ]] || echo >&2
sample "$CRAWL_SECS" # after the exit: the final counters and store, no process left to measure
echo "crawl: exit status $CRAWL_RC after $CRAWL_SECS s, open-file limit ${LIMIT_SEEN:-?} (soft hard), peak RSS $PEAK_RSS MiB at the last sample; $(grep -m 1 '^crawl stopped' "$OUT/crawl.log" || echo 'no summary line')"
if ((CRAWL_RC != 0)); then
    echo "crawl: its last output lines ($OUT/crawl.log):"
    tail -n 5 "$OUT/crawl.log" | tr '\r' '\n' | tail -n 5 | sed 's/^/  /'
fi

# The state's own account (a full read of it, so it is timed too).
t=$(now)
STATUS_RC=0
"$BIN" --cache "$CACHE" status --state "$STATE" >"$OUT/status.txt" 2>&1 || STATUS_RC=$?
STATUS_SECS=$(since "$t")
FINISHED=$(awk '/^pages finished/ { print $3 }' "$OUT/status.txt")
FD_SHORT=$(awk '$1 == "fd" && $2 == "shortages" { print $3 }' "$OUT/status.txt")
echo "status: exit status $STATUS_RC in $STATUS_SECS s; pages finished ${FINISHED:-?}, fd shortages ${FD_SHORT:-?}, discovered URLs $(awk '/^discovered URLs/ { print $3 }' "$OUT/status.txt")"
echo "server: RSS $(awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$SERVE_PID/status" 2>/dev/null || echo '?') MiB at the end"
stop_pid "$SERVE_PID" TERM 5
SERVE_PID=

# 4. The plot and the table.
echo
echo "Samples every $INTERVAL s in $CSV; one row per $SUMMARY_EVERY s:"
echo
cargo run --release --quiet -p crawlrank-sim --example plot_timeseries -- "$CSV" "$OUT/timeseries.svg" \
    --every "$SUMMARY_EVERY" \
    --title "crawlrank crawl of a $PAGES-page web on $HOSTS hosts: $CRAWL_PAGES pages, concurrency $CONC${LOW_NOFILE:+, ulimit -n $NOFILE}" |
    tee "$OUT/summary.md"

if [[ -n "$LOW_NOFILE" ]]; then
    if ((CRAWL_RC == 0 && STATUS_RC == 0)) && [[ "${FINISHED:-0}" -ge "$CRAWL_PAGES" ]]; then
        echo "LOW_NOFILE: the crawl under ulimit -n $NOFILE completed: $FINISHED pages, ${FD_SHORT:-?} descriptor shortages"
    else
        echo "LOW_NOFILE: the crawl under ulimit -n $NOFILE did NOT complete: exit status $CRAWL_RC, ${FINISHED:-?} of $CRAWL_PAGES pages, ${FD_SHORT:-?} descriptor shortages"
        exit 1
    fi
fi
exit "$CRAWL_RC"
