"""The known graph a Python policy sees (``PolicyView.known``): a ``scipy.sparse.csc_array``
whose column sums — the back-link counts from crawled pages, the commonest thing a policy asks
of it — cost one pass over its ``indptr`` instead of one over every arc. Its ``indices`` are
built (merged in Rust) when something first reads them, so a policy that only sums columns
never pays for them.

Every entry of the known graph is a one, so a column's sum is its length. The shortcut is taken
only while the matrix is the one the crawl handed over (the same read-only ``data``, shared by
every view); anything derived from it — ``known * 2``, ``known.copy()``, a slice — is a plain
computation by SciPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse


class KnownGraph(scipy.sparse.csc_array):
    """The known graph: an ``n × n`` CSC array of ones, row ``u`` the out-links of crawled page
    ``u``; column ``v`` lists the crawled pages linking to ``v``, in increasing order."""

    _crawlrank_ones: Any = None
    # What builds ``indices`` when first read; ``None`` once they are built (or for a matrix
    # SciPy derived from this one, which has its own).
    _crawlrank_indices_of: Any = None

    @property  # type: ignore[override]
    def indices(self) -> Any:
        build = self._crawlrank_indices_of
        if build is not None:
            self.__dict__["_crawlrank_indices"] = build()
            self._crawlrank_indices_of = None
        return self.__dict__["_crawlrank_indices"]

    @indices.setter
    def indices(self, value: Any) -> None:
        self.__dict__["_crawlrank_indices"] = value
        self._crawlrank_indices_of = None

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        ones = self._crawlrank_ones
        if (
            axis in (0, -2)
            and dtype is None
            and out is None
            and ones is not None
            and self.data is ones
            and self.indptr.shape == (self.shape[1] + 1,)
        ):
            # What SciPy returns for a column sum of a sparse array: float64, one per column.
            return np.diff(self.indptr).astype(np.float64)
        return super().sum(axis=axis, dtype=dtype, out=out)


def known_graph(data: Any, indptr: Any, n: int, indices_of: Any) -> KnownGraph:
    """The known graph over ``n`` nodes from its CSC ``indptr`` and ``data`` (all ones; both
    read-only, shared, not copied) and ``indices_of``, which returns its ``indices`` when
    first needed."""
    # An empty n × n matrix, then its arrays: SciPy's constructor would check (read) the
    # indices, which are not built yet.
    m = KnownGraph((n, n), dtype=np.float64)
    m.data = data
    m.indptr = indptr
    m._crawlrank_indices_of = indices_of
    m._crawlrank_ones = m.data
    # Each column's rows are in increasing order (the extension keeps them so), which spares
    # SciPy a check over every arc, and any sorting of the shared, read-only arrays in place.
    m.has_sorted_indices = True
    return m
