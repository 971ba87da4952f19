"""A missing part of the host toolchain is a plain error naming the tool,
not pyddc's "internal error, please report" (issue 46)."""

import os
import shutil
import subprocess

import pytest

KERNEL = "def scale(x: Array(float64), a: float64):\n    pfor i in range(len(x)):\n        x[i] = a * x[i]\n"


def test_missing_assembler_is_named(tmp_path, pyddc):
    cxx = shutil.which(os.environ.get("PYDD_TEST_CXX", "g++"))
    if cxx is None or "g++" not in os.path.basename(os.path.realpath(cxx)):
        pytest.skip("needs g++, whose driver runs 'as' from PATH")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "g++").symlink_to(os.path.realpath(cxx))
    src = tmp_path / "k.pydd"
    src.write_text("from pydd import *\n\n" + KERNEL)
    env = {**os.environ, "PATH": str(bin_dir)}
    run = subprocess.run([pyddc, "--no-cache", f"--cxx={bin_dir / 'g++'}", str(src), "-o", str(tmp_path / "out")],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 1, run.stderr
    assert "internal error" not in run.stderr
    assert "cannot run the assembler 'as', which is not installed or not on PATH" in run.stderr, run.stderr


def test_cuda_toolkit_without_its_runtime_is_named(tmp_path, pyddc):
    """--target=cuda with an nvcc whose toolkit has no libcudart: a plain
    message naming the library and the folders looked in, before any
    compile, not a linker error."""
    toolkit = tmp_path / "cuda"
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "lib64").mkdir()
    nvcc = toolkit / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\nexit 0\n")
    nvcc.chmod(0o755)
    src = tmp_path / "k.pydd"
    src.write_text("from pydd import *\n\n" + KERNEL)
    run = subprocess.run([pyddc, "--no-cache", "-O3", "--target=cuda", f"--nvcc={nvcc}", str(src), "-o",
                          str(tmp_path / "out")], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert "internal error" not in run.stderr and "ld:" not in run.stderr, run.stderr
    assert "the CUDA runtime library (libcudart_static.a or libcudart.so) is not installed" in run.stderr, run.stderr
    assert str(toolkit / "lib64") in run.stderr, run.stderr
