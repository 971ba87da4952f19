"""Shared fixtures for the end-to-end tests.

Every test compiles a kernel from kernels/ with pyddc and compares it with the
same file run as Python through pydd.load_python (the reference).

Fixtures:
  opt          -- the pyddc -O level, parametrized over OPT_LEVELS (ids O0, O3)
  build        -- build(kernel_name, opt) -> (compiled_module, reference_module);
                  each kernel is compiled once per -O level per session, from
                  <tmp>/src/<name>.pydd into <tmp>/<name>_O<n>/ (one path and
                  module name, so builds that generate the same C++ share
                  one compile-cache entry)
  reference    -- reference(kernel_name) -> the module run as Python
  pyddc        -- the path of the pyddc executable (fails the test if missing)

Helpers (import from conftest): KERNELS, ERROR_KERNELS, OPT_LEVELS,
run_pyddc(*args), same_float(a, b), wrap_int64(n), wrap_int32(n).
"""

import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

E2E = Path(__file__).resolve().parent
REPO = E2E.parents[1]
sys.path.insert(0, str(REPO / "python"))

import pydd  # noqa: E402

KERNELS = E2E / "kernels"
ERROR_KERNELS = KERNELS / "errors"


class OptLevel(int):
    """A pyddc -O level, optionally with one pass disabled ("3-fuse": -O3
    --disable-pass=fuse). It is the int of its level wherever one is used."""

    def __new__(cls, spec):
        level, _, disabled = str(spec).partition("-")
        obj = int.__new__(cls, int(level))
        obj.disabled = disabled
        return obj

    @property
    def args(self):
        return (f"--disable-pass={self.disabled}",) if self.disabled else ()

    @property
    def id(self):
        return f"O{int(self)}" + (f"-no-{self.disabled}" if self.disabled else "")


# $PYDD_E2E_OPT: the configurations every kernel is compiled in (default
# "0,3"; the e2e-passes ctest entry runs "3-fuse,3-licm,3-fold": every
# optimized build must agree with the reference with each pass disabled).
OPT_LEVELS = tuple(OptLevel(s) for s in os.environ.get("PYDD_E2E_OPT", "0,3").split(","))


def run_pyddc(*args, timeout=300):
    """Runs pyddc with the given arguments; returns the CompletedProcess."""
    try:
        exe = pydd.find_pyddc()
    except pydd.CompileError as e:
        pytest.fail(str(e), pytrace=False)
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def run_cpp_host(directory, main_source, archive):
    """Builds a C++ host program from `main_source` against `archive`, a
    kernel library `pyddc --host=cpp` wrote into `directory` with its
    header, runs it and returns its standard output."""
    import shlex
    import shutil
    (directory / "main.cpp").write_text(main_source)
    flags = shlex.split(run_pyddc("--cxxflags").stdout) + ["-I", str(directory)]
    ldflags = shlex.split(run_pyddc("--ldflags").stdout)
    exe = directory / "main"
    cc = subprocess.run([shutil.which("c++"), *flags, str(directory / "main.cpp"), str(archive), *ldflags,
                         "-o", str(exe)], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


def same_float(a, b):
    """Exact equality that also tells 0.0 from -0.0 (NaN equals NaN)."""
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def wrap_int64(n):
    """A Python int reduced to int64 the way NumPy wraps (two's complement)."""
    n %= 1 << 64
    return n - (1 << 64) if n >= 1 << 63 else n


def wrap_int32(n):
    n %= 1 << 32
    return n - (1 << 32) if n >= 1 << 31 else n


class _Builds:
    """Session cache of compiled and reference modules."""

    def __init__(self, root):
        self.root = root
        self.compiled_modules = {}
        self.reference_modules = {}

    def compiled(self, name, opt):
        opt = opt if isinstance(opt, OptLevel) else OptLevel(opt)
        key = (name, opt.id)
        if key not in self.compiled_modules:
            # One module name for every configuration, each in its own
            # directory: the compile cache keys a build by its generated C++,
            # so a configuration whose passes change nothing (most kernels
            # with most single passes disabled) reuses the build of one that
            # generated the same code instead of running g++ again.
            # The source sits in one directory for every configuration too:
            # the generated C++ names its path in its first line.
            out = self.root / f"{name}_{opt.id}".replace("-", "_")
            out.mkdir(parents=True, exist_ok=True)
            src = self.root / "src" / f"{name}.pydd"
            if not src.exists():
                src.parent.mkdir(exist_ok=True)
                src.write_bytes((KERNELS / f"{name}.pydd").read_bytes())
            try:
                self.compiled_modules[key] = pydd.compile(src, out_dir=out, opt=int(opt), extra_args=opt.args)
            except Exception as e:  # remembered, so a broken kernel is built only once
                self.compiled_modules[key] = e
        result = self.compiled_modules[key]
        if isinstance(result, Exception):
            pytest.fail(f"compiling {name}.pydd at {opt.id} failed:\n{type(result).__name__}: {result}",
                        pytrace=False)
        return result

    def reference(self, name):
        if name not in self.reference_modules:
            self.reference_modules[name] = pydd.load_python(KERNELS / f"{name}.pydd", f"{name}_ref")
        return self.reference_modules[name]


@pytest.fixture(scope="session")
def _builds(tmp_path_factory):
    return _Builds(tmp_path_factory.mktemp("pyddc"))


@pytest.fixture(params=OPT_LEVELS, ids=lambda o: o.id)
def opt(request):
    return request.param


@pytest.fixture
def build(_builds):
    def build(kernel_name, opt):
        return _builds.compiled(kernel_name, opt), _builds.reference(kernel_name)
    return build


@pytest.fixture
def reference(_builds):
    return _builds.reference


@pytest.fixture(scope="session")
def pyddc():
    try:
        return pydd.find_pyddc()
    except pydd.CompileError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture
def quiet_overflow():
    """NumPy scalar overflow in the reference run wraps, as intended; silence it."""
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# $PYDD_E2E_QUICK=1 (the quick tier, `scripts/test.sh --quick`): of each
# test file (one feature), only its first test function that compiles at an
# -O level (else its first test), once per level: the first
# parametrization of each. The rest is deselected, not skipped, so the
# summary counts what ran.
def _opt_id(item):
    """The -O level a test item runs at (an `opt` fixture, or a fixture such
    as test_sparse.py's `kern` parametrized by "O0"/"O3"), else None."""
    for value in getattr(getattr(item, "callspec", None), "params", {}).values():
        if isinstance(value, OptLevel):
            return value.id
        if isinstance(value, str) and len(value) == 2 and value[0] == "O" and value[1].isdigit():
            return value
    return None


def _shard(config, items):
    """$PYDD_E2E_SHARD=k/n keeps the test files whose index in sorted
    order is k-1 modulo n: ctest runs the shards side by side, one per core,
    each building its own files' kernels."""
    spec = os.environ.get("PYDD_E2E_SHARD")
    if not spec:
        return
    k, n = (int(v) for v in spec.split("/"))
    files = sorted({str(item.path) for item in items})
    mine = {f for i, f in enumerate(files) if i % n == k - 1}
    config.hook.pytest_deselected(items=[item for item in items if str(item.path) not in mine])
    items[:] = [item for item in items if str(item.path) in mine]


def pytest_collection_modifyitems(config, items):
    _shard(config, items)
    if os.environ.get("PYDD_E2E_QUICK") != "1":
        return
    chosen = {}
    for item in items:
        path = str(item.path)
        if path not in chosen or (_opt_id(item) and not chosen[path][1]):
            chosen[path] = (item.originalname, bool(_opt_id(item)))
    seen, keep, drop = set(), [], []
    for item in items:
        key = (str(item.path), _opt_id(item))
        if item.originalname == chosen[key[0]][0] and key not in seen:
            seen.add(key)
            keep.append(item)
        else:
            drop.append(item)
    config.hook.pytest_deselected(items=drop)
    items[:] = keep
