# cython: boundscheck=False, wraparound=False, language_level=3
"""Graph change-point detection in Cython: the Python algorithm over the CSR
arrays of the graph (indptr, indices). hi_cross is a binary min-heap (heapq's
sift algorithm) of the upper endpoints in a preallocated int64 buffer; lo_cross
is only ever counted, so it is a counter. Only the heap's size is read, so
its entries need not carry src."""

import numpy as np
from libc.math cimport sqrt
from libc.stdint cimport int64_t


cdef inline Py_ssize_t heap_push(int64_t[::1] heap, Py_ssize_t size, int64_t key) nogil:
    cdef Py_ssize_t pos = size, parent
    while pos > 0:
        parent = (pos - 1) >> 1
        if key < heap[parent]:
            heap[pos] = heap[parent]
            pos = parent
        else:
            break
    heap[pos] = key
    return size + 1


cdef inline Py_ssize_t heap_pop(int64_t[::1] heap, Py_ssize_t size) nogil:
    cdef Py_ssize_t pos = 0, child
    cdef int64_t last = heap[size - 1]
    size -= 1
    if size == 0:
        return 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] < last:
            heap[pos] = heap[child]
            pos = child
        else:
            break
    heap[pos] = last
    return size


cdef void scan_stat_c(int64_t[::1] indptr, int64_t[::1] indices, int64_t offset,
                      int64_t[::1] R, int64_t[::1] heap) nogil:
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t hi_size = 0
    cdef int64_t lo_count = 0
    cdef int64_t src, e, neib
    for src in range(n):
        if src >= offset:
            for e in range(indptr[src], indptr[src + 1]):
                neib = indices[e]
                if neib > src:
                    hi_size = heap_push(heap, hi_size, neib)
                elif neib < offset:
                    lo_count += 1
        while hi_size > 0 and heap[0] <= src:
            hi_size = heap_pop(heap, hi_size)
        R[src] = hi_size + lo_count


def scan_stat(int64_t[::1] indptr, int64_t[::1] indices, int64_t offset):
    cdef Py_ssize_t n = indptr.shape[0] - 1
    R = np.zeros(n, dtype=np.int64)
    heap = np.empty(max(indices.shape[0], 1), dtype=np.int64)
    scan_stat_c(indptr, indices, offset, R, heap)
    return R


def scan_stat_2d(int64_t[::1] indptr, int64_t[::1] indices):
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t offset
    R_2d_arr = np.zeros((n, n), dtype=np.int64)
    cdef int64_t[:, ::1] R_2d = R_2d_arr
    cdef int64_t[::1] heap = np.empty(max(indices.shape[0], 1), dtype=np.int64)
    with nogil:
        for offset in range(n):
            scan_stat_c(indptr, indices, offset + 1, R_2d[offset], heap)
    return R_2d_arr


cdef void degree_stats(int64_t[::1] indptr, double *nE, int64_t *deg_sq) nogil:
    cdef Py_ssize_t i, n = indptr.shape[0] - 1
    cdef int64_t d, total = 0, sq = 0
    for i in range(n):
        d = indptr[i + 1] - indptr[i]
        total += d
        sq += d * d
    nE[0] = total / 2.0
    deg_sq[0] = sq


def compute_z(int64_t[::1] R, int64_t[::1] indptr):
    cdef int64_t n = indptr.shape[0] - 1
    cdef double nE
    cdef int64_t deg_sq, tt, i
    cdef double mu_t, p1_tt, p2_tt, p3_tt, A_tt
    degree_stats(indptr, &nE, &deg_sq)
    Z_arr = np.empty(n, dtype=np.float64)
    cdef double[::1] Z = Z_arr
    for i in range(n):
        tt = i + 1
        mu_t = nE * 2 * tt * (n - tt) / <double>(n * (n - 1))
        p1_tt = <double>(2 * tt * (n - tt)) / <double>(n * (n - 1))
        p2_tt = <double>(tt * (n - tt) * (n - 2)) / <double>(n * (n - 1) * (n - 2))
        p3_tt = (<double>(4 * tt * (n - tt) * (tt - 1) * (n - tt - 1))
                 / <double>(n * (n - 1) * (n - 2) * (n - 3)))
        A_tt = (p1_tt - 2 * p2_tt + p3_tt) * nE + (p2_tt - p3_tt) * deg_sq + p3_tt * (nE * nE)
        Z[i] = (mu_t - R[i]) / sqrt(A_tt - (mu_t * mu_t) + 1e-7)
    return Z_arr


def compute_z_2d(int64_t[:, ::1] R_2d, int64_t[::1] indptr):
    cdef int64_t n = indptr.shape[0] - 1
    cdef double nE
    cdef int64_t deg_sq, tt, i, j
    cdef double mu_t, p1_tt, p2_tt, V_tt
    degree_stats(indptr, &nE, &deg_sq)
    Z_arr = np.empty((n, n), dtype=np.float64)
    cdef double[:, ::1] Z = Z_arr
    cdef double d1 = <double>(n * (n - 1))
    cdef double d2 = <double>(n * (n - 1) * (n - 2) * (n - 3))
    with nogil:
        for i in range(n):
            for j in range(n):
                tt = j - i
                if tt < 0:
                    tt = 0
                mu_t = nE * 2 * tt * (n - tt) / d1
                p1_tt = <double>(2 * tt * (n - tt)) / d1
                p2_tt = <double>(4 * tt * (n - tt) * (tt - 1) * (n - tt - 1)) / d2
                V_tt = p2_tt * nE + (p1_tt / 2 - p2_tt) * deg_sq + (p2_tt - (p1_tt * p1_tt)) * (nE * nE)
                Z[i, j] = (mu_t - R_2d[i, j]) / sqrt(V_tt + 1e-7)
    return Z_arr


def changepoint(int64_t[::1] indptr, int64_t[::1] indices):
    R = scan_stat(indptr, indices, 0)
    Z = compute_z(R, indptr)
    R_2d = scan_stat_2d(indptr, indices)
    Z_2d = compute_z_2d(R_2d, indptr)
    return R, Z, R_2d, Z_2d
