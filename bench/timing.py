"""Timing shared by the benchmarks: best-of-N per-call seconds of two
functions, their samples interleaved so that load on the machine hits both."""

import gc
import math
import time


def per_call(fn, number):
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def calls_per_sample(fn, min_sample):
    """How many calls make a sample of at least min_sample seconds."""
    t = per_call(fn, 1)
    return max(1, min(10000, math.ceil(min_sample / max(t, 1e-7))))


def best_of(f_base, f_pd, repeats, min_sample):
    """Best per-call seconds of the baseline and of pydd, samples interleaved."""
    n_base = calls_per_sample(f_base, min_sample)
    n_pd = calls_per_sample(f_pd, min_sample)
    best_base = best_pd = math.inf
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            best_base = min(best_base, per_call(f_base, n_base))
            best_pd = min(best_pd, per_call(f_pd, n_pd))
    finally:
        if gc_was_enabled:
            gc.enable()
    return best_base, best_pd
