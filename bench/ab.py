"""Compares two builds of pyddc on the suite kernels' run time (not a test:
ratios are reported, never asserted).

Each kernel is built at -O3 by both compilers, and the two modules are
called alternately in this one process (the order swapped every round), so
that a machine's drift affects both alike: the median of 5 to 15 calls
each, new over old. Use it to show that a change leaves the suite's speed
alone, or what it gains.

    /usr/bin/python3 bench/ab.py --old /path/to/old/build/bin/pyddc [kernel ...]

Threads as the environment sets them (OMP_NUM_THREADS); the suite's own
figures are at one thread.
"""
import argparse
import glob
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))

from suite.kernels import _load_module as load  # noqa: E402

KERNELS = ["bigclam", "changepoint", "ipnsw", "ista", "pr_nibble", "sinkhorn_wmd", "pisum", "quicksort"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="the baseline pyddc")
    ap.add_argument("--new", default=os.path.join(ROOT, "build", "bin", "pyddc"), help="the pyddc to compare")
    ap.add_argument("--seconds", type=float, default=25, help="time budget per kernel after 5 rounds")
    ap.add_argument("kernels", nargs="*", default=KERNELS)
    args = ap.parse_args()
    print(f"old: {args.old}\nnew: {args.new}\n")
    print("| kernel | old (s) | new (s) | new/old |\n|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for k in args.kernels:
            spec = importlib.import_module(f"{k}.spec")
            entry = {}
            for tag, pyddc in (("old", args.old), ("new", args.new)):
                out = os.path.join(tmp, tag, k)
                os.makedirs(out)
                subprocess.run([pyddc, "--no-cache", "-O3", os.path.join(ROOT, "bench", k, "kernel.pydd"), "-o", out],
                               check=True)
                module = load(f"{tag}_{k}.kernel", glob.glob(os.path.join(out, "*.so"))[0])
                entry[tag] = getattr(module, spec.ENTRY)
            data = spec.generate("full")
            times = {"old": [], "new": []}
            budget = time.perf_counter() + args.seconds
            rounds = 0
            while rounds < 5 or (time.perf_counter() < budget and rounds < 15):
                for tag in ("old", "new") if rounds % 2 == 0 else ("new", "old"):
                    call = spec.arguments(data, "pydd-O3")  # fresh arguments: kernels may update them
                    start = time.perf_counter()
                    entry[tag](*call)
                    times[tag].append(time.perf_counter() - start)
                rounds += 1
            old, new = statistics.median(times["old"]), statistics.median(times["new"])
            print(f"| {k} | {old:.4g} | {new:.4g} | {new / old:.3f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
