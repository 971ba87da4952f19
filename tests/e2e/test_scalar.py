"""Scalar kernels: recursion, while loops, tuple assignment, float loops."""

import numpy as np
import pytest


def test_fib(build, opt):
    comp, ref = build("fib", opt)
    for n in [0, 1, 2, 3, 10, 20, 25]:
        got = comp.fib(n)
        assert type(got) is int
        assert got == ref.fib(n), n


def test_mutual_recursion(build, opt):
    comp, ref = build("fib", opt)
    for n in [0, 1, 2, 7, 100, 301]:
        assert comp.is_even(n) is ref.is_even(n)
        assert comp.is_odd(n) is ref.is_odd(n)
    assert comp.ackermann(2, 3) == ref.ackermann(2, 3)
    assert comp.ackermann(3, 3) == ref.ackermann(3, 3)


def test_gcd(build, opt):
    comp, ref = build("gcd", opt)
    rng = np.random.default_rng(1)
    cases = [(12, 18), (18, 12), (17, 5), (0, 9), (9, 0), (1, 1), (2**40, 2**35 * 3)]
    cases += [tuple(int(v) for v in rng.integers(1, 10**12, 2)) for _ in range(50)]
    for a, b in cases:
        assert comp.gcd(a, b) == ref.gcd(a, b), (a, b)
    # Negative operands: Python's % follows the divisor's sign.
    for a, b in [(-12, 18), (12, -18), (-12, -18), (-7, 3)]:
        assert comp.gcd(a, b) == ref.gcd(a, b), (a, b)


def test_gcd_over_arrays(build, opt):
    comp, ref = build("gcd", opt)
    rng = np.random.default_rng(2)
    x = rng.integers(1, 10**9, 500)
    y = rng.integers(1, 10**9, 500)
    assert comp.gcd_sum(x, y) == ref.gcd_sum(x, y)


def test_tuple_assignment(build, opt):
    comp, ref = build("gcd", opt)
    for n in [0, 1, 2, 10, 50, 90]:
        assert comp.fib_pair(n) == ref.fib_pair(n), n


def test_collatz(build, opt):
    comp, ref = build("collatz", opt)
    rng = np.random.default_rng(3)
    for n in [1, 2, 3, 7, 27, 97, 871, *map(int, rng.integers(1, 10**9, 20))]:
        assert comp.collatz_steps(n) == ref.collatz_steps(n), n
    assert comp.longest_chain(3000) == ref.longest_chain(3000)


def test_pisum(build, opt):
    comp, ref = build("pisum", opt)
    for reps, n in [(1, 1), (1, 10), (3, 1000), (2, 10000), (0, 5)]:
        got = comp.pisum(reps, n)
        assert type(got) is float
        np.testing.assert_allclose(got, ref.pisum(reps, n), rtol=1e-13, atol=0)
