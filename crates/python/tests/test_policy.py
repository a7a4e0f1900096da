"""Policies written in Python: the same order as the built-in ones, and clear errors."""

import traceback

import numpy as np
import pytest
import scipy.sparse

import crawlrank


def assert_known_graph(known, g, crawled):
    """`known` is the known graph of the pages `crawled`: a CSC array whose column `v` lists
    the crawled pages linking to `v`, in increasing order — the same arrays however many
    reorders it was merged over — and whose column sums are SciPy's."""
    assert isinstance(known, scipy.sparse.csc_array)
    assert known.shape == (g.num_nodes, g.num_nodes)
    crawled = np.asarray(crawled, dtype=np.int64)
    links = [g.successors(p) for p in crawled]
    sources = np.repeat(crawled, [len(t) for t in links])
    targets = np.concatenate(links) if links else np.zeros(0, dtype=np.int64)
    order = np.lexsort((sources, targets))
    indptr = np.zeros(g.num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(targets, minlength=g.num_nodes), out=indptr[1:])
    assert np.array_equal(known.indptr, indptr)
    assert np.array_equal(known.indices, sources[order])
    assert np.all(known.data == 1.0)
    sums = known.sum(axis=0)
    assert sums.dtype == np.float64 and np.array_equal(sums, scipy.sparse.csc_array.sum(known, axis=0))
    assert np.array_equal(sums, np.bincount(targets, minlength=g.num_nodes))
    assert known.sum() == len(targets) and known.has_canonical_format
    # The same matrix as the graph's own rows of the crawled pages.
    rows = np.zeros(g.num_nodes)
    rows[crawled] = 1.0
    expected = scipy.sparse.diags_array(rows) @ g.to_scipy()
    assert abs(known - expected).sum() == 0


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
            assert_known_graph(known, g, view.crawled)
            # Read-only: every view of the crawl shares these arrays.
            with pytest.raises(ValueError):
                known.indices[0] = 0
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
        # Every other view was built during the crawl, merged into the arrays of the one
        # before; the rest are built now (from scratch, being older than the cache).
        assert_known_graph(view.known, g, view.crawled)


def test_column_sums_do_not_wait_for_the_index_arrays(web):
    """Back-link counts (column sums) come from in-link counts: the index arrays are built
    only when something reads them, and are then those of the view's own reorder."""
    g = crawlrank.Graph.load(web)
    views = []

    class Sums:
        def reorder(self, view):
            known = view.known
            sums = known.sum(axis=0)
            assert known._crawlrank_indices_of is not None, "column sums built the indices"
            assert known._crawlrank_indptr_of is not None, "column sums built the indptr"
            assert sums.sum() == known.nnz
            views.append(view)
            return sums[view.frontier]

    built_in = crawlrank.simulate(g, ["backlink"], n_seeds=10, rng_seed=7, batch=200, progress=False)
    mine = crawlrank.simulate(g, [Sums()], n_seeds=10, rng_seed=7, batch=200, progress=False)
    assert np.array_equal(mine["Sums"].order, built_in["backlink"].order)
    assert len(views) > 3
    for view in views:
        assert_known_graph(view.known, g, view.crawled)
