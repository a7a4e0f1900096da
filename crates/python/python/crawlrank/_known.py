"""The known graph a Python policy sees (``PolicyView.known``): a ``scipy.sparse.csc_array``
whose column sums — the back-link counts from crawled pages, the commonest thing a policy asks
of it — cost one pass over its ``indptr`` instead of one over every arc.

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


def known_graph(data: Any, indices: Any, indptr: Any, n: int) -> KnownGraph:
    """The known graph over ``n`` nodes from its CSC arrays (read-only, shared, not copied);
    ``data`` is all ones."""
    m = KnownGraph((data, indices, indptr), shape=(n, n), copy=False)
    m._crawlrank_ones = m.data
    # Each column's rows are in increasing order (the extension keeps them so), which spares
    # SciPy a check over every arc, and any sorting of the shared, read-only arrays in place.
    m.has_sorted_indices = True
    return m
