"""Checking generated kernels: compiled (each -O level) against the reference.

check_kernel(kernel) compiles the kernel with pyddc at each -O level, loads
it as Python (pydd.load_python, the reference), calls every function on a
few random inputs and compares results, arrays written in place and printed
output. The reference gets NumPy scalars of each parameter's dtype, so its
arithmetic follows NumPy; it runs with np.errstate(divide, over, invalid =
'raise') so that the documented differences can be recognised:

* division by zero: the reference raises ZeroDivisionError (Python scalars)
  or FloatingPointError from a division (NumPy scalars, where NumPy itself
  would return inf/nan or 0); the compiled kernel must raise
  ZeroDivisionError at the same point (output and arrays up to there are
  still compared).
* out of range: the reference overflowed, or converted nan/inf/too large a
  float to an integer (FloatingPointError, OverflowError, ValueError "cannot
  convert float NaN"): the call is skipped (counted as "out of range").

Everything else must agree: both return equal values (ints and bools
exactly; floats bit for bit, including the sign of zero, but allowing a
relative 1e-12 for float64 and 1e-6 for float32 results, for pow and the
like), or both raise the same exception type; arrays and printed text must
agree too.

check_main(seed) is the subprocess entry point used by the pytest and by
the campaign: a miscompiled kernel may crash or hang, so each seed is
checked in a child process (`gen.py --check SEED`), which prints one line
"FUZZRESULT <json>".
"""

import concurrent.futures
import contextlib
import io
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(HERE))

# The pyddc under test: $PYDDC, else this checkout's build (pydd.find_pyddc
# would otherwise prefer a `pyddc` on PATH, which may be another build).
_LOCAL_PYDDC = REPO / "build" / "bin" / "pyddc"
if not os.environ.get("PYDDC") and _LOCAL_PYDDC.is_file():
    os.environ["PYDDC"] = str(_LOCAL_PYDDC)

import numpy as np  # noqa: E402

import pydd  # noqa: E402

import gen  # noqa: E402
import gen_arrays  # noqa: E402

# The fuzzer generates scalar and element code, where pydd types a local
# from its first value and keeps it strong (a range variable is int64, so
# `2 / (i + 1) - float32(x)` is float64), as Numba does. Under NEP 50, which
# `import pydd` turns on for the array library's reference, a Python int or
# float held in a variable stays weak and the same expression is float32.
# NumPy's legacy rules give such mixed scalar expressions pydd's result
# types, so the fuzzer's reference runs under them; the difference is
# documented in docs/language.md ("Inference of locals").
if hasattr(np, "_set_promotion_state"):
    np._set_promotion_state("legacy")

DEFAULT_TRIALS = 3
# PYDD_FUZZ_EXACT=1 compares floats bit for bit (no tolerance).
EXACT = os.environ.get("PYDD_FUZZ_EXACT", "") == "1"
FLOAT64_RTOL = 0.0 if EXACT else 1e-12
FLOAT32_RTOL = 0.0 if EXACT else 1e-6

NP_TYPES = {"int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64,
            "bool": np.bool_}
RESULT_TAG = "FUZZRESULT "


# ---------------------------------------------------------------------------
# inputs


def random_scalar(r, ty):
    if ty == "bool":
        return np.bool_(r.random() < 0.5)
    if ty in ("int32", "int64"):
        c = r.random()
        if c < 0.15:
            v = r.choice((0, 1, -1, gen.PARAM_BOUND, -gen.PARAM_BOUND))
        elif c < 0.8:
            v = r.randint(-12, 12)
        else:
            v = r.randint(-gen.PARAM_BOUND, gen.PARAM_BOUND)
        return NP_TYPES[ty](v)
    c = r.random()
    if c < 0.15:
        v = r.choice((0.0, -0.0, 0.5, -1.0, 1.0, 2.0, 1e-3, float(gen.PARAM_BOUND)))
    elif c < 0.4:
        v = float(r.randint(-20, 20))
    elif c < 0.7:
        v = round(r.uniform(-20, 20), 2)
    else:
        v = r.uniform(-gen.PARAM_BOUND, gen.PARAM_BOUND)
    return NP_TYPES[ty](v)


def array_kind(kind):
    """(element type, rank, annotation) of an array kind of either generator, or None."""
    return gen.ARRAY_KINDS.get(kind) or gen_arrays.ARRAY_KINDS.get(kind)


def random_array(r, kind):
    elem, ndim, _ = array_kind(kind)
    if ndim == 1:
        shape = (r.randint(gen.MIN_LEN_1D, gen.MAX_LEN_1D),)
    else:
        shape = (r.randint(gen.MIN_ROWS, gen.MAX_ROWS), r.randint(gen.MIN_COLS, gen.MAX_COLS))
    n = int(np.prod(shape))
    vals = [random_scalar(r, elem) for _ in range(n)]
    return np.array(vals, dtype=NP_TYPES[elem]).reshape(shape)


def random_inputs(r, func):
    args = []
    arrays_by_kind = {}
    for _, t in func.params:
        if array_kind(t):
            prev = arrays_by_kind.get(t)
            if prev and r.random() < 0.1:
                a = prev[0]  # the same array twice: aliasing from Python
            else:
                a = random_array(r, t)
                arrays_by_kind.setdefault(t, []).append(a)
            args.append(a)
        else:
            args.append(random_scalar(r, t))
    return args


def copy_args(args):
    """Deep copies of the arrays, keeping aliasing between arguments."""
    memo = {}
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            if id(a) not in memo:
                memo[id(a)] = a.copy()
            out.append(memo[id(a)])
        else:
            out.append(a)
    return out


GUARD = 4          # elements before and after each array passed to compiled code
GUARD_VALUE = 7777


def guarded_copy_args(args):
    """Like copy_args, but each array is a view into a larger buffer whose
    GUARD elements on each side hold GUARD_VALUE: an out-of-bounds read
    then sees a recognisable value, and an out-of-bounds write is caught by
    check_guards. Returns (args, buffers)."""
    memo = {}
    out, buffers = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            if id(a) not in memo:
                buf = np.full(a.size + 2 * GUARD, GUARD_VALUE, dtype=a.dtype)
                view = buf[GUARD:GUARD + a.size].reshape(a.shape)
                view[...] = a
                assert view.flags.c_contiguous and view.base is buf
                memo[id(a)] = view
                buffers.append(buf)
            out.append(memo[id(a)])
        else:
            out.append(a)
    return out, buffers


def check_guards(buffers):
    """None, or which guard elements a call overwrote."""
    for i, buf in enumerate(buffers):
        bad = [k for k in list(range(GUARD)) + list(range(len(buf) - GUARD, len(buf))) if buf[k] != GUARD_VALUE]
        if bad:
            return f"out-of-bounds write: array {i}, guard elements {bad} now {[buf[k].item() for k in bad]}"
    return None


def show_args(args):
    parts = []
    for a in args:
        if isinstance(a, np.ndarray):
            parts.append(f"np.array({a.tolist()!r}, dtype=np.{a.dtype})")
        else:
            parts.append(f"np.{type(a).__name__}({a.item()!r})")
    return "[" + ", ".join(parts) + "]"


# ---------------------------------------------------------------------------
# running and comparing


class Outcome:
    """What a call did: status 'ok' (value) or 'exc' (exc type name, message),
    printed text, arrays after the call."""

    def __init__(self, status, value, out, arrays, alias=()):
        self.status, self.value, self.out, self.arrays = status, value, out, arrays
        self.alias = alias  # a returned array: shares memory with each array argument?

    def describe(self):
        if self.status == "ok" and isinstance(self.value, np.ndarray):
            s = f"returned array {self.value.tolist()!r} (dtype {self.value.dtype}"
            s += f", shares memory with array arguments: {list(self.alias)})"
        elif self.status == "ok":
            s = f"returned {self.value!r}"
        else:
            s = f"raised {self.value[0]}: {self.value[1]}"
        if self.out:
            s += f"; printed {self.out!r}"
        if self.arrays:
            s += "; arrays after: " + ", ".join(repr(a.tolist()) for a in self.arrays)
        return s


def run_call(fn, args, reference):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            if reference:
                with np.errstate(divide="raise", over="raise", invalid="raise", under="ignore"), \
                        warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = fn(*args)
            else:
                value = fn(*args)
            status = "ok"
        except Exception as e:  # noqa: BLE001 - every exception is an outcome
            status, value = "exc", (type(e).__name__, str(e))
    arrays, originals = [], []
    seen = set()
    for a in args:
        if isinstance(a, np.ndarray) and id(a) not in seen:
            seen.add(id(a))
            originals.append(a)
            arrays.append(a.copy())
    alias = ()
    if status == "ok" and isinstance(value, np.ndarray):
        alias = tuple(bool(np.shares_memory(value, a)) for a in originals)
        value = value.copy()
    return Outcome(status, value, buf.getvalue(), arrays, alias)


DIVISION_OPS = ("scalar divide", "scalar floor_divide", "scalar remainder", "scalar divmod")


def classify_reference(o):
    """'ok', 'zerodiv', 'range' (accepted, skipped), 'exc' (compare types)."""
    if o.status == "ok":
        return "ok"
    name, msg = o.value
    if name == "ZeroDivisionError":
        return "zerodiv"
    if name == "FloatingPointError":
        if "divide by zero" in msg or msg.endswith(DIVISION_OPS):
            return "zerodiv"
        return "range"
    if name == "OverflowError" or (name == "ValueError" and "cannot convert float" in msg):
        return "range"
    return "exc"


def same_float(a, b, rtol):
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return math.copysign(1.0, a) == math.copysign(1.0, b)
    if math.isinf(a) or math.isinf(b):
        return False
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def ref_value_as(ret, v):
    """The reference's return value as the compiled module returns it."""
    if ret is None:
        return v
    if ret == "bool":
        return bool(v)
    if ret in ("int32", "int64"):
        return int(NP_TYPES[ret](v))
    return float(NP_TYPES[ret](v))


def compare(func, ref, got):
    """None if the outcomes agree (or differ in an accepted way), else a reason."""
    cls = classify_reference(ref)
    if cls == "range":
        return None
    if cls == "zerodiv":
        if got.status != "exc" or got.value[0] != "ZeroDivisionError":
            return "reference divided by zero, compiled did not raise ZeroDivisionError"
    elif cls == "exc":
        if got.status != "exc" or got.value[0] != ref.value[0]:
            return f"reference raised {ref.value[0]}, compiled did not"
    else:
        if got.status != "ok":
            return "compiled raised, reference returned"
        if func.ret in gen.ARRAY_KINDS:
            a, b = ref.value, got.value
            if not isinstance(b, np.ndarray) or a.shape != b.shape or a.dtype != b.dtype:
                return "returned array of a different type or shape"
            if not arrays_equal(a, b):
                return "returned array differs"
            if ref.alias != got.alias:
                return "returned array aliases different arguments"
            return compare_effects(ref, got)
        want = ref_value_as(func.ret, ref.value)
        if func.ret in ("float32", "float64"):
            rtol = FLOAT32_RTOL if func.ret == "float32" else FLOAT64_RTOL
            if type(got.value) is not float or not same_float(got.value, want, rtol):
                return "different return value"
        elif type(got.value) is not type(want) or got.value != want:
            return "different return value"
    return compare_effects(ref, got)


def arrays_equal(a, b):
    if a.dtype.kind == "f":
        return all(same_float(x, y, FLOAT64_RTOL) for x, y in zip(a.ravel(), b.ravel()))
    return np.array_equal(a, b)


def same_printed(a, b):
    """Printed texts equal, but for floats within the tolerance (a float32
    prints with at most 9 significant digits, so gets FLOAT32_RTOL)."""
    if a == b:
        return True
    ta, tb = a.split(), b.split()
    if len(ta) != len(tb) or a.count("\n") != b.count("\n"):
        return False
    for x, y in zip(ta, tb):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        digits = max(len(s.lstrip("-").split("e")[0].replace(".", "").strip("0")) for s in (x, y))
        if not same_float(fx, fy, FLOAT32_RTOL if digits <= 9 else FLOAT64_RTOL):
            return False
    return True


def compare_effects(ref, got):
    """Printed output and the array arguments after the call."""
    if not same_printed(ref.out, got.out):
        return "different printed output"
    for i, (a, b) in enumerate(zip(ref.arrays, got.arrays)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"array {i} changed shape/dtype"
        if not arrays_equal(a, b):
            return f"array {i} differs"
    return None


def generator_fault(ref):
    """Reference failures that mean the generator produced a bad kernel."""
    return (classify_reference(ref) == "exc"
            and ref.value[0] in ("IndexError", "TypeError", "NameError", "UnboundLocalError",
                                 "RecursionError", "AttributeError", "SyntaxError"))


def check_kernel(kernel, opts=(0, 3), trials=DEFAULT_TRIALS, workdir=None):
    """Checks one kernel; returns (failures, stats). A failure is a dict."""
    stats = {"calls": 0, "compared": 0, "zerodiv": 0, "range": 0, "exc": 0}
    failures = []
    own_dir = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix=f"pydd-fuzz-{kernel.seed}-") if own_dir else workdir)
    try:
        src = workdir / f"fz{kernel.seed}.pydd"
        src.write_text(kernel.source)
        try:
            ref_mod = pydd.load_python(src, f"fz{kernel.seed}_ref")
        except Exception as e:  # noqa: BLE001
            return [{"kind": "generator", "reason": f"reference does not load: {type(e).__name__}: {e}"}], stats

        def build(o):
            stem = f"fz{kernel.seed}_O{o}"
            d = workdir / stem
            d.mkdir(exist_ok=True)
            s = d / f"{stem}.pydd"
            s.write_text(kernel.source)
            return pydd.compile(s, out_dir=d, opt=o)

        mods = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(opts)) as ex:
            futs = {o: ex.submit(build, o) for o in opts}
            for o, fut in futs.items():
                try:
                    mods[o] = fut.result()
                except Exception as e:  # noqa: BLE001
                    failures.append({"kind": "compile", "opt": o, "reason": f"{type(e).__name__}: {e}"})
        if failures:
            return failures, stats
        for func in kernel.funcs:
            for t in range(trials):
                r = random.Random(kernel.seed * 1000003 + kernel.funcs.index(func) * 101 + t)
                args = random_inputs(r, func)
                ref = run_call(getattr(ref_mod, func.name), copy_args(args), reference=True)
                stats["calls"] += 1
                cls = classify_reference(ref)
                stats[cls if cls != "ok" else "compared"] += 1
                if generator_fault(ref):
                    failures.append({"kind": "generator", "func": func.name, "inputs": show_args(args),
                                     "reason": "reference raised " + ": ".join(ref.value),
                                     "reference": ref.describe()})
                    continue
                for o in opts:
                    cargs, buffers = guarded_copy_args(args)
                    got = run_call(getattr(mods[o], func.name), cargs, reference=False)
                    reason = check_guards(buffers) or compare(func, ref, got)
                    if reason:
                        failures.append({"kind": "mismatch", "opt": o, "func": func.name,
                                         "inputs": show_args(args), "reason": reason,
                                         "reference": ref.describe(), "compiled": got.describe()})
        return failures, stats
    finally:
        if own_dir:
            shutil.rmtree(workdir, ignore_errors=True)


def format_failures(kernel_source, seed, failures, limit=6):
    lines = [f"seed {seed}: {len(failures)} failure(s)"]
    for f in failures[:limit]:
        where = f" -O{f['opt']}" if "opt" in f else ""
        lines.append(f"- [{f['kind']}{where}] {f.get('func', '')}: {f['reason']}")
        if "inputs" in f:
            lines.append(f"    inputs:    {f['inputs']}")
        if "reference" in f:
            lines.append(f"    reference: {f['reference']}")
        if "compiled" in f:
            lines.append(f"    compiled:  {f['compiled']}")
    if len(failures) > limit:
        lines.append(f"  ... and {len(failures) - limit} more")
    lines.append(f"kernel (python3 tests/fuzz/gen.py --seed {seed}):")
    lines.append(kernel_source)
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# subprocess entry point and campaign


def generate(seed, arrays=False):
    """The kernel of `seed` from the scalar generator, or the whole-array one."""
    return gen_arrays.generate(seed) if arrays else gen.generate(seed)


def check_main(seed, opts=(0, 3), trials=None, arrays=False):
    t0 = time.time()
    try:
        kernel = generate(seed, arrays)
        failures, stats = check_kernel(kernel, opts, trials or DEFAULT_TRIALS)
    except Exception:  # noqa: BLE001
        failures, stats = [{"kind": "harness", "reason": traceback.format_exc()}], {}
    result = {"seed": seed, "failures": failures, "stats": stats, "seconds": round(time.time() - t0, 3)}
    sys.stdout.flush()
    print(RESULT_TAG + json.dumps(result), flush=True)
    return 0


def check_in_subprocess(seed, opts=(0, 3), trials=None, timeout=120, arrays=False):
    """Runs `gen.py --check seed` in a child; returns the result dict."""
    cmd = [sys.executable, str(HERE / "gen.py"), "--check", str(seed), "--opt", ",".join(map(str, opts))]
    if arrays:
        cmd.append("--arrays")
    if trials:
        cmd += ["--trials", str(trials)]
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return {"seed": seed, "stats": {}, "seconds": round(time.time() - t0, 3), "failures": [
            {"kind": "timeout", "reason": f"checking took over {timeout} s (a hang in compiled code?); "
                                          f"output: {(e.stdout or b'')[-2000:]!r}"}]}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    return {"seed": seed, "stats": {}, "seconds": round(time.time() - t0, 3), "failures": [
        {"kind": "crash", "reason": f"child exited with status {proc.returncode} without a result "
                                    f"(a crash in compiled code?); stderr: {proc.stderr[-3000:]}"}]}


def campaign(seeds, opts=(0, 3), jobs=2, timeout=120, trials=None, keep=None, arrays=False):
    t0 = time.time()
    totals = {}
    bad = []
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {ex.submit(check_in_subprocess, s, opts, trials, timeout, arrays): s for s in seeds}
        for fut in concurrent.futures.as_completed(futs):
            res = fut.result()
            done += 1
            for k, v in res.get("stats", {}).items():
                totals[k] = totals.get(k, 0) + v
            if res["failures"]:
                bad.append(res)
                src = generate(res["seed"], arrays).source
                print(format_failures(src, res["seed"], res["failures"]), flush=True)
                if keep:
                    Path(keep).mkdir(parents=True, exist_ok=True)
                    (Path(keep) / f"seed{res['seed']}.pydd").write_text(src)
                    (Path(keep) / f"seed{res['seed']}.json").write_text(json.dumps(res, indent=1))
            if done % 25 == 0:
                print(f"[{done}/{len(seeds)}] {time.time() - t0:.0f} s, failing seeds so far: "
                      f"{sorted(b['seed'] for b in bad)}", flush=True)
    print(f"checked {len(seeds)} seeds in {time.time() - t0:.0f} s; calls: {totals}")
    print(f"failing seeds: {sorted(b['seed'] for b in bad)}")
    return 1 if bad else 0
