"""The keyword audit: every keyword argument the library catalog accepts is
either honoured or a located error, never ignored.

The cases are generated: each catalog function that takes a keyword
(`pyddc --list-library`) x each of its keywords x probe values inside and
outside what is supported (in range, out of range, negative, tuples,
duplicates, empty tuples, floats, bools, None, a value known only at run
time). Each probe is one kernel, `r = <call>` on its own line:

- pyddc may reject it, but only with `file:line:col: error:` on that line
  (never a C++ compiler error, never an error elsewhere such as the
  return's type);
- if it compiles, its result must equal the same kernel run as Python with
  NumPy (dtype, shape, values), or raise the same exception kind.

A keyword that was silently dropped gives NumPy's default and fails the
second rule for some probe; test_every_keyword_is_audited fails when the
catalog gains a keyword this table does not probe.

    /usr/bin/python3 -m pytest tests/e2e/test_keyword_audit.py -q
"""

import re
import subprocess
import textwrap
from dataclasses import dataclass, field

import numpy as np
import pytest

import pydd
from same import same

# ---- what is probed -----------------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    text: str            # the keyword's value as written in the call
    param: str = ""      # a kernel parameter the text names (a run-time value)
    arg: object = None   # its value


def rt(type_, value):
    """A probe whose value is a kernel argument, unknown at compile time."""
    return Probe("v", f"v: {type_}", value)


def local(text):
    """A probe bound to a local variable first, so the call sees a name."""
    return Probe("v", "", ("local", text))


AXIS = [Probe(t) for t in ("0", "1", "2", "-1", "-3", "3", "(0, 1)", "(2, 0)", "(-1, 0)", "(1, 1)",
                           "(0,)", "(0, 5)", "()", "1.5", "True", "None")] + \
    [rt("int", 1), rt("int", -2), rt("int", 7), local("(0, 2)"), local("(1, -2)")]
BOOLISH = [Probe(t) for t in ("True", "False", "1", "0", "None", "1.5")] + [rt("bool", True)]
DTYPE = [Probe(t) for t in ("float32", "int64", "int8", "bool", "complex128", "None")]
INTISH = [Probe(t) for t in ("0", "1", "2", "-1", "5", "1.5", "True", "None")] + [rt("int", 2)]
TOLERANCE = [Probe(t) for t in ("0.0", "0.5", "1", "-1.0", "True", "None")] + [rt("float", 0.25)]


@dataclass
class Function:
    """How to call one catalog function: parameters, arguments and the call
    with {kw} where the probed keyword goes."""
    params: str
    args: tuple
    call: str
    probes: dict = field(default_factory=dict)


RNG = np.random.default_rng(47)
A = RNG.standard_normal((2, 3, 4))
A[0, 1, 2] = A[1, 2, 3]  # a tie, for argmin/argmax/sort
M = RNG.standard_normal((3, 4))
V = np.array([0.5, 1.0, 1.0, 3.0])
IDX = np.array([2, 0, 1], dtype=np.int64)

A3 = "a: Array(float64, 3)"
REDUCTION = dict(axis=AXIS, keepdims=BOOLISH)
FUNCTIONS = {
    "zeros": Function("", (), "np.zeros((2, 3), {kw})", {"dtype": DTYPE}),
    "ones": Function("", (), "np.ones((2, 3), {kw})", {"dtype": DTYPE}),
    "empty": Function("", (), "np.zeros_like(np.empty((2, 3), {kw}))", {"dtype": DTYPE}),
    "full": Function("", (), "np.full((2, 3), 7, {kw})", {"dtype": DTYPE}),
    "zeros_like": Function(A3, (A,), "np.zeros_like(a, {kw})", {"dtype": DTYPE}),
    "ones_like": Function(A3, (A,), "np.ones_like(a, {kw})", {"dtype": DTYPE}),
    "empty_like": Function(A3, (A,), "np.zeros_like(np.empty_like(a, {kw}))", {"dtype": DTYPE}),
    "arange": Function("", (), "np.arange(2, {kw})", {
        "stop": [Probe(t) for t in ("7", "7.5", "-2", "None")] + [rt("int", 5)],
        "step": [Probe(t) for t in ("1", "-1", "0", "0.5", "None")] + [rt("int", 0)],
        "dtype": DTYPE}),
    "shape": Function(A3, (A,), "shape(a, {kw})", {"axis": AXIS}),
    "sum": Function(A3, (A,), "np.sum(a, {kw})", REDUCTION),
    "prod": Function(A3, (A,), "np.prod(a, {kw})", REDUCTION),
    "mean": Function(A3, (A,), "np.mean(a, {kw})", REDUCTION),
    "min": Function(A3, (A,), "np.min(a, {kw})", REDUCTION),
    "max": Function(A3, (A,), "np.max(a, {kw})", REDUCTION),
    "argmin": Function(A3, (A,), "np.argmin(a, {kw})", REDUCTION),
    "argmax": Function(A3, (A,), "np.argmax(a, {kw})", REDUCTION),
    "var": Function(A3, (A,), "np.var(a, {kw})", dict(REDUCTION, ddof=INTISH)),
    "std": Function(A3, (A,), "np.std(a, {kw})", dict(REDUCTION, ddof=INTISH)),
    "allclose": Function("x: Array(float64), y: Array(float64)", (V, V + 0.3),
                         "np.allclose(x, y, {kw})", {"rtol": TOLERANCE, "atol": TOLERANCE}),
    "isclose": Function("x: Array(float64), y: Array(float64)", (V, V + 0.3),
                        "np.isclose(x, y, {kw})",
                        {"rtol": TOLERANCE, "atol": TOLERANCE, "equal_nan": BOOLISH}),
    "where": Function("x: Array(float64), y: Array(float64)", (V, -V),
                      "np.where(x > 0.7, {kw})",
                      {"x": [Probe("x, y=y"), Probe("2.0, y=y")], "y": [Probe("y, x=x"), Probe("0, x=x")]}),
    "norm": Function("m: Array(float64, 2)", (M,), "np.linalg.norm(m, {kw})", {
        "ord": [Probe(t) for t in ("None", "1", "2", "-1", "3", "0", "np.inf", "'fro'", "'nuc'")],
        "axis": AXIS}),
    "cumsum": Function(A3, (A,), "np.cumsum(a, {kw})", {"axis": AXIS}),
    "cumprod": Function(A3, (A,), "np.cumprod(a, {kw})", {"axis": AXIS}),
    "diff": Function(A3, (A,), "np.diff(a, {kw})", {"n": INTISH, "axis": AXIS}),
    "linspace": Function("", (), "np.linspace(0.0, 1.0, {kw})", {
        "num": INTISH, "endpoint": BOOLISH}),
    "eye": Function("", (), "np.eye(3, {kw})", {
        "M": [Probe(t) for t in ("None", "2", "5", "0", "-1")] + [rt("int", 4)],
        "k": [Probe(t) for t in ("0", "1", "-1", "10", "None", "1.5")] + [rt("int", -2)],
        "dtype": DTYPE}),
    "identity": Function("", (), "np.identity(3, {kw})", {"dtype": DTYPE}),
    "take": Function(f"{A3}, i: Array(int64)", (A, IDX), "np.take(a, i, {kw})", {"axis": AXIS}),
    "sort": Function(A3, (A,), "np.sort(a, {kw})", {"axis": AXIS}),
    "argsort": Function(A3, (A,), "np.argsort(a, {kw})", {"axis": AXIS}),
    "median": Function(A3, (A,), "np.median(a, {kw})", {"axis": AXIS}),
    "concatenate": Function(A3, (A,), "np.concatenate((a, a), {kw})", {"axis": AXIS}),
    "stack": Function(A3, (A,), "np.stack((a, a), {kw})", {"axis": AXIS}),
    "array": Function("x: Array(float64)", (V,), "np.array(x, {kw})", {"dtype": DTYPE}),
    "searchsorted": Function("x: Array(float64)", (V,), "np.searchsorted(x, 1.0, {kw})", {
        "side": [Probe(t) for t in ("'left'", "'right'", "'middle'", "None")]}),
    "repeat": Function(A3, (A,), "np.repeat(a, 2, {kw})", {"axis": AXIS}),
    "roll": Function(A3, (A,), "np.roll(a, 1, {kw})", {"axis": AXIS}),
    "around": Function(A3, (A,), "np.around(a, {kw})", {"decimals": INTISH}),
    "round": Function("x: float", (2.675,), "round(x, {kw})", {"ndigits": INTISH}),
    # Positional-only in Python (list.pop(index, /), dict.get(key, default, /)):
    # every keyword probe must be rejected, as Python rejects it.
    "pop": Function("l: List(int64)", ([4, 5, 6],), "l.pop({kw})", {"index": INTISH}),
    "get": Function("d: Dict(int64, int64)", ({1: 2},), "d.get(3, {kw})", {"default": INTISH}),
}

# Catalog functions whose keywords are not NumPy's: not reachable by a
# keyword spelling from NumPy code, or not keywords in Python either.
EXEMPT = {
    "assertion_error": "what `assert c, message` lowers to; never spelled in a kernel",
    "empty_spm": "pydd's own sparse constructor; its dtype= is covered by test_sparse.py",
    "spm_set_item": "what S[i, j] = v lowers to",
    "spm_set_item_unsafe": "what S[i, j] = v lowers to",
    "spm_with_values": "pydd's own sparse constructor, without keywords NumPy has",
    "mask_assign": "what a[mask] = v lowers to",
    "index_assign": "what a[indices] = v lowers to",
}


# ---- the catalog's keywords ---------------------------------------------------------------


def catalog_keywords():
    """{function: [keyword, ...]} for every catalog function with a keyword."""
    out = subprocess.run([pydd.find_pyddc(), "--list-library"], capture_output=True, text=True, check=True)
    found = {}
    for line in out.stdout.splitlines():
        m = re.match(r"(\w+)\((.*?)\)\s", line)
        if m:
            params = [p.strip() for p in m.group(2).split(",")]
            if "/" in params:  # positional-only: no keyword to audit
                params = params[params.index("/") + 1:]
            names = [p.split("=")[0] for p in params if "=" in p]
            if names:
                found[m.group(1)] = names
    return found


def test_every_keyword_is_audited():
    missing = []
    for fn, keywords in catalog_keywords().items():
        if fn in EXEMPT:
            continue
        probed = FUNCTIONS.get(fn, Function("", (), "")).probes
        missing += [f"{fn}({kw}=)" for kw in keywords if kw not in probed]
    assert not missing, f"keywords the catalog takes and this audit does not probe: {missing}"


# ---- generating and building the probes ---------------------------------------------------


@dataclass
class Case:
    name: str
    fn: str
    keyword: str
    probe: Probe

    @property
    def function(self):
        return FUNCTIONS[self.fn]

    @property
    def args(self):
        extra = (self.probe.arg,) if self.probe.param else ()
        return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in self.function.args) + extra

    def body(self, annotation):
        f = self.function
        params = ", ".join(p for p in (f.params, self.probe.param) if p)
        ret = f" -> {annotation}" if annotation else ""
        lines = [f"def {self.name}({params}){ret}:"]
        if isinstance(self.probe.arg, tuple) and self.probe.arg[0] == "local":
            lines.append(f"    v = {self.probe.arg[1]}")
        lines += [f"    r = {f.call.format(kw=f'{self.keyword}={self.probe.text}')}", "    return r"]
        return lines


def _cases():
    cases = []
    for fn, f in FUNCTIONS.items():
        for kw, probes in f.probes.items():
            for i, p in enumerate(probes):
                cases.append(Case(f"k_{fn}_{kw}_{i}", fn, kw, p))
    return cases


CASES = _cases()
HEADER = ["from pydd import *", "import numpy as np", ""]


def _annotation(value):
    """The pydd type of a value the Python run returned."""
    if isinstance(value, np.ndarray):
        return f"Array({value.dtype.name}, {value.ndim})" if value.ndim else value.dtype.name
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, np.generic):
        return value.dtype.name
    return {int: "int64", float: "float64", complex: "complex128"}.get(type(value))


def _write(path, cases, annotations):
    lines, spans = list(HEADER), {}
    for c in cases:
        body = c.body(annotations.get(c.name))
        spans[c.name] = (len(lines) + 1, len(lines) + len(body))
        lines += body + [""]
    path.write_text("\n".join(lines) + "\n")
    return spans


class Audit:
    """Runs every probe as Python once (its result type becomes the
    compiled kernel's annotation; a probe NumPy rejects takes the type of
    the function's first accepted probe), then compiles them all in one
    module, dropping the kernels pyddc rejects with a located error."""

    def __init__(self, root):
        self.root = root
        ref_path = root / "audit_ref.pydd"
        _write(ref_path, CASES, {})
        self.reference = pydd.load_python(ref_path, "audit_ref")
        annotations, fallback, self.raising = {}, {}, set()
        for c in CASES:
            try:
                with np.errstate(all="ignore"):
                    value = getattr(self.reference, c.name)(*c.args)
                annotations[c.name] = _annotation(value)
                fallback.setdefault((c.fn, c.keyword), annotations[c.name])
            except Exception:  # noqa: BLE001 - NumPy rejects this probe
                self.raising.add(c.name)
        for c in CASES:
            annotations.setdefault(c.name, fallback.get((c.fn, c.keyword), "float64"))
        self.annotations = annotations
        self.rejected, self.compiled = self._build()

    def _build(self):
        live, rejected, adopted = list(CASES), {}, set()
        for _ in range(len(CASES)):
            src = self.root / "audit.pydd"
            spans = _write(src, live, self.annotations)
            proc = subprocess.run([pydd.find_pyddc(), str(src), "-o", str(self.root), "-O0", "--host=python"],
                                  capture_output=True, text=True, timeout=1200)
            if proc.returncode == 0:
                return rejected, pydd._build._import(self.root / f"audit{pydd._build.EXT_SUFFIX}", "audit")
            located = [(int(m.group(1)), m) for m in re.finditer(r"audit\.pydd:(\d+):\d+: error: .*", proc.stderr)]
            if not located:
                pytest.fail(f"pyddc failed without a located error (a C++ error?):\n{proc.stderr[-4000:]}",
                            pytrace=False)
            for row, m in located:
                owner = next((c for c in live if spans[c.name][0] <= row <= spans[c.name][1]), None)
                if owner is None:
                    pytest.fail(f"an error outside every probe: {m.group(0)}", pytrace=False)
                # A probe NumPy rejects has no result type to declare: take
                # the one pyddc infers, then it must raise as NumPy does.
                ret = re.search(r"expected .* for the return value of '\w+', got (.*)$", m.group(0))
                if ret and owner.name in self.raising and owner.name not in adopted:
                    self.annotations[owner.name] = ret.group(1)
                    adopted.add(owner.name)
                    continue
                rejected[owner.name] = (row - spans[owner.name][0], m.group(0))
            live = [c for c in live if c.name not in rejected]
        pytest.fail("pyddc kept rejecting probes", pytrace=False)


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    return Audit(tmp_path_factory.mktemp("audit"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.fn}-{c.keyword}={c.probe.text if not c.probe.param else 'runtime'}"
                         f"{'' if c.probe.arg is None or not isinstance(c.probe.arg, tuple) else c.probe.arg[1]}"
                         f"-{c.name.rsplit('_', 1)[1]}")
def test_keyword_is_honoured_or_rejected(case, audit):
    if case.name in audit.rejected:
        offset, message = audit.rejected[case.name]
        call_line = len(case.body(None)) - 2  # the `r = <call>` line, counted from the def
        assert offset == call_line, f"rejected, but not at the call:\n{message}\n" + \
            "\n".join(case.body(audit.annotations[case.name]))
        return
    same(getattr(audit.compiled, case.name), getattr(audit.reference, case.name), *case.args, rtol=1e-12)


def test_the_audit_exercises_both_outcomes(audit):
    # A generator that produced only rejections (or only honoured calls)
    # would audit nothing.
    honoured = len(CASES) - len(audit.rejected)
    assert honoured > len(CASES) // 3 and len(audit.rejected) > 20, (honoured, len(audit.rejected))
