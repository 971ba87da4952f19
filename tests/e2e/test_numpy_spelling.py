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
