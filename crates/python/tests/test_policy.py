"""Policies written in Python: the same order as the built-in ones, and clear errors."""

import traceback

import numpy as np
import pytest

import crawlrank


class PyBacklink(crawlrank.BatchPolicy):
    """Back-link count: in-links from crawled pages, the column sums of the known graph."""

    name = "py-backlink"

    def reorder(self, view):
        return view.known.sum(axis=0)[view.frontier]


class CountingBacklink(crawlrank.BatchPolicy):
    """Back-link count kept up to date from the arcs found since the last reorder."""

    name = "counting-backlink"

    def __init__(self):
        self.counts = None

    def reorder(self, view):
        if self.counts is None:
            self.counts = np.zeros(view.num_nodes, dtype=np.int64)
        _, targets = view.new_arcs
        np.add.at(self.counts, targets, 1)
        return self.counts[view.frontier]


@pytest.mark.parametrize("batch", [None, 1, 37])
def test_python_backlink_is_backlink(web, batch):
    g = crawlrank.Graph.load(web)
    policies = ["backlink", PyBacklink(), CountingBacklink()]
    sim = crawlrank.simulate(g, policies, n_seeds=10, batch=batch, progress=False)
    for name in ("py-backlink", "counting-backlink"):
        assert np.array_equal(sim[name].order, sim["backlink"].order), name
        assert np.array_equal(sim[name].throughput, sim["backlink"].throughput), name


def test_python_backlink_is_backlink_on_cnr2000(cnr2000):
    g = crawlrank.Graph.load(cnr2000)
    sim = crawlrank.simulate(g, ["backlink", PyBacklink(), CountingBacklink()], progress=False)
    assert np.array_equal(sim["py-backlink"].order, sim["backlink"].order)
    assert np.array_equal(sim["counting-backlink"].order, sim["backlink"].order)


def test_view(web):
    g = crawlrank.Graph.load(web)
    seen = []

    class Spy:
        def reorder(self, view):
            known = view.known
            assert known.shape == (g.num_nodes, g.num_nodes)
            crawled = set(view.crawled.tolist())
            assert len(crawled) == len(view.crawled) == len(seen) * view.batch + view.batch
            assert not crawled & set(view.frontier.tolist())
            sources, targets = view.new_arcs
            fresh = view.crawled[-view.batch :]
            assert list(targets) == [t for p in fresh for t in g.successors(p)]
            assert set(sources.tolist()) <= set(fresh.tolist())
            # Rows of crawled pages are their out-links; other rows are empty.
            for p in view.crawled[:20]:
                assert list(known.indices[known.indptr[p] : known.indptr[p + 1]]) == list(g.successors(p))
            assert known.nnz == sum(len(g.successors(p)) for p in view.crawled)
            seen.append(len(view.frontier))
            return np.zeros(len(view.frontier))

    sim = crawlrank.simulate(g, ["bfs", Spy()], n_seeds=10, batch=100, progress=False)
    assert len(seen) == sim.reachable // 100 > 0
    # All-equal scores keep discovery order: breadth-first.
    assert np.array_equal(sim["Spy"].order, sim["bfs"].order)


def test_final_scores_give_tau(web):
    g = crawlrank.Graph.load(web)
    pr = crawlrank.pagerank(g)

    class WithScores(PyBacklink):
        name = "scored"

        def final_scores(self, view):
            return pr[view.crawled]

    sim = crawlrank.simulate(g, [WithScores()], n_seeds=10, progress=False)
    assert sim["scored"].tau_b == pytest.approx(1.0)


def run_bad(web, policy):
    g = crawlrank.Graph.load(web)
    with pytest.raises(crawlrank.PolicyError) as info:
        crawlrank.simulate(g, ["bfs", policy], n_seeds=10, batch=50, progress=False)
    return info


def test_policy_that_raises(web):
    class Raises:
        def reorder(self, view):
            return 1 / 0

    info = run_bad(web, Raises())
    assert "Raises.reorder() after 50 crawled pages raised ZeroDivisionError" in str(info.value)
    cause = info.value.__cause__
    assert isinstance(cause, ZeroDivisionError)
    # The policy's own frame is in the traceback of the cause.
    frames = [f.name for f in traceback.extract_tb(cause.__traceback__)]
    assert "reorder" in frames


def test_wrong_length(web):
    class Short:
        def reorder(self, view):
            return np.zeros(len(view.frontier) - 1)

    info = run_bad(web, Short())
    assert "expected one score per frontier page" in str(info.value)


def test_nan(web):
    class Nan:
        def reorder(self, view):
            s = np.zeros(len(view.frontier))
            s[-1] = np.nan
            return s

    assert "NaN" in str(run_bad(web, Nan()).value)


def test_not_numbers(web):
    class Words:
        def reorder(self, view):
            return ["1"] * len(view.frontier)

    assert "scores must be numbers" in str(run_bad(web, Words()).value)

    class Nothing:
        def reorder(self, view):
            return None

    assert "Nothing.reorder()" in str(run_bad(web, Nothing()).value)


def test_interrupt_inside_a_policy(web):
    class Interrupted:
        def reorder(self, view):
            raise KeyboardInterrupt

    g = crawlrank.Graph.load(web)
    with pytest.raises(KeyboardInterrupt):
        crawlrank.simulate(g, [Interrupted()], n_seeds=10, batch=50, progress=False)


def test_infinite_scores_sort(web):
    g = crawlrank.Graph.load(web)

    class Last:
        def reorder(self, view):
            s = np.zeros(len(view.frontier))
            s[0] = -np.inf
            return s

    sim = crawlrank.simulate(g, [Last()], n_seeds=10, progress=False)
    assert len(sim["Last"].order) == sim.reachable


def test_known_graph_of_a_kept_view(web):
    """A view kept past its reorder still shows the known graph as it was then."""
    g = crawlrank.Graph.load(web)
    views = []

    class Keep:
        def reorder(self, view):
            views.append(view)
            if len(views) % 2:
                view.known  # built now, from the pages crawled so far
            return np.zeros(len(view.frontier))

    crawlrank.simulate(g, [Keep()], n_seeds=10, batch=200, progress=False)
    assert len(views) > 3
    for view in views[::-1]:
        known = view.known
        assert known.nnz == sum(len(g.successors(p)) for p in view.crawled)
        p = view.crawled[-1]
        assert list(known.indices[known.indptr[p] : known.indptr[p + 1]]) == list(g.successors(p))
