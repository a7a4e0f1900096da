"""The known graph a Python policy sees (``PolicyView.known``): a ``scipy.sparse.csc_array``
whose column sums — the back-link counts from crawled pages, the commonest thing a policy asks
of it — come from in-link counts kept between reorders instead of a pass over every arc. Its
``indptr`` and ``indices`` are built (in Rust) when something first reads them, so a policy that
only sums columns never pays for them.

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
    # What builds ``indptr`` and ``indices`` when first read (``None`` once built, or for a
    # matrix SciPy derived from this one, which has its own), and the column sums while the
    # matrix is the crawl's own.
    _crawlrank_indptr_of: Any = None
    _crawlrank_indices_of: Any = None
    _crawlrank_sums_of: Any = None

    @property  # type: ignore[override]
    def indptr(self) -> Any:
        build = self._crawlrank_indptr_of
        if build is not None:
            self.__dict__["_crawlrank_indptr"] = build()
            self._crawlrank_indptr_of = None
        return self.__dict__["_crawlrank_indptr"]

    @indptr.setter
    def indptr(self, value: Any) -> None:
        self.__dict__["_crawlrank_indptr"] = value
        self._crawlrank_indptr_of = None
        self._crawlrank_sums_of = None

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
        self._crawlrank_sums_of = None

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        sums = self._crawlrank_sums_of
        if (
            axis in (0, -2)
            and dtype is None
            and out is None
            and sums is not None
            and self.data is self._crawlrank_ones
        ):
            # What SciPy returns for a column sum of a sparse array: float64, one per column
            # (a column's sum is its length: every entry is a one).
            return sums()
        return super().sum(axis=axis, dtype=dtype, out=out)


def known_graph(data: Any, n: int, indptr_of: Any, indices_of: Any, sums_of: Any) -> KnownGraph:
    """The known graph over ``n`` nodes: ``data`` (all ones, read-only, shared, not copied),
    and what returns its ``indptr``, its ``indices`` and its column sums when first needed."""
    # An empty n × n matrix, then its arrays: SciPy's constructor would check (read) the
    # index arrays, which are not built yet.
    m = KnownGraph((n, n), dtype=np.float64)
    m.data = data
    m._crawlrank_indptr_of = indptr_of
    m._crawlrank_indices_of = indices_of
    m._crawlrank_ones = m.data
    m._crawlrank_sums_of = sums_of
    # Each column's rows are in increasing order (the extension keeps them so), which spares
    # SciPy a check over every arc, and any sorting of the shared, read-only arrays in place.
    m.has_sorted_indices = True
    return m
