"""Inputs of the kernel pairs in this folder (bench/pairs.py, bench/test_validate.py).

Each `<name>.pydd` defines `whole` (whole-array, as NumPy code is written) and
`loop` (the same computation in scalar loops), with the same arguments and
results; the kernels do not write their arguments. `PAIRS[name]` is a
function `(rng, small) -> tuple of arguments`: `small` for the correctness
checks (run as Python too, so it stays small), else sized so that one call
of `loop` at -O3 takes about 1-50 ms on the 2-core development machine.

`TOLERANCE[name]` overrides `DEFAULT_TOL`, the (rtol, atol) of
`np.allclose` between the two versions (their summation orders differ:
NumPy's pairwise sums against sequential loops). A compiled version is
compared with the same function run by NumPy at `REFERENCE_TOL`.
"""
import numpy as np

DEFAULT_TOL = (1e-9, 1e-12)
REFERENCE_TOL = (1e-9, 1e-12)
TOLERANCE = {
    "gram_schmidt": (1e-7, 1e-10),
    "power_iter": (1e-8, 1e-11),
    "sinkhorn_norm": (1e-8, 1e-14),
    "adam": (1e-8, 1e-12),
    "logreg": (1e-8, 1e-12),
    "sgd_logreg": (1e-8, 1e-12),
    "running_mean": (1e-9, 1e-9),
    "potential": (1e-8, 0.0),
    "attention": (1e-9, 1e-12),
}


def _pts(rng, n, d):
    return rng.standard_normal((n, d))


def l1_rows(rng, small):
    return _pts(rng, 50 if small else 2000, 8), _pts(rng, 7 if small else 150, 8)


def soft_assign(rng, small):
    return _pts(rng, 40 if small else 8000, 8), _pts(rng, 5 if small else 16, 8), 0.5


def heat1d(rng, small):
    return rng.random(64 if small else 10000), 0.25, 5 if small else 500


def rownorm_dot(rng, small):
    return _pts(rng, 30 if small else 100000, 16), rng.standard_normal(16)


def forces(rng, small):
    n = 40 if small else 1500
    return rng.random(n), rng.random(n), 1e-3


def softmax_rows(rng, small):
    return (_pts(rng, 10 if small else 5000, 13 if small else 100),)


def kde(rng, small):
    return rng.standard_normal(100 if small else 10000), np.linspace(-3, 3, 9 if small else 200), 0.3


def logreg(rng, small):
    n, d = (40, 5) if small else (5000, 20)
    X = _pts(rng, n, d)
    y = (X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0).astype(np.float64)
    return X, y, 0.5, 5 if small else 50


def invariant_matvec(rng, small):
    n = 12 if small else 500
    A = rng.standard_normal((n, n)) / n
    return A, rng.random(n), rng.random(n), 0.05, 7 if small else 20000


def pairwise_l2(rng, small):
    return _pts(rng, 9 if small else 400, 16), _pts(rng, 11 if small else 500, 16)


def cosine_sim(rng, small):
    return _pts(rng, 20 if small else 100000, 32), rng.standard_normal(32)


def normalize_rows(rng, small):
    return (_pts(rng, 20 if small else 100000, 16),)


def softmax_vec(rng, small):
    return (3 * rng.standard_normal(100 if small else 1000000),)


def jacobi2d(rng, small):
    n = 12 if small else 500
    return rng.random((n, n + 3)), 3 if small else 5


def laplace5(rng, small):
    n = 15 if small else 2000
    return rng.random((n, n + 1)), 0.01


def heat2d(rng, small):
    n = 12 if small else 300
    return rng.random((n, n + 2)), 0.2, 3 if small else 20


def leaky_relu(rng, small):
    return rng.standard_normal(100 if small else 2000000), 0.01


def masked_mean(rng, small):
    return rng.standard_normal(100 if small else 2000000), 0.3


def clip_scale(rng, small):
    return rng.standard_normal(100 if small else 2000000), -1.0, 1.5


def zscore(rng, small):
    return (rng.random(100 if small else 2000000) * 5 + 3,)


def ema_rows(rng, small):
    return _pts(rng, 20 if small else 100000, 7 if small else 32), 0.1


def running_mean(rng, small):
    return rng.random(100 if small else 2000000), 5 if small else 50


def col_var(rng, small):
    return (_pts(rng, 30 if small else 20000, 7 if small else 100) + 2.0,)


def rigid3(rng, small):
    th = 0.3
    R = np.array([[np.cos(th), -np.sin(th), 0.0], [np.sin(th), np.cos(th), 0.0], [0.0, 0.0, 1.0]])
    return _pts(rng, 20 if small else 200000, 3), R, np.array([1.0, -2.0, 0.5])


def particles2(rng, small):
    n = 20 if small else 10000
    F = np.zeros((n, 2))
    F[:, 1] = -9.81
    return rng.random((n, 2)), rng.standard_normal((n, 2)), F, 0.01, 10 if small else 50


def scatter_rows(rng, small):
    n, k = (30, 4) if small else (200000, 10)
    return _pts(rng, n, 16), rng.integers(0, k, n), rng.random(n), k


def gram_schmidt(rng, small):
    return (_pts(rng, 20 if small else 2000, 6 if small else 48),)


def kmeans_step(rng, small):
    X = _pts(rng, 40 if small else 20000, 8)
    return X, X[:4 if small else 16].copy()


def histogram(rng, small):
    return rng.standard_normal(100 if small else 2000000), -2.0, 2.0, 8 if small else 64


def polyval(rng, small):
    return rng.standard_normal(10), rng.random(100 if small else 1000000) * 2 - 1


def sinkhorn_norm(rng, small):
    n = 10 if small else 500
    return rng.random((n, n + 7)) + 0.1, 3 if small else 10


def sgd_logreg(rng, small):
    n = 40 if small else 20000
    X = _pts(rng, n, 8)
    y = (X @ rng.standard_normal(8) > 0).astype(np.float64)
    return X, y, 0.05, 2 if small else 3


def power_iter(rng, small):
    n = 12 if small else 300
    A = rng.random((n, n))
    return A + A.T, rng.random(n), 5 if small else 50


def adam(rng, small):
    n = 100 if small else 100000
    return rng.standard_normal(n), rng.standard_normal(n), 0.01, 5 if small else 20


def rank1_update(rng, small):
    n, m, k = (6, 7, 3) if small else (300, 300, 100)
    return _pts(rng, n, m), _pts(rng, k, n), _pts(rng, k, m), 0.1


def relu_inplace(rng, small):
    return (rng.standard_normal(100 if small else 2000000),)


def smooth3(rng, small):
    return (rng.standard_normal(100 if small else 2000000),)


def attention(rng, small):
    m, n, d = (5, 17, 8) if small else (100, 1000, 32)
    return _pts(rng, m, d), _pts(rng, n, d), _pts(rng, n, d)


def potential(rng, small):
    side = 4 if small else 10     # points on a jittered lattice: no pair too close
    g = np.arange(side, dtype=np.float64)
    P = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)
    return (1.2 * P + 0.1 * rng.standard_normal(P.shape),)


def soft_assign_bcast(rng, small):
    return _pts(rng, 40 if small else 8000, 8), _pts(rng, 5 if small else 16, 8), 0.5


def stencil_roll(rng, small):
    n = 12 if small else 300
    return rng.random((n, n + 2)), 0.2, 3 if small else 20


def nearest_l1(rng, small):
    return _pts(rng, 50 if small else 2000, 8), _pts(rng, 7 if small else 300, 8)


PAIRS = {name: fn for name, fn in list(globals().items())
         if callable(fn) and not name.startswith("_") and fn.__module__ == __name__}


def arguments(name, small, seed=45):
    return PAIRS[name](np.random.default_rng(seed), small)
