"""Type stubs of crawlrank's native module (the Rust side of the package)."""

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

_Path = Union[str, "os.PathLike[str]"]

__version__: str

class PolicyError(RuntimeError):
    """A policy written in Python raised, or returned scores that cannot order the frontier."""

class CrawlrankError(RuntimeError):
    """crawlrank could not do what was asked (a corrupt graph, an unreadable file, …)."""

class Graph:
    """A web graph in memory, opened as ``crawlrank --graph`` opens it."""

    @staticmethod
    def load(path: _Path, cache: Optional[_Path] = None) -> "Graph": ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def num_arcs(self) -> int: ...
    @property
    def basename(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def ids(self) -> npt.NDArray[np.int64]: ...
    def node(self, id: int) -> int: ...
    def successors(self, id: int) -> npt.NDArray[np.int64]: ...
    def outdegrees(self) -> npt.NDArray[np.int64]: ...
    def urls(self) -> Optional[List[str]]: ...
    def to_scipy(self, dtype: Any = None) -> Any: ...
    def __len__(self) -> int: ...

class PolicyView:
    """What a Python policy sees at a reorder."""

    @property
    def crawled(self) -> npt.NDArray[np.int64]: ...
    @property
    def frontier(self) -> npt.NDArray[np.int64]: ...
    @property
    def known(self) -> Any: ...
    @property
    def new_arcs(self) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def batch(self) -> int: ...

class Crawl:
    """A crawl's state directory, read-only."""

    @staticmethod
    def open(state_dir: _Path) -> "Crawl": ...
    @property
    def state_dir(self) -> str: ...
    def status(self) -> Dict[str, Any]: ...
    def graph(self) -> Graph: ...
    def urls(self) -> List[str]: ...
    def ranking(self) -> Tuple[List[str], npt.NDArray[np.float64]]: ...
    def order(self) -> List[str]: ...

def pagerank(
    graph: Graph, alpha: float = 0.85, tol: float = 1e-10, max_iter: int = 1000
) -> npt.NDArray[np.float64]: ...
def hits(
    graph: Graph, iterations: int = 60
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def indegree(graph: Graph) -> npt.NDArray[np.float64]: ...
def seeds(
    graph: Graph,
    count: int,
    method: str = "cover-density",
    rng_seed: int = 42,
    cover_density: float = 100.0,
    max_hubs: int = 999,
    core_size: Optional[int] = None,
    new_members: int = 1,
    hits_iterations: int = 60,
    prune: Optional[bool] = None,
) -> npt.NDArray[np.int64]: ...
def frontier_rank(
    graph: Graph,
    impact: Union[_Path, Sequence[float], npt.NDArray[np.float64]],
    methods: Union[None, str, Sequence[str]] = None,
    downloaded: Union[None, Sequence[int], npt.NDArray[np.int64]] = None,
    downloaded_fraction: Optional[float] = None,
    n_seeds: int = 10,
    rng_seed: int = 42,
    impact_column: str = "1",
    omega: float = 0.8,
    repeat: Optional[int] = None,
    rng_seeds: Optional[Sequence[int]] = None,
    baseline: Optional[str] = None,
) -> Dict[str, Any]: ...
def simulate(
    graph: Graph,
    policies: Any,
    seeds: Any = None,
    n_seeds: int = 100,
    rng_seed: int = 42,
    batch: Optional[int] = None,
    impact: Any = None,
    impact_column: str = "1",
    beta: float = ...,
    delta_initial: float = ...,
    delta_slope: float = ...,
    omega: float = ...,
    gamma: float = ...,
    checkpoints: Optional[List[int]] = None,
    progress: Union[None, bool, Callable[[str, int, int], None]] = None,
    out: Optional[str] = None,
    save_orders: bool = False,
) -> Dict[str, Any]: ...
def plot(
    path: _Path, series: List[Tuple[str, List[float]]], title: str = "", y_label: str = ...
) -> None: ...
