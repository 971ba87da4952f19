"""range() loops at the int64 limits end after as many iterations as
Python's range has values, serial and pfor, literal and run-time steps
(issue 15: `range(0, 2**63-1, 2**62)` looped forever)."""

import pytest

M = 2**63 - 1
CASES = [
    (0, M, 2**62),
    (-M - 1, M, 2**62),
    (-M - 1, M, M),
    (M, -M - 1, -(2**62)),
    (M, -M - 1, -M - 1),
    (0, 10, 3),
    (10, 0, -3),
    (0, -10, 3),
    (M - 5, M, 2),
    (-M - 1, -M + 4, 3),
]


@pytest.mark.parametrize("start,stop,step", CASES)
def test_range_length_and_last_value(build, opt, start, stop, step):
    comp, ref = build("range_extremes", opt)
    assert comp.count(start, stop, step) == len(range(start, stop, step)) == ref.count(start, stop, step)
    assert comp.last(start, stop, step) == ref.last(start, stop, step)


def test_literal_step(build, opt):
    comp, ref = build("range_extremes", opt)
    for start in (0, -M - 1, M - 1, 5):
        assert comp.total_literal_step(start) == ref.total_literal_step(start)
