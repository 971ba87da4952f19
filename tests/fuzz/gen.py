#!/usr/bin/env python3
"""Random pydd kernels for differential fuzzing, deterministic from a seed.

    python3 tests/fuzz/gen.py --seed N           print the kernel of seed N
    python3 tests/fuzz/gen.py --run 0:500 -j 2   check seeds 0..499 (campaign)
    python3 tests/fuzz/gen.py --check N          check one seed, in this process

A kernel is a few functions with typed scalar parameters (int32, int64,
float32, float64, bool) and array parameters (Array(float64), Array(int64),
Array(int32, 2)). Each function is called from Python, compiled and as the
NumPy reference, on random inputs (see harness.py).

The generator keeps the reference (NumPy 1.24 scalars) and the compiled code
(NEP 50 weak literals) on the same types and values, so that any difference
is a compiler bug rather than a known, documented divergence:

* Every value has a static type (int32, int64, float32, float64, bool). A
  literal next to a float32 operand is written float32(2.5), so that NumPy
  1.24 does not compute it in float64. Values stored in a local, passed to
  a call, returned, or used as both branches of `x if c else y` or as the
  arguments of min/max are converted to exactly one type, because the
  reference's types follow the values (Python's min returns one of its
  arguments) while the compiled code's types are static.
* Every integer has a static bound on its magnitude; before an operation
  could overflow (int32 at 2**30, int64 at 2**52, exactness of int -> float)
  an operand is reduced with `% K`. Locals, array elements and parameters
  keep bounds (VAR_BOUND, ELEM_BOUND, PARAM_BOUND) as invariants.
* Floats stay finite and bounded except in "non-finite" contexts (return
  values, print, conditions), where an unguarded float division may give
  inf/nan. Float -> int conversions only see finite bounded values.
* Divisors are guarded (abs(d) + 1, d % 7 + 1, max(d, 1), ...) except a few
  integer divisors (and float divisors in non-finite contexts) that may be
  zero, to exercise ZeroDivisionError.
* bool never takes part in arithmetic (np.bool_ + np.bool_ is a logical or
  in NumPy, an integer sum in pydd); it appears in conditions, comparisons,
  and/or/not, bool locals and conversions int64(b).
* Loops are bounded: range() bounds are small, while loops count with a
  counter incremented first in the body, and the call graph is acyclic.
* Indices are in range by construction: literals within the minimum extent,
  `e % len(A)`, `-1 - e % len(A)`, and loop variables over range(len(A)).
"""

import argparse
import contextlib
import math
import os
import random
import sys

INT_TYPES = ("int32", "int64")
FLOAT_TYPES = ("float32", "float64")
NUM_TYPES = INT_TYPES + FLOAT_TYPES
SCALAR_TYPES = NUM_TYPES + ("bool",)

# Array kinds: element type, rank, annotation.
ARRAY_KINDS = {
    "af": ("float64", 1, "Array(float64)"),
    "ai": ("int64", 1, "Array(int64)"),
    "am": ("int32", 2, "Array(int32, 2)"),
}
# Minimum / maximum extents of every array the kernels see (the harness
# draws inputs within these; local arrays are created within them).
MIN_LEN_1D, MAX_LEN_1D = 3, 8
MIN_ROWS, MAX_ROWS = 2, 4
MIN_COLS, MAX_COLS = 2, 5

ANNOTATION_FORMS = {
    "int64": ["int64", "int"],
    "float64": ["float64", "float", "double"],
    "af": ["Array(float64)", "Array(float64, 1)", "Array(float)", "Array(double)"],
    "ai": ["Array(int64)", "Array(int64, 1)", "Array(int)"],
    "am": ["Array(int32, 2)"],
}

PARAM_BOUND = 50     # |scalar argument| (ints and floats)
VAR_BOUND = 1000     # |local scalar|
ELEM_BOUND = 1000    # |array element| (inputs are drawn within PARAM_BOUND)
RET_BOUND = 1000     # |returned value| of finite-returning functions
SOFT_BOUND = 10**6   # expressions above this get reduced when convenient
HARD = {"int32": 2**30, "int64": 2**52, "float32": 1e15, "float64": 1e15}
INF = float("inf")

PREC_ATOM, PREC_POW, PREC_UNARY, PREC_MUL, PREC_ADD = 14, 13, 12, 11, 10
PREC_SHIFT, PREC_BAND, PREC_BXOR, PREC_BOR = 9, 8, 7, 6
PREC_CMP, PREC_NOT, PREC_AND, PREC_OR, PREC_COND = 5, 4, 3, 2, 1
BINOP_PREC = {"+": PREC_ADD, "-": PREC_ADD, "*": PREC_MUL, "/": PREC_MUL, "//": PREC_MUL,
              "%": PREC_MUL, "<<": PREC_SHIFT, ">>": PREC_SHIFT, "&": PREC_BAND,
              "^": PREC_BXOR, "|": PREC_BOR}
CMP_OPS = ("<", "<=", ">", ">=", "==", "!=")


def kind(ty):
    return "float" if ty in FLOAT_TYPES else "int" if ty in INT_TYPES else "bool"


def promote(a, b):
    """NumPy's promotion of two (strong) scalar types."""
    if a == b:
        return a
    s = (a, b)
    if "float64" in s:
        return "float64"
    if "float32" in s:
        return "float64" if ("int32" in s or "int64" in s) else "float32"
    return "int64"


class E:
    """A generated expression: code, static type, bound on |value|, precedence.

    lit: the expression is made of literals only (weak in NEP 50; the
    reference computes it as a Python int/float). finite: a float value is
    guaranteed finite (and within bound). pure: no calls (may be evaluated
    twice or moved).
    """
    __slots__ = ("code", "ty", "bound", "prec", "lit", "finite", "pure")

    def __init__(self, code, ty, bound, prec=PREC_ATOM, lit=False, finite=True, pure=True):
        self.code, self.ty, self.bound, self.prec = code, ty, bound, prec
        self.lit, self.finite, self.pure = lit, finite, pure

    def __repr__(self):
        return f"E({self.code!r}, {self.ty}, {self.bound})"


def lit_value(code):
    """The value of a literal-only expression (None if it cannot be computed)."""
    try:
        return eval(code, {"__builtins__": {}}, {"abs": abs})  # noqa: S307 - our own literals
    except Exception:  # noqa: BLE001
        return None


_CONST_NAMES = {"abs": abs, "min": min, "max": max, "int32": int, "int64": int, "float32": float,
                "float64": float}


def is_const_zero(code):
    """The expression is a constant zero (literals, typed zeros, conversions)."""
    try:
        return eval(code, {"__builtins__": {}}, dict(_CONST_NAMES)) == 0  # noqa: S307
    except Exception:  # noqa: BLE001
        return False


def par(e, need):
    """e's code, parenthesized if its precedence is below `need`."""
    return e.code if e.prec >= need else f"({e.code})"


class Var:
    __slots__ = ("name", "ty", "bound", "assignable", "safe_for", "param")

    def __init__(self, name, ty, bound, assignable=True, safe_for=(), param=False):
        self.name, self.ty, self.bound, self.assignable = name, ty, bound, assignable
        self.param = param
        # (array name, dim) pairs this variable is a valid non-negative index for
        self.safe_for = list(safe_for)


class Arr:
    __slots__ = ("name", "kind", "assignable")

    def __init__(self, name, kind, assignable=False):
        self.name, self.kind, self.assignable = name, kind, assignable

    @property
    def elem(self):
        return ARRAY_KINDS[self.kind][0]

    @property
    def ndim(self):
        return ARRAY_KINDS[self.kind][1]


class Func:
    """A generated function's signature (what callers and the harness need)."""

    def __init__(self, name, params, ret):
        self.name = name
        self.params = params   # list of (name, scalar type or array kind)
        self.ret = ret         # scalar type or None
        self.ret_finite = True
        self.cost = 1          # rough bound on executed statements per call
        self.writes = False    # may write an array parameter

    def annotation(self, t, r=None):
        """The annotation of type or array kind t; with an rng, one of its spellings."""
        forms = ANNOTATION_FORMS.get(t, [ARRAY_KINDS[t][2] if t in ARRAY_KINDS else t])
        if r is None or r.random() < 0.7:
            return forms[0]
        return r.choice(forms)


class Kernel:
    def __init__(self, seed, source, funcs):
        self.seed, self.source, self.funcs = seed, source, funcs


# ----------------------------------------------------------------------------


class FuncGen:
    MAX_COST = 20000

    def __init__(self, rng, func, callees, stmt_budget, avoid=frozenset()):
        self.r = rng
        self.avoid = avoid        # numbers of open compiler bugs whose patterns to avoid
        self.f = func
        self.callees = callees
        self.lines = []
        self.indent = 1
        self.scopes = [{}]        # name -> Var
        self.arrays = {}          # name -> Arr
        self.counter = 0
        self.loop_depth = 0
        self.mult = 1             # product of enclosing loop trip bounds
        self.cost = 0
        self.budget = stmt_budget
        self.calls_left = self.r.randint(1, 5)
        self.noreads = False      # no array element reads (see restricted())
        self.noraise = False      # no divisions that may raise ZeroDivisionError
        self.pfor = None          # (array, loop variable) inside a pfor body

    # -- names and environment ------------------------------------------------

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, line):
        self.lines.append("    " * self.indent + line)
        self.cost += self.mult

    def vars(self, pred=lambda v: True):
        seen, out = set(), []
        for scope in reversed(self.scopes):
            for name, v in scope.items():
                if name not in seen:
                    seen.add(name)
                    if pred(v):
                        out.append(v)
        out.sort(key=lambda v: v.name)
        return out

    def declare(self, var):
        self.scopes[-1][var.name] = var

    def arrays_of(self, pred=lambda a: True):
        return [a for _, a in sorted(self.arrays.items()) if pred(a)]

    def chance(self, p):
        return self.r.random() < p

    @contextlib.contextmanager
    def restricted(self, calls=True, reads=True, raises=True):
        """Generation without calls, array element reads or ZeroDivisionError."""
        saved = self.calls_left, self.noreads, self.noraise
        if not calls:
            self.calls_left = 0
        if not reads:
            self.noreads = True
        if not raises:
            self.noraise = True
        try:
            yield
        finally:
            if not calls:
                self.calls_left = saved[0]
            self.noreads, self.noraise = saved[1], saved[2]

    def ordered(self, makers):
        """Runs the child generators `makers` (lists of thunks) and returns their
        results in order: the operands of one operator, the arguments of one
        call, min/max or print.

        While bug 3 is avoided, only one child (the first one generated, at a
        random position) may contain calls, and if it does the others read
        no array elements and raise nothing (no division by a possibly zero
        divisor): pyddc evaluated the operands of helper-lowered operators
        (/ // % ** << >> min max), the indices of a multi-dimensional
        subscript, and the arguments of calls and of print right to left.
        While bug 7 is avoided, the same but for the reads: a child that may
        raise is not ordered before a later child's calls."""
        if not self.avoid & {3, 7} or len(makers) < 2:
            return [m() for m in makers]
        order = list(range(len(makers)))
        self.r.shuffle(order)
        out = [None] * len(makers)
        first = makers[order[0]]()
        out[order[0]] = first
        has_call = not getattr(first, "pure", True) if not isinstance(first, tuple) else not first[0].pure
        reads = not has_call or 3 not in self.avoid
        with self.restricted(calls=False, reads=reads, raises=not has_call):
            for k in order[1:]:
                out[k] = makers[k]()
        return out

    # -- literals and conversions ---------------------------------------------

    def int_lit(self, lo=-9, hi=9, nonzero=False):
        v = self.r.randint(lo, hi)
        if nonzero and v == 0:
            v = self.r.choice((1, 2, -1, 3))
        code = str(abs(v))
        if self.chance(0.06):
            code = self.r.choice((hex, oct, bin))(abs(v))
            if self.chance(0.3):
                code = code.upper().replace("0X", "0x").replace("0O", "0o").replace("0B", "0B")
        elif abs(v) >= 10 and self.chance(0.2):
            code = code[0] + "_" + code[1:]
        if v < 0:
            code = "-" + code
        return E(code, "int64", abs(v), PREC_ATOM if v >= 0 else PREC_UNARY, lit=True)

    def float_lit(self, nonzero=False):
        v = self.r.choice((0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 0.25, 0.1, 10.0, 0.75, 7.0, 1e-3, 100.0, 0.3))
        if nonzero and v == 0.0:
            v = 0.5
        if self.chance(0.3):
            v = -v
        code = repr(abs(v))
        if self.chance(0.1):
            # other spellings of the same value
            forms = [f"{abs(v):e}", f"{abs(v):E}"]
            if code.startswith("0."):
                forms.append(code[1:])            # .5
            if code.endswith(".0"):
                forms.append(code[:-1])           # 2.
                forms.append(code[:-2] + "e0")    # 2e0
            if abs(v) >= 10 and code.endswith(".0"):
                forms.append(code[0] + "_" + code[1:])  # 1_0.0
            code = self.r.choice(forms)
        if math.copysign(1.0, v) < 0:
            code = "-" + code
        return E(code, "float64", abs(v), PREC_ATOM if not code.startswith("-") else PREC_UNARY, lit=True)

    def conv(self, e, ty):
        """e converted to exactly type ty (value and reference type)."""
        if e.ty == ty and (not e.lit or ty in ("int64", "float64")):
            return e
        if kind(ty) == "int" and kind(e.ty) == "float":
            assert e.finite, e
        if e.lit and ty == "float64" and e.code.isdigit() and self.chance(0.5):
            return E(e.code + ".0", ty, e.bound, e.prec, lit=True)
        bound = e.bound
        if ty == "int32" and bound >= 2**31:
            raise AssertionError(f"int32 conversion of unbounded {e}")
        return E(f"{ty}({e.code})", ty, max(bound, 1) if ty != "bool" else 1,
                 finite=e.finite or kind(ty) == "int", pure=e.pure)

    def strong(self, e, other_ty):
        """Types a literal operand next to an operand of other_ty so that the
        reference computes in the same type as pydd (weak literals)."""
        if not e.lit:
            return e
        if other_ty == "float32":
            return self.conv(e, "float32")
        if other_ty == "int32" and kind(e.ty) == "int" and self.chance(0.5):
            return self.conv(e, "int32")
        return e

    def reduce(self, e, limit):
        """e with |value| <= limit (e must be finite); `% K` or a clamp."""
        if e.bound <= limit:
            return e
        assert e.finite, e
        ks = [k for k in (7, 10, 13, 97, 100, 1000) if k <= limit] or [max(1, int(limit))]
        k = self.r.choice(ks)
        if e.ty == "float32":
            klit = E(f"float32({k})", "float32", k)
            nklit = E(f"float32({-k})", "float32", k)
        elif e.ty == "float64":
            klit = E(f"{k}.0", "float64", k, lit=True)
            nklit = E(f"-{k}.0", "float64", k, PREC_UNARY, lit=True)
        else:
            klit = E(str(k), "int64", k, lit=True)
            nklit = E(f"-{k}", "int64", k, PREC_UNARY, lit=True)
        if e.ty == "int32" and self.chance(0.3):
            klit, nklit = self.conv(klit, "int32"), self.conv(nklit, "int32")
        ty = e.ty
        if self.chance(0.15):
            # min(max(e, -k), k)
            return E(f"min(max({e.code}, {nklit.code}), {klit.code})", ty, k, pure=e.pure)
        d = klit if self.chance(0.8) else nklit
        return E(f"{par(e, PREC_MUL)} % {par(d, PREC_MUL + 1)}", ty, k, PREC_MUL, pure=e.pure)

    # -- expressions ----------------------------------------------------------

    def leaf(self, want, finite=True):
        """A variable, parameter, literal, array element, extent or call."""
        opts = []
        vs = self.vars(lambda v: v.ty != "bool" and (want == "num" or kind(v.ty) == want))
        if vs:
            opts += [("var", 6)]
        if not self.noreads and self.arrays_of(lambda a: want == "num" or kind(a.elem) == want):
            opts += [("elem", 4)]
        if want in ("int", "num") and self.arrays:
            opts += [("len", 1)]
        opts += [("lit", 3)]
        if self.calls_left > 0 and self.callable(want, finite):
            opts += [("call", 3)]
        if self.calls_left > 0 and not self.noreads and self.array_makers(want):
            opts += [("callelem", 1)]
        choice = self.weighted(opts)
        if choice == "var":
            v = self.r.choice(vs)
            return E(v.name, v.ty, v.bound)
        if choice == "elem":
            a = self.r.choice(self.arrays_of(lambda a: want == "num" or kind(a.elem) == want))
            return self.elem_read(a)
        if choice == "len":
            a = self.r.choice(self.arrays_of())
            if self.chance(0.1):
                return E(self.r.choice((f"ndim({a.name})", f"{a.name}.ndim")), "int64", a.ndim)
            return self.extent(a, self.r.randrange(a.ndim))
        if choice == "lit" and self.chance(0.04):
            ty = self.pick_type(want)
            return E(f"{ty}()", ty, 0)
        if choice == "call":
            return self.call_expr(want, finite)
        if choice == "callelem":
            # an element of an array a call returns: g(...)[i, j]
            g = self.r.choice(self.array_makers(want))
            self.calls_left -= 1
            self.cost += g.cost * self.mult
            if g.writes:
                self.f.writes = True
            elem, ndim, _ = ARRAY_KINDS[g.ret]
            mins = (MIN_LEN_1D,) if ndim == 1 else (MIN_ROWS, MIN_COLS)
            idx = ", ".join(str(self.r.randint(-m, m - 1)) for m in mins)
            return E(f"{g.name}({', '.join(self.call_args(g))})[{idx}]", elem, ELEM_BOUND, pure=False)
        if want == "float" or (want == "num" and self.chance(0.4)):
            return self.float_lit()
        return self.int_lit()

    def weighted(self, opts):
        total = sum(w for _, w in opts)
        x = self.r.random() * total
        for name, w in opts:
            x -= w
            if x < 0:
                return name
        return opts[-1][0]

    def extent(self, a, dim):
        bound = MAX_LEN_1D if a.ndim == 1 else (MAX_ROWS, MAX_COLS)[dim]
        forms = [f"shape({a.name}, {dim})", f"{a.name}.shape[{dim}]"]
        if dim == 0:
            forms += [f"len({a.name})"] * 2
        if dim == a.ndim - 1:
            forms += [f"shape({a.name}, -1)", f"{a.name}.shape[-1]"]
        return E(self.r.choice(forms), "int64", bound)

    def min_extent(self, a, dim):
        return MIN_LEN_1D if a.ndim == 1 else (MIN_ROWS, MIN_COLS)[dim]

    def index(self, a, dim, callfree=False, noread=False, calls=False):
        """An index into axis dim of array a that is always in range.

        callfree: no calls at all, not even len()/abs() (pyddc rejects calls
        in the index of an augmented element assignment); noread: no array
        element reads either."""
        mn = self.min_extent(a, dim)
        safe = self.vars(lambda v: (a.name, dim) in v.safe_for)
        ext = self.extent(a, dim)
        if callfree:
            ext = E(str(mn), "int64", mn, lit=True)
        c = self.r.random()
        if safe and c < 0.5:
            v = self.r.choice(safe)
            c2 = self.r.random()
            if c2 < 0.6 or (callfree and c2 >= 0.8):
                return v.name
            if c2 < 0.8:
                return f"-1 - {v.name}"
            if c2 < 0.9:
                return f"{v.name} - {ext.code}"
            return f"{ext.code} - 1 - {v.name}"
        if c < 0.7:
            return str(self.r.randint(-mn, mn - 1))
        if callfree:
            e = self.callfree_int(2, noread)
        else:
            e = self.gen("int", depth=1, finite=True, calls=calls)
        if e.ty == "int32" and e.bound >= 2**30:
            e = self.reduce(e, 1000)
        if self.chance(0.7):
            return f"{par(e, PREC_MUL)} % {par(ext, PREC_MUL + 1)}"
        return f"-1 - {par(e, PREC_MUL)} % {par(ext, PREC_MUL + 1)}"

    def callfree_int(self, depth, noread):
        """An int expression without calls: variables, literals, elements, + - *."""
        c = self.r.random()
        vs = self.vars(lambda v: kind(v.ty) == "int")
        if depth <= 0 or c < 0.4:
            arrs = self.arrays_of(lambda a: kind(a.elem) == "int")
            if arrs and not noread and self.chance(0.4):
                a = self.r.choice(arrs)
                idx = ", ".join(self.index(a, d, callfree=True, noread=True) for d in range(a.ndim))
                return E(f"{a.name}[{idx}]", a.elem, ELEM_BOUND)
            if vs and self.chance(0.7):
                v = self.r.choice(vs)
                return E(v.name, v.ty, v.bound)
            return self.int_lit()
        a, b = self.callfree_int(depth - 1, noread), self.callfree_int(depth - 1, noread)
        op = self.r.choice("+-*")
        if op == "*" and a.bound * b.bound > 2**30:
            op = "+"
        ty, lit = self.result_type(a, b)
        bound = a.bound * b.bound if op == "*" else a.bound + b.bound
        p = BINOP_PREC[op]
        return E(f"{par(a, p)} {op} {par(b, p + 1)}", ty, bound, p, lit=lit)

    def elem_read(self, a):
        if self.pfor and a.kind == self.pfor[0].kind:
            # In a pfor over T, T (or an array that may be T) is read at [i] only.
            t, i = self.pfor
            idx = i if a.name == t.name else f"{i} % len({a.name})"
            return E(f"{a.name}[{idx}]", a.elem, ELEM_BOUND)
        idx = ", ".join(self.index(a, d) for d in range(a.ndim))
        return E(f"{a.name}[{idx}]", a.elem, ELEM_BOUND)

    def callable(self, want, finite):
        return [g for g in self.callees
                if g.ret in NUM_TYPES and (want == "num" or kind(g.ret) == want)
                and (g.ret_finite or not finite) and self.args_possible(g)
                and g.cost * self.mult + self.cost < self.MAX_COST]

    def array_makers(self, want):
        """Callees returning an array whose elements are of kind want."""
        return [g for g in self.callees
                if g.ret in ARRAY_KINDS and (want == "num" or kind(ARRAY_KINDS[g.ret][0]) == want)
                and self.args_possible(g) and g.cost * self.mult + self.cost < self.MAX_COST]

    def args_possible(self, g):
        return all(t not in ARRAY_KINDS or self.arrays_of(lambda a: a.kind == t) for _, t in g.params)

    def call_args(self, g):
        used = []

        def array_arg(t):
            cands = self.arrays_of(lambda a: a.kind == t)
            # Mostly distinct arrays, sometimes the same one twice (aliasing).
            fresh = [a for a in cands if a.name not in used]
            a = self.r.choice(fresh if fresh and self.chance(0.8) else cands)
            used.append(a.name)
            return E(a.name, t, 0)

        def scalar_arg(t):
            if t == "bool":
                return self.gen_bool_value(1)
            e = self.gen_num(kind(t) if self.chance(0.7) else "num", 2, True)
            e = self.conv(self.reduce(e, PARAM_BOUND), t)
            return self.reduce(e, PARAM_BOUND)

        makers = [(lambda t=t: array_arg(t)) if t in ARRAY_KINDS else (lambda t=t: scalar_arg(t))
                  for _, t in g.params]
        args = [e.code for e in self.ordered(makers)]
        # Keyword arguments from some position on (sometimes).
        if args and self.chance(0.15):
            k = self.r.randrange(len(args))
            args = args[:k] + [f"{pname}={a}" for (pname, _), a in zip(g.params[k:], args[k:])]
        return args

    def call_expr(self, want, finite):
        g = self.r.choice(self.callable(want, finite))
        self.calls_left -= 1
        self.cost += g.cost * self.mult
        if g.writes:
            self.f.writes = True
        args = self.call_args(g)
        bound = RET_BOUND if g.ret_finite or kind(g.ret) == "int" else INF
        # An integer result is always bounded (RET_BOUND), whatever ret_finite says of floats.
        return E(f"{g.name}({', '.join(args)})", g.ret, bound, finite=g.ret_finite or kind(g.ret) == "int", pure=False)

    def gen(self, want, depth=3, finite=True, calls=True):
        """An expression of kind want ('int', 'float', 'num', 'bool')."""
        saved = self.calls_left
        if not calls:
            self.calls_left = 0
        try:
            if want == "bool":
                return self.gen_bool_value(depth, finite)
            return self.gen_num(want, depth, finite)
        finally:
            if not calls:
                self.calls_left = saved

    def gen_num(self, want, depth, finite):
        if depth <= 0 or self.chance(0.25):
            return self.leaf(want, finite)
        opts = [("bin", 10), ("unary", 1), ("conv", 2), ("absminmax", 2), ("cond", 1), ("pow", 1)]
        if want in ("int", "num"):
            opts += [("bit", 1)]
        if want in ("float", "num"):
            opts += [("truediv", 2)]
        choice = self.weighted(opts)
        if choice == "bin":
            return self.binop(want, depth, finite)
        if choice == "truediv":
            return self.division("/", want, depth, finite)
        if choice == "unary":
            a = self.gen_num(want, depth - 1, finite)
            op = self.r.choice("--+~") if kind(a.ty) == "int" else self.r.choice("--+")
            if a.lit and op == "~":
                op = "-"
            if op == "~":
                return E(f"~{par(a, PREC_UNARY)}", a.ty, a.bound + 1, PREC_UNARY, finite=a.finite, pure=a.pure)
            sep = " " if a.code.startswith(op) else ""
            return E(f"{op}{sep}{par(a, PREC_UNARY)}", a.ty, a.bound, PREC_UNARY, lit=a.lit,
                     finite=a.finite, pure=a.pure)
        if choice == "conv":
            return self.conversion(want, depth, finite)
        if choice == "absminmax":
            return self.absminmax(want, depth, finite)
        if choice == "cond":
            ty = self.pick_type(want)
            a = self.conv(self.fit(self.gen_num(kind(ty), depth - 1, finite), ty), ty)
            b = self.conv(self.fit(self.gen_num(kind(ty), depth - 1, finite), ty), ty)
            c = self.gen_cond(depth - 1)
            return E(f"{par(a, PREC_OR)} if {par(c, PREC_OR)} else {par(b, PREC_COND)}", ty,
                     max(a.bound, b.bound), PREC_COND, finite=a.finite and b.finite,
                     pure=a.pure and b.pure and c.pure)
        if choice == "pow":
            return self.power(want, depth, finite)
        if choice == "bit":
            return self.bitop(depth, finite)
        raise AssertionError(choice)

    def pick_type(self, want):
        if want == "int":
            return self.r.choice(INT_TYPES)
        if want == "float":
            return self.r.choice(FLOAT_TYPES)
        return self.r.choice(NUM_TYPES)

    def fit(self, e, ty):
        """Reduces e so that converting it to ty is exact and safe."""
        if kind(ty) == "int" and kind(e.ty) == "float" and not e.finite:
            return self.leaf_of(ty)
        if not e.finite:
            return e
        return self.reduce(e, SOFT_BOUND)

    def leaf_of(self, ty):
        vs = self.vars(lambda v: v.ty == ty)
        if vs and self.chance(0.7):
            v = self.r.choice(vs)
            return E(v.name, v.ty, v.bound)
        return self.conv(self.int_lit() if kind(ty) == "int" else self.float_lit(), ty)

    def conversion(self, want, depth, finite):
        ty = self.pick_type(want)
        src_want = "num"
        e = self.gen_num(src_want, depth - 1, finite or kind(ty) == "int")
        if self.chance(0.05):
            e = self.gen_bool_value(depth - 1, True)
            return E(f"{ty}({e.code})", ty, 1, pure=e.pure)
        e = self.fit(e, ty)
        if ty == "int32" and e.bound >= 2**31:
            e = self.reduce(e, SOFT_BOUND)
        return E(f"{ty}({e.code})", ty, max(e.bound, 1), finite=e.finite or kind(ty) == "int", pure=e.pure)

    def absminmax(self, want, depth, finite):
        fn = self.r.choice(("abs", "min", "max"))
        ty = self.pick_type(want)
        if fn == "abs":
            a = self.gen_num(kind(ty), depth - 1, finite)
            if a.ty != ty and not (a.lit and kind(a.ty) == kind(ty) and ty in ("int64", "float64")):
                a = self.conv(self.fit(a, ty), ty)
            if 4 in self.avoid and kind(a.ty) == "float":
                # abs(-0.0) is -0.0 in pyddc (bug 4, while open); + 0.0 makes it 0.0
                zero = "float32(0.0)" if a.ty == "float32" else "0.0"
                return E(f"abs({a.code}) + {zero}", a.ty, a.bound, PREC_ADD, lit=a.lit, finite=a.finite,
                         pure=a.pure)
            return E(f"abs({a.code})", a.ty, a.bound, lit=a.lit, finite=a.finite, pure=a.pure)
        n = 2 if self.chance(0.8) else 3
        args = self.ordered([lambda: self.conv(self.fit(self.gen_num(kind(ty), depth - 1, finite), ty), ty)
                             for _ in range(n)])
        return E(f"{fn}({', '.join(a.code for a in args)})", ty, max(a.bound for a in args),
                 finite=all(a.finite for a in args), pure=all(a.pure for a in args))

    def power(self, want, depth, finite):
        if want == "float" and self.chance(0.5):
            base = self.gen_num("float", depth - 1, finite)
        else:
            base = self.gen_num("num" if want == "num" else want, depth - 1, finite)
        k = self.r.choice((0, 1, 2, 2, 3))
        limit = HARD[base.ty] if not base.lit else HARD["int64"]
        if base.finite:
            while base.bound ** k > min(limit, SOFT_BOUND * 100) and base.bound > 1:
                base = self.reduce(base, max(1, int(base.bound ** 0.5) // 2 if base.bound > 13 else 7))
                if base.bound <= 13:
                    break
        if kind(base.ty) == "float" and self.chance(0.4):
            exp = E(f"{k}.0", "float64", k, lit=True)
        elif want == "float" and kind(base.ty) == "int":
            exp = E(f"{k}.0", "float64", k, lit=True)
        else:
            exp = E(str(k), "int64", k, lit=True)
        if base.ty == "float32":
            exp = self.conv(exp, "float32")
        elif base.ty == "int32" and self.chance(0.5) and kind(exp.ty) == "int":
            exp = self.conv(exp, "int32")
        if base.lit and exp.lit:
            ty = "float64" if "float64" in (base.ty, exp.ty) else "int64"
            lit = True
        else:
            ty = promote(base.ty, exp.ty) if not exp.lit else (
                base.ty if kind(exp.ty) == "int" or kind(base.ty) == "float" and base.ty != "float32"
                else "float64")
            if exp.lit and kind(exp.ty) == "float":
                ty = "float64" if base.ty != "float32" else "float32"
            lit = False
        bound = max(base.bound, 1) ** k if base.finite else INF
        return E(f"{par(base, PREC_ATOM)} ** {par(exp, PREC_UNARY)}", ty, bound, PREC_POW, lit=lit,
                 finite=base.finite, pure=base.pure)

    def bitop(self, depth, finite):
        op = self.r.choice(("&", "|", "^", "<<", ">>"))
        a = self.reduce(self.gen_num("int", depth - 1, True), 10**5)
        if op in ("<<", ">>"):
            k = self.r.randint(0, 4)
            b = E(str(k), "int64", k, lit=True)
            b = self.strong(b, a.ty)
            ty = a.ty if (b.lit or b.ty == a.ty) else promote(a.ty, b.ty)
            bound = a.bound * (2 ** k) if op == "<<" else a.bound
            return E(f"{par(a, PREC_SHIFT)} {op} {par(b, PREC_SHIFT + 1)}", ty, bound, PREC_SHIFT,
                     pure=a.pure)
        b = self.reduce(self.gen_num("int", depth - 1, True), 10**5)
        a, b = self.strong(a, b.ty), self.strong(b, a.ty)
        ty, lit = self.result_type(a, b)
        p = BINOP_PREC[op]
        return E(f"{par(a, p)} {op} {par(b, p + 1)}", ty, 2 * max(a.bound, b.bound) + 1, p, lit=lit,
                 pure=a.pure and b.pure)

    def result_type(self, a, b):
        if a.lit and b.lit:
            return ("float64" if "float64" in (a.ty, b.ty) else "int64"), True
        if a.lit:
            return self.weak_promote(b.ty, a.ty), False
        if b.lit:
            return self.weak_promote(a.ty, b.ty), False
        return promote(a.ty, b.ty), False

    @staticmethod
    def weak_promote(strong_ty, lit_ty):
        if kind(lit_ty) == "float" and kind(strong_ty) == "int":
            return "float64"
        return strong_ty

    def binop(self, want, depth, finite):
        op = self.r.choice(("+", "-", "*", "+", "-", "*", "//", "%"))
        if op in ("//", "%"):
            return self.division(op, want, depth, finite)
        if want == "float":
            wa, wb = self.r.choice((("float", "num"), ("num", "float"), ("float", "float")))
        else:
            wa = wb = want
        a = self.gen_num(wa, depth - 1, finite)
        b = self.gen_num(wb, depth - 1, finite)
        a, b = self.strong(a, b.ty), self.strong(b, a.ty)
        ty, lit = self.result_type(a, b)
        lim = HARD[ty]
        for _ in range(3):
            bound = a.bound + b.bound if op != "*" else a.bound * b.bound
            if bound <= lim or not (a.finite and b.finite):
                break
            if a.bound >= b.bound:
                a = self.reduce(a, 1000)
            else:
                b = self.reduce(b, 1000)
            a, b = self.strong(a, b.ty), self.strong(b, a.ty)
            ty, lit = self.result_type(a, b)
        bound = a.bound + b.bound if op != "*" else a.bound * b.bound
        if op == "-" and 8 in self.avoid and kind(ty) == "float" and is_const_zero(a.code):
            op = "+"  # g++ folds 0.0 - (double)i into -(double)i: -0.0 for i == 0 (bug 8)
        p = BINOP_PREC[op]
        e = E(f"{par(a, p)} {op} {par(b, p + 1)}", ty, bound, p, lit=lit,
              finite=a.finite and b.finite, pure=a.pure and b.pure)
        if e.finite and e.bound > SOFT_BOUND and self.chance(0.7):
            e = self.reduce(e, 1000)
        return e

    def divisor(self, ty_kind, depth, finite, dividend):
        """(expression, min |value| if nonzero-guaranteed else 0)."""
        d = self.gen_num(ty_kind, depth - 1, True)
        dividend_ty = dividend.ty if dividend is not None else "float64"
        if dividend is not None:
            d = self.strong(d, dividend_ty)
        if d.ty == "int32" and d.bound > 2**29:
            d = self.reduce(d, 1000)
        if d.bound > SOFT_BOUND:
            d = self.reduce(d, 1000)
        c = self.r.random()
        if self.noraise:
            c = 0.2 + 0.55 * c  # only the guards that can never be zero
        if kind(d.ty) == "int":
            if c < 0.06:
                if d.lit and lit_value(d.code) == 0:
                    d = E("3", "int64", 3, lit=True)
                return d, 1  # zero raises; otherwise |d| >= 1
            one = self.strong(E("1", "int64", 1, lit=True), d.ty)
            if c < 0.45:
                return E(f"(abs({d.code}) + {one.code})", d.ty, d.bound + 1, PREC_ATOM, lit=d.lit,
                         pure=d.pure), 1
            if c < 0.75:
                k = self.r.choice((3, 5, 7, 11))
                kk = self.strong(E(str(k), "int64", k, lit=True), d.ty)
                return E(f"({par(d, PREC_MUL)} % {kk.code} + {one.code})", d.ty, k, PREC_ATOM, lit=d.lit,
                         pure=d.pure), 1
            if d.lit:
                return E("(abs(" + d.code + ") + 1)", d.ty, d.bound + 1, lit=True), 1
            return E(f"max({d.code}, {self.conv(E('1', 'int64', 1, lit=True), d.ty).code})", d.ty,
                     max(d.bound, 1), pure=d.pure), 1
        # float divisor
        if not finite and c < 0.15:
            if d.lit and lit_value(d.code) in (0.0, None):
                d = E("0.5", "float64", 0.5, lit=True)
            return d, 0
        if c < 0.55:
            one = self.strong(E("1.0", "float64", 1, lit=True), d.ty)
            return E(f"(abs({d.code}) + {one.code})", d.ty, d.bound + 1, PREC_ATOM, lit=d.lit,
                     pure=d.pure), 1
        if c < 0.88:
            half = self.conv(E("0.5", "float64", 0.5, lit=True), d.ty)
            return E(f"max({d.code}, {half.code})", d.ty, max(d.bound, 0.5), pure=d.pure), 0.5
        # an integer-valued float: zero (ZeroDivisionError) or at least 1
        i = self.reduce(self.gen_num("int", depth - 1, True), 1000)
        fty = "float64" if dividend_ty != "float32" or self.chance(0.3) else "float32"
        return E(f"{fty}({i.code})", fty, max(i.bound, 1), pure=i.pure), 1

    def division(self, op, want, depth, finite):
        if op == "/":
            a_want, dk = ("num" if want != "int" else "int"), "num"
        elif want == "int":
            a_want, dk = "int", "int"
        else:
            a_want = want
            dk = "num" if want == "num" else self.r.choice(("num", "float"))
        if a_want == "int" and dk == "num" and self.chance(0.6):
            dk = "int"
        a, (d, dmin) = self.ordered([lambda: self.gen_num(a_want, depth - 1, finite),
                                     lambda: self.divisor(dk, depth, finite, None)])
        a, d = self.strong(a, d.ty), self.strong(d, a.ty)
        ty, lit = self.result_type(a, d)
        if op == "/" and kind(ty) == "int":
            ty = "float64"
        # An integer divisor is either zero (ZeroDivisionError) or at least 1.
        finite_r = a.finite and d.finite and dmin > 0
        if not finite_r:
            bound = INF
        elif op == "%":
            bound = d.bound
        else:
            bound = a.bound / dmin + 1
        p = PREC_MUL
        return E(f"{par(a, p)} {op} {par(d, p + 1)}", ty, bound, p, lit=lit, finite=finite_r,
                 pure=a.pure and d.pure)

    # -- booleans -----------------------------------------------------------

    def comparison(self, depth, chain=False):
        a = self.gen_num("num", depth - 1, False)
        b = self.gen_num("num", depth - 1, False)
        a, b = self.strong(a, b.ty), self.strong(b, a.ty)
        parts = [par(a, PREC_CMP + 1), self.r.choice(CMP_OPS), par(b, PREC_CMP + 1)]
        pure = a.pure and b.pure
        if chain:
            c = self.strong(self.gen_num("num", depth - 1, False), b.ty)
            if b.lit and c.ty == "float32":
                return self.comparison(depth, False)
            parts += [self.r.choice(CMP_OPS), par(c, PREC_CMP + 1)]
            pure = pure and c.pure
        return E(" ".join(parts), "bool", 1, PREC_CMP, pure=pure)

    def gen_bool_value(self, depth, finite=True):
        """A bool value: comparisons, bool variables, and/or/not of those."""
        c = self.r.random()
        bvars = self.vars(lambda v: v.ty == "bool")
        if bvars and (c < 0.25 or depth <= 0):
            v = self.r.choice(bvars)
            return E(v.name, "bool", 1)
        if depth <= 0:
            return self.comparison(1)
        if c < 0.6:
            return self.comparison(depth, chain=self.chance(0.25))
        if c < 0.7:
            a = self.gen_bool_value(depth - 1)
            return E(f"not {par(a, PREC_NOT)}", "bool", 1, PREC_NOT, pure=a.pure)
        if c < 0.8 and bvars:
            a = self.gen_bool_value(depth - 1)
            b = self.gen_bool_value(depth - 1)
            return E(f"{par(a, PREC_CMP + 1)} {self.r.choice(('==', '!='))} {par(b, PREC_CMP + 1)}",
                     "bool", 1, PREC_CMP, pure=a.pure and b.pure)
        op = self.r.choice(("and", "or"))
        p = PREC_AND if op == "and" else PREC_OR
        a = self.gen_bool_value(depth - 1)
        b = self.gen_bool_value(depth - 1)
        return E(f"{par(a, p)} {op} {par(b, p + 1)}", "bool", 1, p, pure=a.pure and b.pure)

    def gen_cond(self, depth):
        """A condition: also accepts any scalar's truth value and and/or of those."""
        c = self.r.random()
        if c < 0.1:
            e = self.gen_num("num", depth - 1, False)
            return e if e.prec > PREC_NOT else E(f"({e.code})", e.ty, e.bound, pure=e.pure)
        if c < 0.2 and depth > 0:
            op = self.r.choice(("and", "or"))
            p = PREC_AND if op == "and" else PREC_OR
            a = self.gen_cond(depth - 1)
            b = self.gen_cond(depth - 1)
            return E(f"{par(a, p)} {op} {par(b, p + 1)}", "bool", 1, p, pure=a.pure and b.pure)
        if c < 0.25 and depth > 0:
            a = self.gen_cond(depth - 1)
            return E(f"not {par(a, PREC_NOT)}", "bool", 1, PREC_NOT, pure=a.pure)
        return self.gen_bool_value(depth)

    # -- statements ---------------------------------------------------------

    def value_for(self, ty, bound, depth=3, finite=True):
        """An expression of exactly type ty with |value| <= bound."""
        if ty == "bool":
            return self.gen_bool_value(depth)
        e = self.gen_num(kind(ty) if self.chance(0.7) else "num", depth, finite)
        if kind(ty) == "int" and kind(e.ty) == "float" and not e.finite:
            e = self.leaf_of(ty)
        if e.finite:
            e = self.reduce(e, bound if kind(e.ty) == kind(ty) else min(bound, SOFT_BOUND))
        e = self.conv(e, ty)
        if e.finite:
            e = self.reduce(e, bound)
        return e

    def new_local(self, top=False):
        ty = self.r.choice(SCALAR_TYPES + ("int64", "float64"))
        name = self.fresh("v")
        e = self.value_for(ty, VAR_BOUND)
        ann = ""
        if self.chance(0.25) and ty != "bool":
            ann = f": {self.f.annotation(ty, self.r)}"
        elif self.chance(0.1):
            # `x = 0  # type: T` also fixes the type
            self.emit(f"{name} = {e.code}  # type: {self.f.annotation(ty, self.r)}")
            self.declare(Var(name, ty, VAR_BOUND))
            return
        self.emit(f"{name}{ann} = {e.code}")
        self.declare(Var(name, ty, VAR_BOUND))

    def new_local_array(self, k=None):
        k = k or self.r.choice(tuple(ARRAY_KINDS))
        elem, ndim, _ = ARRAY_KINDS[k]
        name = self.fresh("L")
        fn = self.r.choice(("zeros", "zeros", "ones"))
        if ndim == 1:
            n = self.r.randint(MIN_LEN_1D, MAX_LEN_1D)
            shape = str(n) if self.chance(0.7) else f"({n},)" if self.chance(0.5) else f"[{n}]"
        else:
            shape = f"({self.r.randint(MIN_ROWS, MAX_ROWS)}, {self.r.randint(MIN_COLS, MAX_COLS)})"
        dt = self.r.choice((elem, f"{elem}()", f"dtype={elem}"))
        if elem == "float64" and self.chance(0.4):
            self.emit(f"{name} = {fn}({shape})")
        else:
            self.emit(f"{name} = {fn}({shape}, {dt})")
        self.arrays[name] = Arr(name, k, assignable=True)

    def assignable(self):
        return self.vars(lambda v: v.assignable)

    def stmt_assign(self):
        vs = self.assignable()
        if not vs:
            return self.new_local()
        v = self.r.choice(vs)
        e = self.value_for(v.ty, v.bound)
        if len(e.code) > 40 and self.chance(0.1):
            # a parenthesized expression over several lines
            self.emit(f"{v.name} = (")
            self.emit(f"    {e.code}  # continued")
            self.emit(")")
        else:
            self.emit(f"{v.name} = {e.code}" + ("  # set" if self.chance(0.03) else ""))
        self.after_assign(v)

    def after_assign(self, v):
        v.safe_for = []

    def stmt_aug(self, v=None, op=None):
        vs = [v for v in self.assignable() if v.ty != "bool"]
        if not vs:
            return self.stmt_assign()
        v = v or self.r.choice(vs)
        op = op or self.r.choice(("+=", "-=", "*=", "//=", "%=", "/=") if kind(v.ty) == "float"
                                 else ("+=", "-=", "*=", "//=", "%="))
        if op in ("//=", "%=", "/="):
            d, dmin = self.divisor(kind(v.ty) if self.chance(0.7) else "int", 2, True, E(v.name, v.ty, v.bound))
            d = self.strong(d, v.ty)
            if promote(v.ty, d.ty) != v.ty and not d.lit:
                d = self.conv(self.fit(d, v.ty), v.ty)
            if d.lit and kind(d.ty) == "float" and kind(v.ty) == "int":
                d = self.conv(d, v.ty)
            if kind(v.ty) == "float" and dmin == 0 and kind(d.ty) == "float":
                # guard (abs() + 1) to keep the variable finite
                one = self.strong(E("1.0", "float64", 1, lit=True), d.ty)
                d = E(f"(abs({d.code}) + {one.code})", d.ty, d.bound + 1)
            self.emit(f"{v.name} {op} {par(d, PREC_COND)}")
            if op != "%=" and kind(v.ty) == "float":
                pass
            self.after_assign(v)
            return
        e = self.gen_num(kind(v.ty) if self.chance(0.8) else "num", 2, True)
        e = self.strong(e, v.ty)
        if not e.lit and promote(v.ty, e.ty) != v.ty:
            e = self.conv(self.fit(e, v.ty), v.ty)
        if e.lit and kind(e.ty) == "float" and kind(v.ty) == "int":
            e = self.conv(e, v.ty)
        e = self.reduce(e, VAR_BOUND)
        self.emit(f"{v.name} {op} {e.code}")
        after = v.bound + e.bound if op != "*=" else v.bound * e.bound
        if after > v.bound:
            k = self.reduce(E(v.name, v.ty, after), v.bound)
            if "%" in k.code and self.chance(0.5):
                kk = k.code.split(" % ", 1)[1]
                self.emit(f"{v.name} %= {kk}")
            else:
                self.emit(f"{v.name} = {k.code}")
        self.after_assign(v)

    def stmt_tuple(self):
        vs = self.assignable()
        arrs = self.arrays_of()
        if len(vs) + (1 if arrs else 0) < 2:
            return self.stmt_assign()
        n = 2 if self.chance(0.8) or len(vs) < 3 else 3
        targets = self.r.sample(vs, min(n, len(vs)))
        if arrs and (len(targets) < 2 or self.chance(0.3)):
            targets[self.r.randrange(len(targets))] = None  # an element target
            if len(targets) < 2:
                targets.append(None)
        names, vals = [], []
        swap = self.chance(0.4)
        srcs = [t for t in targets if t is not None]
        self.r.shuffle(srcs)
        for t in targets:
            if t is None:
                a, name = self.elem_target()
                names.append(name)
                vals.append(self.store_value(a, 2))
                continue
            names.append(t.name)
            if swap and srcs and srcs[0].ty != "bool" and t.ty != "bool":
                s = srcs.pop()
                e = E(s.name, s.ty, s.bound)
                vals.append(self.reduce(self.conv(self.fit(e, t.ty), t.ty), t.bound))
            else:
                vals.append(self.value_for(t.ty, t.bound, 2))
        self.emit(f"{', '.join(names)} = {', '.join(v.code for v in vals)}")
        for t in targets:
            if t is not None:
                self.after_assign(t)

    def stmt_chain(self):
        vs = self.assignable()
        if not vs:
            return self.stmt_assign()
        v = self.r.choice(vs)
        same = [w for w in vs if w.ty == v.ty and w is not v]
        arrs = self.arrays_of()
        if 2 in self.avoid or not arrs or v.ty == "bool":
            # Bug 2 (while open): chained assignment stored right to left and read
            # the value back from the last target; only same-typed variables then.
            if not same:
                return self.stmt_assign()
            w = self.r.choice(same)
            e = self.value_for(v.ty, min(v.bound, w.bound))
            self.emit(f"{v.name} = {w.name} = {e.code}")
            self.after_assign(v)
            self.after_assign(w)
            return
        names = [v.name]
        targets = [v]
        for _ in range(self.r.randint(1, 2)):
            if same and self.chance(0.3):
                w = same.pop()
                names.append(w.name)
                targets.append(w)
            else:
                names.append(self.elem_target()[1])
        self.r.shuffle(names)
        e = self.value_for(v.ty, min(ELEM_BOUND, min(t.bound for t in targets)))
        self.emit(f"{' = '.join(names)} = {e.code}")
        for t in targets:
            self.after_assign(t)

    def stmt_store(self):
        arrs = self.arrays_of()
        if not arrs:
            return self.stmt_assign()
        a = self.r.choice(arrs)
        self.f.writes = True
        if self.chance(0.3):
            # Augmented. Before 36076aa pyddc rejected calls (even len()) in the
            # index, and re-evaluated an index reading array elements after the
            # value (bug 1, while open).
            noread = 1 in self.avoid or self.chance(0.5)
            if 1 in self.avoid or self.chance(0.5):
                idx = ", ".join(self.index(a, d, callfree=True, noread=noread) for d in range(a.ndim))
            else:
                with self.restricted(raises=False):
                    idx = ", ".join(self.index(a, d, calls=self.chance(0.3)) for d in range(a.ndim))
                noread = False  # the index may read what the value's calls write
            if noread:
                op = self.r.choice(("+=", "-=", "*=", "+=", "//=", "%="))
            else:
                # No `A[idx] %= K` can follow (idx may read the element just
                # written), so only growth by small steps: a float grown out of
                # int32 range would be stored differently (NumPy's setitem wraps
                # through int64, a cast gives INT_MIN), and NumPy does not flag it.
                op = self.r.choice(("+=", "-=", "//=", "%="))
            if op in ("//=", "%="):
                # A[i] //= f() reads A[i] after calling f (bug 3, while open)
                with self.restricted(calls=3 not in self.avoid):
                    d, _ = self.divisor(kind(a.elem) if self.chance(0.7) else "int", 2, True,
                                        E("x", a.elem, ELEM_BOUND))
                if kind(d.ty) == "float" and kind(a.elem) == "int" and self.chance(0.5):
                    d = self.conv(d, a.elem) if d.finite else d
                self.emit(f"{a.name}[{idx}] {op} {par(d, PREC_COND)}")
                return
            e = self.gen_num("num" if self.chance(0.4) else kind(a.elem), 2, True)
            e = self.reduce(e, 100 if op == "*=" or not noread else ELEM_BOUND)
            if e.ty == "float32" or (e.lit and kind(a.elem) == "int" and kind(e.ty) == "float"):
                e = self.conv(e, "float64") if not e.lit else e
            self.emit(f"{a.name}[{idx}] {op} {e.code}")
            if not noread:
                return  # the index may have changed; the bound may be lost (an overflow gets skipped)
            kk = self.r.choice((97, 100, 1000))
            if kind(a.elem) == "float" or kind(e.ty) == "float":
                self.emit(f"{a.name}[{idx}] %= {kk}.0" if kind(a.elem) == "float" or self.chance(0.5)
                          else f"{a.name}[{idx}] %= {kk}")
            else:
                self.emit(f"{a.name}[{idx}] %= {kk}")
            return
        idx = ", ".join(self.index(a, d) for d in range(a.ndim))
        self.emit(f"{a.name}[{idx}] = {self.store_value(a).code}")

    def store_value(self, a, depth=3):
        """A value for an element of array a (any type: the store converts it)."""
        if self.chance(0.05):
            return self.gen_bool_value(1)
        e = self.gen_num("num" if self.chance(0.4) else kind(a.elem), depth, True)
        e = self.reduce(e, ELEM_BOUND)
        if e.ty == "float32" and kind(a.elem) == "int":
            e = self.conv(e, "float64")
        return e

    def elem_target(self):
        a = self.r.choice(self.arrays_of())
        self.f.writes = True
        return a, f"{a.name}[{', '.join(self.index(a, d) for d in range(a.ndim))}]"

    def stmt_if(self, depth):
        c = self.gen_cond(2)
        self.emit(f"if {c.code}:")
        self.block(depth + 1)
        n_elif = self.r.choice((0, 0, 1, 2))
        for _ in range(n_elif):
            c = self.gen_cond(2)
            self.emit(f"elif {c.code}:")
            self.block(depth + 1)
        if self.chance(0.5):
            self.emit("else:")
            self.block(depth + 1)

    def stmt_while(self, depth):
        name = self.fresh("w")
        n = self.r.randint(1, 8)
        self.emit(f"{name} = 0")
        counter = Var(name, "int64", n, assignable=False)
        self.declare(counter)
        cond = f"{name} < {n}"
        c = self.r.random()
        if c < 0.3:
            extra = self.gen_cond(1)
            cond = f"{cond} and {par(extra, PREC_AND + 1)}"
        elif c < 0.4:
            extra = self.gen_cond(1)
            cond = f"{par(extra, PREC_AND)} and {cond}"
        self.emit(f"while {cond}:")
        self.indent += 1
        self.emit(f"{name} += 1")
        self.loop_body(depth, n)
        self.indent -= 1

    def loop_body(self, depth, trips):
        saved = self.mult
        self.mult *= max(trips, 1)
        self.loop_depth += 1
        self.scopes.append({})
        self.block_contents(depth + 1)
        self.scopes.pop()
        self.loop_depth -= 1
        self.mult = saved

    def stmt_for(self, depth):
        name = self.fresh("i")
        pre = self.chance(0.2)
        # Sometimes an existing int64 variable is the loop variable: it keeps
        # the last value after the loop (or its old one if the loop is empty).
        # A parameter that is otherwise only a range-loop variable is taken
        # for provably non-negative (bug 6, while open).
        reuse = None
        cands = self.vars(lambda v: v.ty == "int64" and v.assignable and not v.safe_for
                          and not (v.param and 6 in self.avoid))
        if cands and self.chance(0.15):
            reuse = self.r.choice(cands)
            name, pre = reuse.name, False
        arrs = self.arrays_of()
        c = self.r.random()
        safe = []
        if arrs and c < 0.5:
            a = self.r.choice(arrs)
            dim = self.r.randrange(a.ndim)
            ext = self.extent(a, dim).code
            step = self.r.choice((1, 1, 1, 2, 3))
            if self.chance(0.35):
                rng = f"range({ext} - 1, -1, -{step})"
            elif step == 1 and self.chance(0.5):
                rng = f"range({ext})"
            elif step == 1:
                rng = f"range(0, {ext})"
            else:
                rng = f"range(0, {ext}, {step})"
            trips = self.extent(a, dim).bound
            safe = [(a.name, dim)]
            bound = trips
        else:
            lo = self.small_int()
            hi = self.small_int()
            step = self.r.choice((1, 1, 2, 3, -1, -1, -2, -3))
            form = self.r.random()
            if form < 0.25:
                rng = f"range({hi.code})"
                step = 1
                lo = E("0", "int64", 0)
            elif form < 0.45 and step > 0:
                rng = f"range({lo.code}, {hi.code})"
                step = 1
            elif form < 0.5:
                s = self.reduce(self.gen_num("int", 1, True), 100)
                rng = f"range({lo.code}, {hi.code}, {par(s, PREC_MUL)} % 3 - 1)"
                step = 1  # may be 0: ValueError, or +-1
            else:
                rng = f"range({lo.code}, {hi.code}, {step})"
            trips = lo.bound + hi.bound + 1
            bound = max(lo.bound, hi.bound)
        if pre:
            self.emit(f"{name} = 0")
        self.emit(f"for {name} in {rng}:")
        # An assignable loop variable is never a safe index: an assignment
        # later in the body (say in a nested loop) is seen by the statements
        # before it on the next pass.
        assignable = self.chance(0.1)
        var = Var(name, "int64", bound, assignable=assignable, safe_for=[] if assignable else safe)
        self.indent += 1
        self.scopes.append({name: var})
        self.loop_body_noscope(depth, trips)
        self.scopes.pop()
        self.indent -= 1
        if pre:
            self.declare(Var(name, "int64", bound, assignable=False))
        if reuse is not None:
            reuse.bound = max(reuse.bound, bound)
            self.after_assign(reuse)

    def stmt_divloop(self, depth):
        """A range loop that only updates scalars and divides floats by values
        that may be zero, maybe under an `if` or before a `break`: the loops
        whose division checks code generation tests after the loop
        (opt/DeferDivisionChecks.h). ZeroDivisionError must come out of it
        exactly where Python raises it, and the values where it does not."""
        floats = [v for v in self.assignable() if kind(v.ty) == "float"]
        if not floats:
            return self.stmt_for(depth)
        name = self.fresh("i")
        hi = self.small_int()
        trips = max(hi.bound, 1)
        self.emit(f"for {name} in range({hi.code}):")
        self.indent += 1
        self.scopes.append({name: Var(name, "int64", trips, assignable=False)})
        saved = self.mult
        self.mult *= trips
        self.loop_depth += 1
        with self.restricted(calls=False):
            for _ in range(self.r.randint(1, 3)):
                c = self.r.random()
                if c < 0.75:
                    guarded = c > 0.5
                    if guarded:
                        self.emit(f"if {self.gen_cond(1).code}:")
                        self.indent += 1
                    v = self.r.choice(floats)
                    if self.chance(0.4):
                        # zero in exactly one iteration (or none): |divisor| >= 1 otherwise
                        self.emit(f"{v.name} /= {v.ty}({name} - {self.r.randint(0, trips + 1)})")
                        self.after_assign(v)
                    else:
                        self.stmt_aug(v, "/=")
                    if guarded:
                        self.indent -= 1
                elif c < 0.9:
                    self.stmt_assign()
                else:
                    self.emit(f"if {self.gen_cond(1).code}:")
                    self.indent += 1
                    self.emit(self.r.choice(("break", "continue")))
                    self.indent -= 1
        self.loop_depth -= 1
        self.mult = saved
        self.scopes.pop()
        self.indent -= 1

    def stmt_scan(self, depth):
        """A while loop that steps an index by a literal and reads the element
        there in its condition (opt/ScanLoops.h): up or down the last axis,
        from a start that may be negative (the copy that wraps), the read
        beside a bound that keeps it in range or, with a step of 1, before
        it; a body of simple statements, maybe a `break`, and the step."""
        arrs = self.arrays_of()
        if not arrs:
            return self.stmt_while(depth)
        a = self.r.choice(arrs)
        dim = a.ndim - 1
        ext = self.extent(a, dim)
        name = self.fresh("s")
        self.emit(f"{name} = {self.index(a, dim)}")
        step = self.r.choice((1, 1, 1, 2, 3))
        up = self.chance(0.6)
        bound = f"{name} < {par(ext, PREC_ADD)} - 1" if up else f"{name} > -{par(ext, PREC_UNARY)}"
        lead = ", ".join(self.index(a, d) for d in range(dim))
        x = E(f"{a.name}[{lead + ', ' if lead else ''}{name}]", a.elem, ELEM_BOUND)
        y = self.gen_num("num", 1, False)
        x, y = self.strong(x, y.ty), self.strong(y, x.ty)
        read = f"{par(x, PREC_CMP + 1)} {self.r.choice(CMP_OPS)} {par(y, PREC_CMP + 1)}"
        cond = f"{read} and {bound}" if step == 1 and self.chance(0.3) else f"{bound} and {read}"
        self.emit(f"while {cond}:")
        self.indent += 1
        trips = 2 * ext.bound // step + 1
        self.scopes.append({})
        saved = self.mult
        self.mult *= trips
        self.loop_depth += 1
        with self.restricted(calls=False):
            for _ in range(self.r.randint(0, 2)):
                self.simple_statement()
            if self.chance(0.3):
                self.emit(f"if {self.gen_cond(1).code}:")
                self.indent += 1
                self.emit("break")
                self.indent -= 1
        self.loop_depth -= 1
        self.mult = saved
        self.scopes.pop()
        self.emit(f"{name} {'+' if up else '-'}= {step}")
        self.indent -= 1
        self.declare(Var(name, "int64", ext.bound + step, assignable=False))

    def loop_body_noscope(self, depth, trips):
        saved = self.mult
        self.mult *= max(trips, 1)
        self.loop_depth += 1
        self.block_contents(depth + 1)
        self.loop_depth -= 1
        self.mult = saved

    def small_int(self):
        c = self.r.random()
        if c < 0.5:
            return self.int_lit(-6, 10)
        e = self.gen_num("int", 1, True, ) if self.chance(0.5) else self.leaf("int")
        if e.bound <= 10:
            return e
        k = self.r.choice((5, 7, 10))
        return E(f"{par(e, PREC_MUL)} % {k}", e.ty, k, PREC_MUL, pure=e.pure)

    def stmt_pfor(self):
        """pfor i in range(len(T)): T[i] = f(i, T[i], scalars, other arrays).

        Iterations are independent (pfor may run them in any order): the body
        writes only T[i], reads T (and any array that may be T) at [i] only,
        assigns no scalar, calls nothing and raises nothing."""
        t = self.r.choice(self.arrays_of(lambda a: a.ndim == 1))
        i = self.fresh("i")
        self.f.writes = True
        ext = self.r.choice((f"len({t.name})", f"shape({t.name}, 0)", f"{t.name}.shape[0]"))
        self.emit(f"pfor {i} in range({ext}):")
        self.indent += 1
        self.scopes.append({i: Var(i, "int64", MAX_LEN_1D, assignable=False)})
        self.pfor = (t, i)
        saved = self.mult
        self.mult *= MAX_LEN_1D
        with self.restricted(calls=False, raises=False):
            for _ in range(self.r.randint(1, 2)):
                e = self.gen_num("num" if self.chance(0.4) else kind(t.elem), 3, True)
                e = self.reduce(e, ELEM_BOUND if self.chance(0.7) else 100)
                if e.ty == "float32" and kind(t.elem) == "int":
                    e = self.conv(e, "float64")
                if self.chance(0.7):
                    self.emit(f"{t.name}[{i}] = {e.code}")
                else:
                    self.emit(f"{t.name}[{i}] += {e.code}")
                    self.emit(f"{t.name}[{i}] %= {'97.0' if kind(t.elem) == 'float' else '97'}")
        self.mult = saved
        self.pfor = None
        self.scopes.pop()
        self.indent -= 1

    def stmt_foreach(self, depth):
        arrs = self.arrays_of(lambda a: a.ndim == 1)
        if not arrs:
            return self.stmt_for(depth)
        a = self.r.choice(arrs)
        name = self.fresh("e")
        self.emit(f"for {name} in {a.name}:")
        self.indent += 1
        self.scopes.append({name: Var(name, a.elem, ELEM_BOUND, assignable=self.chance(0.05))})
        self.loop_body_noscope(depth, MAX_LEN_1D)
        self.scopes.pop()
        self.indent -= 1

    def stmt_call(self):
        gs = [g for g in self.callees if self.args_possible(g) and g.cost * self.mult + self.cost < self.MAX_COST]
        if not gs or self.calls_left <= 0:
            return self.stmt_assign()
        g = self.r.choice(gs)
        self.calls_left -= 1
        self.cost += g.cost * self.mult
        if g.writes:
            self.f.writes = True
        self.emit(f"{g.name}({', '.join(self.call_args(g))})")

    def stmt_print(self):
        def item():
            if self.chance(0.2):
                return E(self.r.choice(('"x ="', "'at'", '"-"', "'a\\tb'", '""')), "str", 0)
            if self.chance(0.2):
                return self.gen_bool_value(1)
            return self.gen_num("num", 2, False)

        # print's arguments are evaluated right to left too (bug 3, while open)
        items = self.ordered([item for _ in range(self.r.randint(1, 3))])
        self.emit(f"print({', '.join(e.code for e in items)})")

    def stmt_local_array_assign(self):
        # Not while a loop variable indexes the array: the new array may be
        # shorter than the range it iterates over.
        busy = {name for v in self.vars() for name, _ in v.safe_for}
        locs = self.arrays_of(lambda a: a.assignable and a.name not in busy)
        if not locs:
            return self.stmt_store()
        a = self.r.choice(locs)
        others = self.arrays_of(lambda b: b.kind == a.kind and b is not a)
        makers = [g for g in self.callees if g.ret == a.kind and self.args_possible(g)
                  and g.cost * self.mult + self.cost < self.MAX_COST]
        if makers and self.calls_left > 0 and self.chance(0.5):
            g = self.r.choice(makers)
            self.calls_left -= 1
            self.cost += g.cost * self.mult
            if g.writes:
                self.f.writes = True
            self.emit(f"{a.name} = {g.name}({', '.join(self.call_args(g))})")
        elif others and self.chance(0.6):
            self.emit(f"{a.name} = {self.r.choice(others).name}")
        else:
            elem, ndim, _ = ARRAY_KINDS[a.kind]
            if ndim == 1:
                shape = str(self.r.randint(MIN_LEN_1D, MAX_LEN_1D))
            else:
                shape = f"({self.r.randint(MIN_ROWS, MAX_ROWS)}, {self.r.randint(MIN_COLS, MAX_COLS)})"
            self.emit(f"{a.name} = {self.r.choice(('zeros', 'ones'))}({shape}, {elem})")

    def block(self, depth):
        self.indent += 1
        self.scopes.append({})
        self.block_contents(depth)
        self.scopes.pop()
        self.indent -= 1

    def block_contents(self, depth):
        n = self.r.randint(1, 4 if depth < 3 else 2)
        emitted = len(self.lines)
        for i in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            if self.statement(depth):
                break  # the statement ended the block (break/continue/return)
        if len(self.lines) == emitted:
            if self.chance(0.7):
                self.simple_statement()
            else:
                self.emit("pass")

    def simple_statement(self):
        c = self.r.random()
        if c < 0.4:
            self.stmt_assign()
        elif c < 0.7:
            self.stmt_store()
        else:
            self.stmt_aug()

    def statement(self, depth):
        """Emits one statement; True if it ends the block."""
        if self.chance(0.02):
            self.lines.append("")
            self.emit("# a comment line")
        opts = [("assign", 10), ("aug", 7), ("tuple", 2), ("chain", 1), ("store", 7), ("local", 3),
                ("call", 3), ("print", 1)]
        if depth < 3 and self.mult < 200:
            opts += [("if", 6), ("for", 4), ("while", 2), ("foreach", 2), ("divloop", 2), ("scan", 2)]
            if self.pfor is None and self.arrays_of(lambda a: a.ndim == 1):
                opts += [("pfor", 1)]
        elif depth < 4:
            opts += [("if", 4)]
        if self.loop_depth > 0:
            opts += [("break", 1), ("continue", 1)]
        if self.f.ret is not None or depth > 1:
            opts += [("return", 1 if depth > 1 else 0)]
        if self.arrays_of(lambda a: a.assignable):
            opts += [("arrassign", 1)]
        choice = self.weighted(opts)
        if choice == "assign":
            self.stmt_assign()
        elif choice == "aug":
            self.stmt_aug()
        elif choice == "tuple":
            self.stmt_tuple()
        elif choice == "chain":
            self.stmt_chain()
        elif choice == "store":
            self.stmt_store()
        elif choice == "local":
            self.new_local()
        elif choice == "call":
            self.stmt_call()
        elif choice == "print":
            self.stmt_print()
        elif choice == "if":
            self.stmt_if(depth)
        elif choice == "for":
            self.stmt_for(depth)
        elif choice == "while":
            self.stmt_while(depth)
        elif choice == "foreach":
            self.stmt_foreach(depth)
        elif choice == "divloop":
            self.stmt_divloop(depth)
        elif choice == "scan":
            self.stmt_scan(depth)
        elif choice == "pfor":
            self.stmt_pfor()
        elif choice == "arrassign":
            self.stmt_local_array_assign()
        elif choice in ("break", "continue"):
            if self.chance(0.6):
                c = self.gen_cond(1)
                self.emit(f"if {c.code}:")
                self.indent += 1
                self.emit(choice)
                self.indent -= 1
                return False
            self.emit(choice)
            return True
        elif choice == "return":
            self.emit_return()
            return True
        return False

    def emit_return(self):
        if self.f.ret is None:
            self.emit("return")
            return
        ty = self.f.ret
        if ty in ARRAY_KINDS:
            self.emit(f"return {self.r.choice(self.arrays_of(lambda a: a.kind == ty)).name}")
            return
        if ty == "bool":
            e = self.gen_bool_value(2)
        elif self.f.ret_finite or kind(ty) == "int":
            e = self.value_for(ty, RET_BOUND)
        else:
            e = self.gen_num("float", 3, False)
            e = self.conv(e, ty) if e.ty != ty or e.lit else e
        self.emit(f"return {e.code}")

    def generate(self):
        if self.chance(0.15):
            self.emit(self.r.choice(('"""A generated kernel function."""', '"doc"')))
        if self.f.ret in ARRAY_KINDS and (not self.arrays_of(lambda a: a.kind == self.f.ret) or self.chance(0.3)):
            self.new_local_array(self.f.ret)
        for _ in range(self.r.randint(0, 1)):
            if self.chance(0.5):
                self.new_local_array()
        for _ in range(self.r.randint(1, 3)):
            self.new_local(top=True)
        self.block_contents_top()
        if self.f.ret is not None:
            self.emit_return()
        elif self.chance(0.3):
            self.emit("return")
        self.f.cost = max(1, self.cost)
        return self.lines

    def block_contents_top(self):
        while self.budget > 0:
            self.budget -= 1
            if self.statement(1):
                break


# Compiler bugs this fuzzer found that are still open, by number (see
# test_fuzz.py and README.md). The generator steers clear of their patterns,
# so that the default seeds pass and a campaign finds new bugs. All found so
# far are fixed (36076aa, 6287e14, 015509c); the code that avoided bugs 1-4
# and 6-8 stays, in case they come back.
OPEN_BUGS = frozenset()


def avoided_bugs():
    """OPEN_BUGS, or nothing with $PYDD_FUZZ_KNOWN_BUGS=1 (to see whether they are fixed)."""
    return frozenset() if os.environ.get("PYDD_FUZZ_KNOWN_BUGS", "") == "1" else OPEN_BUGS


def generate(seed, avoid=None):
    """The kernel of seed `seed`: a Kernel(seed, source, funcs).

    avoid: numbers of the known compiler bugs whose patterns the kernel must
    not contain (default avoided_bugs())."""
    if avoid is None:
        avoid = avoided_bugs()
    r = random.Random(seed)
    funcs = []
    out = [f'"""pydd fuzz kernel, seed {seed} (tests/fuzz/gen.py)."""', "from pydd import *", ""]
    for fi in range(r.randint(2, 4)):
        params = []
        used = {}
        for pi in range(r.randint(1, 5)):
            if r.random() < 0.3:
                k = r.choice(tuple(ARRAY_KINDS))
                used[k] = used.get(k, 0) + 1
                params.append((f"A{pi}" if ARRAY_KINDS[k][1] == 1 else f"M{pi}", k))
            else:
                params.append((f"p{pi}", r.choice(SCALAR_TYPES + NUM_TYPES)))
        ret = r.choice(SCALAR_TYPES + NUM_TYPES + (None,))
        if r.random() < 0.1:
            ret = r.choice(tuple(ARRAY_KINDS))
        f = Func(f"f{fi}", params, ret)
        f.ret_finite = r.random() < 0.7
        g = FuncGen(r, f, list(funcs), stmt_budget=r.randint(6, 18), avoid=avoid)
        for name, t in params:
            if t in ARRAY_KINDS:
                g.arrays[name] = Arr(name, t)
            else:
                g.declare(Var(name, t, PARAM_BOUND if t != "bool" else 1, assignable=r.random() < 0.3,
                              param=True))
        body = g.generate()
        sig = ", ".join(f"{n}: {f.annotation(t, r)}" for n, t in params)
        ret_ann = f" -> {f.annotation(ret, r)}" if ret is not None else (" -> None" if r.random() < 0.3 else "")
        out.append("")
        out.append(f"def {f.name}({sig}){ret_ann}:")
        out.extend(body)
        out.append("")
        funcs.append(f)
    return Kernel(seed, "\n".join(out).rstrip() + "\n", funcs)


def parse_seeds(spec):
    """'7' -> [7]; '0:100' -> 0..99 (start:count); '3,5,9' -> [3, 5, 9]."""
    seeds = []
    for part in spec.split(","):
        if ":" in part:
            start, count = part.split(":")
            seeds.extend(range(int(start), int(start) + int(count)))
        elif part:
            seeds.append(int(part))
    return seeds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, help="print the kernel of this seed")
    ap.add_argument("--run", metavar="SEEDS", help="check seeds: N, START:COUNT or a,b,c")
    ap.add_argument("--check", type=int, metavar="SEED", help="check one seed in this process")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--opt", default="0,3", help="-O levels, comma separated (default 0,3)")
    ap.add_argument("--trials", type=int, default=None, help="input sets per function")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per seed")
    ap.add_argument("--keep", metavar="DIR", help="write failing kernels to DIR")
    ap.add_argument("--arrays", action="store_true",
                    help="whole-array kernels (gen_arrays.py: what the optimizer transforms)")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if args.seed is not None:
        import gen_arrays
        sys.stdout.write((gen_arrays.generate(args.seed) if args.arrays else generate(args.seed)).source)
        return 0
    import harness
    opts = tuple(int(o) for o in args.opt.split(","))
    if args.check is not None:
        return harness.check_main(args.check, opts, args.trials, args.arrays)
    if args.run:
        return harness.campaign(parse_seeds(args.run), opts, args.jobs, args.timeout, args.trials, args.keep,
                                args.arrays)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
