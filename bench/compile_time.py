"""Measures pyddc's compile latency (not a test: timings are reported, never
asserted).

For each kernel: the translation time of `pyddc --emit=cpp` (.pydd to C++,
the whole process) and the time from .pydd to an importable module at -O0
and -O3 (pyddc plus the C++ compiler), each the median of several runs.

    /usr/bin/python3 bench/compile_time.py [--runs N] [kernel.pydd ...]
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_pyddc():
    """$PYDDC, else this checkout's build, else pyddc on PATH."""
    local = os.path.join(ROOT, "build", "bin", "pyddc")
    return os.environ.get("PYDDC") or (local if os.path.exists(local) else shutil.which("pyddc"))


def timed(cmd, runs):
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("kernels", nargs="*")
    args = parser.parse_args()
    kernels = args.kernels or sorted(glob.glob(os.path.join(ROOT, "examples", "*.pydd")) +
                                     glob.glob(os.path.join(ROOT, "tests", "e2e", "kernels", "*.pydd")))
    pyddc = find_pyddc()
    print(f"pyddc: {pyddc}, median of {args.runs} runs\n")
    print("| kernel | lines | translate (ms) | .pydd to module -O0 (s) | .pydd to module -O3 (s) |")
    print("|---|---:|---:|---:|---:|")
    translate, build0, build3 = [], [], []
    with tempfile.TemporaryDirectory() as out:
        for path in kernels:
            lines = sum(1 for _ in open(path))
            t = timed([pyddc, "--emit=cpp", path], args.runs) * 1e3
            b0 = timed([pyddc, "--no-cache", "-O0", path, "-o", out], args.runs)
            b3 = timed([pyddc, "--no-cache", "-O3", path, "-o", out], args.runs)
            translate.append(t)
            build0.append(b0)
            build3.append(b3)
            print(f"| {os.path.basename(path)} | {lines} | {t:.1f} | {b0:.2f} | {b3:.2f} |")
    print(f"| **median** | | {statistics.median(translate):.1f} | {statistics.median(build0):.2f} | "
          f"{statistics.median(build3):.2f} |")
    print(f"| **max** | | {max(translate):.1f} | {max(build0):.2f} | {max(build3):.2f} |")


if __name__ == "__main__":
    sys.exit(main())
