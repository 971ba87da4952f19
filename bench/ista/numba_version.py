"""ISTA for l1-regularized PageRank with Numba: the element-wise steps as
loops, Q q through a CSR matvec loop."""

import numpy as np
from numba import njit


@njit(cache=False)
def ista(seeds, indptr, indices, data, alpha, rho, iters):
    n = len(indptr) - 1
    d = np.zeros(n)
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            d[i] += data[k]
    d_sqrt = np.sqrt(d)
    dn_sqrt = 1.0 / d_sqrt
    thresh = rho * alpha * d_sqrt
    c = (1 - alpha) / 2
    scores = np.zeros((n, len(seeds)))
    q = np.zeros(n)
    y = np.zeros(n)
    grad = np.zeros(n)
    grad0 = np.zeros(n)
    for s in range(len(seeds)):
        seed = seeds[s]
        grad0[:] = 0.0
        grad0[seed] = -alpha * dn_sqrt[seed]
        q[:] = 0.0
        grad[:] = grad0
        for _ in range(iters):
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
    return scores
