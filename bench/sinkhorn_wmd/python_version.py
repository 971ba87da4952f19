"""Sinkhorn Word Mover's Distance, as a NumPy/SciPy user writes it.

r is the query document's word histogram over the vocabulary, c the
vocabulary x documents term matrix (scipy CSR, columns sum to one), vecs
the word embeddings; the result is one (regularized) WMD per document.
"""
import numpy as np
from scipy.spatial.distance import cdist


def sinkhorn_wmd(r, c, vecs, lamb, max_iter):
    # only the query's words matter: M is query words x vocabulary
    sel = r > 0
    r = r[sel].reshape(-1, 1)
    M = cdist(vecs[sel], vecs)

    a_dim = r.shape[0]
    b_nobs = c.shape[1]
    x = np.ones((a_dim, b_nobs)) / a_dim

    K = np.exp(-lamb * M)
    K_over_r = K / r

    it = 0
    while it < max_iter:
        u = 1.0 / x
        v = c.multiply(1 / (K.T @ u))
        x = K_over_r @ v
        it += 1

    u = 1.0 / x
    v = c.multiply(1 / (K.T @ u))
    return (u * ((K * M) @ v)).sum(0)
