"""Seeds, frontier ranking and crawl states against `crawlrank seeds`, `frontier-rank`,
`export` and `status`."""

import contextlib
import json
import subprocess

import numpy as np
import pytest

import crawlrank
from conftest import cli_path


def first_column(path):
    return [int(line.split("\t")[0]) for line in path.read_text().splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("method", ["cover-density", "random", "top-pagerank"])
def test_seeds_match_the_cli(cli, web, tmp_path, method):
    out = tmp_path / "seeds.txt"
    cli("seeds", "--graph", web, "--count", 8, "--method", method, "--out", out)
    g = crawlrank.Graph.load(web)
    assert list(crawlrank.seeds(g, 8, method=method)) == first_column(out)


def test_seeds_bad_input(web):
    g = crawlrank.Graph.load(web)
    with pytest.raises(ValueError, match="unknown seeds method"):
        crawlrank.seeds(g, 3, method="best")
    with pytest.raises(ValueError, match="core_size"):
        crawlrank.seeds(g, 3, method="fixed-size")


def test_frontier_rank_matches_the_cli(cli, web, tmp_path):
    impacts = tmp_path / "impacts.tsv"
    cli("impacts", "--graph", web, "--profile", "web", "--out", impacts)
    out = tmp_path / "fr"
    methods = "random,indegree,pagerank,rw,rw-eg"
    cli("frontier-rank", "--graph", web, "--downloaded-fraction", 0.3, "--impact", impacts,
        "--method", methods, "--out", out)
    g = crawlrank.Graph.load(web)
    ours = crawlrank.frontier_rank(g, impacts, methods=methods, downloaded_fraction=0.3)
    rows = [line.split("\t") for line in (out / "scores.tsv").read_text().splitlines()]
    header, rows = rows[0], rows[1:]
    assert list(ours["frontier"]) == [int(r[0]) for r in rows]
    summary = json.loads((out / "summary.json").read_text())
    assert ours["downloaded"] == summary["downloaded"]
    for m, theirs in zip(ours["methods"], summary["methods"]):
        assert m["method"] == theirs["method"]
        col = header.index(m["method"])
        assert np.array_equal(m["scores"], np.array([float(r[col]) for r in rows])), m["method"]
        assert [p["impact_relative"] for p in theirs["curve"]] == [
            None if np.isnan(x) else x for x in m["impact"]
        ]


def read_csv(path):
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]


@pytest.mark.parametrize("repeats", [("--repeat", 3), ("--rng-seeds", "5,9", "--baseline", "rw")])
def test_frontier_rank_repeats_match_the_cli(cli, web, tmp_path, repeats):
    impacts = tmp_path / "impacts.tsv"
    cli("impacts", "--graph", web, "--profile", "web", "--out", impacts)
    out = tmp_path / "fr"
    methods = "random,indegree,rw,rw-eg"
    cli("frontier-rank", "--graph", web, "--downloaded-fraction", 0.3, "--impact", impacts,
        "--method", methods, "--out", out, *repeats)
    g = crawlrank.Graph.load(web)
    if repeats[0] == "--repeat":
        kwargs = {"repeat": 3}
    else:
        kwargs = {"rng_seeds": [5, 9], "baseline": "rw"}
    ours = crawlrank.frontier_rank(g, impacts, methods=methods, downloaded_fraction=0.3, **kwargs)
    summary = json.loads((out / "summary.json").read_text())
    assert ours["rng_seeds"] == summary["rng_seeds"]
    assert [r["rng_seed"] for r in ours["runs"]] == summary["rng_seeds"]
    for run, theirs in zip(ours["runs"], summary["runs"]):
        assert run["downloaded"] == theirs["downloaded"]
        for m, t in zip(run["methods"], theirs["methods"]):
            assert [p["impact_relative"] for p in t["curve"]] == [
                None if np.isnan(x) else x for x in m["impact"]
            ], m["method"]
    stats = read_csv(out / "summary-stats.csv")
    assert len(ours["stats"]) == len(stats) > 0
    for mine, row in zip(ours["stats"], stats):
        assert mine["method"] == row["method"] and mine["measure"] == row["measure"]
        assert mine["x_percent"] == float(row["x_percent"]) and mine["k"] == row["k"]
        for key in ("n", "mean", "sd", "ci95_low", "ci95_high"):
            assert mine[key] == float(row[key]), (mine, row, key)
    paired = read_csv(out / "paired.csv")
    assert len(ours["paired"]) == len(paired) > 0
    for mine, row in zip(ours["paired"], paired):
        assert (mine["method_a"], mine["method_b"], mine["measure"]) == (
            row["method_a"], row["method_b"], row["measure"])
        assert mine["x_percent"] == float(row["x_percent"])
        for key in ("runs", "a_wins", "b_wins", "ties", "wilcoxon_p"):
            assert mine[key] == float(row[key]) or np.isnan(mine[key]) and row[key] == "NaN", (mine, row, key)
    # Each run is the single run with its rng seed.
    single = crawlrank.frontier_rank(g, impacts, methods=methods, downloaded_fraction=0.3,
                                     rng_seed=ours["rng_seeds"][-1])
    last = ours["runs"][-1]
    assert np.array_equal(single["frontier"], last["frontier"])
    for a, b in zip(single["methods"], last["methods"]):
        assert np.array_equal(a["scores"], b["scores"]), a["method"]


def test_frontier_rank_repeats_bad_input(web):
    g = crawlrank.Graph.load(web)
    impact = np.ones(g.num_nodes)
    run = lambda **kw: crawlrank.frontier_rank(g, impact, methods="random", downloaded_fraction=0.3, **kw)
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        run(repeat=0)
    with pytest.raises(ValueError, match="either repeat or rng_seeds"):
        run(repeat=2, rng_seeds=[1, 2])
    with pytest.raises(ValueError, match="twice"):
        run(rng_seeds=[1, 1])
    with pytest.raises(ValueError, match="needs repeat"):
        run(baseline="random")
    with pytest.raises(ValueError, match="not among the methods"):
        run(repeat=2, baseline="rw")
    # The fraction's range is the CLI's --downloaded-fraction's, (0, 1].
    for bad in (0.0, -0.5, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"must be in \(0, 1\]"):
            crawlrank.frontier_rank(g, impact, methods="random", downloaded_fraction=bad)


@contextlib.contextmanager
def five_page_web(tmp):
    """A five-page test web (`crawlrank serve`) on loopback while the block runs, its graph in
    `tmp`: yields a seeds file of its first page and the `crawl` options that fetch from it."""
    arcs = tmp / "five.txt"
    arcs.write_text("0 1\n0 2\n1 2\n2 0\n2 3\n3 4\n")
    server = subprocess.Popen(
        [str(cli_path()), "serve", "--graph", str(arcs), "--addr", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        addr = server.stdout.readline().split("http://")[1].split()[0]
        seeds = tmp / "seeds.txt"
        seeds.write_text("http://h0.crawlrank.test/p0.html\n")
        yield seeds, ["--proxy", f"http://{addr}", "--delay", 0]
    finally:
        server.kill()
        server.wait()


@pytest.fixture(scope="module")
def crawl_state(cli, tmp_path_factory):
    """A finished FICA crawl of a five-page test web served on loopback."""
    tmp = tmp_path_factory.mktemp("crawl")
    with five_page_web(tmp) as (seeds, fetch):
        state = tmp / "state"
        cli("crawl", "--seeds", seeds, "--state", state, "--policy", "fica", *fetch)
    return state


def test_crawl_state(cli, crawl_state, tmp_path):
    c = crawlrank.Crawl.open(crawl_state)
    status = c.status()
    assert status["policy"] == "fica" and status["crawled"] == 5 and status["frontier"] == 0
    assert status["counters"]
    g = c.graph()
    pairs = tmp_path / "arcs.tsv"
    cli("export", "--state", crawl_state, "--arcs", pairs, "--urls")
    urls = c.urls()
    ours = [f"{urls[u]}\t{urls[v]}" for u in range(g.num_nodes) for v in g.successors(u)]
    assert ours == pairs.read_text().splitlines()
    ranking = tmp_path / "ranking.tsv"
    cli("export", "--state", crawl_state, "--ranking", ranking)
    ranked_urls, scores = c.ranking()
    lines = [line.split("\t") for line in ranking.read_text().splitlines()]
    assert ranked_urls == [u for _, u in lines]
    assert list(scores) == [float(s) for s, _ in lines]
    order = c.order()
    assert order[0] == "http://h0.crawlrank.test/p0.html" and len(order) == 5


def test_crawl_graph_is_exported_again_only_when_the_crawl_moved_on(cli, tmp_path, scratch_cache):
    with five_page_web(tmp_path) as (seeds, fetch):
        state = tmp_path / "state"
        cli("crawl", "--seeds", seeds, "--state", state, "--policy", "fica", "--max-pages", 2, *fetch)
        exports = scratch_cache / "crawl-exports"
        before = set(exports.glob("*/graph.graph"))
        db = state / "crawl.redb"
        untouched = lambda: (db.read_bytes(), db.stat().st_mtime_ns)
        stored = untouched()
        c = crawlrank.Crawl.open(state)
        first = c.graph()
        (made,) = set(exports.glob("*/graph.graph")) - before
        stamp = lambda: (made.stat().st_ino, made.stat().st_mtime_ns)
        exported = stamp()
        c.status()
        # Unchanged crawl: the same export, from this object and from a new one.
        again = c.graph()
        assert stamp() == exported
        assert crawlrank.Crawl.open(state).graph().num_arcs == first.num_arcs == again.num_arcs
        assert stamp() == exported
        # Read-only: the state's file is as the crawl left it, byte for byte, mtime included.
        assert untouched() == stored
        # The crawl goes on: exported again, with the new pages' links.
        cli("crawl", "--state", state, "--policy", "fica", *fetch)
        later = c.graph()
        assert stamp() != exported
        assert later.num_nodes == 5 and later.num_arcs == 6 > first.num_arcs
        pairs = tmp_path / "arcs.tsv"
        cli("export", "--state", state, "--arcs", pairs)
        assert len(pairs.read_text().splitlines()) == 6
        assert crawlrank.Crawl.open(state).graph().num_arcs == 6


def test_crawl_missing_state(tmp_path):
    with pytest.raises(FileNotFoundError):
        crawlrank.Crawl.open(tmp_path / "none")
    with pytest.raises(crawlrank.CrawlrankError):
        crawlrank.Crawl.open(tmp_path).status()
