"""The original Intrepydd's spellings (issue 13), compiled vs the same file
run as Python (kernels/intrepydd_compat.pydd) and vs SciPy: boolean() as a
dtype, spm_diags/sparse_diags, get_row/get_col, and allocation with a List
shape whose rank an annotation gives."""

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import run_pyddc
from same import run, same


def test_boolean_dtype(build, opt):
    comp, ref = build("intrepydd_compat", opt)
    got, _ = same(comp.flags, ref.flags, 4, 1)
    assert got[0].dtype == np.bool_ and got[0].tolist() == [False, True, False, False]
    same(comp.flags, ref.flags, 1, -1)


def _same_sparse(comp_fn, ref_fn, *args):
    """Sparse results: dtype, shape, stored entries and values equal."""
    gs, got = run(comp_fn, args)
    es, exp = run(ref_fn, args)
    assert gs == es == "ok", (got, exp)
    got = got if isinstance(got, tuple) else (got,)
    exp = exp if isinstance(exp, tuple) else (exp,)
    for g, e in zip(got, exp):
        if sp.issparse(e):
            assert sp.issparse(g) and g.dtype == e.dtype and g.shape == e.shape and g.nnz == e.nnz
            np.testing.assert_array_equal(g.toarray(), e.toarray())
        else:
            assert g.dtype == e.dtype
            np.testing.assert_array_equal(g, e)
    return got


def test_spm_diags(build, opt):
    comp, ref = build("intrepydd_compat", opt)
    v = np.array([3, 0, -2, 7], np.int32)
    (D,) = _same_sparse(comp.diagonal, ref.diagonal, v)
    exp = sp.diags(v).tocsr()  # SciPy: float64, zeros not stored
    assert D.dtype == np.float64 and D.nnz == exp.nnz == 3
    np.testing.assert_array_equal(D.toarray(), exp.toarray())
    (E,) = _same_sparse(comp.diagonal, ref.diagonal, np.zeros(0, np.int32))
    assert E.shape == (0, 0)
    v32 = np.array([1.5, -2.0, np.inf], np.float32)
    D, y = _same_sparse(comp.diagonal32, ref.diagonal32, v32, np.array([2, 3, 0.5], np.float32))
    assert D.dtype == np.float32 and y.tolist() == [3.0, -6.0, np.inf]
    assert isinstance(run(comp.diagonal, (np.ones((2, 2), np.int32),))[1], TypeError)


def test_get_row_and_get_col(build, opt):
    comp, ref = build("intrepydd_compat", opt)
    # unsorted columns and a repeated entry (summed, as SciPy's toarray)
    S = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([2, 0, 1, 1, 2]), np.array([0, 2, 2, 5])),
                      shape=(3, 3))
    for i, j in ((0, 2), (2, 1), (-1, -3), (1, 0)):
        got, _ = same(comp.sparse_lines, ref.sparse_lines, S, i, j)
        np.testing.assert_array_equal(got[0], S.toarray()[i])
        np.testing.assert_array_equal(got[1], S.toarray()[:, j])
    same(comp.sparse_lines, ref.sparse_lines, S, 3, 0)  # IndexError in both
    same(comp.sparse_lines, ref.sparse_lines, S, 0, -4)
    A = np.arange(12).reshape(3, 4)
    got, args = same(comp.dense_lines, ref.dense_lines, A, 1, -1)
    assert args[0][1, 0] == -1 and got.tolist() == [6, 14, 22]  # get_row is a view, as the original's
    same(comp.dense_lines, ref.dense_lines, A.T, 2, 0)  # strided
    same(comp.dense_lines, ref.dense_lines, A, 3, 0)  # IndexError in both


def test_list_shapes(build, opt):
    comp, ref = build("intrepydd_compat", opt)
    got, _ = same(comp.from_list, ref.from_list, [2, 3])
    assert got.shape == (2, 3) and got[1, 2] == 2.5
    same(comp.from_list, ref.from_list, [0, 4])
    got, _ = same(comp.from_list_return, ref.from_list_return, 3)
    assert got.shape == (1, 3, 2) and got.dtype == np.int32
    # A list of another length than the annotation's rank: ValueError when
    # compiled (NumPy would make an array of the list's rank).
    with pytest.raises(ValueError, match="a shape list of length 3 for an array declared with rank 2"):
        comp.from_list([1, 2, 3])


@pytest.mark.parametrize("source, where, message", [
    ("def f(l: List(int64)) -> float64:\n    x = zeros(l)\n    return x.sum()\n", "3:15",
     "the rank of an array made from a List(int64) shape is not known at compile time; annotate the target"),
    ("def f(l: List(float64)) -> Array(float64, 2):\n    x: Array(float64, 2) = zeros(l)\n    return x\n", "3:34",
     "shape entries must be integers, got List(float64)"),
    ("def f(v: Array(float64, 2)) -> SparseMat(float64):\n    return spm_diags(v)\n", "3:22",
     "spm_diags() expects a 1-D array, got Array(float64, 2)"),
    ("def f(v: Array(float64, 3)) -> Array(float64):\n    return get_row(v, 0)\n", "3:20",
     "get_row() expects a 2-D array or a SparseMat, got Array(float64, 3)"),
])
def test_errors(tmp_path, source, where, message):
    src = tmp_path / "compat_err.pydd"
    src.write_text("from pydd import *\n" + source)
    r = run_pyddc("--emit=ir", src)
    assert r.returncode == 1
    assert f"compat_err.pydd:{where}: error: {message}" in r.stderr, r.stderr
