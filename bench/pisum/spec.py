"""pi_sum, the Julia microbenchmark (perf.jl / perf.py: iteration_pi_sum): the
partial sum of 1/k^2 for k = 1..n, recomputed reps times. Measures a scalar
float loop (int multiply, int-to-float conversion, division, accumulation)."""

import math

ENTRY = "pisum"
PFOR = False
TOLERANCE = "exact (float64 equality: every version adds the same terms in the same order)"

# Julia's size is reps=500, n=10000 (~0.25 s in Python here); the full run
# repeats the outer loop 20x as often so that Python takes ~5 s.
SIZES = {"small": (10, 10_000), "full": (10_000, 10_000)}


def generate(size):
    # Nothing random: the kernel's only inputs are its two loop counts.
    return SIZES[size]


def arguments(data, version):
    reps, n = data
    return (reps, n)


def check(expected, got):
    got = float(got)
    assert got == expected, (f"pisum = {got!r}, expected {expected!r} "
                             f"(relative difference {abs(got - expected) / abs(expected):.3g})")
    # Julia's own sanity check on the value.
    assert abs(got - math.pi ** 2 / 6) < 2e-4, f"pisum = {got!r} is not close to pi^2/6"
