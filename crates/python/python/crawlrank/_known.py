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


class _BuiltWhenRead:
    """An array of the matrix (``indptr``, ``indices``) built when first read, by what
    ``_crawlrank_<name>_of`` holds; setting it (SciPy does, in its constructor and when it
    edits a matrix) replaces it, and the matrix is then no longer the crawl's own."""

    def __set_name__(self, owner: Any, name: str) -> None:
        self.key = f"_crawlrank_{name}"
        self.builder = f"_crawlrank_{name}_of"

    def __get__(self, matrix: Any, owner: Any = None) -> Any:
        if matrix is None:
            return self
        build = getattr(matrix, self.builder)
        if build is not None:
            matrix.__dict__[self.key] = build()
            setattr(matrix, self.builder, None)
        return matrix.__dict__[self.key]

    def __set__(self, matrix: Any, value: Any) -> None:
        matrix.__dict__[self.key] = value
        setattr(matrix, self.builder, None)
        matrix._crawlrank_sums_of = None


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
    indptr = _BuiltWhenRead()  # type: ignore[assignment]
    indices = _BuiltWhenRead()  # type: ignore[assignment]

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
