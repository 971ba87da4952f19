"""Arithmetic semantics: floor division and modulo, true division, division
by zero, int32/int64 widths and wrap-around, conversions, float32."""

import itertools

import numpy as np
import pytest

from conftest import same_float, wrap_int32, wrap_int64

INT_A = [7, -7, 6, -6, 1, -1, 0, 13, -13, 2**62 + 3, -(2**62) - 5]
INT_B = [2, -2, 3, -3, 1, -1, 7, -7, 5, -5, 2**40 + 1, -(2**40) - 1]
FLOAT_A = [7.5, -7.5, 6.0, -6.0, 0.0, -0.0, 1.0, -1.0, 1e-300, -3.25, 5e15 + 1.0, 0.1]
FLOAT_B = [2.0, -2.0, 0.5, -0.5, 3.25, -3.25, 1e-3, -7.0, 1e300, 0.1]


def test_int_floordiv_mod(build, opt):
    comp, ref = build("divmod", opt)
    for a, b in itertools.product(INT_A, INT_B):
        assert comp.ifloordiv(a, b) == ref.ifloordiv(a, b) == a // b, (a, b)
        assert comp.imod(a, b) == ref.imod(a, b) == a % b, (a, b)
        assert comp.mod_assign(a, b) == ref.mod_assign(a, b), (a, b)


def test_int32_floordiv_mod(build, opt):
    comp, ref = build("divmod", opt)
    values_a = [7, -7, 0, 1, -1, 2**31 - 1, -(2**31) + 1, 1000003, -1000003]
    values_b = [2, -2, 3, -3, 1, -1, 65536, -65536]
    for a, b in itertools.product(values_a, values_b):
        assert comp.i32floordiv(a, b) == ref.i32floordiv(a, b), (a, b)
        assert comp.i32mod(a, b) == ref.i32mod(a, b), (a, b)


def test_float_floordiv_mod(build, opt):
    comp, ref = build("divmod", opt)
    for a, b in itertools.product(FLOAT_A, FLOAT_B):
        q, r = comp.ffloordiv(a, b), comp.fmod(a, b)
        assert type(q) is float and type(r) is float
        assert same_float(q, ref.ffloordiv(a, b)), ("//", a, b, q)
        assert same_float(r, ref.fmod(a, b)), ("%", a, b, r)
        assert same_float(comp.floordiv_assign(a, b), ref.floordiv_assign(a, b)), ("//=", a, b)


def test_mixed_int_float_floordiv_mod(build, opt):
    comp, ref = build("divmod", opt)
    for a, b in itertools.product([7, -7, 0, 10**6, -(10**6)], [2.5, -2.5, 0.3, -0.3, 4.0]):
        assert same_float(comp.mixed_floordiv(a, b), ref.mixed_floordiv(a, b)), (a, b)
    for a, b in itertools.product([7.5, -7.5, 0.0, 1e9 + 0.5], [2, -2, 3, -3, 1]):
        assert same_float(comp.mixed_mod(a, b), ref.mixed_mod(a, b)), (a, b)


def test_true_division(build, opt):
    comp, ref = build("divmod", opt)
    # Operands up to 2**53, where int -> float conversion is exact and Python's
    # correctly rounded int / int agrees with NumPy's float division.
    for a, b in itertools.product([7, -7, 1, 0, 2**53, -(2**52) - 1, 10**15 + 7], [2, -3, 7, 10**9]):
        got = comp.itruediv(a, b)
        assert type(got) is float
        assert same_float(got, ref.itruediv(a, b)), (a, b)
    for a, b in itertools.product(FLOAT_A, FLOAT_B):
        assert same_float(comp.ftruediv(a, b), ref.ftruediv(a, b)), (a, b)


def test_divmod_over_arrays(build, opt):
    comp, ref = build("divmod", opt)
    rng = np.random.default_rng(10)
    a = rng.integers(-1000, 1000, 400)
    b = rng.integers(1, 50, 400) * rng.choice([-1, 1], 400)
    q1, r1, q2, r2 = (np.zeros(400, np.int64) for _ in range(4))
    assert comp.divmod_arrays(a, b, q1, r1) == ref.divmod_arrays(a, b, q2, r2) == 400
    np.testing.assert_array_equal(q1, q2)
    np.testing.assert_array_equal(r1, r2)
    fa, fb = rng.normal(0, 100, 400), rng.normal(0, 10, 400)
    fq1, fr1, fq2, fr2 = (np.zeros(400) for _ in range(4))
    comp.fdivmod_arrays(fa, fb, fq1, fr1)
    ref.fdivmod_arrays(fa, fb, fq2, fr2)
    np.testing.assert_array_equal(fq1, fq2)
    np.testing.assert_array_equal(fr1, fr2)


@pytest.mark.parametrize("fn, a, b", [
    ("ifloordiv", 7, 0), ("ifloordiv", 0, 0), ("ifloordiv", -7, 0),
    ("imod", 7, 0), ("imod", -7, 0),
    ("i32floordiv", 7, 0), ("i32mod", 7, 0),
    ("mod_assign", 5, 0),
    ("itruediv", 7, 0), ("itruediv", 0, 0),
    ("ftruediv", 1.5, 0.0), ("ftruediv", -1.5, -0.0), ("ftruediv", 0.0, 0.0),
    ("ffloordiv", 1.5, 0.0), ("fmod", 1.5, 0.0), ("fmod", -1.5, -0.0),
    ("floordiv_assign", 2.0, 0.0),
    ("mixed_floordiv", 3, 0.0), ("mixed_mod", 3.0, 0),
])
def test_zero_division(build, opt, fn, a, b):
    comp, ref = build("divmod", opt)
    with pytest.raises(ZeroDivisionError):
        getattr(ref, fn)(a, b)
    with pytest.raises(ZeroDivisionError):
        getattr(comp, fn)(a, b)
    # The module keeps working afterwards.
    assert comp.ifloordiv(-7, 2) == -4


def test_zero_division_in_loop(build, opt):
    comp, ref = build("divmod", opt)
    with pytest.raises(ZeroDivisionError):
        ref.floordiv_loop(5, 0)
    with pytest.raises(ZeroDivisionError):
        comp.floordiv_loop(5, 0)
    # No iteration, no division: the check must not be hoisted out of the loop.
    assert comp.floordiv_loop(0, 0) == ref.floordiv_loop(0, 0) == 0
    assert comp.floordiv_loop(100, -3) == ref.floordiv_loop(100, -3)


def test_int32_and_int64_arithmetic(build, opt):
    comp, ref = build("intwidth", opt)
    for a, b in [(1, 2), (-5, 3), (2**30, 2**30 - 1), (-(2**30), -(2**30))]:
        assert comp.i32_add(a, b) == ref.i32_add(a, b)
    # int32 * int64 must be computed in int64.
    for a, b in [(2**31 - 1, 2**31), (-(2**31), 2**31 - 1), (3, -(2**40))]:
        got = comp.mixed_mul(a, b)
        assert got == ref.mixed_mul(a, b) == a * b


def test_int32_accumulator_wraps_int64_does_not(build, opt, quiet_overflow):
    comp, ref = build("intwidth", opt)
    rng = np.random.default_rng(11)
    x = rng.integers(2**29, 2**31 - 1, 64).astype(np.int32)
    exact = int(x.astype(np.int64).sum())
    wide = comp.i64_sum_of_i32(x)
    narrow = comp.i32_sum_wrap(x)
    assert wide == ref.i64_sum_of_i32(x) == exact
    assert narrow == ref.i32_sum_wrap(x) == wrap_int32(exact)
    assert narrow != wide


def test_int32_product_stored_wraps(build, opt, quiet_overflow):
    comp, ref = build("intwidth", opt)
    rng = np.random.default_rng(12)
    a = rng.integers(-(2**31), 2**31 - 1, 300).astype(np.int32)
    b = rng.integers(-(2**31), 2**31 - 1, 300).astype(np.int32)
    out1, out2 = np.zeros(300, np.int32), np.zeros(300, np.int32)
    comp.i32_mul_store(a, b, out1)
    ref.i32_mul_store(a, b, out2)
    np.testing.assert_array_equal(out1, out2)
    expected = [wrap_int32(int(p) * int(q)) for p, q in zip(a, b)]
    np.testing.assert_array_equal(out1, np.array(expected, np.int32))


def test_int64_overflow_wraps(build, opt, quiet_overflow):
    comp, ref = build("intwidth", opt)
    rng = np.random.default_rng(13)
    x = rng.integers(-(2**62), 2**62, 1000)
    expected = 1442695040888963407
    for v in x:
        expected = wrap_int64(expected * 6364136223846793005 + int(v))
    got = comp.i64_lcg_hash(x)
    assert got == ref.i64_lcg_hash(x) == expected
    for base, n in [(3, 50), (-7, 41), (2, 63), (2, 64), (2**31 + 11, 9), (10, 19)]:
        got = comp.i64_power_wrap(base, n)
        assert got == ref.i64_power_wrap(base, n) == wrap_int64(base**n), (base, n)


def test_conversions_truncate(build, opt):
    comp, ref = build("intwidth", opt)
    for x in [-2.7, -2.5, -0.5, -0.0, 0.0, 0.4, 0.99, 2.5, 2.999, 1e9, -1e9, 123456.78, 2**31 - 1.5]:
        got = comp.to_i32(x)
        assert type(got) is int
        assert got == ref.to_i32(x) == int(x), x
    for x in [-2.7, 2.7, 1e18, -1e18, 9.007199254740993e15, -0.9]:
        assert comp.to_i64(x) == ref.to_i64(x) == int(x), x
    for x in [-3.14, -0.05, 0.05, 3.14, 12.34, -12.34]:
        assert comp.trunc_mod(x) == ref.trunc_mod(x), x
    for n in [0, 1, -1, 7, -7, 2**53 + 1, -(2**62) - 3]:
        got = comp.to_f64_half(n)
        assert type(got) is float
        assert got == ref.to_f64_half(n), n
    for n in [0, -1, 2**31 - 1, -(2**31), 123456789]:
        assert comp.i32_from_i64(n) == ref.i32_from_i64(n) == n


def test_convert_array(build, opt):
    comp, ref = build("intwidth", opt)
    x = np.random.default_rng(14).uniform(-1e6, 1e6, 257)
    out1, out2 = np.zeros(257, np.int32), np.zeros(257, np.int32)
    assert comp.convert_array(x, out1) == ref.convert_array(x, out2)
    np.testing.assert_array_equal(out1, out2)
    np.testing.assert_array_equal(out1, np.trunc(x).astype(np.int32))


def test_float32_arithmetic(build, opt):
    comp, ref = build("float32", opt)
    rng = np.random.default_rng(15)
    x = rng.random(1000, dtype=np.float32)
    got = comp.f32_sum(x)
    assert type(got) is float
    np.testing.assert_allclose(got, ref.f32_sum(x), rtol=1e-4)
    np.testing.assert_allclose(comp.f32_norm2(x), ref.f32_norm2(x), rtol=1e-12)
    for v in [0.0, 1.5, -2.25, 3.1, 1e3]:
        np.testing.assert_allclose(comp.f32_poly(v), ref.f32_poly(np.float32(v)), rtol=1e-6)
    # float32(x) rounds to the nearest float32: exact.
    for v in [0.1, 1 / 3, -2.7, 1e10 + 1, 16777217.0]:
        assert comp.f32_round(v) == ref.f32_round(v) == float(np.float32(v)), v


def test_float32_storage(build, opt):
    comp, ref = build("float32", opt)
    rng = np.random.default_rng(16)
    x = rng.standard_normal(333).astype(np.float32)
    y1 = rng.standard_normal(333).astype(np.float32)
    y2 = y1.copy()
    assert comp.f32_axpy(y1, 0.75, x) == ref.f32_axpy(y2, np.float32(0.75), x)
    assert y1.dtype == np.float32
    np.testing.assert_allclose(y1, y2, rtol=1e-6, atol=1e-6)
    A = rng.standard_normal((7, 9)).astype(np.float32)
    B = comp.f32_scale_2d(A, 2.5)
    assert B.dtype == np.float32 and B.shape == (7, 9)
    np.testing.assert_allclose(B, ref.f32_scale_2d(A, np.float32(2.5)), rtol=1e-6)
