"""pfor, isolated and finish/async blocks give the sequential result."""

import numpy as np


def test_pfor_independent_iterations(build, opt):
    comp, ref = build("parallel", opt)
    rng = np.random.default_rng(70)
    x = rng.normal(size=100_003)
    y1, y2 = np.zeros_like(x), np.zeros_like(x)
    assert comp.scale_pfor(x, y1, 1.5) == ref.scale_pfor(x, y2, 1.5) == len(x)
    np.testing.assert_array_equal(y1, y2)
    A = rng.normal(size=(501, 37))
    o1, o2 = np.zeros(501), np.zeros(501)
    assert comp.row_sums(A, o1) == ref.row_sums(A, o2)
    np.testing.assert_allclose(o1, o2, rtol=1e-13)


def test_isolated_in_pfor(build, opt):
    comp, ref = build("parallel", opt)
    x = np.random.default_rng(71).integers(-1000, 1000, 200_001)
    for t in [-2000, -10, 0, 500, 2000]:
        assert comp.count_above(x, t) == ref.count_above(x, t), t


def test_finish_async(build, opt):
    comp, ref = build("parallel", opt)
    rng = np.random.default_rng(72)
    x1, y1 = rng.normal(size=10_000), rng.normal(size=10_000)
    x2, y2 = x1.copy(), y1.copy()
    np.testing.assert_allclose(comp.two_tasks(x1, y1), ref.two_tasks(x2, y2), rtol=1e-12)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)


# ---- OpenMP: each privatization decision, at 1, 2 and 8 threads ----------
# (8 oversubscribes a 2-core machine, which shakes out races). Results equal
# the Python run exactly, except float sums a reduction adds in another
# order: relative 1e-12.

import os
import subprocess
import sys
from pathlib import Path

import pytest
import scipy.sparse as sp

import pydd
from conftest import run_pyddc

THREADS = (1, 2, 8)
KERNEL = Path(__file__).parent / "kernels" / "parallel_plan.pydd"


@pytest.fixture(autouse=True)
def default_threads():
    yield
    pydd.set_num_threads(0)


def each_thread_count():
    for t in THREADS:
        pydd.set_num_threads(t)
        assert pydd.get_num_threads() == t
        yield t


def test_reductions(build, opt):
    comp, ref = build("parallel_plan", opt)
    rng = np.random.default_rng(80)
    x = rng.normal(size=100_001)
    k = rng.integers(-1000, 1000, size=len(x))
    want = ref.reductions(x, k)
    for t in each_thread_count():
        got = comp.reductions(x, k)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12, err_msg=f"{t} threads")
        assert got[1:7] == tuple(want[1:7]), t
        np.testing.assert_allclose(got[7], want[7], rtol=1e-12, err_msg=f"{t} threads")


def test_private_lastprivate_collapse(build, opt):
    comp, ref = build("parallel_plan", opt)
    rng = np.random.default_rng(81)
    x = rng.normal(size=20_001)
    A = rng.normal(size=(203, 57))
    for t in each_thread_count():
        o1, o2 = np.zeros_like(x), np.zeros_like(x)
        assert comp.lastprivate(x, o1) == ref.lastprivate(x, o2), t
        np.testing.assert_array_equal(o1, o2)
        assert comp.lastprivate(x[:0], o1[:0])[1] == ref.lastprivate(x[:0], o2[:0])[1] == -1
        for fn in ("per_iteration_arrays", "collapsed", "nested_inner"):
            O1, O2 = np.zeros_like(A), np.zeros_like(A)
            assert getattr(comp, fn)(A, O1) == getattr(ref, fn)(A, O2), (fn, t)
            np.testing.assert_array_equal(O1, O2, err_msg=f"{fn}, {t} threads")
        for step in (1, 3, 7):
            o1, o2 = np.zeros_like(x), np.zeros_like(x)
            assert comp.strided(x, o1, step) == ref.strided(x, o2, step), (step, t)
            np.testing.assert_array_equal(o1, o2)
        assert comp.carried(x) == ref.carried(x), t
        o1, o2 = np.zeros(64, np.int64), np.zeros(64, np.int64)
        assert comp.tasks_in_pfor(o1) == ref.tasks_in_pfor(o2)
        np.testing.assert_array_equal(o1, o2)


def test_tasks(build, opt):
    comp, ref = build("parallel_plan", opt)
    rng = np.random.default_rng(82)
    base = [rng.normal(size=5_000) for _ in range(3)]
    for t in each_thread_count():
        a1 = [b.copy() for b in base]
        a2 = [b.copy() for b in base]
        assert comp.tasks_nested(*a1) == ref.tasks_nested(*a2), t
        for u, v in zip(a1, a2):
            np.testing.assert_array_equal(u, v)
        x1, x2 = base[0].copy(), base[0].copy()
        # The task captured a = 1.0 when it was created.
        assert comp.task_capture(x1) == ref.task_capture(x2) == 100.0
        np.testing.assert_array_equal(x1, base[0] + 1.0)
        np.testing.assert_array_equal(x1, x2)


def thread_cpu_ticks():
    """User CPU time (clock ticks) of each OS thread of this process."""
    ticks = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks[tid] = int(fields[11])  # utime: the 14th field of stat
        except OSError:
            pass  # a thread that ended meanwhile
    return ticks


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_two_threads_share_the_work(build):
    """Parallelism happened: with 2 threads, two OS threads each spent a
    good part of the loop's CPU time (CPU time, not wall-clock time, so a
    busy machine does not change the answer)."""
    comp, ref = build("parallel_plan", 3)
    out = np.zeros(64)
    assert comp.busy(4, 10, out) == ref.busy(4, 10, np.zeros(64))
    pydd.set_num_threads(2)
    work = 200_000
    for _ in range(10):
        before = thread_cpu_ticks()
        comp.busy(64, work, out)
        after = thread_cpu_ticks()
        spent = {tid: after[tid] - before.get(tid, 0) for tid in after}
        total = sum(spent.values())
        if total >= 40:  # 0.4 s of CPU at 100 ticks/s: enough to measure
            break
        work *= 2
    busy_threads = [tid for tid, t in spent.items() if t >= 0.25 * total]
    assert len(busy_threads) >= 2, spent
    pydd.set_num_threads(1)
    before = thread_cpu_ticks()
    comp.busy(64, work, out)
    after = thread_cpu_ticks()
    spent = {tid: after[tid] - before.get(tid, 0) for tid in after}
    total = sum(spent.values())
    assert max(spent.values()) >= 0.9 * total, spent


def test_exceptions_leave_the_parallel_loop(build, opt, tmp_path):
    comp, ref = build("parallel_plan", opt)
    checked = pydd.compile(KERNEL, out_dir=tmp_path, opt=int(opt), extra_args=["--bounds-check"])
    x = np.arange(1000, dtype=np.float64)
    A = np.ones((100, 8))
    v = np.ones(8)
    keys = np.arange(500, dtype=np.int64) * 3
    for t in each_thread_count():
        for bad in (0, 517, 999):
            with pytest.raises(IndexError):
                checked.raise_index(x, bad)
            with pytest.raises(IndexError):
                ref.raise_index(x, bad)
        assert checked.raise_index(x, -1) == ref.raise_index(x, -1)
        d = np.ones(1000, np.int64)
        d[333] = 0
        with pytest.raises(ZeroDivisionError):
            comp.raise_zero(np.arange(1000), d)
        for bad in (0, 50, 99):
            with pytest.raises(ValueError, match="broadcast"):
                comp.raise_shape(A, v, bad)
            with pytest.raises(ValueError):
                ref.raise_shape(A, v, bad)
        assert comp.raise_shape(A, v, -1) == ref.raise_shape(A, v, -1)
        with pytest.raises(KeyError):
            comp.raise_key(keys, 250)
        with pytest.raises(KeyError):
            ref.raise_key(keys, 250)
        assert comp.raise_key(keys, -1) == ref.raise_key(keys, -1)
        with pytest.raises(ZeroDivisionError):
            comp.task_raises(np.ones(100), 0.0)
        # The module keeps working after each of them.
        assert comp.raise_zero(np.arange(10), np.ones(10, np.int64)) == 45


def test_omp_num_threads_sets_the_default(build, tmp_path):
    comp, _ = build("parallel_plan", 3)
    code = ("import sys, numpy as np, pydd; m = pydd.compile(sys.argv[1], out_dir=sys.argv[2], opt=3);"
            "print(pydd.get_num_threads(), m.collapsed(np.ones((3, 4)), np.zeros((3, 4))))")
    env = dict(os.environ, OMP_NUM_THREADS="3")
    r = subprocess.run([sys.executable, "-c", code, str(KERNEL), str(tmp_path)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["3", "12"]


def test_carried_dependence_warns(tmp_path):
    r = run_pyddc("--emit=cpp", KERNEL)
    assert r.returncode == 0, r.stderr
    assert "parallel_plan.pydd:76:23: warning: this pfor loop runs sequentially: 'prev' is read before" in r.stderr
    assert r.stderr.count("warning:") == 1, r.stderr
    r = run_pyddc("--emit=cpp", "-Werror", KERNEL)
    assert r.returncode == 1
    assert "parallel_plan.pydd:76:23: error: this pfor loop runs sequentially: 'prev'" in r.stderr


def test_fused_loops_on_threads(build, opt):
    """Fused element-wise nests (2-D and up) big enough run on all threads
    (split among them), small ones and 1-D ones in place; either way the result is the sequential
    one, bit for bit: at 1, 2 and 8 threads, on sizes around the threshold
    (2^16 elements), strided operands and a store in place."""
    comp, ref = build("parallel_plan", opt)
    rng = np.random.default_rng(82)
    for shape in ((3, 5), (255, 257), (256, 256), (1000, 301), (1, 70_000)):
        A, B = rng.normal(size=shape), rng.normal(size=shape)
        want = ref.fused_2d(A, B, 0.5)
        for t in each_thread_count():
            np.testing.assert_array_equal(comp.fused_2d(A, B, 0.5), want, err_msg=f"{shape}, {t} threads")
            np.testing.assert_array_equal(comp.fused_2d(A.T, B.T, 0.5), ref.fused_2d(A.T, B.T, 0.5))
    I = rng.integers(-50, 50, size=(40, 50, 60))
    for t in each_thread_count():
        np.testing.assert_array_equal(comp.fused_3d(I, 5), ref.fused_3d(I, 5), err_msg=f"{t} threads")
    x, y = rng.normal(size=300_001), rng.normal(size=300_001)
    x1, x2 = x.copy(), x.copy()
    assert ref.fused_1d_inplace(x2, y) == comp.fused_1d_inplace(x1, y)
    np.testing.assert_array_equal(x1, x2)
    A = rng.normal(size=(300, 400))
    for t in each_thread_count():
        o1, o2 = np.zeros_like(A), np.zeros_like(A)
        assert comp.fused_in_pfor(A, o1) == ref.fused_in_pfor(A, o2)
        np.testing.assert_array_equal(o1, o2)


def with_and_without_nan(x, at):
    """x, and (beyond 10 elements) a copy of x with a NaN at index `at`."""
    if len(x) <= 10:
        return [x]
    nan = x.copy()
    nan[at] = np.nan
    return [x, nan]


def test_library_reductions_on_threads(build, opt):
    """Library reductions of 2^16 elements and more run on all threads and
    give the sequential result bit for bit (float sums are NumPy's: pairwise
    within 8192-element windows added in order), NaN included, around the
    threshold and at its window boundaries."""
    comp, ref = build("parallel_plan", opt)
    rng = np.random.default_rng(83)
    for n in (10, 65_535, 65_536, 8192 * 9 + 5, 1_000_003):
        x = rng.normal(size=n) * 1e3
        k = rng.integers(-2**62, 2**62, size=n)  # the sum wraps
        X = rng.normal(size=(n // 100 + 1, 100))
        for xs in with_and_without_nan(x, n // 3):
            want = ref.library_reductions(xs, k, X)
            assert want[0] == np.sum(xs) or np.isnan(want[0])  # the reference is NumPy's own order
            for t in each_thread_count():
                got = comp.library_reductions(xs, k, X)
                for i, (g, w) in enumerate(zip(got, want)):
                    np.testing.assert_array_equal(g, w, err_msg=f"n={n}, part {i}, {t} threads")


def test_column_reductions_on_threads(build, opt):
    """Reductions along axis 0 of rows 400 elements and longer fold eight
    input rows at a time into the output row, on all threads when large:
    still NumPy's result bit for bit (each element's inputs added in
    order), NaN included, for row counts around the block of eight and row
    lengths around the 400 threshold."""
    comp, _ = build("parallel_plan", opt)
    rng = np.random.default_rng(84)
    for rows in (1, 7, 8, 9, 1003):
        for cols in (399, 400, 401, 4099):
            X = rng.normal(size=(rows, cols)) * 1e3
            X[rows // 2, cols // 3] = np.nan
            X[-1, cols - 1] = -np.inf
            k = rng.integers(-2**62, 2**62, size=(rows, cols))  # the sums wrap
            f = rng.normal(size=(rows, cols)).astype(np.float32)
            T = rng.normal(size=(rows, 2, cols // 2))
            P = 1.0 + X / 1e5  # products that stay finite
            want = (X.sum(0), P.prod(0), X.max(0), X.min(0), X.mean(0), k.sum(0), f.sum(0), T.sum(0))
            for t in each_thread_count():
                got = comp.column_reductions(X, k, f, T)
                got = (got[0], comp.column_reductions(P, k, f, T)[1]) + got[2:]
                for i, (g, w) in enumerate(zip(got, want)):
                    np.testing.assert_array_equal(g, w, err_msg=f"{rows}x{cols}, part {i}, {t} threads")


def test_row_reductions_on_threads(build, opt):
    """Reductions along the last axis of eight rows and more, large enough
    for threads, reduce whole rows on each thread: NumPy's result bit for
    bit (each row's pairwise sum), NaN included."""
    comp, _ = build("parallel_plan", opt)
    rng = np.random.default_rng(86)
    for rows, cols in ((7, 20000), (8, 20000), (1003, 100), (130, 8192 + 3), (70000, 3)):
        X = rng.normal(size=(rows, cols)) * 1e3
        X[rows // 2, cols // 3] = np.nan
        k = rng.integers(-2**62, 2**62, size=(rows, cols))  # the sums wrap
        f = rng.normal(size=(rows, cols)).astype(np.float32)
        want = (X.sum(1), X.max(1), X.mean(1), k.sum(1), f.sum(1))
        for t in each_thread_count():
            for i, (g, w) in enumerate(zip(comp.row_reductions(X, k, f), want)):
                np.testing.assert_array_equal(g, w, err_msg=f"{rows}x{cols}, part {i}, {t} threads")


def test_arg_extremes_on_threads(build, opt):
    """argmax and argmin of 2^16 elements and more scan parts on all threads:
    still NumPy's first position of the extreme, or of the first NaN, with
    ties and NaNs in any part."""
    comp, _ = build("parallel_plan", opt)
    rng = np.random.default_rng(85)
    for n in (65_535, 65_536, 1_000_003):
        x = rng.normal(size=n)
        tied = x.copy()
        tied[[n - 10, 10, n // 2]] = 9.0  # the same maximum in the first and last parts
        tied[[n - 3, n // 2 + 1]] = -9.0
        late_nan = x.copy()
        late_nan[n - 5] = np.nan
        two_nans = late_nan.copy()
        two_nans[n // 4] = np.nan
        k = rng.integers(0, 3, size=n)  # many ties
        for xs in (x, tied, late_nan, two_nans):
            want = (np.argmax(xs), np.argmin(xs), np.argmax(k), np.argmin(k))
            for t in each_thread_count():
                assert comp.arg_extremes(xs, k) == want, f"n={n}, {t} threads"


def test_fused_folds_on_threads(build, opt):
    """any, all and integer sums of element-wise trees fold parts of 2^16
    elements and more on all threads: NumPy's result, with the one deciding
    element last, first or nowhere, and integer sums that wrap."""
    comp, _ = build("parallel_plan", opt)
    rng = np.random.default_rng(86)
    for n in (10, 65_535, 65_536, 1_000_003):
        a = rng.random(n)  # none negative, all above -10
        k = rng.integers(-2**62, 2**62, size=n)  # 3k + 1 wraps, and so does the sum
        X = rng.random((n // 100 + 1, 100)) * 0.5  # none above 0.5, all below 2
        cases = [(a, X)]
        for at in (0, n - 1, n // 2):
            a2, X2 = a.copy(), X.copy()
            a2[at] = -1e-300 if at % 2 else -20.0  # negative; for the last ones, not above -10 too
            X2.flat[at % X.size] = 3.0  # above 0.5 and not below 2
            cases.append((a2, X2))
        for a_, X_ in cases:
            want = ((a_ < 0).any(), (a_ > -10).all(), np.sum(k * 3 + 1), (X_ > 0.5).any(), (X_ < 2).all())
            for t in each_thread_count():
                assert comp.fused_folds(a_, k, X_) == want, f"n={n}, {t} threads"


def test_sparse_product_on_threads(build, opt):
    """spmv of a matrix with 2^16 entries or more splits its rows among
    threads: scipy's result bit for bit (each row summed by one thread, in
    index order), for int32 and int64 indices; a column index out of range
    in any thread's rows raises scipy's ValueError."""
    comp, _ = build("parallel_plan", opt)
    rng = np.random.default_rng(87)
    for n, per_row in ((300, 200), (20_000, 20), (100_000, 10)):
        rows = np.repeat(np.arange(n), rng.integers(0, 2 * per_row, size=n))  # some rows empty
        S = sp.csr_matrix((rng.normal(size=len(rows)), (rows, rng.integers(0, n, size=len(rows)))), shape=(n, n))
        x = rng.normal(size=n)
        wide = S.copy()
        wide.indices, wide.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
        for M in (S, wide):
            for t in each_thread_count():
                np.testing.assert_array_equal(comp.sparse_product(M, x), S @ x, err_msg=f"n={n}, {t} threads")
        bad = S.copy()
        bad.indices[-1] = n + 5  # in the last thread's rows
        for t in each_thread_count():
            with pytest.raises(ValueError, match=f"column index values must be < {n}"):
                comp.sparse_product(bad, x)


def test_fused_sums_on_threads(build, opt):
    """Float sums of element-wise trees compute their 8192-element windows on
    all threads from 2^16 elements on and add the windows' sums in order:
    NumPy's result bit for bit, around the threshold, at window boundaries,
    with rows straddling windows and with a NaN."""
    comp, ref = build("parallel_plan", opt)
    rng = np.random.default_rng(84)
    for n in (10, 65_535, 65_536, 8192 * 9 + 5, 1_000_003):
        a, b = rng.normal(size=n), rng.normal(size=n)
        X, mu = rng.normal(size=(n // 7 + 1, 7)), rng.normal(size=7)
        for xs in with_and_without_nan(a, n // 2):
            want = ref.fused_sums(xs, b, X, mu)
            assert want[0] == np.sum(xs * b) or np.isnan(want[0])  # the reference is NumPy's own order
            for t in each_thread_count():
                got = comp.fused_sums(xs, b, X, mu)
                np.testing.assert_array_equal(got, want, err_msg=f"n={n}, {t} threads")


def test_fused_row_sums_on_threads(build, opt):
    """Sums along the rows of element-wise trees compute blocks of rows
    (about 8192 elements each, each block with its own row buffer) on all
    threads from 2^16 elements on: NumPy's result bit for bit, for rows
    shorter and longer than a block, a row count that leaves a partial last
    block, and a NaN."""
    comp, ref = build("parallel_plan", opt)
    rng = np.random.default_rng(88)
    for rows, cols in ((3, 5), (8191, 8), (9000, 300), (5, 20000), (70, 1)):
        X, mu = rng.normal(size=(rows, cols)), rng.normal(size=cols)
        nan = X.copy()
        nan.flat[X.size // 2] = np.nan
        for Xs in (X, nan):
            want = (((Xs - mu) * (Xs - mu)).sum(1), (Xs * 2.0).sum(axis=-1))
            np.testing.assert_array_equal(ref.fused_row_sums(Xs, mu)[0], want[0])  # NumPy's own order
            for t in each_thread_count():
                got = comp.fused_row_sums(Xs, mu)
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(g, w, err_msg=f"{rows}x{cols}, {t} threads")


def test_fused_loops_split_only_when_large(tmp_path):
    """The C++: a fused nest runs through pydd::parallel_range under the
    element-count test, and not inside a pfor (already parallel), nor with
    --parallel-fused=false."""
    cpp = run_pyddc(KERNEL, "--emit=cpp").stdout
    body = lambda name: cpp.split(f" {name}(", 2)[2].split("\n}\n", 1)[0]  # noqa: E731
    assert "pydd::parallel_range(" in body("fused_2d") and ">= pydd::kParallelElements" in body("fused_2d")
    assert "pydd::parallel_range(" in body("fused_3d")
    assert "pydd::parallel_range(" not in body("fused_in_pfor")
    assert "pydd::parallel_range(" not in body("fused_1d_inplace")  # 1-D nests stay sequential
    # A fused float sum's windows (each with its own buffer, whose
    # MemoryError is caught in the region and raised after it).
    assert body("fused_sums").count("pydd::parallel_range(") == 2 and "pydd::FirstError" in body("fused_sums")
    # Row-wise sums: blocks of rows, each block's buffer its own.
    assert body("fused_row_sums").count("pydd::parallel_range(") == 2
    # Folds exact in any order: parts on all threads, 1-D and 2-D alike.
    assert body("fused_folds").count("pydd::parallel_fold(") == 5
    off = run_pyddc(KERNEL, "--emit=cpp", "--parallel-fused=false").stdout
    assert "pydd::parallel_range(" not in off and "pydd::parallel_fold(" not in off


LOWEST_ERROR = '''from pydd import *

def two_errors(x: Array(int64), y: Array(int64), out: Array(int64)):
    pfor i in range(len(x)):
        out[i] = x[i] // y[i] + x[i] ** y[i]

def two_errors_2d(x: Array(int64, 2), y: Array(int64, 2), out: Array(int64, 2)):
    pfor i in range(x.shape[0]):
        pfor j in range(x.shape[1]):
            out[i, j] = x[i, j] // y[i, j] + x[i, j] ** y[i, j]
'''


@pytest.mark.parametrize("opt", [0, 3])
def test_the_lowest_failing_iteration_raises(tmp_path, opt):
    """Where iterations of a pfor fail differently (// by 0 raises
    ZeroDivisionError, ** -1 ValueError), the error raised is the one of the
    lowest failing iteration, as a sequential run raises, on any number of
    threads: an early failure in a later thread's part does not win."""
    src = tmp_path / "lowest.pydd"
    src.write_text(LOWEST_ERROR)
    m = pydd.compile(src, out_dir=tmp_path / "out", opt=opt)
    n = 20_000
    x = np.arange(n, dtype=np.int64).reshape(200, 100)
    cases = ((513, 300, ValueError), (200, 300, ZeroDivisionError), (19_000, 10_001, ValueError), (1, 0, ValueError))
    for t in each_thread_count():
        for _ in range(20):
            for zero, negative, error in cases:
                y = np.ones(n, dtype=np.int64)
                y[zero], y[negative] = 0, -1
                # Failures at the start and end of the other threads' parts.
                y[[n - 1, n // 2, n // 4 * 3]] = [0, -1, 0]
                with pytest.raises(error):
                    m.two_errors(x.ravel(), y, np.zeros(n, np.int64))
                with pytest.raises(error):
                    m.two_errors_2d(x, y.reshape(200, 100), np.zeros((200, 100), np.int64))
