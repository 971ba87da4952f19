"""Comparing a compiled kernel with the same kernel run as Python (shared by
test_slices.py, test_containers.py and test_tuples.py).

same(comp_fn, ref_fn, *args) runs both on their own deep copies of the
arguments and asserts the same outcome: the same exception kind, or equal
results (arrays: dtype, shape and values; lists, dicts and tuples: the same
structure with equal elements of the same Python kind) and equal arguments
afterwards (what the kernel wrote into array arguments; lists and dicts
are passed by value, so a compiled kernel never changes the caller's). Returns the compiled result
and the compiled run's arguments.
"""

import copy
import math
import warnings

import numpy as np

ERROR_KINDS = (ZeroDivisionError, KeyError, IndexError, ValueError, TypeError, OverflowError, AssertionError)


def _kind(x):
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (int, np.integer)):
        return "int"
    if isinstance(x, (float, np.floating)):
        return "float"
    return type(x).__name__


def assert_equal(got, exp, where="result", rtol=0.0):
    if isinstance(exp, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: expected an ndarray, got {got!r}"
        assert got.dtype == exp.dtype and got.shape == exp.shape, \
            f"{where}: {got.dtype}{got.shape}, expected {exp.dtype}{exp.shape}"
        if rtol and exp.dtype.kind == "f":
            np.testing.assert_allclose(got, exp, rtol=rtol, atol=rtol, err_msg=where)
        else:
            assert np.array_equal(got, exp, equal_nan=exp.dtype.kind == "f"), \
                f"{where}:\n got      {got!r}\n expected {exp!r}"
        return
    if isinstance(exp, (list, tuple)):
        assert type(got) is type(exp), f"{where}: expected a {type(exp).__name__}, got {got!r}"
        assert len(got) == len(exp), f"{where}: length {len(got)}, expected {len(exp)}: {got!r} vs {exp!r}"
        for i, (g, e) in enumerate(zip(got, exp)):
            assert_equal(g, e, f"{where}[{i}]", rtol)
        return
    if isinstance(exp, dict):
        assert isinstance(got, dict), f"{where}: expected a dict, got {got!r}"
        assert list(got) == list(exp), f"{where}: keys {list(got)}, expected {list(exp)} (insertion order)"
        for k in exp:
            assert _kind(next(g for g in got if g == k)) == _kind(k), f"{where}: key {k!r} kind"
            assert_equal(got[k], exp[k], f"{where}[{k!r}]", rtol)
        return
    if exp is None:
        assert got is None, f"{where}: expected None, got {got!r}"
        return
    assert _kind(got) == _kind(exp), f"{where}: got {type(got).__name__} {got!r}, expected {_kind(exp)} {exp!r}"
    if _kind(exp) == "float":
        g, e = float(got), float(exp)
        if math.isnan(e):
            assert math.isnan(g), f"{where}: got {g!r}, expected nan"
        elif rtol:
            assert math.isclose(g, e, rel_tol=rtol, abs_tol=rtol), f"{where}: got {g!r}, expected {e!r}"
        else:
            assert g == e, f"{where}: got {g!r}, expected {e!r}"
    else:
        assert got == exp, f"{where}: got {got!r}, expected {exp!r}"


def run(fn, args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(*args)
        except Exception as e:  # noqa: BLE001 - compared by kind
            return "raise", e


def same(comp_fn, ref_fn, *args, rtol=0.0):
    a1, a2 = copy.deepcopy(args), copy.deepcopy(args)
    gs, gv = run(comp_fn, a1)
    es, ev = run(ref_fn, a2)
    name = getattr(ref_fn, "__name__", "kernel")
    if es == "raise":
        kinds = tuple(k for k in ERROR_KINDS if isinstance(ev, k)) or (type(ev),)
        assert gs == "raise", f"{name}: expected {type(ev).__name__}({ev}), got {gv!r}"
        assert isinstance(gv, kinds), f"{name}: raised {type(gv).__name__}({gv}), expected {type(ev).__name__}({ev})"
        return gv, a1
    assert gs == "ok", f"{name}: raised {type(gv).__name__}: {gv}; expected {ev!r}"
    assert_equal(gv, ev, f"{name} result", rtol)
    for i, (x, y) in enumerate(zip(a1, a2)):
        # lists and dicts cross the boundary by value: only arrays are shared
        if isinstance(y, np.ndarray):
            assert_equal(x, y, f"{name} argument {i} after the call", rtol)
    return gv, a1
