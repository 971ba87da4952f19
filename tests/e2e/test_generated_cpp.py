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


@pytest.mark.parametrize("opt", [0, 1, 2, 3])
def test_kernel_builds_use_the_precompiled_runtime_header(opt, tmp_path):
    # pyddc's own compile command, rerun with -H, which marks a precompiled
    # header it used with '!': a flag drifting between CMake's PCH build and
    # pyddc would silently double every small kernel's build time.
    source = KERNELS / "fib.pydd"
    verbose = run_pyddc("-v", "--no-cache", f"-O{opt}", source, "-o", tmp_path)
    assert verbose.returncode == 0, verbose.stderr
    command = shlex.split(verbose.stderr.splitlines()[0])
    cpp = next(a for a in command if a.endswith(".cpp"))
    cpp_copy = tmp_path / "k.cpp"
    cpp_copy.write_text(run_pyddc("--emit=cpp", f"-O{opt}", source).stdout)
    keep = [a for a in command if a.startswith(("-std", "-f", "-D", "-O", "-m", "-I"))]
    result = subprocess.run([command[0], *keep, "-H", "-fsyntax-only", str(cpp_copy)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    used = [line for line in result.stderr.splitlines() if line.startswith("!")]
    # g++ takes the first variant whose flags are compatible (-O1 may use
    # the -O2 one); any variant is the point.
    assert used and "/runtime.h.gch/O" in used[0], result.stderr[:2000]
    assert cpp.endswith("fib.cpp")
