"""Measures pyddc's compile latency (not a test: timings are reported, never
asserted).

For each kernel: the translation time of `pyddc --emit=cpp` (.pydd to C++,
the whole process) and the time from .pydd to an importable module at -O0
and -O3 (pyddc plus the C++ compiler), each the median of several runs.

With --baseline OTHER_PYDDC it compares two builds of pyddc instead (say,
before and after a change): each kernel's -O3 build by both, interleaved,
reporting wall time and CPU time (the compiler's user + system time, which a
busy machine inflates less than wall time) and their ratios, new over old.

    /usr/bin/python3 bench/compile_time.py [--runs N] [kernel.pydd ...]
    /usr/bin/python3 bench/compile_time.py --baseline /old/build/bin/pyddc bench/*/kernel.pydd
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


def timed_cpu(cmd):
    """(wall seconds, CPU seconds of the command and its children)."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def compare(baseline, pyddc, kernels, runs):
    print(f"new: {pyddc}\nbaseline: {baseline}\n.pydd to module at -O3, best of {runs} interleaved runs\n")
    print("| kernel | baseline wall (s) | new wall (s) | baseline CPU (s) | new CPU (s) | new/baseline CPU |")
    print("|---|---:|---:|---:|---:|---:|")
    ratios = []
    with tempfile.TemporaryDirectory() as out:
        for path in kernels:
            best = {}
            for _ in range(runs):
                for name, exe in (("old", baseline), ("new", pyddc)):
                    wall, cpu = timed_cpu([exe, "--no-cache", "-O3", path, "-o", out])
                    w0, c0 = best.get(name, (wall, cpu))
                    best[name] = (min(w0, wall), min(c0, cpu))
            ratios.append(best["new"][1] / best["old"][1])
            name = os.path.relpath(path, ROOT)
            print(f"| {name} | {best['old'][0]:.2f} | {best['new'][0]:.2f} | {best['old'][1]:.2f} | "
                  f"{best['new'][1]:.2f} | {ratios[-1]:.2f} |")
    print(f"| **geomean** | | | | | {statistics.geometric_mean(ratios):.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", metavar="PYDDC", help="compare -O3 builds against this pyddc")
    parser.add_argument("kernels", nargs="*")
    args = parser.parse_args()
    kernels = args.kernels or sorted(glob.glob(os.path.join(ROOT, "examples", "*.pydd")) +
                                     glob.glob(os.path.join(ROOT, "tests", "e2e", "kernels", "*.pydd")))
    pyddc = find_pyddc()
    if args.baseline:
        return compare(args.baseline, pyddc, kernels, args.runs)
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
