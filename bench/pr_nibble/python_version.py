"""Optimized parallel PR-Nibble (Shun et al., Figs. 5-6), one seed at a time,
with NumPy vectors for p, r and r' and scipy's CSR arrays for the neighbors."""

import numpy as np


def pr_nibble(seeds, adj, alpha, epsilon):
    n = adj.shape[0]
    degrees = np.asarray(adj.sum(axis=1)).ravel()
    scores = np.zeros((n, len(seeds)))
    for k, seed in enumerate(seeds):
        p = np.zeros(n)
        r = np.zeros(n)
        r[seed] = 1.0
        r_prime = r.copy()
        frontier = np.array([seed])
        while len(frontier) > 0:
            r = r_prime.copy()
            # vertexMap: each frontier node keeps part of its residual
            p[frontier] += (2 * alpha / (1 + alpha)) * r[frontier]
            r_prime[frontier] = 0.0
            # edgeMap: the rest is spread evenly over its neighbors
            for v in frontier:
                neighbors = adj.indices[adj.indptr[v]:adj.indptr[v + 1]]
                r_prime[neighbors] += (1 - alpha) / (1 + alpha) * r[v] / degrees[v]
            frontier = np.where(r_prime >= degrees * epsilon)[0]
        scores[:, k] = p
    return scores
