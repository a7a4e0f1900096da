# shellcheck shell=bash
# Helpers the benchmark and results scripts share: each sources this file from the repository root
# (`. scripts/common.sh`, after its `cd`), so that every script builds the binary, installs GNU
# time, heads its log and cleans up after itself the same way.

# Installs GNU time (`/usr/bin/time -v` reports the peak RSS) with apt-get when it is missing.
need_gnu_time() {
    if [ ! -x /usr/bin/time ]; then
        echo "GNU time is missing: installing it (apt-get install time)" >&2
        apt-get update -qq && apt-get install -y -qq time >/dev/null
    fi
}

# Sets BIN to the release `crawlrank` binary, built here, unless BIN is already set (a binary
# the caller wants timed or used instead).
release_bin() {
    if [ -z "${BIN:-}" ]; then
        cargo build --release -q -p crawlrank-cli
        BIN=$(pwd)/target/release/crawlrank
    fi
}

# The start of a timing benchmark over the shared data sets, after its own settings: sets root (the
# repository), data (CRAWLRANK_SHARED_DATA, default ../shared/data beside the checkout) and bench
# (BENCH_DIR, default /tmp/crawlrank-bench-$1; created, the graph cache inside it), installs GNU
# time, sets BIN (release_bin) and heads the log (machine_line).
bench_setup() {
    root=$(pwd)
    data=${CRAWLRANK_SHARED_DATA:-$root/../shared/data}
    bench=${BENCH_DIR:-/tmp/crawlrank-bench-$1}
    mkdir -p "$bench"
    export CRAWLRANK_CACHE="$bench/cache"
    need_gnu_time
    release_bin
    machine_line
}

# The start of a script that writes results of the docs, after its own settings: sets DATA (the real
# graphs, default ../shared/data), WORK (imported and generated graphs, default target/$1-results)
# and OUT (the results, default docs/results/$1), both created, and BIN (release_bin).
results_setup() {
    DATA=${DATA:-../shared/data}
    WORK=${WORK:-target/$1-results}
    OUT=${OUT:-docs/results/$1}
    mkdir -p "$WORK" "$OUT"
    release_bin
}

# Prints the line a benchmark's log starts with: when, the machine (cores, memory) and the
# compiler, then the arguments, if any.
machine_line() {
    echo "# $(date -u +%FT%TZ) $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB; $(rustc --version)$*"
}

# Makes the caller's `cleanup` function run however the script ends: on exit, and on Ctrl-C or
# SIGTERM (exit status 130 or 143), so that what the script started does not outlive it.
trap_cleanup() {
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# Kills (SIGKILL) and reaps every process whose pid the caller put in its PIDS array, however
# the script ends (trap_cleanup): a benchmark that starts servers calls it once, after `PIDS=()`.
kill_pids_on_exit() {
    # shellcheck disable=SC2317 # called by the trap
    cleanup() {
        local rc=$? pid
        trap - EXIT INT TERM
        for pid in "${PIDS[@]}"; do
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        done
        exit "$rc"
    }
    trap_cleanup
}

# Builds the release binary and sets BIN to it in cargo's target directory (CARGO_TARGET_DIR
# honoured); exits when it is not there.
release_bin_in_target() {
    cargo build --release --quiet -p crawlrank-cli
    local target
    target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
    BIN="$target/release/crawlrank"
    [[ -x "$BIN" ]] || { echo "no crawlrank binary at $BIN" >&2; exit 1; }
}

# The current time in seconds, for `since`.
now() { echo "$EPOCHREALTIME"; }

# Seconds elapsed since $1 (a time from `now`), with $2 decimals (default 1).
since() { awk -v a="$1" -v b="$(now)" -v d="${2:-1}" 'BEGIN { printf "%." d "f", b - a }'; }
