"""Array kernels: k-means, pairwise distances, 3-D arrays, in-place updates,
for-each, range forms, break/continue, arrays returned to the caller."""

import gc

import numpy as np
import pytest


def assert_same_array(got, expected):
    assert isinstance(got, np.ndarray)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.flags.c_contiguous


def test_kmeans_center_update(build, opt):
    comp, ref = build("kmeans", opt)
    rng = np.random.default_rng(30)
    X = rng.normal(size=(300, 5))
    k = 7
    labels = rng.integers(0, k - 1, 300)  # center k-1 stays empty
    C = comp.center_update(X, labels, k)
    expected = ref.center_update(X, labels, k)
    assert_same_array(C, expected)
    np.testing.assert_allclose(C, expected, rtol=1e-12, atol=1e-15)
    assert not C[k - 1].any()


def test_kmeans_iterations(build, opt):
    comp, ref = build("kmeans", opt)
    rng = np.random.default_rng(31)
    X = np.concatenate([rng.normal(c, 0.3, size=(50, 3)) for c in (-2.0, 0.0, 2.0)])
    labels1 = rng.integers(0, 3, 150)
    labels2 = labels1.copy()
    for _ in range(4):
        C1, C2 = comp.center_update(X, labels1, 3), ref.center_update(X, labels2, 3)
        np.testing.assert_allclose(C1, C2, rtol=1e-12)
        assert comp.assign_labels(X, C1, labels1) == ref.assign_labels(X, C2, labels2)
        np.testing.assert_array_equal(labels1, labels2)


def test_pairwise_sqdist(build, opt):
    comp, ref = build("pairwise", opt)
    rng = np.random.default_rng(32)
    X, Y = rng.normal(size=(40, 6)), rng.normal(size=(25, 6))
    D = comp.pairwise_sqdist(X, Y)
    expected = ref.pairwise_sqdist(X, Y)
    assert_same_array(D, expected)
    assert D.shape == (40, 25)
    np.testing.assert_allclose(D, expected, rtol=1e-12)
    S = comp.self_sqdist(X)
    np.testing.assert_allclose(S, ref.self_sqdist(X), rtol=1e-12, atol=1e-15)
    assert not np.shares_memory(S, X)
    E = comp.pairwise_sqdist(np.empty((0, 6)), Y)
    assert E.shape == (0, 25)


def test_3d_float64(build, opt):
    comp, ref = build("sum3d", opt)
    A = np.random.default_rng(33).normal(size=(3, 4, 5))
    np.testing.assert_allclose(comp.sum3(A), ref.sum3(A), rtol=1e-12)
    np.testing.assert_allclose(comp.weighted_sum3(A), ref.weighted_sum3(A), rtol=1e-12)
    out = comp.sum_last_axis(A)
    expected = ref.sum_last_axis(A)
    assert_same_array(out, expected)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_3d_int32(build, opt):
    comp, ref = build("sum3d", opt)
    A = np.random.default_rng(34).integers(-1000, 1000, size=(4, 6, 5)).astype(np.int32)
    assert comp.sum3_i32(A) == ref.sum3_i32(A)
    assert comp.rank_and_size(A) == ref.rank_and_size(A) == 3040604
    with pytest.raises(TypeError):
        comp.sum3(A)  # int32 where float64 is declared


def test_inplace_update_visible_to_caller(build, opt):
    comp, ref = build("inplace", opt)
    rng = np.random.default_rng(35)
    big = rng.normal(size=(5, 12))
    before = big.copy()
    y = big[2]  # a C-contiguous view: writes must land in `big`
    address = y.__array_interface__["data"][0]
    x = rng.normal(size=12)
    expected = before[2].copy()
    assert comp.axpy(y, 0.5, x) == ref.axpy(expected, 0.5, x) == 12
    np.testing.assert_allclose(big[2], expected, rtol=1e-15)
    assert y.__array_interface__["data"][0] == address
    assert np.shares_memory(y, big)
    np.testing.assert_array_equal(np.delete(big, 2, axis=0), np.delete(before, 2, axis=0))


def test_inplace_2d_and_3d(build, opt):
    comp, ref = build("inplace", opt)
    rng = np.random.default_rng(36)
    big = rng.normal(size=(8, 6))
    before = big.copy()
    A, expected = big[2:6], big[2:6].copy()
    assert comp.clip2d(A, -0.5, 0.5) == ref.clip2d(expected, -0.5, 0.5) > 0
    np.testing.assert_array_equal(big[2:6], expected)
    np.testing.assert_array_equal(big[:2], before[:2])
    np.testing.assert_array_equal(big[6:], before[6:])
    B = rng.integers(-100, 100, size=(3, 7)).astype(np.int32)
    B_ref = B.copy()
    assert comp.increment_i32(B, 5) == ref.increment_i32(B_ref, 5) == 21
    np.testing.assert_array_equal(B, B_ref)
    C = np.zeros((3, 4, 5), np.int64)
    C_ref = C.copy()
    assert comp.fill_index3(C) == ref.fill_index3(C_ref) == 3
    np.testing.assert_array_equal(C, C_ref)
    assert C[2, 3, 4] == 20304


def test_inplace_dependent_updates(build, opt):
    comp, ref = build("inplace", opt)
    rng = np.random.default_rng(37)
    x = rng.integers(-50, 50, 100)
    x_ref = x.copy()
    assert comp.prefix_sum(x) == ref.prefix_sum(x_ref)
    np.testing.assert_array_equal(x, x_ref)
    for n in (0, 1, 7, 8):
        v = rng.normal(size=n)
        v_ref = v.copy()
        assert comp.reverse(v) == ref.reverse(v_ref) == n
        np.testing.assert_array_equal(v, v_ref)


def test_foreach(build, opt):
    comp, ref = build("loops", opt)
    rng = np.random.default_rng(38)
    x = rng.normal(size=501)
    np.testing.assert_allclose(comp.foreach_sum(x), ref.foreach_sum(x), rtol=1e-12)
    assert comp.foreach_sum(np.empty(0)) == 0.0
    # Horner's rule depends on the visiting order.
    np.testing.assert_allclose(comp.foreach_horner(x, 0.9), ref.foreach_horner(x, 0.9), rtol=1e-12)
    k = rng.integers(-10, 10, 300)
    assert comp.foreach_count_neg(k) == ref.foreach_count_neg(k)
    k32 = rng.integers(-10**6, 10**6, 300).astype(np.int32)
    got = comp.foreach_max_i32(k32)
    assert type(got) is int
    assert got == ref.foreach_max_i32(k32) == k32.max()


RANGES = [(0, 10, 1), (10, 0, -1), (10, -3, -3), (-5, 5, 2), (5, 5, 1), (5, -5, -1),
          (3, 20, 7), (20, 3, -7), (0, 0, -1), (-1, -10, -4), (0, 10, 100), (9, 10, -1),
          (2**62, 2**62 + 10, 3), (-(2**62), -(2**62) - 10, -4)]


@pytest.mark.parametrize("start, stop, step", RANGES)
def test_range_forms(build, opt, start, stop, step):
    comp, ref = build("loops", opt)
    if abs(start) < 2**40:  # the weighted sum would overflow int64 otherwise
        assert comp.range3(start, stop, step) == ref.range3(start, stop, step)
    count = comp.range3_count(start, stop, step)
    assert count == ref.range3_count(start, stop, step) == len(range(start, stop, step))
    out = np.full(40, -1, np.int64)
    assert comp.range_fill(out, start, stop, step) == count
    np.testing.assert_array_equal(out[:count], np.array(range(start, stop, step), np.int64))
    assert (out[count:] == -1).all()


def test_range_one_and_two_args(build, opt):
    comp, ref = build("loops", opt)
    for n in [-3, 0, 1, 10, 1000]:
        assert comp.range1(n) == ref.range1(n), n
    for a, b in [(0, 5), (5, 0), (-4, 4), (3, 4)]:
        assert comp.range2(a, b) == ref.range2(a, b), (a, b)
    assert comp.range_const_neg() == ref.range_const_neg()


def test_range_evaluated_once(build, opt):
    comp, ref = build("loops", opt)
    for n in [0, 1, 5, 12]:
        assert comp.range_reassign(n) == ref.range_reassign(n), n
        c1, c2 = np.zeros(1, np.int64), np.zeros(1, np.int64)
        assert comp.range_bound_once(c1, n) == ref.range_bound_once(c2, n)
        assert c1[0] == c2[0] == 1


def test_break_continue(build, opt):
    comp, ref = build("loops", opt)
    rng = np.random.default_rng(39)
    x = rng.normal(size=200)
    for t in [-10.0, 0.0, 1.5, 2.5, 10.0]:
        assert comp.first_above(x, t) == ref.first_above(x, t), t
    k = rng.integers(-100, 100, 300)
    for m in [1, 2, 3, 7]:
        assert comp.sum_skip_multiples(k, m) == ref.sum_skip_multiples(k, m), m
    for n in [0, 1, 5, 20]:
        assert comp.nested_break(n) == ref.nested_break(n), n
        assert comp.while_break_continue(n) == ref.while_break_continue(n), n
        assert comp.while_nested(n) == ref.while_nested(n), n


def test_returned_arrays(build, opt):
    comp, ref = build("alloc", opt)
    cases = [("make_grid", (4, 3)), ("make_grid", (0, 5)), ("make_ones_i32", (6,)),
             ("make_ones_f32", (5,)), ("make_range_i64", (9,)), ("make_zeros_3d", (2, 3, 4)),
             ("make_counts", (10, 3))]
    for fn, args in cases:
        got = getattr(comp, fn)(*args)
        expected = getattr(ref, fn)(*args)
        assert_same_array(got, expected)
        np.testing.assert_array_equal(got, expected)
        assert got.flags.writeable, fn


def test_returned_array_ownership(build, opt):
    comp, ref = build("alloc", opt)
    a = comp.make_grid(50, 40)
    b = comp.make_grid(50, 40)
    assert not np.shares_memory(a, b)
    a[0, 0] = -1.0
    a[49, 39] += 1000.0
    assert b[0, 0] == 0.5  # independent buffers
    expected = ref.make_grid(50, 40)
    del b
    gc.collect()
    junk = [comp.make_grid(50, 40) for _ in range(20)]  # reuse of freed memory must not touch `a`
    del junk
    gc.collect()
    expected[0, 0] = -1.0
    expected[49, 39] += 1000.0
    np.testing.assert_array_equal(a, expected)
    view = a[1:3]
    del a
    gc.collect()
    np.testing.assert_array_equal(view, expected[1:3])  # a view keeps the buffer alive


def test_returned_array_is_new(build, opt):
    comp, ref = build("alloc", opt)
    x = np.random.default_rng(40).normal(size=64)
    y = comp.copy_scaled(x, 3.0)
    np.testing.assert_array_equal(y, ref.copy_scaled(x, 3.0))
    assert not np.shares_memory(x, y)
    y[:] = 0.0
    assert x.any()


def test_shape_len_ndim(build, opt):
    comp, ref = build("alloc", opt)
    for shp in [(1, 1), (3, 7), (0, 4), (12, 0)]:
        A = np.zeros(shp)
        assert comp.dims(A) == ref.dims(A), shp
