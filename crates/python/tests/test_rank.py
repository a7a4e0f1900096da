"""Rankings against `crawlrank rank`: the very same numbers."""

import numpy as np
import pytest

import crawlrank
from conftest import read_scores


@pytest.mark.parametrize("algo", ["pagerank", "hits", "indegree"])
def test_rankings_match_the_cli(cli, web, tmp_path, algo):
    out = tmp_path / f"{algo}.txt"
    cli("rank", "--graph", web, "--algo", algo, "--out", out)
    g = crawlrank.Graph.load(web)
    ours = {
        "pagerank": lambda: crawlrank.pagerank(g),
        "hits": lambda: crawlrank.hits(g)[0],
        "indegree": lambda: crawlrank.indegree(g),
    }[algo]()
    assert ours.dtype == np.float64 and ours.shape == (g.num_nodes,)
    assert np.array_equal(ours, read_scores(out))


def test_pagerank_parameters(cli, web, tmp_path):
    out = tmp_path / "pr.txt"
    cli("rank", "--graph", web, "--damping", 0.5, "--threshold", 1e-6, "--out", out)
    g = crawlrank.Graph.load(web)
    assert np.array_equal(crawlrank.pagerank(g, alpha=0.5, tol=1e-6), read_scores(out))
    with pytest.raises(ValueError, match="alpha"):
        crawlrank.pagerank(g, alpha=1.5)


def test_hubs_match_the_cli(cli, web, tmp_path):
    out = tmp_path / "hubs.txt"
    cli("rank", "--graph", web, "--algo", "hits", "--hits-score", "hub", "--out", out)
    g = crawlrank.Graph.load(web)
    assert np.array_equal(crawlrank.hits(g)[1], read_scores(out))


def test_pagerank_on_cnr2000(cli, cnr2000, tmp_path):
    out = tmp_path / "cnr.txt"
    cli("rank", "--graph", cnr2000, "--out", out)
    g = crawlrank.Graph.load(cnr2000)
    assert g.num_nodes == 325557
    assert np.array_equal(crawlrank.pagerank(g), read_scores(out))
