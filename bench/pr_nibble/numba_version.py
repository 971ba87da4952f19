"""PR-Nibble with Numba: the same pushes over the CSR arrays."""

import numpy as np
from numba import njit


@njit(cache=False)
def pr_nibble(seeds, indptr, indices, data, alpha, epsilon):
    n = len(indptr) - 1
    degrees = np.zeros(n)
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            degrees[i] += data[k]
    scores = np.zeros((n, len(seeds)))
    for s in range(len(seeds)):
        seed = seeds[s]
        p = np.zeros(n)
        r = np.zeros(n)
        r[seed] = 1.0
        r_prime = r.copy()
        frontier = np.array([seed])
        while len(frontier) > 0:
            r = r_prime.copy()
            for v in frontier:
                p[v] += (2 * alpha / (1 + alpha)) * r[v]
                r_prime[v] = 0.0
            for v in frontier:
                update = (1 - alpha) / (1 + alpha) * r[v] / degrees[v]
                for k in range(indptr[v], indptr[v + 1]):
                    r_prime[indices[k]] += update
            frontier = np.where(r_prime >= degrees * epsilon)[0]
        scores[:, s] = p
    return scores
