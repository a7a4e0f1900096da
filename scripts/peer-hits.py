#!/usr/bin/env python3
"""A peer for one round of `crawlrank seeds`: 60 HITS iterations in Kleinberg's order
(a = A^T h, then h = A a, each scaled to unit L2 norm, from h = 1) with scipy.sparse, on a text arc
list (`crawlrank convert --graph G --arcs FILE`). Prints the load and iteration times and the
best authority and hub, which must be the ones `crawlrank seeds` starts its first core from.

    pip install numpy scipy
    crawlrank convert --graph ../shared/data/cnr-2000/cnr-2000 --arcs /tmp/cnr.arcs
    python3 scripts/peer-hits.py /tmp/cnr.arcs 325557
"""
import sys
import time

import numpy as np
import scipy.sparse as sp

path, n = sys.argv[1], int(sys.argv[2])
iterations = int(sys.argv[3]) if len(sys.argv) > 3 else 60
t0 = time.perf_counter()
arcs = np.loadtxt(path, dtype=np.int64, comments="#", ndmin=2)
a_matrix = sp.csr_matrix((np.ones(len(arcs)), (arcs[:, 0], arcs[:, 1])), shape=(n, n))
a_transpose = a_matrix.T.tocsr()
t1 = time.perf_counter()
h = np.ones(n) / np.sqrt(n)
for _ in range(iterations):
    a = a_transpose @ h
    a /= np.linalg.norm(a)
    h = a_matrix @ a
    h /= np.linalg.norm(h)
t2 = time.perf_counter()
# Ties to the smaller id, as crawlrank: argmax returns the first maximum.
print(f"scipy {sp.__name__} HITS: load {t1 - t0:.2f} s, {iterations} iterations {t2 - t1:.3f} s; "
      f"best authority {int(np.argmax(a))}, best hub {int(np.argmax(h))}")
