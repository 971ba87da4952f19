"""Recursive in-place quicksort, the Julia microbenchmark (perf.jl's qsort!,
perf.py's qsort_kernel): middle-element pivot, Hoare-style i/j scan, recursion
on the left part and a loop on the right. Measures recursion, scalar loads and
stores, and data-dependent branches on a float64 array."""

import numpy as np

ENTRY = "quicksort"
PFOR = False
TOLERANCE = "exact (the sorted float64 array, element for element)"

# Python (scalar indexing of a NumPy array) sorts 10^6 elements in ~4 s,
# 2*10^6 in ~9 s on the 2-core machine.
SIZES = {"small": 5000, "full": 2_000_000}


def generate(size):
    rng = np.random.default_rng(20240607)
    return rng.random(SIZES[size])


def arguments(data, version):
    # The kernel sorts in place: every call gets its own copy.
    a = data.copy()
    return (a, 0, len(a) - 1)


def result(returned, args):
    return args[0]


def check(expected, got):
    got = np.asarray(got)
    assert got.shape == expected.shape, f"shape {got.shape}, expected {expected.shape}"
    assert got.dtype == expected.dtype, f"dtype {got.dtype}, expected {expected.dtype}"
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (f"{bad.size} of {got.size} elements differ; first at {bad[0]}: "
                           f"{got[bad[0]]!r}, expected {expected[bad[0]]!r}")
