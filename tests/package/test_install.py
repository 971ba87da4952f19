"""`cmake --install` and the CMake package: the build is installed into a
fresh prefix, and a new CMake project outside the source tree, which knows
only that prefix, builds a C++ program against a kernel with
find_package(pydd) + pydd_add_kernel_library, and rebuilds it when the
.pydd file changes.

Run by ctest (which passes the build directory as PYDD_BUILD_DIR)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("PYDD_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))

PROJECT = """\
cmake_minimum_required(VERSION 3.20)
project(pydd_host_demo CXX)
find_package(pydd 0.1 REQUIRED)
pydd_add_kernel_library(stats stats.pydd OPTIONS -O2 --bounds-check)
add_executable(demo main.cpp)
target_link_libraries(demo PRIVATE stats)
"""

KERNEL = """\
from pydd import *

def offset(n: int) -> int:
    return n + {k}

def mean_of(x: Array(float64)) -> float64:
    return x.mean()

def total(x: Array(float64)) -> float64:
    # An OpenMP loop: the package must compile and link hosts with OpenMP.
    s = 0.0
    pfor i in range(len(x)):
        s += x[i]
    return s
"""

MAIN = """\
#include <cstdio>
#include <vector>
#include "stats.h"

int main() {
  std::vector<double> v = {1.0, 2.0, 6.0};
  auto x = pydd::Array<double, 1>::borrow(v.data(), {int64_t(v.size())});
  pydd::set_num_threads(2);
  std::printf("offset(5) = %lld, mean = %g, total = %g on %d threads\\n", (long long)stats::offset(5),
              stats::mean_of(x), stats::total(x), pydd::get_num_threads());
  return 0;
}
"""


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    if not (BUILD / "bin" / "pyddc").is_file():
        pytest.fail(f"no pyddc build in {BUILD} (set PYDD_BUILD_DIR)")
    prefix = tmp_path_factory.mktemp("install") / "pydd"
    run(["cmake", "--install", BUILD, "--prefix", prefix])
    return prefix


def test_installed_pyddc_uses_the_prefix(prefix):
    flags = run([prefix / "bin" / "pyddc", "--cxxflags"]).stdout
    assert f"-I{prefix}/include" in flags
    assert (prefix / "include" / "pydd" / "runtime.h").is_file()
    assert (prefix / "lib" / "cmake" / "pydd" / "pyddConfig.cmake").is_file()


def test_installed_pyddc_builds_python_modules(prefix, tmp_path):
    (tmp_path / "stats.pydd").write_text(KERNEL.format(k=1))
    built = run([prefix / "bin" / "pyddc", "-v", "--no-cache", tmp_path / "stats.pydd", "-o", tmp_path])
    assert f"-Wl,-rpath,{prefix}/lib" in built.stderr and f"-I{prefix}/lib/pydd/pch" in built.stderr
    assert str(BUILD) not in built.stderr
    script = "import numpy as np, stats; print(stats.offset(2), stats.mean_of(np.array([1.0, 3.0])))"
    assert run(["/usr/bin/python3", "-c", script], cwd=tmp_path).stdout == "3 2.0\n"


def test_out_of_tree_project(prefix, tmp_path):
    src = tmp_path / "project"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(PROJECT)
    (src / "stats.pydd").write_text(KERNEL.format(k=42))
    (src / "main.cpp").write_text(MAIN)
    build = tmp_path / "build"
    # Nothing of the source tree or its build on PATH; a cache of our own so
    # that the installed pyddc really builds.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYDD_CACHE_DIR": str(tmp_path / "cache")}
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    run(["cmake", "-S", src, "-B", build, *generator, f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
    built = run(["cmake", "--build", build, "-v"], env=env)
    assert f"{prefix}/bin/pyddc --host=cpp -O2 --bounds-check" in built.stdout
    assert str(BUILD) not in built.stdout  # the installed package only
    assert run([build / "demo"]).stdout == "offset(5) = 47, mean = 3, total = 9 on 2 threads\n"
    # Changing the kernel rebuilds the library and relinks the program.
    (src / "stats.pydd").write_text(KERNEL.format(k=100))
    run(["cmake", "--build", build], env=env)
    assert run([build / "demo"]).stdout == "offset(5) = 105, mean = 3, total = 9 on 2 threads\n"
