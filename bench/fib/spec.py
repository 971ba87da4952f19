"""Recursive Fibonacci, the Julia microbenchmark (perf.jl: fib(20)): the cost
of a call."""

ENTRY = "fib"
PFOR = False
TOLERANCE = "exact (an integer)"

SIZES = {"small": 20, "full": 36}


def generate(size):
    return SIZES[size]


def arguments(n, version):
    return (n,)


def check(expected, got):
    assert int(got) == expected, f"fib = {got}, expected {expected}"
