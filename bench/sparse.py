"""Measures SparseMat kernels compiled by pyddc against scipy.sparse (not a
test: ratios are reported, never asserted).

Each case is a function in bench/kernels/sparse.pydd, the pydd spelling of a
SciPy one-liner: spmv (`S @ x`), spmm (`A @ B`), spm_mul (`A.multiply(B)`,
sparse.sparse, and `A.multiply(x)`, a dense row), the row sums `S.sum(1)`, and
`S @ x` written as a loop over `S.row(i)` (summed in a scalar, or into
`out[i]`) and over `S.nonzeros()`. They run on a random 10^5 x 10^5
float64 matrix (10 entries per row; 4 per row for the spmm operands, whose
product has ~16), the sampled product `S.multiply(X @ Y.T)` (S 10^4 x 10^4
at 0.1% density, X and Y 10^4 x 64: only S's entries of the product are
computed) and triangle counting's masked product `A.multiply(A @ A)` and on /work/shared/data/jhu.mtx (a 5157-node graph,
Matrix Market, read with scipy.io.mmread, as float64; its spm_mul is the
triangle-counting step `A.multiply(A @ A)`), compiled with pydd.compile at
the default -O3, against SciPy in this process.

Matrices are passed as SciPy builds them (int32 indices, read in place) and,
for spmv, once more with int64 indices.
Before timing, the compiled result must equal SciPy's (sparse: shape, dtype,
structure after sorting rows, np.allclose values; dense: dtype, shape,
np.allclose); a case that differs is reported as MISMATCH and not timed.
Timing is best-of-N with time.perf_counter after a warm-up, SciPy and pydd
samples interleaved. The ratio is pydd / SciPy: below 1 means pydd is faster.

    /usr/bin/python3 bench/sparse.py [--quick] [--repeats N] [-k SUBSTRING]

The default run (best of 15) takes about a minute on the 2-core development
machine, plus the -O3 build of the kernels the first time (pydd.compile
caches it); --quick (10^4 rows, best of 3) about 15 seconds.
"""
import argparse
import gc
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import pydd  # noqa: E402
from timing import best_of  # noqa: E402

KERNEL = os.path.join(ROOT, "bench", "kernels", "sparse.pydd")
JHU = "/work/shared/data/jhu.mtx"


def same(got, want):
    """None if the compiled result matches SciPy's, else why not."""
    if sp.issparse(want):
        if not sp.issparse(got):
            return f"got {type(got).__name__}, want a sparse matrix"
        g, w = sp.csr_matrix(got), sp.csr_matrix(want)
        g.sort_indices()
        w.sort_indices()
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"got {g.dtype}{g.shape}, want {w.dtype}{w.shape}"
        if g.nnz != w.nnz or not np.array_equal(g.indptr, w.indptr) or not np.array_equal(g.indices, w.indices):
            return f"structure differs (nnz {g.nnz}, want {w.nnz})"
        return None if np.allclose(g.data, w.data) else "values differ"
    want = np.asarray(want)
    if not isinstance(got, np.ndarray):
        return f"got {type(got).__name__}, want an array"
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{got.shape}, want {want.dtype}{want.shape}"
    return None if np.allclose(got, want) else "values differ"


# ---- matrices ------------------------------------------------------------------------


def random_csr(rng, n, per_row):
    """An n x n float64 csr_matrix with about per_row entries per row."""
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, n, n * per_row)
    S = sp.csr_matrix((rng.random(n * per_row) + 0.5, (rows, cols)), shape=(n, n))
    S.sum_duplicates()
    return S


def with_int64_indices(S):
    T = S.copy()
    T.indices, T.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
    return T


def cases(k, name, A, A4, B4, R, x):
    """(matrix, case, nnz, SciPy fn, pydd fn) for one matrix A (A4 @ B4 for spmm,
    R a matrix whose intersection with A is A's structure)."""
    A64 = with_int64_indices(A)
    return [
        (name, "spmv: S @ x", A.nnz, lambda: A @ x, lambda: k.spmv_f64(A, x)),
        (name, "spmv: S @ x (int64 indices)", A.nnz, lambda: A64 @ x, lambda: k.spmv_f64(A64, x)),
        (name, "spmv as a loop over S.row(i)", A.nnz, lambda: A @ x, lambda: k.spmv_rows_f64(A, x)),
        (name, "spmv as a loop over S.row(i) into out[i]", A.nnz, lambda: A @ x, lambda: k.spmv_rows_into_f64(A, x)),
        (name, "spmv as a loop over S.nonzeros()", A.nnz, lambda: A @ x, lambda: k.spmv_nonzeros_f64(A, x)),
        (name, "spmm: A @ B", f"{A4.nnz} x {B4.nnz}", lambda: A4 @ B4, lambda: k.spmm_f64(A4, B4)),
        (name, "spm_mul: A.multiply(B) (sparse)", f"{A.nnz} x {R.nnz}", lambda: A.multiply(R),
         lambda: k.spm_mul_f64(A, R)),
        (name, "spm_mul: A.multiply(x) (dense row)", A.nnz, lambda: A.multiply(x),
         lambda: k.spm_mul_row_f64(A, x)),
        (name, "S.sum(1)", A.nnz, lambda: np.asarray(A.sum(1)).ravel(), lambda: k.row_sums_f64(A)),
        (name, "triangle counting: A.multiply(A @ A)", A.nnz, lambda: A.multiply(A @ A), lambda: k.triangles_f64(A)),
    ]


def random_cases(k, n):
    rng = np.random.default_rng(n)
    A = random_csr(rng, n, 10)
    A4, B4 = random_csr(rng, n, 4), random_csr(rng, n, 4)
    R = (A + random_csr(rng, n, 10)).tocsr()  # contains A's structure
    x = rng.random(n)
    # the sampled product: S at 0.1% density, X and Y with 64 columns
    m = n // 10
    S = sp.random(m, m, density=1e-3, format="csr", random_state=rng.integers(1 << 30))
    X, Y = rng.random((m, 64)), rng.random((m, 64))
    sampled = (f"random {m}x{m}", "sampled product: S.multiply(X @ Y.T), X, Y 64 columns", S.nnz,
               lambda: S.multiply(X @ Y.T), lambda: k.sddmm_f64(S, X, Y))
    return cases(k, f"random {n}x{n}", A, A4, B4, R, x) + [sampled]


def jhu_cases(k):
    A = scipy.io.mmread(JHU).tocsr().astype(np.float64)
    A.sort_indices()
    AA = (A @ A).tocsr()  # as SciPy leaves it: rows not sorted
    AAs = AA.sorted_indices()
    x = np.random.default_rng(1).random(A.shape[0])
    name = f"jhu.mtx {A.shape[0]}x{A.shape[1]}"
    return cases(k, name, A, A, A, AA, x) + [
        (name, "spm_mul: A.multiply(B) (sparse, B's rows sorted)", f"{A.nnz} x {AAs.nnz}",
         lambda: A.multiply(AAs), lambda: k.spm_mul_f64(A, AAs))]


# ---- main ----------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^4 rows, few repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, help="samples per measurement (default 15; --quick 3)")
    parser.add_argument("-k", dest="only", help="run only cases whose name contains this")
    args = parser.parse_args()
    n = 10**4 if args.quick else 10**5
    repeats = args.repeats or (3 if args.quick else 15)
    min_sample = 0.01 if args.quick else 0.05

    start = time.perf_counter()
    k = pydd.compile(KERNEL)  # -O3, cached per source and options
    build_s = time.perf_counter() - start
    print(f"pyddc: {pydd.find_pyddc()}; {os.path.relpath(KERNEL, ROOT)} at -O3 ({build_s:.1f} s to build or load)")
    print(f"NumPy {np.__version__}, SciPy {scipy.__version__}; {os.cpu_count()} CPUs")
    print(f"best of {repeats} samples; ratio = pydd / SciPy (< 1: pydd faster)\n")

    groups = [lambda: random_cases(k, n)]
    if os.path.exists(JHU):
        groups.append(lambda: jhu_cases(k))
    else:
        print(f"({JHU} not found: skipped)")

    rows = []
    for make in groups:
        for matrix, name, nnz, f_sp, f_pd in make():
            if args.only and args.only not in name:
                continue
            want = f_sp()
            try:
                got = f_pd()  # also the warm-up
            except Exception as e:  # noqa: BLE001 - reported, the other cases still run
                got = e
            problem = f"{type(got).__name__}: {got}" if isinstance(got, Exception) else same(got, want)
            del want, got
            if problem:
                rows.append((matrix, name, nnz, None, None, problem))
                print(f"| {matrix} | {name} | MISMATCH: {problem} |", flush=True)
                continue
            t_sp, t_pd = best_of(f_sp, f_pd, repeats, min_sample)
            rows.append((matrix, name, nnz, t_sp, t_pd, None))
            print(".", end="", file=sys.stderr, flush=True)
        gc.collect()

    print(file=sys.stderr)
    print("| matrix | case | nnz | SciPy ms | pydd ms | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    for matrix, name, nnz, t_sp, t_pd, problem in rows:
        if problem:
            print(f"| {matrix} | {name} | {nnz} | | | MISMATCH: {problem} |")
        else:
            print(f"| {matrix} | {name} | {nnz} | {t_sp * 1e3:.3f} | {t_pd * 1e3:.3f} | {t_pd / t_sp:.2f} |")
    timed = [r for r in rows if r[5] is None]
    if timed:
        ratios = [r[4] / r[3] for r in timed]
        print(f"\ngeometric mean of ratios: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} "
              f"over {len(ratios)} cases")
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
