"""Runs the benchmark suite: every version of every kernel in bench/*/spec.py.

    /usr/bin/python3 bench/run.py [--size small|full] [--runs N] [--budget S] [--threads 1,2]
                                  [-k KERNEL ...] [--versions V,...] [--out DIR]

Builds what it needs (scripts/setup.sh first: packages and pyddc; then the
kernels with pyddc at -O0 and -O3, the Cython and hand C++ modules),
validates every version against the Python original, times each (warm-up,
then the median of --runs calls) and writes <out>/suite-<size>.md, .json
and .png. Each thread count runs in its own process (OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and NUMBA_NUM_THREADS set before anything loads); after
the first count only pydd -O3 of the kernels with pfor runs again.
--validate-only checks every version once and times nothing.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from suite.kernels import VERSIONS, discover  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=("small", "full"), default="full")
    p.add_argument("--runs", type=int, default=5, help="timed calls per version (median)")
    p.add_argument("--budget", type=float, default=100.0,
                   help="seconds of timed calls per version: slower versions get fewer than --runs "
                        "(the table says how many); one slower than this is timed once, without warm-up")
    p.add_argument("--threads", default="1", help="comma-separated thread counts, e.g. 1,2")
    p.add_argument("-k", "--kernel", action="append", help="only this kernel (repeatable)")
    p.add_argument("--versions", default=",".join(VERSIONS), help="comma-separated subset of " + ",".join(VERSIONS))
    p.add_argument("--out", type=Path, default=BENCH / "results")
    p.add_argument("--validate-only", action="store_true")
    p.add_argument("--no-setup", action="store_true", help="do not run scripts/setup.sh first")
    p.add_argument("--worker-json", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",")]
    args.versions = [v for v in args.versions.split(",") if v]
    unknown = set(args.versions) - set(VERSIONS)
    if unknown:
        p.error(f"unknown version(s) {', '.join(sorted(unknown))}")
    return args


def worker(args):
    """Measures in this process and writes {kernel: {version: record}}."""
    from suite.measure import measure_kernel
    out = {"kernels": {}, "tolerances": {}, "pfor": {}}
    for kernel in discover(args.kernel):
        print(f"{kernel.name} ({args.size}, {args.threads[0]} thread(s))", flush=True)
        out["kernels"][kernel.name] = measure_kernel(
            kernel, args.size, args.versions, args.runs, validate_only=args.validate_only,
            log=lambda s: print(s, flush=True), budget=args.budget)
        out["tolerances"][kernel.name] = kernel.tolerance
        out["pfor"][kernel.name] = kernel.pfor
    args.worker_json.write_text(json.dumps(out))


def spawn(args, threads, kernels, versions, json_path):
    cmd = [sys.executable, __file__, "--size", args.size, "--runs", str(args.runs), "--budget", str(args.budget),
           "--threads", str(threads), "--versions", ",".join(versions), "--worker-json", str(json_path)]
    cmd += [a for k in kernels for a in ("-k", k)]
    if args.validate_only:
        cmd.append("--validate-only")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               NUMBA_NUM_THREADS=str(threads))
    subprocess.run(cmd, env=env, check=True)
    return json.loads(json_path.read_text())


def setup():
    """scripts/setup.sh: the Debian packages (Numba, Cython, matplotlib
    included) and an up-to-date pyddc build; quick when all is in place."""
    subprocess.run(["bash", "-c", 'source "$1"', "setup", str(BENCH.parent / "scripts" / "setup.sh")], check=True)


def main(argv):
    args = parse_args(argv)
    if args.worker_json:
        return worker(args)
    if not args.no_setup:
        setup()
    from suite import report
    names = [k.name for k in discover(args.kernel)]
    with tempfile.TemporaryDirectory() as tmp:
        base = spawn(args, args.threads[0], names, args.versions, Path(tmp) / "base.json")
        for t in args.threads[1:]:  # pfor kernels: the optimized build and hand C++ (OpenMP)
            pfor = [n for n in names if base["pfor"][n]]
            parallel = [v for v in args.versions if v in report.THREADED]
            if pfor and parallel:
                more = spawn(args, t, pfor, parallel, Path(tmp) / f"t{t}.json")
                for n, recs in more["kernels"].items():
                    base["kernels"][n].update({report.column(v, t, args.threads[0]): r for v, r in recs.items()})
    failed = [f"{n}/{v}" for n, recs in base["kernels"].items() for v, r in recs.items() if "error" in r]
    if args.validate_only:
        print("all versions agree with Python" if not failed else "FAILED: " + ", ".join(failed))
        return 1 if failed else 0
    results = {"size": args.size, "runs": args.runs, "budget": args.budget, "threads": args.threads,
               "command": "/usr/bin/python3 bench/run.py " + shlex.join(argv),
               "machine": report.machine(), **base}
    paths = report.write(results, args.out, f"suite-{args.size}")
    print(report.markdown(results))
    print("wrote " + ", ".join(str(p) for p in paths))
    if failed:
        print("FAILED: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
