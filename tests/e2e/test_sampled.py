"""Sampled fusion (opt/SampledFusion.h): sparse products whose dense operand
is computed only at the sparse matrix's stored positions, compiled at -O0
(the operations as written) and -O3 (sampled), against the Python run and
SciPy, on matrices of densities 0, 1e-3, 0.05 and 0.5 with empty rows,
int32 indices in unsorted rows and int64 indices; and the cases the run-time
test sends back to the original operations (broadcasting, shapes that do
not match)."""

import numpy as np
import pytest
import scipy.sparse as sp

from test_sparse import DENSITIES, check, random_csr, unsorted_csr, with_int64_indices

LAYOUTS = ("sorted32", "unsorted32", "int64")


@pytest.fixture(params=("ref", "O0", "O3"))
def kern(request, reference, build):
    ref = reference("sampled")
    mod = ref if request.param == "ref" else build("sampled", int(request.param[1:]))[0]

    def get(name):
        return getattr(mod, name), getattr(ref, name)
    return get


def matrix(density, layout, m=40, n=30, dtype=np.float64, seed=0):
    rng = np.random.default_rng([seed, int(density * 1e4), LAYOUTS.index(layout)])
    if density == 1e-3:
        m, n = m * 5, n * 5  # a few entries
    S = random_csr(rng, m, n, density, dtype)
    if layout == "unsorted32":
        S = unsorted_csr(rng, S)
    elif layout == "int64":
        S = with_int64_indices(S)
    return rng, S


def normal(rng, *shape, dtype=np.float64):
    return rng.normal(size=shape).astype(dtype)


densities = pytest.mark.parametrize("density", DENSITIES, ids=lambda d: f"d{d:g}")
layouts = pytest.mark.parametrize("layout", LAYOUTS)


@densities
@layouts
def test_sddmm(kern, density, layout):
    rng, S = matrix(density, layout)
    X, Y = normal(rng, S.shape[0], 7), normal(rng, S.shape[1], 7)
    check(*kern("sddmm"), S, X, Y, expect=sp.csr_matrix(S.multiply(X @ Y.T)), rtol=1e-12)
    # strided operands (a transposed X, a sliced Y) are read where they are
    Xt = np.asfortranarray(X)
    check(*kern("sddmm"), S, Xt, Y[:, ::1], expect=sp.csr_matrix(S.multiply(X @ Y.T)), rtol=1e-12)


@densities
def test_integer_and_float32(kern, density):
    rng, S = matrix(density, "sorted32", dtype=np.int64)
    X, Y = rng.integers(-5, 6, (S.shape[0], 4)), rng.integers(-5, 6, (4, S.shape[1]))
    check(*kern("sddmm_i64"), S, X, Y, expect=sp.csr_matrix(S.multiply(X @ Y)))
    rng, S = matrix(density, "unsorted32", dtype=np.float32)
    X, Y = normal(rng, S.shape[0], 5, dtype=np.float32), normal(rng, S.shape[1], 5, dtype=np.float32)
    check(*kern("sddmm_f32"), S, X, Y, expect=sp.csr_matrix(S.multiply(X @ Y.T)), rtol=2e-5)


@densities
@layouts
def test_element_wise_trees(kern, density, layout):
    rng, S = matrix(density, layout)
    m, n = S.shape
    K, u = np.abs(normal(rng, 6, m)) + 0.1, np.abs(normal(rng, 6, n)) + 0.1
    check(*kern("sinkhorn_step"), S, K, u, expect=sp.csr_matrix(S.multiply(1.0 / (K.T @ u))), rtol=1e-12)
    X, Y, W, w = normal(rng, m, 3), normal(rng, 3, n), normal(rng, m, n), normal(rng, n)
    check(*kern("tree"), S, X, Y, W, w, expect=sp.csr_matrix(S.multiply((X @ Y) * W + np.sqrt(np.abs(w)))),
          rtol=1e-12)
    check(*kern("dense_first"), S, W, 0.5, expect=sp.csr_matrix(S.multiply(np.exp(W * 0.5))), rtol=1e-12)


@densities
@layouts
def test_consumers(kern, density, layout):
    rng, S = matrix(density, layout)
    m, n = S.shape
    X, Y, Z = normal(rng, m, 4), normal(rng, n, 4), normal(rng, n, 3)
    P = sp.csr_matrix(S.multiply(X @ Y.T))
    check(*kern("total"), S, X, Y, expect=P.sum(), rtol=1e-9)
    check(*kern("column_sums"), S, X, Y, expect=np.asarray(P.sum(0)).ravel(), rtol=1e-9)
    check(*kern("chained"), S, X, Y, Z, expect=P @ Z, rtol=1e-9)


@densities
def test_in_a_loop(kern, density):
    rng, c = matrix(density, "unsorted32")
    c = sp.csr_matrix(abs(c))
    K = np.abs(normal(rng, 5, c.shape[0])) + 0.1
    x = np.ones((5, c.shape[1])) / 5
    for _ in range(4):
        v = sp.csr_matrix(c.multiply(1.0 / (K.T @ (1.0 / x))))
        x = np.asarray(K @ v)
    check(*kern("iterate"), c, K, 4, expect=x, rtol=1e-9)


def test_broadcast_operands_take_the_general_path(kern):
    rng, S = matrix(0.05, "sorted32")
    m, n = S.shape
    X, Y = normal(rng, m, 3), normal(rng, 3, n)
    # a (1, n) row and a (m, 1) column broadcast as NumPy broadcasts them
    for W in (normal(rng, 1, n), normal(rng, m, 1)):
        w = normal(rng, n)
        check(*kern("tree"), S, X, Y, W, w, expect=sp.csr_matrix(S.multiply((X @ Y) * W + np.sqrt(np.abs(w)))),
              rtol=1e-12)


def test_shape_errors_are_the_products(kern):
    rng, S = matrix(0.05, "sorted32")
    m, n = S.shape
    with pytest.raises(ValueError):
        kern("sddmm")[1](S, normal(rng, m, 3), normal(rng, n, 4))
    check(*kern("sddmm"), S, normal(rng, m, 3), normal(rng, n, 4), expect=ValueError)     # X @ Y.T
    check(*kern("sddmm"), S, normal(rng, m + 1, 3), normal(rng, n, 3), expect=ValueError)  # S * (m+1, n)
    check(*kern("tree"), S, normal(rng, m, 2), normal(rng, 2, n), normal(rng, m, n + 1), normal(rng, n),
          expect=ValueError)
