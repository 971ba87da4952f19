"""Coverage and speed of pyddc over the NumPy-style corpus (not a test:
figures are reported, never asserted).

The corpus is tests/e2e/corpus/*.pydd: kernels written the way NumPy users
write them (`import numpy as np`, np.-prefixed calls, slices, loops), each
with a typed signature; tests/e2e/corpus/cases.py makes their inputs. For
each kernel this reports

  * whether pyddc compiles it (-O3; else the first diagnostic),
  * whether the compiled result matches NumPy's (the same file executed as
    plain Python with NumPy; np.allclose, rtol 1e-9, exact for integers),
  * pydd/NumPy and pydd/Numba time ratios (below 1: pydd is faster). NumPy
    is the plain Python function; Numba is numba.njit of that same function
    (its first call, which compiles, is not timed). Timing is best-of-N with
    samples interleaved (bench/timing.py).

and the geometric means of the ratios over the kernels that match.

    /usr/bin/python3 bench/corpus.py [--quick] [--repeats N] [-k SUBSTRING]

--quick uses the test sizes (a few seconds, the figures mean little); the
default (bench sizes, best of 5) takes about a minute on the 2-core
development machine, most of it the first -O3 builds and Numba's compiles.
"""
import argparse
import math
import os
import sys
import time
import types
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e", "corpus"))

import numpy as np  # noqa: E402

import pydd  # noqa: E402  (switches NumPy to NEP 50 promotion, as kernels assume)
from cases import ARGS, CORPUS  # noqa: E402
from timing import best_of  # noqa: E402

try:
    import numba
except ImportError:  # the Numba column is left empty
    numba = None


def plain_python(path):
    """The kernel file executed as plain Python (no pydd rewriting)."""
    module = types.ModuleType(path.stem + "_numpy")
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        return np.array_equal(a, b)
    return np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)


def first_line(text):
    lines = [ln for ln in str(text).splitlines() if "error" in ln]
    return (lines[0] if lines else str(text).splitlines()[0]).split("error: ")[-1]


def measure(name, size, repeats, min_sample):
    path = CORPUS / f"{name}.pydd"
    row = {"name": name, "compiles": False, "matches": False, "numpy": None, "numba": None, "note": ""}
    try:
        comp = getattr(pydd.compile(path, opt=3), name)
    except pydd.CompileError as e:
        row["note"] = first_line(e)
        return row
    row["compiles"] = True
    fn = getattr(plain_python(path), name)
    args = ARGS[name](np.random.default_rng(7), size)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        got = comp(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        if not same(got, expected):
            row["note"] = "result differs from NumPy"
            return row
        row["matches"] = True
        t_np, t_pd = best_of(lambda: fn(*args), lambda: comp(*args), repeats, min_sample)
        row["numpy"] = t_pd / t_np
        if numba is not None:
            try:
                jit = numba.njit(fn)
                jitted = jit(*args)
                if not same(jitted, expected):
                    row["note"] = "Numba's result differs"
                else:
                    t_nb, t_pd = best_of(lambda: jit(*args), lambda: comp(*args), repeats, min_sample)
                    row["numba"] = t_pd / t_nb
            except Exception as e:  # noqa: BLE001 - Numba rejects some NumPy code
                row["note"] = "Numba: " + str(e).strip().splitlines()[0][:60]
    return row


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="test sizes, best of 3")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("-k", default="", help="only kernels whose name contains this")
    opts = parser.parse_args()
    size = "test" if opts.quick else "bench"
    repeats = opts.repeats or (3 if opts.quick else 5)
    names = sorted(p.stem for p in CORPUS.glob("*.pydd") if opts.k in p.stem)
    print(f"pydd corpus: {len(names)} kernels, sizes={size}, best of {repeats}, "
          f"numpy {np.__version__}, numba {numba.__version__ if numba else 'absent'}, {os.cpu_count()} cores")
    print(f"{'kernel':18} {'compiles':>8} {'matches':>8} {'pydd/NumPy':>11} {'pydd/Numba':>11}  note")
    rows = []
    start = time.perf_counter()
    for name in names:
        row = measure(name, size, repeats, 0.02 if opts.quick else 0.05)
        rows.append(row)
        fmt = lambda x: f"{x:11.3f}" if x else f"{'-':>11}"  # noqa: E731
        print(f"{name:18} {'yes' if row['compiles'] else 'no':>8} {'yes' if row['matches'] else 'no':>8} "
              f"{fmt(row['numpy'])} {fmt(row['numba'])}  {row['note']}", flush=True)
    compiled = sum(r["compiles"] for r in rows)
    matched = sum(r["matches"] for r in rows)
    print(f"\ncompile: {compiled}/{len(rows)}   match NumPy: {matched}/{len(rows)}   "
          f"geometric mean pydd/NumPy: {geomean([r['numpy'] for r in rows]):.3f}   "
          f"pydd/Numba: {geomean([r['numba'] for r in rows]):.3f}   ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
