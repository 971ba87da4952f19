"""Graph data shared by the local-graph-clustering kernels (ISTA, PR-Nibble)."""

from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

# The prog-eval lgc graph: 5157 nodes, 186 572 stored entries, symmetric.
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
    """Sorted CSR with int64 index arrays."""
    A = A.tocsr()
    A.sort_indices()
    A.indices, A.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    return A


def lgc_graph(size, seed):
    """small: a seeded random 300-node graph; full: jhu.mtx (float64 CSR)."""
    if size == "small":
        return with_int64_indices(random_graph(300, 3, np.random.default_rng(seed)))
    return with_int64_indices(scipy.io.mmread(str(JHU)).tocsr().astype(np.float64))


def check_scores(expected, got, rtol, atol):
    """A nodes x seeds score matrix: shape exact, values np.allclose."""
    got = np.asarray(got)
    assert got.shape == expected.shape, f"shape {got.shape}, expected {expected.shape}"
    if not np.allclose(got, expected, rtol=rtol, atol=atol):
        bad = np.argwhere(~np.isclose(got, expected, rtol=rtol, atol=atol))
        i, k = bad[0]
        raise AssertionError(f"{len(bad)} scores differ; first at node {i}, seed column {k}: "
                             f"{got[i, k]!r} vs {expected[i, k]!r}")
