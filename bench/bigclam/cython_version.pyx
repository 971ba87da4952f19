# cython: boundscheck=False, wraparound=False, language_level=3
"""bigCLAM in Cython: typed memoryviews and loops. The gradient visits the
row of A in index order (neighbours and non-neighbours as np.where lists
them); the log-likelihood sums log(1 - exp(-<F_i, F_j>)) over the edges and
<F_i, F_j> over the non-edges (the diagonal included), as the original's
masked sums do."""

import numpy as np
from libc.math cimport exp, log


cdef double sigm(double x) nogil:
    return exp(-1. * x) / (1. - exp(-1. * x))


cdef double log_likelihood(double[:, ::1] F, signed char[:, ::1] A) nogil:
    cdef Py_ssize_t N = F.shape[0], C = F.shape[1], i, j, c
    cdef double sum_edges = 0.0, sum_nedges = 0.0, a_soft
    for i in range(N):
        for j in range(N):
            a_soft = 0.0
            for c in range(C):
                a_soft += F[i, c] * F[j, c]
            if A[i, j] != 0:
                sum_edges += log(1. - exp(-1. * a_soft))
            else:
                sum_nedges += a_soft
    return sum_edges - sum_nedges


cdef void gradient(double[:, ::1] F, signed char[:, ::1] A, Py_ssize_t i,
                   double[::1] sum_neigh, double[::1] sum_nneigh, double[::1] grad) nogil:
    cdef Py_ssize_t N = F.shape[0], C = F.shape[1], j, c
    cdef double dotproduct, s
    for c in range(C):
        sum_neigh[c] = 0.0
        sum_nneigh[c] = 0.0
    for j in range(N):
        if A[i, j] != 0:
            dotproduct = 0.0
            for c in range(C):
                dotproduct += F[j, c] * F[i, c]
            s = sigm(dotproduct)
            for c in range(C):
                sum_neigh[c] += F[j, c] * s
        else:
            for c in range(C):
                sum_nneigh[c] += F[j, c]
    for c in range(C):
        grad[c] = sum_neigh[c] - sum_nneigh[c]


def train(signed char[:, ::1] A, double[:, ::1] F, long iterations, double lr):
    cdef Py_ssize_t N = F.shape[0], C = F.shape[1], n, person, c
    cdef double v
    lls_arr = np.zeros(iterations)
    cdef double[::1] lls = lls_arr
    cdef double[::1] sum_neigh = np.zeros(C), sum_nneigh = np.zeros(C), grad = np.zeros(C)
    with nogil:
        for n in range(iterations):
            for person in range(N):
                gradient(F, A, person, sum_neigh, sum_nneigh, grad)
                for c in range(C):
                    v = F[person, c] + lr * grad[c]
                    F[person, c] = v if v > 0.001 else 0.001
            lls[n] = log_likelihood(F, A)
    return np.asarray(F), lls_arr
