#!/usr/bin/env bash
# Crawl throughput on the local test web (loopback only; nothing leaves the machine):
# crawlrank's crawler (persistence and WARC on, concurrency 64, no delay) against the
# `spider` crate crawling the same web through the same server, and their ratio.
#   scripts/bench-crawl.sh [PAGES] [CONCURRENCY]      (defaults: 20000 64)
# spider is built in its own package (crates/crawler/bench-spider) so that its large
# dependency tree never burdens the workspace's builds; set NO_SPIDER=1 to skip it.
set -euo pipefail
cd "$(dirname "$0")/.."
PAGES="${1:-20000}"
CONC="${2:-64}"
SPIDER=()
if [[ -z "${NO_SPIDER:-}" ]]; then
    CARGO_TARGET_DIR="$PWD/target/bench-spider" cargo build --release --quiet \
        --manifest-path crates/crawler/bench-spider/Cargo.toml
    SPIDER=("$PWD/target/bench-spider/release/crawlrank-bench-spider")
fi
cargo run --release --quiet -p crawlrank-crawler --example bench_crawl -- "$PAGES" "$CONC" "${SPIDER[@]}"
