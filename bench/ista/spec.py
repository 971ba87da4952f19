"""ISTA for l1-regularized PageRank (prog-eval lgc/, Fountoulakis et al.'s
Algorithm 4): 50 proximal-gradient iterations per seed node, one PageRank
vector per seed; alpha 0.15, rho 1e-5.

full: the 5157-node jhu.mtx graph, seeds 0..499 (prog-eval's ISTA seed set:
10 x its 50 PR-Nibble seeds; Python ~5-15 s, pydd -O0 ~30x that).
small: a seeded random 300-node graph (a ring plus random edges, so every
degree is positive), 20 seeds.
"""

from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

ENTRY = "ista"
PFOR = True
TOLERANCE = "np.allclose(rtol=1e-9, atol=1e-12) on the nodes x seeds score matrix (shape exact)"

ALPHA = 0.15
RHO = 1e-5
ITERS = 50
JHU = Path(__file__).resolve().parents[3] / "shared" / "data" / "jhu.mtx"


def random_graph(n, extra, rng):
    """Undirected, unweighted, no self-loops; a ring keeps every degree >= 2."""
    src = np.concatenate([np.arange(n), rng.integers(0, n, n * extra)])
    dst = np.concatenate([(np.arange(n) + 1) % n, rng.integers(0, n, n * extra)])
    keep = src != dst
    A = sp.coo_matrix((np.ones(keep.sum()), (src[keep], dst[keep])), shape=(n, n)).tocsr()
    A = ((A + A.T) > 0).astype(np.float64)
    return A.tocsr()


def with_int64_indices(A):
    """Sorted CSR with int64 index arrays (pydd borrows them without a copy)."""
    A = A.tocsr()
    A.sort_indices()
    A.indices, A.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    return A


def generate(size):
    if size == "small":
        rng = np.random.default_rng(20240608)
        adj = random_graph(300, 3, rng)
        seeds = np.arange(20, dtype=np.int64)
    else:
        adj = scipy.io.mmread(str(JHU)).tocsr().astype(np.float64)
        seeds = np.arange(500, dtype=np.int64)
    return {"adj": with_int64_indices(adj), "seeds": seeds}


def arguments(data, version):
    adj, seeds = data["adj"], data["seeds"].copy()
    if version in ("python", "pydd-O0", "pydd-O3"):
        return (seeds, adj, ALPHA, RHO, ITERS)
    return (seeds, adj.indptr, adj.indices, adj.data, ALPHA, RHO, ITERS)


def check(expected, got):
    got = np.asarray(got)
    assert got.shape == expected.shape, f"shape {got.shape}, expected {expected.shape}"
    if not np.allclose(got, expected, rtol=1e-9, atol=1e-12):
        bad = np.argwhere(~np.isclose(got, expected, rtol=1e-9, atol=1e-12))
        i, k = bad[0]
        raise AssertionError(f"{len(bad)} scores differ; first at node {i}, seed column {k}: "
                             f"{got[i, k]!r} vs {expected[i, k]!r}")
