"""bigCLAM: community affiliations F (nodes x communities) fitted to an
adjacency matrix A by per-node projected gradient ascent of the log-likelihood
(Yang & Leskovec, WSDM'13, eq. 2 and 3), in the NumPy style of
RobRomijnders/bigclam's main.py. The random initial F comes in as an argument
(spec.generate draws it) and the per-iteration log-likelihood, which the
original prints, is returned instead."""

import numpy as np


def sigm(x):
    return np.divide(np.exp(-1. * x), 1. - np.exp(-1. * x))


def log_likelihood(F, A):
    """Equation 2 of the bigCLAM paper."""
    A_soft = F.dot(F.T)

    # A is a {0,1} matrix: multiplying by it keeps only the edges' terms
    FIRST_PART = A * np.log(1. - np.exp(-1. * A_soft))
    sum_edges = np.sum(FIRST_PART)
    SECOND_PART = (1 - A) * A_soft
    sum_nedges = np.sum(SECOND_PART)

    log_likeli = sum_edges - sum_nedges
    return log_likeli


def gradient(F, A, i):
    """Equation 3 of the bigCLAM paper for row i of F."""
    N, C = F.shape

    neighbours = np.where(A[i])
    nneighbours = np.where(1 - A[i])

    sum_neigh = np.zeros((C,))
    for nb in neighbours[0]:
        dotproduct = F[nb].dot(F[i])
        sum_neigh += F[nb] * sigm(dotproduct)

    sum_nneigh = np.zeros((C,))
    for nnb in nneighbours[0]:
        sum_nneigh += F[nnb]

    grad = sum_neigh - sum_nneigh
    return grad


def train(A, F, iterations, lr):
    """Updates F in place with step size lr (0.005 in the original, for 40
    nodes); returns F and the log-likelihood after each iteration."""
    N = A.shape[0]
    lls = np.zeros(iterations)

    for n in range(iterations):
        for person in range(N):
            grad = gradient(F, A, person)

            F[person] += lr * grad

            F[person] = np.maximum(0.001, F[person])  # F should be nonnegative
        lls[n] = log_likelihood(F, A)
    return F, lls
