"""pfor, isolated and finish/async blocks give the sequential result."""

import numpy as np


def test_pfor_independent_iterations(build, opt):
    comp, ref = build("parallel", opt)
    rng = np.random.default_rng(70)
    x = rng.normal(size=100_003)
    y1, y2 = np.zeros_like(x), np.zeros_like(x)
    assert comp.scale_pfor(x, y1, 1.5) == ref.scale_pfor(x, y2, 1.5) == len(x)
    np.testing.assert_array_equal(y1, y2)
    A = rng.normal(size=(501, 37))
    o1, o2 = np.zeros(501), np.zeros(501)
    assert comp.row_sums(A, o1) == ref.row_sums(A, o2)
    np.testing.assert_allclose(o1, o2, rtol=1e-13)


def test_isolated_in_pfor(build, opt):
    comp, ref = build("parallel", opt)
    x = np.random.default_rng(71).integers(-1000, 1000, 200_001)
    for t in [-2000, -10, 0, 500, 2000]:
        assert comp.count_above(x, t) == ref.count_above(x, t), t


def test_finish_async(build, opt):
    comp, ref = build("parallel", opt)
    rng = np.random.default_rng(72)
    x1, y1 = rng.normal(size=10_000), rng.normal(size=10_000)
    x2, y2 = x1.copy(), y1.copy()
    np.testing.assert_allclose(comp.two_tasks(x1, y1), ref.two_tasks(x2, y2), rtol=1e-12)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
