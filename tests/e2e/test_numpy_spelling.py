"""`import numpy as np` kernels (kernels/numpy_spelling.pydd) compiled vs the
same file run as Python: np.-prefixed functions resolve to the catalog,
np.float64/np.int32 are dtypes and conversions, np.pi/np.e/np.inf/np.nan
constants, `from numpy import ...` names, `.dtype` of an array."""

import numpy as np
import pytest

from conftest import run_pyddc
from same import same

RNG = np.random.default_rng(13)


def test_numpy_prefixed_calls(build, opt):
    comp, ref = build("numpy_spelling", opt)
    X = RNG.normal(size=(5, 3))
    same(comp.row_norms, ref.row_norms, X, rtol=1e-15)
    same(comp.standardize, ref.standardize, RNG.normal(size=9), rtol=1e-15)
    same(comp.clamp, ref.clamp, RNG.normal(size=7), -0.25)
    same(comp.products, ref.products, X[:3], RNG.normal(size=3), rtol=1e-12)
    same(comp.where_positive, ref.where_positive, RNG.normal(size=6))


def test_numpy_dtypes_and_constants(build, opt):
    comp, ref = build("numpy_spelling", opt)
    got, _ = same(comp.alloc_like, ref.alloc_like, RNG.normal(size=(2, 3)).astype(np.float32), 5)
    assert got.dtype == np.float32
    got, _ = same(comp.typed, ref.typed, 6)
    assert got.dtype == np.int32 and list(got) == [0, 2, 4, 6, 8, 10]
    got, _ = same(comp.constants, ref.constants, 2.0)
    assert got == np.pi * 4 + np.e - np.pi
    assert same(comp.not_a_number, ref.not_a_number)[0] is True


def test_unknown_numpy_names_are_compile_errors(tmp_path):
    src = tmp_path / "bad_np.pydd"
    src.write_text("import numpy as np\nfrom pydd import *\n\ndef f(x: float64) -> float64:\n"
                   "    return np.frobnicate(x) + np.not_a_constant\n")
    r = run_pyddc("--emit=ir", src)
    assert r.returncode == 1
    assert "bad_np.pydd:5:12: error: numpy.frobnicate is not supported in pydd kernels" in r.stderr
    assert "bad_np.pydd:5:31: error: numpy.not_a_constant is not supported in pydd kernels" in r.stderr
    src.write_text("import scipy\n")
    r = run_pyddc("--emit=ir", src)
    assert r.returncode == 1 and "only numpy and pydd can be imported" in r.stderr


def test_newaxis_and_keepdims(build, opt):
    comp, ref = build("numpy_spelling", opt)
    X = RNG.normal(size=(5, 3))
    got, _ = same(comp.newaxis_distances, ref.newaxis_distances, X, rtol=1e-15)
    assert got.shape == (5, 5)
    got, _ = same(comp.newaxis_mixed, ref.newaxis_mixed, X, 2)
    assert got.shape == (5, 2)
    same(comp.newaxis_mixed, ref.newaxis_mixed, X, 7)  # IndexError in both
    got, args = same(comp.none_axes, ref.none_axes, X, RNG.normal(size=3))
    assert got.shape == (5, 5, 3) and args[0][0, 0] != X[0, 0]
    got, _ = same(comp.reductions_keep, ref.reductions_keep, X, rtol=1e-14)
    assert got.shape == (5, 3)


def test_boolean_mask_and_index_array_reads(build, opt):
    comp, ref = build("numpy_spelling", opt)
    x = RNG.normal(size=9)
    A = np.arange(12, dtype=np.int32).reshape(3, 4).T  # a transposed view
    same(comp.mask_and_gather, ref.mask_and_gather, x, np.array([[0, -1], [3, 2]]), A, rtol=1e-15)
    same(comp.mask_and_gather, ref.mask_and_gather, x, np.array([[9, 0]]), A)  # IndexError in both
    same(comp.mask_and_gather, ref.mask_and_gather, x, np.zeros((0, 2), np.int64), A[:0], rtol=1e-15)


def test_linalg_sorting_and_joining(build, opt):
    comp, ref = build("numpy_spelling", opt)
    A = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
    same(comp.linear_system, ref.linear_system, A, RNG.normal(size=4), rtol=1e-12)
    same(comp.linear_system, ref.linear_system, np.ones((3, 3)), np.ones(3))  # singular: LinAlgError in both
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        comp.linear_system(np.ones((3, 3)), np.ones(3))
    x = RNG.normal(size=6)
    x[3] = x[1]  # a tie: argsort keeps the order
    got, _ = same(comp.reorder, ref.reorder, x, RNG.normal(size=(2, 3)), rtol=1e-15)
    assert got[0].shape == (6 + 6 + 4 + 6,)
    same(comp.reorder, ref.reorder, x[:3], RNG.normal(size=(2, 3)))  # vstack of unequal rows: ValueError in both


def test_in_place_sort_method_is_refused(tmp_path):
    src = tmp_path / "sorts.pydd"
    src.write_text("import numpy as np\n\ndef f(x: Array(float64)) -> None:\n    x.sort()\n")
    r = run_pyddc("--emit=ir", src)
    assert r.returncode == 1
    assert "sorts.pydd:4:5: error: x.sort() is NumPy's in-place method, which pydd does not have; write x = sort(x)" in r.stderr


def test_tiling_rounding_and_searching(build, opt):
    comp, ref = build("numpy_spelling", opt)
    k = RNG.integers(-3, 4, size=(3, 4)).astype(np.int32)
    x = RNG.normal(size=5).astype(np.float32)
    got, _ = same(comp.reshuffle, ref.reshuffle, k, x, rtol=1e-6)
    assert got[0].shape == (3, 4) and got[1].dtype == np.float32


def test_boolean_mask_and_index_array_stores(build, opt):
    """x[mask] = v and x[idx] = v as NumPy's setitem: a scalar or one value
    per selected element, augmented forms, the values converted to x's dtype."""
    comp, ref = build("numpy_spelling", opt)
    x = np.array([-1.0, 2.5, np.nan, 0.5, 3.0, -0.0])
    A = np.arange(12, dtype=np.int32).reshape(3, 4)
    got, args = same(comp.mask_stores, ref.mask_stores, x, A, 7.9)
    assert got[1].dtype == np.int32 and args[1][2, 3] == 17  # 7.9 stored as 7 (NumPy's setitem), odd: + 10
    same(comp.mask_stores, ref.mask_stores, x[::-2], A.T[1:], 1.5)  # strided views, written through
    same(comp.mask_stores, ref.mask_stores, x[:0], A[:0], 1.0)
    m = np.array([True, False, True, True])
    for vals in ([1.0, 2.0, 3.0], [4.0], [1.0, 2.0], [1.0, 2.0, 3.0, 4.0]):  # the last two: ValueError in both
        same(comp.mask_store_values, ref.mask_store_values, np.zeros(4), m, np.array(vals))
    same(comp.mask_store_values, ref.mask_store_values, np.zeros(3), m, np.ones(3))  # IndexError in both
    x32 = np.arange(6, dtype=np.float32)
    got, args = same(comp.index_stores, ref.index_stores, x32, np.array([0, -1, 2]), np.array([[7.0, 8.0]]),
                     np.array([[1, 3], [4, 1]], np.int32))
    assert got.dtype == np.float32 and args[0].tolist() == [0.5, 8.0, -0.5, 8.0, 7.0, -0.5]  # last write wins
    same(comp.index_stores, ref.index_stores, x32, np.array([0, 6]), np.zeros((1, 2)), np.zeros((1, 2), np.int32))
    same(comp.index_stores, ref.index_stores, x32, np.array([0]), np.zeros((1, 3)), np.zeros((2, 2), np.int32))


def test_argmin_argmax_along_an_axis(build, opt):
    comp, ref = build("numpy_spelling", opt)
    A = RNG.integers(0, 4, size=(3, 4, 5)).astype(np.float64)  # ties: the first index wins
    A[1, 2, 3] = np.nan
    got, _ = same(comp.arg_along, ref.arg_along, A, 2)
    assert got[0].dtype == np.int64 and got[0].shape == (3, 5) and got[2].shape == (3, 4, 1)
    same(comp.arg_along, ref.arg_along, A[:, ::-1, 1:], -3)
    same(comp.arg_along, ref.arg_along, A, 3)  # ValueError (axis out of range) in both
    same(comp.arg_along, ref.arg_along, np.zeros((2, 0, 3)), 0)  # an empty axis: ValueError in both


def test_log_with_a_base(build, opt):
    comp, ref = build("numpy_spelling", opt)
    # rtol: NumPy's SIMD log and libm's may differ in the last bit
    got, _ = same(comp.logs_with_base, ref.logs_with_base, np.array([1.0, 8.0, 0.5, 0.0, -1.0, np.inf]), 3.0, rtol=1e-15)
    assert got[1] == np.log(3.0) / np.log(10.0) and got[2] == 10.0  # Python's math.log(x, base)
    same(comp.logs_with_base, ref.logs_with_base, np.ones(2), 1.0)  # ZeroDivisionError in both (math.log(1, 1))
    same(comp.logs_with_base, ref.logs_with_base, np.ones(2), -2.0)  # ValueError in both (math domain error)


def test_numpy_log_has_no_base(tmp_path):
    """log(x, base) is pydd's; NumPy's np.log(x, out) takes no base."""
    src = tmp_path / "np_log.pydd"
    src.write_text("import numpy as np\nfrom pydd import *\n\ndef f(x: Array(float64)) -> Array(float64):\n"
                   "    return np.log(x, 2.0)\n")
    r = run_pyddc("--emit=ir", src)
    assert r.returncode == 1
    assert "np_log.pydd:5:22: error: log() takes 1 positional argument but 2 were given" in r.stderr


def test_tuple_stored_into_a_row(build, opt):
    """A[i] = (x, y, z) stores the tuple's values, as NumPy reads a sequence;
    a length that does not fit is NumPy's ValueError."""
    comp, ref = build("numpy_spelling", opt)
    got, _ = same(comp.tuple_rows, ref.tuple_rows, np.zeros((3, 3)), 7.5)
    assert got[0].tolist() == [1.0, 2.0, 7.5] and got[2].tolist() == [0.0, 7.5, -7.5]
    same(comp.tuple_rows, ref.tuple_rows, np.zeros((4, 3)).T.copy().T, -1.0)  # Fortran order
    same(comp.tuple_rows, ref.tuple_rows, np.zeros((3, 4)), 1.0)  # ValueError in both


def test_chained_subscript_stores(build, opt):
    """A[i][j] = v, A[i][j] += v and deeper chains store into A's element,
    as NumPy's view A[i] does; a slice at the end stays a view."""
    comp, ref = build("numpy_spelling", opt)
    A = RNG.standard_normal((3, 4))
    B = RNG.standard_normal((2, 3, 4))
    got, args = same(comp.chained_stores, ref.chained_stores, A, B, 1, 2)
    assert args[0][1, 2] == 6.5 and args[1][0, 1].tolist() == [7.0] * 4
    same(comp.chained_stores, ref.chained_stores, A.T.copy()[:3], B[:, ::-1], -2, -1)  # strided, negative
    same(comp.chained_stores, ref.chained_stores, A, B, 3, 0)  # IndexError in both


def test_chained_store_through_a_slice_is_refused(tmp_path):
    src = tmp_path / "chain.pydd"
    src.write_text("from pydd import *\n\n\ndef f(A: Array(float64, 2)):\n    A[1:3][0] = 1.0\n")
    r = run_pyddc(src, "--emit=ir", "-o", str(tmp_path / "out.txt"))
    assert r.returncode == 1 and "chain.pydd:5:5: error: only elements of a named array can be assigned" in r.stderr


def test_unpacking_a_short_array(build, opt):
    """x, y, z = a for a 1-D array: its elements, and Python's ValueError
    (too many / not enough values) for another length."""
    comp, ref = build("numpy_spelling", opt)
    A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    got, _ = same(comp.unpack_short, ref.unpack_short, A, np.array([7, 9], np.int32))
    assert got == 121.0
    same(comp.unpack_short, ref.unpack_short, A[:, ::-1].copy(), np.array([7, 9], np.int32)[::-1])
    same(comp.unpack_short, ref.unpack_short, np.ones((1, 4)), np.array([1, 2], np.int32))  # too many
    same(comp.unpack_short, ref.unpack_short, A, np.array([1], np.int32))  # not enough
    with pytest.raises(ValueError, match=r"not enough values to unpack \(expected 2, got 1\)"):
        comp.unpack_short(A, np.array([1], np.int32))
