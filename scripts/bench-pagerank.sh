#!/usr/bin/env bash
# PageRank of LAW cnr-2000 to an L1 change of 1e-10, side by side in one run:
#   (a) crawlrank: `crawlrank rank` (when the CLI builds) and the `pagerank_cnr` example;
#   (b) NetworKit 11.2 (`nk.centrality.PageRank`, power method, L1 norm, sinks distributed);
#   (c) LAW webgraph-rs (`webgraph-rank pagerank`, webgraph-cli 0.5.0, parallel Gauss–Seidel).
# Each command is timed whole (process start to exit: load, rank, write the scores as text)
# with hyperfine, 2 threads each; the median is what docs/performance.md reports.
#
# The script installs what it needs (hyperfine from apt, NetworKit in a venv, webgraph-cli with
# cargo) and writes only under $BENCH_DIR (default /tmp/crawlrank-bench): never into the data
# folder, which may be shared or read-only.
#
# Usage: scripts/bench-pagerank.sh            (RUNS=10 THREADS=2 THRESHOLD=1e-10 by default)
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
DATA="${CRAWLRANK_SHARED_DATA:-$REPO/../shared/data}"
BENCH_DIR="${BENCH_DIR:-/tmp/crawlrank-bench}"
RUNS="${RUNS:-10}"
THREADS="${THREADS:-2}"
THRESHOLD="${THRESHOLD:-1e-10}"
NETWORKIT_VERSION="${NETWORKIT_VERSION:-11.2}"
WEBGRAPH_CLI_VERSION="${WEBGRAPH_CLI_VERSION:-0.5.0}"

GRAPH="$DATA/cnr-2000/cnr-2000"
if [[ ! -f "$GRAPH.graph" || ! -f "$GRAPH-t.graph" ]]; then
    echo "cnr-2000 (and its transpose cnr-2000-t) not found under $DATA/cnr-2000;" \
        "set CRAWLRANK_SHARED_DATA" >&2
    exit 1
fi
GRAPH="$(cd "$(dirname "$GRAPH")" && pwd)/cnr-2000"
NODES="$(sed -n 's/^nodes=//p' "$GRAPH.properties")"
mkdir -p "$BENCH_DIR"
BENCH_DIR="$(cd "$BENCH_DIR" && pwd)"
OUT="$BENCH_DIR/out"
mkdir -p "$OUT"
export CRAWLRANK_CACHE="$BENCH_DIR/cache"

step() { printf '\n== %s\n' "$*" >&2; }

# ---------------------------------------------------------------- tools
step "tools"
if ! command -v hyperfine >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [[ "$(id -u)" == 0 ]] || SUDO="sudo"
        $SUDO apt-get update -qq && $SUDO apt-get install -y -qq hyperfine >/dev/null
    else
        cargo install hyperfine --locked --root "$BENCH_DIR/tools"
        export PATH="$BENCH_DIR/tools/bin:$PATH"
    fi
fi

VENV="$BENCH_DIR/venv"
if ! "$VENV/bin/python" -c "import networkit, sys; sys.exit(networkit.__version__ != '$NETWORKIT_VERSION')" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "networkit==$NETWORKIT_VERSION"
fi

WGCLI="$BENCH_DIR/wgcli"
if ! "$WGCLI/bin/webgraph-rank" --version 2>/dev/null | grep -q "$WEBGRAPH_CLI_VERSION"; then
    # Takes a few minutes: webgraph-cli compiles from source.
    cargo install webgraph-cli --version "=$WEBGRAPH_CLI_VERSION" --root "$WGCLI"
fi

cd "$REPO"
cargo build --release -p crawlrank-rank --example pagerank_cnr
EXAMPLE="$REPO/target/release/examples/pagerank_cnr"
CLI="$REPO/target/release/crawlrank"
if cargo build --release -p crawlrank-cli 2>"$OUT/cli-build.log" && [[ -x "$CLI" ]] \
    && "$CLI" rank --help >/dev/null 2>&1; then
    HAVE_CLI=1
else
    HAVE_CLI=0
    echo "crawlrank CLI not available (see $OUT/cli-build.log): timing the example only" >&2
fi

# ---------------------------------------------------------------- inputs (not timed)
step "inputs"
# crawlrank checks a BVGraph end to end and builds its .ef the first time it sees it (kept in
# the cache): a one-off, excluded here by this first run and hyperfine's warm-up.
"$EXAMPLE" --graph "$GRAPH" >/dev/null
ARCS="$BENCH_DIR/cnr-2000.arcs"
[[ -s "$ARCS" ]] || "$EXAMPLE" --graph "$GRAPH" --dump-arcs "$ARCS"
# webgraph-rs needs an Elias–Fano index beside the transpose: build it in a private folder
# of symbolic links, never beside the data.
WG="$BENCH_DIR/wg"
mkdir -p "$WG"
for ext in graph properties offsets; do ln -sf "$GRAPH-t.$ext" "$WG/cnr-2000-t.$ext"; done
[[ -s "$WG/cnr-2000-t.ef" ]] || "$WGCLI/bin/webgraph" build ef "$WG/cnr-2000-t" 2>/dev/null

cat >"$BENCH_DIR/nk_pagerank.py" <<'EOF'
import sys, time
t0 = time.perf_counter()
import networkit as nk
arcs, n, tol, threads, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
nk.setNumberOfThreads(threads)
t1 = time.perf_counter()
G = nk.graphio.EdgeListReader(" ", 0, directed=True, continuous=True).read(arcs)
if G.numberOfNodes() < n:  # trailing isolated pages do not appear in an arc list
    G.addNodes(n - G.numberOfNodes())
t2 = time.perf_counter()
pr = nk.centrality.PageRank(G, damp=0.85, tol=tol,
                            distributeSinks=nk.centrality.SinkHandling.DistributeSinks)
pr.norm = nk.centrality.Norm.L1_NORM
pr.run()
t3 = time.perf_counter()
with open(out, "w") as f:
    f.write("\n".join(map(repr, pr.scores())))
    f.write("\n")
t4 = time.perf_counter()
print(f"networkit {nk.__version__}, {nk.getMaxNumberOfThreads()} threads: import {t1-t0:.3f}s "
      f"load {t2-t1:.3f}s pagerank {t3-t2:.3f}s ({pr.numberOfIterations()} iterations) "
      f"write {t4-t3:.3f}s", file=sys.stderr)
EOF

cat >"$BENCH_DIR/l1.py" <<'EOF'
import sys
def load(p):
    with open(p) as f:
        v = [float(x) for x in f if x.strip()]
    s = sum(v)
    return [x / s for x in v]
ref = load(sys.argv[1])
for p in sys.argv[2:]:
    v = load(p)
    assert len(v) == len(ref), f"{p}: {len(v)} scores, expected {len(ref)}"
    print(f"  {p.rsplit('/', 1)[-1]:<32} L1 distance to the reference {sum(abs(a - b) for a, b in zip(v, ref)):.2e}")
EOF

# webgraph-rs stops when α/(1−α)·‖Δ‖₁ < threshold, 5.67 times stricter at α = 0.85 than the
# docs/algorithms.md §7.1's ‖Δ‖₁ < threshold: also time crawlrank at that stricter rule, for a like-for-like row.
STRICT="$(python3 -c "print($THRESHOLD * 0.15 / 0.85)")"

# ---------------------------------------------------------------- one verbose run each
step "one run each, with each tool's own breakdown"
export RAYON_NUM_THREADS="$THREADS"
"$EXAMPLE" --graph "$GRAPH" --threshold "$THRESHOLD" --out "$OUT/crawlrank-example.txt"
"$EXAMPLE" --graph "$GRAPH" --threshold "$STRICT" --out "$OUT/crawlrank-example-strict.txt" | tail -1
if [[ "$HAVE_CLI" == 1 ]]; then
    "$CLI" rank --graph "$GRAPH" --algo pagerank --threshold "$THRESHOLD" --out "$OUT/crawlrank-cli.txt"
fi
"$VENV/bin/python" "$BENCH_DIR/nk_pagerank.py" "$ARCS" "$NODES" "$THRESHOLD" "$THREADS" "$OUT/networkit.txt"
RUST_LOG=info "$WGCLI/bin/webgraph-rank" pagerank --threshold "$THRESHOLD" -m weakly-preferential \
    -t "$THREADS" -o "$OUT/webgraph-rs.txt" "$WG/cnr-2000-t" 2>&1 | grep -E "Elapsed: .*\[[0-9]+ iterations|Completed after|took" || true

step "accuracy against a converged reference (crawlrank at threshold 1e-15)"
"$EXAMPLE" --graph "$GRAPH" --threshold 1e-15 --out "$OUT/reference.txt" >/dev/null
results=("$OUT/crawlrank-example.txt" "$OUT/crawlrank-example-strict.txt" "$OUT/networkit.txt"
    "$OUT/webgraph-rs.txt")
[[ "$HAVE_CLI" == 1 ]] && results+=("$OUT/crawlrank-cli.txt")
"$VENV/bin/python" "$BENCH_DIR/l1.py" "$OUT/reference.txt" "${results[@]}"

# ---------------------------------------------------------------- timed runs
step "timing: $RUNS runs each, $THREADS threads, median wall time of the whole command"
cmds=(
    -n "crawlrank pagerank_cnr example"
    "$EXAMPLE --graph $GRAPH --threshold $THRESHOLD --out $OUT/t-example.txt"
    -n "crawlrank pagerank_cnr example, threshold $STRICT"
    "$EXAMPLE --graph $GRAPH --threshold $STRICT --out $OUT/t-example-strict.txt"
)
if [[ "$HAVE_CLI" == 1 ]]; then
    cmds+=(
        -n "crawlrank rank (CLI)"
        "$CLI rank --graph $GRAPH --algo pagerank --threshold $THRESHOLD --out $OUT/t-cli.txt"
    )
fi
cmds+=(
    -n "NetworKit $NETWORKIT_VERSION"
    "$VENV/bin/python $BENCH_DIR/nk_pagerank.py $ARCS $NODES $THRESHOLD $THREADS $OUT/t-nk.txt"
    -n "webgraph-rank $WEBGRAPH_CLI_VERSION"
    "$WGCLI/bin/webgraph-rank pagerank --threshold $THRESHOLD -m weakly-preferential -t $THREADS -o $OUT/t-wg.txt $WG/cnr-2000-t"
)
hyperfine --style basic --warmup 1 --runs "$RUNS" \
    --export-markdown "$OUT/timings.md" --export-json "$OUT/timings.json" "${cmds[@]}"

step "medians"
python3 - "$OUT/timings.json" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"  {r['command']:<56} median {r['median']:.3f} s  (min {r['min']:.3f}, max {r['max']:.3f})")
EOF
echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg); $(rustc --version)"
echo "results in $OUT (timings.md, timings.json)"
