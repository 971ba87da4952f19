"""The build step under faults: missing compiler, full disk, signals, races.

Each is a plain error naming the cause (never "internal error, please
report"), leaves no scratch directory behind, and concurrent builds of one
module into one directory all succeed and never expose a half-written file.
"""

import importlib.util
import os
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest

from conftest import run_cpp_host, run_pyddc

KERNEL = "def add_one(n: int) -> int:\n    return n + 1\n"
# Big enough that g++ is still running when the signal arrives.
SLOW_KERNEL = "".join(
    f"def k{i}(a: Array(float64), b: Array(float64)) -> Array(float64):\n"
    f"    return (a * {i}.0 + b) / (a - b * {i}.5) + sqrt(a * a + {i}.0)\n\n" for i in range(40))


@pytest.fixture
def kernel(tmp_path):
    src = tmp_path / "tc.pydd"
    src.write_text(KERNEL)
    return src


def test_cxx_name_is_looked_up_on_path(kernel, tmp_path, pyddc):
    proc = run_pyddc(kernel, "--cxx=g++", "-O0", "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert list((tmp_path / "out").glob("tc.*.so"))


def test_no_compiler_on_path(kernel, tmp_path, pyddc):
    proc = subprocess.run([pyddc, kernel, "--cxx=g++", "-o", tmp_path / "out"], capture_output=True, text=True,
                          env={**os.environ, "PATH": str(tmp_path / "empty")})
    assert proc.returncode == 1
    assert "no C++ compiler found: 'g++' is not on PATH; install g++ or pass --cxx" in proc.stderr
    assert "internal error" not in proc.stderr


def test_missing_compiler_path(kernel, tmp_path, pyddc):
    proc = run_pyddc(kernel, "--cxx=/nonexistent/c++", "-o", tmp_path / "out")
    assert proc.returncode == 1
    assert "no C++ compiler found: /nonexistent/c++ does not exist" in proc.stderr


def _unshare_mount_ok():
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _unshare_mount_ok(), reason="needs unshare -rm to mount a small tmpfs")
@pytest.mark.parametrize("where", ["scratch", "output"])
def test_disk_full_is_named(kernel, tmp_path, pyddc, where):
    full = tmp_path / "full"
    full.mkdir()
    out = full / "out" if where == "output" else tmp_path / "out"
    env = f"TMPDIR={full} " if where == "scratch" else ""
    script = f"mount -t tmpfs -o size=12k tmpfs {full} && {env}{pyddc} {kernel} -O0 -o {out}"
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "disk full:" in proc.stderr and str(full) in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGPIPE])
def test_signal_removes_scratch_dir(tmp_path, pyddc, sig):
    src = tmp_path / "slow.pydd"
    src.write_text("from pydd import *\n" + SLOW_KERNEL)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen([pyddc, src, "-O3", "-o", tmp_path / "out"], env={**os.environ, "TMPDIR": str(scratch)},
                            stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while not list(scratch.glob("pyddc-*/*.cpp")) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.01)
    time.sleep(0.2)  # the compiler is running now
    assert proc.poll() is None, "the build finished before the signal"
    proc.send_signal(sig)
    proc.wait(timeout=30)
    assert proc.returncode == -sig
    time.sleep(0.2)  # anything still writing would show up now
    assert list(scratch.iterdir()) == []


def test_concurrent_builds_of_one_module(kernel, tmp_path, pyddc):
    out = tmp_path / "out"
    procs = [subprocess.Popen([pyddc, kernel, "-O0", "-o", out], stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert sorted(f.name for f in out.iterdir() if f.name.startswith(".")) == []  # no staging file left
    (so,) = out.glob("tc.*.so")
    spec = importlib.util.spec_from_file_location("tc", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.add_one(41) == 42


# ---- a module compiled in parts at once -------------------------------------------------------

PARTS_MAIN = r"""#include "slow.h"
#include <cstdio>
int main() {
  double a[3] = {1, 2, 3}, b[3] = {0.5, 0.25, 4};
  auto x = pydd::Array<double, 1>::borrow(a, {3}), y = pydd::Array<double, 1>::borrow(b, {3});
  double s = 0;
  for (auto r : {slow::k0(x, y), slow::k17(x, y), slow::k39(x, y)}) s += r(0) + r(1) + r(2);
  std::printf("%.17g\n", s);
  return 0;
}
"""


def _slow_reference(i, a, b):
    return (a * i + b) / (a - b * (i + 0.5)) + np.sqrt(a * a + i)


@pytest.mark.parametrize("jobs", [1, 3])
def test_module_compiled_in_parts(tmp_path, pyddc, jobs):
    """-j N compiles a large module as N translation units at once (one
    compile command each, then a link); the module works the same."""
    src = tmp_path / "slow.pydd"
    src.write_text("from pydd import *\n" + SLOW_KERNEL.replace("Array(float64)", "Array(float64, 1)"))
    proc = run_pyddc(src, "-v", "--no-cache", f"-j{jobs}", "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    compiles = [line for line in proc.stderr.splitlines() if " -c " in line]
    assert len(compiles) == (jobs if jobs > 1 else 0), proc.stderr
    (so,) = (tmp_path / "out").glob("slow.*.so")
    spec = importlib.util.spec_from_file_location("slow", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 4.0])
    for i in range(40):
        np.testing.assert_allclose(getattr(mod, f"k{i}")(a, b), _slow_reference(i, a, b), rtol=1e-15)


# One function whose fused loops' general (broadcasting) paths are
# functions of their own: -j2 builds them beside it, in a second unit.
ONE_FUNCTION = ("from pydd import *\n\n\ndef f(a: Array(float64, 1), b: Array(float64, 1)) -> float64:\n    s = 0.0\n" +
                "".join(f"    s += ((a * {i}.0 + b) / (a - b * {i}.5) + sqrt(a * a + {i}.0)).sum()\n" for i in range(30)) +
                "    return s\n")


def test_general_paths_compiled_beside_their_function(tmp_path, pyddc):
    src = tmp_path / "one.pydd"
    src.write_text(ONE_FUNCTION)
    cpp = run_pyddc(src, "--emit=cpp")
    assert cpp.returncode == 0, cpp.stderr
    assert cpp.stdout.count("void f__pydd_cold") == 2 * 30  # declared, then defined
    proc = run_pyddc(src, "-v", "--no-cache", "-j2", "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert len([line for line in proc.stderr.splitlines() if " -c " in line]) == 2, proc.stderr
    (so,) = (tmp_path / "out").glob("one.*.so")
    spec = importlib.util.spec_from_file_location("one", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = np.array([1.0, 2.0, 3.0])
    for b in (np.array([0.5, 0.25, 4.0]), np.array([0.5])):  # the fused loops, then their general paths
        expected = sum(_slow_reference(i, a, b).sum() for i in range(30))
        assert mod.f(a, b) == pytest.approx(expected, rel=1e-13)
    with pytest.raises(ValueError, match="broadcast"):
        mod.f(a, np.array([1.0, 2.0]))


def test_cpp_library_compiled_in_parts(tmp_path, pyddc):
    src = tmp_path / "slow.pydd"
    src.write_text("from pydd import *\n" + SLOW_KERNEL.replace("Array(float64)", "Array(float64, 1)"))
    built = run_pyddc("--host=cpp", "-v", "--no-cache", "-j2", src, "-o", tmp_path)
    assert built.returncode == 0, built.stderr
    assert len([line for line in built.stderr.splitlines() if " -c " in line]) == 2, built.stderr
    stdout = run_cpp_host(tmp_path, PARTS_MAIN, tmp_path / "libslow.a")
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 4.0])
    expected = sum(_slow_reference(i, a, b).sum() for i in (0, 17, 39))
    assert float(stdout) == pytest.approx(expected, rel=1e-14)
