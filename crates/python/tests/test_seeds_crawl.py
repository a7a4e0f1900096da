"""Seeds, frontier ranking and crawl states against `crawlrank seeds`, `frontier-rank`,
`export` and `status`."""

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


@pytest.fixture(scope="module")
def crawl_state(cli, tmp_path_factory):
    """A finished FICA crawl of a five-page test web served on loopback."""
    tmp = tmp_path_factory.mktemp("crawl")
    arcs = tmp / "five.txt"
    arcs.write_text("0 1\n0 2\n1 2\n2 0\n2 3\n3 4\n")
    server = subprocess.Popen(
        [str(cli_path()), "serve", "--graph", str(arcs), "--addr", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        first = server.stdout.readline()
        addr = first.split("http://")[1].split()[0]
        seeds = tmp / "seeds.txt"
        seeds.write_text("http://h0.crawlrank.test/p0.html\n")
        state = tmp / "state"
        cli("crawl", "--seeds", seeds, "--state", state, "--policy", "fica",
            "--proxy", f"http://{addr}", "--delay", 0)
    finally:
        server.kill()
        server.wait()
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


def test_crawl_missing_state(tmp_path):
    with pytest.raises(FileNotFoundError):
        crawlrank.Crawl.open(tmp_path / "none")
    with pytest.raises(crawlrank.CrawlrankError):
        crawlrank.Crawl.open(tmp_path).status()
