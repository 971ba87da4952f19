"""Python constructs inside kernels (kernels/constructs.pydd) compiled vs the
same file run as Python: assert, enumerate, zip, default parameter values,
list comprehensions and generator arguments, min/max of several scalars,
docstrings, conditional expressions on arrays; and their compile errors."""

import numpy as np
import pytest

from conftest import run_pyddc
from same import same

RNG = np.random.default_rng(1313)


def test_assert(build, opt):
    comp, ref = build("constructs", opt)
    x = RNG.normal(size=6)
    same(comp.checked_mean, ref.checked_mean, x)
    with pytest.raises(AssertionError, match="^x must not be empty$"):
        comp.checked_mean(np.zeros(0))
    with pytest.raises(AssertionError) as info:
        comp.checked_mean(x, 5.0)  # a bare assert: no message, as Python's
    assert info.value.args == ()
    same(comp.checked_mean, ref.checked_mean, x, 5.0)


def test_enumerate_and_zip(build, opt):
    comp, ref = build("constructs", opt)
    x, w = RNG.normal(size=7), RNG.normal(size=5)
    same(comp.weighted, ref.weighted, x, w, rtol=1e-15)
    same(comp.weighted, ref.weighted, x[:0], w)
    x[4] = -1.0
    x[:4] = np.abs(x[:4])
    got, _ = same(comp.first_negative, ref.first_negative, x)
    assert got == 5
    assert comp.first_negative(x, 10) == ref.first_negative(x, 10) == 14
    assert comp.first_negative(np.abs(x)) == -1
    ints = np.arange(-3, 3)
    got, _ = same(comp.pairs, ref.pairs, ints, [0.5, 1.5, -2.0], rtol=1e-15)
    same(comp.pairs, ref.pairs, ints[:1], [0.5, 1.5, -2.0, 4.0], rtol=1e-15)
    got, _ = same(comp.rows_enumerated, ref.rows_enumerated, RNG.normal(size=(4, 3)), rtol=1e-15)
    assert got.shape == (4,)


def test_default_parameters(build, opt):
    comp, ref = build("constructs", opt)
    x = RNG.normal(size=5)
    same(comp.scaled, ref.scaled, x)
    same(comp.scaled, ref.scaled, x, 0.5)
    assert np.array_equal(comp.scaled(x, clamp=True, shift=-1), ref.scaled(x, clamp=True, shift=-1))
    same(comp.call_defaults, ref.call_defaults, x, rtol=1e-15)
    assert "scaled(x: Array(float64, 1), factor: float64 = 2.0, shift: int64 = 1, clamp: bool = False)" in comp.scaled.__doc__
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        comp.scaled(factor=2.0)


def test_comprehensions(build, opt):
    comp, ref = build("constructs", opt)
    for n in (0, 1, 7):
        got, _ = same(comp.squares, ref.squares, n)
        assert got == [i * i for i in range(n) if i % 3 != 1]
        same(comp.comprehension_array, ref.comprehension_array, n)
        same(comp.appended, ref.appended, n)
    x = RNG.normal(size=6)
    same(comp.comprehension_sum, ref.comprehension_sum, x, 5, rtol=1e-14)
    same(comp.comprehension_sum, ref.comprehension_sum, x[:0], 3)  # max() of an empty list: ValueError


def test_min_max_and_conditional_arrays(build, opt):
    comp, ref = build("constructs", opt)
    for args in [(1.5, 2, -3.0), (0.5, -7, 0.25), (float("nan"), 1, 2.0)]:
        same(comp.extremes, ref.extremes, *args)
    x = RNG.normal(size=4)
    same(comp.sign_flip, ref.sign_flip, x, True)
    got, _ = same(comp.sign_flip, ref.sign_flip, x, False)


def test_inferred_return_types(build, opt, pyddc):
    comp, ref = build("constructs", opt)
    x = RNG.normal(size=5)
    got, _ = same(comp.inferred_stats, ref.inferred_stats, x)
    assert isinstance(got, tuple) and isinstance(got[1], int)
    same(comp.doubled_if, ref.doubled_if, x, 0)
    assert "inferred_stats(x: Array(float64, 1)) -> (float64, int64)" in comp.inferred_stats.__doc__


def test_time(build, opt):
    import time
    comp, ref = build("constructs", opt)
    for kernel in (comp, ref):
        before = time.time()
        s, t0, t1 = kernel.timed(100000)
        after = time.time()
        assert s == 4999950000.0
        assert before - 1e-3 <= t0 <= t1 <= after + 1e-3  # the wall clock, in seconds


@pytest.mark.parametrize("source, where, message", [
    ("def f(x: int = 1, y: int) -> int:\n    return x\n", "1:19", "non-default argument follows default argument"),
    ("def f(x: Array(float64) = 1) -> int:\n    return 0\n", "1:7", "only scalar parameters can have a default value"),
    ("def f(x: int = 1.5) -> int:\n    return x\n", "1:7", "the default value 1.5 of 'x' is not a int64"),
    ("def f(x: int = len([])) -> int:\n    return x\n", "1:16", "a default parameter value must be a constant"),
    ("def f(x: int) -> int:\n    assert x, x\n    return x\n", "2:15", "an assert message must be a string literal"),
    ("def f(x: int) -> int:\n    while sum([i for i in range(x)]) > 3:\n        x -= 1\n    return x\n", "2:15",
     "a list comprehension in a while condition is not supported"),
    ("def f(x: int) -> int:\n    return 0 if x else len([i for i in range(x)])\n", "2:28",
     "a list comprehension in a conditional expression's branch is not supported"),
    ("def f(x: int) -> int:\n    l = []\n    return len(l)\n", "2:5", "cannot infer the element type of an empty List"),
    ("def f(n: int):\n    return f(n - 1) if n else 0\n", "1:1",
     "'f' is called recursively, so its return type cannot be inferred; annotate it"),
    ("def f(n: int):\n    if n:\n        return [1]\n    return 2\n", "4:12", "'f' returns int64 here and List(int64) at line 5"),
    ("def f(A: Array(float64, 2)) -> int:\n    return argmax(A)[0]\n", "2:12",
     "int64 cannot be indexed; argmax gives a flat index, as NumPy's; for coordinates write unravel_index(argmax(A), A.shape)"),
    ("def f(x: Array(float64)) -> float64:\n    return round(x)[0]\n", "2:18",
     "round() of an array is a TypeError in Python (ndarray has no __round__); write np.round(a)"),
    ("def f(x: int) -> int:\n    s = 0\n    for a, b in zip(x):\n        s += a\n    return s\n", "3:9",
     "not enough values to unpack (expected 2, got 1)"),
])
def test_construct_errors(tmp_path, source, where, message):
    src = tmp_path / "bad.pydd"
    src.write_text("from pydd import *\n\n" + source)
    r = run_pyddc("--emit=ir", src)
    assert r.returncode == 1, r.stdout
    line, col = where.split(":")
    assert f"bad.pydd:{int(line) + 2}:{col}: error: {message}" in r.stderr, r.stderr


def test_one_argument_where_subscripted_warns(tmp_path):
    src = tmp_path / "firsts.pydd"
    src.write_text("from pydd import *\n\ndef f(c: Array(bool)) -> int:\n    return where(c)[0]\n")
    r = run_pyddc("--emit=ir", src)
    assert r.returncode == 0, r.stderr
    assert "firsts.pydd:4:12: warning: where(c) with one argument gives the indices of the true elements" in r.stderr
    assert "    return where(c)[0]\n           ^" in r.stderr
    src.write_text("from pydd import *\n\ndef f(c: Array(bool)) -> int:\n    return where(c)[1] + len(where(c, 1, 0))\n")
    r = run_pyddc("--emit=ir", src)
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
