"""The C++ that pyddc generates compiles without a single warning under
-Wall -Wextra, for every kernel and both hosts: a kernel pyddc accepts must
never show the user a C++ diagnostic."""

import shlex
import shutil
import subprocess

import pytest

from conftest import KERNELS, run_pyddc

EXAMPLES = KERNELS.parents[2] / "examples"
SOURCES = sorted(KERNELS.glob("*.pydd")) + sorted(EXAMPLES.glob("*.pydd"))


@pytest.mark.parametrize("host", ["python", "cpp"])
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_generated_cpp_has_no_warnings(source, host, tmp_path):
    emitted = run_pyddc("--emit=cpp", f"--host={host}", source)
    assert emitted.returncode == 0, emitted.stderr
    cpp = tmp_path / f"{source.stem}.cpp"
    cpp.write_text(emitted.stdout)
    flags = shlex.split(run_pyddc("--cxxflags").stdout)
    cxx = shutil.which("c++")
    # -O2 because some warnings (maybe-uninitialized) need the optimizer.
    result = subprocess.run([cxx, *flags, "-O2", "-Wall", "-Wextra", "-Werror", "-c", str(cpp), "-o",
                             str(tmp_path / "k.o")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
