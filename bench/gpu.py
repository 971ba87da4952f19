#!/usr/bin/env python3
"""The GPU measurements of issue 46 (run by scripts/gpu_check.sh).

Builds bench/gpu_kernels.cu with nvcc for sm_90 (or, with --sim, with g++
against the CPU emulation, to check the script itself) and reports, as
ratios measured in one run: the fused a * x + y against the copy kernel's
bandwidth (target: >= 0.80) and the deterministic sum's bandwidth, and that
the sum equals its host model bit for bit.

NEVER RUN ON A GPU YET: no GPU machine has been available. Still to add
once the CUDA emitter exists: the suite's pfor kernels against the CPU
build, and @ against cuBLAS.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sim", action="store_true", help="build with g++ against the CPU emulation")
    p.add_argument("-n", type=int, default=100_000_000, help="elements (default 10^8 float64)")
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    out = Path(tempfile.mkdtemp(prefix="pydd-gpu-"))
    exe = out / "gpu_kernels"
    src = REPO / "bench" / "gpu_kernels.cu"
    inc = f"-I{REPO / 'runtime' / 'include'}"
    if args.sim:
        cmd = ["g++", "-std=c++17", "-O2", "-fopenmp", "-ffp-contract=off", "-x", "c++", inc, str(src), "-o", str(exe)]
    else:
        nvcc = os.environ.get("PYDD_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        cmd = [nvcc, "-arch=sm_90", "--fmad=false", "-std=c++17", "-O3", "-Xcompiler", "-fopenmp", inc,
               "-x", "cu", str(src), "-o", str(exe)]
    subprocess.run(cmd, check=True)
    run = subprocess.run([str(exe), str(args.n), str(args.reps)], capture_output=True, text=True)
    print(run.stdout, end="")
    if run.returncode != 0:
        print(run.stderr, file=sys.stderr)
        return run.returncode
    rows = {}
    for line in run.stdout.splitlines():
        name, *rest = line.split()
        rows[name] = rest
    bw = {k: int(v[1]) / float(v[0]) for k, v in rows.items() if len(v) == 2}
    print(f"copy bandwidth   {bw['copy'] / 1e9:8.1f} GB/s")
    print(f"axpy / copy      {bw['axpy'] / bw['copy']:8.2f}  (target >= 0.80)")
    print(f"sum / copy       {bw['sum'] / bw['copy']:8.2f}")
    ok = rows.get("sum_bitwise_equal") == ["1"]
    print(f"sum equals its host model bit for bit: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
