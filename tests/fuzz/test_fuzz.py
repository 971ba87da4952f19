"""Differential fuzzing of pyddc: random kernels, compiled vs run as Python.

    /usr/bin/python3 -m pytest -q tests/fuzz

Environment:
  PYDD_FUZZ_SEEDS   seeds to check: START:COUNT, N or a,b,c (default 0:12)
  PYDD_FUZZ_ARRAY_SEEDS  seeds of whole-array kernels (gen_arrays.py, default 0:6)
  PYDD_FUZZ_OPT     -O levels, comma separated (default 0,3)
  PYDD_FUZZ_EXACT=1 compare floats bit for bit (default: relative 1e-12 for
                    float64, 1e-6 for float32)
  PYDD_FUZZ_KNOWN_BUGS=1  generate the patterns of open bugs too (gen.OPEN_BUGS)
  PYDDC             the compiler (default: this checkout's build/bin/pyddc)

Each seed is checked in a child process (a miscompiled kernel may crash or
hang): see gen.py (the generator) and harness.py (the comparison and the
differences it accepts). A failure prints the seed, the kernel, the inputs
and both outcomes; `python3 tests/fuzz/gen.py --seed N` prints the kernel
again and `python3 tests/fuzz/gen.py --check N` re-checks it.

The test_bug* tests at the end are the reduced kernels of the compiler bugs
the fuzzer found. All eight are fixed (bug 5 in 243e017, bug 7 in 6287e14,
bug 8 in 015509c, the others in 36076aa): plain regression tests. An open bug's test is marked
xfail(strict=True, reason="BUG: ..."), and its number is in gen.OPEN_BUGS
when the generator has to steer clear of its pattern for the default seeds
to pass; once it is fixed the test XPASSes, and the marker and the
OPEN_BUGS entry go.
"""

import contextlib
import io
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen  # noqa: E402
import gen_pfor  # noqa: E402
import gen_sparse  # noqa: E402
import harness  # noqa: E402  (also sets $PYDDC to this checkout's build)

import pydd  # noqa: E402  (on sys.path through harness)

SEEDS = gen.parse_seeds(os.environ.get("PYDD_FUZZ_SEEDS", "0:12"))
# Whole-array kernels (gen_arrays.py): what fusion and LICM transform.
ARRAY_SEEDS = gen.parse_seeds(os.environ.get("PYDD_FUZZ_ARRAY_SEEDS", "0:6"))
# pfor kernels (gen_pfor.py) against their `for` twins, at 1, 2 and 8 threads.
PFOR_SEEDS = gen.parse_seeds(os.environ.get("PYDD_FUZZ_PFOR_SEEDS", "0:3"))
# Sparse products with dense operands (gen_sparse.py): what sampled fusion rewrites.
SPARSE_SEEDS = gen.parse_seeds(os.environ.get("PYDD_FUZZ_SPARSE_SEEDS", "0:4"))
OPTS = tuple(int(o) for o in os.environ.get("PYDD_FUZZ_OPT", "0,3").split(","))
TIMEOUT_S = float(os.environ.get("PYDD_FUZZ_TIMEOUT", "120"))


@pytest.mark.parametrize("seed", SEEDS)
def test_seed(seed):
    res = harness.check_in_subprocess(seed, OPTS, timeout=TIMEOUT_S)
    if res["failures"]:
        pytest.fail(harness.format_failures(gen.generate(seed).source, seed, res["failures"]), pytrace=False)


@pytest.mark.parametrize("seed", ARRAY_SEEDS)
def test_array_seed(seed):
    res = harness.check_in_subprocess(seed, OPTS, timeout=TIMEOUT_S, arrays=True)
    if res["failures"]:
        pytest.fail(harness.format_failures(harness.generate(seed, True).source, seed, res["failures"]),
                    pytrace=False)


@pytest.mark.parametrize("seed", PFOR_SEEDS)
def test_pfor_seed(seed, tmp_path):
    import subprocess

    src = tmp_path / f"pfor{seed}.pydd"
    src.write_text(gen_pfor.generate(seed))
    # Every pfor of the seed is an OpenMP loop (the plan made it parallel).
    cpp = subprocess.run([pydd.find_pyddc(), "--emit=cpp", src], capture_output=True, text=True)
    assert cpp.returncode == 0 and "warning" not in cpp.stderr, cpp.stderr
    assert cpp.stdout.count("#pragma omp parallel for") == 3, src.read_text()
    mod = pydd.compile(src, out_dir=tmp_path, opt=3)
    ref = pydd.load_python(src, f"pfor{seed}_ref")
    rng = np.random.default_rng(seed)
    n = 203
    x, y, c = rng.integers(-100, 100, n), rng.normal(size=n), int(rng.integers(-20, 20))

    def run(fn):
        out = np.zeros(n, np.int64)
        return fn(x, y, out, c), out

    try:
        for k in range(3):
            (want, want_out) = run(getattr(ref, f"p{k}"))
            results = {"for": run(getattr(mod, f"s{k}"))}
            for t in (1, 2, 8):
                pydd.set_num_threads(t)
                results[f"pfor, {t} threads"] = run(getattr(mod, f"p{k}"))
            for what, (got, out) in results.items():
                where = f"seed {seed}, p{k}, {what}:\n{src.read_text()}"
                np.testing.assert_array_equal(out, want_out, err_msg=where)
                assert tuple(got[:3]) + tuple(got[4:]) == tuple(want[:3]) + tuple(want[4:]), where
                assert math.isclose(got[3], want[3], rel_tol=1e-12, abs_tol=1e-12), where
    finally:
        pydd.set_num_threads(0)


def _sparse_inputs(rng, density, layout, broadcast):
    """S (m x n) of the density with empty rows, its indices int32 sorted,
    int32 unsorted or int64, and dense operands of matching shapes (or W and
    w of broadcasting ones)."""
    import scipy.sparse as sp
    m, n, k = int(rng.integers(1, 30)), int(rng.integers(1, 30)), int(rng.integers(1, 5))
    if density == "long":  # rows of 24 entries and more: row folds run two rows at a time
        m, n, density = int(rng.integers(2, 60)), int(rng.integers(50, 400)), 0.3
    nnz = round(density * m * n) if density < 0.5 else m * n // 2
    flat = rng.choice(m * n, nnz, replace=False) if nnz else np.zeros(0, np.int64)
    r, c = np.divmod(flat, n)
    r = np.where(r % 5 == 3, (r + 1) % m, r)  # some empty rows
    S = sp.csr_matrix((rng.normal(size=len(r)), (r, c)), shape=(m, n))
    S.sum_duplicates()
    if layout == "unsorted":
        for i in range(m):
            p, q = S.indptr[i], S.indptr[i + 1]
            perm = p + rng.permutation(q - p)
            S.data[p:q], S.indices[p:q] = S.data[perm], S.indices[perm]
        S.has_sorted_indices = False
    elif layout == "int64":
        S.indices, S.indptr = S.indices.astype(np.int64), S.indptr.astype(np.int64)
    W = rng.normal(size=[(m, n), (1, n), (m, 1)][broadcast])
    w = rng.normal(size=[n, 1, n][broadcast])
    return (S, rng.normal(size=(m, k)), rng.normal(size=(k, n)), rng.normal(size=(n, k)), W, w,
            rng.normal(size=n), float(rng.normal()))


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001 -- compared with the reference's
        return "raise", e


def _same_value(got, want, where):
    import scipy.sparse as sp
    if sp.issparse(want):
        assert sp.issparse(got) and got.shape == want.shape, where
        g, w = sp.csr_matrix(got), sp.csr_matrix(want)
        g.sort_indices(), w.sort_indices()
        assert np.array_equal(g.indptr, w.indptr) and np.array_equal(g.indices, w.indices), where
        got, want = g.data, w.data
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), rtol=1e-9, atol=1e-9, err_msg=where)


@pytest.mark.parametrize("seed", SPARSE_SEEDS)
def test_sparse_seed(seed, tmp_path):
    src = tmp_path / f"sparse{seed}.pydd"
    src.write_text(gen_sparse.generate(seed))
    # The -O3 build samples (the rewrite under test happens).
    import subprocess
    cpp = subprocess.run([pydd.find_pyddc(), "--emit=cpp", src], capture_output=True, text=True)
    assert cpp.returncode == 0 and "pydd::spm_with_values" in cpp.stdout, cpp.stderr
    mods = {f"-O{o}": pydd.compile(src, out_dir=tmp_path / f"O{o}", opt=o) for o in OPTS}
    ref = pydd.load_python(src, f"sparse{seed}_ref")
    rng = np.random.default_rng(seed)
    for density in (0.0, 1e-3, 0.05, 0.5, "long"):
        for layout in ("sorted", "unsorted", "int64"):
            for broadcast in (0, 0, 1, 2):
                args = _sparse_inputs(rng, density, layout, broadcast)
                S, v, a = args[0], args[6], args[7]
                for name, fargs in [(f"f{k}", args) for k in range(4)] + [("g", (S, v, a)), ("h", (S, v, a)), ("k", (S, v, a))]:
                    want = _outcome(getattr(ref, name), *fargs)
                    for what, mod in mods.items():
                        got = _outcome(getattr(mod, name), *fargs)
                        where = f"seed {seed}, {name} {what}, density {density}, {layout}, broadcast {broadcast}:\n" \
                                f"{src.read_text()}"
                        assert got[0] == want[0], f"{where}\n{got} vs {want}"
                        if want[0] == "ok":
                            _same_value(got[1], want[1], where)
                        else:
                            assert type(got[1]) is type(want[1]), f"{where}\n{got} vs {want}"


def test_generator_is_deterministic():
    for seed in (0, 1, 12345):
        assert gen.generate(seed).source == gen.generate(seed).source
    assert gen.generate(1).source != gen.generate(2).source


def test_generated_kernels_load_as_python(tmp_path):
    """Every kernel is valid Python; cheap, so over more seeds than test_seed."""
    for seed in range(100):
        k = gen.generate(seed)
        src = tmp_path / f"g{seed}.pydd"
        src.write_text(k.source)
        mod = pydd.load_python(src, f"g{seed}")
        assert all(hasattr(mod, f.name) for f in k.funcs)


# ---------------------------------------------------------------------------
# Compiler bugs found by the fuzzer, reduced. Each test compiles the kernel,
# runs it and the Python reference on the same input and expects agreement.


def _run(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        value = fn(*args)
    return value, buf.getvalue()


def _same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


@pytest.fixture(params=OPTS, ids=lambda o: f"O{o}")
def agrees(request, tmp_path):
    """agrees(source, fn_name, make_args): compiled and reference results,
    printed output and arrays after the call are the same."""
    opt = request.param

    def check(source, fn_name, make_args):
        stem = f"kb_{request.node.originalname}_O{opt}"
        src = tmp_path / f"{stem}.pydd"
        src.write_text(source)
        comp = pydd.compile(src, out_dir=tmp_path / "out", opt=opt)
        ref = pydd.load_python(src, f"{stem}_ref")
        args_c, args_r = make_args(), make_args()
        got, out_c = _run(getattr(comp, fn_name), *args_c)
        want, out_r = _run(getattr(ref, fn_name), *args_r)
        arrays_c = [a.tolist() for a in args_c if isinstance(a, np.ndarray)]
        arrays_r = [a.tolist() for a in args_r if isinstance(a, np.ndarray)]
        assert (_same(got, want), out_c, arrays_c) == (True, out_r, arrays_r), (
            f"compiled returned {got!r}, printed {out_c!r}, arrays {arrays_c}; "
            f"reference returned {want!r}, printed {out_r!r}, arrays {arrays_r}")

    return check


KB1 = '''from pydd import *


def bump(A: Array(int64)) -> int64:
    A[0] = 2
    return 5


def aug_elem(A: Array(int64)) -> int64:
    A[A[0]] += bump(A)
    return 0
'''


def test_bug1_augmented_element_index_evaluated_once(agrees):
    """A[i] op= v evaluated the index again after v (A[i] = A[i] op v).
    Python: i = A[0] = 1; A[1] = A[1] + bump(A) -> [2, 5, 0, 0];
    pyddc stored to A[A[0]] with A[0] re-read as 2 -> [2, 0, 5, 0]."""
    agrees(KB1, "aug_elem", lambda: [np.array([1, 0, 0, 0], np.int64)])


KB2 = '''from pydd import *


def chain_index(A: Array(int64)) -> int64:
    i = 1
    i = A[i] = 3
    return i


def chain_convert(A: Array(int64)) -> float64:
    x = 0.5
    x = A[0] = 2.5
    return x
'''


def test_bug2_chained_assignment_left_to_right(agrees):
    """a = b = v stored the targets right to left, reading v back from the
    last one. Python: i = 3, then A[3] = 3 -> [0, 0, 0, 3]; pyddc stored
    A[1] = 3, then i = A[1] -> [0, 3, 0, 0]."""
    agrees(KB2, "chain_index", lambda: [np.zeros(4, np.int64)])


def test_bug2_chained_assignment_does_not_convert_through_target(agrees):
    """x = A[0] = 2.5 with an int64 A gave x == 2.0 (read back from A[0])."""
    agrees(KB2, "chain_convert", lambda: [np.zeros(4, np.int64)])


KB3 = '''from pydd import *


def show(x: int64) -> int64:
    print(x)
    return x


def setv(A: Array(int64), v: int64) -> int64:
    A[0] = v
    return v


def first(A: Array(int64)) -> int64:
    return A[0]


def min_args(A: Array(int64)) -> int64:
    return min(setv(A, 7), first(A))


def call_args() -> int64:
    return max(show(1), show(2))


def floordiv_operands(A: Array(int64)) -> int64:
    return setv(A, 7) // (abs(first(A)) + 1)


def print_args() -> int64:
    print(show(1), show(2))
    return 0


def index2(M: Array(int32, 2)) -> int64:
    return M[show(1), show(0)]

'''


def test_bug3_call_arguments_left_to_right(agrees):
    """Arguments were evaluated right to left: min(setv(A, 7), first(A))
    read A[0] == 0 before setv stored 7 (Python: 7)."""
    agrees(KB3, "min_args", lambda: [np.zeros(3, np.int64)])


def test_bug3_call_argument_effects_in_order(agrees):
    """max(show(1), show(2)) printed 2 then 1."""
    agrees(KB3, "call_args", lambda: [])


def test_bug3_operator_operands_left_to_right(agrees):
    """Operands of operators lowered to runtime helpers (/ // % ** << >>)
    were evaluated right to left: setv(A, 7) // (abs(first(A)) + 1) gave 7
    (first(A) read 0 first); Python gives 0."""
    agrees(KB3, "floordiv_operands", lambda: [np.zeros(3, np.int64)])


def test_bug3_print_arguments_left_to_right(agrees):
    """print(show(1), show(2)) printed 2, 1, then "1 2"."""
    agrees(KB3, "print_args", lambda: [])


def test_bug3_subscript_indices_left_to_right(agrees):
    """M[show(1), show(0)] printed 0 then 1."""
    agrees(KB3, "index2", lambda: [np.zeros((3, 3), np.int32)])


KB4 = '''from pydd import *


def fabs64(x: float64) -> float64:
    return abs(x)


def fabs32(x: float32) -> float32:
    return abs(x)
'''


def test_bug4_abs_negative_zero_float64(agrees):
    """abs(-0.0) returned -0.0; Python and NumPy give 0.0."""
    agrees(KB4, "fabs64", lambda: [np.float64(-0.0)])


def test_bug4_abs_negative_zero_float32(agrees):
    agrees(KB4, "fabs32", lambda: [np.float32(-0.0)])


KB5 = '''from pydd import *


def fma(a: float64, b: float64, c: float64) -> float64:
    return a * b + c
'''


def test_bug5_no_fma_contraction(agrees):
    """-O3 builds with -march=native, where g++ fused a * b + c into one FMA:
    0.1 * 10.0 - 1.0 gave 5.55e-17 instead of 0.0 (fixed in 243e017)."""
    agrees(KB5, "fma", lambda: [np.float64(0.1), np.float64(10.0), np.float64(-1.0)])


KB6 = '''from pydd import *


def param_loop_var(A: Array(int64), i: int64) -> int64:
    x = A[i]
    for i in range(2):
        x += A[i]
    return x
'''


def test_bug6_parameter_reused_as_loop_variable(agrees):
    """A parameter that was otherwise only a range-loop variable was taken for
    provably non-negative, so A[i] with i == -1 before the loop read the
    element before A[0]. Python: A[-1] + A[0] + A[1] == 43. A is the tail of
    a larger array, so the bad read is deterministic (77, giving 80)."""
    agrees(KB6, "param_loop_var", lambda: [np.array([99, 99, 77, 1, 2, 3, 40], np.int64)[3:], np.int64(-1)])


KB7 = '''from pydd import *


def setv(A: Array(int64), v: int64) -> int64:
    A[0] = v
    return v


def raise_then_call(A: Array(int64), z: int64) -> int64:
    return max(7 // z, setv(A, 9))
'''


def test_bug7_exception_before_later_argument(tmp_path):
    """An argument that may raise (7 // z) was not ordered before a later
    argument with effects: max(7 // z, setv(A, 9)) with z == 0 ran setv
    (A[0] = 9) before raising ZeroDivisionError (fixed in 6287e14)."""
    src = tmp_path / "kb7.pydd"
    src.write_text(KB7)
    ref = pydd.load_python(src, "kb7_ref")
    A = np.zeros(3, np.int64)
    with pytest.raises(ZeroDivisionError):
        ref.raise_then_call(A, 0)  # a Python int: 7 // 0 raises in the reference too
    assert A.tolist() == [0, 0, 0]
    for opt in OPTS:
        mod = pydd.compile(src, out_dir=tmp_path / f"out{opt}", opt=opt)
        A = np.zeros(3, np.int64)
        with pytest.raises(ZeroDivisionError):
            mod.raise_then_call(A, 0)
        assert A.tolist() == [0, 0, 0], f"-O{opt}: setv ran before 7 // 0 raised: A == {A.tolist()}"


KB8 = '''from pydd import *


def zero_minus_int(x: int64) -> float64:
    return 0.0 - x
'''


def test_bug8_zero_minus_converted_int(agrees):
    """0.0 - x for an integer x == 0 gave -0.0 (Python: 0.0): pyddc emitted
    0.0 - static_cast<double>(x), which g++ 12 folds into -(double)x at every
    -O level (fixed in 015509c)."""
    agrees(KB8, "zero_minus_int", lambda: [np.int64(0)])
