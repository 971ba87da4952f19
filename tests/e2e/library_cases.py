"""The generated matrix of library kernels (used by test_library_matrix.py).

Every case is one small kernel, e.g.

    def add__f64r2_f64r1(a: Array(float64, 2), b: Array(float64, 1)) -> Array(float64, 2):
        return add(a, b)

with a list of input patterns (shapes, broadcasting, empty arrays, strided
views, NaN/inf, zero divisors, shapes that do not broadcast). The return
annotation is what the kernel gives when run as Python with NumPy on the
first pattern; a dtype combination NumPy rejects (bool - bool) or gives a
type pydd lacks (bool // bool is int8, sqrt(bool) float16) is left out.
Cases are packed into modules of at most MAX_KERNELS kernels per family.

Families: binary (every element-wise binary function x dtype x rank pair),
promote (mixed dtypes), smallints (int8 ... uint64: every pair of the 11
element types, each binary function, a few unary ones and reductions), unary, reduce, axis, where, allclose, alloc, linalg,
operators, literals (weak Python scalars), methods, builtins, print,
complex (representative rows for complex64 and complex128).

    python3 tests/e2e/library_cases.py [--list | --source MODULE]

prints the case names or one module's source.
"""

import builtins
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import pydd  # noqa: E402  (switches NumPy to NEP 50 promotion)
from pydd import _lib  # noqa: E402

DTYPES = ("bool", "int32", "int64", "float32", "float64")
# Complex types have a family of their own (a few representative cases, not
# the cartesian product of every function, dtype and rank).
COMPLEX = ("complex64", "complex128")
# The small and unsigned integers get a family of their own (smallints), a
# few rows per function rather than DTYPES' full cartesian product.
SMALL_INTS = ("int8", "int16", "uint8", "uint16", "uint32", "uint64")
ALL_DTYPES = DTYPES + SMALL_INTS
SHORT = {"bool": "b", "int32": "i32", "int64": "i64", "float32": "f32", "float64": "f64", "complex64": "c64",
         "complex128": "c128", "int8": "i8", "int16": "i16", "uint8": "u8", "uint16": "u16", "uint32": "u32",
         "uint64": "u64"}
FLOATS = ("float32", "float64")
INTS = ("int32", "int64")
NUMERIC = INTS + FLOATS
BASE = (3, 4, 5)  # full shape of rank r: BASE[-r:]
MAX_KERNELS = 64

# Element-wise functions whose float results may differ from NumPy's by a few
# ulp: NumPy uses its own SIMD (SVML) implementations on AVX-512 machines.
ULP_FUNCTIONS = {"exp", "log", "cos", "sin", "tan", "acos", "asin", "atan", "pow", "tanh", "sinh", "cosh", "log2",
                 "log10", "exp2", "expm1", "log1p", "arctan2", "hypot"}
ULPS = 4

BINARY = ("add", "sub", "mul", "div", "floordiv", "mod", "pow", "maximum", "minimum",
          "eq", "neq", "lt", "gt", "le", "ge", "logical_and", "logical_or")
UNARY = ("abs", "minus", "isnan", "isinf", "logical_not", "elemwise_not", "sqrt", "exp", "log",
         "cos", "sin", "tan", "acos", "asin", "atan", "floor", "ceil")
REDUCTIONS = ("sum", "prod", "min", "max", "argmin", "argmax", "any", "all", "mean")
AXIS_REDUCTIONS = ("sum", "prod", "min", "max", "mean", "argmin", "argmax")
# The ufuncs of runtime/include/pydd/ufuncs.h (family "ufuncs"): every dtype
# NumPy defines them on, every rank; binary ones over fewer rank pairs.
MORE_UNARY = ("tanh", "sinh", "cosh", "log2", "log10", "exp2", "expm1", "log1p", "square", "sign")
MORE_BINARY = ("arctan2", "hypot", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor")
MORE_BINARY_RANK_PAIRS = ((0, 0), (1, 1), (0, 2), (2, 1), (1, 3), (3, 3))


def _keep_int(ufunc):
    def f(x):
        x = np.asarray(x)
        return (x.copy() if x.dtype.kind in "biu" else ufunc(x))[()]
    return f


# The NumPy meaning of each element-wise function, written independently of
# pydd._lib (the reference's self-check compares against these).
UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
          "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "maximum": np.maximum,
          "minimum": np.minimum, "eq": np.equal, "neq": np.not_equal, "lt": np.less, "gt": np.greater,
          "le": np.less_equal, "ge": np.greater_equal, "logical_and": np.logical_and,
          "logical_or": np.logical_or, "abs": np.absolute, "minus": np.negative, "isnan": np.isnan,
          "isinf": np.isinf, "logical_not": np.logical_not, "elemwise_not": np.logical_not, "sqrt": np.sqrt,
          "exp": np.exp, "log": np.log, "cos": np.cos, "sin": np.sin, "tan": np.tan, "acos": np.arccos,
          "asin": np.arcsin, "atan": np.arctan, "floor": _keep_int(np.floor), "ceil": _keep_int(np.ceil),
          **{fn: getattr(np, fn) for fn in MORE_UNARY + MORE_BINARY}}


def type_text(dtype, rank):
    return dtype if rank == 0 else f"Array({dtype}, {rank})"


@dataclass
class Param:
    name: str
    dtype: str
    rank: int = 0
    role: str = "any"  # how values are drawn: any, exp, unit, finite, pos, small, cond, count


@dataclass
class Case:
    """One kernel: `name(params) -> result: body`."""
    name: str
    family: str
    params: list
    body: str  # statements, 4-space indented lines without the indent
    patterns: list  # each a list with one entry per parameter: a shape, None (scalar) or ("spec", ...)
    compare: str = "exact"  # exact, ulp, approx, shape, inplace, stdout
    rtol: float = 0.0
    result: str = None  # the return annotation, filled in by annotate()
    module: str = None
    scale: object = None  # approx: function of the |inputs| giving the error scale
    check_message: bool = False  # broadcast errors: the message names the operation and the shapes
    op_name: str = None
    oracle: object = None  # the same computation written directly with NumPy (checks the reference)
    # Whether the sign of a zero result must match: not for max/min, whose
    # result for -0.0 vs 0.0 NumPy leaves to the SIMD instruction (either zero).
    zero_sign: bool = None

    def __post_init__(self):
        if self.zero_sign is None:
            self.zero_sign = not re.search(r"\b(maximum|minimum|min|max)\b", self.body)

    def source(self, annotation=None):
        params = ", ".join(f"{p.name}: {type_text(p.dtype, p.rank)}" for p in self.params)
        ann = annotation if annotation is not None else self.result
        head = f"def {self.name}({params})" + (f" -> {ann}" if ann else "") + ":"
        return head + "\n" + "".join(f"    {line}\n" for line in self.body.splitlines())


# ---- inputs ---------------------------------------------------------------------------------

FLOAT_SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0)


def _rng(case, k):
    return np.random.default_rng(zlib.crc32(f"{case.name}/{k}".encode()))


def _values(rng, dtype, shape, role, k):
    """Random values of `dtype` (shape () gives a 0-d array)."""
    if dtype in COMPLEX:  # each part drawn as a float of the parts' type
        part = "float32" if dtype == "complex64" else "float64"
        re, im = _values(rng, part, shape, role, k), _values(rng, part, shape, role, k + 7)
        return _join(re, im, dtype)
    n = int(np.prod(shape)) if shape else 1
    if role == "cond" or dtype == "bool":
        v = rng.random(n) < 0.5
    elif dtype in SMALL_INTS:
        info = np.iinfo(dtype)
        if role == "exp":
            v = rng.integers(0, 6, n)
        elif role in ("small", "unit", "pos"):
            v = rng.integers(builtins.max(info.min, -3), 4, n)
        else:
            # The whole range (products and sums wrap), with zeros (divisors),
            # -1 and the extremes at about one element in four.
            v = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
            mask = rng.random(n) < 1 / 4
            specials = [0, 1, info.min, info.max] + ([-1] if info.min else [])
            v[mask] = rng.choice(np.array(specials, dtype=dtype), int(mask.sum()))
    elif dtype in INTS:
        if role == "exp":
            v = rng.integers(0, 6, n)
        elif role in ("small", "unit"):
            v = rng.integers(-3, 4, n)
        elif role == "pos":
            v = rng.integers(1, 6, n)
        else:
            v = rng.integers(-20, 21, n)
    else:
        if role == "unit":
            v = rng.uniform(-1.1, 1.1, n)
        elif role == "exp":
            v = rng.normal(0, 2, n)
        elif role == "pos":
            v = rng.uniform(0.5, 3.0, n)
        else:
            v = np.round(rng.normal(0, 4, n), 3) if role == "small" else rng.normal(0, 4, n)
        if role not in ("finite", "pos"):
            # NaN, +-inf and signed zeros at about one element in six; the
            # first scalar draws cycle through them.
            mask = rng.random(n) < 1 / 6
            v[mask] = rng.choice(FLOAT_SPECIALS, int(mask.sum()))
            if n == 1 and 1 <= k <= len(FLOAT_SPECIALS):
                v[0] = FLOAT_SPECIALS[k - 1]
    return np.asarray(v).astype(dtype).reshape(shape)


def _join(re, im, dtype):
    """re + 1j * im without inf * 0j making NaN of the other part."""
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im
    return out


def make_arg(rng, param, spec, k, previous):
    """The argument for `param` under pattern entry `spec`."""
    if isinstance(spec, tuple) and spec and isinstance(spec[0], str):
        kind = spec[0]
        if kind == "value":  # a literal scalar
            return np.dtype(param.dtype).type(spec[1])
        if kind == "strided":  # a non-contiguous view of a larger array
            shape = spec[1]
            big = _values(rng, param.dtype, tuple(s * 2 for s in shape), param.role, k)
            return big[tuple(slice(None, None, 2) for _ in shape)]
        if kind == "transposed":
            shape = spec[1]
            return _values(rng, param.dtype, shape[::-1], param.role, k).T
        if kind == "near":  # a value close to argument spec[1] (allclose)
            base = previous[spec[1]]
            noise = spec[2] if len(spec) > 2 else 1e-9
            return (np.asarray(base) * (1 + noise)).astype(param.dtype)[()]
        if kind == "array":  # explicit values
            return np.array(spec[1], dtype=param.dtype)
        raise ValueError(kind)
    if spec is None:
        return _values(rng, param.dtype, (), param.role, k)[()]
    return _values(rng, param.dtype, tuple(spec), param.role, k)


def inputs(case):
    """The argument tuples of every pattern of `case` (deterministic)."""
    out = []
    for k, pattern in enumerate(case.patterns):
        rng = _rng(case, k)
        args = []
        for p, spec in zip(case.params, pattern):
            args.append(make_arg(rng, p, spec, k, args))
        out.append(tuple(args))
    return out


# ---- shape patterns ------------------------------------------------------------------------


def full(r):
    return tuple(BASE[len(BASE) - r:]) if r else None


def _cut(shape, r):
    return tuple(shape[len(shape) - r:]) if r else None


def _set(shape, axis, value):
    s = list(shape)
    s[axis] = value
    return tuple(s)


def unary_patterns(r):
    if r == 0:
        return [[None] for _ in range(7)]
    f = full(r)
    pats = [[f], [_set(f, 0, 1)], [_set(f, -1, 0)], [("strided", f)]]
    if r >= 2:
        pats.append([("transposed", f)])
    return pats


def binary_patterns(ra, rb, mismatch=True):
    """Shapes for two operands of ranks ra and rb: equal, broadcast over
    size-1 axes (each side and both), empty (with and without broadcasting),
    strided, and (both arrays) shapes that do not broadcast, last."""
    n = builtins.max(ra, rb)
    if n == 0:
        return [[None, None] for _ in range(7)]
    F = full(n)
    pats = [[_cut(F, ra), _cut(F, rb)]]
    if ra:
        pats.append([_cut(_set(F, n - ra, 1), ra), _cut(F, rb)])
    if rb:
        pats.append([_cut(F, ra), _cut(_set(F, -1, 1), rb)])
    if ra and rb and n >= 2:
        pats.append([_cut(_set(F, -1, 1), ra), _cut(_set(F, n - rb, 1), rb)])
    E = _set(F, -1, 0)
    pats.append([_cut(E, ra), _cut(E, rb)])
    if rb:
        pats.append([_cut(E, ra), _cut(_set(E, -1, 1), rb)])
    if ra:
        pats.append([("strided", _cut(F, ra)), _cut(F, rb)])
    if rb >= 2:
        pats.append([_cut(F, ra), ("transposed", _cut(F, rb))])
    if ra == 0 or rb == 0:
        pats.append([_cut(F, ra), _cut(F, rb)])  # another scalar draw
    if mismatch and ra and rb:
        pats.append([_cut(F, ra), _cut(_set(F, -1, F[-1] + 1), rb)])
    return pats


def reduce_patterns(r):
    f = full(r)
    pats = [[f], [_set(f, 0, 1)], [("strided", f)], [_set(f, -1, 0)]]
    if r >= 2:
        pats.append([("transposed", f)])
    return pats


# ---- the result annotation -------------------------------------------------------------------

_PYDD_DTYPES = {np.dtype(d): d for d in ALL_DTYPES + COMPLEX}


class Skip(Exception):
    """The case is not meaningful in pydd (NumPy rejects it or gives a dtype pydd lacks)."""


def annotation_of(value):
    if value is None:
        return "None"
    if isinstance(value, tuple):
        return "Tuple(" + ", ".join(annotation_of(v) for v in value) + ")"
    if isinstance(value, np.ndarray):
        if value.dtype not in _PYDD_DTYPES or value.ndim == 0:
            raise Skip(f"result {value.dtype} {value.ndim}-D")
        return type_text(_PYDD_DTYPES[value.dtype], value.ndim)
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, complex):
        return "complex128"
    if isinstance(value, np.generic) and value.dtype in _PYDD_DTYPES:
        return _PYDD_DTYPES[value.dtype]
    raise Skip(f"result {type(value).__name__}")


def python_function(case, annotation=""):
    """The kernel run as Python (through the same rewriting as load_python)."""
    import ast
    from pydd._loader import rewrite_tree
    tree = rewrite_tree(ast.parse(case.source(annotation)))
    ns = {"__pydd__": _lib}
    exec("from pydd import *", ns)
    exec(compile(tree, f"<{case.name}>", "exec"), ns)
    return ns[case.name]


def call(fn, args):
    """('ok', result) or ('raise', exception), NumPy warnings silenced."""
    import warnings
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(*args)
        except Exception as e:  # noqa: BLE001 - the kind is compared
            return "raise", e


def annotate(case):
    """Fills in case.result from a Python run on the first pattern; Skip if
    NumPy rejects the kernel or gives a dtype pydd lacks."""
    if case.result is not None:
        return case
    fn = python_function(case)
    status, value = call(fn, inputs(case)[0])
    if status == "raise":
        raise Skip(f"{type(value).__name__}: {value}")
    case.result = annotation_of(value)
    if case.family != "smallints" and re.search(r"\bu?int(8|16)\b|\buint(32|64)\b", case.result):
        # bool // bool is int8 in NumPy; pyddc refuses it (a bool operand
        # of //, % or ** asks for a conversion), as before int8 existed.
        raise Skip(f"result {case.result}")
    return case


# ---- families ----------------------------------------------------------------------------------

def _ab(dta, ra, dtb, rb, role_a="any", role_b="any"):
    return [Param("a", dta, ra, role_a), Param("b", dtb, rb, role_b)]


def _name(fn, *parts):
    return f"{fn}__" + "_".join(parts)


def _sig(dt, r):
    return f"{SHORT[dt]}r{r}"


RANKS = (0, 1, 2, 3)
RANK_PAIRS = [(ra, rb) for ra in RANKS for rb in RANKS]


def _binary_roles(fn, dt):
    if fn == "pow":
        return ("small", "exp")
    return ("any", "any")


def binary_family():
    cases = []
    for fn in BINARY:
        for dt in DTYPES:
            for ra, rb in RANK_PAIRS:
                ra_role, rb_role = _binary_roles(fn, dt)
                pats = binary_patterns(ra, rb)
                if fn == "pow" and dt in INTS:
                    # a negative integer exponent raises ValueError
                    pats.append([_cut(full(builtins.max(ra, rb, 1)), ra), ("value", -1) if rb == 0 else
                                 ("array", np.full(full(rb), -1))])
                cases.append(Case(_name(fn, _sig(dt, ra), _sig(dt, rb)), "binary", _ab(dt, ra, dt, rb, ra_role, rb_role),
                                  f"return {fn}(a, b)", pats,
                                  compare="ulp" if fn in ULP_FUNCTIONS else "exact",
                                  check_message=True, op_name=fn, oracle=UFUNCS[fn]))
    return cases


PROMOTE_FUNCTIONS = ("add", "sub", "mul", "div", "floordiv", "mod", "pow", "maximum", "lt", "eq", "logical_or")


def promote_family():
    cases = []
    for fn in PROMOTE_FUNCTIONS:
        for dta in DTYPES:
            for dtb in DTYPES:
                if dta == dtb:
                    continue
                for ra, rb in ((0, 1), (1, 0), (2, 1)):
                    roles = _binary_roles(fn, dta)
                    cases.append(Case(_name(fn, _sig(dta, ra), _sig(dtb, rb)), "promote",
                                      _ab(dta, ra, dtb, rb, *roles), f"return {fn}(a, b)",
                                      binary_patterns(ra, rb, mismatch=False)[:3],
                                      compare="ulp" if fn in ULP_FUNCTIONS else "exact", oracle=UFUNCS[fn]))
    return cases


def smallints_family():
    """int8 ... uint64: add over every pair of the 11 element types that
    has one of them (NumPy's promotion, dtypes checked by the annotation),
    each binary function on two arrays of one of them, floor division,
    modulo and power with a scalar, a few unary functions and reductions."""
    cases = []
    for dta in ALL_DTYPES:
        for dtb in ALL_DTYPES:
            if (dta in SMALL_INTS or dtb in SMALL_INTS) and dta != dtb:  # one type: the loop below
                cases.append(Case(_name("add", _sig(dta, 1), _sig(dtb, 1)), "smallints", _ab(dta, 1, dtb, 1),
                                  "return add(a, b)", binary_patterns(1, 1, mismatch=False)[:2], oracle=np.add))
    for dt in SMALL_INTS:
        for fn in BINARY:
            roles = _binary_roles(fn, dt)
            pairs = ((1, 1), (0, 1), (1, 0)) if fn in ("floordiv", "mod", "pow", "sub") else ((1, 1),)
            for ra, rb in pairs:
                cases.append(Case(_name(fn, _sig(dt, ra), _sig(dt, rb)), "smallints", _ab(dt, ra, dt, rb, *roles),
                                  f"return {fn}(a, b)", binary_patterns(ra, rb, mismatch=False)[:4],
                                  compare="ulp" if fn in ULP_FUNCTIONS else "exact", oracle=UFUNCS[fn]))
        unary = ["abs", "minus", "floor", "logical_not", "square", "sign"]
        if np.dtype(dt).itemsize >= 2:
            unary += ["sqrt", "exp"]  # float32 for 16-bit integers; 8-bit ones would be float16
        for fn in unary:
            cases.append(Case(_name(fn, _sig(dt, 2)), "smallints", [Param("a", dt, 2)], f"return {fn}(a)",
                              unary_patterns(2)[:3], compare="ulp" if fn in ULP_FUNCTIONS else "exact",
                              oracle=UFUNCS[fn]))
        for fn in ("sum", "prod", "min", "max", "argmax", "mean", "cumsum"):
            approx = fn == "mean"
            cases.append(Case(_name(fn, _sig(dt, 2)), "smallints", [Param("a", dt, 2)], f"return {fn}(a)",
                              reduce_patterns(2)[:3], compare="approx" if approx else "exact", rtol=1e-12,
                              scale=(lambda x, fn=fn: getattr(np, fn)(x)), oracle=getattr(np, fn)))
        cases.append(Case(_name("sum", _sig(dt, 2), "ax0"), "smallints", [Param("a", dt, 2)], "return sum(a, 0)",
                          reduce_patterns(2)[:3], oracle=lambda x: np.sum(x, axis=0)))
    return cases


def unary_family():
    cases = []
    for fn in UNARY:
        role = "unit" if fn in ("acos", "asin") else "any"
        for dt in DTYPES:
            for r in RANKS:
                if fn == "abs" and r == 0 and dt == "bool":
                    continue  # abs(True) is the builtin's 1 in Python, not NumPy's
                if fn in ("floor", "ceil") and dt == "bool":
                    continue  # NumPy 1.24 gives float16, 2.3 bool; pyddc asks for a conversion
                cases.append(Case(_name(fn, _sig(dt, r)), "unary", [Param("a", dt, r, role)], f"return {fn}(a)",
                                  unary_patterns(r), compare="ulp" if fn in ULP_FUNCTIONS else "exact",
                                  oracle=(np.absolute if r else abs) if fn == "abs" else UFUNCS[fn]))
    return cases


def ufuncs_family():
    cases = []
    for fn in MORE_UNARY:
        for dt in DTYPES:
            if dt == "bool":
                continue  # NumPy rejects bool (sign) or gives int8/float16
            for r in RANKS:
                cases.append(Case(_name(fn, _sig(dt, r)), "ufuncs", [Param("a", dt, r, "any")], f"return {fn}(a)",
                                  unary_patterns(r), compare="ulp" if fn in ULP_FUNCTIONS else "exact",
                                  oracle=UFUNCS[fn]))
    for fn in MORE_BINARY:
        for dt in (("bool",) + INTS if fn.startswith("bitwise") else DTYPES):
            if dt == "bool" and fn in ULP_FUNCTIONS:
                continue
            for ra, rb in MORE_BINARY_RANK_PAIRS:
                cases.append(Case(_name(fn, _sig(dt, ra), _sig(dt, rb)), "ufuncs", _ab(dt, ra, dt, rb),
                                  f"return {fn}(a, b)", binary_patterns(ra, rb),
                                  compare="ulp" if fn in ULP_FUNCTIONS else "exact",
                                  check_message=True, op_name=fn, oracle=UFUNCS[fn]))
    # log(x, base) with an array operand is NumPy's log(x) / log(base)
    # (scalars alone are Python's math.log, in test_scalar.py).
    for dt in INTS + FLOATS:
        for ra, rb in MORE_BINARY_RANK_PAIRS:
            if ra or rb:
                cases.append(Case(_name("log_base", _sig(dt, ra), _sig(dt, rb)), "ufuncs", _ab(dt, ra, dt, rb, "pos", "pos"),
                                  "return log(a, b)", binary_patterns(ra, rb), compare="ulp",
                                  oracle=lambda a, b: np.log(a) / np.log(b)))
    return cases


def _approx_rtol(dt):
    return 1e-5 if dt == "float32" else 1e-12


def reduce_family():
    cases = []
    for fn in REDUCTIONS:
        for dt in DTYPES:
            for r in (1, 2, 3):
                approx = fn in ("sum", "prod", "mean") and (dt in FLOATS or fn == "mean")
                cases.append(Case(_name(fn, _sig(dt, r)), "reduce", [Param("a", dt, r)], f"return {fn}(a)",
                                  reduce_patterns(r), compare="approx" if approx else "exact",
                                  rtol=_approx_rtol(dt), scale=(lambda x, fn=fn: getattr(np, fn)(x)),
                                  oracle=getattr(np, fn)))
    return cases


def axis_family():
    cases = []
    for fn in AXIS_REDUCTIONS:
        for dt in DTYPES:
            for r in (2, 3):
                approx = fn in ("sum", "prod", "mean") and (dt in FLOATS or fn == "mean")
                common = dict(compare="approx" if approx else "exact", rtol=_approx_rtol(dt))
                for axis in range(-1, r):
                    lit = f"m{-axis}" if axis < 0 else str(axis)
                    cases.append(Case(_name(fn, _sig(dt, r), f"ax{lit}"), "axis", [Param("a", dt, r)],
                                      f"return {fn}(a, {axis})", reduce_patterns(r),
                                      scale=(lambda x, fn=fn, axis=axis: getattr(np, fn)(x, axis=axis)),
                                      oracle=(lambda x, fn=fn, axis=axis: getattr(np, fn)(x, axis=axis)), **common))
                # the axis as a variable, spelled as a method; 5 is out of range (ValueError)
                f = full(r)
                pats = [[f, k] for k in range(-r, r)] + [[_set(f, 0, 0), 0], [_set(f, 0, 0), 1], [f, 5]]
                cases.append(Case(_name(fn, _sig(dt, r), "axk"), "axis", [Param("a", dt, r), Param("k", "int64")],
                                  f"return a.{fn}(k)",
                                  [[p[0], ("value", p[1])] for p in pats],
                                  oracle=(lambda x, k, fn=fn: getattr(np, fn)(x, axis=k)), **common))
                if fn in TUPLE_AXIS_REDUCTIONS and dt in TUPLE_AXIS_DTYPES:
                    cases += tuple_axis_cases(fn, dt, r, common)
    for fn in ("var", "std"):
        for dt in ("int32", "float64"):
            for r in (2, 3):
                cases += tuple_axis_cases(fn, dt, r, dict(compare="approx", rtol=_approx_rtol(dt)))
    return cases


# NumPy's axis=(i, j, ...): several axes reduced at once. argmin/argmax take
# one axis only (a TypeError in NumPy; a compile-time error in pydd).
TUPLE_AXIS_REDUCTIONS = ("sum", "prod", "min", "max", "mean")
# The accumulator kinds differ between these (int64 sums, float32 means);
# the reduction itself is one generic path.
TUPLE_AXIS_DTYPES = ("int32", "float32", "float64")


def tuple_axis_cases(fn, dt, r, common):
    """fn(a, axis=T) for tuples T of two axes (in either order, negative
    ones too) and of every axis, with and without keepdims."""
    tuples = [(0, 1), (-1, 0)] + ([(2, 0), (0, 1, 2)] if r == 3 else [(1, 0)])
    cases = []
    for axes in tuples:
        for keep in (False, True):
            lit = "_".join(f"m{-a}" if a < 0 else str(a) for a in axes)
            call = f"{fn}(a, axis={axes}" + (", keepdims=True)" if keep else ")")
            cases.append(Case(_name(fn, _sig(dt, r), f"axt{lit}" + ("k" if keep else "")), "axis", [Param("a", dt, r)],
                              f"return {call}", reduce_patterns(r),
                              scale=(lambda x, fn=fn, axes=axes, keep=keep:
                                     np.abs(getattr(np, fn)(x, axis=axes, keepdims=keep)) + 1),
                              oracle=(lambda x, fn=fn, axes=axes, keep=keep: getattr(np, fn)(x, axis=axes, keepdims=keep)),
                              **common))
    return cases


def numeric_family():
    """runtime/include/pydd/numeric.h: var/std (ddof, axis), count_nonzero,
    trace, cumsum/cumprod (flat and along an axis), diff, linspace, eye,
    identity, outer, isclose, clip."""
    cases = []
    for dt in DTYPES:
        stat = dict(compare="approx" if dt != "bool" else "exact", rtol=_approx_rtol(dt))
        for r in (1, 2, 3):
            a = [Param("a", dt, r)]
            for fn in ("var", "std"):
                if dt != "bool":
                    cases.append(Case(_name(fn, _sig(dt, r)), "numeric", a, f"return {fn}(a)", reduce_patterns(r),
                                      scale=(lambda x, fn=fn: getattr(np, fn)(x) + 1), oracle=getattr(np, fn), **stat))
                    cases.append(Case(_name(fn, _sig(dt, r), "ddof"), "numeric", a, f"return {fn}(a, ddof=1)",
                                      reduce_patterns(r), scale=(lambda x, fn=fn: getattr(np, fn)(x, ddof=1) + 1),
                                      oracle=lambda x, fn=fn: getattr(np, fn)(x, ddof=1), **stat))
                    if r > 1:
                        cases.append(Case(_name(fn, _sig(dt, r), "ax1"), "numeric", a, f"return {fn}(a, 1, 1)",
                                          reduce_patterns(r), scale=(lambda x, fn=fn: getattr(np, fn)(x, axis=1, ddof=1) + 1),
                                          oracle=lambda x, fn=fn: getattr(np, fn)(x, axis=1, ddof=1), **stat))
            cases.append(Case(_name("count_nonzero", _sig(dt, r)), "numeric", a, "return count_nonzero(a)",
                              reduce_patterns(r), oracle=np.count_nonzero))
            for fn in ("cumsum", "cumprod"):
                scan = dict(compare="approx" if dt in FLOATS else "exact", rtol=_approx_rtol(dt))
                cases.append(Case(_name(fn, _sig(dt, r)), "numeric", a, f"return {fn}(a)", reduce_patterns(r),
                                  scale=(lambda x, fn=fn: getattr(np, fn)(x) + 1), oracle=getattr(np, fn), **scan))
                cases.append(Case(_name(fn, _sig(dt, r), "axm1"), "numeric", a, f"return {fn}(a, -1)",
                                  reduce_patterns(r), scale=(lambda x, fn=fn: getattr(np, fn)(x, axis=-1) + 1),
                                  oracle=lambda x, fn=fn: getattr(np, fn)(x, axis=-1), **scan))
            cases.append(Case(_name("diff", _sig(dt, r)), "numeric", a, "return diff(a)", reduce_patterns(r),
                              oracle=np.diff))
            cases.append(Case(_name("diff", _sig(dt, r), "n2ax0"), "numeric", a, "return diff(a, 2, 0)",
                              reduce_patterns(r), oracle=lambda x: np.diff(x, 2, 0)))
        sq = full(2)
        cases.append(Case(_name("trace", _sig(dt, 2)), "numeric", [Param("a", dt, 2)], "return trace(a)",
                          [[sq], [(4, 4)], [(0, 3)], [("strided", (3, 5))], [("transposed", (3, 4))]],
                          compare="approx" if dt in FLOATS else "exact", rtol=_approx_rtol(dt),
                          scale=lambda x: np.abs(x).sum() + 1, oracle=np.trace))
        for dtb in ("bool", "int32", "float64"):
            cases.append(Case(_name("outer", _sig(dt, 1), _sig(dtb, 2)), "numeric", _ab(dt, 1, dtb, 2),
                              "return outer(a, b)", [[(3,), (2, 2)], [(0,), (2, 3)], [("strided", (4,)), (1, 2)]],
                              oracle=np.outer))
        if dt != "bool":
            for ra, rb in ((0, 1), (1, 1), (2, 1), (1, 0)):
                cases.append(Case(_name("isclose", _sig(dt, ra), _sig(dt, rb)), "numeric", _ab(dt, ra, dt, rb),
                                  "return isclose(a, b)", binary_patterns(ra, rb)[:5], oracle=np.isclose))
            cases.append(Case(_name("isclose", _sig(dt, 1), _sig(dt, 1), "tol"), "numeric",
                              _ab(dt, 1, dt, 1) + [Param("rtol", "float64", 0, "pos")],
                              "return isclose(a, b, rtol, 0.5, True)",
                              [[(5,), ("near", 0, 1e-3), None], [(4,), (4,), None], [(0,), (0,), None]],
                              oracle=lambda a, b, r: np.isclose(a, b, r, 0.5, True)))
            # Finite scalar bounds: NumPy 1.x ignores a NaN scalar bound (deprecated; NumPy 2
            # and pydd propagate it, as NumPy 1.x does for array bounds, tested below).
            for ra in (0, 1, 2):
                cases.append(Case(_name("clip", _sig(dt, ra)), "numeric",
                                  [Param("a", dt, ra), Param("lo", dt, 0, "finite"), Param("hi", dt, 0, "finite")],
                                  "return clip(a, lo, hi)", [[full(ra), None, None] for _ in range(4)],
                                  oracle=np.clip, zero_sign=False))
            cases.append(Case(_name("clip", _sig(dt, 2), "arrays"), "numeric",
                              [Param("a", dt, 2), Param("lo", dt, 1), Param("hi", dt, 0, "finite")],
                              "return clip(a, lo, hi)", [[(3, 4), (4,), None], [(0, 4), (4,), None]],
                              oracle=np.clip, zero_sign=False))
        if dt != "bool":
            cases.append(Case(_name("eye", _sig(dt, 0)), "numeric", [Param("n", "int64", 0, "count")],
                              f"return eye(n, n + 1, 1, {dt})", [[("value", 3)], [("value", 0)], [("value", 1)]],
                              oracle=lambda n, dt=dt: np.eye(n, n + 1, 1, dt)))
            cases.append(Case(_name("identity", _sig(dt, 0)), "numeric", [Param("n", "int64", 0, "count")],
                              f"return identity(n, {dt})", [[("value", 3)], [("value", 0)]],
                              oracle=lambda n, dt=dt: np.identity(n, dt)))
    for dt in DTYPES:
        for r in (1, 2, 3):
            for axis in (0, r, -1):
                lit = f"m{-axis}" if axis < 0 else str(axis)
                cases.append(Case(_name("expand_dims", _sig(dt, r), f"ax{lit}"), "numeric", [Param("a", dt, r)],
                                  f"return expand_dims(a, {axis})", reduce_patterns(r)[:3],
                                  oracle=lambda x, axis=axis: np.expand_dims(x, axis)))
    # x[mask] (extract) and x[idx] (take)
    for dt in DTYPES:
        for r in (1, 2, 3):
            cases.append(Case(_name("extract", _sig(dt, r)), "numeric", [Param("a", dt, r)],
                              "return a[a != a * 0]" if dt != "bool" else "return a[a]", reduce_patterns(r),
                              oracle=(lambda x: x[x != x * 0]) if dt != "bool" else (lambda x: x[x])))
        for ri in (1, 2):
            cases.append(Case(_name("take", _sig(dt, 1), _sig("int64", ri)), "numeric",
                              [Param("a", dt, 1), Param("i", "int64", ri)], "return a[i]",
                              [[(5,), ("array", [[0, -1], [4, 2]] if ri == 2 else [3, 3, -5, 0])],
                               [(5,), ("array", [[0, 5]] if ri == 2 else [-6])],
                               [("strided", (5,)), ("array", [[1]] if ri == 2 else [4, 0])],
                               [(0,), ("array", np.zeros((0, 2) if ri == 2 else (0,), np.int64))]],
                              oracle=lambda a, i: a[i]))
        # on 2-D and 3-D arrays: A[idx] and A[:, idx] (take along an axis),
        # A[m] for a mask of the first axis (mask_take)
        for r in (2, 3):
            shape = (4, 3) if r == 2 else (4, 3, 2)
            cases.append(Case(_name("take", _sig(dt, r), _sig("int64", 1)), "numeric",
                              [Param("a", dt, r), Param("i", "int64", 1)], "return a[i]",
                              [[shape, ("array", [3, -1, 0, 3])], [shape, ("array", [4])],
                               [("strided", shape), ("array", [1, -4])], [("transposed", shape), ("array", [1])],
                               [shape, ("array", np.zeros(0, np.int64))]],
                              oracle=lambda a, i: a[i]))
            cases.append(Case(_name("take", _sig(dt, r), _sig("int64", 1), "ax1"), "numeric",
                              [Param("a", dt, r), Param("i", "int64", 1)], "return a[:, i]",
                              [[shape, ("array", [2, -3, 0, 2])], [shape, ("array", [-4])],
                               [("strided", shape), ("array", [1, 0])], [("transposed", shape), ("array", [0])]],
                              oracle=lambda a, i: a[:, i]))
            sel = "a[:, 0]" if r == 2 else "a[:, 0, 0]"
            cases.append(Case(_name("mask_take", _sig(dt, r)), "numeric", [Param("a", dt, r)],
                              f"return a[{sel} != {sel} * 0]" if dt != "bool" else f"return a[{sel}]",
                              reduce_patterns(r),
                              oracle=((lambda x: x[x[:, 0] != x[:, 0] * 0]) if r == 2 else
                                      (lambda x: x[x[:, 0, 0] != x[:, 0, 0] * 0])) if dt != "bool" else
                              ((lambda x: x[x[:, 0]]) if r == 2 else (lambda x: x[x[:, 0, 0]]))))
    # keepdims=True, along one axis and over all of them
    for fn in ("sum", "prod", "mean", "min", "max", "var", "std"):
        for dt in ("int32", "float64"):
            for r in (1, 2, 3):
                for axis in ((None, 0, -1) if r > 1 else (None, 0)):
                    call = f"{fn}(a, keepdims=True)" if axis is None else f"{fn}(a, {axis}, keepdims=True)"
                    approx = fn in ("mean", "var", "std") or (fn == "sum" and dt == "float64")
                    cases.append(Case(_name(fn, _sig(dt, r), "keep" + ("all" if axis is None else f"{axis % r}")),
                                      "numeric", [Param("a", dt, r)], f"return {call}", reduce_patterns(r)[:3],
                                      compare="approx" if approx else "exact", rtol=_approx_rtol(dt),
                                      scale=(lambda x, fn=fn, axis=axis: np.abs(getattr(np, fn)(x, axis=axis, keepdims=True)) + 1),
                                      oracle=(lambda x, fn=fn, axis=axis: getattr(np, fn)(x, axis=axis, keepdims=True))))
    for fn in ("linspace",):
        lin = [Param("a", "float64", 0, "finite"), Param("b", "float64", 0, "finite"), Param("n", "int64", 0, "count")]
        cases.append(Case(_name(fn, "f64r0", "num"), "numeric", lin, "return linspace(a, b, n)",
                          [[None, None, ("value", k)] for k in (0, 1, 2, 7, 50)] + [[("value", 1.0), ("value", 1.0), ("value", 5)],
                                                                                 [None, None, ("value", -1)]],
                          oracle=np.linspace))
        cases.append(Case(_name(fn, "f64r0", "open"), "numeric", lin, "return linspace(a, b, n, False)",
                          [[None, None, ("value", k)] for k in (0, 1, 7)], oracle=lambda a, b, n: np.linspace(a, b, n, False)))
    return cases


def where_family():
    cases = []
    for dt in ("bool", "int32", "float64"):
        pats = [[(7,)], [(0,)], [("strided", (6,))], [("array", [0, 0, 0])]]
        cases.append(Case(_name("where1", _sig(dt, 1)), "where", [Param("c", dt, 1)], "return where(c)", pats,
                          oracle=lambda c: np.nonzero(c)[0]))
    combos = [("float64", "float64"), ("int32", "int32"), ("int32", "float32"), ("bool", "int64"),
              ("float32", "float64"), ("int64", "float32"), ("bool", "bool"), ("float32", "float32")]
    ranks = [(1, 1, 1), (2, 2, 0), (2, 1, 2), (1, 0, 0), (3, 1, 2), (0, 1, 1), (2, 0, 1)]
    for dta, dtb in combos:
        for rc, ra, rb in ranks:
            n = builtins.max(rc, ra, rb)
            F = full(n)
            pats = [[_cut(F, rc), _cut(F, ra), _cut(F, rb)],
                    [_cut(_set(F, -1, 1), rc), _cut(F, ra), _cut(F, rb)],
                    [_cut(_set(F, -1, 0), rc), _cut(_set(F, -1, 0), ra), _cut(_set(F, -1, 1), rb)]]
            if rc and ra:
                pats.append([_cut(F, rc), _cut(_set(F, -1, F[-1] + 2), ra), _cut(F, rb)])
            params = [Param("c", "bool", rc, "cond"), Param("a", dta, ra), Param("b", dtb, rb)]
            cases.append(Case(_name("where3", _sig("bool", rc), _sig(dta, ra), _sig(dtb, rb)), "where", params,
                              "return where(c, a, b)", pats, check_message=True, op_name="where",
                              oracle=lambda c, a, b: np.where(c, a, b).astype(np.result_type(a, b))[()]))
    # a Python literal is weak
    for dt in ("int32", "float32", "bool"):
        cases.append(Case(_name("where3lit", _sig(dt, 1)), "where", [Param("a", dt, 1)],
                          "return where(a > 0, a, 0)", unary_patterns(1)))
    return cases


def allclose_family():
    cases = []
    for dta, dtb in (("float64", "float64"), ("float32", "float64"), ("int32", "float64"), ("float32", "float32"),
                     ("int64", "int64")):
        for ra, rb in ((1, 1), (2, 1), (2, 0), (0, 2), (3, 3)):
            n = builtins.max(ra, rb)
            F = full(n)
            pats = [[_cut(F, ra), _cut(F, rb)]]
            if ra >= rb:
                pats += [[_cut(F, ra), ("near", 0, 1e-9)] if ra == rb else [_cut(F, ra), _cut(F, rb)],
                         [_cut(F, ra), ("near", 0, 1e-3)] if ra == rb else [_cut(F, ra), _cut(F, rb)]]
            if ra and rb:
                pats.append([_cut(F, ra), _cut(_set(F, -1, F[-1] + 1), rb)])
            params = [Param("a", dta, ra, "finite"), Param("b", dtb, rb, "finite")]
            cases.append(Case(_name("allclose", _sig(dta, ra), _sig(dtb, rb)), "allclose", params,
                              "return allclose(a, b)", pats, oracle=lambda a, b: bool(np.allclose(a, b))))
        # NaN is never close, inf is close to itself
        cases.append(Case(_name("allclose_special", SHORT[dta], SHORT[dtb]), "allclose",
                          [Param("a", dta, 1), Param("b", dtb, 1)], "return allclose(a, b)",
                          [[(5,), ("near", 0, 0.0)], [(9,), ("near", 0, 0.0)], [(0,), (0,)]]))
    # keyword tolerances
    cases.append(Case("allclose_tol", "allclose", [Param("a", "float64", 1, "finite"), Param("b", "float64", 1, "finite")],
                      "return allclose(a, b, 1e-2, 1e-3)",
                      [[(6,), ("near", 0, 1e-3)], [(6,), ("near", 0, 1e-1)], [(6,), (6,)]]))
    return cases


def alloc_family():
    cases = []
    sizes = [[("value", n)] for n in (0, 1, 7)] + [[("value", -1)]]
    sizes2 = [[("value", n), ("value", m)] for n, m in ((2, 3), (0, 4), (3, 0), (1, 1))] + [[("value", -2), ("value", 3)]]
    n_, m_ = Param("n", "int64"), Param("m", "int64")
    for fn in ("zeros", "ones", "empty"):
        cmp = "shape" if fn == "empty" else "exact"
        cases.append(Case(f"{fn}__n", "alloc", [n_], f"return {fn}(n)", sizes, compare=cmp))
        for dt in DTYPES:
            cases.append(Case(f"{fn}__nm_{SHORT[dt]}", "alloc", [n_, m_], f"return {fn}((n, m), {dt})", sizes2,
                              compare=cmp))
            cases.append(Case(f"{fn}__n3_{SHORT[dt]}", "alloc", [n_, m_], f"return {fn}([n, m, 2], dtype={dt}())",
                              sizes2, compare=cmp))
    for dt in DTYPES:
        v = Param("v", dt)
        cases.append(Case(f"full__nm_{SHORT[dt]}", "alloc", [n_, m_, v], "return full((n, m), v)",
                          [s + [None] for s in sizes2]))
        cases.append(Case(f"full__n_{SHORT[dt]}_as_f32", "alloc", [n_, v], "return full(n, v, float32)",
                          [s + [None] for s in sizes]))
    for i, lit in enumerate(("2.5", "7", "True", "-0.0")):
        cases.append(Case(f"full__lit{i}", "alloc", [n_], f"return full(n, {lit})", sizes,
                          oracle=lambda n, lit=lit: np.full(n, eval(lit))))
    for fn in ("zeros_like", "ones_like", "empty_like", "copy"):
        for dt in DTYPES:
            for r in (1, 2, 3):
                cases.append(Case(_name(fn, _sig(dt, r)), "alloc", [Param("a", dt, r)], f"return {fn}(a)",
                                  reduce_patterns(r),
                                  compare="shape" if fn == "empty_like" else ("copy" if fn == "copy" else "exact")))
        if fn != "copy":
            cases.append(Case(_name(fn, "f64r2_as_i32"), "alloc", [Param("a", "float64", 2)],
                              f"return {fn}(a, int32)", reduce_patterns(2),
                              compare="shape" if fn == "empty_like" else "exact"))
    for dt in ("int64", "int32", "float64", "float32"):
        s, e, st = Param("s", dt), Param("e", dt), Param("st", dt)
        vals = [(0, 7, 1), (7, 0, -2), (3, 3, 1), (-4, 9, 3), (5, 1, 1)]
        if dt in FLOATS:
            vals += [(0.0, 1.0, 0.1), (1.5, -2.25, -0.5), (0.0, 10.0, 2.5)]
        cases.append(Case(f"arange__n_{SHORT[dt]}", "alloc", [e], "return arange(e)",
                          [[("value", v[1])] for v in vals]))
        cases.append(Case(f"arange__se_{SHORT[dt]}", "alloc", [s, e], "return arange(s, e)",
                          [[("value", v[0]), ("value", v[1])] for v in vals]))
        cases.append(Case(f"arange__ses_{SHORT[dt]}", "alloc", [s, e, st], "return arange(s, e, st)",
                          [[("value", x) for x in v] for v in vals]))
    for dt in DTYPES:
        for r in (1, 2, 3):
            a, v = Param("a", dt, r), Param("v", dt)
            f = full(r)
            cases.append(Case(_name("fill", _sig(dt, r)), "alloc", [a, v], "fill(a, v)",
                              [[f, None], [_set(f, -1, 0), None], [("strided", f), None]], compare="inplace",
                              result="None"))
    return cases


def linalg_family():
    cases = []
    for dt in DTYPES:
        for r in (1, 2, 3):
            cases.append(Case(_name("transpose", _sig(dt, r)), "linalg", [Param("a", dt, r)], "return transpose(a)",
                              reduce_patterns(r)))
    mm_shapes = {(1, 1): [[(5,), (5,)], [(0,), (0,)], [("strided", (5,)), (5,)], [(5,), (4,)]],
                 (1, 2): [[(4,), (4, 3)], [(4,), ("transposed", (4, 3))], [(0,), (0, 3)], [(4,), (3, 4)]],
                 (2, 1): [[(3, 4), (4,)], [("transposed", (3, 4)), (4,)], [(3, 0), (0,)], [(0, 4), (4,)],
                          [(3, 4), (3,)]],
                 (2, 2): [[(3, 4), (4, 5)], [("transposed", (3, 4)), (4, 5)], [(3, 4), ("transposed", (4, 5))],
                          [("strided", (3, 4)), ("strided", (4, 2))], [(3, 0), (0, 5)], [(0, 4), (4, 5)],
                          [(3, 4), (3, 4)]]}
    named = {"innerprod": (1, 1), "vectmat": (1, 2), "matvect": (2, 1), "matmat": (2, 2)}
    for dt in DTYPES:
        fl = dt in FLOATS
        cmp = dict(compare="approx" if fl else "exact", rtol=_approx_rtol(dt))
        for (ra, rb), pats in mm_shapes.items():
            params = [Param("a", dt, ra, "finite"), Param("b", dt, rb, "finite")]
            cases.append(Case(_name("matmult", _sig(dt, ra), _sig(dt, rb)), "linalg", params, "return matmult(a, b)",
                              pats, scale=np.matmul, **cmp))
            cases.append(Case(_name("at", _sig(dt, ra), _sig(dt, rb)), "linalg", params, "return a @ b",
                              pats, scale=np.matmul, **cmp))
        for fn, (ra, rb) in named.items():
            params = [Param("a", dt, ra, "finite"), Param("b", dt, rb, "finite")]
            cases.append(Case(_name(fn, SHORT[dt]), "linalg", params, f"return {fn}(a, b)", mm_shapes[(ra, rb)],
                              scale=np.matmul, **cmp))
        if not fl:
            continue  # syrk, syr2k, symm, trmm are BLAS routines: float32 and float64 only
        sq = [[(4, 4), (4, 3)], [("transposed", (4, 4)), (4, 3)], [(0, 0), (0, 3)], [(4, 4), (3, 3)]]
        A2, B2 = Param("a", dt, 2, "finite"), Param("b", dt, 2, "finite")
        cases.append(Case(_name("syrk", SHORT[dt]), "linalg", [A2], "return syrk(a)",
                          [[(3, 4)], [("transposed", (4, 3))], [(0, 4)], [(3, 0)]],
                          scale=lambda a: a @ a.T, **cmp))
        cases.append(Case(_name("syr2k", SHORT[dt]), "linalg", [A2, B2], "return syr2k(a, b)",
                          [[(3, 4), (3, 4)], [(3, 4), ("transposed", (3, 4))], [(0, 4), (0, 4)], [(3, 4), (3, 5)]],
                          scale=lambda a, b: a @ b.T + b @ a.T, **cmp))
        cases.append(Case(_name("symm", SHORT[dt]), "linalg", [A2, B2], "return symm(a, b)", sq,
                          scale=lambda a, b: (np.tril(a) + np.tril(a, -1).T) @ b, **cmp))
        cases.append(Case(_name("trmm", SHORT[dt]), "linalg", [A2, B2], "return trmm(a, b)", sq,
                          scale=lambda a, b: np.tril(a) @ b, **cmp))
    for dt in ("float64", "float32"):
        A = Param("a", dt, 2, "finite")
        cases.append(Case(_name("lu", SHORT[dt]), "linalg", [A], "return lu(a)",
                          [[(4, 4)], [(3, 5)], [(5, 3)], [("transposed", (4, 4))], [(1, 1)]],
                          compare="approx", rtol=1e-4 if dt == "float32" else 1e-10))
        cases.append(Case(_name("ludcmp", SHORT[dt]), "linalg", [A], "return ludcmp(a)",
                          [[(4, 4)], [(6, 6)], [("transposed", (5, 5))], [(1, 1)]],
                          compare="approx", rtol=1e-4 if dt == "float32" else 1e-10))
    return cases


def manipulation_family():
    """runtime/include/pydd/manipulation.h: sort, argsort, median, unique,
    reshape/ravel/flatten, concatenate/stack/vstack/hstack, array from lists,
    nonzero, unravel_index; and numpy.linalg's det, inv, solve, norm."""
    cases = []
    for dt in DTYPES:
        for r in (1, 2, 3):
            a = [Param("a", dt, r)]
            pats = reduce_patterns(r)
            axes = (None, 0) if r > 1 else (None,)
            for axis in axes:
                tail, arg = ("", "") if axis is None else (f"ax{axis}", f", {axis}")
                cases.append(Case(_name("sort", _sig(dt, r), tail), "manipulation", a, f"return sort(a{arg})", pats,
                                  zero_sign=False, oracle=lambda x, k=-1 if axis is None else axis: np.sort(x, k)))
                cases.append(Case(_name("argsort", _sig(dt, r), tail), "manipulation", a, f"return argsort(a{arg})", pats,
                                  oracle=lambda x, k=-1 if axis is None else axis: np.argsort(x, k, kind="stable")))
            for axis in ((None, -1) if r > 1 else (None,)):
                tail, arg = ("", "") if axis is None else ("axm1", ", -1")
                cases.append(Case(_name("median", _sig(dt, r), tail), "manipulation", a, f"return median(a{arg})", pats,
                                  zero_sign=False, oracle=lambda x, k=axis: np.median(x, k)))
            cases.append(Case(_name("unique", _sig(dt, r)), "manipulation", a, "return unique(a)", pats,
                              zero_sign=False, oracle=np.unique))
            cases.append(Case(_name("ravel", _sig(dt, r)), "manipulation", a, "return a.ravel()", pats, oracle=np.ravel))
            cases.append(Case(_name("flatten", _sig(dt, r)), "manipulation", a, "return a.flatten()", pats,
                              oracle=lambda x: x.flatten()))
            cases.append(Case(_name("nonzero", _sig(dt, r)), "manipulation", a, "return nonzero(a)", pats,
                              oracle=np.nonzero))
            if r > 1:
                cases.append(Case(_name("reshape", _sig(dt, r)), "manipulation", a,
                                  "return reshape(a, (a.shape[0], -1))", pats, oracle=lambda x: x.reshape(x.shape[0], -1)))
                cases.append(Case(_name("reshape", _sig(dt, r), "method"), "manipulation", a,
                                  "return a.reshape(-1, a.shape[r - 1])".replace("r - 1", str(r - 1)), pats,
                                  oracle=lambda x: x.reshape(-1, x.shape[-1])))
                cases.append(Case(_name("unravel_index", _sig(dt, r)), "manipulation", a,
                                  "return unravel_index(argmax(a), a.shape)", pats,
                                  oracle=lambda x: np.unravel_index(np.argmax(x), x.shape)))
            else:
                cases.append(Case(_name("reshape", _sig(dt, r), "bad"), "manipulation", a, "return a.reshape(2, -1)",
                                  [[(4,)], [(5,)], [(0,)]], oracle=lambda x: x.reshape(2, -1)))
        for dtb in ("bool", "int64", "float32"):
            for r in (1, 2):
                ab = _ab(dt, r, dtb, r)
                same_shape = [[full(r), full(r)], [_set(full(r), 0, 0), _set(full(r), 0, 0)],
                              [("strided", full(r)), full(r)], [full(r), _set(full(r), -1, 2)]]
                for fn, call in (("concatenate", "concatenate((a, b))"), ("stack", "stack((a, b), -1)"),
                                 ("vstack", "vstack((a, b))"), ("hstack", "hstack((a, b))")):
                    oracle = {"concatenate": lambda x, y: np.concatenate((x, y)), "stack": lambda x, y: np.stack((x, y), -1),
                              "vstack": lambda x, y: np.vstack((x, y)), "hstack": lambda x, y: np.hstack((x, y))}[fn]
                    cases.append(Case(_name(fn, _sig(dt, r), _sig(dtb, r)), "manipulation", ab, f"return {call}",
                                      same_shape, oracle=oracle))
        s = [Param("a", dt, 0), Param("b", dt, 0)]
        cases.append(Case(_name("array", _sig(dt, 0)), "manipulation", s, "return array([[a, b, a], [b, a, b]])",
                          [[None, None]] * 3, oracle=lambda x, y: np.array([[x, y, x], [y, x, y]])))
        cases.append(Case(_name("array", _sig(dt, 0), "dtype"), "manipulation", s, "return array([a, b], float32)",
                          [[None, None]] * 3, oracle=lambda x, y: np.array([x, y], np.float32)))
    for dt in NUMERIC:
        for rb in (0, 1, 2):
            for side in ("left", "right"):
                call = "searchsorted(sort(a), b)" if side == "left" else 'searchsorted(sort(a), b, "right")'
                cases.append(Case(_name("searchsorted", _sig(dt, 1), _sig(dt, rb), side), "manipulation", _ab(dt, 1, dt, rb),
                                  f"return {call}", [[(7,), full(rb)], [(0,), full(rb)], [("strided", (5,)), full(rb)]],
                                  oracle=lambda x, y, side=side: np.searchsorted(np.sort(x), y, side)))
        for r in (1, 2):
            a = [Param("a", dt, r)]
            pats = reduce_patterns(r)[:4]
            for tail, call, oracle in (("2", "tile(a, 2)", lambda x: np.tile(x, 2)),
                                       ("213", "tile(a, (2, 1, 3))", lambda x: np.tile(x, (2, 1, 3))),
                                       ("", "repeat(a, 2)", lambda x: np.repeat(x, 2)),
                                       ("ax0", "repeat(a, 3, 0)", lambda x: np.repeat(x, 3, 0)),
                                       ("", "roll(a, 2)", lambda x: np.roll(x, 2)),
                                       ("axm1", "roll(a, -4, -1)", lambda x: np.roll(x, -4, -1))):
                fn = call.split("(")[0]
                cases.append(Case(_name(fn, _sig(dt, r), tail), "manipulation", a, f"return {call}", pats, oracle=oracle))
        for r in (0, 1, 2):
            a = [Param("a", dt, r, "small")]
            for tail, call, oracle in (("", "around(a)", np.around), ("d1", "around(a, 1)", lambda x: np.around(x, 1)),
                                       ("dm1", "around(a, -1)", lambda x: np.around(x, -1)),
                                       ("builtin", "round(a)", builtins.round)):
                if tail == "builtin" and r:
                    continue  # round(ndarray) is a TypeError in Python: a compile error in pydd
                cases.append(Case(_name(call.split("(")[0], _sig(dt, r), tail), "manipulation", a, f"return {call}",
                                  unary_patterns(r)[:4], oracle=oracle, zero_sign=False))
    sq = [[(4, 4)], [("transposed", (4, 4))], [(1, 1)], [(0, 0)], [(3, 4)], [("array", [[1, 2], [2, 4]])]]
    for dt in ("int64", "float32", "float64"):
        tol = dict(compare="approx", rtol=1e-4 if dt == "float32" else 1e-10)
        A = [Param("a", dt, 2, "finite")]
        cases.append(Case(_name("det", SHORT[dt]), "manipulation", A, "return det(a)", sq,
                          zero_sign=False, scale=lambda x: np.prod(np.abs(x).sum(axis=1)) if x.size else 1.0,
                          oracle=np.linalg.det, **tol))
        cases.append(Case(_name("inv", SHORT[dt]), "manipulation", A, "return inv(a)", sq,
                          scale=lambda x: np.abs(np.linalg.inv(x)).max(initial=0) * np.ones(x.shape), oracle=np.linalg.inv, **tol))
        for rb in (1, 2):
            B = A + [Param("b", "float64", rb, "finite")]
            cases.append(Case(_name("solve", SHORT[dt], f"r{rb}"), "manipulation", B, "return solve(a, b)",
                              [[(4, 4), (4,) if rb == 1 else (4, 2)], [("transposed", (3, 3)), (3,) if rb == 1 else (3, 3)],
                               [(0, 0), (0,) if rb == 1 else (0, 2)], [(4, 4), (3,) if rb == 1 else (3, 2)],
                               [("array", [[1, 2], [2, 4]]), (2,) if rb == 1 else (2, 2)]],
                              scale=lambda x, y: np.abs(np.linalg.solve(x, y)).max(initial=0) * np.ones(np.shape(y)),
                              oracle=np.linalg.solve, **tol))
        for r in (1, 2, 3):
            a = [Param("a", dt, r)]
            cases.append(Case(_name("norm", _sig(dt, r)), "manipulation", a, "return norm(a)", reduce_patterns(r),
                              oracle=np.linalg.norm, **tol))
            if r > 1:
                cases.append(Case(_name("norm", _sig(dt, r), "ax1"), "manipulation", a, "return norm(a, axis=1)",
                                  reduce_patterns(r), oracle=lambda x: np.linalg.norm(x, axis=1), **tol))
    return cases


OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floordiv", "%": "mod", "**": "pow",
             "==": "eq", "!=": "neq", "<": "lt", ">": "gt", "<=": "le", ">=": "ge"}


def operator_family():
    cases = []
    rank_pairs = ((1, 1), (2, 1), (1, 2), (0, 2), (2, 0), (3, 3), (3, 0))
    for op, fn in OPERATORS.items():
        for dt in ("bool", "int32", "float64", "float32"):
            for ra, rb in rank_pairs:
                roles = _binary_roles(fn, dt)
                cases.append(Case(_name(f"op_{fn}", _sig(dt, ra), _sig(dt, rb)), "operators",
                                  _ab(dt, ra, dt, rb, *roles), f"return a {op} b", binary_patterns(ra, rb),
                                  compare="ulp" if fn in ULP_FUNCTIONS else "exact",
                                  check_message=True, op_name=fn, oracle=UFUNCS[fn]))
    for dt in ("int32", "int64", "float32", "float64"):
        for r in (1, 2, 3):
            cases.append(Case(_name("op_neg", _sig(dt, r)), "operators", [Param("a", dt, r)], "return -a",
                              unary_patterns(r), oracle=np.negative))
    for dt in ("bool", "int32", "float64"):
        for r in (1, 2):
            cases.append(Case(_name("op_not", _sig(dt, r)), "operators", [Param("a", dt, r)], "return not a",
                              unary_patterns(r), oracle=np.logical_not))
        for ra, rb in ((1, 1), (2, 1), (2, 0), (2, 2)):
            for word in ("and", "or"):
                cases.append(Case(_name(f"op_{word}", _sig(dt, ra), _sig(dt, rb)), "operators",
                                  _ab(dt, ra, dt, rb), f"return a {word} b", binary_patterns(ra, rb),
                                  oracle=np.logical_and if word == "and" else np.logical_or))
    for dt in ("int32", "float64"):
        cases.append(Case(_name("op_and3", SHORT[dt]), "operators",
                          [Param("a", dt, 1), Param("b", dt, 1), Param("c", dt, 1)],
                          "return a > 0 and b > 0 or not c < 1", [[(9,), (9,), (9,)], [(0,), (0,), (1,)]],
                          oracle=lambda a, b, c: (a > 0) & (b > 0) | ~(c < 1)))
        for r in (1, 2):
            x = Param("x", dt)
            cases.append(Case(_name("op_in", _sig(dt, r)), "operators", [x, Param("a", dt, r, "small")],
                              "return x in a", [[("value", 0), full(r)], [("value", 3), full(r)],
                                                [("value", 99), full(r)], [None, _set(full(r), 0, 0)],
                                                [("value", "nan" if dt in FLOATS else 1), full(r)]],
                              oracle=lambda x, a: (a == x).any()))
            cases.append(Case(_name("op_notin", _sig(dt, r)), "operators", [x, Param("a", dt, r, "small")],
                              "return x not in a", [[("value", 0), full(r)], [("value", 99), full(r)]],
                              oracle=lambda x, a: not (a == x).any()))
    # mixed operators in one expression, as kernels write them
    cases.append(Case("op_expr_f64", "operators",
                      [Param("x", "float64", 2), Param("y", "float64", 1), Param("s", "float64")],
                      "return (x - y) * (x - y) / s + -x ** 2 // 3 % 5",
                      [[(4, 5), (5,), None], [(0, 5), (5,), ("value", 2.0)], [(4, 5), (4,), None]], compare="ulp",
                      oracle=lambda x, y, s: (x - y) * (x - y) / s + np.floor_divide(-np.power(x, 2), 3) % 5))
    cases.append(Case("op_expr_i32", "operators",
                      [Param("x", "int32", 2), Param("y", "int32", 1)],
                      "return (x * 3 - y) // (y + 1) + x % 7 - -y",
                      [[(4, 5), (5,)], [(4, 5), (1,)], [(4, 5), (4,)]],
                      oracle=lambda x, y: np.floor_divide(x * np.int32(3) - y, y + np.int32(1)) + x % np.int32(7) + y))
    cases.append(Case("op_aug_f64", "operators",
                      [Param("x", "float64", 2), Param("y", "float64", 1)],
                      "z = x * 1.0\nz += y\nz *= 2.0\nz -= x\nz /= 4.0\nreturn z",
                      [[(4, 5), (5,)], [(4, 5), (1,)], [(4, 5), (4,)]]))
    return cases


def literal_family():
    """Python literals are weak (NEP 50): int32 + 1 stays int32, float32 * 2.5 stays float32."""
    exprs = ["a + 1", "a * 2.5", "a / 2", "1 - a", "2 * a", "a // 3", "a % 3", "a ** 2", "maximum(a, 0)",
             "a < 1.5", "add(a, 3)", "a * True", "minimum(2.5, a)", "-1.5 + a", "a == 0"]
    cases = []
    for dt in DTYPES:
        for i, e in enumerate(exprs):
            for r in (1, 2):
                cases.append(Case(_name("lit", str(i), _sig(dt, r)), "literals", [Param("a", dt, r, "small")],
                                  f"return {e}", unary_patterns(r)[:3]))
    return cases


def method_family():
    f64_2, i32_2 = Param("a", "float64", 2), Param("a", "int32", 2)
    specs = [
        ("sum0", f64_2, "return a.sum()", "approx", np.sum),
        ("sum1", f64_2, "return a.sum(1)", "approx", lambda a: np.sum(a, axis=1)),
        ("summ1", i32_2, "return a.sum(-1)", "exact", lambda a: np.sum(a, axis=-1)),
        ("max0", f64_2, "return a.max(0)", "exact", lambda a: np.max(a, axis=0)),
        ("mean1", i32_2, "return a.mean(1)", "approx", lambda a: np.mean(a, axis=1)),
        ("min", i32_2, "return a.min()", "exact", np.min),
        ("prod", i32_2, "return a.prod()", "exact", np.prod),
        ("argmax", f64_2, "return a.argmax()", "exact", np.argmax),
        ("any", f64_2, "return a.any()", "exact", np.any),
        ("all", i32_2, "return a.all()", "exact", np.all),
        ("abssqrt", f64_2, "return a.abs().sqrt()", "exact", lambda a: np.sqrt(np.abs(a))),
        ("T", f64_2, "return a.T", "exact", np.transpose),
        ("Tsum0", i32_2, "return a.T.sum(0)", "exact", lambda a: np.sum(a.T, axis=0)),
        ("shape0", f64_2, "return a.shape[0]", "exact", lambda a: a.shape[0]),
        ("shapem1", f64_2, "return a.shape[-1]", "exact", lambda a: a.shape[-1]),
        ("shapecall", f64_2, "return a.shape(1)", "exact", lambda a: a.shape[1]),
        ("transpose", i32_2, "return a.transpose()", "exact", np.transpose),
        ("copy", f64_2, "return a.copy()", "copy", np.copy),
        ("floorint", i32_2, "return a.floor()", "exact", np.copy),
        ("expsum", f64_2, "return a.exp().sum()", "approx", lambda a: np.sum(np.exp(a))),
        ("minusmax", i32_2, "return a.minus().max(1)", "exact", lambda a: np.max(-a, axis=1)),
        ("isnanany", f64_2, "return a.isnan().any()", "exact", lambda a: np.isnan(a).any()),
        ("len", f64_2, "return len(a)", "exact", len),
        ("ndim", i32_2, "return a.ndim", "exact", np.ndim),
        ("shapes", f64_2, "return a.shape(0) * a.shape(1) + ndim(a)", "exact", lambda a: a.size + 2),
    ]
    cases = []
    for name, p, body, cmp, oracle in specs:
        cases.append(Case(f"meth_{name}", "methods", [p], body, reduce_patterns(2), compare=cmp,
                          rtol=1e-12, oracle=oracle))
    y, z = Param("y", "float64", 1), Param("z", "float64", 1)
    cases.append(Case("meth_subsum", "methods", [y, z], "return sub(y, z).sum()",
                      binary_patterns(1, 1), compare="approx", rtol=1e-12,
                      scale=lambda y, z: np.sum(y + z), oracle=lambda y, z: np.subtract(y, z).sum()))
    cases.append(Case("meth_addmax", "methods", [y, z], "return add(y, z).max()", binary_patterns(1, 1)))
    cases.append(Case("meth_dotT", "methods", [Param("a", "float64", 2, "finite"), Param("b", "float64", 2, "finite")],
                      "return (a @ b.T).sum(1)", [[(3, 4), (5, 4)], [(3, 4), (5, 3)]], compare="approx", rtol=1e-12))
    cases.append(Case("meth_mulsum", "methods", [y, z], "return (y * z).sum()", binary_patterns(1, 1),
                      compare="approx", rtol=1e-12))
    cases.append(Case("meth_fill", "methods", [Param("a", "float64", 2), Param("v", "float64")], "a.fill(v)",
                      [[(3, 4), None], [(0, 2), None]], compare="inplace", result="None"))
    cases.append(Case("meth_chain_i32", "methods", [Param("a", "int32", 1)], "return a.abs().sqrt().floor().max()",
                      [[(7,)], [(1,)]]))
    return cases


def builtins_family():
    cases = []
    for dt in DTYPES:
        for fn in ("len", "min", "max", "sum", "abs", "any", "all"):
            approx = fn == "sum" and dt in FLOATS
            cases.append(Case(_name(f"bi_{fn}", _sig(dt, 1)), "builtins", [Param("a", dt, 1)], f"return {fn}(a)",
                              reduce_patterns(1), compare="approx" if approx else "exact", rtol=_approx_rtol(dt),
                              scale=(lambda x, fn=fn: getattr(np, fn)(x))))
        if dt != "bool":
            cases.append(Case(_name("bi_pow", _sig(dt, 1)), "builtins", [Param("a", dt, 1, "small"), Param("b", dt, 1, "exp")],
                              "return pow(a, b)", binary_patterns(1, 1), compare="ulp"))
        cases.append(Case(_name("bi_len", _sig(dt, 3)), "builtins", [Param("a", dt, 3)], "return len(a)",
                          reduce_patterns(3)))
    return cases


def print_family():
    cases = []
    for dt in DTYPES:
        pats = [[(5,)], [(0,)], [(1,)], [(40,)], [("strided", (6,))]]
        cases.append(Case(_name("print", _sig(dt, 1)), "print", [Param("a", dt, 1)], "print(a)", pats,
                          compare="stdout", result="None"))
        cases.append(Case(_name("print_mixed", _sig(dt, 1)), "print", [Param("a", dt, 1, "small")],
                          'print("a =", a, len(a))', pats[:3], compare="stdout", result="None"))
    return cases


def complex_family():
    """Representative complex cases: arithmetic and equality on complex128
    over a few rank pairs and with broadcasting, promotion with each real
    kind, the functions NumPy defines on complex numbers, parts, reductions,
    products and printing."""
    cases = []
    c64, c128 = "complex64", "complex128"
    for fn in ("add", "sub", "mul", "div", "pow", "eq", "neq"):
        for ra, rb in ((0, 0), (2, 1), (0, 2)):
            roles = ("small", "small") if fn == "pow" else ("any", "any")
            cases.append(Case(_name(fn, _sig(c128, ra), _sig(c128, rb)), "complex", _ab(c128, ra, c128, rb, *roles),
                              f"return {fn}(a, b)", binary_patterns(ra, rb)[:4],
                              compare="ulp" if fn in ("mul", "div", "pow") else "exact", oracle=UFUNCS[fn]))
    for fn in ("mul", "div"):
        for other in ("bool", "int8", "uint16", "int32", "uint64", "float32", "float64", c128):
            cases.append(Case(_name(fn, _sig(c64, 1), _sig(other, 1)), "complex", _ab(c64, 1, other, 1),
                              f"return {fn}(a, b)", binary_patterns(1, 1, mismatch=False)[:3], compare="ulp",
                              oracle=UFUNCS[fn]))
    for fn in ("abs", "sqrt", "exp", "log", "log10", "expm1", "isnan", "conj", "angle"):
        for dt, r in ((c64, 1), (c128, 2)):
            if fn == "abs" and r == 0:
                continue  # the builtin abs in Python
            cases.append(Case(_name(fn, _sig(dt, r)), "complex", [Param("a", dt, r, "finite")], f"return {fn}(a)",
                              unary_patterns(r)[:3], compare="ulp" if fn not in ("minus", "isnan", "isinf", "conj")
                              else "exact", oracle=getattr(np, fn, None) if fn not in UFUNCS else UFUNCS[fn]))
    for fn in ("real", "imag"):
        for dt, r in ((c64, 2), ("float64", 1)):
            cases.append(Case(_name(fn, _sig(dt, r)), "complex", [Param("a", dt, r)], f"return a.{fn} * 2",
                              unary_patterns(r)[:3], oracle=lambda a, fn=fn: getattr(a, fn) * 2))
    for fn in ("sum", "prod", "mean"):
        for dt, r in ((c64, 1), (c128, 2)):
            cases.append(Case(_name(fn, _sig(dt, r)), "complex", [Param("a", dt, r, "finite")], f"return {fn}(a)",
                              reduce_patterns(r)[:3], compare="approx", rtol=_approx_rtol("float32" if dt == c64 else dt),
                              scale=(lambda x, fn=fn: getattr(np, fn)(np.abs(x))), oracle=getattr(np, fn)))
    for dt in (c64, c128):
        cases.append(Case(_name("matmult", _sig(dt, 2), _sig(dt, 2)), "complex", _ab(dt, 2, dt, 2, "finite", "finite"),
                          "return a @ b", [[(3, 4), (4, 5)], [(1, 4), (4, 1)], [(3, 0), (0, 2)]], compare="approx",
                          rtol=_approx_rtol("float32" if dt == c64 else dt),
                          scale=lambda a, b: np.abs(a) @ np.abs(b), oracle=np.matmul))
        cases.append(Case(_name("print", _sig(dt, 1)), "complex", [Param("a", dt, 1)], "print(a, a[0])",
                          [[(5,)], [(1,)], [(40,)], [("strided", (6,))]], compare="stdout", result="None"))
    return cases


FAMILIES = (binary_family, promote_family, smallints_family, unary_family, ufuncs_family, numeric_family, reduce_family, axis_family, where_family,
            allclose_family, alloc_family, linalg_family, operator_family, literal_family, method_family,
            builtins_family, print_family, manipulation_family, complex_family)


def all_cases():
    """Every meaningful case, annotated and assigned to a module; plus the
    names of the cases left out and why."""
    cases, skipped = [], {}
    for family in FAMILIES:
        kept = []
        for case in family():
            try:
                kept.append(annotate(case))
            except Skip as why:
                skipped[case.name] = str(why)
        for i in range(0, len(kept), MAX_KERNELS):
            module = f"lib_{family.__name__[:-len('_family')]}_{i // MAX_KERNELS}"
            for case in kept[i:i + MAX_KERNELS]:
                case.module = module
        cases += kept
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    return cases, skipped


def module_sources(cases):
    """{module: (source text, {case name: (first line, last line)})}."""
    mods = {}
    for case in cases:
        mods.setdefault(case.module, []).append(case)
    out = {}
    for module, members in mods.items():
        text = "# Generated by tests/e2e/library_cases.py\nfrom pydd import *\n"
        lines = {}
        for case in members:
            text += "\n\n"
            first = text.count("\n") + 1
            text += case.source()
            lines[case.name] = (first, text.count("\n"))
        out[module] = (text, lines)
    return out


if __name__ == "__main__":
    cases, skipped = all_cases()
    if len(sys.argv) > 2 and sys.argv[1] == "--source":
        print(module_sources(cases)[sys.argv[2]][0])
    elif len(sys.argv) > 1 and sys.argv[1] == "--list":
        for c in cases:
            print(c.module, c.name, len(c.patterns))
    else:
        from collections import Counter
        print(len(cases), "cases,", len(skipped), "left out,", len({c.module for c in cases}), "modules")
        print(Counter(c.family for c in cases))
