"""Integer-array gathers and lower-rank boolean masks on arrays of rank >= 2
(kernels/gathers.pydd) compiled vs the same file run as NumPy: A[rows],
A[rows, :], A[:, cols] (np.take along an axis), A[m] for a mask of A's
leading axes, A[:, m]; stores A[rows] = v, A[rows] += v, A[m] = v; and
NumPy's IndexError and ValueError messages."""

import numpy as np

from conftest import run_pyddc
from same import same

RNG = np.random.default_rng(1313)


def same_error(comp_fn, ref_fn, *args):
    """Both raise, the same kind with the same message."""
    got, _ = same(comp_fn, ref_fn, *args)
    try:
        ref_fn(*args)
    except Exception as e:  # noqa: BLE001
        assert isinstance(got, type(e)) or isinstance(e, type(got)), (got, e)
        assert str(got) == str(e), f"{got!s} != {e!s}"
        return
    raise AssertionError(f"{ref_fn.__name__} did not raise")


def test_integer_array_gathers(build, opt):
    comp, ref = build("gathers", opt)
    A = RNG.normal(size=(5, 4))
    rows = np.array([4, 0, -1, 2, 2, -5])
    got, _ = same(comp.rows_of, ref.rows_of, A, rows)
    assert got.shape == (6, 4)
    same(comp.rows_slice, ref.rows_slice, A, rows)
    same(comp.rows_of, ref.rows_of, A, np.array([], dtype=np.int64))
    got, _ = same(comp.cols_i32, ref.cols_i32, A, np.array([3, -4, 1, 1], dtype=np.int32))
    assert got.shape == (5, 4)
    same(comp.cols_i32, ref.cols_i32, A, np.array([], dtype=np.int32))
    same(comp.cols_u8, ref.cols_u8, np.arange(20).reshape(4, 5), np.array([4, 0, 0, 3], dtype=np.uint8))
    got, _ = same(comp.rows_by_matrix, ref.rows_by_matrix, A, np.array([[0, 1, 2], [-1, -1, 3]]))
    assert got.shape == (2, 3, 4)
    same(comp.complex_rows, ref.complex_rows, A + 1j * A[::-1], np.array([1, -1]))


def test_gathers_on_3d_arrays(build, opt):
    comp, ref = build("gathers", opt)
    C = RNG.normal(size=(3, 4, 5))
    got, _ = same(comp.cube_axis0, ref.cube_axis0, C, np.array([2, -3, 0, 2], dtype=np.int8))
    assert got.shape == (4, 4, 5)
    got, _ = same(comp.cube_axis1, ref.cube_axis1, C, np.array([3, 1, -4], dtype=np.int16))
    assert got.shape == (3, 3, 5)
    got, _ = same(comp.cube_axis2, ref.cube_axis2, C, np.array([4, 4, 0], dtype=np.uint32))
    assert got.shape == (3, 4, 3)
    same(comp.cube_axis2, ref.cube_axis2, C, np.array([], dtype=np.uint32))
    I = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    same(comp.cube_axis2_u16_u64, ref.cube_axis2_u16_u64, I, np.array([0, 4], dtype=np.uint16),
         np.array([1, 2], dtype=np.uint64))
    same(comp.cube_axis1, ref.cube_axis1, C[:, ::-1, ::2], np.array([0, 3], dtype=np.int16))


def test_gathers_on_views_and_in_expressions(build, opt):
    comp, ref = build("gathers", opt)
    A = RNG.normal(size=(6, 5))
    rows = np.array([0, -1, 3])
    same(comp.rows_of, ref.rows_of, A[::2, 1:], rows)
    same(comp.rows_of, ref.rows_of, A.T, np.array([4, 0, 2, 2]))
    same(comp.cols_i32, ref.cols_i32, A[::-1, ::2], np.array([2, 0], dtype=np.int32))
    same(comp.cols_of_rows_slice, ref.cols_of_rows_slice, A, np.array([4, 1, -1]))
    same(comp.transposed_rows, ref.transposed_rows, A, np.array([4, 0, 2]))
    same(comp.rows_then_cols, ref.rows_then_cols, A, rows, np.array([1, 1, 4]))
    same(comp.gathered_sum_in_loop, ref.gathered_sum_in_loop, A, rows, rtol=1e-13)
    same(comp.gathered_plus, ref.gathered_plus, A, np.array([4, 4, 0]))
    same(comp.take_calls, ref.take_calls, A, np.array([4, -1, 0]))
    same_error(comp.take_calls, ref.take_calls, A, np.array([5]))


def test_gather_errors_are_numpys(build, opt):
    comp, ref = build("gathers", opt)
    A = RNG.normal(size=(5, 4))
    same_error(comp.rows_of, ref.rows_of, A, np.array([0, 7]))
    same_error(comp.rows_of, ref.rows_of, A, np.array([-6]))
    same_error(comp.cols_i32, ref.cols_i32, A, np.array([1, 4], dtype=np.int32))
    same_error(comp.cube_axis2, ref.cube_axis2, np.zeros((2, 3, 4)), np.array([4], dtype=np.uint32))
    same_error(comp.store_rows_scalar, ref.store_rows_scalar, A, np.array([5]), 1.0)
    same_error(comp.store_cols_array, ref.store_cols_array, A, np.array([0, 1], dtype=np.int32), np.ones((5, 3)))
    same_error(comp.store_rows_row, ref.store_rows_row, A, np.array([0]), np.ones(3))
    same_error(comp.rows_mask, ref.rows_mask, A, np.ones(4, dtype=bool))
    same_error(comp.cols_mask, ref.cols_mask, A, np.ones(5, dtype=bool))
    same_error(comp.cube_mask2, ref.cube_mask2, np.zeros((3, 4, 2)), np.ones((3, 5), dtype=bool))
    same_error(comp.store_mask_scalar, ref.store_mask_scalar, A, np.ones(6, dtype=bool), 1.0)
    same_error(comp.store_mask_row, ref.store_mask_row, A, np.ones(5, dtype=bool), np.ones(3))


def test_stores_through_index_arrays(build, opt):
    comp, ref = build("gathers", opt)
    A = RNG.normal(size=(5, 4))
    rows = np.array([3, -1, 0, 3])
    same(comp.store_rows_scalar, ref.store_rows_scalar, A, rows, 2.5)
    same(comp.store_rows_scalar, ref.store_rows_scalar, A, np.array([], dtype=np.int64), 2.5)
    same(comp.store_rows_row, ref.store_rows_row, A, rows, np.array([1.0, 2.0, 3.0, 4.0]))
    # duplicate columns: the last value wins
    same(comp.store_cols_array, ref.store_cols_array, A, np.array([1, -3, 2], dtype=np.int32),
         RNG.normal(size=(5, 3)))
    same(comp.store_cols_array, ref.store_cols_array, A, np.array([1, 0], dtype=np.int32), RNG.normal(size=(1, 2)))
    same(comp.store_cube_cols, ref.store_cube_cols, np.zeros((2, 3, 2), dtype=np.int64),
         np.array([2, 2, 0], dtype=np.uint8), 7)
    # += with duplicates: each position gets the update once (NumPy buffers)
    _, (after, *_rest) = same(comp.add_rows, ref.add_rows, A, np.array([1, 1, 1, -4]), 1.0)
    assert np.array_equal(after[1], A[1] + 1.0)
    same(comp.add_cols_array, ref.add_cols_array, np.arange(12).reshape(3, 4), np.array([0, 2, 0]),
         np.arange(9).reshape(3, 3))
    same(comp.store_returns, ref.store_returns, A, np.array([0, 0, 4]))
    # strided and transposed targets: the store goes into the caller's array
    B = RNG.normal(size=(8, 6))
    same(comp.store_rows_row, ref.store_rows_row, B[::2, ::-2], np.array([1, 3]), np.array([7.0, 8.0, 9.0]))
    same(comp.store_cols_array, ref.store_cols_array, B.T, np.array([0, 7], dtype=np.int32), RNG.normal(size=(6, 2)))


def test_lower_rank_masks(build, opt):
    comp, ref = build("gathers", opt)
    A = RNG.normal(size=(5, 4))
    m = np.array([True, False, True, True, False])
    got, _ = same(comp.rows_mask, ref.rows_mask, A, m)
    assert got.shape == (3, 4)
    got, _ = same(comp.rows_mask, ref.rows_mask, A, np.zeros(5, dtype=bool))
    assert got.shape == (0, 4)
    got, _ = same(comp.rows_mask_slice, ref.rows_mask_slice, A, np.ones(5, dtype=bool))
    assert got.shape == (5, 4)
    same(comp.rows_mask, ref.rows_mask, A.T, np.array([False, True, False, True]))
    C = RNG.normal(size=(3, 4, 2))
    M = RNG.random((3, 4)) > 0.5
    got, _ = same(comp.cube_mask2, ref.cube_mask2, C, M)
    assert got.shape == (int(M.sum()), 2)
    same(comp.cube_mask2, ref.cube_mask2, C[:, ::-1], M.T.copy().T)
    got, _ = same(comp.cube_mask1, ref.cube_mask1, C, np.array([True, False, True]))
    assert got.shape == (2, 4, 2)
    got, _ = same(comp.cols_mask, ref.cols_mask, A, np.array([False, True, True, False]))
    assert got.shape == (5, 2)
    same(comp.positive_rows, ref.positive_rows, A)


def test_stores_through_lower_rank_masks(build, opt):
    comp, ref = build("gathers", opt)
    A = RNG.normal(size=(5, 4))
    m = np.array([True, False, True, True, False])
    same(comp.store_mask_scalar, ref.store_mask_scalar, A, m, -1.0)
    same(comp.store_mask_scalar, ref.store_mask_scalar, A, np.zeros(5, dtype=bool), -1.0)
    same(comp.store_mask_scalar, ref.store_mask_scalar, A, np.ones(5, dtype=bool), -1.0)
    same(comp.store_mask_row, ref.store_mask_row, A, m, np.array([1.0, 2.0, 3.0, 4.0]))
    same(comp.store_mask_row, ref.store_mask_row, A[:, ::-1], m, np.array([5.0]))
    C = RNG.normal(size=(3, 4, 2))
    M = RNG.random((3, 4)) > 0.5
    same(comp.store_mask_array, ref.store_mask_array, C, M, RNG.normal(size=(int(M.sum()), 2)))
    same(comp.store_mask_array, ref.store_mask_array, C, M, np.array([[9.0, 8.0]]))
    same(comp.add_mask, ref.add_mask, A, m, 0.5)
    same(comp.store_cols_mask, ref.store_cols_mask, A, np.array([True, False, False, True]), 3.0)


def test_stores_through_unnamed_views(build, opt):
    comp, ref = build("gathers", opt)
    A = RNG.normal(size=(3, 4))
    same(comp.store_row_mask, ref.store_row_mask, A, 1, np.array([True, False, False, True]), 0.0)
    same(comp.store_row_mask, ref.store_row_mask, A, -1, np.array([True, True, True, True]), 2.0)
    same(comp.store_row_indices, ref.store_row_indices, A, 2, np.array([3, -4, 3]), 5.0)
    same_error(comp.store_row_indices, ref.store_row_indices, A, 0, np.array([4]), 5.0)
    same(comp.add_row_mask, ref.add_row_mask, A, 0, np.array([False, True, True, False]), 1.5)
    same(comp.add_element_of_row, ref.add_element_of_row, np.arange(6).reshape(2, 3), -1, 2)
    same_error(comp.add_element_of_row, ref.add_element_of_row, np.arange(6).reshape(2, 3), 2, 0)


def test_remaining_index_forms_are_located_errors(tmp_path):
    src = tmp_path / "bad_gather.pydd"
    src.write_text("from pydd import *\n\ndef f(A: Array(float64, 2), r: Array(int64, 1), c: Array(int64, 1)) -> float64:\n"
                   "    return sum(A[r, c])\n")
    r = run_pyddc("--emit=ir", src)
    assert r.returncode == 1
    assert "bad_gather.pydd:4:21: error: indexing with more than one index array or mask" in r.stderr


def test_integer_indices_next_to_index_arrays(build, opt):
    comp, ref = build("gathers", opt)
    A = RNG.normal(size=(4, 5))
    same(comp.row_cols, ref.row_cols, A, -2, np.array([4, 0, 4]))
    same(comp.rows_col, ref.rows_col, A, np.array([3, -4], dtype=np.int32), 1)
    C = RNG.normal(size=(2, 3, 4))
    got, _ = same(comp.cube_mid, ref.cube_mid, C, np.array([2, 0, 2, 1]), -1)
    assert got.shape == (2, 4)
    same_error(comp.cube_mid, ref.cube_mid, C, np.array([0]), 4)
    same_error(comp.row_cols, ref.row_cols, A, 1, np.array([5]))
    same(comp.store_row_cols, ref.store_row_cols, A, 3, np.array([1, 2]), np.array([7.0, 8.0]))
    same_error(comp.store_row_cols, ref.store_row_cols, A, 3, np.array([1, 2]), np.array([7.0, 8.0, 9.0]))


def test_gathers_and_stores_in_loops(build, opt):
    comp, ref = build("gathers", opt)
    A = RNG.normal(size=(4, 5))
    same(comp.loop_gather_store, ref.loop_gather_store, A, np.array([0, 3, 3]), rtol=1e-12)
    same(comp.loop_view_mask_store, ref.loop_view_mask_store, A, np.array([True, False, True, True, False]),
         rtol=1e-12)
    same(comp.loop_mask_add, ref.loop_mask_add, A, np.array([False, True, True, False]), rtol=1e-12)
    same(comp.gather_before_store, ref.gather_before_store, A, np.array([1, 2]),
         np.array([True, False, True, True]), rtol=1e-12)
