"""crawlrank.Graph against the CLI: the same pages, arcs, ids and URLs."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

import crawlrank


def cli_arcs(cli, graph, tmp_path: Path, urls: bool = False):
    out = tmp_path / ("urls.tsv" if urls else "arcs.tsv")
    cli("convert", "--graph", graph, "--arcs", out, *(["--urls"] if urls else []))
    return [tuple(line.split("\t")) for line in out.read_text().splitlines() if line]


def test_graph_matches_convert(cli, web, tmp_path):
    g = crawlrank.Graph.load(web)
    arcs = cli_arcs(cli, web, tmp_path)
    assert g.num_arcs == len(arcs) > 0
    assert len(g) == g.num_nodes == 3000
    ours = [(str(u), str(v)) for u in range(g.num_nodes) for v in g.successors(u)]
    assert ours == arcs
    out = g.outdegrees()
    assert out.sum() == g.num_arcs and out[5] == len(g.successors(5))
    assert np.array_equal(g.ids, np.arange(3000))


def test_urls_match_convert(cli, web, tmp_path):
    g = crawlrank.Graph.load(web)
    urls = g.urls()
    assert urls is not None and len(urls) == g.num_nodes
    pairs = cli_arcs(cli, web, tmp_path, urls=True)
    ours = [(urls[u], urls[v]) for u in range(g.num_nodes) for v in g.successors(u)]
    assert ours == pairs


def test_to_scipy(web):
    g = crawlrank.Graph.load(web)
    m = g.to_scipy()
    assert isinstance(m, scipy.sparse.csr_array)
    assert m.shape == (g.num_nodes, g.num_nodes) and m.nnz == g.num_arcs
    for u in (0, 17, 2999):
        assert list(m.indices[m.indptr[u] : m.indptr[u + 1]]) == list(g.successors(u))
    # The indices are the graph's own memory, read-only.
    assert not m.indices.flags.writeable
    assert np.array_equal(np.asarray(m.sum(axis=0)).ravel(), crawlrank.indegree(g))
    assert g.to_scipy(dtype=np.float32).dtype == np.float32


def test_arc_list_keeps_its_ids(tmp_path):
    arcs = tmp_path / "gaps.txt"
    arcs.write_text("10 20\n20 30\n30 10\n30 50\n")
    g = crawlrank.Graph.load(arcs)
    assert g.num_nodes == 4 and g.num_arcs == 4
    assert list(g.ids) == [10, 20, 30, 50]
    assert list(g.successors(30)) == [10, 50]
    assert g.node(50) == 3
    assert g.urls() is None
    with pytest.raises(ValueError, match="11 is not a page"):
        g.successors(11)


def test_missing_graph_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such graph"):
        crawlrank.Graph.load(tmp_path / "nothing")


def test_corrupt_graph_is_an_exception_not_a_crash(tmp_path, web):
    for ext in (".graph", ".properties", ".offsets"):
        src = web.with_suffix(ext)
        (tmp_path / ("bad" + ext)).write_bytes(src.read_bytes())
    data = (tmp_path / "bad.graph").read_bytes()
    (tmp_path / "bad.graph").write_bytes(data[: len(data) // 3])
    with pytest.raises(crawlrank.CrawlrankError):
        crawlrank.Graph.load(tmp_path / "bad")
