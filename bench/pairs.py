"""Whole-array code against the same computation in loops (issue 45): the
kernel pairs of bench/pairs/ (not a test: ratios are reported, never asserted).

Each `bench/pairs/<name>.pydd` has `whole` (written as public NumPy code is
written) and `loop` (explicit scalar loops); `pairs/specs.py` makes their
seeded inputs. For each pair this script

  * builds the file at -O3 with pyddc (through its compile cache);
  * checks, on the small inputs, each compiled version against the same
    function run as Python with NumPy (`pydd.load_python`; np.allclose at
    specs.REFERENCE_TOL) and the two compiled versions against each other
    (specs.TOLERANCE, else DEFAULT_TOL); at the bench size, the compiled
    versions against each other and compiled `whole` against NumPy's;
  * times both compiled versions at the bench size in this process: one
    warm-up each, then --runs calls of each, alternating (the order swapped
    every round), median per call; and NumPy running `whole` (fewer calls
    when it is slow, see --numpy-seconds);
  * prints a Markdown table: loop ms, whole-array ms, whole/loop, NumPy ms
    of `whole`, and the geometric mean of whole/loop.

    /usr/bin/python3 bench/pairs.py                       # all pairs, ~3 min on 2 cores
    /usr/bin/python3 bench/pairs.py -k heat -k l1_rows    # name contains either
    /usr/bin/python3 bench/pairs.py --pyddc /other/build/bin/pyddc --json /tmp/other.json
    /usr/bin/python3 bench/pairs.py --compare bench/results/pairs.json   # ratio against an earlier run

Threads: --threads (default 1) sets OMP_NUM_THREADS/OPENBLAS_NUM_THREADS
before anything is loaded, so that the loop versions (serial) and the
whole-array ones run on the same resources; `--threads 0` leaves the
environment's setting (pydd's default: one thread per core).
"""
import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PAIRS_DIR = BENCH / "pairs"


def setup_environment(threads):
    if threads > 0:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(threads)
    sys.path.insert(0, str(ROOT / "python"))
    sys.path.insert(0, str(PAIRS_DIR))


def _copy(args):
    import numpy as np
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def agree(a, b, tol):
    """None if a and b agree (shape, dtype kind, np.allclose at tol; exact
    for integers), else a short description of the difference."""
    import numpy as np
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)):
            return "different result structure"
        for k, (x, y) in enumerate(zip(a, b)):
            why = agree(x, y, tol)
            if why:
                return f"[{k}] {why}"
        return None
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        if np.array_equal(a, b):
            return None
        bad = np.flatnonzero(a.ravel() != b.ravel())
        return f"{bad.size} of {a.size} integers differ (first at {bad[0]}: {a.ravel()[bad[0]]} vs {b.ravel()[bad[0]]})"
    rtol, atol = tol
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
        return None
    with np.errstate(all="ignore"):
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        rel = diff / np.maximum(np.abs(b), 1e-300)
    bad = np.flatnonzero(~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True).ravel())
    i = bad[0]
    return (f"{bad.size} of {a.size} elements differ; max abs {np.nanmax(diff):.3g}, max rel {np.nanmax(rel):.3g}; "
            f"first at flat index {i}: {a.ravel()[i]!r} vs {b.ravel()[i]!r} (rtol {rtol:g}, atol {atol:g})")


def first_error(text):
    lines = [ln for ln in str(text).splitlines() if "error" in ln]
    return (lines[0] if lines else str(text).strip().splitlines()[0]).strip()


def build(name, opt, extra_args=()):
    """The compiled module of bench/pairs/<name>.pydd, or raises pydd.CompileError."""
    import pydd
    return pydd.compile(PAIRS_DIR / f"{name}.pydd", opt=opt, extra_args=extra_args)


def check_small(name, compiled, reference, specs):
    """Problems (a list of strings) of the compiled module on the small inputs."""
    import numpy as np
    problems = []
    args = specs.arguments(name, small=True)
    tol = specs.TOLERANCE.get(name, specs.DEFAULT_TOL)
    results = {}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in ("whole", "loop"):
            expected = getattr(reference, fn)(*_copy(args))
            try:
                got = getattr(compiled, fn)(*_copy(args))
            except Exception as e:  # noqa: BLE001 - a kernel that raises is a finding
                problems.append(f"{fn}: raised {type(e).__name__}: {e}")
                continue
            results[fn] = got
            why = agree(got, expected, specs.REFERENCE_TOL)
            if why:
                problems.append(f"{fn} differs from NumPy: {why}")
    if len(results) == 2:
        why = agree(results["whole"], results["loop"], tol)
        if why:
            problems.append(f"whole differs from loop: {why}")
    return problems


def time_pair(f_loop, f_whole, args, runs):
    """Median seconds per call of each, calls alternating after a warm-up each."""
    import gc
    f_loop(*args)
    f_whole(*args)
    times = {"loop": [], "whole": []}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for r in range(runs):
            order = (("loop", f_loop), ("whole", f_whole)) if r % 2 == 0 else (("whole", f_whole), ("loop", f_loop))
            for tag, fn in order:
                start = time.perf_counter()
                fn(*args)
                times[tag].append(time.perf_counter() - start)
    finally:
        if gc_was:
            gc.enable()
    return times


def time_numpy(fn, args, runs, budget):
    """NumPy's first result and per-call seconds: up to `runs` calls within
    `budget` seconds after the first (the first is the only sample when it
    takes more than half the budget)."""
    start = time.perf_counter()
    result = fn(*_copy(args))
    first = time.perf_counter() - start
    if first > budget / 2:
        return result, [first]
    samples = []
    end = time.perf_counter() + budget
    while len(samples) < runs and (time.perf_counter() < end or len(samples) < 1):
        start = time.perf_counter()
        fn(*args)
        samples.append(time.perf_counter() - start)
    return result, samples


def measure(name, opts, specs, log):
    import numpy as np
    import pydd
    row = {"pair": name, "status": "ok", "problems": []}
    try:
        module = build(name, 3)
    except pydd.CompileError as e:
        row.update(status="compile error", error=first_error(e))
        return row
    reference = pydd.load_python(PAIRS_DIR / f"{name}.pydd", module_name=f"pairs_numpy_{name}")
    row["problems"] = check_small(name, module, reference, specs)
    args = specs.arguments(name, small=False)
    tol = specs.TOLERANCE.get(name, specs.DEFAULT_TOL)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got_whole = module.whole(*_copy(args))
        got_loop = module.loop(*_copy(args))
        why = agree(got_whole, got_loop, tol)
        if why:
            row["problems"].append(f"bench size: whole differs from loop: {why}")
        times = time_pair(module.loop, module.whole, args, opts.runs)
        if opts.numpy:
            expected, row["numpy_s"] = time_numpy(reference.whole, args, opts.runs, opts.numpy_seconds)
            why = agree(got_whole, expected, specs.REFERENCE_TOL)
            if why:
                row["problems"].append(f"bench size: whole differs from NumPy: {why}")
    row["loop_s"] = times["loop"]
    row["whole_s"] = times["whole"]
    row["loop"] = statistics.median(times["loop"])
    row["whole"] = statistics.median(times["whole"])
    row["ratio"] = row["whole"] / row["loop"]
    if opts.numpy:
        row["numpy"] = statistics.median(row["numpy_s"])
    if row["problems"]:
        row["status"] = "MISMATCH"
    return row


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table(rows, previous=None):
    out = []
    head = "| pair | loop ms | whole-array ms | whole/loop | NumPy ms (whole) |"
    rule = "|---|---:|---:|---:|---:|"
    if previous:
        head += " whole/loop before | after/before |"
        rule += "---:|---:|"
    out += [head, rule]
    for r in rows:
        if "ratio" not in r:
            out.append(f"| {r['pair']} | {r['status']}: {r.get('error', '')} | | | |" + (" | |" if previous else ""))
            continue
        mark = " (MISMATCH)" if r["problems"] else ""
        np_ms = f"{r['numpy'] * 1e3:.4g}" if "numpy" in r else "-"
        line = f"| {r['pair']}{mark} | {r['loop'] * 1e3:.4g} | {r['whole'] * 1e3:.4g} | {r['ratio']:.2f} | {np_ms} |"
        if previous:
            before = previous.get(r["pair"], {}).get("ratio")
            line += f" {before:.2f} | {r['ratio'] / before:.2f} |" if before else " - | - |"
        out.append(line)
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    line = f"| **geometric mean** ({len(ratios)} pairs) | | | **{geomean(ratios):.2f}** | |"
    if previous:
        common = [(r["ratio"], previous[r["pair"]]["ratio"]) for r in rows
                  if "ratio" in r and previous.get(r["pair"], {}).get("ratio")]
        line += f" {geomean([b for _, b in common]):.2f} | {geomean([a / b for a, b in common]):.2f} |"
    out.append(line)
    within = sum(1 for x in ratios if x <= 1.3)
    out.append("")
    out.append(f"{within} of {len(ratios)} pairs within 1.3x (issue 45's target: all, and a geometric mean of at most 1.1).")
    return "\n".join(out)


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu} ({os.cpu_count()} cores), {platform.platform()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", action="append", default=[], help="only pairs whose name contains this (repeatable)")
    ap.add_argument("--runs", type=int, default=11, help="timed calls of each compiled version (median)")
    ap.add_argument("--pyddc", help="the pyddc to build with (default: $PYDDC, else this checkout's build)")
    ap.add_argument("--threads", type=int, default=1, help="OMP/OpenBLAS threads (0: the environment's)")
    ap.add_argument("--no-numpy", dest="numpy", action="store_false", help="skip NumPy's timing")
    ap.add_argument("--numpy-seconds", type=float, default=3.0, help="time budget of NumPy's calls per pair")
    ap.add_argument("--json", help="write every sample here (default with no -k: bench/results/pairs.json)")
    ap.add_argument("--md", help="write the table here (default with no -k: bench/results/pairs.md)")
    ap.add_argument("--compare", help="an earlier --json output: adds its ratios and after/before")
    opts = ap.parse_args()
    if opts.pyddc:
        os.environ["PYDDC"] = os.path.abspath(opts.pyddc)
    setup_environment(opts.threads)
    import numpy as np
    import pydd
    import specs
    names = [n for n in specs.PAIRS if not opts.k or any(k in n for k in opts.k)]
    missing = [n for n in specs.PAIRS if not (PAIRS_DIR / f"{n}.pydd").is_file()]
    if missing:
        sys.exit(f"specs without a .pydd file: {missing}")
    exe = pydd.find_pyddc()
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    built = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(os.stat(shutil.which(exe) or exe).st_mtime))
    version += f", built {built}"
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    threads = os.environ.get("OMP_NUM_THREADS", "default")
    header = (f"{len(names)} pairs, -O3, median of {opts.runs} calls each (interleaved), threads: {threads}; "
              f"pyddc: {exe} ({version}); started {started}; {machine()}; numpy {np.__version__}")
    print(header, flush=True)
    rows = []
    t0 = time.perf_counter()
    for name in names:
        row = measure(name, opts, specs, print)
        rows.append(row)
        if "ratio" in row:
            np_ms = f", NumPy {row['numpy'] * 1e3:.4g} ms" if "numpy" in row else ""
            print(f"  {name}: loop {row['loop'] * 1e3:.4g} ms, whole {row['whole'] * 1e3:.4g} ms, "
                  f"ratio {row['ratio']:.2f}{np_ms}", flush=True)
        else:
            print(f"  {name}: {row['status']}: {row.get('error', '')}", flush=True)
        for p in row["problems"]:
            print(f"    MISMATCH: {p}", flush=True)
    previous = None
    if opts.compare:
        previous = {r["pair"]: r for r in json.load(open(opts.compare))["rows"]}
    text = table(rows, previous)
    problems = [f"- {r['pair']}: {p}" for r in rows for p in r["problems"]]
    if problems:
        text += "\n\nResults that differ:\n" + "\n".join(problems)
    print()
    print(text)
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    full = not opts.k
    md = opts.md or (str(BENCH / "results" / "pairs.md") if full else None)
    js = opts.json or (str(BENCH / "results" / "pairs.json") if full else None)
    if md:
        Path(md).write_text(f"{header}\n\nCommand: `{' '.join(['/usr/bin/python3', 'bench/pairs.py', *sys.argv[1:]])}`\n\n"
                            f"{text}\n")
    if js:
        Path(js).write_text(json.dumps({"header": header, "argv": sys.argv[1:], "rows": rows}, indent=1))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
