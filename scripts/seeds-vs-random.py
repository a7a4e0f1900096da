#!/usr/bin/env python3
"""Community seeds against many random seed sets, from the outputs of scripts/seeds-results.sh.

The community seeds of a graph are one set (Extract-Seeds is deterministic); the random side is
drawn again for every rng seed. This script reads, for one graph folder,

  eval-r<S>/summary.csv        (crawlrank seeds-eval --random-seeds S: BFS by depth, both sides)
  simulate-r<S>/comparison.csv (crawlrank simulate --seeds-file … --compare-random --rng-seed S)

and prints two markdown tables: per BFS depth, the community seeds' pages and mean PageRank beside
the random sets' mean ± 95% interval (Student t, n − 1 degrees of freedom) and how many random
sets the community side beats; per policy, the PageRank mass at 1/5/10/25% crawled from community
seeds minus that from random seeds (each pair measured on the union of both reachable sets, as
`--compare-random` does), its mean ± 95% interval and the random sets it is positive in.

    scripts/seeds-vs-random.py docs/results/seeds/cnr
"""
import csv
import math
import sys
from pathlib import Path

# t(0.975, df) for df = 1..30 (the table of crates/stats).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def interval(values):
    n = len(values)
    mean = sum(values) / n
    if n == 1:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    return mean, t * sd / math.sqrt(n)


def runs(folder, prefix):
    out = sorted((p for p in folder.glob(prefix + "-r*") if p.is_dir()),
                 key=lambda p: int(p.name.split("-r")[-1]))
    if not out:
        sys.exit(f"{folder}: no {prefix}-r<S> folders (run scripts/seeds-results.sh)")
    return out


def grouped(folder, prefix, name, key, value):
    """The rows of `name` in every `prefix`-r<S> run, `value(row)` grouped by `key(row)` in the
    order the keys first appear, and the number of runs."""
    folders = runs(folder, prefix)
    groups = {}
    for run in folders:
        with open(run / name) as f:
            for row in csv.DictReader(f):
                groups.setdefault(key(row), []).append(value(row))
    return groups, len(folders)


def depths(folder):
    table, n = grouped(folder, "eval", "summary.csv", lambda row: int(row["depth"]), lambda row: row)
    print(f"BFS by depth: community seeds (one set) against {n} random seed sets "
          "(mean ± 95% CI; community ahead in how many sets)\n")
    print("| depth | community: pages | random: pages | ahead | community: mean PR | random: mean PR | ahead |")
    print("|---|---|---|---|---|---|---|")
    for d in sorted(table):
        rows = table[d]
        pages = float(rows[0]["seeds_pages"] or 0)
        pr = float(rows[0]["seeds_mean_pr"] or "nan")
        rp = [float(r["random_pages"] or 0) for r in rows]
        rm = [float(r["random_mean_pr"]) for r in rows if r["random_mean_pr"]]
        m, h = interval(rp)
        line = f"| {d} | {pages:,.0f} | {m:,.0f} ± {h:,.0f} | {sum(pages > x for x in rp)}/{len(rp)} | {pr:.3g} |"
        if rm:
            m2, h2 = interval(rm)
            line += f" {m2:.3g} ± {h2:.2g} | {sum(pr > x for x in rm)}/{len(rm)} |"
        else:
            line += " - | - |"
        print(line)
    print()


def policies(folder):
    diff, n = grouped(folder, "simulate", "comparison.csv",
                      lambda row: (row["policy"], int(row["percent"])),
                      lambda row: float(row["file_mass"]) - float(row["random_mass"]))
    names = list(dict.fromkeys(p for p, _ in diff))
    points = [1, 5, 10, 25]
    print(f"PageRank mass crawled, community seeds minus random seeds, over {n} random seed "
          "sets (mean ± 95% CI; community ahead in how many sets)\n")
    print("| policy | " + " | ".join(f"mass@{p}%" for p in points) + " |")
    print("|---|" + "---|" * len(points))
    for name in names:
        cells = []
        for p in points:
            d = diff[(name, p)]
            m, h = interval(d)
            cells.append(f"{m:+.3f} ± {h:.3f} ({sum(x > 0 for x in d)}/{len(d)})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = Path(sys.argv[1])
    depths(folder)
    policies(folder)
