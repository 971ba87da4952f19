"""Kernels called from several Python threads at once (the GIL is released
during a call)."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def test_concurrent_calls(build, opt):
    comp, ref = build("spin", opt)
    seeds = [12345, 777]
    for s in seeds:  # correctness against the reference at a size Python runs quickly
        assert comp.lcg_spin(s, 100_000) == ref.lcg_spin(s, 100_000)
    n = 5_000_000
    sequential = {s: comp.lcg_spin(s, n) for s in seeds}
    assert sequential[seeds[0]] != sequential[seeds[1]]

    def work(seed):
        return [comp.lcg_spin(seed, n) for _ in range(4)]

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(work, seeds))
    for seed, got in zip(seeds, results):
        assert got == [sequential[seed]] * 4, seed


def test_concurrent_array_calls(build, opt):
    comp, ref = build("spin", opt)
    outs = [np.zeros(300_000, np.int64) for _ in range(2)]
    seeds = [1, 2]

    def work(i):
        return comp.lcg_fill(outs[i], seeds[i])

    with ThreadPoolExecutor(max_workers=2) as pool:
        last = list(pool.map(work, range(2)))
    for i in range(2):
        expected = np.zeros(1000, np.int64)
        ref.lcg_fill(expected, seeds[i])
        np.testing.assert_array_equal(outs[i][:1000], expected)
        assert last[i] == outs[i][-1] == comp.lcg_spin(seeds[i], len(outs[i]))


def test_gil_released_during_call(build, opt):
    comp, ref = build("spin", opt)
    assert comp.lcg_spin(5, 1000) == ref.lcg_spin(5, 1000)
    # Find a loop count for which one call takes at least 0.3 s.
    n = 1 << 20
    while True:
        t0 = time.perf_counter()
        comp.lcg_spin(1, n)
        if time.perf_counter() - t0 >= 0.3 or n >= 1 << 36:
            break
        n *= 2
    started = threading.Event()

    def work():
        started.set()
        return comp.lcg_spin(1, n)

    with ThreadPoolExecutor(max_workers=1) as pool:
        fut = pool.submit(work)
        started.wait()
        time.sleep(0.05)  # let the worker enter the kernel
        ticks = 0
        # If the call held the GIL, this thread could not run until it returned.
        while not fut.done():
            ticks += 1
            time.sleep(0.001)
        result = fut.result()
    assert result == comp.lcg_spin(1, n)
    assert ticks >= 20, f"main thread ran only {ticks} times during a kernel call"
