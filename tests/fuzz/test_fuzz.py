"""Differential fuzzing of pyddc: random kernels, compiled vs run as Python.

    /usr/bin/python3 -m pytest -q tests/fuzz

Environment:
  PYDD_FUZZ_SEEDS   seeds to check: START:COUNT, N or a,b,c (default 0:12)
  PYDD_FUZZ_OPT     -O levels, comma separated (default 0,3)
  PYDD_FUZZ_KNOWN_BUGS=1  also generate the patterns of the known bugs below
                    (to see whether they are fixed); by default the generator
                    steers clear of them so that the seeds pass.
  PYDDC             the compiler (default: this checkout's build/bin/pyddc)

Each seed is checked in a child process (a miscompiled kernel may crash or
hang): see gen.py (the generator) and harness.py (the comparison and the
differences it accepts). A failure prints the seed, the kernel, the inputs
and both outcomes; `python3 tests/fuzz/gen.py --seed N` prints the kernel
again and `python3 tests/fuzz/gen.py --check N` re-checks it.

The known_bug tests at the end are the minimal kernels of the compiler bugs
the fuzzer found, marked xfail(strict=True): when a bug is fixed its test
XPASSes (fails), and the xfail marker and the generator's avoidance of the
pattern (gen.py, avoid_known) should be removed.
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
import harness  # noqa: E402  (also sets $PYDDC to this checkout's build)

import pydd  # noqa: E402  (on sys.path through harness)

SEEDS = gen.parse_seeds(os.environ.get("PYDD_FUZZ_SEEDS", "0:12"))
OPTS = tuple(int(o) for o in os.environ.get("PYDD_FUZZ_OPT", "0,3").split(","))
TIMEOUT_S = float(os.environ.get("PYDD_FUZZ_TIMEOUT", "120"))


@pytest.mark.parametrize("seed", SEEDS)
def test_seed(seed):
    res = harness.check_in_subprocess(seed, OPTS, timeout=TIMEOUT_S)
    if res["failures"]:
        pytest.fail(harness.format_failures(gen.generate(seed).source, seed, res["failures"]), pytrace=False)


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
def known_bug(request, tmp_path):
    """known_bug(source, fn_name, make_args) -> asserts compiled == reference."""
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


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="BUG: A[i] op= v evaluates the index expression again after v "
                                       "(Parser lowers it to A[i] = A[i] op v); Python evaluates it once, "
                                       "before v")
def test_known_bug1_augmented_element_index_evaluated_twice(known_bug):
    # Python: i = A[0] = 1; A[1] = A[1] + bump(A)  ->  [2, 5, 0, 0]
    # pyddc:  A[A[0]] = A[1] + bump(A) with A[0] re-read as 2  ->  [2, 0, 5, 0]
    known_bug(KB1, "aug_elem", lambda: [np.array([1, 0, 0, 0], np.int64)])


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


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="BUG: chained assignment a = b = v stores the targets right to "
                                       "left and reads the value back from the last target; Python "
                                       "stores v into each target left to right")
def test_known_bug2_chained_assignment_order(known_bug):
    # Python: i = 3, then A[i] = A[3] = 3  ->  [0, 0, 0, 3], returns 3
    # pyddc:  A[1] = 3, then i = A[1]       ->  [0, 3, 0, 0], returns 3
    known_bug(KB2, "chain_index", lambda: [np.zeros(4, np.int64)])


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="BUG: chained assignment reads the value back from the last "
                                       "target, converted to its dtype (x = A[0] = 2.5 gives x == 2.0 "
                                       "for an int64 A)")
def test_known_bug2_chained_assignment_converts_through_target(known_bug):
    # Python: x = 2.5, A[0] = 2  ->  returns 2.5; pyddc returns 2.0
    known_bug(KB2, "chain_convert", lambda: [np.zeros(4, np.int64)])


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


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="BUG: arguments of calls (kernel functions, min, max) are "
                                       "evaluated right to left; Python evaluates left to right")
def test_known_bug3_call_arguments_right_to_left(known_bug):
    # Python: setv(A, 7) first, then first(A) == 7  ->  7; pyddc: first(A) == 0 first  ->  0
    known_bug(KB3, "min_args", lambda: [np.zeros(3, np.int64)])


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="BUG: arguments of calls are evaluated right to left "
                                       "(prints 2 then 1)")
def test_known_bug3_print_order(known_bug):
    known_bug(KB3, "call_args", lambda: [])


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="BUG: operands of operators lowered to runtime helpers "
                                       "(/ // % << >> and min/max) are evaluated right to left")
def test_known_bug3_operator_operands_right_to_left(known_bug):
    # Python: 7 // (abs(7) + 1) == 0; pyddc: first(A) == 0 is read first, 7 // 1 == 7
    known_bug(KB3, "floordiv_operands", lambda: [np.zeros(3, np.int64)])


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="BUG: print's arguments are evaluated right to left (prints 2, 1, then 1 2)")
def test_known_bug3_print_arguments_right_to_left(known_bug):
    known_bug(KB3, "print_args", lambda: [])


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="BUG: the indices of M[i, j] are evaluated right to left (prints 0 then 1)")
def test_known_bug3_subscript_indices_right_to_left(known_bug):
    known_bug(KB3, "index2", lambda: [np.zeros((3, 3), np.int32)])


KB4 = '''from pydd import *


def fabs64(x: float64) -> float64:
    return abs(x)


def fabs32(x: float32) -> float32:
    return abs(x)
'''


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="BUG: abs(-0.0) returns -0.0; Python (and NumPy) give 0.0")
def test_known_bug4_abs_negative_zero_float64(known_bug):
    known_bug(KB4, "fabs64", lambda: [np.float64(-0.0)])


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="BUG: abs(-0.0) returns -0.0 for float32 too")
def test_known_bug4_abs_negative_zero_float32(known_bug):
    known_bug(KB4, "fabs32", lambda: [np.float32(-0.0)])



KB5 = '''from pydd import *


def fma(a: float64, b: float64, c: float64) -> float64:
    return a * b + c
'''


def test_fixed_bug5_no_fma_contraction_at_O3(tmp_path):
    """Found by the fuzzer, fixed in 243e017 (-ffp-contract=off): -O3 builds
    with -march=native, where g++ fused a * b + c into one FMA."""
    src = tmp_path / "kb5.pydd"
    src.write_text(KB5)
    comp = pydd.compile(src, out_dir=tmp_path / "out", opt=3)
    ref = pydd.load_python(src, "kb5_ref")
    args = (np.float64(0.1), np.float64(10.0), np.float64(-1.0))
    got, want = comp.fma(*args), ref.fma(*args)
    assert _same(got, want), f"compiled {got!r}, reference {want!r} (0.1 * 10.0 - 1.0 is 0.0 unfused)"
