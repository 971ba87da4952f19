"""Graph-based change-point detection (Chen and Zhang, "Graph-based change-point
detection", arXiv:1209.1625) as bkj/graph-changepoint writes it: the scan
statistic R(t) counts the edges of a similarity graph (here the Euclidean MST
of the observations; nodes are time steps) that cross the cut between the
times before and after t. The 1-D scan cuts at every t; the 2-D scan cuts out
every interval [offset, t] and is the expensive, parallel part. Z normalizes
R by its analytic mean and variance under the permutation null.

g is the graph as a dict {node: [neighbours]}, nodes 0..n-1 in time order."""

from heapq import heappop, heappush

import numpy as np


def scan_stat(g, offset=0):
    """size of the cut between [offset, src] and the rest, for every src"""
    lo_cross = []
    hi_cross = []

    R = np.zeros(len(g), dtype=int)
    for src in g.keys():
        if src >= offset:
            for neib in g[src]:
                if neib > src:
                    heappush(hi_cross, (neib, src))
                elif neib < offset:
                    lo_cross.append((neib, src))

        while hi_cross and (hi_cross[0][0] <= src):
            _ = heappop(hi_cross)

        R[src] = len(hi_cross) + len(lo_cross)

    return R


def scan_stat_2d(g):
    """scan stat for every offset (independent: the paper runs them in parallel)"""
    res = [scan_stat(g, offset=offset + 1) for offset in g.keys()]
    return np.vstack(res)


def compute_z(R, g):
    """normalize the 1-D scan stat by its analytic mean and variance"""
    degrees = np.array([len(v) for v in g.values()])
    nE = degrees.sum() / 2
    n = len(g)
    deg_sq = (degrees ** 2).sum()

    tt = np.arange(n) + 1
    mu_t = nE * 2 * tt * (n - tt) / (n * (n - 1))
    p1_tt = 2 * tt * (n - tt) / (n * (n - 1))
    p2_tt = tt * (n - tt) * (n - 2) / (n * (n - 1) * (n - 2))
    p3_tt = 4 * tt * (n - tt) * (tt - 1) * (n - tt - 1) / (n * (n - 1) * (n - 2) * (n - 3))
    A_tt = (p1_tt - 2 * p2_tt + p3_tt) * nE + (p2_tt - p3_tt) * deg_sq + p3_tt * (nE ** 2)
    return (mu_t - R) / np.sqrt(A_tt - (mu_t ** 2) + 1e-7)


def compute_z_2d(R_2d, g):
    """normalize the 2-D scan stats by their analytic mean and variance"""
    degrees = np.array([len(v) for v in g.values()])
    nE = degrees.sum() / 2
    n = len(g)
    deg_sq = (degrees ** 2).sum()

    tt = np.arange(n)
    tt = np.vstack([tt - i for i in range(len(tt))])
    tt = tt.clip(min=0)

    mu_t = nE * 2 * tt * (n - tt) / (n * (n - 1))
    p1_tt = 2 * tt * (n - tt) / (n * (n - 1))
    p2_tt = 4 * tt * (n - tt) * (tt - 1) * (n - tt - 1) / (n * (n - 1) * (n - 2) * (n - 3))
    V_tt = p2_tt * nE + (p1_tt / 2 - p2_tt) * deg_sq + (p2_tt - (p1_tt ** 2)) * (nE ** 2)
    return (mu_t - R_2d) / np.sqrt(V_tt + 1e-7)


def changepoint(g):
    """both scans and their normalizations: (R, Z, R_2d, Z_2d)"""
    R = scan_stat(g)
    Z = compute_z(R, g)
    R_2d = scan_stat_2d(g)
    Z_2d = compute_z_2d(R_2d, g)
    return R, Z, R_2d, Z_2d
