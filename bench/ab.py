"""Compares two builds of pyddc on the suite kernels' run time or instruction
counts (not a test: ratios are reported, never asserted).

Each kernel is built at -O3 by both compilers, and the two modules are
called alternately in this one process (the order swapped every round), so
that a machine's drift affects both alike: the median of 5 to 15 calls
each, new over old. Use it to show that a change leaves the suite's speed
alone, or what it gains.

    /usr/bin/python3 bench/ab.py --old /path/to/old/build/bin/pyddc [kernel ...]
    /usr/bin/python3 bench/ab.py --old OLD --pairs [pair ...]      # bench/pairs/ (whole and loop)

With --callgrind, each kernel call runs instead under `valgrind
--tool=callgrind` in a fresh Python process, counting instructions only
from entry to return of the extension's function for that kernel
(`--collect-atstart=no --toggle-collect=` its thunk), so Python's start-up,
the imports and the making of arguments are not counted. The counts repeat
exactly for the same binary and input (`--repeat 2` checks it); judge
small changes by them, and confirm by time.

    /usr/bin/python3 bench/ab.py --old OLD --callgrind --size small [kernel ...]
    /usr/bin/python3 bench/ab.py --old OLD --callgrind --pairs --repeat 2 heat1d

Under callgrind the kernels run on one thread (OMP_NUM_THREADS=1,
OPENBLAS_NUM_THREADS=1; callgrind counts the calling thread) with
PYTHONHASHSEED=0, and are built without AVX-512: valgrind does not decode
AVX-512 instructions, which `-O3 -march=native` emits on this machine's
CPU. Each pyddc gets a private copy of its runtime library compiled with
`-march=native -mno-avx512f` (cached under ~/.cache/pydd-callgrind/) and
kernels are built with PYDD_KERNEL_CXXFLAGS=-mno-avx512f. So the counted
code is the AVX2 build of the same source, not the timed binary.

Threads as the environment sets them (OMP_NUM_THREADS) when timing; the
suite's own figures are at one thread.
"""
import argparse
import glob
import hashlib
import importlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench", "pairs"))

from suite.kernels import _load_module as load  # noqa: E402

KERNELS = ["bigclam", "changepoint", "ipnsw", "ista", "pr_nibble", "sinkhorn_wmd", "pisum", "quicksort"]
NO_AVX512 = "-mno-avx512f"


class Target:
    """One function to call: a suite kernel's entry, or one side of a pair."""

    def __init__(self, label, pairs, size):
        self.label = label
        self.size = size
        if pairs:
            self.pair, self.entry = label.split(".")
            self.source = os.path.join(ROOT, "bench", "pairs", f"{self.pair}.pydd")
            self.stem = self.pair
            self._specs = importlib.import_module("specs")
        else:
            self.pair = None
            self.spec = importlib.import_module(f"{label}.spec")
            self.entry = self.spec.ENTRY
            self.source = os.path.join(ROOT, "bench", label, "kernel.pydd")
            self.stem = "kernel"
            self.data = None

    def arguments(self):
        """Fresh arguments for one call (kernels may update them)."""
        if self.pair:
            return self._specs.arguments(self.pair, small=self.size == "small")
        if self.data is None:
            self.data = self.spec.generate(self.size)
        return self.spec.arguments(self.data, "pydd-O3")


def targets(opts):
    if opts.pairs:
        specs = importlib.import_module("specs")
        names = [n for n in specs.PAIRS if not opts.kernels or any(k in n for k in opts.kernels)]
        return [Target(f"{n}.{fn}", True, opts.size) for n in names for fn in ("loop", "whole")]
    return [Target(k, False, opts.size) for k in (opts.kernels or KERNELS)]


def build(pyddc, target, out, env=None):
    os.makedirs(out, exist_ok=True)
    subprocess.run([pyddc, "--no-cache", "-O3", target.source, "-o", out], check=True, env=env)
    return glob.glob(os.path.join(out, f"{target.stem}*.so"))[0]


# ---- callgrind ----------------------------------------------------------------

def callgrind_pyddc(pyddc):
    """A copy of pyddc in an installed-style prefix whose runtime library is
    compiled without AVX-512 (see the module's docstring); built once per
    pyddc binary and runtime and cached."""
    exe = Path(shutil.which(pyddc) or pyddc).resolve()
    flags = subprocess.run([str(exe), "--cxxflags"], capture_output=True, text=True, check=True).stdout.split()
    include = Path(next(f[2:] for f in flags if f.startswith("-I")))
    libdir = exe.parents[1] / "lib"
    if not (include / "pydd" / "runtime.h").is_file() or not (libdir / "libpydd_python.so").is_file():
        sys.exit(f"cannot find the runtime of {exe} ({include}, {libdir})")
    sources = sorted((include.parent / "src").glob("*.cpp"))
    if not sources:
        sys.exit(f"cannot find the runtime sources of {exe} (expected {include.parent / 'src'})")
    key = hashlib.sha256()
    for f in [exe, libdir / "libpydd_python.so", libdir / "libpydd_runtime.a", *sources]:
        st = f.stat()
        key.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    for h in sorted(include.rglob("*.h")):
        key.update(f"{h}\0{h.stat().st_mtime_ns}\0".encode())
    prefix = Path(os.path.expanduser("~/.cache/pydd-callgrind")) / key.hexdigest()[:16]
    done = prefix / "lib" / "libpydd_runtime.a"
    if not done.is_file():
        print(f"building a runtime without AVX-512 for {exe} in {prefix} (once; a minute or two)", flush=True)
        tmp = Path(tempfile.mkdtemp(prefix="pydd-cg-"))
        (tmp / "bin").mkdir()
        (tmp / "lib").mkdir()
        shutil.copy2(exe, tmp / "bin" / "pyddc")
        os.symlink(include, tmp / "include")
        shutil.copy2(libdir / "libpydd_python.so", tmp / "lib" / "libpydd_python.so")
        objects = []
        for src in sources:
            obj = tmp / (src.stem + ".o")
            subprocess.run(["g++", "-std=c++17", "-fPIC", "-fno-semantic-interposition", "-fwrapv", "-ffp-contract=off",
                            "-fno-math-errno", "-fopenmp", "-DNDEBUG", "-O3", "-march=native", NO_AVX512,
                            f"-I{include}", "-c", str(src), "-o", str(obj)], check=True)
            objects.append(str(obj))
        subprocess.run(["ar", "rcs", str(tmp / "lib" / "libpydd_runtime.a"), *objects], check=True)
        for obj in objects:
            os.remove(obj)
        prefix.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(prefix, ignore_errors=True)
        os.rename(tmp, prefix)
    return str(prefix / "bin" / "pyddc")


def callgrind_env():
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0", PYDD_KERNEL_CXXFLAGS=NO_AVX512)
    return env


def count(target, so, opts, out_file):
    """Instructions executed inside the kernel's thunk over --calls calls."""
    thunk = f"(anonymous namespace)::thunk_{target.entry}(void* const*, void*)"
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={thunk}",
           f"--callgrind-out-file={out_file}", sys.executable, os.path.abspath(__file__), "--child", target.label,
           "--module", so, "--size", opts.size, "--calls", str(opts.calls)] + (["--pairs"] if opts.pairs else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=callgrind_env())
    if proc.returncode != 0:
        sys.exit(f"callgrind run failed ({target.label}):\n{proc.stdout}{proc.stderr[-3000:]}")
    text = Path(out_file).read_text()
    m = re.search(r"^totals:\s*(\d+)", text, re.M) or re.search(r"^summary:\s*(\d+)", text, re.M)
    ir = int(m.group(1)) if m else 0
    if ir == 0:
        sys.exit(f"{target.label}: no instructions counted in {thunk} (is that the exported function?)")
    return ir


def child(opts):
    """Runs under valgrind: loads the module and calls the entry --calls times."""
    target = Target(opts.kernels[0], opts.pairs, opts.size)
    module = load(f"ab_{target.stem}.{target.stem}", opts.module)
    fn = getattr(module, target.entry)
    calls = [target.arguments() for _ in range(opts.calls)]
    for args in calls:
        fn(*args)


def run_callgrind(opts, tmp):
    pyddcs = {"old": callgrind_pyddc(opts.old), "new": callgrind_pyddc(opts.new)}
    env = callgrind_env()
    rep = opts.repeat > 1
    print(f"instructions (callgrind Ir) per {opts.calls} call(s), size {opts.size}, one thread, AVX2 builds\n")
    print("| kernel | old Ir | new Ir | new/old |" + (" repeats |" if rep else "") + "\n|---|---:|---:|---:|"
          + ("---|" if rep else ""))
    for target in targets(opts):
        counts = {}
        for tag in ("old", "new"):
            so = build(pyddcs[tag], target, os.path.join(tmp, tag, target.label), env)
            counts[tag] = [count(target, so, opts, os.path.join(tmp, f"{tag}-{target.label}-{r}.cg"))
                           for r in range(opts.repeat)]
        old, new = counts["old"][0], counts["new"][0]
        same = all(len(set(v)) == 1 for v in counts.values())
        extra = (" identical |" if same else f" differ: old {counts['old']}, new {counts['new']} |") if rep else ""
        print(f"| {target.label} | {old:,} | {new:,} | {new / old:.4f} |{extra}", flush=True)


# ---- time ---------------------------------------------------------------------

def run_time(opts, tmp):
    print("| kernel | old (s) | new (s) | new/old |\n|---|---:|---:|---:|")
    for target in targets(opts):
        entry = {}
        for tag, pyddc in (("old", opts.old), ("new", opts.new)):
            so = build(pyddc, target, os.path.join(tmp, tag, target.label))
            module = load(f"{tag}_{target.label.replace('.', '_')}.{target.stem}", so)
            entry[tag] = getattr(module, target.entry)
        times = {"old": [], "new": []}
        budget = time.perf_counter() + opts.seconds
        rounds = 0
        while rounds < 5 or (time.perf_counter() < budget and rounds < 15):
            for tag in ("old", "new") if rounds % 2 == 0 else ("new", "old"):
                call = target.arguments()  # fresh arguments: kernels may update them
                start = time.perf_counter()
                entry[tag](*call)
                times[tag].append(time.perf_counter() - start)
            rounds += 1
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        print(f"| {target.label} | {old:.4g} | {new:.4g} | {new / old:.3f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", help="the baseline pyddc")
    ap.add_argument("--new", default=os.path.join(ROOT, "build", "bin", "pyddc"), help="the pyddc to compare")
    ap.add_argument("--seconds", type=float, default=25, help="time budget per kernel after 5 rounds")
    ap.add_argument("--size", default=None, help="the suite's data size (default full; small is quick), "
                    "or for --pairs: small or bench (the default)")
    ap.add_argument("--pairs", action="store_true", help="bench/pairs/ instead of the suite (names filter)")
    ap.add_argument("--callgrind", action="store_true", help="instruction counts under callgrind instead of time")
    ap.add_argument("--calls", type=int, default=1, help="with --callgrind: calls counted per run")
    ap.add_argument("--repeat", type=int, default=1, help="with --callgrind: runs per build (2 checks they repeat)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--module", help=argparse.SUPPRESS)
    ap.add_argument("kernels", nargs="*")
    opts = ap.parse_args()
    if opts.size is None:
        opts.size = "bench" if opts.pairs else "full"
    if opts.child:
        return child(opts)
    if not opts.old:
        ap.error("--old is required")
    if opts.callgrind and not shutil.which("valgrind"):
        sys.exit("valgrind not found: sudo apt-get install -y valgrind")
    print(f"old: {opts.old}\nnew: {opts.new}\n")
    with tempfile.TemporaryDirectory() as tmp:
        (run_callgrind if opts.callgrind else run_time)(opts, tmp)


if __name__ == "__main__":
    sys.exit(main())
