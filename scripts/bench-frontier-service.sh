#!/usr/bin/env bash
# URLs/s through one frontier service node on loopback, with and without the group-commit
# window: runs crates/frontier-service/examples/throughput.rs (PutURLs of URLS discovered
# URLs, then GetURLs + known updates until none is left, for each client count) once per
# window in COMMIT_MS, each against a fresh state. Prints the example's markdown tables for
# docs/performance.md ("Frontier service throughput").
#
#   scripts/bench-frontier-service.sh [URLS] [HOSTS] [CLIENTS] [COMMIT_MS]
#       defaults 200000 1000 1,2,4 "0 5"; CLIENTS comma-separated, COMMIT_MS space-separated
#       milliseconds (0: no window, each call committed at once). DELAY_S (environment): the
#       crawl's queue delay set before the cycle (default: the service's 1 s; 0 measures the
#       service's own work rather than politeness). NODES (environment): comma-separated cluster
#       sizes (default 1); sizes above 1 start nats-server and a cluster of that many nodes
#       (client i puts to node i mod N and leases from every node in turn). HOT (environment):
#       each node's --frontier-hot (default: the service's own)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

URLS="${1:-200000}"
HOSTS="${2:-1000}"
CLIENTS="${3:-1,2,4}"
WINDOWS="${4:-0 5}"

die() {
    echo "bench-frontier-service: $*" >&2
    exit 1
}
[[ "$URLS" =~ ^[0-9]+$ && "$HOSTS" =~ ^[0-9]+$ ]] || die "URLS and HOSTS must be whole numbers"
[[ "$CLIENTS" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "CLIENTS must be a comma-separated list of numbers, not '$CLIENTS'"
for w in $WINDOWS; do
    [[ "$w" =~ ^[0-9]+$ ]] || die "COMMIT_MS must be whole numbers of milliseconds, not '$w'"
done
NODES="${NODES:-1}"
[[ "$NODES" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "NODES must be a comma-separated list of numbers, not '$NODES'"
[[ -z "${HOT:-}" || "$HOT" =~ ^[0-9]+$ ]] || die "HOT must be a whole number, not '$HOT'"
[[ -z "${DELAY_S:-}" || "$DELAY_S" =~ ^[0-9]+$ ]] || die "DELAY_S must be a whole number of seconds, not '$DELAY_S'"
# Debian installs nats-server outside a user's PATH.
PATH="$PATH:/usr/sbin"

cargo build --release --quiet -p crawlrank-frontier-service --features benchmarks --example throughput
echo "== bench-frontier-service: $URLS URLs on $HOSTS hosts, clients $CLIENTS, commit windows (ms) $WINDOWS"
echo "   $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
for w in $WINDOWS; do
    echo
    cargo run --release --quiet -p crawlrank-frontier-service --features benchmarks --example throughput -- \
        "$URLS" "$HOSTS" "$CLIENTS" "$w" "${DELAY_S:-}" "$NODES"
done
