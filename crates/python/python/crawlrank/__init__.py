"""crawlrank in Python: web graphs, their rankings, and the crawl-order simulator.

The functions run crawlrank's own Rust code — the numbers are the ones ``crawlrank rank`` and
``crawlrank simulate`` print — and return NumPy arrays, SciPy matrices and (when pandas is
installed) DataFrames. A crawl policy can be written in Python: a class with
``reorder(self, view) -> scores`` (see :class:`BatchPolicy`), simulated beside the built-in
policies with the same measures. See docs/python.md.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

import numpy as np

from . import _crawlrank
from ._crawlrank import (
    Crawl,
    CrawlrankError,
    Graph,
    PolicyError,
    PolicyView,
    frontier_rank,
    hits,
    indegree,
    pagerank,
    seeds,
)

__version__ = _crawlrank.__version__

__all__ = [
    "BatchPolicy",
    "Crawl",
    "CrawlrankError",
    "Graph",
    "PolicyError",
    "PolicyResult",
    "PolicyView",
    "Simulation",
    "frontier_rank",
    "hits",
    "indegree",
    "pagerank",
    "plot",
    "seeds",
    "simulate",
]

_MEASURES = ("throughput", "mass", "mean_pagerank", "impact")


class BatchPolicy:
    """A crawl policy written in Python, reordering the frontier every ``batch`` pages.

    Subclass it (or write any class with a ``reorder`` method): ``reorder(view)`` gets a
    :class:`PolicyView` — ``view.crawled`` (crawled pages in crawl order), ``view.frontier``
    (pages found and not crawled, in order of discovery), ``view.known`` (the out-links of
    the crawled pages as a ``scipy.sparse.csc_array``) and ``view.new_arcs`` (the arcs found
    since the previous reorder, ``(sources, targets)``) — and returns one number per frontier
    page. The frontier is crawled by score, highest first, ties in order of discovery; pages
    found until the next reorder are appended in discovery order, as the built-in batch
    policies (``backlink``, ``batch-pagerank``) do. Pages are node ids (``Graph.ids`` maps them to
    the graph's own ids, which are the same unless the graph came from an arc list with gaps).

    Optionally ``final_scores(view)`` returns one score per crawled page (``view.crawled``)
    at the end, correlated with PageRank for Kendall's τ_b; without it the score of a page is
    minus its crawl position.
    """

    #: The policy's name in results and plots (the class name when not set).
    name: str

    def reorder(self, view: PolicyView) -> Any:
        raise NotImplementedError("a BatchPolicy must define reorder(self, view)")


class PolicyResult:
    """One policy's simulated crawl: its order, its curves at every checkpoint, τ_b, costs.

    The curves have one value per percent of the reachable pages ``R`` crawled (1..100),
    exactly as ``crawlrank simulate``'s ``summary.json`` records them.
    """

    def __init__(self, raw: Dict[str, Any], reachable: int) -> None:
        self.policy: str = raw["policy"]
        #: Crawled pages in crawl order (the graph's ids).
        self.order: np.ndarray = raw["order"]
        #: The policy's final score of each crawled page, in crawl order (for τ_b).
        self.final_scores: np.ndarray = raw["final_scores"]
        #: ``k`` at each checkpoint: ``ceil(j·R/100)`` pages crawled, ``j = 1..100``.
        self.checkpoints: np.ndarray = raw["checkpoints"]
        #: Hot pages found: ``|first k crawled ∩ top-k by PageRank| / k``.
        self.throughput: np.ndarray = raw["throughput"]
        #: PageRank mass crawled: ``Σ PR(first k) / Σ PR(R)``.
        self.mass: np.ndarray = raw["mass"]
        #: Mean PageRank of the pages crawled in each 1% window.
        self.mean_pagerank: np.ndarray = raw["mean_pagerank"]
        #: With ``impact=``: impact crawled relative to the ideal order, else ``None``.
        self.impact: Optional[np.ndarray] = raw["impact"]
        #: Kendall's τ_b between the final scores and PageRank.
        self.tau_b: float = raw["kendall_tau_b"]
        self.batch: int = raw["batch"]
        self.crawl_seconds: float = raw["crawl_seconds"]
        self.arcs: int = raw["arcs"]
        self.peak_frontier: int = raw["peak_frontier"]
        self.peak_rss_bytes: Optional[int] = raw["peak_rss_bytes"]
        self.reachable = reachable

    def at(self, measure: str, percent: int) -> float:
        """The value of ``measure`` (``throughput``, ``mass``, …) at ``percent`` % crawled."""
        curve = getattr(self, measure)
        if curve is None:
            raise ValueError(f"{self.policy} has no {measure} curve")
        return float(curve[min(max(percent, 1), 100) - 1])

    @property
    def curves(self) -> Any:
        """The curves as a pandas DataFrame (``percent``, ``k``, one column per measure), or
        a dict of arrays when pandas is not installed."""
        columns: Dict[str, np.ndarray] = {
            "percent": np.arange(1, len(self.checkpoints) + 1),
            "k": self.checkpoints,
        }
        for m in _MEASURES:
            if getattr(self, m) is not None:
                columns[m] = getattr(self, m)
        try:
            import pandas as pd
        except ImportError:
            return columns
        return pd.DataFrame(columns)

    def __repr__(self) -> str:
        return (
            f"<PolicyResult {self.policy}: throughput@10% {self.at('throughput', 10):.3f}, "
            f"mass@10% {self.at('mass', 10):.3f}, tau_b {self.tau_b:.3f}, "
            f"{self.crawl_seconds:.2f}s>"
        )


class Simulation(List[PolicyResult]):
    """The results of :func:`simulate`, one :class:`PolicyResult` per policy in the order
    given; also indexable by policy name."""

    def __init__(self, raw: Dict[str, Any]) -> None:
        super().__init__(PolicyResult(p, raw["reachable"]) for p in raw["policies"])
        self.graph: str = raw["graph"]
        self.nodes: int = raw["nodes"]
        self.arcs: int = raw["arcs"]
        #: The seeds every crawl started from (the graph's ids).
        self.seeds: np.ndarray = raw["seeds"]
        self.seed_source: str = raw["seed_source"]
        self.rng_seed: int = raw["rng_seed"]
        #: ``R``: pages reachable from the seeds, where every crawl ends.
        self.reachable: int = raw["reachable"]
        #: The percentages the table reports (``checkpoints=``).
        self.percents: List[int] = raw["percents"]
        self.parameters: Dict[str, float] = raw["parameters"]
        self.impact_column: Optional[str] = raw["impact_column"]

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            for r in self:
                if r.policy == key:
                    return r
            raise KeyError(f"no policy {key!r} in this simulation ({', '.join(self.policies)})")
        return super().__getitem__(key)

    @property
    def policies(self) -> List[str]:
        return [r.policy for r in self]

    def table(self) -> Any:
        """``crawlrank simulate``'s table: hot pages and PageRank mass at each reported
        percent, τ_b and crawl time, one row per policy (a DataFrame, or a dict of lists
        without pandas)."""
        rows: Dict[str, List[Any]] = {"policy": self.policies}
        for measure, label in (("throughput", "hot"), ("mass", "mass"), ("impact", "impact")):
            if measure == "impact" and self.impact_column is None:
                continue
            for p in self.percents:
                rows[f"{label}@{p}%"] = [r.at(measure, p) for r in self]
        rows["tau_b"] = [r.tau_b for r in self]
        rows["seconds"] = [r.crawl_seconds for r in self]
        try:
            import pandas as pd
        except ImportError:
            return rows
        return pd.DataFrame(rows).set_index("policy")

    def curves(self) -> Any:
        """Every policy's curves in one tidy table: ``policy``, ``percent``, ``k``,
        ``measure``, ``value`` (a DataFrame, or a list of dicts without pandas)."""
        records = []
        for r in self:
            for m in _MEASURES:
                curve = getattr(r, m)
                if curve is None:
                    continue
                for j, (k, v) in enumerate(zip(r.checkpoints, curve)):
                    records.append(
                        {"policy": r.policy, "percent": j + 1, "k": int(k), "measure": m, "value": float(v)}
                    )
        try:
            import pandas as pd
        except ImportError:
            return records
        return pd.DataFrame.from_records(records)

    def plot(self, path: Union[str, "os.PathLike[str]"], measure: str = "throughput") -> None:
        """Writes an SVG of ``measure`` for every policy, as ``crawlrank simulate`` plots it."""
        plot(self, path, measure)

    def __repr__(self) -> str:
        return (
            f"<Simulation of {', '.join(self.policies)} on {self.graph}: "
            f"{len(self.seeds)} seeds, R = {self.reachable}>"
        )


_Y_LABELS = {
    "throughput": "fraction of hot pages crawled (throughput)",
    "mass": "fraction of PageRank mass crawled",
    "mean_pagerank": "mean PageRank per 1% window",
    "impact": "impact crawled relative to the ideal order",
}


def plot(
    results: Sequence[PolicyResult],
    path: Union[str, "os.PathLike[str]"],
    measure: str = "throughput",
    title: Optional[str] = None,
) -> None:
    """Writes an SVG line chart of ``measure`` (``throughput``, ``mass``, ``impact``) over the
    percentage of reachable pages crawled, one line per result, in ``crawlrank simulate``'s
    style. No plotting library is needed."""
    if measure not in _MEASURES:
        raise ValueError(f"measure must be one of {', '.join(_MEASURES)}, not {measure!r}")
    series = []
    for r in results:
        curve = getattr(r, measure)
        if curve is None:
            raise ValueError(f"{r.policy} has no {measure} curve")
        series.append((r.policy, [float(x) for x in curve]))
    if title is None:
        title = measure
        if isinstance(results, Simulation):
            name = os.path.basename(results.graph)
            title = f"{measure}: {name} — {len(results.seeds)} seeds, R = {results.reachable}"
    y_label = _Y_LABELS[measure]
    if measure == "mean_pagerank":
        # Mean PageRank is not a share: scale the curves to their largest value.
        top = max((max(s) for _, s in series), default=1.0) or 1.0
        series = [(n, [x / top for x in s]) for n, s in series]
        y_label += " (relative to the largest)"
    _crawlrank.plot(os.fspath(path), series, title, y_label)


PolicyLike = Union[str, Any]


def simulate(
    graph: Graph,
    policies: Union[str, Sequence[PolicyLike]] = "all",
    *,
    seeds: Union[None, str, "os.PathLike[str]", Sequence[int], np.ndarray] = None,
    n_seeds: int = 100,
    rng_seed: int = 42,
    batch: Optional[int] = None,
    impact: Union[None, str, "os.PathLike[str]", Sequence[float], np.ndarray] = None,
    impact_column: str = "1",
    beta: float = 0.1,
    delta_initial: float = 0.35,
    delta_slope: float = 0.28,
    omega: float = 0.8,
    gamma: float = 0.0,
    checkpoints: Optional[Sequence[int]] = None,
    progress: Union[None, bool, Callable[[str, int, int], None]] = None,
    out: Union[None, str, "os.PathLike[str]"] = None,
    save_orders: bool = False,
) -> Simulation:
    """Replays a crawl of ``graph`` with each policy and measures it, as ``crawlrank simulate``.

    ``policies``: built-in names (``"fica"``, ``"opic,backlink"``, ``"all"``) and policy
    objects (:class:`BatchPolicy`). ``seeds``: page ids, or a seeds file; by default
    ``n_seeds`` random pages drawn with ``rng_seed`` (the CLI's ``--seeds N --rng-seed S``).
    ``batch``: ``K`` (default ``ceil(R/72)``). ``impact``: an impact table (``impact_column``
    picks its column) or one value per node; it enables ``rw``, ``rw-eg``, ``learned`` and
    the impact measure. ``checkpoints``: the percentages :meth:`Simulation.table` reports.
    ``progress``: ``None`` shows a line on stderr when it is a terminal, ``True``/``False``
    always/never, or a callable ``(policy, crawled, reachable)``. ``out``: also write
    ``summary.json``, ``summary.csv`` and the plots there (``save_orders``: ``<policy>.order``).

    The crawls run outside the GIL; Ctrl-C stops them (``KeyboardInterrupt``). A Python policy
    that raises or returns unusable scores raises :class:`PolicyError`.
    """
    raw = _crawlrank.simulate(
        graph,
        policies,
        seeds=None if seeds is None else (os.fspath(seeds) if isinstance(seeds, (str, os.PathLike)) else [int(s) for s in seeds]),
        n_seeds=n_seeds,
        rng_seed=rng_seed,
        batch=batch,
        impact=impact,
        impact_column=impact_column,
        beta=beta,
        delta_initial=delta_initial,
        delta_slope=delta_slope,
        omega=omega,
        gamma=gamma,
        checkpoints=None if checkpoints is None else list(checkpoints),
        progress=progress,
        out=None if out is None else os.fspath(out),
        save_orders=save_orders,
    )
    return Simulation(raw)
