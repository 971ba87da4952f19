"""Measures whole-array kernels compiled by pyddc against NumPy (not a test:
ratios are reported, never asserted).

Each case is a function in bench/kernels/arrays.pydd written the way a NumPy
user writes it (operators on arrays, library calls, methods such as
`X.sum(1)`), compiled with pydd.compile at the default -O3, and the same
expression evaluated by NumPy in this process. Before timing, the compiled
result must equal NumPy's (dtype, shape, np.allclose; exact for integers and
bools); a case that differs is reported as MISMATCH and not timed. Timing is
best-of-N with time.perf_counter after a warm-up, NumPy and pydd samples
interleaved, each sample long enough (several calls if need be) to read
reliably. The ratio is pydd / NumPy: below 1 means pydd is faster.

Groups: element-wise expressions, reductions, branches (loops whose test
goes either way, at several shares of taken tests), `@` (OpenBLAS: the compiled
module and NumPy call the same libopenblas in this process, hence the same
thread count, reported in the header), and slices (views in loops). For the
loop cases NumPy runs the same loop in Python; a second row compares with
the vectorized NumPy spelling a NumPy user would write instead. The
allocation group sweeps `t = u + u` in a loop over temporaries of 1 KB to
64 MB (the same loop in Python for NumPy).

    /usr/bin/python3 bench/arrays.py [--quick] [--repeats N] [-k SUBSTRING]

The default run (10^6 and 10^7 elements, 1000x1000 products, best of 15)
takes about a minute on the 2-core development machine, plus ~10 s for the
-O3 build of the kernel the first time (pydd.compile caches it); --quick
(10^5 elements, 200x200 products, best of 3) about 10 s. Set
OPENBLAS_NUM_THREADS to change the thread count of both sides of `@`.
"""
import argparse
import ctypes
import gc
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import pydd  # noqa: E402  (also switches NumPy to NEP 50 promotion, as kernels assume)
from timing import best_of  # noqa: E402

KERNEL = os.path.join(ROOT, "bench", "kernels", "arrays.pydd")


# ---- environment ---------------------------------------------------------------------


def loaded_openblas():
    """Paths of the OpenBLAS libraries mapped into this process."""
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "openblas" in os.path.basename(path):
                paths.add(os.path.realpath(path))
    return sorted(paths)


def openblas_threads():
    """OpenBLAS's thread count as the loaded library reports it, or None."""
    for path in loaded_openblas():
        try:
            lib = ctypes.CDLL(path)
            return int(lib.openblas_get_num_threads())
        except (OSError, AttributeError):
            continue
    return None


def same(got, want):
    """None if the compiled result matches NumPy's, else why not."""
    if isinstance(want, np.ndarray):
        if not isinstance(got, np.ndarray):
            return f"got {type(got).__name__}, want an array"
        if got.dtype != want.dtype or got.shape != want.shape:
            return f"got {got.dtype}{got.shape}, want {want.dtype}{want.shape}"
        if want.dtype.kind in "biu":
            return None if np.array_equal(got, want) else "values differ"
        return None if np.allclose(got, want) else "values differ"
    want = want.item() if isinstance(want, np.generic) else want
    if isinstance(want, (bool, int)):
        return None if got == want and type(got) is type(want) else f"got {got!r}, want {want!r}"
    return None if np.allclose(got, want) else f"got {got!r}, want {want!r}"


# ---- cases ---------------------------------------------------------------------------


def py_row_sums_loop(X):
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = X[i, :].sum()
    return out


def py_col_means_loop(X):
    out = np.empty(X.shape[1])
    for j in range(X.shape[1]):
        out[j] = X[:, j].mean()
    return out


def py_normalize_rows(A, s):
    out = np.zeros_like(A)
    for i in range(A.shape[0]):
        out[i, :] = A[i, :] / s[i]
    return out


def vector_cases(k, n):
    """Element-wise and reduction cases on n elements (2-D ones: rows of 1000)."""
    rng = np.random.default_rng(n)
    a, b, c = (rng.random(n) + 0.5 for _ in range(3))
    a2 = a * (1 + 1e-9)
    ai, bi = (rng.integers(-10**6, 10**6, n) for _ in range(2))
    mask = (rng.random(n) < 0.1).astype(np.int32)
    af, bf, cf = (x.astype(np.float32) for x in (a, b, c))
    cols = 1000 if n >= 10**4 else 100
    X = rng.random((n // cols, cols))
    mu, w = X.mean(0), rng.random(cols)
    size, shape2 = f"1e{round(math.log10(n))}" if n == 10 ** round(math.log10(n)) else str(n), \
        f"{X.shape[0]}x{X.shape[1]}"
    ew, red = "element-wise", "reductions"
    return [
        (ew, "a * b + c", size, lambda: a * b + c, lambda: k.fma(a, b, c)),
        (ew, "sqrt(a) * 2.0 - b / c", size, lambda: np.sqrt(a) * 2.0 - b / c, lambda: k.sqrt_mix(a, b, c)),
        (ew, "where(a > b, a - b, 0.0)", size, lambda: np.where(a > b, a - b, 0.0), lambda: k.clip_where(a, b)),
        (ew, "(a - b) ** 2", size, lambda: (a - b) ** 2, lambda: k.squared_diff(a, b)),
        (ew, "X - mu (row vector, 2-D)", shape2, lambda: X - mu, lambda: k.center_rows(X, mu)),
        (ew, "X * w + 1.0 (row vector, 2-D)", shape2, lambda: X * w + 1.0, lambda: k.scale_cols(X, w)),
        (ew, "int64: a * 3 + b - a", size, lambda: ai * 3 + bi - ai, lambda: k.int_arith(ai, bi)),
        (ew, "int64: a // 7 + b % 5", size, lambda: ai // 7 + bi % 5, lambda: k.int_divmod(ai, bi)),
        (ew, "float32: a * b + c * 0.5", size, lambda: af * bf + cf * 0.5, lambda: k.f32_fma(af, bf, cf)),
        (ew, "m * log(1.0 - exp(-a)) (m: 10% ones)", size, lambda: mask * np.log(1.0 - np.exp(-a)),
         lambda: k.masked_log(mask, a)),
        (red, "a.sum()", size, lambda: a.sum(), lambda: k.total(a)),
        (red, "a.max()", size, lambda: a.max(), lambda: k.largest(a)),
        (red, "a.argmax()", size, lambda: a.argmax(), lambda: k.where_largest(a)),
        (red, "a.mean()", size, lambda: a.mean(), lambda: k.average(a)),
        (red, "X.sum(0)", shape2, lambda: X.sum(0), lambda: k.col_sums(X)),
        (red, "X.sum(1)", shape2, lambda: X.sum(1), lambda: k.row_sums(X)),
        (red, "((X - mu) ** 2).sum(1)", shape2, lambda: ((X - mu) ** 2).sum(1), lambda: k.row_distances(X, mu)),
        (red, "(a < 0.0).any()", size, lambda: (a < 0.0).any(), lambda: k.any_negative(a)),
        (red, "(a > -10.0).all()", size, lambda: (a > -10.0).all(), lambda: k.all_positive(a)),
        (red, "allclose(a, b)", size, lambda: np.allclose(a, a2), lambda: k.close(a, a2)),
    ]


def branch_cases(k, n):
    """Loops whose test goes either way, at several shares of taken tests:
    a loop over `where(x > t)` and a sum whose log term only the ones of a
    0/1 mask need (the emitter runs both in chunks, keeping the indices a
    chunk takes without a branch when the branch would mispredict)."""
    rng = np.random.default_rng(n + 3)
    x = rng.random(n)
    a = rng.exponential(2.0, n) + 1e-3
    size = f"1e{round(math.log10(n))}"
    cases = []
    for share in (0.0, 0.01, 0.09, 0.5, 1.0):
        t = 1.0 - share if 0.0 < share < 1.0 else (-1.0 if share else 2.0)
        cases.append(("branches", f"for k in where(x > t): s += x[k] ({share:.0%} taken)", size,
                      lambda t=t: x[x > t].sum(), lambda t=t: k.masked_sum(x, t)))
    for share in (0.0, 0.09, 0.5, 1.0):
        m = (rng.random(n) < share).astype(np.int32)
        cases.append(("branches", f"sum(m * log(1.0 - exp(-a))) (m: {share:.0%} ones)", size,
                      lambda m=m: np.sum(m * np.log(1.0 - np.exp(-a))), lambda m=m: k.guarded_sum(m, a)))
    return cases


def slice_cases(k, rows, cols):
    rng = np.random.default_rng(rows * cols + 1)
    X = rng.random((rows, cols))
    s = rng.random(rows) + 0.5
    shape2 = f"{rows}x{cols}"
    sl = "slices"
    return [
        (sl, "out[i] = X[i, :].sum() loop", shape2, lambda: py_row_sums_loop(X), lambda: k.row_sums_loop(X)),
        (sl, "  (NumPy: X.sum(1))", shape2, lambda: X.sum(1), lambda: k.row_sums_loop(X)),
        (sl, "out[j] = X[:, j].mean() loop", shape2, lambda: py_col_means_loop(X), lambda: k.col_means_loop(X)),
        (sl, "  (NumPy: X.mean(0))", shape2, lambda: X.mean(0), lambda: k.col_means_loop(X)),
        (sl, "out[i, :] = A[i, :] / s[i] loop", shape2, lambda: py_normalize_rows(X, s),
         lambda: k.normalize_rows(X, s)),
        (sl, "  (NumPy: A / s[:, None])", shape2, lambda: X / s[:, None], lambda: k.normalize_rows(X, s)),
    ]


def py_temporaries_loop(u, reps):
    s = 0.0
    for r in range(reps):
        t = u + u
        s += t[r % len(t)]
        u[0] = s * 0.0 + 0.5
    return s


def allocation_cases(k, sizes_kb):
    """`t = u + u` in a loop, per size: a temporary allocated while the last
    one is still alive (the allocator's worst case). Both sides run the same
    loop, NumPy's in Python, about 2*10^6 elements in all per call."""
    cases = []
    for kb in sizes_kb:
        u = np.full(kb * 1024 // 8, 0.5)
        reps = max(2, 2 * 10**6 // len(u))
        size = f"{kb // 1024} MB" if kb >= 1024 else f"{kb} KB"
        cases.append(("allocation", "t = u + u in a loop", size,
                      lambda u=u, reps=reps: py_temporaries_loop(u, reps),
                      lambda u=u, reps=reps: k.temporaries_loop(u, reps)))
    return cases


def matmul_cases(k, n, mv_sizes):
    rng = np.random.default_rng(n + 2)
    A, B = rng.random((n, n)), rng.random((n, n))
    Af, Bf = A.astype(np.float32), B.astype(np.float32)
    mm = "@ (OpenBLAS)"
    cases = [
        (mm, "A @ B float64", f"{n}x{n}", lambda: A @ B, lambda: k.matmul(A, B)),
        (mm, "A @ B float32", f"{n}x{n}", lambda: Af @ Bf, lambda: k.matmul_f32(Af, Bf)),
    ]
    for m in mv_sizes:
        M, x = rng.random((m, m)), rng.random(m)
        cases.append((mm, "A @ x float64", f"{m}x{m}", lambda M=M, x=x: M @ x, lambda M=M, x=x: k.matvec(M, x)))
    return cases


# ---- main ----------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, help="samples per measurement (default 15; --quick 3)")
    parser.add_argument("-k", dest="only", help="run only cases whose name contains this")
    args = parser.parse_args()

    if args.quick:
        sizes, slice_shapes, mm_n, mv_sizes = [10**5], [(300, 300)], 200, [300]
        alloc_kb = [1, 512, 4096]
        repeats, min_sample = args.repeats or 3, 0.005
    else:
        sizes, slice_shapes, mm_n, mv_sizes = [10**6, 10**7], [(1000, 1000), (10000, 1000)], 1000, [1000, 4000]
        alloc_kb = [1, 16, 64, 256, 512, 1024, 2048, 4096, 8192, 65536]
        repeats, min_sample = args.repeats or 15, 0.005

    start = time.perf_counter()
    k = pydd.compile(KERNEL)  # -O3, cached per source and options
    build_s = time.perf_counter() - start
    libs = loaded_openblas()
    threads = openblas_threads()
    print(f"pyddc: {pydd.find_pyddc()}; {os.path.relpath(KERNEL, ROOT)} at -O3 "
          f"({build_s:.1f} s to build or load)")
    print(f"NumPy {np.__version__}; {os.cpu_count()} CPUs; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, OpenBLAS reports {threads} threads; "
          f"libraries: {', '.join(libs) or 'none'}")
    print(f"best of {repeats} samples; ratio = pydd / NumPy (< 1: pydd faster)\n")

    def groups():
        for n in sizes:
            yield lambda n=n: vector_cases(k, n)
        yield lambda: branch_cases(k, sizes[0])
        yield lambda: matmul_cases(k, mm_n, mv_sizes)
        for rows, cols in slice_shapes:
            yield lambda rows=rows, cols=cols: slice_cases(k, rows, cols)
        yield lambda: allocation_cases(k, alloc_kb)

    rows = []
    for make in groups():
        for group, name, size, f_np, f_pd in make():
            if args.only and args.only not in name:
                continue
            want, got = f_np(), f_pd()  # also the warm-up
            problem = same(got, want)
            del want, got
            if problem:
                rows.append((group, name, size, None, None, problem))
                print(f"| {name} | {size} | MISMATCH: {problem} |", flush=True)
                continue
            t_np, t_pd = best_of(f_np, f_pd, repeats, min_sample)
            rows.append((group, name, size, t_np, t_pd, None))
            print(".", end="", file=sys.stderr, flush=True)
        gc.collect()

    print(file=sys.stderr)
    print("| group | case | size | NumPy ms | pydd ms | ratio |")
    print("|---|---|---|---:|---:|---:|")
    for group, name, size, t_np, t_pd, problem in rows:
        if problem:
            print(f"| {group} | {name} | {size} | | | MISMATCH: {problem} |")
        else:
            print(f"| {group} | {name} | {size} | {t_np * 1e3:.3f} | {t_pd * 1e3:.3f} | {t_pd / t_np:.2f} |")
    timed = [r for r in rows if r[5] is None and not r[1].startswith("  (")]
    if timed:
        print("\ngeometric mean of ratios (same-code rows):")
        for group in dict.fromkeys(r[0] for r in timed):
            ratios = [r[4] / r[3] for r in timed if r[0] == group]
            print(f"  {group}: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} over {len(ratios)} cases")
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
