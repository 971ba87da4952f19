"""Tuples (kernels/tuples.pydd) compiled vs Python: multiple return values
of scalars and arrays, tuple assignment (swaps, unpacking a call's result,
slice targets), shapes as tuples, and the library's tuple results (lu,
ludcmp, key-value heappop)."""

import numpy as np
import pytest
import scipy.linalg

from same import same

RNG = np.random.default_rng(99)


def test_multiple_return_values(build, opt):
    comp, ref = build("tuples", opt)
    v = RNG.normal(size=17)
    got, _ = same(comp.argmax_value, ref.argmax_value, v)
    assert got == (int(np.argmax(v)), float(v.max()))
    same(comp.argmax_value, ref.argmax_value, np.zeros(0))  # ValueError: empty argmax
    got, _ = same(comp.min_max, ref.min_max, v)
    assert got == (v.min(), v.max())
    same(comp.range_of, ref.range_of, v)
    same(comp.nested_unpack, ref.nested_unpack, v)
    got, _ = same(comp.divmod_all, ref.divmod_all, RNG.integers(-50, 50, size=12), 7)
    q, r = got
    assert q.dtype == r.dtype == np.int64
    same(comp.divmod_all, ref.divmod_all, RNG.integers(-50, 50, size=12), -3)


def test_shapes_as_tuples(build, opt):
    comp, ref = build("tuples", opt)
    A = RNG.normal(size=(4, 6))
    got, _ = same(comp.stats, ref.stats, A, rtol=1e-12)
    assert got[:2] == (4, 6)
    same(comp.stats, ref.stats, np.zeros((0, 3)))  # mean of nothing: nan
    got, _ = same(comp.shape_tuple, ref.shape_tuple, np.zeros((2, 0, 5), np.int32))
    assert got == (2, 0, 5)
    same(comp.alloc_like_shape, ref.alloc_like_shape, A)


def test_tuple_assignment(build, opt):
    comp, ref = build("tuples", opt)
    for n in (0, 1, 2, 10, 90):
        same(comp.fib_pair, ref.fib_pair, n)
    assert comp.fib_pair(10) == (55, 89)
    for a, b in ((48, 18), (17, 5), (0, 9), (9, 0), (-12, 8)):
        same(comp.gcd_steps, ref.gcd_steps, a, b)
    A = RNG.normal(size=(5, 3))
    for i, j in ((0, 4), (2, 2), (-1, 1)):
        got, _ = same(comp.swap_rows, ref.swap_rows, A, i, j)
        np.testing.assert_array_equal(got[i], A[j])
    for x in (RNG.normal(size=50), np.array([2.5]), np.zeros(0)):
        got, _ = same(comp.welford, ref.welford, x, rtol=1e-12)
        if len(x) > 1:
            assert got[1] == pytest.approx(np.var(x, ddof=1), rel=1e-12)


def test_lu(build, opt):
    comp, ref = build("tuples", opt)
    for shape in ((4, 4), (3, 5), (5, 3), (1, 1)):
        A = RNG.normal(size=shape)
        got, _ = same(comp.lu_factors, ref.lu_factors, A, rtol=1e-10)
        P, L, U = got
        np.testing.assert_allclose(P @ L @ U, A, rtol=1e-10, atol=1e-12)
    A = RNG.normal(size=(6, 6))
    b = RNG.normal(size=6)
    got, _ = same(comp.solve_lu, ref.solve_lu, A, b, rtol=1e-9)
    np.testing.assert_allclose(A @ got, b, rtol=1e-9, atol=1e-9)
    got, _ = same(comp.lu_factor_pivots, ref.lu_factor_pivots, A, rtol=1e-10)
    assert got[1].dtype == np.int32
    np.testing.assert_array_equal(got[1], scipy.linalg.lu_factor(A)[1])
    for M in (A, A.T.copy(), np.diag([2.0, -3.0, 0.5])):
        got, _ = same(comp.log_det, ref.log_det, M, rtol=1e-10)
        sign, logdet = np.linalg.slogdet(M)
        assert got[1] == sign and got[0] == pytest.approx(logdet, rel=1e-10)


def test_key_value_heappop_unpacks(build, opt):
    comp, ref = build("tuples", opt)
    x = np.array([5.0, 1.0, 9.0, 3.0, 1.0, 7.0])
    for q in (0.0, 3.2, 8.0, 1.0):
        same(comp.nearest_two, ref.nearest_two, x, q)
    assert comp.nearest_two(x, 1.0) == (1, 4)  # equal distances: the smaller index first
    same(comp.nearest_two, ref.nearest_two, np.array([1.0]), 0.0)  # IndexError: second pop
