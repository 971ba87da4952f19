"""Sparse layout (opt/SparseLayout.h): in loops, a dense @ sparse product's
transposed operand and a sampled product's contiguous rows and columns are
made once, before the loop. Compiled at -O0 (the products as written) and
-O3 (with the conversions hoisted), against the Python run and SciPy, with
strided and contiguous operands, int32 (sorted, unsorted) and int64
indices, and shape errors with the product's message."""

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import KERNELS, run_pyddc
from test_sampled import densities, layouts, matrix, normal
from test_sparse import check


@pytest.fixture(params=("ref", "O0", "O3"))
def kern(request, reference, build):
    ref = reference("layout")
    mod = ref if request.param == "ref" else build("layout", int(request.param[1:]))[0]

    def get(name):
        return getattr(mod, name), getattr(ref, name)
    return get


def operands(D):
    """D as it is, Fortran-ordered, and a strided slice of a wider array."""
    wide = np.zeros((D.shape[0], 2 * D.shape[1]), D.dtype)
    wide[:, ::2] = D
    return D, np.asfortranarray(D), wide[:, ::2]


@densities
@layouts
def test_sinkhorn_loop(kern, density, layout):
    rng, c = matrix(density, layout)
    c = abs(c)
    c.data += 0.5  # no zero entry: 1 / (K.T @ u) stays finite where c stores one
    m, n = c.shape
    K = np.abs(normal(rng, 6, m)) + 0.1
    r = np.abs(normal(rng, 6, 1)) + 0.1
    x = np.ones((6, n)) / 6
    with np.errstate(divide="ignore"):  # a document without words: x is 0 there
        for _ in range(3):
            v = sp.csr_matrix(c.multiply(1.0 / (K.T @ (1.0 / x))))
            x = np.asarray((K / r) @ v)
        u = 1.0 / x
    for Kx in operands(K):
        check(*kern("sinkhorn"), c, Kx, r, 3, expect=u, rtol=1e-9)
    check(*kern("sinkhorn"), c, K, r, 0, expect=np.full((6, n), 6.0), rtol=0)  # the loop does not run


@densities
@layouts
@pytest.mark.parametrize("rows", (2, 3, 4, 9))  # spmm_dense reads fewer than 4 rows of D in place
def test_dense_sparse(kern, density, layout, rows):
    rng, S = matrix(density, layout)
    D = normal(rng, rows, S.shape[0])
    expect = np.asarray(D @ S) * 6.0  # 1 + 2 + 3
    for Dx in operands(D):
        check(*kern("dense_sparse"), S, Dx, 3, expect=expect, rtol=1e-12)


@densities
@layouts
def test_transposed_operand_gives_the_same_bits(build, density, layout):
    """spmm_dense_t (D.T made before the loop) adds in spmm_dense's order."""
    rng, S = matrix(density, layout)
    D = normal(rng, 7, S.shape[0])
    got = [build("layout", opt)[0].dense_sparse(S, Dx, 1) for opt in (0, 3) for Dx in operands(D)]
    for g in got[1:]:
        assert np.array_equal(g, got[0])


def test_the_loops_are_rewritten():
    ir = run_pyddc("--emit=ir", "-O3", KERNELS / "layout.pydd").stdout
    assert ir.count("spmm_dense_t(layout__") == 5, ir  # every dense @ sparse product in a loop but written's
    assert "sampled_matmul(c, layout__0, u)" in ir
    assert "sampled_matmul(S, X, transpose(layout__0))" in ir


@densities
def test_other_dtypes(kern, density):
    rng, S = matrix(density, "unsorted32")
    D = normal(rng, 5, S.shape[0], dtype=np.float32)
    for Dx in operands(D):
        check(*kern("dense_sparse_f32"), S, Dx, 2, expect=2 * np.asarray(D.astype(np.float64) @ S), rtol=1e-6)
    rng, Si = matrix(density, "int64", dtype=np.int64)
    Di = rng.integers(-4, 5, (5, Si.shape[0]))
    for Dx in operands(Di):
        check(*kern("dense_sparse_i64"), Si, Dx, 2, expect=2 * np.asarray(Di @ Si))


@densities
@layouts
def test_sampled_columns(kern, density, layout):
    rng, S = matrix(density, layout)
    X, Y = normal(rng, S.shape[0], 4), normal(rng, 4, S.shape[1])
    expect = sum(S.multiply(X * 0.5 ** i @ Y).sum() for i in range(3))
    for Yx in operands(Y):
        check(*kern("columns"), S, X, Yx, 3, expect=expect, rtol=1e-9)


def test_written_and_fresh(kern):
    rng, S = matrix(0.05, "sorted32")
    D = normal(rng, 5, S.shape[0])
    D1 = D.copy()
    D1[0, 0] += 1.0
    check(*kern("written"), S, D, 2, expect=np.asarray(D @ S + D1 @ S), rtol=1e-12)
    check(*kern("fresh_stores"), S, D, 3, rtol=1e-9)


def test_shape_errors_keep_the_message(reference, build):
    rng, S = matrix(0.05, "sorted32")
    D = normal(rng, 5, S.shape[0] + 1)
    messages = []
    for opt in (0, 3):
        mod = build("layout", opt)[0]
        with pytest.raises(ValueError) as e:
            mod.dense_sparse(S, D, 2)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert "spmm_dense: dimension mismatch (5, 41) and (40, 30)" in messages[1]
    with pytest.raises(ValueError):
        reference("layout").dense_sparse(S, D, 2)


def test_ascontiguousarray(kern):
    """NumPy's: the array itself when it is C-contiguous (a write through
    the result is a write to it), else a C-contiguous copy."""
    a = np.arange(12.0).reshape(3, 4)
    for x in (a, a.T, a[:, ::2], np.asfortranarray(a)):
        got = check(*kern("contiguous_copy"), x.copy() if x is a else x)
        assert got.flags.c_contiguous
    comp = kern("contiguous_copy")[0]
    c = a.copy()
    comp(c)
    assert c[0, 0] == -1.0  # the same buffer
    f = np.asfortranarray(a)
    comp(f)
    assert f[0, 0] == 0.0  # a copy
