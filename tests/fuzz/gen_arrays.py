"""Random whole-array kernels, deterministic from a seed: what the optimizer
(fusion, LICM) transforms.

    python3 tests/fuzz/gen.py --arrays --seed N       print the kernel of seed N
    python3 tests/fuzz/gen.py --arrays --run 0:500    check seeds 0..499

A kernel has a few functions over a 1-D float64 array `a`, a 2-D float64
array `X` and float64/int64 scalars. Bodies are written the way NumPy users
write them: operator trees with broadcasting (a row vector against `X`, a
length-1 view against a vector, a scalar against anything), math functions, `where`,
row and reversed views, stores into views (`X[i] = ...`, `v[:] = ...`),
in-place updates (`v += ...`, `X[i] += ...`), aliasing between operands and
destination (`u = v` then `u += v`, `a[1:] = a[:-1] + 1.0`, `X[i] = X[j] * 2.0`),
reductions (`sum`, `max`, `mean`, `any`, `all`; sums along the rows of a named
intermediate that the next statement reads), loops over `where(c)`'s indices
(some writing what `c` reads), rows of X added into a short array in a
loop, dot products of rows, and loops with early exits around them.
Shapes mostly agree by construction; a few operations use shapes that do
not broadcast, so that both sides must raise the same ValueError.

Values stay bounded (sqrt of `abs(x) + 1.0`, products scaled by literals
<= 1 or by factors in (0.25, 0.75), divisors `abs(x) + 1.0`), and only
correctly rounded operations are used, so the reference and the compiled
kernel compute the same floats operation by operation: a difference is a
compiler bug. The exception: a 0/1 mask times exp or log of an array,
summed (what zero-product guarding rewrites), whose positive terms keep
libm's last-bit differences within the harness's tolerance.
"""

import random

# The array kinds these kernels take (harness.py draws inputs for them).
ARRAY_KINDS = {
    "vf": ("float64", 1, "Array(float64)"),
    "mf": ("float64", 2, "Array(float64, 2)"),
}

# Only correctly rounded operations (IEEE's + - * / sqrt, abs, min/max):
# NumPy's SIMD exp/log/cos and libm's differ in the last bit, and a
# cancellation later in a random tree can make that any relative
# difference (seeds 276 and 285 of the first campaign differed at -O0 as at
# -O3). The scalar fuzzer covers the math functions.
UNARY = ("-{}", "abs({})", "sqrt(abs({}) + 1.0)", "({} / (abs({}) + 2.0))")
BINARY = ("{} + {}", "{} - {}", "{} * 0.5 + {}", "maximum({}, {})", "minimum({}, {})",
          "{} / (abs({}) + 1.0)", "({} - {}) * 0.25")
SCALAR_OPS = ("{} * {}", "{} + {}", "{} - {}", "maximum({}, {})")


class Gen:
    def __init__(self, r):
        self.r = r
        self.lines = []
        self.vectors = ["a"]     # 1-D arrays of len(a)
        self.rows = []           # 1-D arrays of X's row length
        self.matrices = ["X"]    # 2-D arrays of X's shape
        self.scalars = ["s"]     # float64 scalars
        self.n = 0
        self.depth = 1

    def fresh(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, line):
        self.lines.append("    " * self.depth + line)

    def chance(self, p):
        return self.r.random() < p

    def lit(self):
        return self.r.choice(("0.5", "2.0", "1.0", "-1.5", "0.25", "3.0"))

    def scalar(self):
        if self.chance(0.5):
            return self.lit()
        return self.r.choice(self.scalars)

    # ---- array expressions of a known shape --------------------------------

    def leaf(self, shape):
        r = self.r
        if shape == "vec":
            c = r.random()
            if c < 0.15:
                return "a[::-1]"  # a strided view
            if c < 0.25:
                return "a[0:1]"   # length 1: broadcasts
            return r.choice(self.vectors)
        if shape == "row":
            c = r.random()
            if c < 0.4 or not self.rows:
                return r.choice(("X[0]", "X[i % shape(X, 0)]" if self.in_loop else "X[1 % shape(X, 0)]", "X[-1]"))
            return r.choice(self.rows)
        c = r.random()
        if c < 0.1:
            return "X[::-1]"
        return r.choice(self.matrices)

    def tree(self, shape, depth=3):
        r = self.r
        if depth <= 0 or self.chance(0.25):
            return self.leaf(shape)
        c = r.random()
        if c < 0.25:
            t = self.tree(shape, depth - 1)
            return r.choice(UNARY).format(t, t)
        if c < 0.4:
            op = r.choice(SCALAR_OPS)
            a, b = self.tree(shape, depth - 1), self.scalar()
            return "(" + (op.format(a, b) if self.chance(0.5) else op.format(b, a)) + ")"
        other = shape
        if shape == "mat" and self.chance(0.4):
            other = "row"  # broadcasting a row vector over the rows
        a, b = self.tree(shape, depth - 1), self.tree(other, depth - 1)
        if self.chance(0.3):
            a, b = b, a
        if self.chance(0.15):
            # where: a condition of either shape, a value or a literal in each branch
            cond = f"{self.tree(r.choice((shape, other)), depth - 2)} > {self.scalar()}"
            return f"where({cond}, {a}, {b if self.chance(0.7) else self.scalar()})"
        return "(" + r.choice(BINARY).format(a, b) + ")"

    # ---- statements --------------------------------------------------------

    in_loop = False

    def pick_shape(self):
        return self.r.choice(("vec", "vec", "row", "mat", "mat"))

    def stmt(self):
        r = self.r
        c = r.random()
        shape = self.pick_shape()
        if c < 0.25 and shape != "row" and self.chance(0.3):
            self.chain(shape)
        elif c < 0.25:
            name = self.fresh("v" if shape != "mat" else "M")
            self.emit(f"{name} = {self.tree(shape)}")
            {"vec": self.vectors, "row": self.rows, "mat": self.matrices}[shape].append(name)
        elif c < 0.45:
            dest = {"vec": self.vectors, "row": self.rows or ["X[0]"], "mat": self.matrices}[shape]
            target = r.choice(dest)
            op = r.choice(("+=", "-=", "*="))
            value = self.tree(shape, 2)
            if op == "*=":
                value = f"(0.5 + 0.25 * ({value}) / (abs({value}) + 1.0))"  # a factor in (0.25, 0.75)
            self.emit(f"{target} {op} {value}")
        elif c < 0.55:
            i = "i % shape(X, 0)" if self.in_loop else str(r.randint(-2, 1))
            if self.chance(0.5):
                self.emit(f"X[{i}] = maximum(0.001, X[{i}])")
            else:
                self.emit(f"X[{i}] = {self.tree('row', 2)}")
        elif c < 0.62:
            target = r.choice(self.vectors)
            if target != "a" and self.chance(0.5):
                self.emit(f"{target}[:] = {self.tree('vec', 2)}")
            else:
                self.emit(r.choice(("a[1:] = a[:-1] + 1.0", "a[:-1] = a[1:] * 0.5", "a[::-1] = a * 2.0")))
        elif c < 0.68:
            # An alias, then an update through it that reads the original.
            src = r.choice(self.vectors + self.matrices)
            alias = self.fresh("u")
            self.emit(f"{alias} = {src}")
            self.emit(f"{alias} += {src} * 0.5")
        elif c < 0.72:
            self.emit(f"X[0] = X[-1] * 2.0 + X[0]")
        elif c < 0.76:
            self.extents()
        elif c < 0.9 and self.chance(0.3):
            self.masked_sum(shape)
        elif c < 0.9 and self.chance(0.3):
            self.row_accumulation()
        elif c < 0.9 and self.chance(0.4):
            self.row_dots()
        elif c < 0.9 and self.chance(0.35):
            # A named intermediate read by the next statement only (forward
            # substitution), summed along the rows (a row-buffered sum).
            d = self.fresh("d")
            self.emit(f"{d} = {self.tree('mat', 2)}")
            other = self.tree(r.choice(("mat", "row")), 1)
            red = r.choice((f"sum(sqrt(({d} * {d}).sum(1)))", f"(({d} * {other}).sum(axis=-1)).max()",
                            f"sum(({d} - {other}).sum(1, keepdims=True))", f"(({d} + {d}) * 0.5).sum(-1).min()"))
            name = self.fresh("t")
            self.emit(f"{name} = {red}")
            self.scalars.append(name)
            if self.chance(0.3):
                self.matrices.append(d)  # read again later: not substituted
        elif c < 0.9 and self.chance(0.4):
            self.where_loop()
        elif c < 0.9 and self.chance(0.3):
            self.overwritten_loop()
        elif c < 0.9:
            red = r.choice(("sum({})", "({}).max()", "({}).min()", "({}).mean()",
                            "float64(({}).any())", "float64(all(({}) > 0.0))"))
            name = self.fresh("t")
            self.emit(f"{name} = {red.format(self.tree(shape, 2))}")
            self.scalars.append(name)
        elif not self.in_loop:
            self.loop()
        else:
            self.emit(f"s = s + {r.choice(self.scalars)} * 0.5")
            if self.chance(0.5):
                self.emit(f"if s > {r.choice(('10.0', '100.0', '-1.0'))}:")
                self.depth += 1
                self.emit(r.choice(("break", "continue")))
                self.depth -= 1

    def masked_sum(self, shape):
        """A 0/1 mask times a libm function of a named array, summed: the
        products zero-product guarding (opt/ZeroProducts.h) skips. The terms
        are positive, so libm's last-bit differences from NumPy's stay within
        the tolerance (no cancellation)."""
        r = self.r
        if shape == "row":
            shape = "vec"
        arrays = self.vectors if shape == "vec" else self.matrices
        mask = self.fresh("k")
        one, zero = r.choice((("1", "0"), ("1.0", "0.0"), ("True", "False")))
        self.emit(f"{mask} = where({self.tree(shape, 1)} > {self.scalar()}, {one}, {zero})")
        fn = r.choice(("exp(-0.5 * {})", "log(1.0 + exp({}))", "exp({} * 0.25 - 1.0)"))
        name = self.fresh("t")
        self.emit(f"{name} = sum({mask} * {fn.format(r.choice(arrays))})")
        self.scalars.append(name)

    def row_accumulation(self):
        """Rows of X added into a short array in a loop (bigCLAM's gradient):
        what accumulator promotion (opt/PromoteAccumulators.h) keeps in
        registers. Sometimes only some rows, a read of the whole array
        between additions or a one-column row that broadcasts (both run
        with the registers stored), an early exit, or a rebinding (not
        promoted)."""
        r = self.r
        acc, j = self.fresh("g"), self.fresh("j")
        if self.chance(0.7):
            self.emit(f"{acc} = zeros(shape(X, 1))")
            row = f"X[{j}]"
        else:
            self.emit(f"{acc} = zeros(shape(a, 0))")
            row = f"a[::-1] * X[{j}, 0]"
        self.emit(f"for {j} in range(shape(X, 0)):")
        outer = self.depth
        self.depth += 1
        if self.chance(0.4):
            self.emit(r.choice((f"if X[{j}, 0] > 0.0:", f"if {j} % 2 == 0:", "if s < 5.0:")))
            self.depth += 1
        self.emit(r.choice((f"{acc} += {row}", f"{acc} += {row} * 0.5 + {acc} * 0.25", f"{acc} -= maximum({row}, 0.0)",
                            f"{acc} = maximum({acc}, {row})")))
        if self.chance(0.2):
            self.emit(f"{acc} += X[{j}, 0:1] * 0.5")
        if self.chance(0.3):
            self.emit(f"s = s + sum({acc}) * 0.25")
        self.maybe_break(0.2)
        self.depth = outer
        name = self.fresh("t")
        self.emit(f"{name} = sum({acc})")
        self.scalars.append(name)

    def row_dots(self):
        """Dot products of rows of X (bigCLAM's `F[nb] @ F[i]`), which the
        dots pass (opt/ShortDots.h) writes as loops: against a fixed row, a
        negative index or the loop's own row; against a row whose index is
        an expression and of a with its reverse (left to the library)."""
        r = self.r
        t, j, d = self.fresh("t"), self.fresh("j"), self.fresh("d")
        other = r.choice(("0", "-1", j, f"-1 - {j}"))
        self.emit(f"{t} = 0.0")
        self.emit(f"for {j} in range(shape(X, 0)):")
        outer = self.depth
        self.depth += 1
        self.emit(f"{d} = X[{j}] @ X[{other}]" if self.chance(0.8) else f"{d} = a @ a[::-1]")
        self.emit(f"{t} = {t} + {d} * 0.25")
        self.maybe_break(0.2)
        self.depth = outer
        self.scalars.append(t)

    def overwritten_loop(self):
        """An array of zeros that a loop writes element by element: what
        the overwrite pass (opt/OverwrittenZeros.h) allocates empty. Or
        not quite: a loop from 1, a skipped element, an early exit, or a
        read of the array in the body, and the zeros must stay."""
        r = self.r
        z, j = self.fresh("z"), self.fresh("j")
        ext = r.choice(("shape(X, 0)", "len(a)", "shape(X, 1)"))
        value = {"shape(X, 0)": f"sum(X[{j}]) * 0.5", "len(a)": f"a[{j}] * 2.0 + s",
                 "shape(X, 1)": f"X[0, {j}] - float64({j})"}[ext]
        self.emit(f"{z} = zeros({ext})")
        if self.chance(0.2):
            self.emit("s = s * 0.5 + 1.0")  # a statement between
        self.emit(f"for {j} in range({'1, ' if self.chance(0.15) else ''}{ext}):")
        self.depth += 1
        if self.chance(0.15):
            self.emit(f"if {j} % 3 == 1:")
            self.emit(f"    continue")
        self.maybe_break(0.1)
        if self.chance(0.15):
            value += f" + {z}[{ext} - 1 - {j}]"  # read before it is written
        self.emit(f"{z}[{j}] = {value}")
        self.depth -= 1
        name = self.fresh("t")
        self.emit(f"{name} = sum({z} * {z})")
        self.scalars.append(name)

    def maybe_break(self, p):
        """With probability p, `if s > 10.0: break` (or 100.0)."""
        if self.chance(p):
            self.emit(f"if s > {self.r.choice(('10.0', '100.0'))}:")
            self.depth += 1
            self.emit("break")
            self.depth -= 1

    def chain(self, shape):
        """Named intermediates of one shape, each read by the next: what
        loop merging (opt/MergeLoops.h) runs as one loop, with the ones
        nothing else reads made scalars. One may be rebuilt from itself (a
        temporary the name then takes), or read reversed (elements the
        merged iteration has not computed: not merged)."""
        r = self.r
        pool = self.vectors if shape == "vec" else self.matrices
        reverse = "[::-1]" if shape == "vec" else "[::-1, :]"
        names = []
        for _ in range(r.randint(2, 4)):
            name = self.fresh("c")
            prev = names[-1] if names else r.choice(pool)
            self.emit(f"{name} = ({self.tree(shape, 2)}) * 0.5 + {prev}")
            names.append(name)
            if self.chance(0.25):
                self.emit(f"{name} = maximum({name}, {names[0]} - 1.0)")
            if self.chance(0.15):
                self.emit(f"{name} = {name}{reverse} * 0.5 + {names[0]}")
        # Some stay readable later (they stay arrays), the others are dead.
        pool.extend(n for n in names if self.chance(0.5))

    def extents(self):
        """A vector made with an extent read from an integer, rebuilt from
        itself, and sometimes (data-dependent) rebound to length 1, which
        later statements broadcast: what fusion's proof of equal extents
        (opt/ArrayExtents.h) must get right both ways."""
        r = self.r
        n, z = self.fresh("n"), self.fresh("z")
        self.emit(f"{n} = shape(a, 0)")
        self.emit(f"{z} = {r.choice(('arange', 'zeros', 'ones'))}({n}) * {self.lit()}")
        self.emit(f"{z} = {r.choice(('maximum', 'minimum'))}({z}, {self.tree('vec', 1)})")
        if self.chance(0.4):
            self.emit(f"if s > {r.choice(('0.0', '1.0'))}:")
            self.depth += 1
            self.emit(f"{z} = {z}[0:1] * 2.0")
            self.depth -= 1
        self.vectors.append(z)

    def where_loop(self):
        """A loop over where(c)'s indices (the filter pass), sometimes with a
        statement between, or a body that writes what c reads."""
        r = self.r
        shape = r.choice(("vec", "row")) if self.rows else "vec"
        pool = self.vectors if shape == "vec" else self.rows + ["X[0]"]
        # Mostly one array (what the pass rewrites), sometimes a tree of several.
        cond = r.choice(pool) if self.chance(0.6) else self.tree(shape, 1)
        cond = r.choice((f"{cond} > {r.choice(('0.0', '0.5', '-0.25'))}", cond, f"abs({cond}) < 1.0",
                         f"({cond} - 0.5) * ({cond} + 0.5) < 0.0"))
        idx, j = self.fresh("w"), self.fresh("j")
        self.emit(f"{idx} = where({cond})")
        if self.chance(0.2):
            target = r.choice(pool)
            self.emit(f"{target}[0] = {target}[-1] * 0.5")
        self.emit(f"for {j} in {idx}:")
        self.depth += 1
        read = r.choice(pool)
        self.emit(f"s = s + {read}[{j}] * 0.5")
        if self.chance(0.25):
            target = r.choice(pool)
            self.emit(f"{target}[{j}] = {target}[{j}] * 0.5 + 1.0")
        self.maybe_break(0.3)
        self.depth -= 1

    def loop(self):
        trips = self.r.randint(0, 4)
        self.emit(f"for i in range({trips if self.chance(0.6) else 'k'}):")
        self.depth += 1
        self.in_loop = True
        saved = (list(self.vectors), list(self.rows), list(self.matrices), list(self.scalars))
        for _ in range(self.r.randint(1, 4)):
            self.stmt()
        self.in_loop = False
        # Names first assigned in the loop may be unassigned after it.
        self.vectors, self.rows, self.matrices, self.scalars = saved
        self.depth -= 1

    def body(self):
        self.emit("s = 0.0")
        for _ in range(self.r.randint(3, 8)):
            self.stmt()
        self.emit("s = s + sum(a) + sum(X)")
        for name in self.scalars[1:]:
            self.emit(f"s = s + {name}")
        return self.lines


def generate(seed):
    """The kernel of seed `seed`, as a gen.Kernel."""
    import gen  # the scalar generator's Kernel and Func

    r = random.Random(seed)
    out = [f'"""pydd whole-array fuzz kernel, seed {seed} (tests/fuzz/gen_arrays.py)."""', "from pydd import *", ""]
    funcs = []
    for fi in range(r.randint(1, 3)):
        params = [("a", "vf"), ("X", "mf"), ("k", "int64")]
        f = gen.Func(f"f{fi}", params, "float64")
        f.ret_finite = False
        f.writes = True
        lines = Gen(r).body()
        out.append("")
        out.append(f"def {f.name}(a: Array(float64), X: Array(float64, 2), k: int64) -> float64:")
        out.extend(lines)
        out.append("    return s")
        out.append("")
        funcs.append(f)
    return gen.Kernel(seed, "\n".join(out).rstrip() + "\n", funcs)
