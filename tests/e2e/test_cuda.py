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


# ---------------------------------------------------------------------------
# The CUDA emitter (codegen/CudaEmitter.h): kernels/cuda_forms.pydd holds
# each loop form that becomes a kernel. Built at --target=cuda-sim (the
# generated .cu with g++ against the emulation), every function equals the
# CPU build of the same source: exactly, except float reductions, whose
# tree order differs from the CPU's sequential order (relative 1e-12 for
# float64, 1e-5 for float32; integer reductions exact).

import numpy as np  # noqa: E402

from conftest import KERNELS, run_pyddc  # noqa: E402
import pydd  # noqa: E402

FORMS = KERNELS / "cuda_forms.pydd"
# Extents that the block size (256) divides and does not, and empty ones.
SIZES = (0, 1, 255, 256, 257, 1000, 5003)


# $PYDD_CUDA_TARGET=cuda (scripts/gpu_check.sh, on a GPU): the same
# comparisons with the kernels built by nvcc and run on the device.
CUDA_TARGET = os.environ.get("PYDD_CUDA_TARGET", "cuda-sim")


@pytest.fixture(scope="module")
def forms(tmp_path_factory):
    """(CPU build, cuda-sim build, cuda-sim build with --bounds-check)."""
    root = tmp_path_factory.mktemp("cuda_forms")
    src = root / "src" / "cuda_forms.pydd"
    src.parent.mkdir()
    src.write_bytes(FORMS.read_bytes())
    builds = []
    target = f"--target={CUDA_TARGET}"
    for name, args in (("cpu", ()), ("sim", (target,)), ("simbc", (target, "--bounds-check"))):
        builds.append(pydd.compile(src, out_dir=root / name, opt=3, extra_args=args))
    return builds


def same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    # Bit for bit (NaN equal to NaN, -0.0 told from 0.0).
    if a.dtype.kind == "f":
        assert np.array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}")), (a, b)
    else:
        assert np.array_equal(a, b), (a, b)


def call_both(forms, name, *args):
    """Calls `name` on copies of args in the CPU and the sim build; compares
    the results and every argument afterwards (arrays are written)."""
    cpu, sim = forms[0], forms[1]
    a1 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    a2 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    r1 = getattr(cpu, name)(*a1)
    r2 = getattr(sim, name)(*a2)
    same(r1, r2)
    for x, y in zip(a1, a2):
        if isinstance(x, np.ndarray):
            same(x, y)
    return r2


@pytest.mark.parametrize("n", SIZES)
def test_sim_element_kernels_equal_the_cpu_build(forms, n):
    rng = np.random.default_rng(n)
    x, y = rng.normal(size=n), rng.normal(size=n)
    call_both(forms, "axpy", y, 2.5, x)
    call_both(forms, "axpy32", y.astype(np.float32), np.float32(1.5), x.astype(np.float32))
    i8 = rng.integers(-128, 128, size=n).astype(np.int8)
    d8 = rng.integers(1, 128, size=n).astype(np.int8) * rng.choice(np.array([-1, 1], dtype=np.int8), size=n)
    call_both(forms, "wrap8", i8, d8, np.zeros(n, np.int8))
    call_both(forms, "wrap64", rng.integers(-2**62, 2**62, size=n), np.zeros(n, np.int64))
    call_both(forms, "negative_index", x, np.zeros(n)) if n else None
    call_both(forms, "branches", x, np.zeros(n))
    call_both(forms, "last_value", x, np.zeros(n))
    call_both(forms, "casts", x * 3, np.zeros(n, np.int32), np.zeros(n, bool))
    call_both(forms, "fused", 0.5, x, y)
    call_both(forms, "fused32", x.astype(np.float32), y.astype(np.float32))
    for start, step in ((0, 1), (3, 7), (1, 256)):
        call_both(forms, "stepped", x, np.zeros(n), start, step)


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (1, 1), (17, 15), (64, 4), (33, 257)])
def test_sim_collapsed_and_nested_kernels_equal_the_cpu_build(forms, shape):
    rng = np.random.default_rng(sum(shape))
    A, B = rng.normal(size=shape), rng.normal(size=shape)
    call_both(forms, "grid", A, np.zeros(shape))
    call_both(forms, "fused2", A, B)
    call_both(forms, "inner_loop", A, np.zeros(shape[0]))


def test_sim_strided_and_overlapping_views(forms):
    rng = np.random.default_rng(5)
    base = rng.normal(size=3000)
    results = []
    for m in forms[:2]:
        # Stride-3 input, stride-2 output into a larger array (the elements
        # in between are kept), reversed views, a transposed 2-D view.
        out = np.ones(2000)
        m.axpy(out[::2], 2.0, base[::3])
        f = m.fused(3.0, base[::-1][:1000], base[::3])
        A = base[:1200].reshape(40, 30)
        o = np.zeros((30, 40))
        m.grid(A.T, o)
        # Two views of one array: the kernel sees them alias, as the CPU build.
        a = np.arange(20.0)
        m.axpy(a[10:], 1.0, a[:10])
        # Written only, through a stride-2 view: copied out only where the
        # view fills its range, so the elements in between stay 1.
        w = np.ones(2000)
        t = m.last_value(base[:1000], w[::2])
        results.append((out, f, o, a, w, t))
    same(tuple(results[0]), tuple(results[1]))


@pytest.mark.parametrize("n", SIZES + (300_001,))
def test_sim_reductions(forms, n):
    rng = np.random.default_rng(n + 1)
    x = rng.normal(size=n)
    t1, t2 = forms[0].total(x), forms[1].total(x)
    assert t2 == pytest.approx(t1, rel=1e-12, abs=1e-12)
    assert forms[1].total(x) == t2  # deterministic: the same tree every call
    f1, f2 = forms[0].total32(x.astype(np.float32)), forms[1].total32(x.astype(np.float32))
    assert f2 == pytest.approx(f1, rel=1e-5, abs=1e-4)
    call_both(forms, "count", x)
    ints = rng.integers(-2**40, 2**40, size=n)
    call_both(forms, "int_reductions", ints)  # * wraps; | and + exact
    call_both(forms, "fold_int", ints)
    call_both(forms, "fold_any", x)


def test_sim_errors_raise_the_lowest_failing_iteration(forms):
    n = 100_000
    x = np.arange(n, dtype=np.int64)
    y = np.ones(n, dtype=np.int64)
    y[[70_000, 513, 99_999]] = 0
    for m in forms[:2]:
        with pytest.raises(ZeroDivisionError, match="integer division or modulo by zero"):
            m.divide(x, y, np.zeros(n, np.int64))
    with pytest.raises(ZeroDivisionError, match="^division by zero$"):
        forms[1].fdivide(np.ones(n), (y != 0) * 1.0, np.zeros(n))
    # Where iterations fail differently (// by 0: ZeroDivisionError, ** -1:
    # ValueError), the lowest failing one's error is raised, as on the CPU.
    for zero, negative, error in ((513, 300, ValueError), (200, 300, ZeroDivisionError),
                                  (99_000, 70_001, ValueError), (1, 0, ValueError)):
        y = np.ones(n, dtype=np.int64)
        y[zero], y[negative] = 0, -1
        y[[n - 1, n // 2]] = [0, -1]
        for m in forms[:2]:
            with pytest.raises(error):
                m.two_errors(x, y, np.zeros(n, np.int64))
    idx = np.arange(n) % 50
    idx[[40_000, 7]] = [10**6, 50]
    with pytest.raises(IndexError):
        forms[2].gather(np.zeros(50), idx, np.zeros(n))
    # Without a failure the bounds-checked kernel runs.
    call_both((forms[0], forms[2]), "gather", np.arange(50.0), np.arange(n) % 50, np.zeros(n))


def test_remarks_say_what_each_loop_became(tmp_path):
    r = run_pyddc("--emit=ir", "--remarks=cuda", FORMS)
    assert r.returncode == 0, r.stderr
    remarks = r.stderr
    assert "loop over 'i' in 'axpy': kernel: one thread per iteration of the pfor" in remarks
    assert "in 'grid': kernel: one thread per iteration of the pfor (2 loops collapsed)" in remarks
    assert "in 'total': reduction kernel: two passes" in remarks
    assert "in 'prints': stays on the host: the body calls 'print', which does I/O" in remarks
    assert "in 'complex_body': stays on the host: the body uses complex numbers" in remarks


# The e2e kernels that hold loops the emitter turns into kernels: their .cu
# must compile for the device.
CU_KERNELS = ["cuda_forms", "optimizer", "numpy_spelling", "parallel_plan", "parallel", "layout", "any_rank", "slices",
              "constructs", "smallints", "intrepydd_compat", "range_extremes", "gathers", "containers"]


@pytest.mark.parametrize("name", CU_KERNELS)
def test_generated_cu_compiles_for_the_device(tmp_path, name):
    tool = nvcc()
    if tool is None:
        pytest.skip("no nvcc (set PYDD_NVCC or install the CUDA toolkit): the device compile check cannot run")
    r = run_pyddc("--emit=cuda", KERNELS / f"{name}.pydd")
    assert r.returncode == 0, r.stderr
    assert "PYDD_GLOBAL" in r.stdout, "no kernel in the generated .cu"
    cu = tmp_path / f"{name}.cu"
    cu.write_text(r.stdout)
    build = subprocess.run(
        [tool, "-ptx", "-arch=sm_90", "--fmad=false", "-std=c++17", "-Werror", "all-warnings", f"-I{INCLUDE}",
         str(cu), "-o", str(tmp_path / f"{name}.ptx")],
        capture_output=True, text=True)
    assert build.returncode == 0 and not build.stderr.strip(), build.stderr
    # Under g++ the same source builds against the emulation, warning-free.
    cxx = os.environ.get("CXX", "g++")
    sim = subprocess.run([cxx, "-std=c++17", "-O1", "-fopenmp", "-Wall", "-Wextra", "-Werror", "-x", "c++",
                          f"-I{INCLUDE}", "-c", str(cu), "-o", str(tmp_path / f"{name}.o")],
                         capture_output=True, text=True)
    assert sim.returncode == 0, sim.stderr


def test_nvcc_module_imports_and_names_the_missing_device(tmp_path):
    """--target=cuda: nvcc builds the kernels into the extension module; on
    a machine without a GPU it imports, and a call that launches a kernel
    raises RuntimeError naming the missing device and the CUDA error."""
    tool = nvcc()
    if tool is None:
        pytest.skip("no nvcc (set PYDD_NVCC or install the CUDA toolkit): the --target=cuda build cannot run")
    src = tmp_path / "gpu_forms.pydd"
    src.write_bytes(FORMS.read_bytes())
    try:
        m = pydd.compile(src, out_dir=tmp_path / "out", opt=3, extra_args=("--target=cuda", f"--nvcc={tool}"))
    except pydd.CompileError as e:
        # A toolkit without its runtime library: a plain message naming it,
        # not a linker error.
        message = str(e)
        assert "the CUDA runtime library (libcudart_static.a or libcudart.so) is not installed" in message, message
        assert "internal error" not in message and "ld:" not in message, message
        pytest.skip(f"this CUDA toolkit has no runtime library: {message}")
    x = np.arange(10.0)
    m.axpy(x[:0], 2.0, x[:0])  # no iteration: no launch, no device needed
    try:
        m.axpy(x, 2.0, x.copy())
    except RuntimeError as e:
        assert "no CUDA device available" in str(e) and "cuda" in str(e).lower(), str(e)
    else:
        np.testing.assert_array_equal(x, 3.0 * np.arange(10.0))  # a machine with a GPU


def test_copies_follow_the_effects():
    """Read-only arrays are copied in only; an array the kernel writes and
    never reads is copied out only when every iteration stores its element
    y[i] and the range is y's axis (else in and out: the kernel may write a
    part); arrays read and written both ways."""
    r = run_pyddc("--emit=cuda", FORMS)
    assert r.returncode == 0, r.stderr
    launches = {chunk.split("(", 1)[0]: chunk for chunk in r.stdout.split("\nvoid ")[1:]}
    axpy = next(v for k, v in launches.items() if k.startswith("axpy__"))
    assert "pydd_data_x, sizeof(double), 1, pydd_shape_x, pydd_strides_x, pydd::cuda::Transfers::kIn);" in axpy
    assert "pydd_strides_y, pydd::cuda::Transfers::kIn | pydd::cuda::Transfers::kOut);" in axpy
    last = next(v for k, v in launches.items() if k.startswith("last_value__"))
    assert ("pydd_n0 == uint64_t(pydd_shape_out[0]) ? unsigned(pydd::cuda::Transfers::kOut) : "
            "unsigned(pydd::cuda::Transfers::kIn | pydd::cuda::Transfers::kOut))") in last
    # A kernel that may raise keeps the old values of what it did not reach.
    divide = next(v for k, v in launches.items() if k.startswith("divide__"))
    assert "pydd_strides_out, pydd::cuda::Transfers::kIn | pydd::cuda::Transfers::kOut);" in divide
