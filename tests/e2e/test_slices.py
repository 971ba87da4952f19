"""Slices as views (kernels/slices.pydd): reads of rows, columns, windows and
strided/negative-step slices, assignment into slices (broadcast, overlapping),
writes through views landing in the base array, views returned to Python,
and the errors (step 0, an index out of range, a shape that does not fit)."""

import gc

import numpy as np
import pytest

from same import same

RNG = np.random.default_rng(2024)


def normal(*shape):
    return RNG.normal(size=shape)


def ints(*shape, lo=-50, hi=50):
    return RNG.integers(lo, hi, size=shape)


def test_row_and_column_reads(build, opt):
    comp, ref = build("slices", opt)
    for A in (normal(5, 7), normal(1, 3), normal(6, 1)):
        same(comp.normalize_rows, ref.normalize_rows, A, rtol=1e-12)
        same(comp.column_means, ref.column_means, A, rtol=1e-12)
        same(comp.matvec_rows, ref.matvec_rows, A, normal(A.shape[1]), rtol=1e-12)
    out = comp.normalize_rows(normal(4, 3))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-12)
    same(comp.matvec_rows, ref.matvec_rows, normal(3, 4), normal(5))  # ValueError in innerprod


def test_windows_and_steps(build, opt):
    comp, ref = build("slices", opt)
    x = normal(12)
    for w in (1, 3, 12, 13):
        same(comp.moving_sum, ref.moving_sum, x, w, rtol=1e-12)
    same(comp.diff, ref.diff, ints(9))
    same(comp.diff, ref.diff, ints(1))
    same(comp.diff, ref.diff, ints(0))
    for start, step in ((0, 2), (1, 3), (-4, 1), (11, -1), (-1, -3), (20, 1), (-20, 2), (5, -20)):
        same(comp.every_other, ref.every_other, x, start, step)
    xi = ints(15).astype(np.int32)
    for lo, hi, step in ((2, 9, 2), (9, 2, -2), (-3, 100, 1), (-100, 5, 4), (5, 5, 1), (8, 3, 1), (14, -16, -5)):
        got, _ = same(comp.window, ref.window, xi, lo, hi, step)
        assert got.dtype == np.int32
    same(comp.reverse, ref.reverse, x)
    for k in (1, 5, 12):
        same(comp.tail_sum, ref.tail_sum, x, k, rtol=1e-12)
    same(comp.last_row_first_col, ref.last_row_first_col, ints(4, 6))


def test_two_d_blocks(build, opt):
    comp, ref = build("slices", opt)
    A = normal(6, 8)
    for r0, r1, c0, c1 in ((1, 4, 2, 7), (0, 6, 0, 8), (-3, -1, -5, -2), (4, 2, 0, 3), (0, 100, 3, 100)):
        same(comp.block, ref.block, A, r0, r1, c0, c1)
    same(comp.flip_block, ref.flip_block, A)
    same(comp.flip_block, ref.flip_block, normal(0, 3))
    T = normal(3, 4, 5)
    for k in (0, 3, -1):
        same(comp.three_d, ref.three_d, T, k)
    same(comp.plane_update, ref.plane_update, T)


def test_assignment_into_slices(build, opt):
    comp, ref = build("slices", opt)
    A = normal(5, 4)
    for lo, hi in ((1, 3), (0, 5), (3, 1), (-2, 100)):
        same(comp.zero_band, ref.zero_band, A, lo, hi)
    for i in (0, 4, -1):
        same(comp.set_row, ref.set_row, A, i, normal(4))
        same(comp.set_row, ref.set_row, A, i, normal(1))  # broadcast
    same(comp.set_row, ref.set_row, A, 1, normal(3))  # ValueError: (3,) into (4,)
    for j in (0, 3, -2):
        same(comp.scale_column, ref.scale_column, A, j, 2.5)
    for n, m in ((5, 5), (5, 4), (0, 0), (1, 0)):
        same(comp.interleave, ref.interleave, normal(n), normal(m))
    same(comp.interleave, ref.interleave, normal(3), normal(5))  # ValueError
    same(comp.clip_rows, ref.clip_rows, normal(4, 6), -0.5, 0.5)


def test_overlapping_assignment_copies_the_source_first(build, opt):
    comp, ref = build("slices", opt)
    x = np.arange(10, dtype=np.int64)
    got, _ = same(comp.shift_right, ref.shift_right, x)
    assert list(got) == [0, 0, 1, 2, 3, 4, 5, 6, 7, 8]  # not all zeros
    got, _ = same(comp.shift_left, ref.shift_left, x)
    assert list(got) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 9]
    got, _ = same(comp.cumsum_inplace, ref.cumsum_inplace, x)
    assert list(got) == list(np.cumsum(x))
    same(comp.jacobi, ref.jacobi, normal(20), 7, rtol=1e-12)
    same(comp.jacobi_2d, ref.jacobi_2d, normal(7, 9), 5, rtol=1e-12)


def test_views_alias_their_base(build, opt):
    comp, ref = build("slices", opt)
    A = normal(4, 5)
    for i in (0, 3, -1):
        got, args = same(comp.write_through_row_view, ref.write_through_row_view, A, i)
        assert np.shares_memory(got, args[0])  # returned A itself
    Ai = ints(4, 3).astype(np.int32)
    got, args = same(comp.write_through_column_view, ref.write_through_column_view, Ai, 1)
    assert got == 100 * 1000 - 100 and args[0][0, 1] == 100
    got, args = same(comp.write_through_transpose, ref.write_through_transpose, A)
    assert args[0][1, 0] == 7.0
    same(comp.view_of_view, ref.view_of_view, normal(9), rtol=1e-12)
    same(comp.view_sees_later_writes, ref.view_sees_later_writes, normal(6))
    assert comp.view_sees_later_writes(normal(6)) == 100.0


def test_views_returned_to_python(build, opt):
    comp, ref = build("slices", opt)
    A = normal(5, 6)
    v = comp.returned_view(A)
    np.testing.assert_array_equal(v, ref.returned_view(A))
    assert np.shares_memory(v, A)  # a view of the caller's array, not a copy
    A[2, 0] = 123.0
    assert v[1, 0] == 123.0
    r = comp.reverse(A[0])
    assert np.shares_memory(r, A) and r[-1] == A[0, 0]
    f = comp.fresh_view(4)
    np.testing.assert_array_equal(f, ref.fresh_view(4))
    gc.collect()
    np.testing.assert_array_equal(f, [15.0, 14.0, 13.0, 12.0])  # its base outlives the kernel
    for lo, hi in ((2, 5), (-3, 100), (5, 2), (-100, -90)):
        same(comp.slice_len, ref.slice_len, normal(8), lo, hi)


def test_strided_arguments(build, opt):
    comp, ref = build("slices", opt)
    base = normal(8, 10)
    for view in (base[::2, 1::3], base.T, base[::-1, ::-2]):
        np.testing.assert_allclose(comp.column_means(view), ref.column_means(view), rtol=1e-12)
        np.testing.assert_array_equal(comp.flip_block(view), ref.flip_block(view))
    b1, b2 = base.copy(), base.copy()
    comp.zero_band(b1[:, ::3], 2, 5)
    ref.zero_band(b2[:, ::3], 2, 5)
    np.testing.assert_array_equal(b1, b2)  # writes land in the base, only there


def test_slice_errors(build, opt):
    comp, ref = build("slices", opt)
    with pytest.raises(ValueError, match="step"):
        comp.step_zero(normal(5), 0)
    same(comp.step_zero, ref.step_zero, normal(5), 0)
    same(comp.step_zero, ref.step_zero, normal(5), -2)
    A = normal(3, 4)
    for i in (3, -4, 100):
        same(comp.row_out_of_range, ref.row_out_of_range, A, i)
    with pytest.raises(IndexError):
        comp.row_out_of_range(A, 3)
    same(comp.row_out_of_range, ref.row_out_of_range, A, -3, rtol=1e-12)
    same(comp.bad_assign, ref.bad_assign, A, normal(5))
    with pytest.raises(ValueError, match=r"\(5,\)"):
        comp.bad_assign(A, normal(5))
