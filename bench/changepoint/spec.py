"""Graph-based change-point detection (bkj/graph-changepoint main.py, the
Intrepydd paper's changepoint benchmark): the 1-D and 2-D scan statistics of
the Euclidean minimum spanning tree of a time series, and their z-scores.

Data (as the repository's mst.py prepares _data/synthetic/X.tsv): n
observations in d dimensions, standard normal, with the mean shifted by
SHIFT inside the interval [n/3, 2n/3) (one changed interval, so the 1-D scan
sees two change points and the 2-D scan the interval); the graph is the MST
of their pairwise Euclidean distances (scipy), nodes numbered in time order.

Formats: Python gets the graph as the original builds it, a dict
{node: [neighbours]} with keys 0..n-1 in order; pydd the symmetric 0/1
adjacency matrix (scipy CSR, int64); Numba, Cython and C++ its CSR arrays
indptr and indices (int64)."""

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import pdist, squareform

ENTRY = "changepoint"
PFOR = True
TOLERANCE = ("R, R_2d (int64) exact; Z, Z_2d (float64) np.allclose rtol=1e-9, "
             "atol=1e-9, NaN where Python has NaN")

SIZES = {"small": 200, "full": 3000}
DIMS = 10
SHIFT = 1.0


def generate(size):
    n = SIZES[size]
    rng = np.random.default_rng(20180611)
    X = rng.standard_normal((n, DIMS))
    X[n // 3: 2 * n // 3] += SHIFT
    mst = minimum_spanning_tree(squareform(pdist(X))).tocoo()
    rows = mst.row.astype(np.int64)
    cols = mst.col.astype(np.int64)
    A = sp.coo_matrix((np.ones(2 * len(rows), dtype=np.int64),
                       (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
                      shape=(n, n)).tocsr()
    A.sort_indices()
    A.indptr = A.indptr.astype(np.int64)
    A.indices = A.indices.astype(np.int64)
    # the original's dict of edges, keys in time order
    g = {i: [] for i in range(n)}
    for src, trg in zip(rows.tolist(), cols.tolist()):
        g[src].append(trg)
        g[trg].append(src)
    return {"g": g, "A": A}


def arguments(data, version):
    # nothing is written by any version
    if version == "python":
        return (data["g"],)
    A = data["A"]
    if version.startswith("pydd"):
        return (A,)
    return (A.indptr, A.indices)


def result(returned, args):
    R, Z, R_2d, Z_2d = returned
    return (np.asarray(R), np.asarray(Z), np.asarray(R_2d), np.asarray(Z_2d))


def check(expected, got):
    names = ("R", "Z", "R_2d", "Z_2d")
    assert len(got) == 4, f"expected 4 results (R, Z, R_2d, Z_2d), got {len(got)}"
    for name, e, g in zip(names, expected, got):
        assert g.shape == e.shape, f"{name}: shape {g.shape}, expected {e.shape}"
        if name.startswith("R"):
            bad = np.argwhere(g != e)
            assert bad.size == 0, (f"{name}: {len(bad)} entries differ, first at "
                                   f"{tuple(bad[0])}: {g[tuple(bad[0])]} != {e[tuple(bad[0])]}")
        else:
            ok = np.isclose(g, e, rtol=1e-9, atol=1e-9, equal_nan=True)
            if not ok.all():
                bad = np.argwhere(~ok)
                i = tuple(bad[0])
                raise AssertionError(f"{name}: {len(bad)} entries differ beyond rtol=1e-9, "
                                     f"first at {i}: {g[i]!r} != {e[i]!r}")
