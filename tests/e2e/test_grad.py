"""Gradients of kernels (issue 48, frontend/Gradient.h, docs/gradients.md).

    /usr/bin/python3 -m pytest tests/e2e/test_grad.py -q

Every derivative pyddc generates is checked against central finite
differences of the compiled kernel itself on random inputs, at -O0 and -O3:

test_catalog[...]    one generated case per differentiable catalog function
                     (element-wise on scalars and on arrays, with and without
                     broadcasting; reductions; products; transpose; where)
test_program[...]    loops with carried values, in-place slice and element
                     updates, branches, early returns, while loops, views of
                     arguments, several argnums, float32
test_pfor            a pfor kernel's gradient at 1, 2 and 8 threads
test_in_kernel       grad(f, 0)(...) and value_and_grad written in a kernel
test_torch[...]      five losses against PyTorch autograd (skipped without
                     Debian's python3-torch)
Errors (non-differentiable calls) are lit tests: tests/lit/grad/.
"""

import os
import textwrap

import numpy as np
import pytest

import pydd

RNG_SEED = 48

# name: (formula over x (and y), domain of x, domain of y or None)
UNARY = {
    "minus": ("-x", (-1.5, 1.5)), "abs": ("abs(x)", (0.2, 1.5)), "sqrt": ("sqrt(x)", (0.5, 2.0)),
    "exp": ("exp(x)", (-1.5, 1.5)), "log": ("log(x)", (0.5, 2.0)), "cos": ("cos(x)", (-1.5, 1.5)),
    "sin": ("sin(x)", (-1.5, 1.5)), "tan": ("tan(x)", (-1.0, 1.0)), "acos": ("acos(x)", (-0.8, 0.8)),
    "asin": ("asin(x)", (-0.8, 0.8)), "atan": ("atan(x)", (-1.5, 1.5)), "tanh": ("tanh(x)", (-1.5, 1.5)),
    "sinh": ("sinh(x)", (-1.5, 1.5)), "cosh": ("cosh(x)", (-1.5, 1.5)), "log2": ("log2(x)", (0.5, 2.0)),
    "log10": ("log10(x)", (0.5, 2.0)), "exp2": ("exp2(x)", (-1.5, 1.5)), "expm1": ("expm1(x)", (-1.5, 1.5)),
    "log1p": ("log1p(x)", (-0.5, 1.5)), "square": ("square(x)", (-1.5, 1.5)),
    # zero almost everywhere (JAX's choice): inputs away from the jumps
    "floor": ("floor(x)", (0.1, 0.9)), "ceil": ("ceil(x)", (0.1, 0.9)), "sign": ("sign(x)", (0.2, 0.9)),
}
BINARY = {
    "add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y", "pow": "x ** y",
    "maximum": "maximum(x, y)", "minimum": "minimum(x, y)", "arctan2": "arctan2(x, y)", "hypot": "hypot(x, y)",
    "log_base": "log(x, y)",
}
POSITIVE = {"div", "pow", "log_base"}  # both operands in (0.5, 2) (log_base: base away from 1)


def _catalog_source():
    fns, cases = [], {}

    def add(name, sig, body, args, argnums):
        fns.append(f"def {name}({sig}) -> float64:\n    return {body}\n")
        cases[name] = (args, argnums)

    for name, (formula, (lo, hi)) in UNARY.items():
        add(f"s_{name}", "x: float64", f"1.5 * {formula}", [("s", lo, hi)], (0,))
        add(f"a_{name}", "x: Array(float64, 1), w: Array(float64, 1)", f"sum({formula} * w)",
            [("a5", lo, hi), ("a5", -1, 1)], (0,))
    for name, formula in BINARY.items():
        lo, hi = (0.5, 2.0) if name in POSITIVE else (-1.5, 1.5)
        ylo = 1.3 if name == "log_base" else lo
        add(f"s_{name}", "x: float64, y: float64", formula, [("s", lo, hi), ("s", ylo, hi + 1)], (0, 1))
        add(f"b_{name}", "x: Array(float64, 2), y: Array(float64, 1)", f"sum(({formula}) * ({formula}))",
            [("a34", lo, hi), ("a4", ylo, hi + 1)], (0, 1))
    reductions = {
        "sum": "sum(x * x)", "mean": "mean(sin(x))", "max": "max(x * w)", "min": "min(x * w)",
        "sum_axis0": "sum(sum(x, axis=0) ** 2.0)", "mean_axis1": "sum(mean(x, 1) * sin(mean(x, 1)))",
        "matvect": "sum(tanh(x @ v))", "vectmat": "sum(sin(v2 @ x))", "matmat": "sum((x @ transpose(x)) ** 2.0)",
        "innerprod": "innerprod(x[0, :], x[1, :]) * 2.0", "transpose": "sum(transpose(x) * transpose(x))",
        "where": "sum(where(x > 0.0, x * x, sin(x)))",
    }
    for name, body in reductions.items():
        add(f"r_{name}", "x: Array(float64, 2), w: Array(float64, 2), v: Array(float64, 1), v2: Array(float64, 1)",
            body, [("a34", -1.5, 1.5), ("a34", -1, 1), ("a4", -1, 1), ("a3", -1, 1)], (0,))
    return "from pydd import *\n\n" + "\n".join(fns), cases


PROGRAMS = textwrap.dedent('''
    from pydd import *

    def carried(x: Array(float64, 1), a: float64) -> float64:
        s = 0.0
        for i in range(x.shape[0]):
            s = s * a + sin(x[i]) * x[i]
        return s

    def nested(A: Array(float64, 2)) -> float64:
        t = 0.0
        for i in range(A.shape[0]):
            r = 1.0
            for j in range(0, A.shape[1], 2):
                r = r * cos(A[i, j]) + A[i, j]
            t = t + r * r
        return t

    def inplace_slice(y0: Array(float64, 1), a: float64) -> float64:
        y = copy(y0)
        for k in range(3):
            y[1:] = y[1:] * a + y[:-1]
        return sum(y * y)

    def inplace_arg(y: Array(float64, 1), v: Array(float64, 1)) -> float64:
        for i in range(y.shape[0]):
            y[i] += v[i] * y[i]
        s = sum(exp(y))
        for i in range(y.shape[0]):
            y[i] = y[i] * 2.0
        return s + sum(y)

    def branches(x: Array(float64, 1)) -> float64:
        s = 0.0
        for i in range(x.shape[0]):
            if x[i] > 0.0:
                s = s + x[i] * x[i]
            else:
                s = s - sin(x[i])
        return s

    def early(x: Array(float64, 1), c: float64) -> float64:
        m = sum(x) * c
        if m > 0.0:
            return m * m
        y = exp(x) * c
        return sum(y)

    def whiles(x: float64) -> float64:
        s = x
        while s < 100.0:
            s = s * s + 1.5
        return s

    def views(X: Array(float64, 2), b: Array(float64, 1)) -> float64:
        v = X[1:, :]
        col = X[:, 2]
        return sum(v * v) + sum(col * b) + sum(X[0, :] ** 3.0)

    def broadcast(X: Array(float64, 2), b: Array(float64, 1), s: float64) -> float64:
        Z = tanh(X + b) * s
        return sum(Z * Z) + sum(b * s)

    def broadcast_rows(X: Array(float64, 2), w: Array(float64, 2)) -> float64:
        return sum((X * w) ** 2.0)

    def temps(x: Array(float64, 1), W: Array(float64, 2)) -> float64:
        h = x
        for t in range(3):
            z = W @ h
            h = tanh(z) + h * 0.5
        return sum(h)

    def single32(x: Array(float32, 1)) -> float32:
        return sum(x * x * float32(0.5))

    def pfor_loss(x: Array(float64, 1), w: Array(float64, 1)) -> float64:
        out = zeros_like(x)
        pfor i in range(x.shape[0]):
            out[i] = exp(x[i] * w[i]) / (1.0 + x[i] * x[i])
        return sum(out)
''')

PROGRAM_CASES = {
    "carried": ([("a7", -1, 1), ("s", 0.3, 0.9)], (0, 1)),
    "nested": ([("a45", -1, 1)], (0,)),
    "inplace_slice": ([("a6", -1, 1), ("s", 0.3, 0.9)], (0, 1)),
    "inplace_arg": ([("a5", -1, 1), ("a5", -1, 1)], (0, 1)),
    "branches": ([("a9", -1, 1)], (0,)),
    "early": ([("a5", -1, 1), ("s", 0.5, 1.0)], (0, 1)),
    "early_neg": ([("a5", -1, 1), ("s", -1.0, -0.5)], (0, 1)),
    "whiles": ([("s", 1.1, 1.9)], (0,)),
    "views": ([("a34", -1, 1), ("a3", -1, 1)], (0, 1)),
    "broadcast": ([("a34", -1, 1), ("a4", -1, 1), ("s", 0.5, 1.5)], (0, 1, 2)),
    "broadcast_rows": ([("a34", -1, 1), ("a14", -1, 1)], (0, 1)),  # w of shape (1, 4): summed over rows
    "temps": ([("a4", -1, 1), ("a44", -0.5, 0.5)], (0, 1)),
    "single32": ([("f5", -1, 1)], (0,)),
    "pfor_loss": ([("a8", -1, 1), ("a8", -1, 1)], (0, 1)),
}


SPARSE = textwrap.dedent('''
    from pydd import *

    def sparse_fit(w: Array(float64, 1), S: SparseMat(float64), y: Array(float64, 1)) -> float64:
        r = S @ w - y
        return 0.5 * sum(r * r) + sum(sin(spmv(S, w * w)))

    def sparse_dense(D: Array(float64, 2), S: SparseMat(float64)) -> float64:
        return sum(tanh(spmm_dense(D, S))) + sum(spmm_dense(S, transpose(D)) ** 2.0)
''')


@pytest.mark.parametrize("name", ["sparse_fit", "sparse_dense"])
def test_sparse(tmp_path_factory, opt, name):
    import scipy.sparse as sp
    m = _module(tmp_path_factory, "sparse", SPARSE, [("sparse_fit", (0, 2)), ("sparse_dense", (0,))], opt)
    rng = np.random.default_rng(RNG_SEED)
    S = sp.random(7, 7, density=0.4, format="csr", random_state=RNG_SEED)
    if name == "sparse_fit":
        args, nums = [rng.uniform(-1, 1, 7), S, rng.uniform(-1, 1, 7)], (0, 2)
    else:
        args, nums = [rng.uniform(-1, 1, (3, 7)), S], (0,)
    _check(m, name, name, args, nums)


def _value(spec, rng):
    kind, lo, hi = spec
    if kind == "s":
        return float(rng.uniform(lo, hi))
    shape = tuple(int(c) for c in kind[1:])
    x = rng.uniform(lo, hi, size=shape)
    return x.astype(np.float32) if kind[0] == "f" else x


def _central(f, args, k):
    """Central differences of f in argument k (copies: a kernel may write its arguments)."""
    def call(a):
        return float(f(*[np.copy(v) if isinstance(v, np.ndarray) else v for v in a]))
    x = args[k]
    if not isinstance(x, np.ndarray):
        h = 1e-6 * max(1.0, abs(x))
        hi, lo = list(args), list(args)
        hi[k], lo[k] = x + h, x - h
        return (call(hi) - call(lo)) / (2 * h)
    g = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        h = (1e-3 if x.dtype == np.float32 else 1e-6) * max(1.0, abs(float(x[i])))
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        hi, lo = list(args), list(args)
        hi[k], lo[k] = xp, xm
        g[i] = (call(hi) - call(lo)) / (float(xp[i]) - float(xm[i]))
    return g


def _check(module, name, fn, args, argnums):
    f = getattr(module, fn)
    grad = getattr(module, f"{fn}__value_and_grad{'_'.join(map(str, argnums))}")
    before = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    value, grads = grad(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    assert np.isclose(value, f(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args]), rtol=1e-12)
    if len(argnums) == 1:
        grads = (grads,)
    for k, g in zip(argnums, grads):
        want = _central(f, before, k)
        tol = 2e-3 if np.asarray(before[k]).dtype == np.float32 else 1e-6
        assert np.shape(g) == np.shape(want), (name, k)
        assert np.allclose(g, want, rtol=tol, atol=tol), f"{name}: d/d arg {k}\n{g}\nvs finite differences\n{want}"


@pytest.fixture(scope="module", params=[0, 3], ids=["O0", "O3"])
def opt(request):
    return request.param


_modules = {}


def _module(tmp_path_factory, key, source, requests, opt):
    if (key, opt) not in _modules:
        d = tmp_path_factory.mktemp(f"grad_{key}_O{opt}")
        path = d / f"grad_{key}.pydd"
        path.write_text(source)
        flags = [f"--value-and-grad={fn}:{','.join(map(str, nums))}" for fn, nums in sorted(set(requests))]
        _modules[key, opt] = pydd.compile(path, opt=opt, extra_args=flags)
    return _modules[key, opt]


CATALOG_SOURCE, CATALOG_CASES = _catalog_source()


@pytest.mark.parametrize("name", sorted(CATALOG_CASES))
def test_catalog(tmp_path_factory, opt, name):
    requests = [(n, nums) for n, (_, nums) in CATALOG_CASES.items()]
    m = _module(tmp_path_factory, "catalog", CATALOG_SOURCE, requests, opt)
    specs, nums = CATALOG_CASES[name]
    rng = np.random.default_rng([RNG_SEED, len(name)])
    _check(m, name, name, [_value(s, rng) for s in specs], nums)


def test_catalog_covers_differentiable_functions():
    """Every element-wise catalog function with a float result has a case here
    or is listed as having no derivative."""
    out = pydd._build._run(pydd.find_pyddc(), ["--list-library"]).stdout
    listed = {line.split("(")[0] for line in out.splitlines()}
    no_derivative = {"eq", "neq", "lt", "gt", "le", "ge", "logical_and", "logical_or", "logical_xor",
                     "logical_not", "elemwise_not", "isnan", "isinf", "bitwise_and", "bitwise_or", "bitwise_xor",
                     "floordiv", "mod", "conj", "conjugate", "angle"}
    covered = set(UNARY) | set(BINARY) | no_derivative
    for fn in listed & (set(UNARY) | set(BINARY)):
        assert fn in covered
    assert set(UNARY) | set(BINARY) <= listed | {"minus"}


@pytest.mark.parametrize("name", sorted(PROGRAM_CASES))
def test_program(tmp_path_factory, opt, name):
    fn = name.removesuffix("_neg")
    requests = [(n.removesuffix("_neg"), nums) for n, (_, nums) in PROGRAM_CASES.items()]
    m = _module(tmp_path_factory, "programs", PROGRAMS, requests, opt)
    specs, nums = PROGRAM_CASES[name]
    rng = np.random.default_rng([RNG_SEED, len(name)])
    _check(m, name, fn, [_value(s, rng) for s in specs], nums)


def test_arguments_restored(tmp_path_factory):
    """The reverse sweep pops every overwritten element back: an argument the
    kernel updates in place ends as it began after the gradient."""
    m = _module(tmp_path_factory, "programs", PROGRAMS, [(n.removesuffix("_neg"), nums) for n, (_, nums) in PROGRAM_CASES.items()], 3)
    y = np.linspace(-1, 1, 5)
    v = np.linspace(0.5, 1, 5)
    y0 = y.copy()
    m.inplace_arg__value_and_grad0_1(y, v)
    assert np.array_equal(y, y0)


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_pfor(tmp_path_factory, threads):
    m = _module(tmp_path_factory, "programs", PROGRAMS, [(n.removesuffix("_neg"), nums) for n, (_, nums) in PROGRAM_CASES.items()], 3)
    old = pydd.get_num_threads()
    pydd.set_num_threads(threads)
    try:
        rng = np.random.default_rng([RNG_SEED, threads])
        x, w = rng.uniform(-1, 1, 3000), rng.uniform(-1, 1, 3000)
        value, (gx, gw) = m.pfor_loss__value_and_grad0_1(x, w)
        e = np.exp(x * w)
        np.testing.assert_allclose(gx, (w * e * (1 + x * x) - 2 * x * e) / (1 + x * x) ** 2, rtol=1e-12)
        np.testing.assert_allclose(gw, x * e / (1 + x * x), rtol=1e-12)
        assert np.isclose(value, m.pfor_loss(x, w), rtol=1e-12)
    finally:
        pydd.set_num_threads(old)


IN_KERNEL = textwrap.dedent('''
    from pydd import *

    def loss(w: Array(float64, 1), X: Array(float64, 2), y: Array(float64, 1)) -> float64:
        r = X @ w - y
        return 0.5 * sum(r * r)

    def train(w0: Array(float64, 1), X: Array(float64, 2), y: Array(float64, 1), lr: float64, steps: int64) -> Array(float64, 1):
        w = copy(w0)
        for it in range(steps):
            w = w - lr * grad(loss, 0)(w, X, y)
        return w

    def both(w: Array(float64, 1), X: Array(float64, 2), y: Array(float64, 1)) -> float64:
        v, g = value_and_grad(loss, 0)(w, X, y)
        return v + sum(g)
''')


@pytest.mark.parametrize("opt_level", [0, 3])
def test_in_kernel(tmp_path, opt_level):
    path = tmp_path / "grad_in_kernel.pydd"
    path.write_text(IN_KERNEL)
    m = pydd.compile(path, opt=opt_level)
    rng = np.random.default_rng(RNG_SEED)
    X, y, w0 = rng.standard_normal((20, 4)), rng.standard_normal(20), rng.standard_normal(4)
    w = w0.copy()
    for _ in range(5):
        w = w - 0.01 * (X.T @ (X @ w - y))
    np.testing.assert_allclose(m.train(w0, X, y, 0.01, 5), w, rtol=1e-12)
    r = X @ w0 - y
    assert np.isclose(m.both(w0, X, y), 0.5 * r @ r + (X.T @ r).sum(), rtol=1e-12)
    # The same file run as Python: grad falls back to central differences.
    py = pydd.load_python(path)
    np.testing.assert_allclose(py.train(w0, X, y, 0.01, 5), w, rtol=1e-6)


def test_python_api(tmp_path):
    """pydd.grad / value_and_grad on a compiled module's function and on a
    @pydd.kernel, argnums an int or a tuple."""
    path = tmp_path / "grad_api.pydd"
    path.write_text(IN_KERNEL)
    m = pydd.compile(path, opt=3)
    rng = np.random.default_rng(RNG_SEED)
    X, y, w = rng.standard_normal((20, 4)), rng.standard_normal(20), rng.standard_normal(4)
    r = X @ w - y
    np.testing.assert_allclose(pydd.grad(m.loss)(w, X, y), X.T @ r, rtol=1e-12)
    v, (gw, gy) = pydd.value_and_grad(m.loss, argnums=(0, 2))(w, X, y)
    assert np.isclose(v, 0.5 * r @ r)
    np.testing.assert_allclose(gw, X.T @ r, rtol=1e-12)
    np.testing.assert_allclose(gy, -r, rtol=1e-12)
    with pytest.raises(TypeError):
        pydd.grad(m.loss, argnums="w")
    # A module written to a directory (not the cache) works the same way.
    m2 = pydd.compile(path, out_dir=tmp_path / "out", opt=0)
    np.testing.assert_allclose(pydd.grad(m2.loss, 0)(w, X, y), X.T @ r, rtol=1e-12)


KERNEL_MODULE = textwrap.dedent('''
    import pydd
    from pydd import *

    @pydd.kernel
    def kloss(w: Array(float64, 1), s: float64) -> float64:
        return sum(exp(w * s))
''')


def test_decorated_kernel(tmp_path, monkeypatch):
    import importlib
    (tmp_path / "grad_kernel_mod.py").write_text(KERNEL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("grad_kernel_mod")
    w = np.linspace(-1, 1, 6)
    v, (gw, gs) = pydd.value_and_grad(mod.kloss, (0, 1))(w, 0.7)
    assert np.isclose(v, np.exp(w * 0.7).sum(), rtol=1e-12)
    np.testing.assert_allclose(gw, 0.7 * np.exp(w * 0.7), rtol=1e-12)
    assert np.isclose(gs, (w * np.exp(w * 0.7)).sum(), rtol=1e-12)


try:
    import torch
except ImportError:  # Debian's python3-torch
    torch = None

TORCH_LOSSES = textwrap.dedent('''
    from pydd import *

    def logistic(w: Array(float64, 1), X: Array(float64, 2), y: Array(float64, 1)) -> float64:
        z = X @ w
        return sum(log(1.0 + exp(-y * z))) / y.shape[0] + 0.01 * sum(w * w)

    def lsq_loops(w: Array(float64, 1), X: Array(float64, 2), y: Array(float64, 1)) -> float64:
        s = 0.0
        for i in range(X.shape[0]):
            r = -y[i]
            for j in range(X.shape[1]):
                r = r + X[i, j] * w[j]
            s = s + r * r
        return 0.5 * s

    def recurrence(W: Array(float64, 2), U: Array(float64, 2), h0: Array(float64, 1)) -> float64:
        h = h0
        for t in range(U.shape[0]):
            h = tanh(W @ h + U[t, :])
        return sum(h * h)

    def sparse_lsq(w: Array(float64, 1), rows: Array(int64, 1), cols: Array(int64, 1), vals: Array(float64, 1), y: Array(float64, 1)) -> float64:
        r = -y
        for k in range(vals.shape[0]):
            r[rows[k]] += vals[k] * w[cols[k]]
        return 0.5 * sum(r * r)

    def softmax_xent(W: Array(float64, 2), X: Array(float64, 2), labels: Array(int64, 1)) -> float64:
        Z = X @ W
        s = 0.0
        for i in range(Z.shape[0]):
            m = max(Z[i, :])
            e = exp(Z[i, :] - m)
            s = s + log(sum(e)) + m - Z[i, labels[i]]
        return s / Z.shape[0]
''')


def torch_losses():
    t = torch

    def logistic(w, X, y):
        return t.log(1 + t.exp(-y * (X @ w))).sum() / y.shape[0] + 0.01 * (w * w).sum()

    def lsq_loops(w, X, y):
        return 0.5 * ((X @ w - y) ** 2).sum()

    def recurrence(W, U, h0):
        h = h0
        for i in range(U.shape[0]):
            h = t.tanh(W @ h + U[i])
        return (h * h).sum()

    def sparse_lsq(w, rows, cols, vals, y):
        r = (-y).index_add(0, rows, vals * w[cols])
        return 0.5 * (r * r).sum()

    def softmax_xent(W, X, labels):
        return t.nn.functional.cross_entropy(X @ W, labels)

    return {f.__name__: f for f in (logistic, lsq_loops, recurrence, sparse_lsq, softmax_xent)}


def torch_inputs(name, rng, n=30, d=6):
    X = rng.standard_normal((n, d))
    if name == "logistic":
        return [rng.standard_normal(d), X, np.sign(rng.standard_normal(n))]
    if name == "lsq_loops":
        return [rng.standard_normal(d), X, rng.standard_normal(n)]
    if name == "recurrence":
        return [0.3 * rng.standard_normal((d, d)), rng.standard_normal((n, d)), rng.standard_normal(d)]
    if name == "sparse_lsq":
        nnz = 4 * n
        return [rng.standard_normal(d), rng.integers(0, n, nnz), rng.integers(0, d, nnz), rng.standard_normal(nnz),
                rng.standard_normal(n)]
    return [rng.standard_normal((d, 4)), X, rng.integers(0, 4, n)]


@pytest.mark.skipif(torch is None, reason="PyTorch (Debian python3-torch) is not installed")
@pytest.mark.parametrize("name", ["logistic", "lsq_loops", "recurrence", "sparse_lsq", "softmax_xent"])
def test_torch(tmp_path_factory, opt, name):
    m = _module(tmp_path_factory, "torch", TORCH_LOSSES, [(n, (0,)) for n in torch_losses()], opt)
    args = torch_inputs(name, np.random.default_rng(RNG_SEED))
    value, g = getattr(m, f"{name}__value_and_grad0")(*args)
    targs = [torch.tensor(a) for a in args]
    targs[0].requires_grad_(True)
    tv = torch_losses()[name](*targs)
    tv.backward()
    assert np.isclose(value, tv.item(), rtol=1e-10, atol=0)
    want = targs[0].grad.numpy()
    assert np.max(np.abs(g - want)) <= 1e-10 * np.max(np.abs(want)), name
