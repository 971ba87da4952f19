"""The generated library matrix: every catalog function x dtype x rank x
broadcasting pattern, compiled with pyddc and compared with the same kernel
run as Python with NumPy (see library_cases.py for the cases).

    /usr/bin/python3 -m pytest tests/e2e/test_library_matrix.py -q

test_compiled[...]   compiled kernel vs the Python run: same dtype, shape and
                     values (floats exact for element-wise functions, within a
                     few ulp for the transcendental ones NumPy computes with
                     SVML, within a relative error scaled by the inputs for
                     reductions and linear algebra; NaN where NumPy has NaN,
                     the sign of zero too, except for max/min, where NumPy's
                     SIMD loops return either zero), the same exception kind where the
                     Python run raises, and for a broadcast failure a message
                     naming the operation and both shapes.
test_reference[...]  the Python run itself vs NumPy written directly, and its
                     result type vs the kernel's annotation on every pattern
                     (no compiler needed).

Environment: PYDD_MATRIX_OPT (-O levels for every kernel, e.g. "0,3"; by
default every kernel at -O0 and the operator, method and linear-algebra
families at -O3 too),
PYDD_MATRIX_JOBS (parallel pyddc runs, default: the CPU count). The modules
needed by the selected tests are all compiled in parallel when the first
compiled test runs; a kernel pyddc rejects fails its own test with its
diagnostic and is left out of its module, so the others still run.
"""

import builtins
import concurrent.futures
import contextlib
import importlib.util
import io
import os
import re
import subprocess
import warnings

import numpy as np
import pytest

import pydd
import library_cases as lc

CASES, SKIPPED = lc.all_cases()
BY_NAME = {c.name: c for c in CASES}
# Every kernel at -O0 (g++ -O0 builds the matrix ~4x faster than -O3), and
# the families whose kernels combine several operations also at -O3, where
# pyddc's IR passes have something to work on. PYDD_MATRIX_OPT="0,3" runs
# every kernel at each level given.
O3_FAMILIES = {"operators", "methods", "linalg"}
_OPT_ENV = os.environ.get("PYDD_MATRIX_OPT")
if _OPT_ENV:
    RUNS = [(c.name, int(o)) for c in CASES for o in _OPT_ENV.split(",") if o.strip()]
else:
    RUNS = [(c.name, o) for c in CASES for o in ((0, 3) if c.family in O3_FAMILIES else (0,))]
JOBS = int(os.environ.get("PYDD_MATRIX_JOBS", "0")) or os.cpu_count() or 2
ERROR_KINDS = (ZeroDivisionError, KeyError, IndexError, ValueError, TypeError, OverflowError)


# ---- building -----------------------------------------------------------------------------


def _diagnostics_by_kernel(stderr, members, lines, namespace):
    """{case name: diagnostic text} for the kernels pyddc's errors point at."""
    found = {}
    text = stderr.splitlines()
    for i, line in enumerate(text):
        m = re.search(r"\.pydd:(\d+):(\d+): error: ", line)
        if m:
            row = int(m.group(1))
            for name, (first, last) in lines.items():
                if first <= row <= last:
                    found.setdefault(name, "\n".join(text[i:i + 3]))
            continue
        # C++ compiler errors: "In function 'T ns::kernel(...)'" / "required from ..."
        for m in re.finditer(rf"\b{re.escape(namespace)}::(\w+)\(", line):
            if m.group(1) in members and ("In function" in line or "required from" in line
                                          or "In instantiation" in line):
                block = [ln for ln in text[i:i + 12] if "error" in ln][:2]
                found.setdefault(m.group(1), "\n".join([line, *block]))
    return found


def _build_module(module, members, opt, root, exe):
    """Compiles one module, leaving out kernels pyddc rejects (up to a few
    rounds). Returns (path of the extension or None, {case: error})."""
    stem = f"{module}_O{opt}"
    failed = {}
    for _ in range(8):
        live = [c for c in members if c.name not in failed]
        if not live:
            return None, failed
        text, lines = lc.module_sources(live)[module]
        out = root / stem
        out.mkdir(parents=True, exist_ok=True)
        src = out / f"{stem}.pydd"
        src.write_text(text)
        try:
            proc = subprocess.run([exe, str(src), "-o", str(out), f"-O{opt}", "--host=python"],
                                  capture_output=True, text=True, timeout=1200)
        except subprocess.TimeoutExpired:
            return None, {**failed, **{c.name: f"pyddc timed out on {src}" for c in live}}
        if proc.returncode == 0:
            so = out / f"{stem}{pydd._build.EXT_SUFFIX}"
            return so, failed
        names = {c.name for c in live}
        found = _diagnostics_by_kernel(proc.stderr, names, lines, stem)
        if not found:
            msg = (proc.stderr or proc.stdout).strip()
            return None, {**failed, **{c.name: f"{src} failed to compile:\n{msg[:3000]}" for c in live}}
        failed.update(found)
    return None, {**failed, **{c.name: "given up after 8 rounds" for c in members if c.name not in failed}}


def _import(so, stem):
    spec = importlib.util.spec_from_file_location(stem, so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class MatrixBuilds:
    def __init__(self, root, wanted):
        self.root = root
        self.exe = pydd.find_pyddc()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=JOBS)
        members = {}
        for case in CASES:
            members.setdefault(case.module, []).append(case)
        self.members = members
        self.futures = {}
        for key in wanted:  # in test order, so the first tests' modules come first
            self._submit(key)
        self.modules = {}

    def _submit(self, key):
        if key not in self.futures:
            module, opt = key
            self.futures[key] = self.pool.submit(_build_module, module, self.members[module], opt, self.root,
                                                 self.exe)

    def kernel(self, case, opt):
        key = (case.module, opt)
        self._submit(key)
        if key not in self.modules:
            so, failed = self.futures[key].result()
            mod = _import(so, so.name.split(".")[0]) if so is not None else None
            self.modules[key] = (mod, failed)
        mod, failed = self.modules[key]
        if case.name in failed:
            pytest.fail(f"pyddc rejected {case.name}:\n{case.source()}\n{failed[case.name]}", pytrace=False)
        return getattr(mod, case.name)


class References:
    def __init__(self, root):
        self.root = root
        self.modules = {}
        self.sources = None

    def kernel(self, case):
        if case.module not in self.modules:
            if self.sources is None:
                self.sources = lc.module_sources(CASES)
            path = self.root / f"{case.module}.pydd"
            path.write_text(self.sources[case.module][0])
            self.modules[case.module] = pydd.load_python(path, f"{case.module}_ref")
        return getattr(self.modules[case.module], case.name)


@pytest.fixture(scope="session")
def references(tmp_path_factory):
    return References(tmp_path_factory.mktemp("matrix_ref"))


@pytest.fixture(scope="session")
def matrix(tmp_path_factory, request):
    wanted = []
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.originalname == "test_compiled" and "case" in params:
            key = (BY_NAME[params["case"]].module, params["mopt"])
            if key not in wanted:
                wanted.append(key)
    try:
        builds = MatrixBuilds(tmp_path_factory.mktemp("matrix"), wanted)
    except pydd.CompileError as e:  # no pyddc
        pytest.fail(str(e), pytrace=False)
    yield builds
    builds.pool.shutdown(wait=False, cancel_futures=True)


# ---- comparing ----------------------------------------------------------------------------


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _run(fn, args, capture=False):
    """(status, value, stdout) of fn(*args)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf) if capture else contextlib.nullcontext():
        status, value = lc.call(fn, args)
    return status, value, buf.getvalue()


def _is_float(x):
    """A float or complex value (NaN may appear)."""
    return isinstance(x, (float, complex, np.inexact)) or (isinstance(x, np.ndarray) and x.dtype.kind in "fc")


def _same_kind(got, expected, where):
    """A scalar result is a Python (or NumPy) scalar of the expected kind; an
    array has the expected dtype and shape."""
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: expected an ndarray, got {type(got).__name__}"
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype}, expected {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
        return
    if isinstance(got, np.generic):
        assert got.dtype == np.asarray(expected).dtype, f"{where}: {got.dtype!r}, expected {np.asarray(expected).dtype}"
        return
    if isinstance(expected, (bool, np.bool_)):
        assert isinstance(got, bool), f"{where}: expected bool, got {type(got).__name__} {got!r}"
    elif isinstance(expected, (int, np.integer)):
        assert isinstance(got, int) and not isinstance(got, bool), \
            f"{where}: expected int, got {type(got).__name__} {got!r}"
    elif isinstance(expected, (float, np.floating)):
        assert isinstance(got, float), f"{where}: expected float, got {type(got).__name__} {got!r}"
    elif isinstance(expected, (complex, np.complexfloating)):
        assert isinstance(got, complex), f"{where}: expected complex, got {type(got).__name__} {got!r}"
    else:
        raise AssertionError(f"{where}: unexpected reference result {expected!r}")


def _float_mismatch(got, exp, tol, zero_sign=True):
    """Indices where float arrays differ beyond `tol` (an array or None for
    exact, which also compares the sign of zero unless zero_sign is false);
    NaN matches NaN. Complex arrays compare part by part."""
    if exp.dtype.kind == "c":
        got = np.asarray(got, dtype=exp.dtype)
        bad = [_float_mismatch(part(got), part(exp), tol, zero_sign) for part in (np.real, np.imag)]
        return np.unique(np.concatenate(bad), axis=0) if sum(map(len, bad)) else bad[0]
    got = np.asarray(got, dtype=exp.dtype)
    gnan, enan = np.isnan(got), np.isnan(exp)
    bad = gnan != enan
    both = ~gnan & ~enan
    if tol is None:
        bad |= both & (got != exp)
        if zero_sign:
            bad |= both & (np.signbit(got) != np.signbit(exp))
    else:
        inf = both & (np.isinf(got) | np.isinf(exp))
        bad |= inf & (got != exp)
        fin = both & ~inf
        with np.errstate(all="ignore"):
            bad |= fin & ~(np.abs(got.astype(np.float64) - exp.astype(np.float64)) <= tol)
    return np.argwhere(bad)


def _scale(case, args):
    fn = case.scale or lc.python_function(case)
    absargs = tuple(np.abs(a) if _is_float(a) and isinstance(a, np.ndarray) else a for a in args)
    status, value = lc.call(fn, absargs)
    return value if status == "ok" else None


def _tolerance(case, exp, args, scale):
    if case.compare == "ulp":
        # of a complex result, ulps of its magnitude for each part
        return lc.ULPS * np.spacing(np.abs(exp))
    if case.compare == "approx":
        s = np.abs(np.asarray(scale if scale is not None else exp)).astype(np.float64)
        with np.errstate(all="ignore"):
            return case.rtol * (np.where(np.isfinite(s), s, 0.0) + np.abs(exp).astype(np.float64)) \
                + (1e-30 if exp.dtype in (np.float32, np.complex64) else 1e-300)
    return None


def assert_same_value(case, got, expected, args, where):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), f"{where}: expected a {len(expected)}-tuple, got {got!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same_value(case, g, e, args, f"{where}[{i}]")
        return
    if expected is None:
        assert got is None, f"{where}: expected None, got {got!r}"
        return
    _same_kind(got, expected, where)
    if case.compare == "shape":
        return
    exp = np.asarray(expected)
    if exp.dtype.kind not in "fc":
        ok = np.array_equal(np.asarray(got), exp)
        assert ok, f"{where}: values differ\n got      {got!r}\n expected {expected!r}"
        return
    scale = None
    if case.compare == "approx":
        scale = _scale(case, args)
        if isinstance(scale, tuple) or (scale is not None and np.shape(scale) != exp.shape):
            scale = np.full(exp.shape, max((np.abs(a).max(initial=0) for a in args if isinstance(a, np.ndarray)),
                                           default=1.0))
    bad = _float_mismatch(np.asarray(got), exp, _tolerance(case, exp, args, scale), case.zero_sign)
    if len(bad):
        idx = tuple(bad[0])
        g, e = np.asarray(got)[idx], exp[idx]
        raise AssertionError(f"{where}: {len(bad)} of {exp.size} values differ ({case.compare}), first at {idx}: "
                             f"got {g!r}, expected {e!r}\n got      {got!r}\n expected {expected!r}")


def _error_kinds(exc):
    return tuple(k for k in ERROR_KINDS if isinstance(exc, k)) or (type(exc),)


def compare_run(case, got_run, exp_run, args, where, message=True):
    gs, gv, gout = got_run
    es, ev, eout = exp_run
    if es == "raise":
        kinds = _error_kinds(ev)
        assert gs == "raise", f"{where}: expected {type(ev).__name__}({ev}), got {gv!r}"
        assert isinstance(gv, kinds), f"{where}: raised {type(gv).__name__}({gv}), expected {type(ev).__name__}({ev})"
        if message and case.check_message and "broadcast" in str(ev):
            shapes = [s for s in re.findall(r"\([\d,]*\)", str(ev)) if s != "()"]
            text = str(gv)
            missing = [s for s in [case.op_name, *shapes] if s not in text.replace(" ", "")]
            assert not missing, f"{where}: message {text!r} does not name {missing} (NumPy: {ev})"
        return
    assert gs == "ok", f"{where}: raised {type(gv).__name__}: {gv}\n expected {ev!r}"
    assert_same_value(case, gv, ev, args, where)
    if case.compare == "stdout":
        assert gout == eout, f"{where}: printed {gout!r}, expected {eout!r}"


def _describe(args):
    def one(a):
        if isinstance(a, np.ndarray):
            view = "" if a.flags.c_contiguous else " (view)"
            return f"{a.dtype}{list(a.shape)}{view}"
        return repr(a)
    return "(" + ", ".join(one(a) for a in args) + ")"


# ---- tests --------------------------------------------------------------------------------

NAMES = [c.name for c in CASES]


@pytest.mark.parametrize("case,mopt", [pytest.param(n, o, id=f"{n}-O{o}") for n, o in RUNS])
def test_compiled(case, mopt, matrix, references):
    case = BY_NAME[case]
    comp = matrix.kernel(case, mopt)
    ref = references.kernel(case)
    capture = case.compare == "stdout"
    for k, args in enumerate(lc.inputs(case)):
        where = f"{case.name} pattern {k} {_describe(args)}"
        a1, a2 = _copy(args), _copy(args)
        got = _run(comp, a1, capture)
        exp = _run(ref, a2, capture)
        compare_run(case, got, exp, args, where)
        if case.compare == "inplace":
            for i, (x, y) in enumerate(zip(a1, a2)):
                if isinstance(y, np.ndarray):
                    assert np.array_equal(x, y, equal_nan=True), f"{where}: argument {i} after the call differs"
        if case.compare == "copy" and got[0] == "ok":
            assert not np.shares_memory(got[1], a1[0]), f"{where}: copy() aliases its argument"


def _oracle_run(case, args):
    if case.oracle is None:
        return None
    return _run(case.oracle, args)


@pytest.mark.parametrize("case", NAMES)
def test_reference(case, references):
    """The Python run is what NumPy gives, with the annotated result type."""
    case = BY_NAME[case]
    ref = references.kernel(case)
    for k, args in enumerate(lc.inputs(case)):
        where = f"{case.name} pattern {k} {_describe(args)}"
        status, value, _ = _run(ref, _copy(args), case.compare == "stdout")
        if status == "ok":
            assert lc.annotation_of(value) == case.result, \
                f"{where}: the Python run gives {lc.annotation_of(value)}, the kernel is annotated {case.result}"
        oracle = _oracle_run(case, _copy(args))
        if oracle is not None:
            if oracle[0] == "raise":
                assert status == "raise" and isinstance(value, _error_kinds(oracle[1])), \
                    f"{where}: NumPy raises {oracle[1]!r}, the reference gives {value!r}"
            else:
                assert status == "ok", f"{where}: the reference raises {value!r}, NumPy gives {oracle[1]!r}"
                exp = oracle[1]
                if case.compare not in ("shape",):
                    # NumPy written directly and the reference compute identically
                    assert np.asarray(value).dtype == np.asarray(exp).dtype, f"{where}: dtype {np.asarray(value).dtype}, NumPy {np.asarray(exp).dtype}"
                    assert np.shape(value) == np.shape(exp), f"{where}: shape {np.shape(value)}, NumPy {np.shape(exp)}"
                    assert np.array_equal(np.asarray(value), np.asarray(exp), equal_nan=_is_float(exp)), \
                        f"{where}: {value!r}, NumPy {exp!r}"


def test_matrix_covers_the_catalog():
    """Every element-wise function and reduction has kernels for every
    numeric dtype at every rank: a broken reference would otherwise make
    cases disappear silently (annotate() leaves out what NumPy rejects)."""
    have = {(c.family, c.name.split("__")[0], c.name.split("__")[1].split("_")[0]) for c in CASES if "__" in c.name}
    for fn in lc.BINARY:
        for dt in lc.NUMERIC:
            for r in lc.RANKS:
                assert ("binary", fn, lc._sig(dt, r)) in have, (fn, dt, r)
    for fn in lc.UNARY:
        for dt in lc.NUMERIC:
            for r in lc.RANKS:
                assert ("unary", fn, lc._sig(dt, r)) in have, (fn, dt, r)
    for fn in lc.REDUCTIONS:
        for dt in lc.DTYPES:
            for r in (1, 2, 3):
                assert ("reduce", fn, lc._sig(dt, r)) in have, (fn, dt, r)
    # what bool leaves out is exactly what NumPy rejects or types outside pydd
    assert all(re.search(r"(^|_)br\d", name.split("__")[1]) for name in SKIPPED), sorted(SKIPPED)
    assert len(CASES) > 3000
    shapes = [s for c in CASES for p in c.patterns for s in p if isinstance(s, tuple) and s
              and not isinstance(s[0], str)]
    assert sum(0 in s for s in shapes) > 1000  # empty arrays
