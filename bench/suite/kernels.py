"""Finding, building and calling the versions of one benchmark kernel."""

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "python"))

import pydd  # noqa: E402

# Column order of every report. pydd-O0 is the unoptimized build the
# optimizer work is judged against.
VERSIONS = ("python", "numba", "cython", "cpp", "pydd-O0", "pydd-O3")

# Hand C++ and Cython are built like pydd's -O3 kernels (tools/Config.h.in):
# the practical limit is measured with the same compiler and target.
NATIVE_FLAGS = ["-O3", "-march=native", "-fno-math-errno", "-fPIC", "-shared"]


def build_root():
    return Path(os.environ.get("PYDD_BENCH_BUILD", REPO / "build" / "bench"))


class BuildError(RuntimeError):
    pass


def _run(cmd, what):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"{what} failed:\n$ {' '.join(map(str, cmd))}\n"
                         f"{proc.stdout}{proc.stderr}")
    return proc


def _load_module(name, path):
    """Imports path as name; an extension's init function is PyInit_<last part of name>."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # Numba resolves a jitted function's recursive calls through sys.modules.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


class Kernel:
    """One folder of bench/: its spec, its versions and their build times."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.name = self.folder.name
        self.spec = _load_module(f"bench_{self.name}_spec", self.folder / "spec.py")
        self.entry = self.spec.ENTRY
        self.pfor = bool(getattr(self.spec, "PFOR", False))
        self.tolerance = getattr(self.spec, "TOLERANCE", "exact")
        self.out = build_root() / self.name
        # version -> {"translate_s", "build_s", ...}; filled by build()
        self.compile_stats = {}

    # -- data and calls -----------------------------------------------------

    def generate(self, size):
        return self.spec.generate(size)

    def arguments(self, data, version):
        # An ablation build (pydd-O3-no-fuse) takes what pydd-O3 takes.
        return self.spec.arguments(data, version.split("-no-")[0])

    def result(self, returned, args):
        fn = getattr(self.spec, "result", None)
        return returned if fn is None else fn(returned, args)

    def check(self, expected, got):
        self.spec.check(expected, got)

    # -- building -----------------------------------------------------------

    def build(self, version):
        """Builds (if needed) and loads a version; returns its module."""
        self.out.mkdir(parents=True, exist_ok=True)
        if version == "python":
            return _load_module(f"bench_{self.name}_python", self.folder / "python_version.py")
        if version == "numba":
            return _load_module(f"bench_{self.name}_numba", self.folder / "numba_version.py")
        if version == "cython":
            return self._build_cython()
        if version == "cpp":
            return self._build_cpp()
        if version.startswith("pydd-O"):
            # pydd-O3, or pydd-O3-no-fuse: -O3 with one pass disabled (bench/ablation.py)
            level, _, disabled = version[len("pydd-O"):].partition("-no-")
            return self._build_pydd(int(level), disabled)
        raise ValueError(f"unknown version {version!r}")

    def _build_pydd(self, opt, disabled=""):
        src = self.folder / "kernel.pydd"
        version = f"pydd-O{opt}" + (f"-no-{disabled}" if disabled else "")
        extra = [f"--disable-pass={disabled}"] if disabled else []
        out = self.out / version
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        exe = pydd.find_pyddc()
        _, translate = _timed(lambda: _run([exe, src, "--emit=cpp", f"-O{opt}", *extra], "pyddc --emit=cpp"))
        # --no-cache: a build time, not a lookup in pyddc's cache (which an
        # earlier run or bench/ablation.py may have filled).
        module, build = _timed(lambda: pydd.compile(src, out_dir=out, opt=opt, extra_args=[*extra, "--no-cache"]))
        self.compile_stats[version] = {"translate_s": translate, "build_s": build}
        return module

    def _extension(self, stem):
        return self.out / (stem + sysconfig.get_config_var("EXT_SUFFIX"))

    def _build_cython(self):
        pyx = self.out / "cython_version.pyx"
        shutil.copyfile(self.folder / "cython_version.pyx", pyx)
        c_file = self.out / "cython_version.c"
        so = self._extension("cython_version")

        def build():
            _run([sys.executable, "-m", "cython", "-3", pyx, "-o", c_file], "cython")
            import numpy
            _run(["gcc", *NATIVE_FLAGS, f"-I{sysconfig.get_paths()['include']}",
                  f"-I{numpy.get_include()}", "-DNPY_NO_DEPRECATED_API=NPY_1_7_API_VERSION",
                  c_file, "-o", so, "-lm"], "gcc (Cython module)")

        _, seconds = _timed(build)
        self.compile_stats["cython"] = {"build_s": seconds}
        return _load_module(f"bench_{self.name}.cython_version", so)

    def _build_cpp(self):
        so = self._extension("cpp_version")
        # Debian's pybind11-dev puts the headers in /usr/include.
        includes = [f"-I{sysconfig.get_paths()['include']}"]

        def build():
            _run(["g++", "-std=c++17", *NATIVE_FLAGS, "-fopenmp", *includes,
                  self.folder / "cpp_version.cpp", "-o", so, "-lopenblas"], "g++ (hand C++ module)")

        _, seconds = _timed(build)
        self.compile_stats["cpp"] = {"build_s": seconds}
        return _load_module(f"bench_{self.name}.cpp_version", so)


def discover(names=None):
    """The kernel folders of bench/ (those with a spec.py), optionally filtered."""
    folders = sorted(p.parent for p in BENCH.glob("*/spec.py"))
    kernels = [Kernel(f) for f in folders if not names or f.name in names]
    if names:
        unknown = set(names) - {k.name for k in kernels}
        if unknown:
            raise SystemExit(f"unknown kernel(s): {', '.join(sorted(unknown))}; "
                             f"have {', '.join(f.name for f in folders)}")
    return kernels
