# cython: boundscheck=False, wraparound=False, language_level=3
"""ISTA for l1-regularized PageRank in Cython: typed memoryviews, the
element-wise steps as loops, Q q through a CSR matvec loop."""

import numpy as np
from libc.math cimport sqrt


def ista(const long[:] seeds, const long[:] indptr, const long[:] indices,
         const double[:] data, double alpha, double rho, long iters):
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t ns = seeds.shape[0]
    cdef Py_ssize_t i, k, s, it, seed
    cdef double z, acc
    cdef double c = (1 - alpha) / 2
    cdef double[:] d = np.zeros(n)
    cdef double[:] d_sqrt = np.zeros(n)
    cdef double[:] dn_sqrt = np.zeros(n)
    cdef double[:] thresh = np.zeros(n)
    cdef double[:] q = np.zeros(n)
    cdef double[:] y = np.zeros(n)
    cdef double[:] grad = np.zeros(n)
    cdef double[:] grad0 = np.zeros(n)
    cdef double[:, :] scores = np.zeros((n, ns))
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            d[i] += data[k]
        d_sqrt[i] = sqrt(d[i])
        dn_sqrt[i] = 1.0 / d_sqrt[i]
        thresh[i] = rho * alpha * d_sqrt[i]
    for s in range(ns):
        seed = seeds[s]
        grad0[:] = 0.0
        grad0[seed] = -alpha * dn_sqrt[seed]
        q[:] = 0.0
        grad[:] = grad0
        for it in range(iters):
            for i in range(n):
                z = q[i] - grad[i]
                if z >= thresh[i]:
                    q[i] = z - thresh[i]
                elif z <= -thresh[i]:
                    q[i] = z + thresh[i]
                else:
                    q[i] = 0.0
                y[i] = dn_sqrt[i] * q[i]
            for i in range(n):
                acc = 0.0
                for k in range(indptr[i], indptr[i + 1]):
                    acc += data[k] * y[indices[k]]
                grad[i] = grad0[i] + (q[i] - c * (q[i] + dn_sqrt[i] * acc))
        for i in range(n):
            scores[i, s] = q[i] * d_sqrt[i]
    return np.asarray(scores)
