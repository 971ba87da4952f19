"""@pydd.kernel: typed Python functions compiled where they are written.

Each test writes a Python module into its own directory, imports it and
compares the compiled kernels with the same functions run as Python
(``py_func``). Diagnostics must name that module's file, the user's line and
column, and show the user's own line with a caret."""

import importlib.util
import os
import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import pydd

COUNTER = iter(range(10**6))


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PYDD_CACHE_DIR", str(tmp_path / "cache"))


def load(tmp_path, text, name=None):
    """Imports `text` as a fresh module (file tmp_path/<name>.py)."""
    name = name or f"decorated_{next(COUNTER)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


GOOD = """\
import pydd
from pydd import *


@pydd.kernel(opt=0)
def row_norms(X: Array(float64, 2)) -> Array(float64):
    out = zeros(shape(X, 0))
    for i in range(shape(X, 0)):
        out[i] = sqrt(dot_row(X, i))
    return out


@pydd.kernel(opt=0)
def dot_row(X: Array(float64, 2), i: int) -> float64:
    acc = 0.0
    for j in range(shape(X, 1)):
        acc += X[i, j] * X[i, j]
    return acc


@pydd.kernel(opt=0)
def count_above(x: Array(float64), t: float64) -> int:
    n = 0
    for v in x:
        if v > t:
            n += 1
    return n
"""


def test_kernels_compile_and_call_each_other(tmp_path):
    m = load(tmp_path, GOOD)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(7, 5))
    ours = m.row_norms(X)
    assert m.row_norms.compiled and m.dot_row.compiled
    np.testing.assert_allclose(ours, m.row_norms.py_func(X), rtol=1e-14)
    np.testing.assert_allclose(ours, np.sqrt((X * X).sum(1)), rtol=1e-14)
    assert m.dot_row(X, 3) == pytest.approx(m.dot_row.py_func(X, 3), rel=1e-14)
    x = rng.normal(size=100)
    assert m.count_above(x, 0.5) == m.count_above.py_func(x, 0.5) == int((x > 0.5).sum())
    # The compiled functions check their arguments like any pydd module.
    with pytest.raises(TypeError, match="X"):
        m.row_norms(np.zeros((2, 2), np.int32))
    assert m.row_norms.__name__ == "row_norms" and "pydd.kernel" in repr(m.row_norms)


def test_kernels_pickle_by_reference(tmp_path):
    m = load(tmp_path, GOOD, name="pickled_kernels")
    assert pickle.loads(pickle.dumps(m.count_above)) is m.count_above


BAD = """\
import pydd
from pydd import *


@pydd.kernel
def fine(x: int) -> int:
    return x + 1


class Holder:
    @staticmethod
    @pydd.kernel
    def broken(x: Array(float64)) -> float64:
        total = 0.0
        g = lambda v: v
        return total
"""


def test_diagnostic_points_into_the_users_file(tmp_path):
    m = load(tmp_path, BAD)
    with pytest.raises(pydd.CompileError) as info:
        m.Holder.broken(np.zeros(3))
    path = tmp_path / f"{m.__name__}.py"
    lines = str(info.value).splitlines()
    # line 15, column 13 of the file as written (indented inside the class)
    assert lines[0] == f"{path}:15:13: error: lambda expressions are not supported in pydd kernels"
    assert lines[1] == "        g = lambda v: v"
    assert lines[2] == " " * 12 + "^"
    assert "pydd-sources" not in str(info.value)


def test_a_broken_kernel_does_not_block_the_others(tmp_path):
    m = load(tmp_path, BAD)
    assert m.fine(1) == 2 and m.fine.compiled
    with pytest.raises(pydd.CompileError, match="lambda"):
        m.Holder.broken(np.zeros(3))


FALLBACK = """\
import pydd
from pydd import *


@pydd.kernel(opt=0, fallback=True)
def clipped_sum(x: Array(float64), hi: float64) -> float64:
    s = 0.0
    for v in x:
        s += min(v, hi)
    return {clip}


@pydd.kernel(opt=0)
def strict(x: Array(float64)) -> float64:
    return x[0] * 2.0
"""


def test_fallback_runs_python_and_quotes_the_diagnostic(tmp_path):
    m = load(tmp_path, FALLBACK.format(clip="str(s)"))
    x = np.array([1.0, 5.0, 2.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert m.strict(x) == 2.0  # compiled, without the kernel that falls back
    assert m.strict.compiled
    assert [w.category for w in caught] == [pydd.FallbackWarning]
    message = str(caught[0].message)
    path = tmp_path / f"{m.__name__}.py"
    assert "clipped_sum runs as Python" in message and f"{path}:10:" in message and "error:" in message
    assert caught[0].filename == str(path) and caught[0].lineno == 5
    assert m.clipped_sum(x, 3.0) == "6.0"  # the Python function, as written
    assert not m.clipped_sum.compiled


def test_fallback_kernel_that_compiles_is_compiled(tmp_path):
    m = load(tmp_path, FALLBACK.format(clip="s"))
    x = np.array([1.0, 5.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert m.clipped_sum(x, 3.0) == 6.0
    assert m.clipped_sum.compiled


def test_bad_options():
    with pytest.raises(ValueError, match="opt"):
        pydd.kernel(opt=7)
    with pytest.raises(TypeError, match="extra_args"):
        pydd.kernel(extra_args="--bounds-check")
    with pytest.raises(TypeError, match="function"):
        pydd.kernel(42)


def test_second_process_imports_from_the_cache(tmp_path):
    text = GOOD.replace("@pydd.kernel(opt=0)", "@pydd.kernel(opt=0, extra_args=['-v'])")
    (tmp_path / "twice.py").write_text(text)
    script = "import numpy as np, twice; print(twice.count_above(np.arange(5.0), 1.5))"
    env = {**os.environ, "PYDDC": pydd.find_pyddc(), "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = [subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300, env=env) for _ in range(2)]
    assert [r.stdout for r in runs] == ["3\n", "3\n"], runs[0].stderr
    assert "pyddc: cached: " in runs[0].stderr
    assert "pyddc: cache hit: " in runs[1].stderr and "cached: " not in runs[1].stderr
