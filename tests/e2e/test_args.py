"""Argument conversion and checking at the Python boundary."""

import numpy as np
import pytest


def good_args():
    rng = np.random.default_rng(60)
    return dict(nitems=3, alpha=0.5, grid=rng.normal(size=(4, 6)), hist=np.arange(5, dtype=np.int64))


def call_ok(comp, ref, **kw):
    """Calls both with copies; checks result and the written array agree."""
    ref_kw = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    got = comp.argcheck(**kw)
    expected = ref.argcheck(**ref_kw)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_array_equal(kw["hist"], ref_kw["hist"])
    return got


def test_valid_calls(build, opt):
    comp, ref = build("argcheck", opt)
    a = good_args()
    call_ok(comp, ref, **a)
    got = comp.argcheck(a["nitems"], a["alpha"], a["grid"], a["hist"])  # positionally
    assert type(got) is float
    # Keyword arguments in any order.
    got_kw = comp.argcheck(hist=a["hist"], grid=a["grid"], alpha=a["alpha"], nitems=a["nitems"])
    assert got_kw == got
    # NumPy scalars, and an int for a float parameter.
    call_ok(comp, ref, **{**good_args(), "nitems": np.int32(7), "alpha": np.float64(2.0)})
    call_ok(comp, ref, **{**good_args(), "nitems": np.int64(-2), "alpha": 3})
    call_ok(comp, ref, **{**good_args(), "alpha": np.float32(0.25)})


def test_scalar_parameter_kinds(build, opt):
    comp, ref = build("argcheck", opt)
    for args in [(5, 0.5, True), (5, 0.5, False), (np.int64(-3), np.float32(1.5), np.bool_(True)),
                 (2**40, 2, False)]:
        np.testing.assert_allclose(comp.scalars(*args), ref.scalars(*args), rtol=1e-6)


def test_read_only_array_for_read_only_parameter(build, opt):
    comp, ref = build("argcheck", opt)
    grid = good_args()["grid"]
    grid.flags.writeable = False
    assert comp.grid_sum(grid) == pytest.approx(ref.grid_sum(grid), rel=1e-12)


def check_error(exc_type, name, fn, *args, **kwargs):
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    if name is not None:
        assert name in str(info.value), f"{name!r} not in {str(info.value)!r}"


def test_wrong_argument_count(build, opt):
    comp, _ = build("argcheck", opt)
    a = good_args()
    check_error(TypeError, "hist", comp.argcheck, a["nitems"], a["alpha"], a["grid"])
    check_error(TypeError, None, comp.argcheck, a["nitems"], a["alpha"], a["grid"], a["hist"], 1)
    check_error(TypeError, None, comp.argcheck)
    check_error(TypeError, "bogus", comp.argcheck, **a, bogus=1)
    check_error(TypeError, "nitems", comp.argcheck, 3, a["alpha"], a["grid"], a["hist"], nitems=3)


@pytest.mark.parametrize("param, value", [
    ("nitems", "3"),                                   # str for int
    ("nitems", 3.0),                                   # float for int
    ("nitems", None),
    ("alpha", "0.5"),                                  # str for float
    ("grid", np.zeros((4, 6), np.float32)),            # wrong dtype
    ("grid", np.zeros((4, 6), np.int64)),              # wrong dtype
    ("grid", np.zeros(24)),                            # wrong ndim
    ("grid", np.zeros((2, 3, 4))),                     # wrong ndim
    ("grid", [[0.0] * 6] * 4),                         # list, not ndarray
    ("grid", 1.0),
    ("hist", np.zeros(5, np.int32)),                   # wrong dtype
    ("hist", [1, 2, 3]),                               # list
], ids=lambda v: v if isinstance(v, str) else None)
def test_wrong_argument_type(build, opt, param, value):
    comp, _ = build("argcheck", opt)
    a = good_args()
    before = a["hist"].copy()
    a[param] = value
    check_error(TypeError, param, comp.argcheck, **a)
    check_error(TypeError, param, comp.argcheck, *a.values())
    if param != "hist":
        np.testing.assert_array_equal(a["hist"], before)  # rejected before running


@pytest.mark.parametrize("layout", ["strided", "fortran", "reversed"])
def test_any_strides_are_accepted_without_a_copy(build, opt, layout):
    comp, ref = build("argcheck", opt)
    grid = np.arange(48.0).reshape(4, 12)
    grid = {"strided": grid[:, ::2], "fortran": np.asfortranarray(grid[:, :6]), "reversed": grid[::-1, 11:5:-1]}[layout]
    hist = np.zeros(10, np.int64)[::2]
    expected_hist = hist.copy()
    assert comp.argcheck(3, 0.5, grid, hist) == ref.argcheck(3, 0.5, grid, expected_hist)
    np.testing.assert_array_equal(hist, expected_hist)  # written through the view


def test_read_only_array_for_written_parameter(build, opt):
    comp, _ = build("argcheck", opt)
    a = good_args()
    a["hist"].flags.writeable = False
    check_error(TypeError, "hist", comp.argcheck, **a)
    np.testing.assert_array_equal(a["hist"], np.arange(5))


def test_int_out_of_int32_range(build, opt):
    comp, _ = build("argcheck", opt)
    for bad in [2**31, -(2**31) - 1, 2**70]:
        a = good_args()
        a["nitems"] = bad
        with pytest.raises(OverflowError, match="does not fit in int32"):
            comp.argcheck(**a)
    a = good_args()
    a["nitems"] = 2**31 - 1
    comp.argcheck(**a)  # the largest int32 is accepted


@pytest.mark.parametrize("kernel, param, value", [
    ("write_through_list", "hist", np.arange(5)),
    ("write_through_rows", "grid", np.zeros((2, 3))),
])
def test_writes_through_aliases_need_a_writable_array(build, opt, kernel, param, value):
    # A parameter stored into a list or iterated by rows (views) may be
    # written through the alias: a read-only array is refused, a writable
    # one is written as the Python run writes it.
    comp, ref = build("argcheck", opt)
    frozen = value.copy()
    frozen.flags.writeable = False
    check_error(TypeError, param, getattr(comp, kernel), frozen)
    mine, theirs = value.copy(), value.copy()
    assert getattr(comp, kernel)(mine) == getattr(ref, kernel)(theirs)
    np.testing.assert_array_equal(mine, theirs)
