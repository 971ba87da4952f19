"""The Python boundary: strided NumPy arrays in and out without copies, and
lists, dicts and tuples as parameters and results."""

import gc
import math
import sys

import numpy as np
import pytest


def address(a):
    return a.__array_interface__["data"][0]


# ---- strided arrays as arguments (kernels: boundary_strided.pydd)


# 2-D float64 views of every layout NumPy makes, none of them a copy.
LAYOUTS = {
    "transpose": lambda b: b.T,
    "fortran": lambda b: b.T.copy().T,  # a Fortran-ordered array of its own
    "step_slice": lambda b: b[1::2, ::3],
    "negative": lambda b: b[::-1, ::-2],
    "column": lambda b: b[:, 4:5],
    "broadcast": lambda b: np.broadcast_to(b[3], (5, 14)),  # stride 0, read-only
    "empty": lambda b: b[:, 3:3],
}
WRITABLE = ["transpose", "step_slice", "negative", "column", "empty"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_strided_read(build, opt, layout):
    comp, ref = build("boundary_strided", opt)
    A = LAYOUTS[layout](np.random.default_rng(90).normal(size=(9, 14)))
    assert comp.weighted2(A) == pytest.approx(ref.weighted2(A), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("layout", WRITABLE)
def test_strided_write_lands_in_the_base(build, opt, layout):
    comp, ref = build("boundary_strided", opt)
    base = np.random.default_rng(91).normal(size=(9, 14))
    expected = base.copy()
    A = LAYOUTS[layout](base)
    assert comp.update2(A, 0.5) == ref.update2(LAYOUTS[layout](expected), 0.5)
    # Every write went through the view into the caller's memory; nothing
    # outside the view changed.
    np.testing.assert_array_equal(base, expected)


def test_fortran_order_write(build, opt):
    comp, ref = build("boundary_strided", opt)
    F = np.asfortranarray(np.random.default_rng(93).normal(size=(5, 7)))
    expected = F.copy()
    assert comp.update2(F, 2.0) == ref.update2(expected, 2.0)
    np.testing.assert_array_equal(F, expected)
    assert F.flags.f_contiguous


def test_negative_and_step_strides_1d(build, opt):
    comp, ref = build("boundary_strided", opt)
    x = np.arange(-20, 30, dtype=np.int64)
    for v in (x[::-1], x[::3], x[40:2:-7], x[5:5], x[::-1][::2]):
        assert comp.weighted1(v) == ref.weighted1(v)


def test_bool_strides(build, opt):
    comp, ref = build("boundary_strided", opt)
    b = np.random.default_rng(92).random(40) < 0.5
    for v in (b[::-1], b[1::3], np.broadcast_to(np.bool_(True), (7,))):
        assert comp.flags(v) == ref.flags(v)


def test_3d_permuted_int32(build, opt):
    comp, ref = build("boundary_strided", opt)
    A, expected = np.zeros((4, 5, 6), np.int32), np.zeros((4, 5, 6), np.int32)
    view = lambda a: a.transpose(2, 0, 1)[::-1, :, 1::2]
    assert comp.index3(view(A)) == ref.index3(view(expected)) == 3
    np.testing.assert_array_equal(A, expected)


def test_strided_input_new_result(build, opt):
    comp, ref = build("boundary_strided", opt)
    A = np.arange(60, dtype=np.float32).reshape(6, 10)[::-2, 1::3]
    got = comp.copy_scaled(A, np.float32(1.5))
    np.testing.assert_array_equal(got, ref.copy_scaled(A, np.float32(1.5)))
    assert got.flags.c_contiguous and got.flags.owndata is False and not np.shares_memory(got, A)


def test_read_only_views_for_written_parameter_are_refused(build, opt):
    comp, _ = build("boundary_strided", opt)
    A = np.broadcast_to(np.zeros(4), (3, 4))
    with pytest.raises(TypeError, match="'A'"):
        comp.update2(A, 1.0)


def test_strides_not_multiple_of_itemsize(build, opt):
    comp, _ = build("boundary_strided", opt)
    odd = np.ndarray((3, 4), np.float64, buffer=np.zeros(200, np.uint8), strides=(36, 12))
    with pytest.raises(TypeError, match="parameter 'A'"):
        comp.weighted2(odd)
    packed = np.zeros(6, dtype=[("a", np.int64), ("b", np.int32)])["a"]  # stride 12, itemsize 8
    with pytest.raises(TypeError, match="parameter 'x'"):
        comp.weighted1(packed)


# ---- views as results (kernels: boundary_views.pydd; needs transpose and slices)


def test_returned_transpose_of_argument_is_a_view(build, opt):
    comp, ref = build("boundary_views", opt)
    A = np.arange(12.0).reshape(3, 4)
    T = comp.transposed(A)
    np.testing.assert_array_equal(T, ref.transposed(A))
    assert T.strides == A.T.strides and address(T) == address(A)
    assert np.shares_memory(T, A) and T.base is A.base  # NumPy collapses chains of views to the owner
    T[1, 2] = -1.0
    assert A[2, 1] == -1.0
    # A view of a view: the argument object is the base, so it stays alive.
    V = comp.transposed(A[::2, ::-1])
    np.testing.assert_array_equal(V, A[::2, ::-1].T)
    del A
    gc.collect()
    assert V[0, 0] == 3.0


def test_returned_view_of_read_only_argument_stays_read_only(build, opt):
    comp, _ = build("boundary_views", opt)
    A = np.arange(12.0).reshape(3, 4)
    A.flags.writeable = False
    assert not comp.transposed(A).flags.writeable


def test_returned_slices_of_arguments(build, opt):
    comp, ref = build("boundary_views", opt)
    A = np.arange(35.0).reshape(7, 5)
    R = comp.every_other_row(A)
    np.testing.assert_array_equal(R, ref.every_other_row(A))
    assert R.strides == (80, 8) and np.shares_memory(R, A)
    x = np.arange(10, dtype=np.int64)
    t = comp.reversed_tail(x, 4)
    np.testing.assert_array_equal(t, ref.reversed_tail(x, 4))
    assert t.strides == (-8,) and np.shares_memory(t, x)
    np.testing.assert_array_equal(comp.reversed_tail(x, 10), np.empty(0, np.int64))


def test_returned_view_of_new_array_keeps_it_alive(build, opt):
    comp, ref = build("boundary_views", opt)
    T = comp.new_transposed(3, 5)
    np.testing.assert_array_equal(T, ref.new_transposed(3, 5))
    assert T.shape == (5, 3) and T.strides == (8, 40) and not T.flags.c_contiguous
    assert T.flags.writeable
    c = comp.new_column(6)
    np.testing.assert_array_equal(c, ref.new_column(6))
    assert c.strides == (12,)
    base = c.base
    del T
    gc.collect()
    assert c.sum() == sum(3 * i + 1 for i in range(6))
    assert sys.getrefcount(base) >= 2


# ---- lists, dicts and tuples (kernels: boundary_containers.pydd)


def test_list_parameters(build, opt):
    comp, ref = build("boundary_containers", opt)
    xs = [0.5, -2.0, 3.25, 1e10]
    assert comp.list_sum(xs) == ref.list_sum(xs)
    assert comp.list_sum([]) == 0.0
    assert comp.list_sum([1, 2, np.float32(0.5), np.int64(3), True]) == 7.5  # as for scalar parameters
    ints = list(range(-5, 40))
    assert comp.list_weighted(ints) == ref.list_weighted(ints)
    assert comp.list_weighted([np.int32(4), np.int64(5)]) == 14
    assert comp.list_count_true([True, False, np.bool_(True), 1, 0]) == 3
    kept = list(xs)
    comp.list_sum(xs)
    assert xs == kept


@pytest.mark.parametrize("fn, arg, words", [
    ("list_sum", (1.0, 2.0), ["'xs'", "List(float64)", "tuple"]),
    ("list_sum", np.zeros(3), ["'xs'", "List(float64)", "numpy.ndarray"]),
    ("list_sum", [1.0, "2"], ["'xs' element 1", "float64", "str"]),
    ("list_weighted", [1, 2.5], ["'xs' element 1", "int32", "float"]),
    ("list_count_true", [True, None], ["'xs' element 1", "bool", "NoneType"]),
    ("dict_total", [(1, 2.0)], ["'d'", "Dict(int64, float64)", "list"]),
    ("dict_total", {1: 2.0, "a": 3.0}, ["'d' key 'a'", "int64", "str"]),
    ("dict_total", {1: 2.0, 7: "x"}, ["'d' value for key 7", "float64", "str"]),
    ("array_sizes", [np.zeros((2, 2)), np.zeros(3)], ["'arrays' element 1", "float64 with 2 dimensions"]),
])
def test_container_argument_errors(build, opt, fn, arg, words):
    comp, _ = build("boundary_containers", opt)
    with pytest.raises(TypeError) as info:
        getattr(comp, fn)(arg)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_list_element_out_of_range(build, opt):
    comp, _ = build("boundary_containers", opt)
    with pytest.raises(OverflowError, match=r"'xs' element 2 = 2147483648 does not fit in int32"):
        comp.list_weighted([1, 2, 2**31])


def test_list_results(build, opt):
    comp, ref = build("boundary_containers", opt)
    got = comp.squares(7)
    assert type(got) is list and got == ref.squares(7)
    assert all(type(v) is int for v in got)
    assert comp.squares(0) == []
    xs = [1.5, -2.0, 0.1]
    assert comp.scaled(xs, 3.0) == ref.scaled(xs, 3.0)
    big = comp.squares(100000)
    assert len(big) == 100000 and big[-1] == 99999**2


def test_list_of_arrays(build, opt):
    comp, ref = build("boundary_containers", opt)
    arrays = [np.zeros((2, 3)), np.ones((4, 1)).T, np.empty((0, 5))]
    assert comp.array_sizes(arrays) == ref.array_sizes(arrays) == [2003, 1004, 5]
    # The arrays themselves are shared, as a Python list shares them.
    a, b = np.arange(4.0), np.arange(6.0)[::-2]
    a_ref, b_ref = a.copy(), b.copy()
    assert comp.scale_all([a, b], 2.0) == ref.scale_all([a_ref, b_ref], 2.0) == 7
    np.testing.assert_array_equal(a, a_ref)
    np.testing.assert_array_equal(b, b_ref)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="'arrays' element 0"):
        comp.scale_all([ro], 2.0)


def test_list_of_new_arrays_result(build, opt):
    comp, ref = build("boundary_containers", opt)
    got = comp.rows(4, 3)
    expected = ref.rows(4, 3)
    assert type(got) is list and len(got) == 4
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
        assert g.dtype == np.float64 and g.flags.writeable
    del expected
    gc.collect()
    assert got[3][2] == pytest.approx(3.2)


def test_dict_parameters_and_results(build, opt):
    comp, ref = build("boundary_containers", opt)
    xs = [3, 1, 3, 2, 1, 3, -7]
    got = comp.histogram(xs)
    assert type(got) is dict and got == ref.histogram(xs)
    assert list(got) == [3, 1, 2, -7]  # insertion order
    d = {5: 0.5, -2: 4.0, 10**12: 1e-3}
    assert comp.dict_total(d) == ref.dict_total(d)
    assert comp.dict_total({}) == 0.0
    inv = comp.invert({1: 10, 2: 20, 3: 10})
    assert inv == ref.invert({1: 10, 2: 20, 3: 10}) and list(inv) == [10, 20]
    assert comp.lookup({1: 0.25, 2: 0.5}, 2) == 0.5


def test_key_error(build, opt):
    comp, ref = build("boundary_containers", opt)
    with pytest.raises(KeyError) as got:
        comp.lookup({1: 0.25}, 7)
    with pytest.raises(KeyError) as expected:
        ref.lookup({1: 0.25}, 7)
    assert got.value.args == expected.value.args == (7,)


def test_tuple_results(build, opt):
    comp, ref = build("boundary_containers", opt)
    xs = [2.0, -1.5, 8.25, 0.0]
    got = comp.min_max(xs)
    assert type(got) is tuple and got == ref.min_max(xs) == (-1.5, 8.25)
    A = np.arange(12.0).reshape(3, 4)[:, ::-1]
    n, sums, firsts, last = comp.stats(A)
    rn, rsums, rfirsts, rlast = ref.stats(A)
    assert n == rn == 3 and type(n) is int
    np.testing.assert_array_equal(sums, rsums)
    assert firsts == rfirsts and last == rlast and list(last) == [0, 1, 2]


def test_errors_inside_container_kernels(build, opt):
    comp, _ = build("boundary_containers", opt)
    with pytest.raises(IndexError, match="pop from empty list"):
        comp.pop_empty([])
    assert comp.pop_empty([4, 5]) == 5
    with pytest.raises(IndexError, match="list index out of range"):
        comp.min_max([])


def test_no_leaks_across_many_calls(build, opt):
    """Containers of arrays in and out: the reference counts come back."""
    comp, _ = build("boundary_containers", opt)
    a = np.arange(5.0)
    before = sys.getrefcount(a)
    for _ in range(200):
        comp.scale_all([a, a], 1.0)
        comp.rows(3, 2)
        comp.stats(np.ones((2, 2)))
        with pytest.raises(TypeError):
            comp.array_sizes([np.zeros((1, 1)), "x"])
    gc.collect()
    assert sys.getrefcount(a) == before
    assert not math.isnan(comp.list_sum([1.0]))
