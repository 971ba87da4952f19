"""Comparisons and boolean logic: chained comparisons (operands evaluated
once, evaluation stops at the first false link), and/or short-circuit,
conditional expressions, abs/min/max."""

import itertools

import numpy as np
import pytest


def calls_array():
    return np.zeros(1, np.int64)


def test_chained_comparisons(build, opt):
    comp, ref = build("compare", opt)
    for lo, x, hi in itertools.product([-2, 0, 3], [-3, -2, 0, 2, 3, 5], [0, 3, 6]):
        got = comp.in_range(lo, x, hi)
        assert type(got) is bool
        assert got == ref.in_range(lo, x, hi) == (lo <= x < hi), (lo, x, hi)
    vals = [-1.0, 0.0, 0.5, 2.0]
    for a, b, c, d in itertools.product(vals, repeat=4):
        assert comp.chain4(a, b, c, d) == ref.chain4(a, b, c, d), (a, b, c, d)
    for a, b, c in itertools.product([1, 2], repeat=3):
        assert comp.chain_eq(a, b, c) == ref.chain_eq(a, b, c), (a, b, c)
        # a != b != c does not compare a with c.
        assert comp.chain_ne(a, b, c) == ref.chain_ne(a, b, c), (a, b, c)
    for a, b, c, d in itertools.product([0, 2], [1.5, -1.0], [1, -2], [0.5, 1.0]):
        assert comp.chain_mixed(a, b, c, d) == ref.chain_mixed(a, b, c, d), (a, b, c, d)


def test_chained_comparison_middle_evaluated_once(build, opt):
    comp, ref = build("compare", opt)
    for lo, x, hi in [(0, 5, 10), (0, -5, 10), (0, 15, 10), (3, 3, 3)]:
        c1, c2 = calls_array(), calls_array()
        assert comp.chain_side(lo, x, hi, c1) == ref.chain_side(lo, x, hi, c2)
        assert c1[0] == c2[0] == 1, (lo, x, hi)
    for lo, x, hi in [(0.0, 0.5, 1.0), (0.5, 0.5, 1.0), (0.0, 2.0, 1.0)]:
        c1, c2 = calls_array(), calls_array()
        assert comp.chain_float_side(lo, x, hi, c1) == ref.chain_float_side(lo, x, hi, c2)
        assert c1[0] == c2[0] == 1


def test_chained_comparison_stops_at_first_false(build, opt):
    comp, ref = build("compare", opt)
    seen = set()
    for args in itertools.product([1, 2, 3], repeat=4):
        c1, c2 = calls_array(), calls_array()
        assert comp.chain_all_calls(*args, c1) == ref.chain_all_calls(*args, c2), args
        assert c1[0] == c2[0], args
        seen.add(int(c2[0]))
    assert seen == {2, 3, 4}  # the inputs exercise every stopping point


def test_chained_comparison_in_conditions(build, opt):
    comp, ref = build("compare", opt)
    x = np.random.default_rng(20).normal(size=1000)
    for lo, hi in [(-0.5, 0.5), (0.0, 10.0), (1.0, -1.0)]:
        assert comp.count_in_range(x, lo, hi) == ref.count_in_range(x, lo, hi)
    for n, lo, hi in [(0, 0, 20), (-5, 0, 20), (1, 0, 1000), (19, 0, 20)]:
        assert comp.chain_while(n, lo, hi) == ref.chain_while(n, lo, hi)


def test_and_or_short_circuit(build, opt):
    comp, ref = build("compare", opt)
    for a, b in itertools.product([-1, 0, 1], [-1, 1]):
        for fn in ("and_short", "or_short"):
            c1, c2 = calls_array(), calls_array()
            assert getattr(comp, fn)(c1, a, b) == getattr(ref, fn)(c2, a, b), (fn, a, b)
            assert c1[0] == c2[0], (fn, a, b)
    for p, q, r in itertools.product([False, True], repeat=3):
        c1, c2 = calls_array(), calls_array()
        got = comp.and_or_calls(c1, p, q, r)
        assert type(got) is bool
        assert got == ref.and_or_calls(c2, p, q, r), (p, q, r)
        assert c1[0] == c2[0], (p, q, r)
        assert comp.not_and_or(p, q, r) == ref.not_and_or(p, q, r), (p, q, r)


def test_short_circuit_guards_division(build, opt):
    comp, ref = build("compare", opt)
    for a, b in [(6, 3), (6, 4), (6, 0), (0, 0), (-9, 3)]:
        assert comp.divisible(a, b) == ref.divisible(a, b), (a, b)
    for a, b in [(1.0, 4.0), (1.0, 0.0), (-3.0, -0.0)]:
        assert comp.safe_ratio(a, b) == ref.safe_ratio(a, b), (a, b)


def test_conditional_expressions(build, opt):
    comp, ref = build("compare", opt)
    for x in [-20, -11, -10, -1, 0, 1, 7]:
        assert comp.sign_class(x) == ref.sign_class(x), x
    for c in (False, True):
        c1, c2 = calls_array(), calls_array()
        assert comp.cond_calls(c1, c, 3, 4) == ref.cond_calls(c2, c, 3, 4)
        assert c1[0] == c2[0] == 1


def test_abs_min_max(build, opt):
    comp, ref = build("compare", opt)
    for a, b, c in itertools.product([-3, 0, 5], [-4, 5], [-1.0, 0.25, 2.0]):
        assert comp.abs_min_max(a, b, c) == ref.abs_min_max(a, b, c), (a, b, c)
