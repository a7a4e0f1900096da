#!/usr/bin/env python3
"""Benchmarks the Python package against the CLI on one graph (docs/performance.md, "The Python
package"):

1. `crawlrank.simulate` from Python against `crawlrank simulate`, graph loading included: the
   CLI's whole command (wall clock) against, in Python, `Graph.load` + `simulate` (and the whole
   `python3 -c ...` process, interpreter start and imports included);
2. a back-link policy written in Python (`reorder` = column sums of the known graph), and one that
   keeps its counts from `view.new_arcs`, against the built-in `backlink`: the crawl loop's time
   of each (their orders are checked equal), and the first one's cost per reorder.

Each timing is the median of REPS runs, with a shared, warm cache (the reference PageRank is
computed once before timing). Needs a release build of both:

    cargo build --release -p crawlrank-cli
    pip install ./crates/python          # or: maturin develop --release -m crates/python/Cargo.toml

Usage: scripts/bench-python.py [--graph BASENAME] [--cli target/release/crawlrank] [--reps 5]
       [--policies bfs,backlink,opic,fica]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def median_time(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    data = Path(os.environ.get("CRAWLRANK_SHARED_DATA", REPO.parent / "shared" / "data"))
    p.add_argument("--graph", default=str(data / "cnr-2000" / "cnr-2000"))
    p.add_argument("--cli", default=str(REPO / "target" / "release" / "crawlrank"))
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--policies", default="bfs,backlink,opic,fica")
    args = p.parse_args()

    import crawlrank
    import numpy as np

    cache = tempfile.mkdtemp(prefix="crawlrank-bench-cache-")
    os.environ["CRAWLRANK_CACHE"] = cache
    cli = [args.cli, "simulate", "--graph", args.graph, "--policy", args.policies, "--seeds", "100"]
    print(f"graph {args.graph}; policies {args.policies}; 100 random seeds; median of {args.reps}")
    print(f"python {sys.version.split()[0]}, crawlrank {crawlrank.__version__} ({crawlrank._crawlrank.__file__})")
    # Warm the cache (the imported graph, the reference PageRank) and the page cache.
    subprocess.run(cli, check=True, capture_output=True)

    def run_cli():
        subprocess.run(cli, check=True, capture_output=True)

    def run_python():
        g = crawlrank.Graph.load(args.graph)
        crawlrank.simulate(g, args.policies, n_seeds=100, progress=False)

    code = (
        "import crawlrank; g = crawlrank.Graph.load(%r); "
        "crawlrank.simulate(g, %r, n_seeds=100, progress=False)" % (args.graph, args.policies)
    )

    def run_python_process():
        subprocess.run([sys.executable, "-c", code], check=True)

    t_cli, all_cli = median_time(run_cli, args.reps)
    t_py, all_py = median_time(run_python, args.reps)
    t_proc, all_proc = median_time(run_python_process, args.reps)
    print("\n1. simulate, graph loading included (seconds)")
    print(f"   CLI `crawlrank simulate` (whole command)    {t_cli:8.3f}   runs {' '.join(f'{t:.3f}' for t in all_cli)}")
    print(f"   Python Graph.load + simulate                 {t_py:8.3f}   runs {' '.join(f'{t:.3f}' for t in all_py)}   ({t_py / t_cli:.2f}× the CLI)")
    print(f"   Python whole process (start, imports too)    {t_proc:8.3f}   runs {' '.join(f'{t:.3f}' for t in all_proc)}   ({t_proc / t_cli:.2f}× the CLI)")

    reorder_times = []

    class PyBacklink(crawlrank.BatchPolicy):
        name = "py-backlink"

        def reorder(self, view):
            t0 = time.perf_counter()
            scores = view.known.sum(axis=0)[view.frontier]
            reorder_times.append(time.perf_counter() - t0)
            return scores

    class CountingBacklink(crawlrank.BatchPolicy):
        name = "counting-backlink"

        def __init__(self):
            self.counts = None

        def reorder(self, view):
            if self.counts is None:
                self.counts = np.zeros(view.num_nodes, dtype=np.int64)
            np.add.at(self.counts, view.new_arcs[1], 1)
            return self.counts[view.frontier]

    g = crawlrank.Graph.load(args.graph)
    builtin, python, whole_b, whole_p, counting, whole_c = [], [], [], [], [], []
    for _ in range(args.reps):
        reorder_times.clear()
        t0 = time.perf_counter()
        a = crawlrank.simulate(g, ["backlink"], n_seeds=100, progress=False)
        whole_b.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b = crawlrank.simulate(g, [PyBacklink()], n_seeds=100, progress=False)
        whole_p.append(time.perf_counter() - t0)
        assert np.array_equal(a["backlink"].order, b["py-backlink"].order), "orders differ"
        t0 = time.perf_counter()
        c = crawlrank.simulate(g, [CountingBacklink()], n_seeds=100, progress=False)
        whole_c.append(time.perf_counter() - t0)
        assert np.array_equal(a["backlink"].order, c["counting-backlink"].order), "orders differ"
        builtin.append(a["backlink"].crawl_seconds)
        python.append(b["py-backlink"].crawl_seconds)
        counting.append(c["counting-backlink"].crawl_seconds)
    per_reorder = statistics.median(reorder_times) * 1000
    reorders = len(reorder_times)
    print("\n2. back-link: built-in against written in Python (same order, position for position)")
    print(f"   crawl loop, built-in backlink      {statistics.median(builtin):8.3f} s")
    print(f"   crawl loop, Python back-link       {statistics.median(python):8.3f} s   ({statistics.median(python) / statistics.median(builtin):.2f}×)")
    print(f"   whole simulate call, built-in      {statistics.median(whole_b):8.3f} s")
    print(f"   whole simulate call, Python        {statistics.median(whole_p):8.3f} s   ({statistics.median(whole_p) / statistics.median(whole_b):.2f}×)")
    med = statistics.median
    print(f"   crawl loop, Python counting from view.new_arcs {med(counting):8.3f} s   ({med(counting) / med(builtin):.2f}×)")
    print(f"   whole simulate call, counting      {med(whole_c):8.3f} s   ({med(whole_c) / med(whole_b):.2f}×)")
    print(f"   reorders per crawl {reorders}; the policy's reorder (view.known built + column sums): median {per_reorder:.2f} ms")


if __name__ == "__main__":
    main()
