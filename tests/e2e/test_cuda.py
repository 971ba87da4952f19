"""The CUDA portability layer (runtime/include/pydd/cuda/portable.h).

tests/cuda/portable_test.cu holds kernels spelled as the CUDA emitter spells
them. Here it is built with g++ against the CPU emulation and run (block
sizes that do not divide the extent, empty arrays, strided views, float32
and int8, shared memory and barriers, atomics, errors recorded per thread
with the lowest failing iteration, sparse rows of length 0, the two-pass sum
bit for bit with its host model, a divergent barrier reported), and built
with `nvcc -ptx -arch=sm_90 --fmad=false` with warnings as errors when nvcc
is installed. No GPU is needed; a GPU run is scripts/gpu_check.sh.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "runtime" / "include"
SOURCE = REPO / "tests" / "cuda" / "portable_test.cu"


def nvcc():
    """nvcc from $PYDD_NVCC, PATH or /usr/local/cuda, or None."""
    for candidate in (os.environ.get("PYDD_NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_emulation_runs_the_kernels(tmp_path, opt):
    exe = tmp_path / "portable_test"
    cxx = os.environ.get("CXX", "g++")
    build = subprocess.run(
        [cxx, "-std=c++17", opt, "-fopenmp", "-ffp-contract=off", "-fwrapv", "-Wall", "-Wextra", "-Werror",
         "-x", "c++", f"-I{INCLUDE}", str(SOURCE), "-o", str(exe)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    for threads in ("1", "2"):
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "OMP_NUM_THREADS": threads})
        assert run.returncode == 0 and run.stdout.strip() == "PASS", run.stdout + run.stderr


def test_nvcc_compiles_for_the_device(tmp_path):
    tool = nvcc()
    if tool is None:
        pytest.skip("no nvcc (set PYDD_NVCC or install the CUDA toolkit): the device compile check cannot run")
    ptx = tmp_path / "portable_test.ptx"
    build = subprocess.run(
        [tool, "-ptx", "-arch=sm_90", "--fmad=false", "-std=c++17", "-Werror", "all-warnings", f"-I{INCLUDE}",
         str(SOURCE), "-o", str(ptx)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    text = ptx.read_text()
    for kernel in ("axpy", "reverse_blocks", "count_positive", "divide", "csr_rows", "reduce_sum_kernel"):
        assert kernel in text, kernel
    # --fmad=false: no fused multiply-add in the element-wise kernels.
    assert "fma.rn" not in text


def test_nvcc_build_runs_or_names_the_missing_device(tmp_path):
    """A real nvcc build of the same kernels: on a GPU it passes; without
    one (or without a driver) every call fails with DeviceError naming the
    CUDA error, never a crash."""
    tool = nvcc()
    if tool is None:
        pytest.skip("no nvcc (set PYDD_NVCC or install the CUDA toolkit): the device build cannot run")
    exe = tmp_path / "portable_test_gpu"
    build = subprocess.run(
        [tool, "-arch=sm_90", "--fmad=false", "-std=c++17", "-O2", "-Xcompiler", "-fopenmp", "-Werror",
         "all-warnings", f"-I{INCLUDE}", "-x", "cu", str(SOURCE), "-o", str(exe)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    if run.returncode == 0:
        assert run.stdout.strip() == "PASS"
    else:
        assert run.returncode == 2, run.stdout + run.stderr  # not a signal
        assert "FAIL exception: CUDA device error in cudaMalloc: cuda" in run.stdout, run.stdout
