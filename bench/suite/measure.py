"""Validating and timing the versions of one kernel, in this process."""

import math
import statistics
import time
import traceback


def _call(fn, args):
    start = time.perf_counter()
    returned = fn(*args)
    return returned, time.perf_counter() - start


def timed_calls(first, runs, budget):
    """How many calls to time after a warm-up call that took `first` seconds:
    `runs`, fewer when they would take more than `budget` seconds, none when
    the warm-up alone did (it is then the only sample)."""
    if first >= budget:
        return 0
    return max(1, min(runs, int(budget // max(first, 1e-9))))


def measure_kernel(kernel, size, versions, runs, validate_only=False, strict=False, log=print, budget=math.inf):
    """Runs every version of `kernel` on the `size` data.

    Python's result is the reference; every other version's first call is
    checked against it before it is timed. Each version gets one warm-up call
    (for Numba it includes the JIT compile), then `runs` timed calls, each on a
    fresh argument tuple; the time is taken at the Python call site, as the
    paper did. A version whose calls are slow gets fewer timed calls so that
    they fit `budget` seconds (see timed_calls). Returns {version: record}; a
    record has "median_s", "times_s", "first_call_s" and the version's
    compile figures, or "error" when it failed to build or disagreed with
    Python (strict: raise instead).
    """
    data = kernel.generate(size)
    order = ["python"] + [v for v in versions if v != "python"]
    records = {}
    expected = None
    for version in order:
        try:
            module = kernel.build(version)
            fn = getattr(module, kernel.entry)
            args = kernel.arguments(data, version)
            returned, first = _call(fn, args)
            got = kernel.result(returned, args)
            if version == "python":
                expected = got
            else:
                try:
                    kernel.check(expected, got)
                except AssertionError as e:
                    raise AssertionError(f"{kernel.name}/{version} disagrees with Python: {e}") from None
        except Exception as e:  # a failed version is reported, the others still run
            if strict:
                raise
            records[version] = {"error": f"{type(e).__name__}: {e}".strip()}
            log(f"  {version:8} FAILED: {records[version]['error'].splitlines()[0]}")
            if version == "python":
                log("".join(traceback.format_exception(e)))
                return records
            continue
        record = {"first_call_s": first, **kernel.compile_stats.get(version, {})}
        if version not in versions:  # the reference only
            continue
        if not validate_only:
            n = timed_calls(first, runs, budget)
            times = [_call(fn, kernel.arguments(data, version))[1] for _ in range(n)] or [first]
            record["times_s"] = times
            record["median_s"] = statistics.median(times)
            if version == "numba":  # what the first call spent compiling
                record["jit_s"] = max(0.0, first - record["median_s"])
            log(f"  {version:8} {record['median_s']:10.4f} s")
        else:
            log(f"  {version:8} agrees with Python")
        records[version] = record
    return records
