"""The Python reference itself (pydd._lib and load_python's rewriting), no
compiler needed: NEP 50 promotion, the builtins pydd shadows, method
spellings, element-wise and/or/not that still short-circuit on scalars,
heaps as heapq lists, and line numbers kept through the rewriting."""

import textwrap
import traceback

import numpy as np
import pytest
import scipy.linalg

import pydd
from pydd import _lib


def load(tmp_path, source, name="k"):
    path = tmp_path / f"{name}.pydd"
    path.write_text(textwrap.dedent(source))
    return pydd.load_python(path)


def test_nep50_promotion():
    f32 = np.ones(3, np.float32)
    i32 = np.ones(3, np.int32)
    assert (f32 * 2.5).dtype == np.float32  # a Python float is weak
    assert (i32 + 1).dtype == np.int32
    assert (f32 * np.float64(2.0)).dtype == np.float64  # a NumPy scalar is not
    assert (i32 + np.int64(1)).dtype == np.int64
    assert type(np.float32(1.0) * 2.0) is np.float32
    assert _lib.where(i32 > 0, i32, 0).dtype == np.int32  # np.where itself gives int64 in 1.24


def test_shadowed_builtins_are_numpy_on_arrays_only():
    x = np.array([3.0, np.nan, 1.0])
    assert np.isnan(_lib.min(x)) and np.isnan(_lib.max(x))  # NaN propagates (builtins: order-dependent)
    assert _lib.min(2, 1.5, 3) == 1.5 and _lib.max([4, 9, 2]) == 9  # the builtins otherwise
    i = np.full(4, 2**30, np.int32)
    assert _lib.sum(i) == 2**32 and _lib.sum(i).dtype == np.int64  # NumPy's int64 accumulator
    assert _lib.sum([1, 2, 3]) == 6 and _lib.sum([1.5], 1) == 2.5  # builtin start argument
    A = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(_lib.sum(A, 1), [3.0, 12.0])
    np.testing.assert_array_equal(_lib.min(A, 0), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(_lib.max(A, axis=-1), [2.0, 5.0])
    assert _lib.abs(-3) == 3 and _lib.abs(np.array([-1, 2])).tolist() == [1, 2]
    assert _lib.any([0, 0, 1]) is True and _lib.all(np.array([1, 0])) == np.False_
    assert _lib.pow(2, 10) == 1024 and _lib.pow(np.array([2, 3]), 2).tolist() == [4, 9]
    with pytest.raises(ValueError):
        _lib.pow(np.array([2], np.int64), np.array([-1], np.int64))


def test_library_meanings():
    A = np.array([[4.0, 3.0], [6.0, 3.0]])
    B = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(_lib.syrk(A), A @ A.T)
    np.testing.assert_array_equal(_lib.syr2k(A, B), A @ B.T + B @ A.T)
    S = np.array([[4.0, 6.0], [6.0, 3.0]])  # the symmetric matrix of A's lower triangle
    np.testing.assert_array_equal(_lib.symm(A, B), S @ B)
    np.testing.assert_array_equal(_lib.trmm(A, B), np.tril(A) @ B)
    for got, exp in zip(_lib.lu(A), scipy.linalg.lu(A)):
        np.testing.assert_array_equal(got, exp)
    lu, piv = _lib.ludcmp(A)
    assert piv.dtype == np.int32
    with pytest.raises(TypeError):
        _lib.innerprod(A, B)  # ranks are checked (a compile error in pyddc)
    np.testing.assert_array_equal(_lib.floor(np.array([1, -2], np.int32)), [1, -2])
    assert _lib.floor(np.array([1, -2], np.int32)).dtype == np.int32  # NumPy 2.3: integers unchanged
    assert _lib.ceil(np.array([1.5], np.float32)).dtype == np.float32
    np.testing.assert_array_equal(_lib.where(np.array([0, 3, 0, 1])), [1, 3])
    assert _lib.where(np.array([True])).dtype == np.int64
    assert _lib.allclose(np.ones(2), 1.0 + 1e-9) is True
    a = np.zeros((2, 3))[:, ::2]
    _lib.fill(a, 7.0)
    assert (a == 7.0).all()
    c = _lib.copy(np.ones((3, 2)).T)
    assert c.flags.c_contiguous and c.shape == (2, 3)
    assert _lib.full(2, 7).dtype == np.int64 and _lib.full(2, np.float32(1)).dtype == np.float32
    assert _lib.zeros_like(np.ones((2, 3)).T).flags.c_contiguous


def test_heaps_are_heapq_lists():
    h = _lib.heapinit()
    for x in (5.0, 1.0, 3.0, 1.0):
        _lib.heappush(h, x)
    assert _lib.heappeek(h) == 1.0 and len(h) == 4
    assert [_lib.heappop(h) for _ in range(4)] == [1.0, 1.0, 3.0, 5.0]
    with pytest.raises(IndexError):
        _lib.heappop(h)
    with pytest.raises(IndexError):
        _lib.heappeek(h)
    kv = _lib.heapinit()
    _lib.heappush(kv, 2.0, 7)
    _lib.heappush(kv, 2.0, 3)
    _lib.heappush(kv, 1.0, 9)
    assert [_lib.heappop(kv) for _ in range(3)] == [(1.0, 9), (2.0, 3), (2.0, 7)]


def test_annotations():
    assert repr(pydd.List(pydd.Array(pydd.float64, 2))) == "List(Array(float64, 2))"
    assert repr(pydd.Dict(pydd.int64, pydd.float32)) == "Dict(int64, float32)"
    assert repr(pydd.Heap(pydd.float64, pydd.int64)) == "Heap(float64, int64)"
    assert pydd.Heap(pydd.float64, pydd.int64).key_value and not pydd.Heap(pydd.int32).key_value
    assert pydd.Tuple(pydd.int64, pydd.float64) == pydd.Tuple(pydd.int64, pydd.float64)
    assert pydd.List(pydd.int64) != pydd.List(pydd.int32)
    assert len({pydd.Dict(pydd.int64, pydd.int64), pydd.Dict(pydd.int64, pydd.int64)}) == 1


def test_method_spellings(tmp_path):
    m = load(tmp_path, """
        from pydd import *

        def f(x: Array(float64), A: Array(float64, 2)) -> float64:
            return x.abs().sqrt().sum() + A.sum(1).max() + A.shape(0) + A.T.shape[0]

        def g(n: int) -> List(int64):
            xs: List(int64) = []
            for i in range(n):
                xs.append(i)
            xs.pop()
            d: Dict(int64, int64) = {1: 2}
            xs.append(d.get(1, 0))
            xs.append(len(list(d.items())))
            return xs
    """)
    x = np.array([4.0, -9.0])
    A = np.arange(6.0).reshape(2, 3)
    assert m.f(x, A) == 5.0 + 12.0 + 2 + 3
    assert m.g(3) == [0, 1, 2, 1]  # list and dict methods are left alone


def test_and_or_not_elementwise_and_short_circuit(tmp_path):
    m = load(tmp_path, """
        from pydd import *

        def arrays(a: Array(float64), b: Array(float64)) -> Array(bool):
            return a > 0 and b > 0 or not a < -1

        def scalars(x: Array(float64), i: int) -> bool:
            return i < len(x) and x[i] > 0

        def first_true(i: int, j: int) -> int:
            return i or j

        def eq_shapes(a: Array(float64), b: Array(float64)) -> Array(bool):
            return a == b
    """)
    a = np.array([1.0, -2.0, 0.5, -0.5])
    b = np.array([1.0, 1.0, -1.0, 1.0])
    np.testing.assert_array_equal(m.arrays(a, b), (a > 0) & (b > 0) | ~(a < -1))
    assert m.scalars(a, 10) is False  # x[10] is never evaluated
    assert m.scalars(a, 0) == True  # noqa: E712 - np.bool_
    assert m.first_true(0, 5) == 5 and m.first_true(3, 5) == 3  # Python's operand semantics
    with pytest.raises(ValueError):
        m.eq_shapes(a, np.ones(3))  # NumPy 2 raises; 1.24 would return False


def test_rewriting_keeps_line_numbers(tmp_path):
    m = load(tmp_path, """
        from pydd import *

        def f(a: Array(float64), b: Array(float64)) -> float64:
            c = a.abs()
            d = c and b
            return add(d, a.sqrt()).sum()
    """)
    with pytest.raises(ValueError) as e:
        m.f(np.ones(3), np.ones(4))
    frames = traceback.extract_tb(e.value.__traceback__)
    mine = [fr for fr in frames if fr.filename.endswith("k.pydd")]
    assert mine and mine[-1].lineno == 6 and mine[-1].name == "f"
