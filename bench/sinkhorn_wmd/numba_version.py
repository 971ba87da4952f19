"""Sinkhorn WMD with Numba: the NumPy steps as loops over the CSR term
matrix. v = c .* (1 / (K.T @ u)) is only needed at c's non-zeros, so the
loop computes K.T @ u there (the loop form of c.multiply)."""
import numpy as np
from numba import njit


@njit(cache=False)
def _scale(c_data, c_indices, c_indptr, K, u, v_data):
    # v = c .* (1 / (K.T @ u)), at c's non-zeros
    a_dim = K.shape[0]
    for i in range(len(c_indptr) - 1):
        for p in range(c_indptr[i], c_indptr[i + 1]):
            j = c_indices[p]
            s = 0.0
            for k in range(a_dim):
                s += K[k, i] * u[k, j]
            v_data[p] = c_data[p] / s


@njit(cache=False)
def sinkhorn_wmd(r, c_data, c_indices, c_indptr, n_docs, vecs, lamb, max_iter):
    vocab, dim = vecs.shape
    sel = np.nonzero(r > 0)[0]
    a_dim = len(sel)

    # distances from the query's words to every word (cdist)
    M = np.empty((a_dim, vocab))
    for a in range(a_dim):
        q = sel[a]
        for j in range(vocab):
            d = 0.0
            for k in range(dim):
                t = vecs[q, k] - vecs[j, k]
                d += t * t
            M[a, j] = np.sqrt(d)

    K = np.exp(-lamb * M)
    K_over_r = K / r[sel].reshape(-1, 1)
    x = np.ones((a_dim, n_docs)) / a_dim
    v_data = np.empty(len(c_data))

    for it in range(max_iter):
        u = 1.0 / x
        _scale(c_data, c_indices, c_indptr, K, u, v_data)
        # x = K_over_r @ v
        x = np.zeros((a_dim, n_docs))
        for i in range(vocab):
            for p in range(c_indptr[i], c_indptr[i + 1]):
                j = c_indices[p]
                for k in range(a_dim):
                    x[k, j] += K_over_r[k, i] * v_data[p]

    u = 1.0 / x
    _scale(c_data, c_indices, c_indptr, K, u, v_data)
    # WMD = (u * ((K * M) @ v)).sum(0)
    KM = K * M
    wmd = np.zeros(n_docs)
    for i in range(vocab):
        for p in range(c_indptr[i], c_indptr[i + 1]):
            j = c_indices[p]
            for k in range(a_dim):
                wmd[j] += u[k, j] * KM[k, i] * v_data[p]
    return wmd
