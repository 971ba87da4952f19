"""The pydd package itself: the names kernels import, load_python's rewriting
of Intrepydd syntax, and pydd.compile's driving of pyddc (with a stand-in
pyddc, so these tests need no real compiler)."""

import ast
import builtins
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import traceback

import numpy as np
import pytest

import pydd
from conftest import KERNELS

KERNEL_FILES = sorted(KERNELS.glob("*.pydd"))
# Builtins a kernel may use in this version of the language.
KERNEL_BUILTINS = {"bool", "int", "float", "complex", "len", "print", "range", "abs", "min", "max", "True", "False",
                   "zip", "enumerate", "round"}


def test_star_exports():
    ns = {}
    exec("from pydd import *", ns)
    ns.pop("__builtins__")
    assert set(ns) == set(pydd.__all__)
    assert {"int32", "int64", "float32", "float64", "double", "Array", "List", "Dict", "Heap", "Tuple",
            "zeros", "ones", "empty", "full", "zeros_like", "copy", "arange", "fill", "shape", "ndim",
            "add", "div", "minus", "elemwise_not", "acos", "where", "allclose", "mean", "argmin",
            "matmult", "innerprod", "syrk", "lu", "ludcmp", "heapinit", "heappush", "heappop",
            "heappeek"} <= set(pydd.__all__)
    # these are NumPy's on arrays and exactly the builtins otherwise (pydd._lib)
    assert set(pydd.__all__) & set(dir(builtins)) == {"sum", "min", "max", "abs", "any", "all", "pow"}
    assert ns["int32"] is np.int32 and ns["int64"] is np.int64
    assert ns["float32"] is np.float32 and ns["float64"] is np.float64 and ns["double"] is np.float64


def test_array_annotation():
    from pydd import Array, float64, int32
    assert repr(Array(float64, 2)) == "Array(float64, 2)"
    assert repr(Array(int32)) == "Array(int32)"  # any rank
    assert Array(float64) == Array(float64()) != Array(float64, 1) == Array(float64(), 1)
    assert Array(float64).accepts(np.zeros((2, 2, 2))) and not Array(float64).accepts(np.zeros(2, np.int32))
    assert Array(float64, 2) != Array(float64, 3)
    assert Array(float64, 2) != Array(int32, 2)
    assert len({Array(int32, 2), Array(int32, 2)}) == 1
    assert Array(float64, 2).accepts(np.zeros((2, 2)))
    assert Array(float64, 2).accepts(np.zeros((2, 4))[:, ::2])
    assert Array(float64, 2).accepts(np.zeros((2, 4)).T)
    unaligned = np.ndarray((3,), np.float64, np.zeros(32, np.uint8).data, offset=0, strides=(12,))
    assert not Array(float64, 1).accepts(unaligned)
    with pytest.raises(TypeError):
        Array(float64, 0)


def test_allocation():
    from pydd import empty, float32, float64, int32, int64, ones, zeros
    assert zeros(3).dtype == np.float64 and zeros(3).shape == (3,)
    a = zeros((2, 3), int32())
    assert a.dtype == np.int32 and a.shape == (2, 3) and not a.any()
    b = ones([4, 1], float32)
    assert b.dtype == np.float32 and b.shape == (4, 1) and (b == 1).all()
    assert empty(5, dtype=int64()).dtype == np.int64
    assert zeros(np.int64(2), dtype=float64).shape == (2,)
    assert zeros(2, int).dtype == np.int64 and zeros(2, bool).dtype == np.bool_
    with pytest.raises(TypeError):
        zeros("3")


def test_shape_ndim():
    from pydd import ndim, shape
    A = np.zeros((3, 4, 5))
    assert (shape(A, 0), shape(A, 2), shape(A, -1), ndim(A)) == (3, 5, 5, 3)


def test_rewrite_keeps_positions():
    src = textwrap.dedent("""\
        def f(x: Array(float64)) -> float64:
            s = "pfor i in x"  # pfor i in range(3)
            pfor i in range(len(x)):
                async:
                    finish:
                        isolated:  # a comment
                            s = x[i]
            async :
                pass
            finish: int = 3
            pfor = 2
            return s + pfor + g(pfor)
        """)
    out = pydd.rewrite_source(src)
    src_lines, out_lines = src.splitlines(), out.splitlines()
    assert len(src_lines) == len(out_lines)
    assert [len(l) for l in src_lines] == [len(l) for l in out_lines]
    assert out_lines[1] == src_lines[1]  # string and comment untouched
    assert out_lines[2] == "    for  i in range(len(x)):"
    assert out_lines[3] == "        if 1 :"
    assert out_lines[4] == "            if 1  :"
    assert out_lines[5] == "                if 1    :  # a comment"
    assert out_lines[7] == "    if 1  :"
    assert out_lines[9:] == src_lines[9:]  # annotation and a variable named pfor
    ast.parse(out)


def test_rewrite_only_at_statement_start():
    src = "y = f(pfor\n      , 1)\nz = [pfor for pfor in range(3)]\nx = '''\npfor i in y:\n'''\n"
    assert pydd.rewrite_source(src) == src


def test_load_python_runs_intrepydd_syntax(tmp_path):
    path = tmp_path / "kern.pydd"
    path.write_text(textwrap.dedent("""\
        from pydd import *

        def total(x: Array(float64)) -> float64:
            s = 0.0
            pfor i in range(len(x)):
                isolated:
                    s += x[i]
            finish:
                async:
                    s *= 2.0
            return s

        def fail(n: int) -> int:
            pfor i in range(n):
                n = n // (i - 1)
            return n
        """))
    m = pydd.load_python(path)
    assert m.__name__ == "kern" and m.__file__ == str(path)
    assert m.total(np.arange(4.0)) == 12.0
    assert pydd.load_python(path, "other").__name__ == "other"
    assert pydd.load_python(path) is not m
    with pytest.raises(ZeroDivisionError) as info:
        m.fail(3)
    frame = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (frame.filename, frame.lineno, frame.name) == (str(path), 15, "fail")
    assert frame.line == "n = n // (i - 1)"  # the .pydd source is shown


def test_load_python_syntax_error_location(tmp_path):
    path = tmp_path / "bad.pydd"
    path.write_text("def f(n: int) -> int:\n    pfor i in range(n):\n        return n +\n")
    with pytest.raises(SyntaxError) as info:
        pydd.load_python(path)
    assert info.value.filename == str(path) and info.value.lineno == 3


@pytest.mark.parametrize("path", KERNEL_FILES, ids=[p.stem for p in KERNEL_FILES])
def test_kernel_runs_as_python(path):
    """Every e2e kernel loads as Python and stays in the supported language."""
    m = pydd.load_python(path)
    tree = ast.parse(pydd.rewrite_source(path.read_text()))
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert functions
    names = {f.name for f in functions}
    # `from numpy import subtract`: NumPy's names that pyddc resolves to the catalog
    names |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "numpy"
              for a in n.names}
    for f in functions:
        assert callable(getattr(m, f.name))
        assert all(a.annotation is not None for a in f.args.args), f"{f.name}: unannotated parameter"
        assert not f.decorator_list and not f.args.vararg and not f.args.kwarg
        for node in ast.walk(f):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id in names | set(pydd.__all__) | set(pydd._lib.KERNEL_ONLY) | KERNEL_BUILTINS, \
                    f"{path.name}:{node.lineno}: {node.func.id}() is not in the kernel language"
            assert not isinstance(node, (ast.Lambda, ast.SetComp, ast.DictComp, ast.With, ast.Try, ast.ClassDef,
                                         ast.Global, ast.Nonlocal, ast.Yield, ast.Starred)), \
                f"{path.name}:{node.lineno}: {type(node).__name__}"


# --- pydd.compile with a stand-in pyddc -------------------------------------

FAKE_PYDDC = r'''#!{python}
# Stands in for pyddc: builds a real extension module whose functions are the
# kernel run as Python, plus OPT = the -O level. Or fails, as told by $FAKE_MODE.
# With --in-cache it builds into $PYDD_CACHE_DIR/<stem>-<hash of the source and
# -O level> and prints that directory, as pyddc does.
import hashlib, os, pathlib, subprocess, sys, sysconfig
args = sys.argv[1:]
src = pathlib.Path(args[0]).resolve()
opt = int(next(a for a in args if a.startswith("-O"))[2:])
if "--in-cache" in args:
    key = hashlib.sha256(src.read_bytes() + bytes([opt])).hexdigest()[:32]
    out = pathlib.Path(os.environ["PYDD_CACHE_DIR"]) / f"{{src.stem}}-{{key}}"
    out.mkdir(parents=True, exist_ok=True)
    print(out)
else:
    out = pathlib.Path(args[args.index("-o") + 1])
mode = os.environ.get("FAKE_MODE", "ok")
if mode == "fail":
    sys.stderr.write(f"{{src}}:1:1: error: boom\n x\n ^\n")
    sys.exit(1)
if mode == "silent":
    sys.exit(0)
stem = src.stem
c = out / (stem + ".c")
c.write_text(f"""
#include <Python.h>
static struct PyModuleDef def = {{{{PyModuleDef_HEAD_INIT, "{{stem}}", 0, -1, 0}}}};
PyMODINIT_FUNC PyInit_{{stem}}(void) {{{{
    PyObject *m = PyModule_Create(&def), *pydd = PyImport_ImportModule("pydd"), *py;
    if (!m || !pydd) return NULL;
    py = PyObject_CallMethod(pydd, "load_python", "s", "{{src}}");
    if (!py || PyDict_Update(PyModule_GetDict(m), PyModule_GetDict(py)) < 0) return NULL;
    PyModule_AddIntConstant(m, "OPT", {{opt}});
    return m;
}}}}
""")
so = out / (stem + sysconfig.get_config_var("EXT_SUFFIX"))
tmp = out / (stem + ".tmp.so")
subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O0", "-I" + sysconfig.get_paths()["include"],
                str(c), "-o", str(tmp)], check=True)
os.replace(tmp, so)
'''


@pytest.fixture
def fake_pyddc(tmp_path, monkeypatch):
    if not (shutil.which(os.environ.get("CC", "cc")) and os.path.exists(
            os.path.join(sysconfig.get_paths()["include"], "Python.h"))):
        pytest.skip("needs a C compiler and Python.h")
    exe = tmp_path / "fake-pyddc"
    exe.write_text(FAKE_PYDDC.format(python=sys.executable))
    exe.chmod(0o755)
    monkeypatch.setenv("PYDDC", str(exe))
    monkeypatch.setenv("PYDD_CACHE_DIR", str(tmp_path / "cache"))
    return exe


def write_kernel(path, value):
    path.write_text(f"from pydd import *\n\ndef value(n: int) -> int:\n    return n + {value}\n")
    return path


def test_find_pyddc_prefers_env(fake_pyddc):
    assert pydd.find_pyddc() == str(fake_pyddc)


def test_compile_imports_by_location(fake_pyddc, tmp_path):
    src = write_kernel(tmp_path / "kern.pydd", 10)
    m0 = pydd.compile(src, out_dir=tmp_path / "o0", opt=0)
    m3 = pydd.compile(src, out_dir=tmp_path / "o3", opt=3)
    assert (m0.OPT, m3.OPT) == (0, 3)  # same stem, two directories: two modules
    assert m0.value(1) == m3.value(1) == 11
    assert (tmp_path / "o0" / ("kern" + sysconfig.get_config_var("EXT_SUFFIX"))).is_file()
    # Rebuilding into a directory whose module is loaded gives the new module.
    write_kernel(src, 20)
    m2 = pydd.compile(src, out_dir=tmp_path / "o0", opt=2)
    assert (m2.OPT, m2.value(1)) == (2, 21)
    assert m0.value(1) == 11


def test_compile_default_cache_dir(fake_pyddc, tmp_path):
    src = write_kernel(tmp_path / "cached.pydd", 1)
    a = pydd.compile(src, opt=1)
    assert pydd.compile(src, opt=1) is a  # same inputs: built once per process
    b = pydd.compile(src, opt=2)
    assert b is not a and b.OPT == 2
    assert str(tmp_path / "cache") in a.__file__
    write_kernel(src, 5)
    assert pydd.compile(src, opt=1).value(0) == 5  # a changed source is rebuilt


def test_compile_error_carries_stderr(fake_pyddc, tmp_path, monkeypatch):
    src = write_kernel(tmp_path / "k.pydd", 0)
    monkeypatch.setenv("FAKE_MODE", "fail")
    with pytest.raises(pydd.CompileError, match=r"k\.pydd:1:1: error: boom"):
        pydd.compile(src, out_dir=tmp_path / "out")
    monkeypatch.setenv("FAKE_MODE", "silent")
    with pytest.raises(pydd.CompileError, match="did not write"):
        pydd.compile(src, out_dir=tmp_path / "out")
    monkeypatch.setenv("PYDDC", str(tmp_path / "no-such-pyddc"))
    with pytest.raises(pydd.CompileError):
        pydd.compile(src, out_dir=tmp_path / "out")
    assert issubclass(pydd.CompileError, Exception)
