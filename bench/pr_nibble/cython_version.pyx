# cython: boundscheck=False, wraparound=False, language_level=3
"""PR-Nibble in Cython: typed memoryviews, the frontier kept in an index
array with a count."""

import numpy as np


def pr_nibble(const long[:] seeds, const long[:] indptr, const long[:] indices,
              const double[:] data, double alpha, double epsilon):
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t ns = seeds.shape[0]
    cdef Py_ssize_t i, j, k, s, v, nf
    cdef double update
    cdef double keep = 2 * alpha / (1 + alpha)
    cdef double spread = (1 - alpha) / (1 + alpha)
    cdef double[:] degrees = np.zeros(n)
    cdef double[:, :] scores = np.zeros((n, ns))
    cdef double[:] p = np.zeros(n)
    cdef double[:] r = np.zeros(n)
    cdef double[:] r_prime = np.zeros(n)
    cdef long[:] frontier = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            degrees[i] += data[k]
    for s in range(ns):
        p[:] = 0.0
        r_prime[:] = 0.0
        r_prime[seeds[s]] = 1.0
        frontier[0] = seeds[s]
        nf = 1
        while nf > 0:
            r[:] = r_prime
            for j in range(nf):
                v = frontier[j]
                p[v] += keep * r[v]
                r_prime[v] = 0.0
            for j in range(nf):
                v = frontier[j]
                update = spread * r[v] / degrees[v]
                for k in range(indptr[v], indptr[v + 1]):
                    r_prime[indices[k]] += update
            nf = 0
            for i in range(n):
                if r_prime[i] >= degrees[i] * epsilon:
                    frontier[nf] = i
                    nf += 1
        scores[:, s] = p
    return np.asarray(scores)
