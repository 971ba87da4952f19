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

from test_sparse import DENSITIES, assert_result, check, random_csr, unsorted_csr, with_int64_indices

LAYOUTS = ("sorted32", "unsorted32", "int64")


@pytest.fixture(params=("ref", "O0", "O3"))
def kern(request, reference, build):
    ref = reference("sampled")
    mod = ref if request.param == "ref" else build("sampled", int(request.param[1:]))[0]

    def get(name):
        return getattr(mod, name), getattr(ref, name)
    return get


def matrix(density, layout, m=40, n=30, dtype=np.float64, seed=0, scale=True):
    rng = np.random.default_rng([seed, int(density * 1e4), LAYOUTS.index(layout)])
    if density == 1e-3 and scale:
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


# ---- masked sparse products: spm_mul(M, spmm(A, B)) -------------------------------------


def graph(rng, n, density, dtype=np.float64):
    """A symmetric adjacency matrix without self loops."""
    U = sp.triu(sp.random(n, n, density=density, random_state=int(rng.integers(1 << 30))), k=1)
    A = sp.csr_matrix(((U + U.T) > 0).astype(dtype))
    A.sort_indices()
    return A


@densities
def test_triangle_counting(kern, density):
    rng = np.random.default_rng(int(density * 1e4))
    A = graph(rng, 60, max(density, 0.02))
    check(*kern("triangles"), A, expect=sp.csr_matrix(sp.csr_matrix(A @ A).multiply(A)), rtol=0)
    Ai = A.astype(np.int64)
    check(*kern("triangle_count_i64"), Ai, expect=int((Ai @ Ai).multiply(Ai).sum()) // 6)


@densities
@layouts
def test_masked_products(kern, density, layout):
    rng, M = matrix(density, layout, m=30, n=25, scale=False)
    _, A = matrix(min(0.5, density * 40), layout, m=30, n=20, seed=1, scale=False)
    _, B = matrix(min(0.5, density * 40), layout, m=20, n=25, seed=2, scale=False)
    check(*kern("masked_first"), M, A, B, expect=sp.csr_matrix(M.multiply(A @ B)), rtol=0)


@pytest.mark.parametrize("threads", [1, 2])
def test_masked_products_on_threads(build, threads):
    # Large enough for the rows to be split among threads (pydd's
    # kParallelElements): the same matrix as SciPy's at one and two threads;
    # a duplicate column in a late row sends the whole product back to the
    # two operations as written.
    import pydd
    mod = build("sampled", 3)[0]
    rng = np.random.default_rng(threads)
    A = graph(rng, 3000, 0.008)
    assert A.nnz >= 1 << 16
    M, B = random_csr(rng, 3000, 2500, 0.01, np.float64), random_csr(rng, 3000, 2500, 0.01, np.float64)
    D = M.copy()
    row = D.indptr[2900]
    assert D.indptr[2901] - row >= 2
    D.indices[row + 1] = D.indices[row]  # a duplicate column in row 2900
    pydd.set_num_threads(threads)
    try:
        assert_result(mod.triangles(A), sp.csr_matrix(sp.csr_matrix(A @ A).multiply(A)), "triangles", 0)
        assert_result(mod.masked_first(M, A, B),
                      sp.csr_matrix(M.multiply(A @ B)), "masked_first", 0)
        assert_result(mod.masked_first(D, A, B), sp.csr_matrix(D.multiply(A @ B)), "masked_first, duplicate", 0)
    finally:
        pydd.set_num_threads(0)


def test_masked_products_outside_the_fast_path(kern):
    rng, M = matrix(0.3, "sorted32", m=12, n=10)
    _, A = matrix(0.5, "sorted32", m=12, n=8, seed=1)
    _, B = matrix(0.5, "sorted32", m=8, n=10, seed=2)
    # an infinite or NaN value (x * 0 is kept by SciPy outside the mask),
    # sums that overflow, duplicate columns: the two operations as written
    for bad in (np.inf, np.nan, 1e308):
        B2 = B.copy()
        B2.data[0] = bad
        check(*kern("masked_first"), M, A, B2, expect=sp.csr_matrix(M.multiply(A @ B2)), rtol=0)
    D = sp.csr_matrix((np.ones(3), np.array([1, 1, 2], np.int32), np.array([0, 3] + [3] * 11, np.int32)), shape=(12, 10))
    check(*kern("masked_first"), D, A, B, expect=sp.csr_matrix(D.multiply(A @ B)), rtol=0)
    # exact cancellation: a sum of zero is no entry
    A3 = sp.csr_matrix(np.array([[1.0, -1.0]]))
    B3 = sp.csr_matrix(np.array([[2.0], [2.0]]))
    M3 = sp.csr_matrix(np.array([[5.0]]))
    check(*kern("masked_first"), M3, A3, B3, expect=sp.csr_matrix(M3.multiply(A3 @ B3)), rtol=0)
    # shapes that do not match raise spmm's and spm_mul's errors
    check(*kern("masked_first"), M, A, A, expect=ValueError)
    check(*kern("masked_first"), M[:5], A, B, expect=ValueError)
