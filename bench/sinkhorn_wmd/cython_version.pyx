# cython: boundscheck=False, wraparound=False, language_level=3
"""Sinkhorn WMD in Cython: typed memoryviews and loops over the CSR term
matrix; v = c .* (1 / (K.T @ u)) is computed at c's non-zeros only."""
import numpy as np
from libc.math cimport sqrt, exp


cdef void scale(double[:] c_data, int[:] c_indices, int[:] c_indptr, double[:, :] K,
                double[:, :] u, double[:] v_data) nogil:
    cdef Py_ssize_t i, p, j, k
    cdef Py_ssize_t a_dim = K.shape[0]
    cdef double s
    for i in range(c_indptr.shape[0] - 1):
        for p in range(c_indptr[i], c_indptr[i + 1]):
            j = c_indices[p]
            s = 0.0
            for k in range(a_dim):
                s += K[k, i] * u[k, j]
            v_data[p] = c_data[p] / s


def sinkhorn_wmd(double[:] r, double[:] c_data, int[:] c_indices, int[:] c_indptr,
                 Py_ssize_t n_docs, double[:, :] vecs, double lamb, int max_iter):
    cdef Py_ssize_t vocab = vecs.shape[0], dim = vecs.shape[1]
    cdef Py_ssize_t a_dim = 0, a, q, i, j, k, p, it
    cdef double d, t

    for i in range(vocab):
        if r[i] > 0:
            a_dim += 1
    cdef Py_ssize_t[:] sel = np.empty(a_dim, dtype=np.intp)
    a = 0
    for i in range(vocab):
        if r[i] > 0:
            sel[a] = i
            a += 1

    # distances from the query's words to every word; K, K / r and K * M
    cdef double[:, :] M = np.empty((a_dim, vocab))
    cdef double[:, :] K = np.empty((a_dim, vocab))
    cdef double[:, :] K_over_r = np.empty((a_dim, vocab))
    cdef double[:, :] KM = np.empty((a_dim, vocab))
    for a in range(a_dim):
        q = sel[a]
        for j in range(vocab):
            d = 0.0
            for k in range(dim):
                t = vecs[q, k] - vecs[j, k]
                d += t * t
            M[a, j] = sqrt(d)
            K[a, j] = exp(-lamb * M[a, j])
            K_over_r[a, j] = K[a, j] / r[q]
            KM[a, j] = K[a, j] * M[a, j]

    cdef double[:, :] x = np.full((a_dim, n_docs), 1.0 / a_dim)
    cdef double[:, :] u = np.empty((a_dim, n_docs))
    cdef double[:] v_data = np.empty(c_data.shape[0])

    for it in range(max_iter):
        for k in range(a_dim):
            for j in range(n_docs):
                u[k, j] = 1.0 / x[k, j]
        scale(c_data, c_indices, c_indptr, K, u, v_data)
        # x = K_over_r @ v
        x[:, :] = 0.0
        for i in range(vocab):
            for p in range(c_indptr[i], c_indptr[i + 1]):
                j = c_indices[p]
                for k in range(a_dim):
                    x[k, j] += K_over_r[k, i] * v_data[p]

    for k in range(a_dim):
        for j in range(n_docs):
            u[k, j] = 1.0 / x[k, j]
    scale(c_data, c_indices, c_indptr, K, u, v_data)
    # WMD = (u * ((K * M) @ v)).sum(0)
    wmd = np.zeros(n_docs)
    cdef double[:] w = wmd
    for i in range(vocab):
        for p in range(c_indptr[i], c_indptr[i + 1]):
            j = c_indices[p]
            for k in range(a_dim):
                w[j] += u[k, j] * KM[k, i] * v_data[p]
    return wmd
