"""bigCLAM with Numba: the per-node gradient as loops over the row of A
(neighbours and non-neighbours in index order, as np.where lists them), the
log-likelihood with NumPy array expressions as in the original."""

import numpy as np
from numba import njit


@njit(cache=False)
def sigm(x):
    return np.exp(-1. * x) / (1. - np.exp(-1. * x))


@njit(cache=False)
def log_likelihood(F, A):
    A_soft = np.dot(F, F.T)
    FIRST_PART = A * np.log(1. - np.exp(-1. * A_soft))
    sum_edges = np.sum(FIRST_PART)
    SECOND_PART = (1 - A) * A_soft
    sum_nedges = np.sum(SECOND_PART)
    return sum_edges - sum_nedges


@njit(cache=False)
def gradient(F, A, i):
    N, C = F.shape
    sum_neigh = np.zeros(C)
    sum_nneigh = np.zeros(C)
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
    return sum_neigh - sum_nneigh


@njit(cache=False)
def train(A, F, iterations, lr):
    N, C = F.shape
    lls = np.zeros(iterations)
    for n in range(iterations):
        for person in range(N):
            grad = gradient(F, A, person)
            for c in range(C):
                F[person, c] = max(0.001, F[person, c] + lr * grad[c])
        lls[n] = log_likelihood(F, A)
    return F, lls
