"""ISTA for l1-regularized PageRank (Fountoulakis et al., Algorithm 4), one
seed at a time. The objective's Hessian is Q = D^-1/2 (D - (1-alpha)/2 (D + A)) D^-1/2
= I - (1-alpha)/2 (I + D^-1/2 A D^-1/2); its product with q is one
scipy.sparse matvec. The score is D^1/2 q."""

import numpy as np


def ista(seeds, adj, alpha, rho, iters):
    n = adj.shape[0]
    d = np.asarray(adj.sum(axis=1)).ravel()
    d_sqrt = np.sqrt(d)
    dn_sqrt = 1.0 / d_sqrt
    thresh = rho * alpha * d_sqrt
    scores = np.zeros((n, len(seeds)))
    for k, seed in enumerate(seeds):
        s = np.zeros(n)
        s[seed] = 1.0
        grad0 = -alpha * dn_sqrt * s
        q = np.zeros(n)
        grad = grad0
        for _ in range(iters):
            # proximal step of the l1 term: soft thresholding
            z = q - grad
            q = np.where(z >= thresh, z - thresh, np.where(z <= -thresh, z + thresh, 0.0))
            Qq = q - (1 - alpha) / 2 * (q + dn_sqrt * (adj @ (dn_sqrt * q)))
            grad = grad0 + Qq
        scores[:, k] = q * d_sqrt
    return scores
