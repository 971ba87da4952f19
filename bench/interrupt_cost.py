"""What the Ctrl-C checks cost: every benchmark kernel at -O3, built with
and without them (`pyddc --interrupt-checks=false`), timed alternately in
one process; prints the ratio with/without per kernel and their geometric
mean. Also measures the interrupt latency: SIGINT to KeyboardInterrupt
during a long call.

    /usr/bin/python3 bench/interrupt_cost.py [--size small|full] [--runs 5]
"""

import argparse
import importlib.util
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "python"))

import numpy as np  # noqa: E402

import pydd  # noqa: E402
from suite.kernels import discover  # noqa: E402


def build(kernel, out, checks):
    out.mkdir(parents=True)
    subprocess.run([pydd.find_pyddc(), kernel.folder / "kernel.pydd", "-O3", f"--interrupt-checks={checks}",
                    "-o", out], check=True)
    (so,) = out.glob("kernel.*.so")
    # Both builds are modules named `kernel`, told apart by their paths.
    spec = importlib.util.spec_from_file_location("kernel", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_time(fn, args, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def latency(tmp):
    # As an interactive Python has it (a background job starts with SIGINT
    # ignored), before the first module loads.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    src = Path(tmp) / "spin.pydd"
    src.write_text("def spin(x: Array(float64), n: int) -> float64:\n"
                   "    s = 0.0\n"
                   "    for k in range(n):\n"
                   "        for i in range(len(x)):\n"
                   "            s += x[i]\n"
                   "    return s\n")
    mod = pydd.compile(src, out_dir=Path(tmp) / "spin")
    x = np.ones(1000)
    out = []
    for _ in range(5):
        sent = [0.0]

        def fire():
            time.sleep(0.2)
            sent[0] = time.perf_counter()
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=fire).start()
        try:
            mod.spin(x, 10**12)
        except KeyboardInterrupt:
            out.append(time.perf_counter() - sent[0])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=("small", "full"), default="full")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("-k", "--kernel", action="append")
    args = ap.parse_args()
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        lat = latency(tmp)
        print(f"interrupt latency (SIGINT to KeyboardInterrupt, 5 calls): max {max(lat) * 1e3:.2f} ms, "
              f"median {statistics.median(lat) * 1e3:.2f} ms")
        print(f"{'kernel':<14} {'with checks':>12} {'without':>12} {'ratio':>7}")
        for kernel in discover(args.kernel):
            on = build(kernel, Path(tmp) / kernel.name / "on", "true")
            off = build(kernel, Path(tmp) / kernel.name / "off", "false")
            data = kernel.generate(args.size)
            fa, fb = getattr(on, kernel.entry), getattr(off, kernel.entry)
            fa(*kernel.arguments(data, "pydd-O3"))  # warm up both
            fb(*kernel.arguments(data, "pydd-O3"))
            ta, tb = [], []
            for _ in range(args.runs):  # alternate, so drift hits both alike
                ta.append(median_time(fa, kernel.arguments(data, "pydd-O3"), 1))
                tb.append(median_time(fb, kernel.arguments(data, "pydd-O3"), 1))
            a, b = statistics.median(ta), statistics.median(tb)
            ratios.append(a / b)
            print(f"{kernel.name:<14} {a:>11.4f}s {b:>11.4f}s {a / b:>7.3f}", flush=True)
    print(f"geometric mean ratio (with/without): {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")


if __name__ == "__main__":
    main()
