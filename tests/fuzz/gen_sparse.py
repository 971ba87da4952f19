"""Random kernels of sparse products with dense operands: what sampled
fusion (opt/SampledFusion.h) rewrites.

    python3 tests/fuzz/gen_sparse.py --seed N     # print the kernels of seed N

Each generated function `f<k>(S, X, Y, Z, W, w, a)` multiplies the sparse S by
a random element-wise tree (operators, maximum, sqrt, exp, negation,
literals and the scalar a) over 2-D products (`X @ Y`, `X @ Z.T`), a 2-D
array W and a 1-D row w, written as spm_mul(S, E), spm_mul(E, S) or S * E,
and returns the product or what a consumer makes of it (a sum, column or
row sums, spmm_dense, spmv). test_fuzz.py runs them at -O0 and -O3 against
the Python run on matrices of densities 0, 1e-3, 0.05 and 0.5 with empty
rows, unsorted int32 and int64 indices, and operands of matching and of
broadcasting shapes (which the sampled loop leaves to the original
operations). Each seed also has `g(S, v, a)`, a loop over rows with a loop
over `S.row(r)` in it (row_loop), in the forms the emitter prints
differently, `h(S, v, a)`, a loop over `S.nonzeros()` adding into
out[r] (nonzeros_loop), what the nzrows pass rewrites, and `k(S, v, a)`,
a loop that folds each row into out[i] (row_fold), what the pairs pass
runs two rows at a time.
"""

import argparse
import random

LEAVES = ["(X @ Y)", "(X @ Z.T)", "W", "w", "a"]


def tree(rng, depth, leaves=LEAVES, stop=0.25, forms=("+", "-", "*", "/", "maximum", "sqrt", "exp", "neg"),
         maximum="maximum"):
    """A random element-wise expression over `leaves` and literals (an array
    tree by default; `maximum` names the two-operand maximum)."""
    if depth == 0 or rng.random() < stop:
        return rng.choice(leaves + [f"{rng.uniform(-2, 2):.3f}"])
    a, b = (tree(rng, depth - 1, leaves, stop, forms, maximum) for _ in range(2))
    form = rng.choice(forms)
    if form == "/":
        return f"({a} / (abs({b}) + 1.0))"
    if form == "maximum":
        return f"{maximum}({a}, {b})"
    if form == "sqrt":
        return f"sqrt(abs({a}))"
    if form == "exp":
        return f"exp(-abs({a}))"
    if form == "neg":
        return f"(-{a})"
    return f"({a} {form} {b})"


def function(rng, k):
    e = tree(rng, rng.randint(1, 3))
    if not any(leaf in e for leaf in ("X @", "W", "w")):
        e = f"({e} + (X @ Y))"  # at least one array operand: a dense product
    product = rng.choice([f"spm_mul(S, {e})", f"spm_mul({e}, S)", f"(S * {e})"])
    consumer, result = rng.choice([
        ("{p}", "SparseMat(float64)"),
        ("{p}.sum()", "float64"),
        ("{p}.sum(0)", "Array(float64)"),
        ("{p}.sum(1)", "Array(float64)"),
        ("spmm_dense({p}, Z)", "Array(float64, 2)"),
        ("spmv({p}, v)", "Array(float64)"),
    ])
    return (f"def f{k}(S: SparseMat(float64), X: Array(float64, 2), Y: Array(float64, 2), Z: Array(float64, 2),\n"
            f"       W: Array(float64, 2), w: Array(float64), v: Array(float64), a: float64) -> {result}:\n"
            f"    return {consumer.format(p=product)}\n")


def scalar_tree(rng, depth):
    """An expression of a row entry: its value x, v[j] at its column, the
    scalar a and literals."""
    return tree(rng, depth, ["x", "v[j]", "a", "float64(j)"], 0.3, ("+", "-", "*", "/", "maximum", "sqrt"), "max")


def row_loop(rng):
    """g(S, v, a): a loop over rows with a loop over S.row(r) in it, in the
    forms the emitter prints differently: every row in order (strips of
    rows), rows picked by another expression (a work count per row), a body
    that only computes or one that calls out, continue and break in either
    loop."""
    rows, pick = rng.choice([("shape(S, 0)", "i"), ("shape(S, 0)", "i"), ("shape(S, 0)", "(i * 7 + 3) % shape(S, 0)"),
                             ("shape(S, 0) * 2", "i // 2")])
    lines = ["def g(S: SparseMat(float64), v: Array(float64), a: float64) -> Array(float64):",
             f"    out = zeros({rows})",
             "    seen: List(int64) = []",
             f"    for i in range({rows}):"]
    if rng.random() < 0.2:
        lines += ["        if i % 3 == 1:", "            continue"]
    lines += ["        acc = float64(len(seen) % 2)", f"        for j, x in S.row({pick}):"]
    if rng.random() < 0.3:
        lines += [f"            if x < {rng.uniform(-1, 1):.3f}:", "                continue"]
    lines.append(f"            acc += {scalar_tree(rng, rng.randint(1, 3))}")
    if rng.random() < 0.3:
        lines += [f"            if acc > {rng.uniform(0, 4):.3f}:", "                break"]
    if rng.random() < 0.3:
        lines.append("            seen.append(j)")  # a call: the loop from the row's start
    lines.append("        out[i] = acc")
    if rng.random() < 0.2:
        lines += [f"        if acc > {rng.uniform(1, 6):.3f}:", "            break"]
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def nonzeros_loop(rng):
    """h(S, v, a): a loop over S.nonzeros() that adds into out[r] (what the
    nzrows pass runs row by row), as `+=` or spelled out, into an array of
    S's rows or more, and now and then a form the pass leaves alone (a
    second statement, an index other than r)."""
    rows = rng.choice(["shape(S, 0)", "shape(S, 0)", "shape(S, 0) + 2"])
    init = rng.choice(["zeros({n})", "full({n}, a)"]).format(n=rows)
    term = tree(rng, rng.randint(1, 3), ["x", "v[j]", "a", "float64(j)", "float64(r)"], 0.3,
                ("+", "-", "*", "/", "maximum", "sqrt"), "max")
    update = rng.choice(["out[r] += {e}", "out[r] = out[r] + {e}", "out[r] += {e}", "out[j % len(out)] += {e}"])
    lines = ["def h(S: SparseMat(float64), v: Array(float64), a: float64) -> Array(float64):",
             f"    out = {init}",
             "    for r, j, x in S.nonzeros():",
             "        " + update.format(e=term)]
    if rng.random() < 0.15:
        lines.append("        out[r] -= 0.5")
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def row_fold(rng):
    """k(S, v, a): a loop over S's rows that folds each row into a scalar
    stored in out[i] (what the pairs pass runs two rows at a time), its
    start, step and store drawn from forms the pass takes, and now and then
    one it leaves alone (the scalar read after the loop, out read by the
    step); or one that adds into out[i] itself (what nzrows rewrites)."""
    if rng.random() < 0.3:
        # Written into out[i] itself: nzrows runs it with out[i] in a local.
        return "\n".join([
            "def k(S: SparseMat(float64), v: Array(float64), a: float64) -> Array(float64):",
            "    out = " + rng.choice(["zeros(shape(S, 0))", "full(shape(S, 0) + 1, a)"]),
            "    for i in range(shape(S, 0)):",
            "        for j, x in S.row(i):",
            f"            out[i] += {scalar_tree(rng, rng.randint(1, 3))}",
            "    return out"]) + "\n"
    start = rng.choice(["0.0", "a", "float64(i)", "v[i % len(v)]", "-0.0"])
    term = scalar_tree(rng, rng.randint(1, 3))
    step = rng.choice(["acc + {e}", "max(acc, {e})", "acc * 0.5 + {e}", "{e} - acc"]).format(e=term)
    store = rng.choice(["acc", "acc", "acc * 2.0 + float64(i)", "sqrt(abs(acc))"])
    if rng.random() < 0.1:
        step = f"acc + out[j % len(out)] * {term}"
    read_after = rng.random() < 0.1
    lines = ["def k(S: SparseMat(float64), v: Array(float64), a: float64) -> Array(float64):",
             "    out = zeros(shape(S, 0) + 1)"]
    if read_after:
        lines.append("    acc = 0.0")
    lines += ["    for i in range(shape(S, 0)):",
             f"        acc = {start}",
             "        for j, x in S.row(i):",
             f"            acc = {step}",
             f"        out[i] = {store}"]
    if read_after:
        lines.append("    out[shape(S, 0)] = acc")
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def generate(seed, count=4):
    """The source of seed `seed`: `count` functions f<k>, g, a row loop, h,
    a loop over the non-zeros, and k, a row fold."""
    parts = ["# Generated by tests/fuzz/gen_sparse.py --seed %d\nfrom pydd import *\n" % seed]
    for k in range(count):
        parts.append("\n\n" + function(random.Random(seed * 1000 + k), k))
    parts.append("\n\n" + row_loop(random.Random(seed * 1000 + 999)))
    parts.append("\n\n" + nonzeros_loop(random.Random(seed * 1000 + 998)))
    parts.append("\n\n" + row_fold(random.Random(seed * 1000 + 997)))
    return "".join(parts)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0)
    print(generate(p.parse_args().seed))
