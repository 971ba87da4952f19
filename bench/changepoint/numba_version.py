"""Graph change-point detection with Numba: the Python algorithm over the CSR
arrays of the graph (indptr, indices), heapq on a list of (neib, src) tuples."""

import heapq

import numpy as np
from numba import njit


@njit(cache=False)
def scan_stat(indptr, indices, offset):
    n = len(indptr) - 1
    lo_cross = [(np.int64(0), np.int64(0))]  # seeded for type inference
    lo_cross.pop()
    hi_cross = [(np.int64(0), np.int64(0))]
    hi_cross.pop()

    R = np.zeros(n, dtype=np.int64)
    for src in range(n):
        if src >= offset:
            for e in range(indptr[src], indptr[src + 1]):
                neib = indices[e]
                if neib > src:
                    heapq.heappush(hi_cross, (neib, np.int64(src)))
                elif neib < offset:
                    lo_cross.append((neib, np.int64(src)))

        while len(hi_cross) > 0 and hi_cross[0][0] <= src:
            heapq.heappop(hi_cross)

        R[src] = len(hi_cross) + len(lo_cross)

    return R


@njit(cache=False)
def scan_stat_2d(indptr, indices):
    n = len(indptr) - 1
    R_2d = np.zeros((n, n), dtype=np.int64)
    for offset in range(n):
        R_2d[offset, :] = scan_stat(indptr, indices, offset + 1)
    return R_2d


@njit(cache=False)
def compute_z(R, indptr):
    degrees = indptr[1:] - indptr[:-1]
    nE = degrees.sum() / 2
    n = len(degrees)
    deg_sq = (degrees ** 2).sum()

    tt = np.arange(n) + 1
    mu_t = nE * 2 * tt * (n - tt) / (n * (n - 1))
    p1_tt = 2 * tt * (n - tt) / (n * (n - 1))
    p2_tt = tt * (n - tt) * (n - 2) / (n * (n - 1) * (n - 2))
    p3_tt = 4 * tt * (n - tt) * (tt - 1) * (n - tt - 1) / (n * (n - 1) * (n - 2) * (n - 3))
    A_tt = (p1_tt - 2 * p2_tt + p3_tt) * nE + (p2_tt - p3_tt) * deg_sq + p3_tt * (nE ** 2)
    return (mu_t - R) / np.sqrt(A_tt - (mu_t ** 2) + 1e-7)


@njit(cache=False)
def compute_z_2d(R_2d, indptr):
    degrees = indptr[1:] - indptr[:-1]
    nE = degrees.sum() / 2
    n = len(degrees)
    deg_sq = (degrees ** 2).sum()

    tt = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        tt[i, :] = np.arange(n) - i
    tt = np.maximum(tt, 0)

    mu_t = nE * 2 * tt * (n - tt) / (n * (n - 1))
    p1_tt = 2 * tt * (n - tt) / (n * (n - 1))
    p2_tt = 4 * tt * (n - tt) * (tt - 1) * (n - tt - 1) / (n * (n - 1) * (n - 2) * (n - 3))
    V_tt = p2_tt * nE + (p1_tt / 2 - p2_tt) * deg_sq + (p2_tt - (p1_tt ** 2)) * (nE ** 2)
    return (mu_t - R_2d) / np.sqrt(V_tt + 1e-7)


@njit(cache=False)
def changepoint(indptr, indices):
    R = scan_stat(indptr, indices, 0)
    Z = compute_z(R, indptr)
    R_2d = scan_stat_2d(indptr, indices)
    Z_2d = compute_z_2d(R_2d, indptr)
    return R, Z, R_2d, Z_2d
